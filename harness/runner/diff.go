package runner

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

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
	// Gate is the threshold the after run's case held the figure to (its
	// "gate: NAME <= MAX" line; the before run's when the after run has
	// none), 0 when no gate judged it: a figure reported, not gated.
	Gate float64
	// Beyond is set when the after figure is above its gate and the
	// before figure was not (above its own gate, or had none).
	Beyond bool
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

// Beyond counts the figures that went beyond their gates (FigureChange.Beyond).
func (d *Diff) Beyond() int {
	n := 0
	for _, f := range d.Figures {
		if f.Beyond {
			n++
		}
	}
	return n
}

// Verdict is the comparison in one line, the first thing a reader needs:
// "behaviour changed: N leaves pass -> fail, M fail -> pass, K figures
// beyond their gates (S the same)" or "no difference: ...". fsnsuite diff
// prints it after "verdict: "; the HTML report opens with it.
func (d *Diff) Verdict() string {
	figs := ""
	if k := d.Beyond(); k > 0 || d.Differs() {
		figs = fmt.Sprintf(", %d %s beyond %s", k, plural(k, "figure", "figures"), plural(k, "its gate", "their gates"))
	}
	switch {
	case d.Differs():
		return fmt.Sprintf("behaviour changed: %d leaves pass -> fail, %d fail -> pass%s (%d the same)", len(d.Regressions), len(d.Fixes), figs, d.Same)
	case figs != "":
		return fmt.Sprintf("no difference: no leaf changed between pass and fail%s (%d the same)", figs, d.Same)
	}
	return fmt.Sprintf("no difference: no leaf changed between pass and fail (%d the same)", d.Same)
}

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
// else (for a failure) its Statement.
func why(n *tap.Node) string {
	if n.Reason != "" {
		return n.Reason
	}
	if h := Hints(n); len(h) > 0 {
		return h[0]
	}
	if !n.Status.Failed() {
		return ""
	}
	return statement(n)
}

// Statement is a failing leaf's own statement of what went wrong, in one
// line, without its HINT (Hints): the first line the case wrote itself that
// states what it wanted (with the want/got lines of its dump folded in),
// else its last own line (the rule: ownStatement); for a leaf the runner
// ended ("TIMEOUT 30 seconds") with no such line, its status and reason.
// Empty for a leaf that did not fail.
func Statement(n *tap.Node) string {
	if !n.Status.Failed() {
		return ""
	}
	if s := statement(n); s != "" {
		return s
	}
	return strings.TrimSpace(strings.ToUpper(n.Status.String()) + " " + n.Reason)
}

// Hints are a leaf's "HINT: ..." lines, in order.
func Hints(n *tap.Node) []string {
	var out []string
	for _, d := range n.Diagnostics {
		if strings.HasPrefix(d, "HINT:") {
			out = append(out, d)
		}
	}
	return out
}

func statement(n *tap.Node) string { return ownStatement(n) }

func figureChanges(path string, a, b *tap.Node) []FigureChange {
	bm := map[string]tap.Measurement{}
	for _, m := range b.Measurements() {
		bm[m.Name] = m
	}
	ga, gb := a.Gates(), b.Gates()
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
		// intervals allow); none where either run gave no interval. An
		// unbounded end (Inf, or a before bound of 0) stays unbounded.
		if ma.Lo > 0 && ma.Hi > 0 && mb.Lo > 0 && mb.Hi > 0 {
			fc.Lo, fc.Hi = mb.Lo/ma.Hi, mb.Hi/ma.Lo
		}
		fc.Gate = gb[ma.Name]
		if fc.Gate == 0 {
			fc.Gate = ga[ma.Name]
		}
		wasBeyond := ga[ma.Name] != 0 && ma.Value > ga[ma.Name]
		fc.Beyond = fc.Gate != 0 && !fc.BeforeUnitDiff && mb.Value > fc.Gate && !wasBeyond
		out = append(out, fc)
	}
	return out
}

// Spans1 reports whether the figure's change is not told apart from none:
// its ratio's interval contains 1 (benchstat's "~"). False when the runs
// gave no interval.
func (f FigureChange) Spans1() bool {
	return f.Lo > 0 && f.Lo <= 1 && f.Hi >= 1
}

// Change is the figure's change after / before as a percentage with the
// interval the two runs' intervals allow, "+6.8% [+6.3,+7.4]", or "~" and
// the same figures in parentheses when the interval spans no change; "n/a"
// when no ratio can be formed (a before value of 0, units that differ).
func (f FigureChange) Change() string {
	if f.BeforeUnitDiff {
		return "n/a (units differ)"
	}
	if f.Ratio <= 0 || !finite(f.Ratio) {
		return "n/a"
	}
	s := pct(f.Ratio)
	if f.Lo > 0 {
		s += " [" + strings.TrimSuffix(pct(f.Lo), "%") + "," + strings.TrimSuffix(pct(f.Hi), "%") + "]"
	} else {
		s += " (no interval)"
	}
	if f.Spans1() {
		return "~ (" + s + ")"
	}
	return s
}

