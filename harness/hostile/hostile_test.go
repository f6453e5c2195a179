//go:build hostile

// The hostile conditions run the built binaries (bin/) the way a hostile CI
// environment would — unprivileged, in a user namespace, behind seccomp
// filters, with every limit lowered, timed out, signalled, two at once, with
// bad flags and bad results directories — and asserts what issue 14 asks:
// no hang, no leftover (processes, mounts, loop devices, temp trees, fds,
// changed sysctls), no false pass, every skip with a reason that is true, and
// exit codes by convention. It prints a table (condition → outcome) and the
// counts. Run it with `make hostile` (root; after `make build`).
package hostile

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/internal/execfile"
	"github.com/fsnsuite/fsnsuite/tap"
)

var (
	binFlag  = flag.String("bin", "", "directory of the built binaries (default: the repository's bin/)")
	condFlag = flag.String("cond", "", "run only the conditions whose name matches this regular expression")
)

// h is one condition's context.
type h struct {
	t    *testing.T
	bin  string // built binaries
	sce  string // seccompexec
	tmp  string // this condition's scratch directory
	env  []string
	mu   sync.Mutex
	cond string
}

// result is one finished process.
type result struct {
	stdout, stderr string
	code           int
	signal         string
	elapsed        time.Duration
	hung           bool
}

// row is a condition's line in the table.
type row struct {
	name     string
	outcome  string
	problems []string
	elapsed  time.Duration
}

type condition struct {
	name string
	run  func(h *h) []string
}

func TestHostile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("make hostile needs root (it runs the suite, lowers limits, and switches users)")
	}
	bin := *binFlag
	if bin == "" {
		wd, _ := os.Getwd()
		bin = filepath.Join(wd, "..", "..", "bin")
	}
	bin, _ = filepath.Abs(bin)
	for _, b := range []string{"fsnsuite", "inotify_basic", "fanotify_basic", "fanotify_perm", "fsnotify_parent"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Fatalf("%s: %v (run make build first)", b, err)
		}
	}
	work, err := os.MkdirTemp("", "fsnsuite-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(work)
	os.Chmod(work, 0o755) // the non-root condition runs in it
	sce := filepath.Join(work, "seccompexec")
	if out, err := exec.Command("go", "build", "-o", sce, "./seccompexec").CombinedOutput(); err != nil {
		t.Fatalf("build seccompexec: %v\n%s", err, out)
	}
	permkill := filepath.Join(work, "permkill")
	if out, err := exec.Command("go", "build", "-o", permkill, "../testdata/permkill").CombinedOutput(); err != nil {
		t.Fatalf("build permkill: %v\n%s", err, out)
	}

	walker := filepath.Join(work, "walker")
	if out, err := exec.Command("go", "build", "-o", walker, "../testdata/walker").CombinedOutput(); err != nil {
		t.Fatalf("build walker: %v\n%s", err, out)
	}

	var rows []row
	start := time.Now()
	only := regexp.MustCompile(*condFlag)
	all := conditions(permkill)
	all = append(all, stoppedConditions()...)
	all = append(all, outputConditions()...)
	all = append(all, badResultsConditions()...)
	all = append(all, usernsConditions()...)
	all = append(all, pidsConditions()...)
	all = append(all, memoryConditions()...)
	all = append(all, interferenceConditions(walker)...)
	all = append(all, envfaultConditions()...)
	all = append(all, pathsConditions()...)
	all = append(all, resultsConditions()...)
	all = append(all, stateDirConditions()...)
	for _, c := range all {
		if !only.MatchString(c.name) {
			continue
		}
		dir := filepath.Join(work, c.name)
		os.MkdirAll(filepath.Join(dir, "tmpdir"), 0o777)
		os.Chmod(dir, 0o755)
		hh := &h{t: t, bin: bin, sce: sce, tmp: dir, cond: c.name,
			env: append(os.Environ(), "TMPDIR="+filepath.Join(dir, "tmpdir"))}
		before := snapshot(bin)
		t0 := time.Now()
		probs := c.run(hh)
		probs = append(probs, leftovers(before, bin, filepath.Join(dir, "tmpdir"))...)
		r := row{name: c.name, problems: probs, outcome: "ok", elapsed: time.Since(t0)}
		if len(probs) > 0 {
			r.outcome = "FAIL"
		}
		rows = append(rows, r)
	}

	// The table and the counts.
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-36s %-6s %7s  %s\n", "condition", "result", "time", "problems")
	counts := map[string]int{}
	for _, r := range rows {
		fmt.Fprintf(&b, "%-36s %-6s %6.1fs  %s\n", r.name, r.outcome, r.elapsed.Seconds(), strings.Join(r.problems, "; "))
		for _, p := range r.problems {
			for _, k := range []string{"hang", "leftover", "false pass", "unclear", "skip reason", "exit"} {
				if strings.HasPrefix(p, k) {
					counts[k]++
				}
			}
		}
		counts[r.outcome]++
	}
	fmt.Fprintf(&b, "\nconditions %d: %d ok, %d failed; hangs %d, leftovers %d, false passes %d, unclear messages %d, untrue skip reasons %d, wrong exit codes %d; %.0fs\n",
		len(rows), counts["ok"], counts["FAIL"], counts["hang"], counts["leftover"], counts["false pass"],
		counts["unclear"], counts["skip reason"], counts["exit"], time.Since(start).Seconds())
	t.Log(b.String())
	for _, r := range rows {
		if r.outcome == "FAIL" {
			t.Errorf("%s: %s", r.name, strings.Join(r.problems, "; "))
		}
	}
}

