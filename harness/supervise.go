package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/exitcode"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/internal/oom"
	"github.com/fsnsuite/fsnsuite/harness/internal/procfail"
	"github.com/fsnsuite/fsnsuite/harness/leftover"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
	"github.com/fsnsuite/fsnsuite/tap"
	"golang.org/x/sys/unix"
)

// The supervisor is the process a user (or the runner) starts. It prints the
// stream's header, then runs the selected cases in a case process: this
// binary re-executed (reexec role fixture.Role) in a private mount namespace,
// told by its role state the index of the first case to run. The case
// process writes the case results straight to stdout and tells the
// supervisor, one line per event on a pipe (fd 3), which case it started and
// how each ended. When it exits before the last case (a case timed out and
// the watchdog ended the process, or a case crashed it), the supervisor
// reports a case that started but never ended as failed and starts a fresh
// case process at the next case: a hang or a crash costs one case.
//
// The case process's watchdog cannot time out a process that does not run
// (SIGSTOPped, frozen by a cgroup freezer): the supervisor keeps the deadline
// too (but not while the binary's own stdout is not read: the case process
// may then be blocked writing, caseOutput.writingFor). It knows from the status pipe which case runs and since when; a case
// with no result caseKillGrace after its deadline, or a process silent that
// long between cases, is ended by the supervisor with SIGKILL (which reaches
// a stopped task and a cgroup v2 frozen one; a cgroup v1 frozen one is thawed
// for it, procstate.go), and the case is reported TIMEOUT with what the
// process was doing: a stopped case process costs one case too.

// statusFD is the case process's end of the status pipe; crashFD the end
// of the pipe the Go runtime also writes a crash report to
// (debug.SetCrashOutput), so that a case process that dies of one (a
// thread it could not create) is reported with its reason, not only in the
// stderr no one reads.
const (
	statusFD = 3
	crashFD  = 4
)

// killGrace is how long a case process has between a forwarded SIGTERM
// (or SIGINT, SIGHUP) and SIGKILL.
const killGrace = 2 * time.Second

// caseKillGrace is how long after a case's deadline the supervisor waits for
// the case process's own watchdog to report it (that takes milliseconds:
// close the groups, kill the actors, write the block) before it kills the
// process itself; also how long past the deadline a process may stay silent
// between two cases.
const caseKillGrace = 5 * time.Second

// deathWait bounds the wait for a SIGKILLed case process to die (a cgroup v1
// freezer that could not be left holds the kill until thawed); after it the
// supervisor goes on without it.
const deathWait = 5 * time.Second

// tally counts case outcomes for the exit status.
type tally [len(outcomeNames)]int

// exitCode is the binary's status: kselftest's counts a case an environment
// fault skipped as a skip (0 when another case passed, 4 when all
// skipped); LTP's as broken (2, when no case failed: TBROK, the test could
// not run), as kirk expects of a machine that could not set the test up.
// A failure (1) outranks it.
func (c *tally) exitCode(conv exitcode.Convention) int {
	total := 0
	for _, n := range c {
		total += n
	}
	switch {
	case c[broken] > 0 && conv == exitcode.LTP:
		return exitcode.LTPBroken
	case c[failed] > 0 || c[broken] > 0:
		return exitcode.Fail
	case c[envSkipped] > 0 && conv == exitcode.LTP:
		return exitcode.LTPBroken
	case total == 0 || c[skipped]+c[envSkipped] == total:
		return conv.Skip()
	}
	return exitcode.Pass
}

// ltpCounts are the passed, failed, broken and skipped counts of LTP's
// summary: an environment fault's skip counts as broken, as the status does.
func (c *tally) ltpCounts() (pass, fail, brok, skip int) {
	return c[passed], c[failed], c[broken] + c[envSkipped], c[skipped]
}

var outcomeNames = [...]string{passed: "pass", failed: "fail", skipped: "skip", broken: "broken", envSkipped: "envskip"}

func parseOutcome(s string) (outcome, bool) {
	for o, n := range outcomeNames {
		if n == s {
			return outcome(o), true
		}
	}
	return 0, false
}

