package harness

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/envfault"
	"github.com/fsnsuite/fsnsuite/harness/exitcode"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/internal/permhold"
	"github.com/fsnsuite/fsnsuite/harness/ownproc"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
	"github.com/fsnsuite/fsnsuite/tap"
	"golang.org/x/sys/unix"
)

// The case process runs the selected cases, from the index its supervisor
// gave it (supervise.go), each under its deadline, and writes their TAP
// blocks to stdout. On a case's timeout its watchdog releases what the case
// held (fanotify groups first, which allows any pending permission event,
// then actors, then raised or lowered sysctls), reports TIMEOUT and ends the
// process: the abandoned case goroutine cannot be trusted to let go, and the
// supervisor continues with the next case in a fresh process.

type outcome int

const (
	passed outcome = iota
	failed
	skipped
	broken
	// envSkipped is a case skipped for an environment fault
	// (harness/envfault): a skip with kselftest's statuses, broken with
	// LTP's (TBROK: the machine, not the kernel, stopped the test).
	envSkipped
)

// caseProcess is the state of the process that runs the cases.
type caseProcess struct {
	s      *Suite
	w      *tap.Writer
	status *os.File

	mu       sync.Mutex
	stopping bool // the watchdog or a signal owns the output from now on
	current  *T
	curIdx   int
	curIn    instance
}

func runCaseProcess(s *Suite, sel []instance, format tap.Format) int {
	_, state := reexec.Current()
	first, err := strconv.Atoi(state)
	if err != nil || first < 0 || first > len(sel) {
		fmt.Fprintf(os.Stderr, "%s: case process: bad first case %q\n", s.Name, state)
		return exitcode.Usage // a case process is never started by hand
	}
	// The supervisor and everything it starts are the suite's own processes
	// (expect names events of any other program's).
	ownproc.SetRoot(os.Getppid())
	// The status pipe must not leak into actors, mkfs or helpers.
	unix.CloseOnExec(statusFD)
	// A crash report goes to the supervisor too (it dups the descriptor).
	crash := os.NewFile(crashFD, "crash")
	if err := debug.SetCrashOutput(crash, debug.CrashOptions{}); err != nil {
		fmt.Fprintf(os.Stderr, "%s: case process: crash output: %v\n", s.Name, err)
	}
	crash.Close()
	p := &caseProcess{s: s, w: tap.NewWriter(os.Stdout, format), status: os.NewFile(statusFD, "status"), curIdx: -1}
	p.w.Resume(first)
	// The handler is registered here, before any case runs, not in the
	// goroutine: registered there it raced with the first case, so a case
	// that ignores SIGTERM (signal.Ignore) could have its ignore undone, and
	// a signal in that window killed the process unreported.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go p.onSignal(sigs)

	// suiteWrong: a Need's probe call succeeded with a wrong result
	// (*feature.Misbehaved): every case fails with it, as a verdict on
	// the kernel, not as broken.
	var suiteSkip, suiteBroken, suiteWrong string
	if !s.NoNamespace {
		if _, err := fixture.Workspace(); err != nil {
			if r, ok := envReason(err); ok {
				suiteSkip = r
			} else {
				suiteBroken = err.Error()
			}
		}
	}
	if suiteBroken == "" && suiteSkip == "" {
		for _, f := range s.Needs {
			if err := f.Check(); err != nil {
				if r, ok := envReason(err); ok {
					suiteSkip = r
				} else if feature.IsSkip(err) {
					suiteSkip = err.Error()
				} else if m := (*feature.Misbehaved)(nil); errors.As(err, &m) {
					suiteWrong = err.Error()
				} else {
					suiteBroken = err.Error()
				}
				break
			}
		}
	}
	for i := first; i < len(sel); i++ {
		in := sel[i]
		p.tell("start %d", i)
		var o outcome
		switch {
		case suiteBroken != "":
			t := newInstanceT(in)
			t.Errorf("%s", suiteBroken)
			o = p.report(t, in, broken)
		case suiteWrong != "":
			t := newInstanceT(in)
			t.Errorf("%s", suiteWrong)
			o = p.report(t, in, nil)
		case suiteSkip != "":
			o = p.report(newInstanceT(in), in, skipMarker(suiteSkip))
		default:
			o = p.runOne(i, in)
		}
		p.tell("done %d %s", i, outcomeNames[o])
	}
	p.tell("end")
	return 0
}

// stop claims the output for the watchdog or the signal handler; false when
// the other one already has it.
func (p *caseProcess) stop() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		return false
	}
	p.stopping = true
	return true
}

// tell writes one status line for the supervisor.
func (p *caseProcess) tell(format string, args ...any) {
	fmt.Fprintf(p.status, format+"\n", args...)
}

