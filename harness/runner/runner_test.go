package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/fsnsuite/fsnsuite/harness/internal/execfile"
	"github.com/fsnsuite/fsnsuite/tap"
)

// fake writes an executable shell script named name into dir.
func fake(t *testing.T, dir, name, body string) Binary {
	t.Helper()
	p := filepath.Join(dir, name)
	assert.NilError(t, execfile.Write(p, []byte("#!/bin/sh\n"+body), 0o755))
	return Binary{Name: name, Path: p}
}

const (
	passBody = `echo "TAP version 13"
echo "1..2"
echo "ok 1 a"
echo "ok 2 b # SKIP no ext4"
`
	failBody = `echo "TAP version 13"
echo "1..2"
echo "# want: IN_CREATE"
echo "# got:  nothing"
echo "not ok 1 create"
echo "ok 2 delete"
exit 1
`
	skipAllBody = `echo "TAP version 13"
echo "1..0 # SKIP requires root"
exit 4
`
	crashBody = `echo "TAP version 13"
echo "1..3"
echo "ok 1 first"
echo "panic: runtime error: index out of range" >&2
echo "goroutine 1 [running]:" >&2
exit 2
`
	// exec: no shell is left to print "Terminated" (in a race with its own
	// death) when the runner kills the sleep.
	hangBody = `echo "TAP version 13"
echo "1..1"
exec sleep 60
`
)

func TestJudge(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		strict    bool
		status    tap.Status
		reason    string
		broken    bool
		noteMatch string // regexp one of the notes must match, "" for no notes
	}{
		{name: "pass", body: passBody, status: tap.StatusPass},
		{name: "fail", body: failBody, status: tap.StatusFail},
		{name: "skip_all", body: skipAllBody, status: tap.StatusSkip, reason: "requires root"},
		{name: "skip_all_ltp", body: strings.Replace(skipAllBody, "exit 4", "exit 32", 1), status: tap.StatusSkip, reason: "requires root"},
		{name: "every_case_skipped", body: "echo 1..2\necho 'ok 1 a # SKIP no fanotify (ENOSYS)'\necho 'ok 2 b # SKIP no fanotify (ENOSYS)'\nexit 4\n",
			status: tap.StatusSkip, reason: "no fanotify (ENOSYS)"},
		{name: "skips_with_mixed_reasons", body: "echo 1..2\necho 'ok 1 a # SKIP x'\necho 'ok 2 b # SKIP y'\nexit 4\n",
			status: tap.StatusSkip, reason: "all 2 cases skipped (first: x)"},
		{name: "strict_turns_skip_into_failure", body: skipAllBody, strict: true, status: tap.StatusFail, noteMatch: "strict mode: skipped: requires root"},
		{name: "exit_0_with_failed_case", body: strings.Replace(failBody, "exit 1", "exit 0", 1), status: tap.StatusFail, noteMatch: `exit status 0 but 1 case\(s\) failed`},
		{name: "exit_1_without_failed_case", body: passBody + "exit 1\n", status: tap.StatusFail, noteMatch: "exit status 1 although no case failed"},
		{name: "exit_4_with_passes", body: passBody + "exit 4\n", status: tap.StatusFail, noteMatch: `1 of 2 cases were not skipped`},
		{name: "crash_mid_stream", body: crashBody, status: tap.StatusFail, broken: true, noteMatch: `^  panic: runtime error`},
		{name: "killed_by_signal", body: "echo 1..1\nkill -SEGV $$\n", status: tap.StatusFail, broken: true, noteMatch: "killed by signal segmentation fault"},
		{name: "no_output", body: "exit 0\n", status: tap.StatusFail, broken: true, noteMatch: "no plan"},
		{name: "bail_out", body: "echo 1..2\necho 'ok 1 a'\necho 'Bail out! no tmpfs'\nexit 1\n", status: tap.StatusFail, broken: true, noteMatch: "bailed out: no tmpfs"},
		{name: "odd_exit_status", body: passBody + "exit 3\n", status: tap.StatusFail, broken: true, noteMatch: "exit status 3"},
		{name: "hang", body: hangBody, status: tap.StatusTimeout, reason: "0.5 seconds", broken: true, noteMatch: `killed after 0.5 seconds`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := fake(t, t.TempDir(), tc.name, tc.body)
			rep, err := Run(context.Background(), []Binary{b}, Options{Timeout: 500 * time.Millisecond, KillGrace: 200 * time.Millisecond, Strict: tc.strict})
			assert.NilError(t, err)
			o := rep.Outcomes[0]
			assert.Equal(t, o.Node.Status, tc.status, "notes: %q", o.Notes)
			assert.Equal(t, o.Node.Reason, tc.reason)
			assert.Equal(t, o.Broken, tc.broken, "notes: %q", o.Notes)
			if tc.noteMatch == "" {
				assert.Check(t, is.Len(o.Notes, 0))
				return
			}
			re := regexp.MustCompile(tc.noteMatch)
			found := false
			for _, n := range o.Notes {
				found = found || re.MatchString(n)
			}
			assert.Assert(t, found, "no note matches %q in %q", tc.noteMatch, o.Notes)
		})
	}
}

