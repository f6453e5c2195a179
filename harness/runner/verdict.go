package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/envfault"
	"github.com/fsnsuite/fsnsuite/harness/exitcode"
	"github.com/fsnsuite/fsnsuite/harness/internal/procfail"
	"github.com/fsnsuite/fsnsuite/tap"
)

// Exit statuses of the binaries (and of the runner), by convention: the one
// table is harness/exitcode.
const (
	exitPass      = exitcode.Pass
	exitFail      = exitcode.Fail
	exitLTPBroken = exitcode.LTPBroken
	exitKselfSkip = exitcode.KselftestSkip
	exitLTPSkip   = exitcode.LTPSkip
)

// stderrTail is how many stderr lines a failing binary's result quotes.
const stderrTail = 10

// judge parses o's stream and decides o.Node: the exit status and the stream
// must agree, and anything truncated, killed or inconsistent is a failure.
func judge(o *Outcome, timeout time.Duration, strict bool, args []string) {
	stream := string(o.Stdout)
	if len(o.Closing) > 0 {
		if stream != "" && !strings.HasSuffix(stream, "\n") {
			stream += "\n"
		}
		stream += strings.Join(o.Closing, "\n") + "\n"
	}
	st := tap.ParseString(stream)
	o.Stream = st
	n := &tap.Node{
		Name: o.Binary.Name, Status: tap.StatusFail, Plan: st.Plan, SkipAll: st.SkipAll,
		BailOut: st.BailOut, Problems: st.Problems, Children: st.Children,
		Version: st.Version, Duration: o.Elapsed,
	}
	o.Node = n
	note := func(format string, args ...any) {
		o.Notes = append(o.Notes, o.Binary.Name+": "+fmt.Sprintf(format, args...))
	}
	counts := st.Counts()
	leaves := 0
	for _, c := range counts {
		leaves += c
	}
	// A case that failed before its subtests ran (its leaves skipped as not
	// run) failed too, though no leaf did.
	failedCases := counts[tap.StatusFail] + counts[tap.StatusTimeout] + counts[tap.StatusError] + counts[tap.StatusMissing] + failedAbove(st)
	envFaults, firstFault := environmentFaults(st)
	// A binary that never ran has no stream to complain about.
	ran := o.StartErr == nil && !(o.Interrupted && o.Elapsed == 0)
	if ran && st.BailOut != "" {
		note("bailed out: %s", st.BailOut)
	}
	for _, p := range st.Problems {
		if ran {
			note("%s", p)
		}
	}
	streamBroken := st.BailOut != "" || len(st.Problems) > 0 || counts[tap.StatusMissing] > 0
	// "1..0" with no reason: the program ran nothing and did not say why.
	// That is never a pass; with our -run filter it means no case matched.
	emptyPlan := st.Plan == 0 && st.SkipAll == "" && leaves == 0
	emptyReason := "ran no test (plan 1..0 without a reason)"
	if re := flagValue(args, "run"); re != "" {
		emptyReason = fmt.Sprintf("no case matches -run %s", re)
	}

	switch {
	case o.StartErr != nil:
		o.Broken = true
		note("%v", o.StartErr)
	case o.TimedOut:
		o.Broken = true
		n.Status, n.Directive, n.Reason = tap.StatusTimeout, tap.Timeout, seconds(timeout)+" seconds"
		note("killed after %s seconds (-timeout)", seconds(timeout))
	case o.Interrupted:
		o.Broken = true
		if o.Elapsed == 0 {
			note("not run: interrupted")
		} else {
			note("interrupted after %.1fs", o.Elapsed.Seconds())
		}
	case o.OOMKilled != "":
		o.Broken = true
		note("%s", o.OOMKilled)
	case o.Signal != "":
		o.Broken = true
		note("killed by signal %s", o.Signal)
	case o.ExitCode == exitPass:
		switch {
		case streamBroken:
			o.Broken = true
			note("exit status 0 but the stream is incomplete")
		case failedCases > 0:
			note("exit status 0 but %d case(s) failed", failedCases)
		case st.SkipAll != "":
			n.Status, n.Directive, n.Reason = tap.StatusSkip, tap.Skip, st.SkipAll
		case emptyPlan:
			n.Status, n.Directive, n.Reason = tap.StatusSkip, tap.Skip, emptyReason
		default:
			n.Status = tap.StatusPass
		}
	case o.ExitCode == exitKselfSkip || o.ExitCode == exitLTPSkip:
		switch {
		case streamBroken:
			o.Broken = true
			note("exit status %d (all skipped) but the stream is incomplete", o.ExitCode)
		case failedCases > 0:
			note("exit status %d (all skipped) but %d case(s) failed", o.ExitCode, failedCases)
		case st.SkipAll != "":
			n.Status, n.Directive, n.Reason = tap.StatusSkip, tap.Skip, st.SkipAll
		case leaves > 0 && counts[tap.StatusSkip] == leaves:
			n.Status, n.Directive, n.Reason = tap.StatusSkip, tap.Skip, skipReason(st, leaves)
		case emptyPlan:
			n.Status, n.Directive, n.Reason = tap.StatusSkip, tap.Skip, emptyReason
		default:
			note("exit status %d (all skipped) but %d of %d cases were not skipped", o.ExitCode, leaves-counts[tap.StatusSkip], leaves)
		}
	case o.ExitCode == exitFail:
		if streamBroken {
			o.Broken = true
		}
		if failedCases == 0 && !streamBroken {
			note("exit status 1 although no case failed")
		}
	case o.ExitCode == exitLTPBroken && envFaults > 0 && failedCases == 0 && !streamBroken:
		// -exit ltp: the binary's TBROK for cases an environment fault
		// skipped (harness/envfault), which the stream shows as skips.
		// Its status is the skips' and passes', as with kselftest's
		// statuses; ExitCode counts it broken.
		switch {
		case st.SkipAll != "":
			n.Status, n.Directive, n.Reason = tap.StatusSkip, tap.Skip, st.SkipAll
		case counts[tap.StatusSkip] == leaves:
			n.Status, n.Directive, n.Reason = tap.StatusSkip, tap.Skip, skipReason(st, leaves)
		default:
			n.Status = tap.StatusPass
		}
	case o.ExitCode == exitLTPBroken:
		o.Broken = true
		note("exit status 2 (broken)")
	default:
		o.Broken = true
		if o.Caught != "" {
			note("%s%s (exit status %d)", tap.StoppedBySignal, o.Caught, o.ExitCode)
		} else {
			note("exit status %d", o.ExitCode)
		}
	}
	if envFaults > 0 {
		note("%d case(s) skipped for an environment fault (the machine, not the kernel; first: %s)", envFaults, strings.TrimPrefix(firstFault, envfault.Marker))
	}
	if strict && n.Status == tap.StatusSkip {
		note("strict mode: skipped: %s", n.Reason)
		n.Status, n.Directive, n.Reason = tap.StatusFail, tap.NoDirective, ""
	}
	if n.Status.Failed() {
		// A Go runtime crash prints its reason first and the stacks after
		// it: a tail of stacks does not show it.
		tail := lastLines(string(o.Stderr), stderrTail)
		if c, ok := procfail.Crash(o.Stderr); ok {
			fatal := c
			if i := strings.LastIndex(c, " | "); i >= 0 {
				fatal = c[i+len(" | "):]
			}
			if !strings.Contains(strings.Join(tail, "\n"), fatal) {
				note("its Go runtime crashed: %s", c)
			}
			if procfail.IsEAGAIN(nil, o.Stderr) {
				note("%s", procfail.PidsHint())
			}
		}
		if len(tail) > 0 {
			note("last %d line(s) of stderr:", len(tail))
			for _, l := range tail {
				o.Notes = append(o.Notes, "  "+l)
			}
		}
	}
	// The notes quote the binary's stderr: escaped as its stream was.
	for i := range o.Notes {
		o.Notes[i] = tap.Escape(o.Notes[i])
	}
	n.Diagnostics = append(append([]string(nil), st.Diagnostics...), o.Notes...)
}

