// Package runner drives the fsnsuite test binaries: it runs each one (in
// parallel where allowed, perf binaries alone and last) under a deadline that
// kills its whole process group, judges it from its TAP stream and exit code,
// merges every stream into one TAP stream, keeps logs and reports in a results
// directory, and sums the run up.
package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/internal/oom"
	"github.com/fsnsuite/fsnsuite/harness/leftover"
	"github.com/fsnsuite/fsnsuite/tap"
)

// Options configure a run.
type Options struct {
	// Timeout bounds each binary's run time (0: no limit). On expiry the
	// binary's process group gets SIGTERM, then SIGKILL after KillGrace.
	Timeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL (default 5s).
	KillGrace time.Duration
	// Jobs is how many non-perf binaries run at once (default 1).
	Jobs int
	// PassArgs go to every binary before its own Args.
	PassArgs []string
	// PerfArgs go to perf_* binaries only, after PassArgs.
	PerfArgs []string
	// Format is the dialect of the merged stream (the binaries' dialect is
	// chosen by a -format flag in PassArgs).
	Format tap.Format
	// Strict makes a skipped binary a failure.
	Strict bool
	// ResultsDir receives logs/, results.tap, results.json, junit.xml and
	// summary.txt. Empty: nothing is written to disk. It must be the
	// caller's (made if missing; refused if another user's, writable by
	// group or others, or a symlink), and nothing in it is followed
	// through a symlink (resdir.go).
	ResultsDir string
	// ShownResultsDir, when set, is the name the summary gives the results
	// directory in the commands it suggests (a guest's /results is the
	// host's VM_RESULTS once copied back).
	ShownResultsDir string
	// Out receives the merged TAP stream.
	Out io.Writer
	// Progress receives the progress view (nil: none).
	Progress io.Writer
	// Live redraws the progress view in place with terminal escape codes.
	Live bool
	// Screen is the terminal the live progress view is drawn on (the
	// caller closes it after Run; Progress and Live are not used then).
	// When stdout and stderr are one terminal, Out (and Log) write to it
	// too and the view stays below the TAP stream; otherwise (stdout
	// redirected) a line per finished binary is printed above the view, and
	// Log should write to it.
	Screen *Screen
	// Colour paints the verdicts of the progress view (a terminal's).
	Colour bool
	// Suite names the run in the JUnit report (default "fsnsuite").
	Suite string
	// Log receives the runner's own messages (a results directory that
	// stopped taking writes), once each. Nil: none.
	Log io.Writer
	// Lister names a binary's cases when its stream ends early, so that the
	// runner can close its block with every case named (default ListCases).
	Lister Lister
	// AfterBinary, when set, is called after each binary ends, with its
	// position in the run order (a gcov kernel's counters snapshot per
	// binary: FSNSUITE_GCOV_SNAPSHOTS). With Jobs 1 nothing else runs
	// between two calls.
	AfterBinary func(pos int, b Binary)

	errs *writeErrors
	res  *resultsDir // ResultsDir, open
	// binaryAdj is the oom_score_adj each binary is given (oom.BinaryStep
	// above the runner's starting value), hasAdj whether it was read.
	binaryAdj int
	hasAdj    bool
}

// runnerOOMAdj lowers this process's oom_score_adj by oom.RunnerStep,
// once (it needs CAP_SYS_RESOURCE; without it the runner keeps its value),
// and returns the value binaries get: oom.BinaryStep above where the runner
// started.
var runnerOOMAdj = sync.OnceValues(func() (int, bool) {
	adj, err := oom.Adj(0)
	if err != nil {
		return 0, false
	}
	_ = oom.SetAdj(0, adj-oom.RunnerStep)
	return adj + oom.BinaryStep, true
})

// watchOOM reads the OOM killer's count a binary's SIGKILL is checked
// against (a test stands in for the kernel).
var watchOOM = func() oom.Watch { return oom.WatchKills(0) }