func TestStartError(t *testing.T) {
	rep, err := Run(context.Background(), []Binary{{Name: "absent", Path: "/nonexistent/absent"}}, Options{})
	assert.NilError(t, err)
	o := rep.Outcomes[0]
	assert.Equal(t, o.Node.Status, tap.StatusFail)
	assert.Assert(t, o.Broken)
	assert.Assert(t, o.StartErr != nil)
}

// TestMergedStream checks the merged stream by eye (golden), that it parses
// back into the report's verdicts, and that prove reads it without parse errors.
func TestMergedStream(t *testing.T) {
	for _, f := range []tap.Format{tap.TAP13, tap.KTAP} {
		t.Run(f.String(), func(t *testing.T) {
			dir := t.TempDir()
			bins := []Binary{
				fake(t, dir, "perf_first_in_list", "echo 'TAP version 13'\necho 1..1\necho 'ok 1 ratio'\n"),
				fake(t, dir, "good", passBody),
				fake(t, dir, "bad", failBody),
				fake(t, dir, "skipper", skipAllBody),
				fake(t, dir, "crasher", crashBody),
				fake(t, dir, "hanger", hangBody),
			}
			var out bytes.Buffer
			res := filepath.Join(dir, "results")
			rep, err := Run(context.Background(), bins, Options{
				Timeout: 500 * time.Millisecond, KillGrace: 100 * time.Millisecond, Jobs: 3,
				Format: f, Out: &out, ResultsDir: res,
			})
			assert.NilError(t, err)
			golden.Assert(t, out.String(), "merged_"+f.String()+".golden")

			back := tap.ParseString(out.String())
			assert.Check(t, is.Len(back.Problems, 0))
			assert.Equal(t, len(back.Children), len(rep.Outcomes))
			for i, c := range back.Children {
				o := rep.Outcomes[i]
				assert.Check(t, is.Equal(c.Name, o.Binary.Name))
				assert.Check(t, is.Equal(c.Status.Failed(), o.Node.Status.Failed()), c.Name)
			}
			assert.Equal(t, rep.Outcomes[len(rep.Outcomes)-1].Binary.Name, "perf_first_in_list")

			for _, name := range []string{"results.tap", "results.json", "junit.xml", "summary.txt", "logs/crasher.stdout", "logs/crasher.stderr"} {
				_, err := os.Stat(filepath.Join(res, name))
				assert.Check(t, err, name)
			}
			saved, err := os.ReadFile(filepath.Join(res, "results.tap"))
			assert.NilError(t, err)
			assert.Equal(t, string(saved), out.String())
			junit, err := os.Open(filepath.Join(res, "junit.xml"))
			assert.NilError(t, err)
			assert.DeepEqual(t, tap.CheckJUnit(junit), []string(nil))
			junit.Close()
			stderr, err := os.ReadFile(filepath.Join(res, "logs", "crasher.stderr"))
			assert.NilError(t, err)
			assert.Assert(t, is.Contains(string(stderr), "panic: runtime error"))

			prove, err := exec.LookPath("prove")
			if err != nil || f == tap.KTAP {
				return
			}
			script := filepath.Join(dir, "merged.t")
			assert.NilError(t, execfile.Write(script, []byte("#!/bin/sh\ncat <<'EOF'\n"+out.String()+"EOF\n"), 0o755))
			pout, err := exec.Command(prove, "--exec", "/bin/sh", script).CombinedOutput()
			assert.Assert(t, err != nil, "prove passed a stream with failures:\n%s", pout)
			assert.Assert(t, !bytes.Contains(pout, []byte("Parse errors")), "prove:\n%s", pout)
			assert.Assert(t, bytes.Contains(pout, []byte("Failed tests:  2, 4-5")), "prove:\n%s", pout)
		})
	}
}