// caseProcessEnd is what one case process did.
type caseProcessEnd struct {
	started  int // index of the last case started, -1 for none
	finished int // index of the last case that ended, -1 for none
	complete bool
	status   string // how the process ended ("exit status 2", "signal: killed")
	startErr error
	output   *caseOutput       // the process's stdout as it reached the binary's
	subs     map[string]subEnd // the declared subtests of case started, by name
	// killed says why the supervisor killed the process (a deadline it
	// overran, and what the process was doing), "" when it did not.
	killed string
	// crash is the reason of the Go runtime crash that ended it, "" if none.
	crash string
}

// subEnd is what the case process told of one declared subtest.
type subEnd struct {
	ended  bool
	o      outcome
	reason string // a skip's
}

func supervise(s *Suite, sel []instance, w *tap.Writer, out io.Writer) int {
	// PR_SET_PDEATHSIG of the case process fires when the thread that
	// forked it exits: keep this goroutine on one thread.
	runtime.LockOSThread()
	w.Version()
	w.Plan(len(sel))
	if s.Doc != "" {
		w.Diagf("%s: %s", s.Name, s.Doc)
	}
	w.Diagf("kernel %s", feature.KernelRelease())

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	// Under the runner, take the oom_score_adj it gives binaries before
	// forking anything (its own write comes just after it forked us).
	if v, err := strconv.Atoi(os.Getenv(oom.EnvAdj)); err == nil {
		_ = oom.Raise(0, v)
	}

	// What a killed fsnsuite binary left (a raised sysctl, a memory
	// cgroup) is undone now, not at some later case's end.
	leftover.Clear(0, os.Stderr)

	var counts tally
	for next := 0; next < len(sel); {
		end, sig := runCaseProcessFrom(next, sigs, &counts, out)
		if end.startErr != nil {
			reportUnstartable(w, sel[next:], next, end.startErr, &counts)
			break
		}
		if sig != nil {
			w.Diagf("%s: interrupted by %s; %d case(s) not run", s.Name, unix.SignalName(sig.(syscall.Signal)), len(sel)-end.finished-1)
			return 128 + int(sig.(syscall.Signal))
		}
		if end.complete {
			break
		}
		charged := false // a case was reported for this process's end
		if end.started > end.finished {
			if o, ok := end.output.result(end.started + 1); ok {
				// Its result made it out before the process ended:
				// only the status line did not.
				counts[o]++
				end.finished = end.started
			}
		}
		if end.started > end.finished {
			charged = true
			// Started and never ended: the process died under it, or the
			// supervisor killed it past the case's deadline.
			in := sel[end.started]
			if in.c.Doc != "" {
				w.Diag(in.c.Doc)
			}
			if end.killed != "" {
				w.Diagf("%s: %s; its log died with it; the next case runs in a fresh process", in.name, end.killed)
				writeLost(w, end.started, in, end.subs, timeoutResult(in.name), "the supervisor killed the case process", "the supervisor killed the case process while this subtest ran")
			} else {
				why := "its stderr has the details"
				if end.crash != "" {
					why = end.crash
				}
				w.Diagf("%s: the case process died (%s) while this case ran; %s; the next case runs in a fresh process", in.name, end.status, why)
				writeLost(w, end.started, in, end.subs, tap.Result{OK: false, Name: in.name}, "the case process died", "the case process died while this subtest ran")
			}
			counts[failed]++
			end.finished = end.started
		}
		if end.killed != "" && end.finished < next {
			charged = true
			// Killed before it started case next (stopped at its start):
			// that case is the one a stopped process costs, so that the
			// run goes on.
			in := sel[next]
			if in.c.Doc != "" {
				w.Diag(in.c.Doc)
			}
			w.Diagf("%s: %s before this case started; the next case runs in a fresh process", in.name, end.killed)
			writeLost(w, next, in, nil, timeoutResult(in.name), "the supervisor killed the case process", "")
			counts[failed]++
			end.finished = next
		}
		if end.killed != "" && !charged {
			// Killed between two cases: none is lost.
			w.Diagf("%s: %s; the next case runs in a fresh process", s.Name, end.killed)
		}
		if end.finished < next {
			// Died before starting a case (it reports nothing): do not loop.
			why := ""
			if end.crash != "" {
				why = ": " + end.crash
			}
			w.Diagf("%s: the case process ended (%s) before running case %d%s", s.Name, end.status, next+1, why)
			for i := next; i < len(sel); i++ {
				w.Raw(tap.FormatResult(i+1, tap.Result{OK: false, Name: sel[i].name}))
				counts[broken]++
			}
			break
		}
		next = end.finished + 1
	}
	if Opts.conv == exitcode.LTP {
		// kirk reads these counts from the output (LTP's own tests print
		// them), so a partly skipped binary shows its skips there.
		p, f, b, sk := counts.ltpCounts()
		_ = tap.LTPSummary(out, p, f, b, sk, 0)
	}
	return counts.exitCode(Opts.conv)
}

