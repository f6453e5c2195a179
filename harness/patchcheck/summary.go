package patchcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/sharing"
)

// Verdict is the summary's first line.
func (r *Result) Verdict() string {
	switch {
	case r.Changed():
		return "BEHAVIOUR CHANGED"
	case r.Config.NoCorrectness && r.Explore == nil:
		return "not judged (the correctness step was not run)"
	case r.Config.NoCorrectness:
		return "no difference in the explorer's scenarios (the correctness step was not run)"
	case r.Correct == nil:
		return "UNDECIDED (a correctness run left no results)"
	}
	return "no difference"
}

// WriteText writes the plain-text summary, fit for a cover letter: the
// kernels, the verdict, the leaves that changed between pass and fail, the
// leaves failing on both (not caused by the patch), the explorer's count
// and differences, the cost table, the commands and the time of each step.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "fsnsuite patchcheck: %s\n", filepath.Base(c.Patch))
	for _, k := range []Kernel{c.Base, c.Patched} {
		fmt.Fprintf(&b, "  %-7s kernel %s (%s", k.Role, k.Release, k.Image)
		if k.BuildSeconds > 0 {
			fmt.Fprintf(&b, ", built in %.0fs", k.BuildSeconds)
		}
		b.WriteString(")\n")
	}
	fmt.Fprintf(&b, "\nVerdict: %s\n", r.Verdict())
	if why := r.brokenOnPatchedOnly(); why != "" {
		fmt.Fprintf(&b, "  the run broke on the patched kernel only: %s\n", why)
	}

	b.WriteString("\nCorrectness (every correctness binary on both kernels, leaf by leaf):\n")
	if d := r.Correct; c.NoCorrectness {
		b.WriteString("  not run (-steps)\n")
	} else if d == nil {
		b.WriteString("  no comparison: a run left no results (see the steps below)\n")
	} else {
		fmt.Fprintf(&b, "  %d pass -> fail, %d fail -> pass, %d fail on both (not caused by the patch), %d skip changes, %d the same\n",
			len(d.Regressions), len(d.Fixes), len(d.FailBoth), len(d.SkipChanged), d.Same)
		// Each leaf with the case's own statement, whole (the line to
		// paste into a reply), and its HINT lines below it.
		list := func(title string, cs []Change) {
			if len(cs) == 0 {
				return
			}
			fmt.Fprintf(&b, "  %s:\n", title)
			for _, ch := range cs {
				fmt.Fprintf(&b, "    %s -> %s %s", ch.Before, ch.After, ch.Path)
				if ch.Statement != "" {
					fmt.Fprintf(&b, ": %s", flat(ch.Statement))
				}
				b.WriteString("\n")
				if ch.StatementBefore != "" && ch.StatementBefore != ch.Statement {
					fmt.Fprintf(&b, "      on the base: %s\n", flat(ch.StatementBefore))
				}
				for _, h := range ch.Hints {
					fmt.Fprintf(&b, "      %s\n", flat(h))
				}
			}
		}
		cs := ChangesOf(d)
		list("changed by the patch (pass -> fail)", cs.PassToFail)
		list("changed by the patch (fail -> pass)", cs.FailToPass)
		list("failing on both kernels, not caused by the patch", cs.FailOnBoth)
	}

	if ex := r.Explore; ex != nil {
		fmt.Fprintf(&b, "\nExplorer (-n %d per filesystem recorded on the base, replayed on the patched kernel): %d differences\n", ex.Scenarios, len(ex.Differences))
		for _, s := range ex.Seeds {
			fmt.Fprintf(&b, "  %s\n", flat(s.String()))
		}
		if len(ex.Seeds) == 0 {
			for _, n := range ex.Notes {
				fmt.Fprintf(&b, "  %s\n", flat(n))
			}
		}
		// Every difference, whole, with its script (shrunk when the
		// explorer could shrink it) indented below it.
		for i, d := range ex.Differences {
			fmt.Fprintf(&b, "  difference %d of %d: %s\n", i+1, len(ex.Differences), flat(d.Statement))
			for _, l := range d.Script {
				fmt.Fprintf(&b, "      %s\n", strings.TrimRight(l, " "))
			}
		}
		for _, f := range ex.Failures {
			fmt.Fprintf(&b, "  the replay failed: %s: %s\n", f.Path, flat(f.Statement))
		}
		for _, f := range ex.BaseFailures {
			fmt.Fprintf(&b, "  fails on the base already (model mismatch, not caused by the patch): %s: %s\n", f.Path, flat(f.Statement))
		}
	}

	if c.Coverage != "" {
		b.WriteString("\n")
		if cl := ChangedLines(c.Coverage); cl != "" {
			b.WriteString(cl)
		} else {
			b.WriteString("Changed lines: the coverage step printed no report of them (see coverage.txt)\n")
		}
	}

	if r.Cost != nil {
		unit := "time"
		if c.ICount {
			unit = "instructions per operation (qemu -icount; not time)"
		}
		fmt.Fprintf(&b, "\nCost (perf binaries on both kernels, %s; after / before with the ratio's bounds):\n", unit)
		for _, f := range r.Cost.Figures {
			if f.BeforeUnitDiff {
				continue
			}
			fmt.Fprintf(&b, "  %-70s %10.4g -> %10.4g %-8s", f.Path, f.Before.Value, f.After.Value, f.Unit)
			if f.Ratio != 0 && !math.IsInf(f.Ratio, 0) && !math.IsNaN(f.Ratio) {
				fmt.Fprintf(&b, " x%.4f", f.Ratio)
				if f.Lo > 0 {
					fmt.Fprintf(&b, " [%.4f,%.4f]", f.Lo, f.Hi)
				}
			}
			b.WriteString("\n")
		}
		if len(r.CostGates) > 0 {
			b.WriteString("  cross-kernel gates (-baseline on the patched kernel):\n")
			for _, g := range r.CostGates {
				fmt.Fprintf(&b, "    %s %s", g.After, g.Path)
				if g.Why != "" {
					// Whole: the change of every gated figure and its verdict.
					fmt.Fprintf(&b, ": %s", strings.Join(strings.Fields(g.Why), " "))
				}
				b.WriteString("\n")
			}
		}
	}

	tm := r.Time()
	fmt.Fprintf(&b, "\nWall time: %.0fs in all (from the start of the patchcheck: source, builds, coverage and every step); %.0fs in the VM runs below, %.0fs waiting for the VM lock, %.0fs waiting for the build lock\n",
		tm.WallSeconds, tm.StepSeconds, tm.VMLockWaitSeconds, tm.BuildLockWaitSeconds)
	if r.Sharing != nil || r.SharingErr != "" {
		b.WriteString("\nSharing profile (cost step under -vm-sharing: counts of coherence-relevant kernel writes, not time):\n")
		if r.SharingErr != "" {
			fmt.Fprintf(&b, "  could not compare: %s\n", r.SharingErr)
		} else {
			sharing.FormatChanges(&b, r.Sharing)
		}
	}

	b.WriteString("\nSteps:\n")
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "  %-12s %-7s %5.0fs  %s", s.Name, s.Kernel, s.Seconds, strings.Join(s.Command, " "))
		if s.Reused != "" {
			fmt.Fprintf(&b, "\n      reused the base run of %s from %s (same kernel image, suite build, flags, qemu, accelerator and guest userland; -no-base-cache runs it again)", s.ReusedDate.Format(time.RFC3339), s.Reused)
		}
		if s.VMLockWaitSeconds > 0 {
			fmt.Fprintf(&b, "\n      after %.0fs waiting for the VM lock", s.VMLockWaitSeconds)
		}
		if s.Broken != "" {
			fmt.Fprintf(&b, "\n      broken: %s", s.Broken)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("patchcheck: writing the summary: %w", err)
	}
	return nil
}

// WriteJSON writes the kernels, steps, verdict and differences as JSON,
// every key in snake_case (TestJSONSnakeCase).
func (r *Result) WriteJSON(w io.Writer) error {
	doc := struct {
		Verdict string    `json:"verdict"`
		Changed bool      `json:"changed"`
		Patch   string    `json:"patch"`
		Kernels [2]Kernel `json:"kernels"`
		Time    Time      `json:"time"`
		*Result
		Changes
		Figures []Figure   `json:"cost_figures,omitempty"`
		Gates   []CostGate `json:"cost_gates,omitempty"`
	}{Verdict: r.Verdict(), Changed: r.Changed(), Patch: r.Config.Patch, Kernels: [2]Kernel{r.Config.Base, r.Config.Patched}, Time: r.Time(), Result: r, Gates: GatesOf(r.CostGates)}
	doc.Changes = ChangesOf(r.Correct)
	if r.Cost != nil {
		doc.Figures = FiguresOf(r.Cost.Figures)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("patchcheck: writing the JSON summary: %w", err)
	}
	return nil
}

// flat is s on one line, whole.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