// run starts a program and waits at most limit; a program still running then
// is a hang: its process group is killed.
func (h *h) run(limit time.Duration, attr *syscall.SysProcAttr, name string, args ...string) result {
	r, _ := h.runDuring(limit, attr, nil, name, args...)
	return r
}

// runDuring is run with during called (in a goroutine) once the program has
// started, given its pid; the problems during returns are returned after the
// program ended.
func (h *h) runDuring(limit time.Duration, attr *syscall.SysProcAttr, during func(pid int) []string, name string, args ...string) (result, []string) {
	cmd := exec.Command(name, args...)
	cmd.Env = h.env
	cmd.Dir = h.tmp
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	}
	attr.Setpgid = true
	cmd.SysProcAttr = attr
	cmd.WaitDelay = 2 * time.Second
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return result{stderr: err.Error(), code: -1}, nil
	}
	var probs []string
	duringDone := make(chan struct{})
	if during != nil {
		go func() { defer close(duringDone); probs = during(cmd.Process.Pid) }()
	} else {
		close(duringDone)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var r result
	select {
	case <-done:
	case <-time.After(limit):
		r.hung = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	<-duringDone
	r.elapsed = time.Since(t0)
	r.stdout, r.stderr = out.String(), errb.String()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.signal = ws.Signal().String()
		r.code = 128 + int(ws.Signal())
	} else {
		r.code = cmd.ProcessState.ExitCode()
	}
	return r, probs
}

func (h *h) binary(name string) string { return filepath.Join(h.bin, name) }

// audit checks a binary's stream and exit status (kselftest convention):
// a complete stream, every skip with a reason, no case passed whose every
// subtest skipped, and an exit status that agrees with the results.
func audit(r result) []string {
	var p []string
	if r.hung {
		p = append(p, fmt.Sprintf("hang: still running after %.0fs", r.elapsed.Seconds()))
	}
	st := tap.ParseString(r.stdout)
	for _, pr := range st.Problems {
		p = append(p, "exit/stream: "+pr)
	}
	fails, skips, total := 0, 0, 0
	var walk func(n *tap.Node)
	walk = func(n *tap.Node) {
		for _, c := range n.Children {
			if len(c.Children) > 0 {
				allSkip := true
				c.Walk(func(_ []string, l *tap.Node) { allSkip = allSkip && l.Status == tap.StatusSkip })
				if allSkip && c.Status == tap.StatusPass {
					p = append(p, "false pass: "+c.Name+" passed with every subtest skipped")
				}
				walk(c)
			}
		}
	}
	walk(st)
	for _, c := range st.Children {
		total++
		switch {
		case c.Status.Failed():
			fails++
		case c.Status == tap.StatusSkip:
			skips++
			if strings.TrimSpace(c.Reason) == "" {
				p = append(p, "skip reason: "+c.Name+" skipped without a reason")
			}
		}
	}
	if st.SkipAll == "" && st.Plan == 0 {
		p = append(p, "skip reason: plan 1..0 without a reason")
	}
	want := 0
	switch {
	case fails > 0 || len(st.Problems) > 0:
		want = 1
	case total == skips:
		want = 4
	}
	if r.code != want && !r.hung {
		p = append(p, fmt.Sprintf("exit: status %d, want %d (%d cases, %d failed, %d skipped)", r.code, want, total, fails, skips))
	}
	return p
}

// leaves returns the top-level cases of a stream by name.
func cases(r result) []*tap.Node { return tap.ParseString(r.stdout).Children }

