package runner

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/fsnsuite/fsnsuite/tap"
)

// LeafChange is one leaf whose verdict differs between two runs.
type LeafChange struct {
	Path string
	// Before and After are ResultWord of the leaf's status ("pass", "fail",
	// "skip"), or "absent" when the run has no such leaf.
	Before, After string
	// Why is the after run's first diagnostic line or skip reason (the
	// before run's when the leaf is absent after); WhyBefore the before
	// run's, for a leaf that failed in both.
	Why, WhyBefore string
}

// FigureChange is one measurement present in both runs.
type FigureChange struct {
	Path, Unit     string
	Before, After  tap.Measurement
	Ratio          float64 // After.Value / Before.Value
	Lo, Hi         float64 // the ratio's bounds from the two intervals, 0 when either run has none
	BeforeUnitDiff bool    // the runs label the figure with different units: not comparable
}

// Diff is the leaf-by-leaf comparison of two results directories: what a
// change between the runs (a patch, another kernel) did to the suite's
// verdicts, and to its figures.
type Diff struct {
	Before, After *Results
	// Regressions went from pass (or skip) to fail, or fail after and are
	// absent before (a binary_verdict leaf: a binary that timed out or
	// crashed as a whole; a binary that could not list its cases); Fixes
	// the other way round.
	Regressions, Fixes []LeafChange
	// FailBoth failed in both runs (for the same or for another reason:
	// both reasons are kept).
	FailBoth []LeafChange
	// SkipChanged went between skip and pass.
	SkipChanged []LeafChange
	// OnlyBefore and OnlyAfter are leaves one run lacks (a binary left out,
	// a case added) that do not fail in the run that has them.
	OnlyBefore, OnlyAfter []LeafChange
	Figures               []FigureChange
	// Same counts leaves with the same verdict in both runs.
	Same int
}

// Differs reports whether any leaf changed between pass and fail.
func (d *Diff) Differs() bool { return len(d.Regressions) > 0 || len(d.Fixes) > 0 }

// CompareResults compares run a (before) with run b (after).
func CompareResults(a, b *Results) *Diff {
	d := &Diff{Before: a, After: b}
	before, after := leafMap(a.Root), leafMap(b.Root)
	for _, p := range sortedKeys(before) {
		la, lb := before[p], after[p]
		if lb == nil {
			ch := LeafChange{Path: p, Before: ResultWord(la.Node.Status), After: "absent", Why: why(la.Node)}
			if ch.Before == "fail" {
				// What failed before is gone: a fix only in the sense
				// of the verdict, listed with the fixes.
				d.Fixes = append(d.Fixes, ch)
			} else {
				d.OnlyBefore = append(d.OnlyBefore, ch)
			}
			continue
		}
		wa, wb := ResultWord(la.Node.Status), ResultWord(lb.Node.Status)
		ch := LeafChange{Path: p, Before: wa, After: wb, Why: why(lb.Node)}
		switch {
		case wa == "fail" && wb == "fail":
			ch.WhyBefore = why(la.Node)
			d.FailBoth = append(d.FailBoth, ch)
		case wb == "fail":
			d.Regressions = append(d.Regressions, ch)
		case wa == "fail":
			d.Fixes = append(d.Fixes, ch)
		case wa != wb:
			d.SkipChanged = append(d.SkipChanged, ch)
		default:
			d.Same++
		}
		d.Figures = append(d.Figures, figureChanges(p, la.Node, lb.Node)...)
	}
	for _, p := range sortedKeys(after) {
		if before[p] == nil {
			lb := after[p]
			ch := LeafChange{Path: p, Before: "absent", After: ResultWord(lb.Node.Status), Why: why(lb.Node)}
			if ch.After == "fail" {
				// A failing leaf the before run lacks (a binary that
				// timed out or could not list its cases, whose leaves
				// are then absent) is a pass/fail difference.
				d.Regressions = append(d.Regressions, ch)
			} else {
				d.OnlyAfter = append(d.OnlyAfter, ch)
			}
		}
	}
	return d
}

func leafMap(root *tap.Node) map[string]*Leaf {
	m := map[string]*Leaf{}
	for _, l := range Leaves(root) {
		m[l.Path] = &l
	}
	return m
}

func sortedKeys(m map[string]*Leaf) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Why is a leaf's reason in one line, as the comparison shows it.
func Why(n *tap.Node) string { return why(n) }

// why is a leaf's reason in one line: its skip reason, else its HINT line,
// else (for a failure) the last line the case wrote itself (not indented:
// "name (fs): events differ" before its dump, an Errorf after a log line),
// else the line that names the leaf, else its last diagnostic with words
// in it (not the closing brace of a dump).
func why(n *tap.Node) string {
	if n.Reason != "" {
		return n.Reason
	}
	for _, d := range n.Diagnostics {
		if strings.HasPrefix(d, "HINT:") {
			return d
		}
	}
	if !n.Status.Failed() {
		return ""
	}
	for i := len(n.Diagnostics) - 1; i >= 0; i-- {
		d := n.Diagnostics[i]
		if d != "" && d[0] != ' ' && d[0] != '\t' && strings.IndexFunc(d, unicode.IsLetter) >= 0 {
			return d
		}
	}
	for _, d := range n.Diagnostics {
		if n.Name != "" && strings.HasPrefix(strings.TrimSpace(d), n.Name+" ") {
			return strings.TrimSpace(d)
		}
	}
	for i := len(n.Diagnostics) - 1; i >= 0; i-- {
		if strings.IndexFunc(n.Diagnostics[i], unicode.IsLetter) >= 0 {
			return n.Diagnostics[i]
		}
	}
	return ""
}