// tellSub tells the supervisor that a declared subtest of case i started,
// or how it ended ("sub i name start", "sub i name pass|fail|skip reason"):
// the supervisor writes those leaves if the process dies during the case.
func (p *caseProcess) tellSub(i int, c *T, done bool) {
	if !done {
		p.tell("sub %d %s start", i, c.name)
		return
	}
	c.mu.Lock()
	res, o := resultOf(c)
	c.mu.Unlock()
	p.tell("sub %d %s %s %s", i, c.name, outcomeNames[o], oneLine(res.Reason))
}

// oneLine keeps a reason on the status pipe's one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// release lets go of everything the running case may hold, in the order that
// unblocks a process waiting on a permission event first.
func release() {
	fanotify.CloseAll()
	actor.KillAll()
	restoreSysctls()
}

// onSignal ends the process on SIGINT, SIGTERM or SIGHUP received on sigs
// (from the supervisor, or the runner's process group kill) after releasing what the
// running case holds and reporting it.
func (p *caseProcess) onSignal(sigs <-chan os.Signal) {
	sig := <-sigs
	if !p.stop() {
		select {} // the watchdog is ending the process
	}
	p.mu.Lock()
	t, i, in := p.current, p.curIdx, p.curIn
	p.mu.Unlock()
	var logs []string
	if t != nil {
		logs = t.freeze()
	}
	release()
	if t != nil {
		name := unix.SignalName(sig.(syscall.Signal))
		p.writeStopped(t, in, logs, fmt.Sprintf(tap.StoppedBySignal+"%s; fanotify groups closed, actors killed", name),
			"the case was stopped by "+name, tap.Result{OK: false, Name: in.name})
		p.tell("done %d %s", i, outcomeNames[failed])
	}
	os.Exit(128 + int(sig.(syscall.Signal)))
}

func newInstanceT(in instance) *T {
	return &T{name: in.name, doc: in.c.Doc, fix: in.c.Fix, fsType: in.fs, declared: in.c.Subtests}
}

// skipMarker forces a skip with a reason onto a case that did not run.
type skipMarker string

// runOne runs one case instance under its deadline. On a timeout it reports
// the case and ends the process (it does not return).
func (p *caseProcess) runOne(i int, in instance) outcome {
	t := newInstanceT(in)
	if Opts.Timeout > 0 {
		t.deadline = time.Now().Add(Opts.Timeout)
	}
	if len(in.c.Subtests) > 0 {
		t.onSub = func(c *T, done bool) { p.tellSub(i, c, done) }
	}
	p.mu.Lock()
	p.current, p.curIdx, p.curIn = t, i, in
	p.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.runBody(func(t *T) {
			t.Require(in.c.Needs...)
			in.c.Run(t)
		})
	}()
	var expired <-chan time.Time
	if Opts.Timeout > 0 {
		timer := time.NewTimer(Opts.Timeout)
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case <-done:
		p.mu.Lock()
		p.current = nil
		stopping := p.stopping
		p.mu.Unlock()
		if stopping {
			select {} // a signal handler is reporting this case and ending the process
		}
		return p.report(t, in, nil)
	case <-expired:
	}
	if !p.stop() {
		select {}
	}
	// The watchdog. The case's log is taken before anything is released:
	// what the case says after its groups are closed under it (a permission
	// event "answered", a read that "failed") is the watchdog's doing, not
	// the kernel's, and is not printed.
	logs := t.freeze()
	// Another program's unanswered permission event blocks a case as surely
	// as a kernel bug: name any such group on the case's filesystem.
	held := ""
	if t.fs != nil {
		if h := permhold.Describe(t.fs.Root); h != "" {
			held = "; " + h
		}
	}
	release()
	p.writeStopped(t, in, logs,
		fmt.Sprintf("deadline of %v passed%s; fanotify groups closed, actors killed; the next case runs in a fresh process", Opts.Timeout, held),
		fmt.Sprintf("the case timed out after %v", Opts.Timeout),
		tap.Result{OK: false, Name: in.name, Directive: tap.Timeout, Reason: seconds(Opts.Timeout) + " seconds"})
	p.tell("done %d %s", i, outcomeNames[failed])
	os.Exit(exitcode.Fail)
	return failed
}