// unclear finds failure or skip text that shows a limit's errno without
// naming the limit.
var limitErrno = regexp.MustCompile(`(?i)ENOSPC|EMFILE|no space left on device|too many open files|Q_OVERFLOW`)

func unclear(r result) []string {
	var p []string
	for _, c := range cases(r) {
		var text string
		switch {
		case c.Status == tap.StatusSkip:
			text = c.Reason
		case c.Status.Failed() && len(c.Diagnostics) > 1:
			text = strings.Join(c.Diagnostics[1:], "\n") // after the case's doc line
		default:
			continue
		}
		if limitErrno.MatchString(text) && !strings.Contains(text, "fs.fanotify.max_") && !strings.Contains(text, "fs.inotify.max_") {
			p = append(p, "unclear: "+c.Name+": a limit's errno without the sysctl")
		}
	}
	return p
}

// skipsSay checks that every skipped case's reason matches want and none
// matches notWant (when not empty).
func skipsSay(r result, filter func(name string) bool, want, notWant string) []string {
	var p []string
	n := 0
	for _, c := range cases(r) {
		if filter != nil && !filter(c.Name) {
			continue
		}
		if c.Status != tap.StatusSkip {
			p = append(p, fmt.Sprintf("skip reason: %s %s, want a skip saying %q", c.Name, c.Status, want))
			continue
		}
		n++
		if !strings.Contains(c.Reason, want) || (notWant != "" && strings.Contains(c.Reason, notWant)) {
			p = append(p, fmt.Sprintf("skip reason: %s: %q (want %q, not %q)", c.Name, c.Reason, want, notWant))
		}
	}
	if n == 0 && len(p) == 0 {
		p = append(p, "skip reason: no case skipped")
	}
	if len(p) > 3 {
		p = append(p[:3], fmt.Sprintf("... %d more", len(p)-3))
	}
	return p
}

func withSysctl(name, value string, fn func() []string) []string {
	old, err := fixture.Sysctl(name)
	if err != nil {
		return []string{"setup: " + err.Error()}
	}
	if err := fixture.SetSysctl(name, value); err != nil {
		return []string{"setup: " + err.Error()}
	}
	defer fixture.SetSysctl(name, old)
	return fn()
}

func want(cond bool, format string, args ...any) []string {
	if cond {
		return nil
	}
	return []string{fmt.Sprintf(format, args...)}
}

// holdRootLimits makes inotify instances and fanotify groups in this (root)
// process until the kernel refuses one, then closes free of each, and returns a
// function that closes the rest and a description of what is held.
func holdRootLimits(free int) (release func(), held string, err error) {
	var ino, fan []int
	release = func() {
		for _, fd := range append(ino, fan...) {
			unix.Close(fd)
		}
	}
	for len(ino) < 1<<16 {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			break
		}
		ino = append(ino, fd)
	}
	for len(fan) < 1<<16 {
		fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
		if err != nil {
			break
		}
		fan = append(fan, fd)
	}
	if len(ino) < free || len(fan) < free {
		release()
		return nil, "", fmt.Errorf("hold root's limits: made %d inotify instances and %d fanotify groups", len(ino), len(fan))
	}
	for _, fd := range append(ino[len(ino)-free:], fan[len(fan)-free:]...) {
		unix.Close(fd)
	}
	ino, fan = ino[:len(ino)-free], fan[:len(fan)-free]
	return release, fmt.Sprintf("%d inotify instances and %d fanotify groups", len(ino), len(fan)), nil
}

func userns() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
	}
}