func TestSummary(t *testing.T) {
	dir := t.TempDir()
	bins := []Binary{fake(t, dir, "good", passBody), fake(t, dir, "bad", failBody), fake(t, dir, "skipper", skipAllBody), fake(t, dir, "crasher", crashBody)}
	rep, err := Run(context.Background(), bins, Options{})
	assert.NilError(t, err)
	// Elapsed times are the varying fields.
	times := func(s string) string {
		s = strings.ReplaceAll(s, dir, "DIR")
		s = regexp.MustCompile(`in [0-9.]+m?s\n`).ReplaceAllString(s, "in TIME\n")
		return regexp.MustCompile(` +[0-9]+\.[0-9]s\b`).ReplaceAllString(s, " T")
	}
	var b bytes.Buffer
	rep.WriteSummary(&b)
	golden.Assert(t, times(b.String()), "summary.golden")
	b.Reset()
	rep.WriteSummaryFile(&b)
	golden.Assert(t, times(b.String()), "summary-file.golden")
}

// TestSummaryFitsOneScreen: a run with a thousand skips and dozens of
// failures still sums up in one screen on the terminal (skips by reason,
// the first failures, the rest counted), while summary.txt keeps every one.
func TestSummaryFitsOneScreen(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("echo 'TAP version 13'\necho 1..1040\necho '# many: a binary with many cases'\necho '# kernel 6.18.0'\n")
	n := 0
	for i := range 1000 {
		n++
		reason := []string{"requires CAP_SYS_ADMIN in the initial user namespace", "ext4: mkfs.ext4 not found", "FAN_MARK_EVICTABLE not supported (EINVAL; needs >= 5.19)"}[i%3]
		fmt.Fprintf(&b, "echo 'ok %d skipped_%d.tmpfs # SKIP %s'\n", n, i, reason)
	}
	for i := range 30 {
		n++
		fmt.Fprintf(&b, "echo '# failing_%d does a thing (fanotify(7))'\n", i)
		fmt.Fprintf(&b, "echo '# failing_%d.tmpfs (tmpfs): events differ'\necho '#   want: FAN_OPEN f'\necho '#   got:  nothing'\n", i)
		b.WriteString("echo '# HINT: kernel may lack 0123456789ab (fsnotify: a fix)'\n")
		fmt.Fprintf(&b, "echo 'not ok %d failing_%d.tmpfs'\n", n, i)
		n++
		fmt.Fprintf(&b, "echo '# failing_%d does a thing (fanotify(7))'\necho 'ok %d failing_%d.ext4'\n", i, n, i)
	}
	for i := range 10 {
		n++
		fmt.Fprintf(&b, "echo '# measurement: ratio 1.2 ratio [1.1,1.3]'\necho '# reported, not gated: ratio 1.2000 [1.1000,1.3000]'\necho 'ok %d info_%d.tmpfs'\n", n, i)
	}
	b.WriteString("exit 1\n")
	res := filepath.Join(dir, "res")
	rep, err := Run(context.Background(), []Binary{fake(t, dir, "many", strings.Replace(b.String(), "1..1040", fmt.Sprintf("1..%d", n), 1))}, Options{ResultsDir: res})
	assert.NilError(t, err)
	var term bytes.Buffer
	rep.WriteSummary(&term)
	lines := strings.Split(strings.TrimSpace(term.String()), "\n")
	assert.Assert(t, len(lines) <= 50, "the terminal summary has %d lines:\n%s", len(lines), term.String())
	for _, want := range []string{
		"cases: 30 pass, 10 reported only (not gated), 30 fail, 1000 skip\n",
		"  FAIL    many   30 ok   30 fail 1000 skip  10 reported",
		// 30 failures of one reason and HINT: one group, with its count.
		"failed (30), by reason:\n     30  FAIL: events differ  (many/failing_0.tmpfs, ...)\n           HINT: kernel may lack 0123456789ab (fsnotify: a fix)\nskipped",
		"skipped (1000), by reason:\n    334  requires CAP_SYS_ADMIN in the initial user namespace  (many/skipped_0.tmpfs, ...)\n",
		"reported only, not gated (10):\n  many/info_0.tmpfs: ratio 1.2000 [1.1000,1.3000]\n",
		"first failure: " + filepath.Join(dir, "many") + " -run '^failing_0\\.tmpfs$' -v\n",
		"next: fsnsuite report " + res + " -o report.html\n",
	} {
		assert.Check(t, is.Contains(term.String(), want))
	}
	assert.Check(t, is.Regexp(`^fsnsuite: 1 binary: 0 passed, 1 failed, 0 skipped in \S+$`, lines[len(lines)-1]), "the totals come last")
	// A small terminal: the summary's lines, wrapped, fill at most its rows.
	term.Reset()
	rep.WriteSummarySized(&term, 60, 22)
	rows := 0
	for _, l := range strings.Split(strings.TrimSpace(term.String()), "\n") {
		rows += (utf8.RuneCountInString(l) + 59) / 60
	}
	assert.Assert(t, rows <= 22, "%d rows:\n%s", rows, term.String())
	assert.Check(t, is.Regexp(`\n  \.\.\. and [0-9]+ more (reasons for [0-9]+ cases )?\(every one in summary.txt\)\n`, term.String()))
	lines = strings.Split(strings.TrimSpace(term.String()), "\n")
	assert.Check(t, is.Regexp(`^fsnsuite: 1 binary: .* in \S+$`, lines[len(lines)-1]), "the totals come last")
	file, err := os.ReadFile(filepath.Join(res, "summary.txt"))
	assert.NilError(t, err)
	for _, want := range []string{
		"failed, case by case (30):\n",
		"  many/failing_29.tmpfs: FAIL\n      failing_29.tmpfs (tmpfs): events differ\n        want: FAN_OPEN f\n        got:  nothing\n      HINT:",
		"skipped (1000), by reason:\n",
		"reported only, not gated (10):\n",
		"  many/info_9.tmpfs: ratio 1.2000 [1.1000,1.3000]\n",
		"skipped, case by case (1000):\n",
		"  many/skipped_999.tmpfs: requires CAP_SYS_ADMIN in the initial user namespace\n",
	} {
		assert.Check(t, is.Contains(string(file), want))
	}
}