func figureChanges(path string, a, b *tap.Node) []FigureChange {
	bm := map[string]tap.Measurement{}
	for _, m := range b.Measurements() {
		bm[m.Name] = m
	}
	var out []FigureChange
	for _, ma := range a.Measurements() {
		mb, ok := bm[ma.Name]
		if !ok {
			continue
		}
		fc := FigureChange{Path: path + "." + ma.Name, Unit: mb.Unit, Before: ma, After: mb, BeforeUnitDiff: ma.Unit != mb.Unit}
		if ma.Value != 0 {
			fc.Ratio = mb.Value / ma.Value
		}
		// The ratio's bounds from the two intervals (the widest ratio the
		// intervals allow); none where either run gave no interval.
		if ma.Lo > 0 && ma.Hi > 0 && mb.Lo > 0 && mb.Hi > 0 {
			fc.Lo, fc.Hi = mb.Lo/ma.Hi, mb.Hi/ma.Lo
		}
		out = append(out, fc)
	}
	return out
}

// WriteText writes the comparison as plain text, fit for a cover letter:
// the two runs, the verdict, every leaf that changed between pass and
// fail, the leaves that fail in both (not caused by the change), the other
// differences counted, and the figures both runs reported.
func (d *Diff) WriteText(w io.Writer) error {
	var b strings.Builder
	label := func(r *Results) string {
		return fmt.Sprintf("%s (kernel %s, %s)", r.Dir, r.Info.Kernel, r.Info.Start.Format("2006-01-02 15:04 UTC"))
	}
	fmt.Fprintf(&b, "before: %s\nafter:  %s\n", label(d.Before), label(d.After))
	switch {
	case d.Differs():
		fmt.Fprintf(&b, "verdict: behaviour changed: %d leaves pass -> fail, %d fail -> pass (%d the same)\n", len(d.Regressions), len(d.Fixes), d.Same)
	default:
		fmt.Fprintf(&b, "verdict: no difference: no leaf changed between pass and fail (%d the same)\n", d.Same)
	}
	section := func(title string, cs []LeafChange) {
		if len(cs) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s (%d):\n", title, len(cs))
		for _, c := range cs {
			fmt.Fprintf(&b, "  %-6s -> %-6s %s", c.Before, c.After, c.Path)
			if c.WhyBefore != "" && c.WhyBefore != c.Why {
				fmt.Fprintf(&b, "\n                  before: %s", c.WhyBefore)
				fmt.Fprintf(&b, "\n                  after:  %s", c.Why)
			} else if c.Why != "" {
				fmt.Fprintf(&b, "\n                  %s", c.Why)
			}
			b.WriteString("\n")
		}
	}
	section("pass -> fail", d.Regressions)
	section("fail -> pass", d.Fixes)
	section("fail in both runs", d.FailBoth)
	// A leaf that passed before and skips after lost its verdict: listed,
	// though it is no pass/fail difference.
	var lost []LeafChange
	for _, c := range d.SkipChanged {
		if c.Before == "pass" {
			lost = append(lost, c)
		}
	}
	section("pass -> skip (no verdict after)", lost)
	if n := len(d.SkipChanged) - len(lost) + len(d.OnlyBefore) + len(d.OnlyAfter); n > 0 {
		fmt.Fprintf(&b, "\nother differences: %d skip -> pass, %d leaves only before, %d only after (none failing)\n",
			len(d.SkipChanged)-len(lost), len(d.OnlyBefore), len(d.OnlyAfter))
	}
	if len(d.Figures) > 0 {
		fmt.Fprintf(&b, "\nfigures (after / before):\n")
		for _, f := range d.Figures {
			if f.BeforeUnitDiff {
				fmt.Fprintf(&b, "  %s: %s vs %s: not comparable (units differ)\n", f.Path, fmtFig(f.Before), fmtFig(f.After))
				continue
			}
			fmt.Fprintf(&b, "  %s: %s -> %s", f.Path, fmtFig(f.Before), fmtFig(f.After))
			if f.Ratio != 0 && !math.IsInf(f.Ratio, 0) && !math.IsNaN(f.Ratio) {
				fmt.Fprintf(&b, "  x%.4f", f.Ratio)
				if f.Lo > 0 {
					fmt.Fprintf(&b, " [%.4f,%.4f]", f.Lo, f.Hi)
				}
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("writing the comparison: %w", err)
	}
	return nil
}

func fmtFig(m tap.Measurement) string {
	s := fmt.Sprintf("%.4g %s", m.Value, m.Unit)
	if m.Lo != 0 || m.Hi != 0 {
		s += fmt.Sprintf(" [%.4g,%.4g]", m.Lo, m.Hi)
	}
	return s
}
