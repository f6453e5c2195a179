package runner

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/perf"
	"github.com/fsnsuite/fsnsuite/tap"
)

// WriteSummary prints the totals, every failed case (with its first
// diagnostics) and every skip with its reason.
func (r *Report) WriteSummary(w io.Writer) {
	var bPass, bFail, bSkip, reported int
	cases := map[tap.Status]int{}
	for _, o := range r.Outcomes {
		switch {
		case o.Node.Status.Failed():
			bFail++
		case o.Node.Status == tap.StatusSkip:
			bSkip++
		default:
			bPass++
		}
		for s, n := range o.Stream.Counts() {
			cases[s] += n
		}
		o.Stream.Walk(func(_ []string, l *tap.Node) {
			if l.Status == tap.StatusPass && reportedOnly(l) {
				reported++
			}
		})
	}
	noun := "binaries"
	if len(r.Outcomes) == 1 {
		noun = "binary"
	}
	fmt.Fprintf(w, "\nfsnsuite: %d %s: %d passed, %d failed, %d skipped in %s\n",
		len(r.Outcomes), noun, bPass, bFail, bSkip, r.Elapsed.Round(100*time.Millisecond))
	var parts []string
	// A perf measurement without a gate passes without a threshold having held:
	// it is counted apart ("reported only"), not as a pass.
	cases[tap.StatusPass] -= reported
	for s := tap.StatusPass; s <= tap.StatusMissing; s++ {
		if cases[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", cases[s], s))
		}
		if s == tap.StatusPass && reported > 0 {
			parts = append(parts, fmt.Sprintf("%d reported only (not gated)", reported))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none reported")
	}
	fmt.Fprintf(w, "cases: %s\n", strings.Join(parts, ", "))
	if r.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: the run did not finish")
	}

	var failed, skipped []string
	for _, o := range r.Outcomes {
		name := o.Binary.Name
		leafFailed := false
		o.Stream.Walk(func(path []string, l *tap.Node) {
			full := name + "/" + strings.Join(path, "/")
			switch {
			case l.Status.Failed():
				leafFailed = true
				s := fmt.Sprintf("  %s: %s", full, describe(l))
				for i, d := range l.Diagnostics {
					if i == 3 {
						s += fmt.Sprintf("\n      ... (%d more lines in the log)", len(l.Diagnostics)-3)
						break
					}
					s += "\n      " + d
				}
				failed = append(failed, s)
			case l.Status == tap.StatusSkip:
				skipped = append(skipped, fmt.Sprintf("  %s: %s", full, orNone(l.Reason)))
			}
		})
		switch {
		case o.Node.Status.Failed():
			s := fmt.Sprintf("  %s: %s", name, describe(o.Node))
			for _, d := range o.Notes {
				s += "\n      " + d
			}
			if !leafFailed || len(o.Notes) > 0 {
				failed = append(failed, s)
			}
		case o.Node.Status == tap.StatusSkip && len(o.Stream.Children) == 0:
			skipped = append(skipped, fmt.Sprintf("  %s: %s", name, orNone(o.Node.Reason)))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "failed (%d):\n%s\n", len(failed), strings.Join(failed, "\n"))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "skipped (%d):\n%s\n", len(skipped), strings.Join(skipped, "\n"))
	}
	if r.ResultsDir != "" {
		fmt.Fprintf(w, "results: %s\n", r.ResultsDir)
	}
}

// reportedOnly reports whether a case's diagnostics carry the perf engine's
// marker of a measurement that no threshold decides (perf.ReportedMarker,
// documented in harness/perf/README.md).
func reportedOnly(n *tap.Node) bool {
	for _, d := range n.Diagnostics {
		if strings.HasPrefix(d, perf.ReportedMarker) {
			return true
		}
	}
	return false
}

func describe(n *tap.Node) string {
	s := strings.ToUpper(n.Status.String())
	if n.Reason != "" {
		s += " " + n.Reason
	}
	return s
}

func orNone(reason string) string {
	if reason == "" {
		return "(no reason given)"
	}
	return reason
}

// WriteLTPSummary writes the run's case counts in LTP's end-of-run shape, which
// kirk reads from a test's output: passed, failed (a failed leaf), broken (a
// leaf that timed out, errored or never reported, or a binary that broke
// without a failed leaf) and skipped. Call it after the merged stream.
func (r *Report) WriteLTPSummary(w io.Writer) {
	var passed, failed, broken, skipped int
	for _, o := range r.Outcomes {
		c := o.Stream.Counts()
		passed += c[tap.StatusPass] + c[tap.StatusXFail] + c[tap.StatusTodo]
		failed += c[tap.StatusFail]
		broken += c[tap.StatusTimeout] + c[tap.StatusError] + c[tap.StatusMissing]
		skipped += c[tap.StatusSkip]
		if len(o.Stream.Children) == 0 {
			switch {
			case o.Node.Status == tap.StatusSkip:
				skipped++
			case o.Node.Status.Failed():
				broken++
			}
		}
	}
	_ = tap.LTPSummary(w, passed, failed, broken, skipped, 0)
}