// TestSummaryReportedOnly: a perf case that measures without a gate (the
// "reported, not gated:" diagnostic before its ok line) is counted apart from
// gated passes.
func TestSummaryReportedOnly(t *testing.T) {
	dir := t.TempDir()
	body := `echo "TAP version 13"
echo "1..3"
echo "# ratio 1.0001 [0.9993,1.0005] <= 1.03"
echo "ok 1 gated"
echo "# reported, not gated: ratio 1.1634 [1.1622,1.1681]"
echo "ok 2 info"
echo "ok 3 other # SKIP no ext4"
`
	rep, err := Run(context.Background(), []Binary{fake(t, dir, "perf_x", body)}, Options{})
	assert.NilError(t, err)
	var b bytes.Buffer
	rep.WriteSummary(&b)
	assert.Assert(t, strings.Contains(b.String(), "cases: 1 pass, 1 reported only (not gated), 1 skip\n"), "summary:\n%s", b.String())
}

func TestReasonShape(t *testing.T) {
	for in, want := range map[string]string{
		`fanotify_mark(FAN_MARK_ADD, FAN_OPEN, "/tmp/x/f"): no such device (FID reporting on tmpfs not supported (ENODEV; needs >= 5.13))`: `fanotify_mark(…): no such device (FID reporting on tmpfs not supported (ENODEV; needs >= 5.13))`,
		`fanotify_init(FAN_CLASS_CONTENT): EPERM (needs CAP_SYS_ADMIN)`:                                                                    `fanotify_init(FAN_CLASS_CONTENT): EPERM (needs CAP_SYS_ADMIN)`,
		`open "/tmp/a b": ENOENT`:   `open "…": ENOENT`,
		`ext4: mkfs.ext4 not found`: `ext4: mkfs.ext4 not found`,
	} {
		assert.Check(t, is.Equal(reasonShape(in), want))
	}
}