// pct writes a ratio as a signed change in percent: 1.068 is "+6.8%", 0.5
// "-50.0%", 7.24 "+624%"; an unbounded one "unbounded".
func pct(r float64) string {
	if !finite(r) {
		return "unbounded"
	}
	c := (r - 1) * 100
	if math.Abs(c) >= 99.95 {
		return fmt.Sprintf("%+.0f%%", c)
	}
	return fmt.Sprintf("%+.1f%%", c)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// FormatValue writes a figure for a person: at most 4 significant digits,
// never in scientific notation, a nanosecond unit scaled to the value (4383
// p99-ns is "4.383 p99-µs", 6.63e6 ns/op "6.633 ms/op"), a count from
// 10,000 on with k, M or G (170978 ops/s is "171k ops/s"), a ratio as a
// bare number; "n/a" for a value that is not a number and "unbounded" for an
// infinite one.
func FormatValue(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 0):
		return "unbounded"
	}
	s := ""
	switch {
	case Nanoseconds(unit):
		div, name := 1.0, "ns"
		switch a := math.Abs(v); {
		case a >= 1e9:
			div, name = 1e9, "s"
		case a >= 1e6:
			div, name = 1e6, "ms"
		case a >= 1e3:
			div, name = 1e3, "µs"
		}
		s, unit = plainNum(v/div), strings.Replace(unit, "ns", name, 1)
	case unit == "ratio" || unit == "":
		return plainNum(v) // a ratio is a bare number
	default:
		switch a := math.Abs(v); {
		case a >= 1e9:
			s = plainNum(v/1e9) + "G"
		case a >= 1e6:
			s = plainNum(v/1e6) + "M"
		case a >= 1e4:
			s = plainNum(v/1e3) + "k"
		default:
			s = plainNum(v)
		}
	}
	if unit == "" {
		return s
	}
	return s + " " + unit
}

// nsWord is "ns" as a word of a unit: "ns/op", "p99-ns", "cpu-ns/op", not
// "insn/op" (instruction count mode's).
var nsWord = regexp.MustCompile(`(^|[-/])ns($|[-/])`)

// Nanoseconds reports whether a figure's unit counts nanoseconds ("ns/op",
// "p99-ns", "cpu-ns/op"), which reads scaled to µs, ms or s.
func Nanoseconds(unit string) bool { return nsWord.MatchString(unit) }

// plainNum writes v with 4 significant digits in plain decimal notation,
// trailing zeros dropped (0.003553, 1.005, 641.7, 4383, 100): never an
// exponent.
func plainNum(v float64) string {
	if v == 0 {
		return "0"
	}
	digits := min(max(3-int(math.Floor(math.Log10(math.Abs(v)))), 0), 12)
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if r, err := strconv.ParseFloat(s, 64); err == nil && r != 0 {
		// Rounding may have added a digit (9.9996 is "10.000"): write again.
		if d := 3 - int(math.Floor(math.Log10(math.Abs(r)))); d >= 0 && d < digits {
			s = strconv.FormatFloat(v, 'f', d, 64)
		}
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// FormatInterval writes a figure's value with its interval as a person
// reads it, benchstat's way: "4.918 µs/op ±12%" (the wider side of the
// interval, relative to the value), "... ± unbounded" for an interval with an
// infinite end, the value alone when there is none. Exact is the interval
// itself, "[4.29 µs/op, 5.475 µs/op]" ("" when there is none).
func FormatInterval(m tap.Measurement) (short, exact string) {
	short = FormatValue(m.Value, m.Unit)
	if m.Lo == 0 && m.Hi == 0 {
		return short, ""
	}
	if !finite(m.Lo) || !finite(m.Hi) || !finite(m.Value) {
		return short + " ± unbounded", "unbounded interval"
	}
	exact = "[" + FormatValue(m.Lo, m.Unit) + ", " + FormatValue(m.Hi, m.Unit) + "]"
	if m.Value == 0 {
		return short, exact
	}
	rel := math.Max(m.Hi-m.Value, m.Value-m.Lo) / math.Abs(m.Value) * 100
	switch {
	case rel < 1:
		return short + " ±" + strconv.FormatFloat(rel, 'f', 1, 64) + "%", exact
	case rel >= 1000:
		return short + " ±" + plainNum(rel) + "%", exact
	}
	return short + " ±" + strconv.FormatFloat(rel, 'f', 0, 64) + "%", exact
}

// GateText is how a figure's gate reads: "≤ 1.25", or "reported, not gated".
func GateText(gate float64) string {
	if gate == 0 {
		return "reported, not gated"
	}
	return "≤ " + plainNum(gate)
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
	fmt.Fprintf(&b, "verdict: %s\n", d.Verdict())
	before, after := leafMap(d.Before.Root), leafMap(d.After.Root)
	section := func(title string, cs []LeafChange) {
		if len(cs) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s (%d):\n", title, len(cs))
		for _, c := range cs {
			fmt.Fprintf(&b, "  %-6s -> %-6s %s", c.Before, c.After, c.Path)
			// A leaf that fails after (before, for a fix): the case's own
			// statement and its HINT lines.
			failing := after[c.Path]
			if c.After != "fail" {
				failing = before[c.Path]
			}
			if failing != nil && (c.After == "fail") != (c.Before == "fail") {
				if st := Statement(failing.Node); st != "" {
					fmt.Fprintf(&b, "\n                  %s", st)
				}
				for _, h := range Hints(failing.Node) {
					fmt.Fprintf(&b, "\n                  %s", h)
				}
				b.WriteString("\n")
				continue
			}
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
		fmt.Fprintf(&b, "\nfigures, before and after (± the wider side of each run's interval; the change with the\ninterval both runs' intervals allow, ~ when it spans no change):\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  figure\tbefore\tafter\tchange\tgate\n")
		for _, f := range d.Figures {
			before, _ := FormatInterval(f.Before)
			after, _ := FormatInterval(f.After)
			gate := GateText(f.Gate)
			if f.Beyond {
				gate += " BEYOND"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", f.Path, before, after, f.Change(), gate)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("writing the comparison: %w", err)
		}
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("writing the comparison: %w", err)
	}
	return nil
}