// timeoutResult is the result line of a case whose deadline passed.
func timeoutResult(name string) tap.Result {
	return tap.Result{OK: false, Name: name, Directive: tap.Timeout, Reason: seconds(Opts.Timeout) + " seconds"}
}

// writeLost writes res, the result of case i, whose process died under it or
// was killed (what says which: "the case process died"). A case with
// declared subtests keeps its leaves, as a stopped case does
// (caseProcess.writeStopped): the subtests that ended as the case process
// told; the one running, noted with running, failed as res is (a TIMEOUT
// where the supervisor killed it): CI that reads leaves must see the leaf
// that hung or crashed fail, not skip; the others skipped as not run.
// Their logs died with the process.
func writeLost(w *tap.Writer, i int, in instance, subs map[string]subEnd, res tap.Result, what, running string) {
	if len(in.c.Subtests) == 0 {
		w.Raw(tap.FormatResult(i+1, res))
		return
	}
	w.SetCount(i)
	sw := w.Sub(in.name)
	for _, name := range in.c.Subtests {
		s, told := subs[name]
		switch {
		case s.ended && s.o == passed:
			sw.Result(tap.Result{OK: true, Name: name})
		case s.ended && (s.o == skipped || s.o == envSkipped):
			sw.Result(tap.Result{OK: true, Name: name, Directive: tap.Skip, Reason: s.reason})
		case s.ended:
			sw.Result(tap.Result{OK: false, Name: name})
		case told && running != "":
			sw.Diagf("%s: %s", name, running)
			sw.Result(tap.Result{OK: false, Name: name, Directive: res.Directive, Reason: res.Reason})
		default:
			sw.Result(tap.Result{OK: true, Name: name, Directive: tap.Skip, Reason: fmt.Sprintf("not run: %s during %s", what, in.name)})
		}
	}
	w.EndSub(sw, res)
}

// reportUnstartable reports the cases from first on when no case process
// could be started: a skip when the kernel refused the namespace for lack of
// privilege or support, else broken.
func reportUnstartable(w *tap.Writer, rest []instance, first int, err error, counts *tally) {
	// unshare(2): EINVAL for a namespace the kernel was not configured
	// with; ENOSYS only from a seccomp filter (the Kconfig rule says so).
	cls := (&feature.Feature{Name: "private mount namespace (unshare CLONE_NEWNS)", Kind: feature.Kconfig, Option: "CONFIG_NAMESPACES",
		Privilege: "CAP_SYS_ADMIN in the current user namespace", Absent: []unix.Errno{unix.EINVAL, unix.ENOSYS}}).Classify(err)
	skip := feature.IsSkip(cls)
	if !skip {
		w.Diagf("case process: %v", err)
	}
	for i, in := range rest {
		r := tap.Result{OK: skip, Name: in.name}
		if skip {
			r.Directive, r.Reason = tap.Skip, cls.Error()
			if Opts.Strict {
				r = tap.Result{OK: false, Name: in.name}
			}
		}
		w.Raw(tap.FormatResult(first+i+1, r))
		switch {
		case skip && !Opts.Strict:
			counts[skipped]++
		case skip:
			counts[failed]++
		default:
			counts[broken]++
		}
	}
}

