package harness_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

var harnessBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fsnsuite-harness-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Readable by the unprivileged user of TestNotRoot.
	os.Chmod(dir, 0o755)
	harnessBin = filepath.Join(dir, "harnessbin")
	out, err := exec.Command("go", "build", "-o", harnessBin, "./testdata/harnessbin").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build harnessbin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("requires root (the harness under test needs it)")
	}
}

type run struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

func runBin(t *testing.T, cred *syscall.Credential, args ...string) run {
	t.Helper()
	cmd := exec.Command(harnessBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	start := time.Now()
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run harnessbin: %v", err)
	}
	return r
}

// DESIGN.md "Harness rules": without root every binary prints a plan of zero
// with "# SKIP requires root" and exits 4 (32 with -exit ltp).
func TestNotRoot(t *testing.T) {
	requireRoot(t) // to switch to an unprivileged user
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, 4},
		{[]string{"-exit", "ltp"}, 32},
		{[]string{"-format", "ktap"}, 4},
	} {
		r := runBin(t, nobody, tc.args...)
		assert.Equal(t, r.code, tc.code, "args %v; stdout:\n%s", tc.args, r.stdout)
		assert.Assert(t, is.Contains(r.stdout, "1..0 # SKIP requires root\n"), "args %v", tc.args)
		assert.Check(t, is.Equal(strings.Contains(r.stdout, "\nSummary:\n"), tc.code == 32), "args %v: the LTP Summary: block with -exit ltp only", tc.args)
	}
}