// environmentFaults counts the leaves of st skipped for an environment fault
// (a reason beginning with envfault.Marker) and returns the first reason.
func environmentFaults(st *tap.Node) (int, string) {
	n, first := 0, ""
	st.Walk(func(_ []string, l *tap.Node) {
		if l.Status == tap.StatusSkip && envfault.IsReason(l.Reason) {
			if n == 0 {
				first = l.Reason
			}
			n++
		}
	})
	return n, first
}

// failedAbove counts the nodes below st that failed although no leaf below
// them did: a case that failed before running its subtests, which the
// harness reports with each of them skipped as not run.
func failedAbove(st *tap.Node) int {
	n := 0
	var walk func(*tap.Node)
	walk = func(p *tap.Node) {
		for _, c := range p.Children {
			if len(c.Children) == 0 {
				continue
			}
			leafFailed := false
			c.Walk(func(_ []string, l *tap.Node) { leafFailed = leafFailed || l.Status.Failed() })
			if c.Status.Failed() && !leafFailed {
				n++
				continue
			}
			walk(c)
		}
	}
	walk(st)
	return n
}

// flagValue returns the value of the last -name (or --name) flag in args, in
// either "-name value" or "-name=value" form.
func flagValue(args []string, name string) string {
	v := ""
	for i, a := range args {
		a = strings.TrimPrefix(a, "-")
		a = strings.TrimPrefix(a, "-")
		switch {
		case a == name && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(a, name+"="):
			v = strings.TrimPrefix(a, name+"=")
		}
	}
	return v
}