// Outcome is what became of one binary.
type Outcome struct {
	Binary Binary
	// Node is the binary's block in the merged tree: its result line's
	// verdict, and the parsed stream's cases as children.
	Node *tap.Node
	// Stream is the binary's own stream, parsed.
	Stream *tap.Node
	// ExitCode is the exit status, or -1 if it was killed by a signal or not run.
	ExitCode int
	// Signal names the signal that killed it, if any.
	Signal string
	// Caught is the signal the binary caught and reported stopping its
	// case with (it then exited 128+N), "" when none.
	Caught string
	// OOMKilled says the binary died of SIGKILL while the OOM killer's
	// count in its memory cgroup rose ("killed by the OOM killer (oom_kill
	// 3 -> 4 in ...)"), "" otherwise.
	OOMKilled string
	// TimedOut, Interrupted and StartErr say why it did not finish on its own.
	TimedOut    bool
	Interrupted bool
	StartErr    error
	// Broken marks an outcome that is not a plain test failure (LTP TBROK):
	// timeout, crash, signal, unknown exit status, truncated stream.
	Broken bool
	// Notes are the runner's diagnostics about the binary (exit status,
	// stream problems, stderr tail), printed before its result line.
	Notes   []string
	Elapsed time.Duration
	Stdout  []byte
	Stderr  []byte
	// Closing are the lines the runner added to the binary's stream to
	// close it after it ended early (see closingLines); part of Stream.
	Closing []string
}

// Report is a whole run.
type Report struct {
	// Root is the merged tree: one child per binary, as in the merged stream.
	Root        *tap.Node
	Outcomes    []*Outcome
	Interrupted bool
	Elapsed     time.Duration
	ResultsDir  string
	// WriteErr is the first write to the results directory that failed (a
	// full or failing disk): the run went on, its files are incomplete.
	WriteErr error
	// StdoutErr is the first write of the merged stream to Options.Out that
	// failed (a full disk, a reader that went away: fsnsuite | head): the
	// stream there is incomplete; the results directory has it whole.
	StdoutErr error
	// Info is where and when the run happened (run.json).
	Info RunInfo
}

// Run runs bins (perf_* binaries alone, after all others) and returns the
// report. The merged stream is written to opt.Out as binaries finish, in
// their order. The error is for the run itself (an unwritable results
// directory); failing tests are in the report.
func Run(ctx context.Context, bins []Binary, opt Options) (*Report, error) {
	if opt.Jobs < 1 {
		opt.Jobs = 1
	}
	if opt.KillGrace <= 0 {
		opt.KillGrace = 5 * time.Second
	}
	if opt.Suite == "" {
		opt.Suite = "fsnsuite"
	}
	if opt.Out == nil {
		opt.Out = io.Discard
	}
	if opt.Lister == nil {
		opt.Lister = ListCases
	}
	bins = Order(bins)
	// Under memory pressure the runner, which holds the results, is the last
	// to go: it lowers its own oom_score_adj where it may, and starts each
	// binary well above where it started (the binary puts its case process
	// higher still).
	opt.binaryAdj, opt.hasAdj = runnerOOMAdj()
	start := time.Now()
	rep := &Report{ResultsDir: opt.ResultsDir}
	if opt.ShownResultsDir != "" {
		rep.ResultsDir = opt.ShownResultsDir
	}
	errs := &writeErrors{log: opt.Log, resultsDir: opt.ResultsDir}
	opt.errs = errs
	out := io.Writer(newStdoutSink(opt.Out, errs))
	var tapFile *os.File
	if opt.ResultsDir != "" {
		// Only the caller's directory, every file in it made without
		// following a symlink (resdir.go).
		res, err := openResultsDir(opt.ResultsDir)
		if err != nil {
			return nil, err
		}
		defer res.close()
		opt.res = res
		f, err := create(res.dir, "results.tap")
		if err != nil {
			return nil, fmt.Errorf("creating merged tap file: %w", err)
		}
		defer f.Close()
		tapFile = f
		out = io.MultiWriter(out, newSink(f, filepath.Join(opt.ResultsDir, "results.tap"), errs))
	}

	m := newMerger(tap.NewWriter(out, opt.Format), opt.Format, bins)
	m.w.Version()
	m.w.Plan(len(bins))
	prog := newProgress(opt, bins)
	prog.start()

	var perf, other []int
	for i, b := range bins {
		if b.IsPerf() {
			perf = append(perf, i)
		} else {
			other = append(other, i)
		}
	}
	runBatch := func(idx []int, jobs int) {
		work := make(chan int)
		var wg sync.WaitGroup
		for range min(jobs, max(len(idx), 1)) {
			wg.Go(func() {
				for i := range work {
					var o *Outcome
					if ctx.Err() != nil {
						o = &Outcome{Binary: bins[i], ExitCode: -1, Interrupted: true}
					} else {
						prog.running(i)
						o = runOne(ctx, bins[i], opt, prog.counter(i), m.stream(i))
						if opt.AfterBinary != nil {
							opt.AfterBinary(i, bins[i])
						}
					}
					closeEarlyEnd(ctx, o, opt)
					judge(o, opt.Timeout, opt.Strict, opt.args(bins[i]))
					prog.done(i, o)
					m.finish(i, o)
				}
			})
		}
		for _, i := range idx {
			work <- i
		}
		close(work)
		wg.Wait()
	}
	runBatch(other, opt.Jobs)
	runBatch(perf, 1) // perf binaries never share the machine
	prog.stop()
	leftover.Clear(0, opt.Log) // and what any binary killed meanwhile left

	rep.Outcomes = m.outcomes
	rep.Interrupted = ctx.Err() != nil
	rep.Elapsed = time.Since(start)
	rep.Root = &tap.Node{Version: versionLine(opt.Format), Plan: len(bins), Duration: rep.Elapsed}
	rep.Info = hostInfo(opt.Suite, start, rep.Elapsed)
	for i, o := range m.outcomes {
		o.Node.Number = i + 1
		rep.Root.Children = append(rep.Root.Children, o.Node)
	}
	if rep.Root.Failed() || rep.Interrupted {
		rep.Root.Status = tap.StatusFail
	}
	if tapFile != nil {
		if err := tapFile.Sync(); err != nil {
			errs.add(tapFile.Name(), "writing "+tapFile.Name(), err)
		}
		if err := tapFile.Close(); err != nil {
			errs.add(tapFile.Name(), "closing "+tapFile.Name(), err)
		}
	}
	if opt.res != nil {
		rep.writeFiles(opt.res, opt.Suite, errs)
	}
	rep.WriteErr, rep.StdoutErr = errs.errs()
	return rep, nil
}