// Result lines and exit codes for the kselftest and LTP conventions.
func TestResultsAndExitCodes(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"pass", []string{"-run", "^pass$"}, 0, []string{"TAP version 13\n1..1\n", "# passes\nok 1 pass\n"}},
		{"skip", []string{"-run", "^skip$"}, 4, []string{"ok 1 skip # SKIP FAN_TEST not supported (EINVAL)\n"}},
		{"skip_ltp", []string{"-run", "^skip$", "-exit", "ltp"}, 32, []string{"ok 1 skip # SKIP"}},
		{"skip_strict", []string{"-run", "^skip$", "-strict"}, 1, []string{
			"# strict: skip counted as failure: FAN_TEST not supported (EINVAL)\nnot ok 1 skip\n"}},
		{"fail", []string{"-run", "^fail$"}, 1, []string{
			"# fail (tmpfs): want 1, got 2\n",
			"# HINT: kernel may lack 0123456789ab (\"fsnotify: a fix\")\nnot ok 1 fail\n"}},
		{"fail_ltp", []string{"-run", "^fail$", "-exit", "ltp"}, 1, []string{"not ok 1 fail\n"}},
		// A Fix alone prints no HINT: only a case that saw the pre-fix
		// behaviour (T.KernelLacks) does.
		{"fail_not_prefix", []string{"-run", "^fail_not_prefix$"}, 1, []string{
			"# fail_not_prefix (tmpfs): want 1, got 3\nnot ok 1 fail_not_prefix\n"}},
		{"subtests", []string{"-run", "^subtests$"}, 0, []string{
			"    # Subtest: subtests\n    1..2\n    ok 1 one\n    ok 2 two # SKIP reason two\nok 1 subtests\n"}},
		{"ktap", []string{"-run", "^subtests$", "-format", "ktap"}, 0, []string{
			"KTAP version 1\n1..1\n", "    KTAP version 1\n    # Subtest: subtests\n    1..2\n"}},
		{"none_selected", []string{"-run", "^nothing$"}, 4, []string{"1..0 # SKIP no case matches -run ^nothing$\n"}},
		// -exit ltp ends with the counts kirk reads, also with no case.
		{"none_selected_ltp", []string{"-run", "^nothing$", "-exit", "ltp"}, 32, []string{
			"1..0 # SKIP no case matches -run ^nothing$\n\nSummary:\npassed   0\nfailed   0\nbroken   0\nskipped  1\nwarnings 0\n"}},
		// A t.Run in a case that declares no Subtests fails it: a skip
		// would lose the leaf.
		{"undeclared_subtest", []string{"-run", "^undeclared_subtest$"}, 1, []string{
			"subtest \"one\" is not in the case's Subtests []: declare it", "not ok 1 undeclared_subtest\n"}},
		{"all_subtests_skip", []string{"-run", "^all_subtests_skip$"}, 4, []string{"ok 1 all_subtests_skip # SKIP reason one\n"}},
		{"all_subtests_skip_strict", []string{"-run", "^all_subtests_skip$", "-strict"}, 1, []string{"not ok 1 all_subtests_skip\n"}},
		// Environment faults (harness/envfault): a skip marked
		// "environment:" naming the resource and errno; kselftest's skip,
		// LTP's broken (2) when no case failed; -strict fails it.
		{"env_setup_enospc", []string{"-run", "^env_setup_enospc$"}, 4, []string{
			"ok 1 env_setup_enospc # SKIP environment: no space left on the filesystem (mkdir /w/d: ENOSPC)\n"}},
		{"env_setup_enospc_ltp", []string{"-run", "^env_setup_enospc$", "-exit", "ltp"}, 2, []string{
			"ok 1 env_setup_enospc # SKIP environment: ", "\nbroken   1\nskipped  0\n"}},
		{"env_setup_enospc_strict", []string{"-run", "^env_setup_enospc$", "-strict"}, 1, []string{
			"# strict: skip counted as failure: environment: no space left on the filesystem (mkdir /w/d: ENOSPC)\nnot ok 1 env_setup_enospc\n"}},
		{"env_loop", []string{"-run", "^env_loop$"}, 4, []string{
			"ok 1 env_loop # SKIP environment: ext4: no free loop device (LOOP_CTL_GET_FREE: ENOSPC)\n"}},
		{"env_limit_errorf", []string{"-run", "^env_limit_errorf$"}, 4, []string{
			"ok 1 env_limit_errorf # SKIP environment: inotify_add_watch(f): ENOSPC: limit fs.inotify.max_user_watches="}},
		{"env_limit_errorf_then_fail", []string{"-run", "^env_limit_errorf_then_fail$"}, 1, []string{
			"# no kernel HINT: the machine, not the kernel, stopped part of this case: ", "not ok 1 env_limit_errorf_then_fail\n"}},
		{"env_subtests", []string{"-run", "^env_subtests$"}, 0, []string{
			"    ok 1 one\n    ok 2 two # SKIP environment: read-only filesystem (open /w/f: EROFS)\nok 1 env_subtests\n"}},
		{"env_subtests_early", []string{"-run", "^env_subtests_early$"}, 4, []string{
			"    ok 1 one # SKIP environment: ext4: no free loop device (LOOP_CTL_GET_FREE: ENOSPC)\n",
			"ok 1 env_subtests_early # SKIP environment: ext4: no free loop device (LOOP_CTL_GET_FREE: ENOSPC)\n"}},
		{"env_with_pass", []string{"-run", "^(pass|env_loop)$"}, 0, []string{"ok 1 pass\n", "ok 2 env_loop # SKIP environment: "}},
		{"env_with_pass_ltp", []string{"-run", "^(pass|env_loop)$", "-exit", "ltp"}, 2, []string{"ok 2 env_loop # SKIP environment: "}},
		{"env_with_fail_ltp", []string{"-run", "^(fail|env_loop)$", "-exit", "ltp"}, 1, []string{"not ok 1 fail\n"}},
		// The errno of the call under test, or one that is not the
		// machine's, stays a failure.
		{"env_not_setup", []string{"-run", "^env_not_setup$"}, 1, []string{"not ok 1 env_not_setup\n"}},
		{"env_setup_eexist", []string{"-run", "^env_setup_eexist$"}, 1, []string{"not ok 1 env_setup_eexist\n"}},
		{"bad_exit", []string{"-exit", "bogus"}, 2, nil},
		{"negative_timeout", []string{"-timeout", "-1s"}, 2, nil},
		{"unknown_flag", []string{"-bogus"}, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, nil, tc.args...)
			assert.Equal(t, r.code, tc.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			for _, w := range tc.want {
				assert.Assert(t, is.Contains(r.stdout, w))
			}
		})
	}
}