// runCaseProcessFrom runs one case process starting at case first, counting
// the outcomes it reports. A signal from sigs is passed on; the process gets
// killGrace to end before SIGKILL, and the signal is returned.
func runCaseProcessFrom(first int, sigs <-chan os.Signal, counts *tally, out io.Writer) (caseProcessEnd, os.Signal) {
	end := caseProcessEnd{started: first - 1, finished: first - 1, output: newCaseOutput(out)}
	// Whatever happens, the supervisor's next line starts a line.
	defer end.output.endLine()
	r, wr, err := os.Pipe()
	if err != nil {
		end.startErr = fmt.Errorf("status pipe: %w", err)
		return end, nil
	}
	defer r.Close()
	cr, cw, err := os.Pipe()
	if err != nil {
		wr.Close()
		end.startErr = fmt.Errorf("crash pipe: %w", err)
		return end, nil
	}
	crash := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(cr, 16<<10))
		io.Copy(io.Discard, cr)
		cr.Close()
		crash <- b
	}()
	pids := procfail.ReadPids()
	oomWatch := oom.WatchKills(0)
	cmd := reexec.Command(fixture.Role, strconv.Itoa(first), os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	// Its stdout comes through the supervisor (caseOutput), which so knows
	// which results reached the stream; a grandchild that keeps the pipe
	// open (a case's helper) holds the supervisor WaitDelay at most.
	cmd.Stdout, cmd.Stderr = end.output, os.Stderr
	cmd.WaitDelay = 2 * time.Second
	cmd.ExtraFiles = []*os.File{wr, cw} // fd 3 == statusFD, fd 4 == crashFD
	cmd.SysProcAttr = fixture.NamespaceAttr()
	if Opts.noNamespace {
		cmd.SysProcAttr.Unshareflags = 0
	}
	err = cmd.Start()
	wr.Close()
	cw.Close()
	if err != nil {
		end.startErr = fmt.Errorf("unshare(CLONE_NEWNS) and start: %w", err)
		return end, nil
	}
	// The case process (and its actors) go before the supervisor under
	// memory pressure, so that the supervisor can report the case.
	if adj, err := oom.Adj(0); err == nil {
		_ = oom.Raise(cmd.Process.Pid, adj+oom.CaseStep)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		// A status line longer than bufio's default 64 KiB would end the
		// loop, the supervisor would stop reading and lose its deadlines.
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got os.Signal
	var kill <-chan time.Time
	// The supervisor's own deadline: re-armed by every status line, so it
	// runs from the start of the case that runs (or from the last line
	// between cases) and fires caseKillGrace after the case's deadline.
	var overdue <-chan time.Time
	var overdueTimer *time.Timer
	if Opts.Timeout > 0 {
		overdueTimer = time.NewTimer(Opts.Timeout + caseKillGrace)
		defer overdueTimer.Stop()
		overdue = overdueTimer.C
	}
	since := time.Now()
	var gone <-chan time.Time // after the supervisor's SIGKILL: how long it waits
	pid := cmd.Process.Pid
	for lines != nil {
		select {
		case l, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			f := strings.Fields(l)
			if overdueTimer != nil && end.killed == "" && len(f) > 0 && (f[0] == "start" || f[0] == "done" || f[0] == "end") {
				// A case's progress (its subtests) does not move its deadline.
				overdueTimer.Reset(Opts.Timeout + caseKillGrace)
				since = time.Now()
			}
			switch {
			case len(f) == 2 && f[0] == "start":
				end.started, _ = strconv.Atoi(f[1])
				end.subs = nil
			case len(f) >= 4 && f[0] == "sub":
				if i, _ := strconv.Atoi(f[1]); i == end.started {
					if end.subs == nil {
						end.subs = map[string]subEnd{}
					}
					o, ok := parseOutcome(f[3])
					end.subs[f[2]] = subEnd{ended: ok, o: o, reason: strings.Join(f[4:], " ")}
				}
			case len(f) == 3 && f[0] == "done":
				i, _ := strconv.Atoi(f[1])
				if o, ok := parseOutcome(f[2]); ok {
					end.finished = i
					counts[o]++
				}
			case len(f) == 1 && f[0] == "end":
				end.complete = true
			}
		case sig := <-sigs:
			if got == nil {
				got = sig
				kill = time.After(killGrace)
			}
			cmd.Process.Signal(sig)
		case <-kill:
			cmd.Process.Kill()
		case <-overdue:
			if got != nil {
				continue // a signal is ending the process already
			}
			if end.output.writingFor() > 0 {
				// Our stdout is not being read (a paused pager, a slow
				// console): the case process may be blocked writing its
				// results into a full pipe, not hung. The reader, not
				// the case, holds it: look again a grace later.
				overdueTimer.Reset(caseKillGrace)
				continue
			}
			end.killed = killOverdue(pid, end.started > end.finished, time.Since(since))
			gone = time.After(deathWait)
		case <-gone:
			// Still not dead (a freezer holds the kill): go on without
			// it. Its stdout is shared, but a task killed while frozen
			// dies when thawed without running again.
			end.killed += fmt.Sprintf("; it did not die within %v of the SIGKILL (pid %d left to die when thawed)", deathWait, pid)
			go cmd.Wait()
			end.status = "killed by the supervisor, not reaped"
			return end, nil
		}
	}
	err = cmd.Wait()
	// A case process killed while it held a changed sysctl: restore it now.
	if perr := fixture.PruneSysctls(); perr != nil {
		fmt.Fprintf(os.Stderr, "%v\n", perr)
	}
	end.status = "exit status 0"
	if cmd.ProcessState != nil {
		end.status = cmd.ProcessState.String()
	} else if err != nil {
		end.status = err.Error()
	}
	// Why it died, if it crashed: the crash report's reason (a panic's
	// message; a runtime throw prints its reason before the report starts,
	// on stderr only), and a pids.max that refused a fork or thread
	// meanwhile, by the kernel's count.
	var why []string
	if ws, ok := processStatus(cmd); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL && end.killed == "" && got == nil {
		if r := oomWatch.Killed(); r != "" {
			why = append(why, r)
		}
	}
	select {
	case b := <-crash:
		if c, ok := procfail.Crash(b); ok {
			why = append(why, "its Go runtime crashed: "+c)
		} else if len(bytes.TrimSpace(b)) > 0 {
			why = append(why, "its Go runtime crashed (the reason is on stderr)")
		}
	case <-time.After(time.Second): // a grandchild holds the pipe: no report
	}
	if r := procfail.RefusedSince(pids); r != "" {
		why = append(why, r)
	}
	end.crash = strings.Join(why, "; ")
	return end, got
}

// processStatus is cmd's wait status, once it was waited for.
func processStatus(cmd *exec.Cmd) (syscall.WaitStatus, bool) {
	if cmd.ProcessState == nil {
		return 0, false
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ws, ok
}

// killOverdue SIGKILLs case process pid, silent for silent (inCase: while
// a case ran, else between cases), and says why and what it was doing.
func killOverdue(pid int, inCase bool, silent time.Duration) string {
	st := readProcState(pid)
	why := fmt.Sprintf("no result %.1f s after the case started (deadline %s s + %s s grace): %v; the supervisor killed it (SIGKILL)",
		silent.Seconds(), seconds(Opts.Timeout), seconds(caseKillGrace), st)
	if !inCase {
		why = fmt.Sprintf("the case process was silent for %.1f s between cases (deadline %s s + %s s grace): %v; the supervisor killed it (SIGKILL)",
			silent.Seconds(), seconds(Opts.Timeout), seconds(caseKillGrace), st)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if st.frozenV1 != "" {
		// A cgroup v1 freezer holds the SIGKILL until the task thaws.
		if err := thawForKill(pid); err != nil {
			why += fmt.Sprintf(" (it stays frozen: %v)", err)
		} else {
			why += " and moved it out of the frozen cgroup so that the kill takes effect"
		}
	}
	return why
}