func conditions(permkill string) []condition {
	sec := func(h *h, errno, calls, bin string, args ...string) result {
		return h.run(60*time.Second, nil, h.sce, append([]string{"-errno", errno, "-calls", calls, "--", h.binary(bin)}, args...)...)
	}
	limit := func(sysctl, value, bin, mention string, args ...string) condition {
		return condition{name: "limit_" + strings.TrimPrefix(strings.ReplaceAll(sysctl, ".", "_"), "fs_") + "_" + value, run: func(h *h) []string {
			return withSysctl(sysctl, value, func() []string {
				r := h.run(60*time.Second, nil, h.binary(bin), args...)
				p := append(audit(r), unclear(r)...)
				return append(p, want(strings.Contains(r.stdout, mention), "unclear: nothing names %s (exit %d)", mention, r.code)...)
			})
		}}
	}
	signalRunner := func(sig syscall.Signal) condition {
		return condition{name: "runner_" + strings.ToLower(strings.TrimPrefix(unix.SignalName(sig), "SIG")), run: func(h *h) []string {
			cmd := exec.Command(h.binary("fsnsuite"), "-no-perf", "-results", filepath.Join(h.tmp, "results"))
			cmd.Env, cmd.Dir = h.env, h.tmp
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				return []string{"setup: " + err.Error()}
			}
			time.Sleep(3 * time.Second)
			cmd.Process.Signal(sig)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				<-done
				return []string{"hang: the runner did not end within 15s of " + unix.SignalName(sig)}
			}
			if sig == syscall.SIGKILL {
				return killedRunnerLeavesNoBinary(h, permkill)
			}
			// The interrupted run's stream is complete: the binary that was
			// stopped and every later one closed, their cases "not run".
			p := want(cmd.ProcessState.ExitCode() != 0, "exit: an interrupted run exited 0")
			st := tap.ParseString(out.String())
			return append(p, want(len(st.Problems) == 0 && st.Plan > 0,
				"exit/stream: incomplete after %s: plan %d, %v", unix.SignalName(sig), st.Plan, st.Problems)...)
		}}
	}
	return []condition{
		{name: "non_root", run: func(h *h) []string {
			// A copy the unprivileged user can reach (a CI clone may live under /root).
			b, err := os.ReadFile(h.binary("inotify_basic"))
			if err != nil {
				return []string{"setup: " + err.Error()}
			}
			exe := filepath.Join(h.tmp, "inotify_basic")
			if err := execfile.Write(exe, b, 0o755); err != nil {
				return []string{"setup: " + err.Error()}
			}
			r := h.run(30*time.Second, &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}, exe)
			return append(audit(r), want(strings.Contains(r.stdout, "1..0 # SKIP requires root"), "skip reason: %q", r.stdout)...)
		}},
		{name: "user_namespace_inotify", run: func(h *h) []string {
			r := h.run(60*time.Second, userns(), h.binary("inotify_basic"))
			return append(audit(r), unclear(r)...)
		}},
		{name: "user_namespace_fanotify", run: func(h *h) []string {
			r := h.run(60*time.Second, userns(), h.binary("fanotify_basic"))
			p := append(audit(r), unclear(r)...)
			return append(p, skipsSay(r, func(n string) bool { return n != "features" && !strings.HasSuffix(n, ".ext4") }, "EPERM", "")...)
		}},
		{name: "seccomp_enosys_fanotify", run: func(h *h) []string {
			r := sec(h, "ENOSYS", "fanotify_init,fanotify_mark", "fsnotify_parent")
			p := audit(r)
			p = append(p, skipsSay(r, func(n string) bool { return !strings.Contains(n, ".inotify") }, "ENOSYS", "")...)
			for _, c := range cases(r) {
				if strings.Contains(c.Name, ".inotify") && c.Status != tap.StatusPass {
					p = append(p, fmt.Sprintf("skip reason: %s is %s with only fanotify blocked", c.Name, c.Status))
				}
			}
			return p
		}},
		{name: "seccomp_eperm_fanotify", run: func(h *h) []string {
			r := sec(h, "EPERM", "fanotify_init,fanotify_mark", "fanotify_basic")
			return append(audit(r), skipsSay(r, nil, "EPERM", "")...)
		}},
		{name: "seccomp_enosys_inotify", run: func(h *h) []string {
			r := sec(h, "ENOSYS", "inotify_init1,inotify_add_watch", "inotify_basic")
			return append(audit(r), skipsSay(r, nil, "ENOSYS", "")...)
		}},
		{name: "seccomp_eperm_inotify", run: func(h *h) []string {
			r := sec(h, "EPERM", "inotify_init1,inotify_add_watch", "inotify_basic")
			return append(audit(r), skipsSay(r, nil, "EPERM", "CAP_SYS_ADMIN")...)
		}},
		// The limits are per user and global: each is lowered for one or two
		// short cases only, so other fsnotify users on the machine are
		// refused for a second at most.
		limit("fs.fanotify.max_user_marks", "0", "fanotify_basic", "fs.fanotify.max_user_marks=0", "-run", "^mount_mark_scope.tmpfs$"),
		limit("fs.fanotify.max_user_groups", "2", "fanotify_perm", "fs.fanotify.max_user_groups=2", "-run", "^groups_order_allow.tmpfs$"),
		limit("fs.inotify.max_user_instances", "0", "inotify_basic", "fs.inotify.max_user_instances=0", "-run", "^create_in_dir.tmpfs$"),
		limit("fs.inotify.max_user_watches", "0", "inotify_basic", "fs.inotify.max_user_watches=0", "-run", "^create_in_dir.tmpfs$"),
		limit("fs.fanotify.max_queued_events", "4", "fsnotify_parent", "fs.fanotify.max_queued_events=4", "-run", "^race_watch_toggle.fanotify.tmpfs$"),
		limit("fs.inotify.max_queued_events", "4", "fsnotify_parent", "fs.inotify.max_queued_events=4", "-run", "^race_watch_toggle.inotify.tmpfs$"),
		{name: "per_case_timeout", run: func(h *h) []string {
			r := h.run(60*time.Second, nil, h.binary("fanotify_perm"), "-timeout", "1ms", "-run", "^open_perm_(allow|deny)_inode")
			p := audit(r)
			n := strings.Count(r.stdout, "# TIMEOUT 0.001 seconds")
			p = append(p, want(n == 4, "exit: %d of 4 cases report TIMEOUT 0.001 seconds", n)...)
			p = append(p, want(!strings.Contains(r.stdout, "although"), "unclear: a timed-out case blames the kernel")...)
			// A deadline passing while a process is blocked on the case's
			// permission event: the watchdog's release lets it return, and
			// the case (permkill) then blames the kernel ("although its
			// permission event is not answered"), too late for its log.
			r = h.run(30*time.Second, nil, permkill, "-timeout", "1s")
			p = append(p, want(strings.Contains(r.stdout, "not ok 1 blocked # TIMEOUT 1 seconds"), "exit: permkill -timeout 1s: no TIMEOUT 1 seconds result: %q", r.stdout)...)
			p = append(p, want(!strings.Contains(r.stdout, "although"), "unclear: a timed-out permission case blames the kernel for the watchdog's release")...)
			return p
		}},
		{name: "per_binary_timeout", run: func(h *h) []string {
			r := h.run(40*time.Second, nil, h.binary("fsnsuite"), "-run", "^fsnotify_parent$", "-timeout", "2s", "-results", filepath.Join(h.tmp, "results"))
			p := want(!r.hung, "hang: runner -timeout 2s still running after %.0fs", r.elapsed.Seconds())
			p = append(p, want(r.code == 1, "exit: status %d, want 1", r.code)...)
			// The killed binary's block names every case (issue 14 item 7:
			// it listed "#330 (missing)" lines), from its own -list.
			l := h.run(10*time.Second, nil, h.binary("fsnotify_parent"), "-list")
			var unnamed []string
			for _, name := range strings.Fields(l.stdout) {
				if !regexp.MustCompile(`(?m)^ *(not )?ok \d+ ` + regexp.QuoteMeta(name) + `( #|$)`).MatchString(r.stdout) {
					unnamed = append(unnamed, name)
				}
			}
			p = append(p, want(l.code == 0 && len(unnamed) == 0 && !strings.Contains(r.stdout, "(missing)"),
				"unclear: the killed binary's block does not name %d of its cases (-list exit %d), e.g. %v", len(unnamed), l.code, unnamed[:min(len(unnamed), 3)])...)
			return append(p, want(r.elapsed < 12*time.Second, "hang: -timeout 2s took %.1fs (bound: 2s + 5s grace + 5s)", r.elapsed.Seconds())...)
		}},
		signalRunner(syscall.SIGINT),
		signalRunner(syscall.SIGTERM),
		signalRunner(syscall.SIGKILL),
		{name: "sigkill_during_permission_event", run: func(h *h) []string {
			cmd := exec.Command(permkill, "-timeout", "1m")
			cmd.Env = h.env
			var out bytes.Buffer
			pr, pw, _ := os.Pipe()
			cmd.Stdout, cmd.Stderr = pw, &out
			if err := cmd.Start(); err != nil {
				return []string{"setup: " + err.Error()}
			}
			pw.Close()
			lines := make(chan string, 16)
			go func() {
				buf := make([]byte, 4096)
				var acc string
				for {
					n, err := pr.Read(buf)
					acc += string(buf[:n])
					for {
						i := strings.IndexByte(acc, '\n')
						if i < 0 {
							break
						}
						lines <- acc[:i]
						acc = acc[i+1:]
					}
					if err != nil {
						close(lines)
						return
					}
				}
			}()
			blocked := 0
			timeout := time.After(20 * time.Second)
		wait:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						break wait
					}
					if m := regexp.MustCompile(`BLOCKED pid=(\d+)`).FindStringSubmatch(l); m != nil {
						blocked, _ = strconv.Atoi(m[1])
						break wait
					}
				case <-timeout:
					break wait
				}
			}
			if blocked == 0 {
				cmd.Process.Kill()
				cmd.Wait()
				return []string{"setup: permkill never blocked a process: " + out.String()}
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			deadline := time.Now().Add(2 * time.Second)
			for fixture.ProcessAlive(blocked) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			return want(!fixture.ProcessAlive(blocked), "leftover: pid %d still blocked on its permission event 2s after SIGKILL", blocked)
		}},
		{name: "root_limits_nearly_used", run: func(h *h) []string {
			// Another program holds all but two of root's inotify
			// instances and fanotify groups (fs.inotify.max_user_instances,
			// fs.fanotify.max_user_groups): fsnotify_limits must still
			// count exactly, its namespaces being charged to an idle uid.
			release, held, err := holdRootLimits(2)
			if err != nil {
				return []string{"setup: " + err.Error()}
			}
			defer release()
			r := h.run(60*time.Second, nil, h.binary("fsnotify_limits"))
			p := audit(r)
			// The two cases the held objects could stop early must have
			// counted: a skip (exit 0 too) would leave the condition untested.
			for _, c := range cases(r) {
				if (c.Name == "inotify_instances" || c.Name == "fanotify_groups") && c.Status != tap.StatusPass {
					p = append(p, fmt.Sprintf("not exercised: %s is %s (%s), want a pass with %s held", c.Name, c.Status, c.Reason, held))
				}
			}
			return append(p, want(!r.hung && r.code == 0, "exit: fsnotify_limits with %s held by another program: status %d%s", held, r.code, failedNames(r))...)
		}},
		{name: "two_suites_parallel", run: func(h *h) []string {
			var wg sync.WaitGroup
			rs := make([]result, 2)
			for i := range rs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rs[i] = h.run(120*time.Second, nil, h.binary("fsnsuite"), "-no-perf", "-results", filepath.Join(h.tmp, "results"+strconv.Itoa(i)))
				}()
			}
			wg.Wait()
			var p []string
			for i, r := range rs {
				p = append(p, want(!r.hung && r.code == 0, "exit: suite %d of 2: status %d%s", i+1, r.code, failedNames(r))...)
			}
			return p
		}},
		{name: "bad_flags_binary", run: func(h *h) []string {
			var p []string
			for _, args := range [][]string{{"-bogus"}, {"-exit", "bogus"}, {"-timeout", "-1s"}, {"-format", "xml"}, {"-run", "("}} {
				r := h.run(10*time.Second, nil, h.binary("inotify_basic"), args...)
				p = append(p, want(r.code == 2, "exit: inotify_basic %v: status %d, want 2", args, r.code)...)
				p = append(p, want(strings.Count(r.stderr, "\n") == 1 && strings.Contains(r.stderr, "see -h"), "unclear: inotify_basic %v: stderr %q, want one line ending (see -h)", args, r.stderr)...)
			}
			return p
		}},
		{name: "bad_flags_runner", run: func(h *h) []string {
			var p []string
			for _, args := range [][]string{{"-bogus"}, {"-exit", "bogus"}} {
				r := h.run(10*time.Second, nil, h.binary("fsnsuite"), append(args, "-results", filepath.Join(h.tmp, "r"))...)
				p = append(p, want(r.code == 2, "exit: fsnsuite %v: status %d, want 2", args, r.code)...)
			}
			return p
		}},
		{name: "runner_negative_timeout", run: func(h *h) []string {
			var p []string
			for _, args := range [][]string{{"-timeout", "-1s"}, {"-case-timeout", "-1s"}} {
				r := h.run(10*time.Second, nil, h.binary("fsnsuite"), append(args, "-run", "^inotify_basic$", "-results", filepath.Join(h.tmp, "r"))...)
				p = append(p, want(r.code == 2, "exit: fsnsuite %v: status %d, want 2", args, r.code)...)
			}
			return p
		}},
		{name: "run_matches_nothing", run: func(h *h) []string {
			r := h.run(10*time.Second, nil, h.binary("inotify_basic"), "-run", "^no_such_case$")
			return append(audit(r), want(strings.Contains(r.stdout, "1..0 # SKIP no case matches -run ^no_such_case$"), "skip reason: %q", r.stdout)...)
		}},
		{name: "bad_tmpdir", run: func(h *h) []string {
			h.env = append(h.env, "TMPDIR=/nonexistent/fsnsuite")
			r := h.run(60*time.Second, nil, h.binary("inotify_basic"), "-run", "^create_in_dir")
			return append(audit(r), want(r.code == 0, "exit: status %d with a bad TMPDIR", r.code)...)
		}},
		{name: "runtest_quoted", run: func(h *h) []string {
			f := filepath.Join(h.tmp, "runtest")
			os.WriteFile(f, []byte("quoted sh -c \"echo 'TAP version 13'; echo 1..1; echo ok 1 quoted\"\n"), 0o644)
			r := h.run(30*time.Second, nil, h.binary("fsnsuite"), "-f", f, "-results", filepath.Join(h.tmp, "results"))
			return want(r.code == 0, "exit: runtest with a quoted command: status %d: %s", r.code, firstLine(r.stderr))
		}},
		{name: "results_dir_full", run: func(h *h) []string {
			mnt := filepath.Join(h.tmp, "full")
			os.Mkdir(mnt, 0o755)
			if err := syscall.Mount("fsnsuite-full", mnt, "tmpfs", 0, "size=64k"); err != nil {
				return []string{"setup: " + err.Error()}
			}
			defer syscall.Unmount(mnt, syscall.MNT_DETACH)
			// Full before the run starts (an empty 64k tmpfs holds these two
			// binaries' logs and fills only at junit.xml, after they ended).
			filler, err := os.Create(filepath.Join(mnt, "filler"))
			if err != nil {
				return []string{"setup: " + err.Error()}
			}
			for err == nil {
				_, err = filler.Write(make([]byte, 4096))
			}
			filler.Close()
			r := h.run(120*time.Second, nil, h.binary("fsnsuite"), "-run", "^(inotify_basic|fanotify_basic)$", "-results", filepath.Join(mnt, "r"))
			st := tap.ParseString(r.stdout)
			p := want(!r.hung, "hang: still running")
			p = append(p, want(len(st.Problems) == 0 && r.signal == "", "exit: incomplete stream or signal %q: %v", r.signal, st.Problems)...)
			// A binary the full directory killed (SIGPIPE) has its block
			// closed by the runner, every unreported case "not run".
			notRun := 0
			st.Walk(func(_ []string, l *tap.Node) {
				if strings.HasPrefix(l.Reason, "not run") {
					notRun++
				}
			})
			p = append(p, want(notRun == 0, "exit: %d case(s) not run: a binary died of the full results directory", notRun)...)
			// The first failed write is reported once as it happens, and
			// the closing lines say the results are incomplete.
			n := strings.Count(r.stderr, "no space left on device (the TAP stream on stdout goes on")
			p = append(p, want(n == 1, "unclear: the results directory's ENOSPC reported %d times during the run, want once", n)...)
			p = append(p, want(strings.Contains(r.stderr, "are incomplete: "), "unclear: the closing lines do not say the results are incomplete")...)
			return append(p, want(r.code == 2, "exit: status %d, want 2 (the results directory failed)", r.code)...)
		}},
		{name: "results_dir_readonly", run: func(h *h) []string {
			ro := filepath.Join(h.tmp, "ro")
			os.Mkdir(ro, 0o755)
			if err := syscall.Mount("fsnsuite-ro", ro, "tmpfs", syscall.MS_RDONLY, ""); err != nil {
				return []string{"setup: " + err.Error()}
			}
			defer syscall.Unmount(ro, syscall.MNT_DETACH)
			var p []string
			for _, conv := range []string{"kselftest", "ltp"} {
				r := h.run(60*time.Second, nil, h.binary("fsnsuite"), "-run", "^inotify_basic$", "-exit", conv, "-results", filepath.Join(ro, "r"))
				p = append(p, want(r.code == 2, "exit: -exit %s with a read-only -results: status %d, want 2", conv, r.code)...)
			}
			return p
		}},
	}
}