// T.SetSysctl changes a sysctl for one case, says so, and restores it.
func TestSetSysctlRestores(t *testing.T) {
	requireRoot(t)
	const path = "/proc/sys/fs/inotify/max_user_watches"
	before, err := os.ReadFile(path)
	assert.NilError(t, err)
	r := runBin(t, nil, "-run", "^sysctl$")
	assert.Equal(t, r.code, 0, r.stdout)
	assert.Assert(t, is.Contains(r.stdout, "# sysctl fs.inotify.max_user_watches changed from "))
	after, err := os.ReadFile(path)
	assert.NilError(t, err)
	assert.Equal(t, string(after), string(before))
}

// Suite.CaseFunc builds cases after the flags are parsed.
func TestCaseFuncSeesFlags(t *testing.T) {
	r := runBin(t, nil, "-list")
	assert.Assert(t, !strings.Contains(r.stdout, "verbose_only"), r.stdout)
	r = runBin(t, nil, "-list", "-v")
	assert.Assert(t, is.Contains(r.stdout, "env_setup_eexist\nverbose_only\n"))
}

// A hang costs one case: the watchdog reports the case that overran as
// TIMEOUT with its true deadline, and the next case runs in a fresh case
// process; a case that crashes its process is reported failed, and the run
// goes on too.
func TestTimeoutAndCrashCostOneCase(t *testing.T) {
	requireRoot(t)
	r := runBin(t, nil, "-run", "^(hang|crash|after)$", "-timeout", "500ms")
	assert.Equal(t, r.code, 1, r.stdout)
	assert.Assert(t, is.Contains(r.stdout, "1..3\n"))
	assert.Assert(t, is.Contains(r.stdout, "not ok 1 hang # TIMEOUT 0.5 seconds\n"))
	assert.Assert(t, is.Contains(r.stdout, "# crash: the case process died (exit status 2) while this case ran; its Go runtime crashed: panic: harnessbin: deliberate crash;"))
	assert.Assert(t, is.Contains(r.stdout, "not ok 2 crash\n"))
	assert.Assert(t, is.Contains(r.stdout, "ok 3 after\n"))
	assert.Assert(t, r.elapsed < 10*time.Second, "took %v", r.elapsed)
}

// A case process that is stopped (SIGSTOP) cannot time itself out: the
// supervisor kills it caseKillGrace (5 s) after the case's deadline and
// reports that case TIMEOUT, saying the process was stopped; the next case
// runs in a fresh process. A case with declared subtests keeps its leaves.
func TestStoppedCaseProcessCostsOneCase(t *testing.T) {
	requireRoot(t)
	r := runBin(t, nil, "-run", "^(stop_self|stop_in_subtest|after)$", "-timeout", "500ms")
	assert.Equal(t, r.code, 1, r.stdout)
	assert.Check(t, is.Contains(r.stdout, "1..3\n"))
	assert.Check(t, is.Contains(r.stdout, "# stop_self: no result "))
	assert.Check(t, is.Contains(r.stdout, "(deadline 0.5 s + 5 s grace): case process stopped (state T); the supervisor killed it (SIGKILL)"))
	assert.Check(t, is.Contains(r.stdout, "not ok 1 stop_self # TIMEOUT 0.5 seconds\n"))
	want := `    # Subtest: stop_in_subtest
    1..3
    ok 1 one
    # two: the supervisor killed the case process while this subtest ran
    not ok 2 two # TIMEOUT 0.5 seconds
    ok 3 three # SKIP not run: the supervisor killed the case process during stop_in_subtest
not ok 2 stop_in_subtest # TIMEOUT 0.5 seconds
`
	assert.Check(t, is.Contains(r.stdout, want))
	assert.Check(t, is.Contains(r.stdout, "\nok 3 after\n"))
	// Two deadlines and two graces, and not much more.
	assert.Check(t, r.elapsed >= 11*time.Second && r.elapsed < 20*time.Second, "took %v", r.elapsed)
}

// A case with declared subtests that crashes its process keeps its leaves
// (CI history keys on them), as a timed-out case does: the subtests that
// ended as they ended, the one running failed (a leaf-reading CI must see
// the leaf that crashed fail), the later ones skipped as not run.
func TestCrashKeepsDeclaredLeaves(t *testing.T) {
	requireRoot(t)
	r := runBin(t, nil, "-run", "^(crash_in_subtest|after)$", "-timeout", "10s")
	assert.Equal(t, r.code, 1, r.stdout)
	want := `# crash_in_subtest: the case process died (exit status 2) while this case ran; its Go runtime crashed: panic: harnessbin: deliberate crash in a subtest; the next case runs in a fresh process
    # Subtest: crash_in_subtest
    1..4
    ok 1 one
    ok 2 two # SKIP reason two
    # three: the case process died while this subtest ran
    not ok 3 three
    ok 4 four # SKIP not run: the case process died during crash_in_subtest
not ok 1 crash_in_subtest
`
	assert.Check(t, is.Contains(r.stdout, want))
	assert.Check(t, is.Contains(r.stdout, "\nok 2 after\n"))
}