// skipReason names why every case of a stream was skipped: the one reason
// they share, or the first one and how many there were.
func skipReason(st *tap.Node, leaves int) string {
	var reasons []string
	seen := map[string]bool{}
	st.Walk(func(_ []string, l *tap.Node) {
		if !seen[l.Reason] {
			seen[l.Reason] = true
			reasons = append(reasons, l.Reason)
		}
	})
	if len(reasons) == 1 && reasons[0] != "" {
		return reasons[0]
	}
	return fmt.Sprintf("all %d cases skipped (first: %s)", leaves, reasons[0])
}

func lastLines(s string, n int) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// ExitCode is the run's exit status. kselftest convention (ltp false): 0 all
// passed, 1 anything failed (or the run was interrupted), 4 every binary
// skipped (a case an environment fault skipped counts as skipped). LTP
// convention: 1 for a failure, 2 for a broken binary (timeout, crash,
// truncated stream, or a binary with no failure whose cases an environment
// fault skipped: harness/envfault), both or'ed together, 32 when everything
// skipped.
func (r *Report) ExitCode(ltp bool) int {
	var failed, broken bool
	skipped := 0
	for _, o := range r.Outcomes {
		switch {
		case o.Node.Status.Failed() && o.Broken:
			broken = true
		case o.Node.Status.Failed():
			failed = true
		default:
			if n, _ := environmentFaults(o.Node); n > 0 && ltp {
				broken = true
				continue
			}
			if o.Node.Status == tap.StatusSkip {
				skipped++
			}
		}
	}
	if r.Interrupted {
		broken = true
	}
	if !ltp {
		switch {
		case failed || broken:
			return exitFail
		case len(r.Outcomes) > 0 && skipped == len(r.Outcomes):
			return exitKselfSkip
		}
		return exitPass
	}
	code := exitPass
	if failed {
		code |= exitFail
	}
	if broken {
		code |= exitLTPBroken
	}
	if code == exitPass && len(r.Outcomes) > 0 && skipped == len(r.Outcomes) {
		code = exitLTPSkip
	}
	return code
}