// killedRunnerLeavesNoBinary SIGKILLs a runner whose binary (permkill,
// from a runtest line) sits silent in a case holding a process blocked on a
// permission event: the binary must die with the runner (its parent-death
// signal), not live on until its own -timeout or its next write to the dead
// runner's pipe (SIGPIPE), which a binary of the suite that writes often
// meets within the leftover check's grace.
func killedRunnerLeavesNoBinary(h *h, permkill string) []string {
	f := filepath.Join(h.tmp, "runtest")
	if err := os.WriteFile(f, []byte("permkill "+permkill+" -timeout 1m\n"), 0o644); err != nil {
		return []string{"setup: " + err.Error()}
	}
	cmd := exec.Command(h.binary("fsnsuite"), "-f", f, "-results", filepath.Join(h.tmp, "results-permkill"))
	cmd.Env, cmd.Dir = h.env, h.tmp
	if err := cmd.Start(); err != nil {
		return []string{"setup: " + err.Error()}
	}
	var pids []int
	for end := time.Now().Add(20 * time.Second); len(pids) == 0 && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		pids = running(permkill)
	}
	time.Sleep(time.Second) // into its case, past its last write for a minute
	cmd.Process.Kill()
	cmd.Wait()
	if len(pids) == 0 {
		return []string{"setup: the runner never started permkill"}
	}
	end := time.Now().Add(2 * time.Second)
	for len(running(permkill)) > 0 && time.Now().Before(end) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := running(permkill); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		return []string{fmt.Sprintf("leftover: permkill %v outlived its SIGKILLed runner by 2s", left)}
	}
	return nil
}