func TestExitCode(t *testing.T) {
	out := func(s tap.Status, broken bool) *Outcome {
		return &Outcome{Node: &tap.Node{Status: s}, Broken: broken}
	}
	pass, fail, skip := out(tap.StatusPass, false), out(tap.StatusFail, false), out(tap.StatusSkip, false)
	broken := out(tap.StatusTimeout, true)
	tests := []struct {
		name        string
		outcomes    []*Outcome
		interrupted bool
		kselftest   int
		ltp         int
	}{
		{"all_pass", []*Outcome{pass, pass}, false, 0, 0},
		{"pass_and_skip", []*Outcome{pass, skip}, false, 0, 0},
		{"all_skip", []*Outcome{skip, skip}, false, 4, 32},
		{"one_fail", []*Outcome{pass, fail, skip}, false, 1, 1},
		{"one_broken", []*Outcome{pass, broken}, false, 1, 2},
		{"fail_and_broken", []*Outcome{fail, broken}, false, 1, 3},
		{"interrupted", []*Outcome{pass}, true, 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Outcomes: tc.outcomes, Interrupted: tc.interrupted}
			assert.Equal(t, r.ExitCode(false), tc.kselftest)
			assert.Equal(t, r.ExitCode(true), tc.ltp)
		})
	}
}

// TestTimeoutKillsProcessGroup checks that nothing a timed-out binary
// started survives it.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	b := fake(t, dir, "spawner", fmt.Sprintf("echo 1..1\nsleep 60 &\necho $! > %s\nwait\n", pidFile))
	start := time.Now()
	rep, err := Run(context.Background(), []Binary{b}, Options{Timeout: 300 * time.Millisecond, KillGrace: 100 * time.Millisecond})
	assert.NilError(t, err)
	assert.Assert(t, time.Since(start) < 10*time.Second)
	assert.Equal(t, rep.Outcomes[0].Node.Status, tap.StatusTimeout)
	raw, err := os.ReadFile(pidFile)
	assert.NilError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	assert.NilError(t, err)
	assert.Assert(t, !alive(pid), "background child %d survived the timeout", pid)
}

// alive reports whether pid runs (a zombie waiting for a reaper does not).
func alive(pid int) bool {
	for range 50 {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// TestPerfRunsAlone checks that with -j the perf binaries overlap nothing.
func TestPerfRunsAlone(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	body := func(name string) string {
		return fmt.Sprintf("echo start %s >> %s\nsleep 0.2\necho end %s >> %s\necho 1..1\necho 'ok 1 x'\n", name, log, name, log)
	}
	var bins []Binary
	for _, n := range []string{"perf_a", "one", "perf_b", "two", "three"} {
		bins = append(bins, fake(t, dir, n, body(n)))
	}
	rep, err := Run(context.Background(), bins, Options{Jobs: 4})
	assert.NilError(t, err)
	assert.Equal(t, rep.ExitCode(false), 0)
	raw, err := os.ReadFile(log)
	assert.NilError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	assert.Equal(t, len(lines), 10)
	// The last four lines are the perf binaries, one after the other.
	assert.DeepEqual(t, lines[6:], []string{"start perf_a", "end perf_a", "start perf_b", "end perf_b"})
	// The others ran at once: all three started before any ended.
	for _, l := range lines[:3] {
		assert.Assert(t, strings.HasPrefix(l, "start "), "lines: %q", lines)
	}
}

func TestInterrupt(t *testing.T) {
	dir := t.TempDir()
	bins := []Binary{fake(t, dir, "hanger", hangBody), fake(t, dir, "never", passBody)}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	rep, err := Run(ctx, bins, Options{KillGrace: 100 * time.Millisecond})
	assert.NilError(t, err)
	assert.Assert(t, rep.Interrupted)
	assert.Equal(t, rep.Outcomes[0].Node.Status, tap.StatusFail)
	assert.Equal(t, rep.Outcomes[1].Notes[0], "never: not run: interrupted")
	assert.Equal(t, rep.ExitCode(false), 1)
}

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	self := fake(t, dir, "fsnsuite", "").Path
	fake(t, dir, "inotify_basic", "")
	fake(t, dir, "perf_watch_add", "")
	fake(t, dir, ".hidden", "")
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0o644))
	assert.NilError(t, os.Mkdir(filepath.Join(dir, "subdir"), 0o755))

	tests := []struct {
		perf bool
		want []string
	}{
		{perf: true, want: []string{"inotify_basic", "perf_watch_add"}},
		{perf: false, want: []string{"inotify_basic"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint("perf=", tc.perf), func(t *testing.T) {
			bins, err := Discover(dir, self, tc.perf)
			assert.NilError(t, err)
			var names []string
			for _, b := range bins {
				names = append(names, b.Name)
			}
			assert.DeepEqual(t, names, tc.want)
		})
	}
}