// seconds renders d in seconds without rounding it away ("0.001", "30").
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// writeStopped reports a case the harness stopped: its doc, the log it had
// written by then, why it was stopped, and the result line; its subtests
// that had not started are skipped, "not run: " + notRun (what happened to
// the case: "the case timed out after 30s").
func (p *caseProcess) writeStopped(t *T, in instance, logs []string, why, notRun string, res tap.Result) {
	if t.doc != "" {
		p.w.Diag(t.doc)
	}
	for _, l := range logs {
		p.w.Diag(l)
	}
	p.w.Diagf("%s: %s", in.name, why)
	if len(in.c.Subtests) == 0 {
		p.w.Result(res)
		return
	}
	// Keep the case's leaves: the subtests that finished as they ended, a
	// subtest still running failed as the case is (TIMEOUT on a deadline:
	// the leaf that hung must not read as a skip), the others skipped as
	// not run.
	sw := p.w.Sub(in.name)
	for _, name := range in.c.Subtests {
		t.mu.Lock()
		i := slices.IndexFunc(t.subs, func(c *T) bool { return c.name == name })
		var c *T
		if i >= 0 {
			c = t.subs[i]
		}
		t.mu.Unlock()
		if c != nil && c.isFinished() {
			writeT(sw, c, "")
			continue
		}
		if c != nil {
			sw.Diagf("%s: running when %s was stopped", name, in.name)
			sw.Result(tap.Result{OK: false, Name: name, Directive: res.Directive, Reason: res.Reason})
			continue
		}
		sw.Result(tap.Result{OK: true, Name: name, Directive: tap.Skip, Reason: "not run: " + notRun})
	}
	p.w.EndSub(sw, res)
}

// report prints a finished T's diagnostics and result line and returns the
// outcome. force, when not nil, overrides the T's own state (a skipMarker or
// the broken outcome).
func (p *caseProcess) report(t *T, in instance, force any) outcome {
	switch v := force.(type) {
	case skipMarker:
		t.skipped, t.skipReason = true, string(v)
	case outcome:
		if v == broken {
			t.failed = true
			writeT(p.w, t, in.fs)
			return broken
		}
	}
	return writeT(p.w, t, in.fs)
}

// settle decides a finished T's own state from its subtests: a case whose
// every subtest skipped is a skip (with their reason), not a pass; one that
// met an environment fault in an Error (T.noteEnv) and nothing else failed
// is that fault's skip.
func settle(t *T) {
	if !t.failed && !t.skipped && t.envFault != "" {
		t.skipped = true
		t.skipReason = t.envFault
		return
	}
	if !t.failed && !t.skipped && t.undecided != "" {
		t.skipped = true
		t.skipReason = "undecided: events from another process (" + t.undecided + ") interfered"
		return
	}
	if t.failed || t.skipped || len(t.subs) == 0 {
		return
	}
	reasons := map[string]bool{}
	var first string
	for _, c := range t.subs {
		c.mu.Lock()
		sk, r := c.skipped && !c.failed, c.skipReason
		c.mu.Unlock()
		if !sk {
			return
		}
		if first == "" {
			first = r
		}
		reasons[r] = true
	}
	t.skipped = true
	env := true // every subtest was skipped for an environment fault
	for r := range reasons {
		env = env && envfault.IsReason(r)
	}
	switch {
	case len(reasons) == 1:
		t.skipReason = first
	case env:
		t.skipReason = fmt.Sprintf("%sall %d subtests skipped (first: %s)", envfault.Marker, len(t.subs), strings.TrimPrefix(first, envfault.Marker))
	default:
		t.skipReason = fmt.Sprintf("all %d subtests skipped (first: %s)", len(t.subs), first)
	}
}

// resultOf settles a finished T and returns its result line and outcome.
// The caller holds t.mu.
func resultOf(t *T) (tap.Result, outcome) {
	settle(t)
	res := tap.Result{OK: true, Name: t.name}
	switch {
	case t.failed:
		res.OK = false
		return res, failed
	case t.skipped && Opts.Strict:
		res.OK = false
		return res, failed
	case t.skipped:
		res.Directive, res.Reason = tap.Skip, t.skipReason
		if envfault.IsReason(t.skipReason) {
			return res, envSkipped
		}
		return res, skipped
	}
	return res, passed
}

// writeT writes t's block (subtests, diagnostics) and result line into w and
// returns the outcome it reported.
func writeT(w *tap.Writer, t *T, fsType string) outcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	res, o := resultOf(t)
	if t.doc != "" {
		w.Diag(t.doc)
	}
	for _, n := range t.notes {
		w.Diag(n)
	}
	if t.failed || Opts.Verbose {
		prefix := ""
		if t.parent == nil && fsType != "" {
			prefix = fmt.Sprintf("%s (%s): ", t.name, fsType)
		}
		for i, l := range t.logs {
			if i == 0 {
				l = prefix + l
			}
			w.Diag(l)
		}
	}
	if t.skipped && Opts.Strict {
		w.Diagf("%s%s", envfault.StrictSkip, t.skipReason)
	}
	switch {
	case t.failed && t.noHint != "":
		w.Diag("no kernel HINT: " + t.noHint)
	case t.failed && t.lacks != nil:
		// Only where the case saw the pre-fix behaviour (T.KernelLacks).
		w.Diag(t.lacks.Hint())
	}
	subs := append(slices.Clip(t.subs), t.unrunSubtests()...)
	if len(subs) == 0 {
		w.Result(res)
		return o
	}
	sub := w.Sub(t.name)
	for _, c := range subs {
		writeT(sub, c, "")
	}
	w.EndSub(sub, res)
	return o
}