func versionLine(f tap.Format) string {
	if f == tap.KTAP {
		return "KTAP version 1"
	}
	return "TAP version 13"
}

// writeFiles writes the files made at the end of a run, each whole or not
// at all (replace: a temp file renamed over its name). One that cannot be
// written is reported (errs) and the others are still written.
func (r *Report) writeFiles(res *resultsDir, suite string, errs *writeErrors) {
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"results.json", func(w io.Writer) error { return tap.WriteJSON(w, r.Root) }},
		{"junit.xml", func(w io.Writer) error { return tap.WriteJUnit(w, r.Root, suite) }},
		{"run.json", func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(r.Info)
		}},
		{"lava.txt", func(w io.Writer) error { return WriteLAVA(w, r.Root) }},
		{"summary.txt", func(w io.Writer) error { r.WriteSummaryFile(w); return nil }},
	} {
		if err := replace(res.dir, f.name, f.write); err != nil {
			errs.add(filepath.Join(res.path, f.name), "results directory", err)
		}
	}
}

// args are the arguments b runs with.
func (opt Options) args(b Binary) []string {
	if b.Verbatim {
		return append([]string(nil), b.Args...)
	}
	args := append([]string(nil), opt.PassArgs...)
	if b.IsPerf() {
		args = append(args, opt.PerfArgs...)
	}
	return append(args, b.Args...)
}

// closeEarlyEnd fills o.Closing when b's stream ended before every case was
// reported (a timeout, a signal, a crash, an interrupt): the cases it did not
// report, by name (from the Lister), the one it was in marked not ok with
// why, the others skipped as not run.
func closeEarlyEnd(ctx context.Context, o *Outcome, opt Options) {
	if o.StartErr != nil {
		return
	}
	st := tap.ParseString(string(o.Stdout))
	missing := st.Plan < 0 || st.Counts()[tap.StatusMissing] > 0
	if !missing && !o.TimedOut && o.Signal == "" && !o.Interrupted {
		return
	}
	cases, err := opt.Lister(context.WithoutCancel(ctx), o.Binary, opt.args(o.Binary))
	if err != nil {
		o.Notes = append(o.Notes, fmt.Sprintf("%s: cannot name the cases it did not report: %v", o.Binary.Name, err))
		return
	}
	name := o.Binary.Name
	var killed, why string
	switch {
	case o.TimedOut:
		killed, why = fmt.Sprintf("%s killed by the runner after %s seconds (-timeout)", name, seconds(opt.Timeout)), string(tap.Timeout)
	case o.Interrupted && o.Elapsed == 0:
		killed = "the run was interrupted before " + name + " started"
	case o.Interrupted:
		killed, why = fmt.Sprintf("%s stopped: the run was interrupted", name), "FAIL"
	case o.OOMKilled != "":
		killed, why = name+" "+o.OOMKilled, "FAIL"
	case o.Signal != "":
		killed, why = fmt.Sprintf("%s killed by signal %s", name, o.Signal), "FAIL"
	default:
		killed, why = fmt.Sprintf("%s exited with status %d before reporting it", name, o.ExitCode), "FAIL"
		// A signal from elsewhere that the binary caught: its exit
		// status (128+N) only mimics a death by signal; its own word
		// names the signal.
		if _, sig := stoppedBySignal(st); sig != "" {
			killed, o.Caught = name+" "+tap.StoppedBySignal+sig, sig
		}
	}
	o.Closing = closingLines(st, cases, killed, why)
}