func TestReadRuntest(t *testing.T) {
	dir := t.TempDir()
	local := fake(t, dir, "inotify_basic", "").Path
	tests := []struct {
		name    string
		in      string
		want    []Binary
		wantErr string
	}{
		{
			name: "lines_and_comments",
			in:   "# fsnsuite\n\ninotify_basic inotify_basic -exit ltp  # trailing comment\nsh_tag sh -c true\nabs /bin/true\nabsent_tag absent_cmd\n",
			// None of them is a Go program of ours: each runs Verbatim.
			want: []Binary{
				{Name: "inotify_basic", Path: local, Args: []string{"-exit", "ltp"}, Verbatim: true},
				{Name: "sh_tag", Path: lookPath(t, "sh"), Args: []string{"-c", "true"}, Verbatim: true},
				{Name: "abs", Path: "/bin/true", Args: []string{}, Verbatim: true},
				{Name: "absent_tag", Path: "absent_cmd", Args: []string{}, Verbatim: true},
			},
		},
		{name: "missing_command", in: "lonely\n", wantErr: `runtest line 1: want "<tag> <command> [args]", got "lonely"`},
		{name: "duplicate_tag", in: "a /bin/true\na /bin/false\n", wantErr: `runtest line 2: tag "a" already used on line 1`},
		{name: "quoted_args", in: `q sh -c "echo 'a b'" it\'s 'x y' "d\"q"` + "\n",
			want: []Binary{{Name: "q", Path: lookPath(t, "sh"), Args: []string{"-c", "echo 'a b'", "it's", "x y", `d"q`}, Verbatim: true}}},
		{name: "unterminated_quote", in: `q sh -c "echo` + "\n", wantErr: `runtest line 1: unterminated " quote in "q sh -c \"echo"`},
		{name: "junk_tag", in: "../evil /bin/true\n", wantErr: `runtest line 1: tag "../evil": want letters, digits, '_', '.' or '-'`},
		{name: "junk_tag_shell", in: "a;b /bin/true\n", wantErr: `runtest line 1: tag "a;b": want letters, digits, '_', '.' or '-'`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadRuntest(strings.NewReader(tc.in), []string{dir})
			if tc.wantErr != "" {
				assert.Error(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	assert.NilError(t, err)
	return p
}

func TestFilterAndOrder(t *testing.T) {
	bins := []Binary{{Name: "perf_b"}, {Name: "inotify_basic"}, {Name: "perf_a"}, {Name: "fanotify_basic"}}
	tests := []struct {
		name string
		re   string
		perf bool
		want []string
	}{
		{"all", "", true, []string{"inotify_basic", "fanotify_basic", "perf_b", "perf_a"}},
		{"no_perf", "", false, []string{"inotify_basic", "fanotify_basic"}},
		{"regex", "fanotify|perf_a", true, []string{"fanotify_basic", "perf_a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var re *regexp.Regexp
			if tc.re != "" {
				re = regexp.MustCompile(tc.re)
			}
			var names []string
			for _, b := range Order(Filter(bins, re, tc.perf)) {
				names = append(names, b.Name)
			}
			assert.DeepEqual(t, names, tc.want)
		})
	}
}

func TestLiveProgress(t *testing.T) {
	dir := t.TempDir()
	var prog bytes.Buffer
	_, err := Run(context.Background(), []Binary{fake(t, dir, "good", passBody)}, Options{Progress: &prog, Live: true})
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(prog.String(), "\x1b[1A\r\x1b[2K\x1b[B\x1b[1A\r")) // the view erased before it is drawn again
	assert.Assert(t, is.Contains(prog.String(), "PASS    good"))

	// A running binary shows its time left before -timeout, and the others wait.
	prog.Reset()
	_, err = Run(context.Background(), []Binary{fake(t, dir, "slow", "sleep 0.6\n"+passBody), fake(t, dir, "next", passBody)},
		Options{Progress: &prog, Live: true, Timeout: time.Minute})
	assert.NilError(t, err)
	assert.Check(t, is.Regexp(`running slow .* [0-9.]+s of 60s\n`, prog.String()))
	assert.Check(t, is.Contains(prog.String(), "1 waiting, 0 of 2 done"))

	prog.Reset()
	_, err = Run(context.Background(), []Binary{fake(t, dir, "good", passBody)}, Options{Progress: &prog})
	assert.NilError(t, err)
	assert.Assert(t, !strings.Contains(prog.String(), "\x1b"), "escape codes without a terminal: %q", prog.String())
	assert.Assert(t, is.Regexp(`^PASS +good +1 ok +0 fail +1 skip +[0-9.]+s\n$`, prog.String()))
}

// syncBuffer is a bytes.Buffer safe for the runner's writers and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStreamsLive checks that the block of the first unfinished binary
// reaches the merged stream while the binary still runs, and that a later
// binary running beside it is held back until its turn.
func TestStreamsLive(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	// slow waits for the gate file that the test creates once it saw slow's first line.
	slow := fake(t, dir, "slow", fmt.Sprintf("echo 'TAP version 13'\necho 1..2\necho 'ok 1 early'\nwhile [ ! -e %s ]; do sleep 0.05; done\necho 'ok 2 late'\n", gate))
	quick := fake(t, dir, "quick", "echo 1..1\necho 'ok 1 q'\n")
	var out syncBuffer
	done := make(chan *Report)
	go func() {
		rep, err := Run(context.Background(), []Binary{slow, quick}, Options{Out: &out, Jobs: 2, Timeout: 20 * time.Second})
		assert.Check(t, err)
		done <- rep
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "    ok 1 early\n") {
		assert.Assert(t, time.Now().Before(deadline), "first line never streamed; got %q", out.String())
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // quick has long finished by now
	assert.Assert(t, !strings.Contains(out.String(), "quick"), "a later block leaked into the current one: %q", out.String())
	assert.NilError(t, os.WriteFile(gate, nil, 0o644))
	rep := <-done
	assert.Equal(t, rep.ExitCode(false), 0)
	assert.Equal(t, out.String(), "TAP version 13\n1..2\n"+
		"    # Subtest: slow\n    1..2\n    ok 1 early\n    ok 2 late\nok 1 slow\n"+
		"    # Subtest: quick\n    1..1\n    ok 1 q\nok 2 quick\n")
}

func TestReusedResultsDir(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	assert.NilError(t, os.MkdirAll(filepath.Join(res, "logs"), 0o755))
	for _, f := range []string{"logs/gone.stdout", "logs/gone.stderr", "logs/notes.txt"} {
		assert.NilError(t, os.WriteFile(filepath.Join(res, f), []byte("old"), 0o644))
	}
	_, err := Run(context.Background(), []Binary{fake(t, dir, "good", passBody)}, Options{ResultsDir: res})
	assert.NilError(t, err)
	for f, want := range map[string]bool{"logs/gone.stdout": false, "logs/gone.stderr": false, "logs/notes.txt": true, "logs/good.stdout": true} {
		_, err := os.Stat(filepath.Join(res, f))
		assert.Check(t, is.Equal(err == nil, want), f)
	}
}

// A guest's runner writes into its own /results, which reaches the host as
// VM_RESULTS: the suggested command names ShownResultsDir, where it works.
func TestSummaryNamesTheShownResultsDir(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "res")
	rep, err := Run(context.Background(), []Binary{fake(t, dir, "one", "echo 'TAP version 13'\necho '1..1'\necho 'ok 1 a.tmpfs'\n")},
		Options{ResultsDir: res, ShownResultsDir: "/host/results/vm-debian-7.3"})
	assert.NilError(t, err)
	var term bytes.Buffer
	rep.WriteSummary(&term)
	assert.Check(t, is.Contains(term.String(), "next: fsnsuite report /host/results/vm-debian-7.3 -o report.html\n"))
	assert.Check(t, !strings.Contains(term.String(), res), "the guest's own directory is named:\n%s", term.String())
}