// A case that overruns its deadline in a declared subtest keeps its leaves:
// the subtest that was running is TIMEOUT, as the case is (not a skip, which
// a CI reading leaves would count as nothing lost), the later ones skipped
// as not run.
func TestTimeoutInSubtestFailsThatLeaf(t *testing.T) {
	requireRoot(t)
	r := runBin(t, nil, "-run", "^(hang_in_subtest|after)$", "-timeout", "500ms")
	assert.Equal(t, r.code, 1, r.stdout)
	want := `    # Subtest: hang_in_subtest
    1..3
    ok 1 one
    # two: running when hang_in_subtest was stopped
    not ok 2 two # TIMEOUT 0.5 seconds
    ok 3 three # SKIP not run: the case timed out after 500ms
not ok 1 hang_in_subtest # TIMEOUT 0.5 seconds
`
	assert.Check(t, is.Contains(r.stdout, want))
	assert.Check(t, is.Contains(r.stdout, "\nok 2 after\n"))
}

// A reader of the binary's stdout that pauses (a pager, a slow console) for
// longer than a case's deadline and grace blocks the case process in its
// writes: that is no hang, and no case is killed for it. The binary's
// stdout is a one-page pipe read only after 8 s; -timeout 500ms would let
// the supervisor kill at 5.5 s.
func TestPausedReaderIsNoTimeout(t *testing.T) {
	requireRoot(t)
	r, w, err := os.Pipe()
	assert.NilError(t, err)
	defer r.Close()
	_, err = unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 4096)
	assert.NilError(t, err)
	cmd := exec.Command(harnessBin, "-run", "^(chatty|after)$", "-v", "-timeout", "500ms")
	cmd.Stdout = w
	assert.NilError(t, cmd.Start())
	w.Close()
	time.Sleep(8 * time.Second)
	out, err := io.ReadAll(r)
	assert.NilError(t, err)
	err = cmd.Wait()
	assert.Check(t, err == nil, "exit: %v", err)
	tail := string(out[max(0, len(out)-1000):]) // the 256 KiB of log would bury the rest
	assert.Check(t, strings.Contains(tail, "\nok 1 chatty\n"), "%s", tail)
	assert.Check(t, strings.Contains(tail, "\nok 2 after\n"), "%s", tail)
	assert.Check(t, !strings.Contains(tail, "TIMEOUT"), "%s", tail)
}

// A case process that ignores SIGTERM is SIGKILLed 2 s (killGrace) after the
// supervisor passed the signal on; the supervisor then exits 128+SIGTERM.
func TestSIGTERMIgnoredIsKilledOnTime(t *testing.T) {
	requireRoot(t)
	cmd := exec.Command(harnessBin, "-run", "^ignore_sigterm$", "-timeout", "1m")
	stderr, err := cmd.StderrPipe()
	assert.NilError(t, err)
	assert.NilError(t, cmd.Start())
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	inner := 0
	for inner == 0 && sc.Scan() {
		fmt.Sscanf(sc.Text(), "IGNORING pid=%d", &inner)
	}
	assert.Assert(t, inner != 0, "the case never started")
	go func() {
		for sc.Scan() {
		}
	}()
	start := time.Now()
	assert.NilError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	took := time.Since(start)
	var ee *exec.ExitError
	assert.Assert(t, errors.As(err, &ee), "exit: %v", err)
	assert.Equal(t, ee.ExitCode(), 128+int(syscall.SIGTERM))
	// killGrace (2 s) plus scheduling, and not less: the grace is given.
	// The upper bound is loose enough for a loaded CI machine (go test runs
	// packages side by side) and still far below the case's 1m timeout,
	// which a missing SIGKILL would wait for.
	assert.Assert(t, took >= 1900*time.Millisecond && took < 10*time.Second, "SIGTERM to exit took %v, want about 2s", took)
	assert.Assert(t, !fixture.ProcessAlive(inner), "case process %d outlived its supervisor", inner)
}