// running lists the live processes whose executable is exe.
func running(exe string) []int {
	var pids []int
	for pid, e := range ours(filepath.Dir(exe)) {
		if e == exe {
			pids = append(pids, pid)
		}
	}
	return pids
}

func failedNames(r result) string {
	var n []string
	for _, c := range cases(r) {
		if c.Status.Failed() {
			n = append(n, c.Name)
		}
	}
	if len(n) == 0 {
		return ""
	}
	return " (failed: " + strings.Join(n, ", ") + ")"
}

func firstLine(s string) string { l, _, _ := strings.Cut(strings.TrimSpace(s), "\n"); return l }

// state is what a condition must leave as it found it.
type state struct {
	procs   map[int]string
	mounts  int
	loops   map[string]string
	sysctls map[string]string
	fds     int
}

func snapshot(bin string) state {
	return state{procs: ours(bin), mounts: fsnsuiteMounts(), loops: loopDevices(), sysctls: limitsNow(), fds: openFDs()}
}

// ours lists the live processes running one of the built binaries.
func ours(bin string) map[int]string {
	m := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err == nil && strings.HasPrefix(exe, bin+"/") && fixture.ProcessAlive(pid) {
			m[pid] = exe
		}
	}
	return m
}

func fsnsuiteMounts() int {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	return strings.Count(string(b), "fsnsuite")
}

