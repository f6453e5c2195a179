package harness

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/tap"
)

type outcome int

const (
	passed outcome = iota
	failed
	skipped
	broken
)

type caseRunner struct {
	s      *Suite
	w      *tap.Writer
	ltp    bool
	counts [4]int
}

func newRunner(s *Suite, f tap.Format, ltp bool) *caseRunner {
	return &caseRunner{s: s, w: tap.NewWriter(os.Stdout, f), ltp: ltp}
}

func (r *caseRunner) runAll(sel []instance) int {
	r.w.Version()
	r.w.Plan(len(sel))
	if r.s.Doc != "" {
		r.w.Diagf("%s: %s", r.s.Name, r.s.Doc)
	}
	r.w.Diagf("kernel %s", feature.KernelRelease())

	var suiteSkip, suiteBroken string
	if !r.s.NoNamespace {
		if _, err := fixture.Workspace(); err != nil {
			suiteBroken = err.Error()
		}
	}
	if suiteBroken == "" {
		for _, f := range r.s.Needs {
			if err := f.Check(); err != nil {
				if feature.IsSkip(err) {
					suiteSkip = err.Error()
				} else {
					suiteBroken = err.Error()
				}
				break
			}
		}
	}

	timedOut := ""
	for _, in := range sel {
		switch {
		case timedOut != "":
			r.report(newInstanceT(in), in, skippedWith(fmt.Sprintf("not run: %s timed out before it", timedOut)))
		case suiteBroken != "":
			t := newInstanceT(in)
			t.Errorf("%s", suiteBroken)
			r.report(t, in, broken)
		case suiteSkip != "":
			r.report(newInstanceT(in), in, skippedWith(suiteSkip))
		default:
			if !r.runOne(in) {
				timedOut = in.name
			}
		}
	}
	if r.ltp {
		// kirk reads these counts from the output (LTP's own tests print
		// them), so a partly skipped binary shows its skips there.
		c := r.counts
		_ = tap.LTPSummary(os.Stdout, c[passed], c[failed]-c[broken], c[broken], c[skipped], 0)
	}
	return r.exitCode()
}

// skippedWith is a marker outcome with a reason, applied to a fresh T.
type skipMarker string

func skippedWith(reason string) skipMarker { return skipMarker(reason) }

func newInstanceT(in instance) *T {
	return &T{name: in.name, doc: in.c.Doc, fix: in.c.Fix, fsType: in.fs, declared: in.c.Subtests}
}

// runOne runs one case instance under its deadline. It returns false when the
// case timed out (the harness then stops running cases).
func (r *caseRunner) runOne(in instance) bool {
	t := newInstanceT(in)
	t.deadline = time.Now().Add(Opts.Timeout)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.runBody(func(t *T) {
			t.Require(in.c.Needs...)
			in.c.Run(t)
		})
	}()
	timer := time.NewTimer(time.Until(t.deadline))
	defer timer.Stop()
	select {
	case <-done:
		r.report(t, in, nil)
		return true
	case <-timer.C:
	}
	// The watchdog: release anything blocked on a permission event first,
	// then the actors, then report. The case goroutine is abandoned; the
	// process ends after the remaining cases are reported as not run.
	fanotify.CloseAll()
	actor.KillAll()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	t.mu.Lock()
	logs := append([]string(nil), t.logs...)
	t.mu.Unlock()
	if t.doc != "" {
		r.w.Diag(t.doc)
	}
	for _, l := range logs {
		r.w.Diag(l)
	}
	r.w.Diagf("%s: deadline of %v passed; fanotify groups closed, actors killed", in.name, Opts.Timeout)
	res := tap.Result{OK: false, Name: in.name, Directive: tap.Timeout, Reason: fmt.Sprintf("%d seconds", int(Opts.Timeout.Seconds()))}
	if len(in.c.Subtests) == 0 {
		r.w.Result(res)
	} else {
		// Keep the case's leaves: the subtests that finished as they
		// ended, the others skipped as not run.
		sw := r.w.Sub(in.name)
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
			sw.Result(tap.Result{OK: true, Name: name, Directive: tap.Skip, Reason: fmt.Sprintf("not run: %s timed out", in.name)})
		}
		r.w.EndSub(sw, res)
	}
	r.counts[failed]++
	return false
}

// report prints a finished T's diagnostics and result line. force, when not
// nil, overrides the T's own state (a skipMarker or the broken outcome).
func (r *caseRunner) report(t *T, in instance, force any) {
	switch v := force.(type) {
	case skipMarker:
		t.skipped, t.skipReason = true, string(v)
	case outcome:
		if v == broken {
			t.failed = true
			r.counts[broken]++
		}
	}
	o := writeT(r.w, t, in.fs)
	r.counts[o]++
}

// writeT writes t's block (subtests, diagnostics) and result line into w and
// returns the outcome it reported.
func writeT(w *tap.Writer, t *T, fsType string) outcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	res := tap.Result{OK: true, Name: t.name}
	o := passed
	switch {
	case t.failed:
		res.OK, o = false, failed
	case t.skipped && Opts.Strict:
		res.OK, o = false, failed
	case t.skipped:
		res.Directive, res.Reason, o = tap.Skip, t.skipReason, skipped
	}
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
		w.Diagf("strict: skip counted as failure: %s", t.skipReason)
	}
	if t.failed && t.fix != nil {
		w.Diag(t.fix.Hint())
	}
	subs := append(t.subs, t.unrunSubtests()...)
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

func (r *caseRunner) exitCode() int {
	total := r.counts[passed] + r.counts[failed] + r.counts[skipped]
	switch {
	case r.counts[broken] > 0 && r.ltp:
		return ltpBroken
	case r.counts[failed] > 0:
		return pick(r.ltp, ksftFail, ltpFail)
	case total == 0 || r.counts[skipped] == total:
		return pick(r.ltp, ksftSkip, ltpConf)
	}
	return pick(r.ltp, ksftPass, ltpPass)
}