// A stream that cannot be written (stdout is /dev/full) is never a pass:
// one line on stderr names the error, and the status is 1 (kselftest has no
// "broken") or LTP's 2 (broken); -list says the same of the case list.
func TestUnwritableStdoutIsNotAPass(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		args []string
		code int
		what string
	}{
		{[]string{"-run", "^pass$"}, 1, "the TAP stream"},
		{[]string{"-run", "^pass$", "-exit", "ltp"}, 2, "the TAP stream"},
		{[]string{"-list"}, 1, "the case list"},
	} {
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		assert.NilError(t, err)
		cmd := exec.Command(harnessBin, tc.args...)
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = full, &errb
		err = cmd.Run()
		full.Close()
		var ee *exec.ExitError
		assert.Assert(t, errors.As(err, &ee), "args %v: %v", tc.args, err)
		assert.Equal(t, ee.ExitCode(), tc.code, "args %v; stderr %q", tc.args, errb.String())
		assert.Equal(t, errb.String(), "harnessbin: "+tc.what+" on stdout is incomplete: write /dev/stdout: no space left on device\n", "args %v", tc.args)
	}
}

// Bad command lines: one line on stderr pointing at -h, exit 2.
func TestUsageErrorsAreOneLine(t *testing.T) {
	for _, args := range [][]string{{"-bogus"}, {"-exit", "bogus"}, {"-timeout", "-1s"}, {"-format", "xml"}, {"stray"}} {
		r := runBin(t, nil, args...)
		assert.Equal(t, r.code, 2, "args %v", args)
		assert.Equal(t, strings.Count(r.stderr, "\n"), 1, "args %v: stderr %q", args, r.stderr)
		assert.Assert(t, is.Contains(r.stderr, "(see -h)"), "args %v", args)
	}
}

// Killing a binary with SIGKILL while it holds a loop-ext4 mount, a temp tree
// and an actor leaves none of them behind: the mounts die with the private
// namespace, the loop device auto-clears, the actor dies by PDEATHSIG.
func TestSIGKILLLeavesNothing(t *testing.T) {
	requireRoot(t)
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("mkfs.ext4 not found")
	}
	cmd := exec.Command(harnessBin, "-run", "^hold", "-timeout", "2m")
	stderr, err := cmd.StderrPipe()
	assert.NilError(t, err)
	assert.NilError(t, cmd.Start())
	defer cmd.Process.Kill()

	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "READY ") {
				ready <- sc.Text()
			}
		}
		close(ready)
	}()
	var line string
	select {
	case line = <-ready:
	case <-time.After(20 * time.Second):
		t.Fatal("harnessbin never became ready")
	}
	m := regexp.MustCompile(`dev=(\S+) root=(\S+) tmp=(\S+) actor=(\d+) pid=(\d+)`).FindStringSubmatch(line)
	assert.Assert(t, m != nil, "bad READY line %q", line)
	dev, root, tmp := m[1], m[2], m[3]
	var actorPid, innerPid int
	fmt.Sscan(m[4], &actorPid)
	fmt.Sscan(m[5], &innerPid)
	loop := filepath.Join("/sys/block", filepath.Base(dev), "loop", "backing_file")
	_, err = os.Stat(loop)
	assert.NilError(t, err, "loop device should be attached while the binary runs")

	assert.NilError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()

	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		if fixture.ProcessAlive(actorPid) {
			left = append(left, fmt.Sprintf("actor pid %d", actorPid))
		}
		if fixture.ProcessAlive(innerPid) {
			left = append(left, fmt.Sprintf("namespaced pid %d", innerPid))
		}
		if _, err := os.Stat(loop); err == nil {
			left = append(left, dev+" still attached")
		}
		if mounts, _ := os.ReadFile("/proc/self/mounts"); bytes.Contains(mounts, []byte(root)) {
			left = append(left, "mount "+root)
		}
		if _, err := os.Stat(tmp); err == nil {
			left = append(left, "temp tree "+tmp)
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after SIGKILL these remain: %s", strings.Join(left, ", "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