// loopDevices maps each attached loop device to its backing file.
func loopDevices() map[string]string {
	m := map[string]string{}
	ds, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, d := range ds {
		b, err := os.ReadFile(d)
		if err == nil {
			m[strings.Split(d, "/")[3]] = strings.TrimSpace(string(b))
		}
	}
	return m
}

func limitsNow() map[string]string {
	m := map[string]string{}
	for _, dir := range []string{"/proc/sys/fs/fanotify", "/proc/sys/fs/inotify"} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				m[filepath.Join(dir, e.Name())] = strings.TrimSpace(string(b))
			}
		}
	}
	return m
}

func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

var imageRE = regexp.MustCompile(`/fsnsuite/[a-z0-9]+-(\d+)\.img`)

// leftovers compares the machine with the snapshot taken before a
// condition, giving processes a few seconds to finish dying.
func leftovers(before state, bin, tmpdir string) []string {
	var p []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		p = p[:0]
		for pid, exe := range ours(bin) {
			if _, was := before.procs[pid]; !was {
				p = append(p, fmt.Sprintf("leftover: process %d (%s)", pid, filepath.Base(exe)))
			}
		}
		if n := fsnsuiteMounts(); n > before.mounts {
			p = append(p, fmt.Sprintf("leftover: %d fsnsuite mount(s) in the host namespace", n-before.mounts))
		}
		// A fixture image is named <fs>-<pid>.img after the case process
		// that made it; attached after that process is gone, it is left over.
		for dev, back := range loopDevices() {
			m := imageRE.FindStringSubmatch(back)
			if m == nil {
				continue
			}
			if pid, _ := strconv.Atoi(m[1]); !fixture.ProcessAlive(pid) {
				p = append(p, fmt.Sprintf("leftover: %s attached to %s, whose process is gone", dev, back))
			}
		}
		now := limitsNow()
		var changed []string
		for k, v := range before.sysctls {
			if now[k] != v {
				changed = append(changed, fmt.Sprintf("%s=%s (was %s)", k, now[k], v))
			}
		}
		sort.Strings(changed)
		for _, c := range changed {
			p = append(p, "leftover: sysctl "+c)
		}
		if ents, _ := os.ReadDir(tmpdir); len(ents) > 0 {
			p = append(p, fmt.Sprintf("leftover: %d entries in TMPDIR", len(ents)))
		}
		if n := openFDs(); n > before.fds {
			p = append(p, fmt.Sprintf("leftover: %d more open fds in the test process", n-before.fds))
		}
		if len(p) == 0 || time.Now().After(deadline) {
			return p
		}
		time.Sleep(100 * time.Millisecond)
	}
}