// interruptGrace is how long an interrupted binary has to stop its case
// and report it, after a SIGTERM to it alone, before the rest of its
// process tree gets one too.
const interruptGrace = 2 * time.Second

// runOne runs b to completion, to its deadline, or to ctx's end.
func runOne(ctx context.Context, b Binary, opt Options, live ...io.Writer) *Outcome {
	o := &Outcome{Binary: b, ExitCode: -1}
	if b.Skip != "" {
		// Not run: its stream is a skip with the reason, as a binary
		// that skips everything would print it.
		o.Stdout, o.ExitCode = []byte("1..0 # SKIP "+b.Skip+"\n"), exitKselfSkip
		for _, w := range live {
			if w != nil {
				_, _ = w.Write(o.Stdout)
			}
		}
		return o
	}
	cmd := exec.Command(b.Path, opt.args(b)...)
	// The binary dies with the runner, even a SIGKILLed one (its own
	// children, the namespaced re-exec and the actors, die with it in turn).
	// The parent-death signal fires when the forking thread exits: keep this
	// goroutine on its thread until the binary is reaped.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var stdout, stderr bytes.Buffer
	outW, errW := io.Writer(&stdout), io.Writer(&stderr)
	for _, w := range live {
		if w != nil {
			outW = io.MultiWriter(outW, w)
		}
	}
	if opt.res != nil {
		for _, l := range []struct {
			w    *io.Writer
			name string
		}{{&outW, b.Name + ".stdout"}, {&errW, b.Name + ".stderr"}} {
			f, err := create(opt.res.logs, l.name)
			if err != nil {
				opt.errs.add(filepath.Join(opt.res.logs.Name(), l.name), "creating a log", err)
				continue
			}
			defer f.Close()
			*l.w = io.MultiWriter(*l.w, newSink(f, f.Name(), opt.errs))
		}
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	// A grandchild that keeps the pipes open must not hold the runner long
	// after the binary itself ended.
	cmd.WaitDelay = 2 * time.Second

	if opt.hasAdj {
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", oom.EnvAdj, opt.binaryAdj))
	}
	oomWatch := watchOOM()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		o.StartErr = fmt.Errorf("starting %s: %w", b.Path, err)
		return o
	}
	if opt.hasAdj {
		// Our binaries set it on themselves from the environment before
		// they fork; this covers any other binary of a runtest file.
		_ = oom.Raise(cmd.Process.Pid, opt.binaryAdj)
	}
	pgid := cmd.Process.Pid
	var deadline <-chan time.Time
	if opt.Timeout > 0 {
		t := time.NewTimer(opt.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	exited := make(chan struct{})
	watcherDone := make(chan struct{})
	var mu sync.Mutex
	go func() {
		defer close(watcherDone)
		select {
		case <-exited:
			return
		case <-deadline:
			mu.Lock()
			o.TimedOut = true
			mu.Unlock()
		case <-ctx.Done():
			mu.Lock()
			o.Interrupted = true
			mu.Unlock()
			// The binary first, alone: our harness then stops its case
			// and reports it stopped before it kills the case's actors.
			// Signalled together, an actor's death could be reported
			// first, as the case's failure ("actor process is gone").
			_ = syscall.Kill(pgid, syscall.SIGTERM)
			select {
			case <-exited:
				return
			case <-time.After(min(interruptGrace, opt.KillGrace/2)):
			}
		}
		killTree(pgid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(opt.KillGrace):
			killTree(pgid, syscall.SIGKILL)
		}
	}()
	err := cmd.Wait()
	close(exited)
	<-watcherDone // after this, nothing else writes o
	// Nothing of the binary may outlive it: kill what is left of its group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	leftover.AfterExit(cmd.ProcessState, pgid, opt.Log) // what a killed binary changed
	mu.Lock()
	defer mu.Unlock()
	o.Elapsed = time.Since(start)
	o.Stdout, o.Stderr = stdout.Bytes(), stderr.Bytes()
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.Signal = ws.Signal().String()
			if ws.Signal() == syscall.SIGKILL && !o.TimedOut && !o.Interrupted {
				o.OOMKilled = oomWatch.Killed()
			}
		} else {
			o.ExitCode = ps.ExitCode()
		}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && !errors.Is(err, exec.ErrWaitDelay) {
		o.StartErr = fmt.Errorf("waiting for %s: %w", b.Path, err)
	}
	return o
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}
