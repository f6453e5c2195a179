package patchcheck

import (
	"math"

	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/tap"
)

// Change is one leaf whose verdict differs between the kernels (or that
// fails on both), with the case's own statement of what it wanted and got.
type Change struct {
	Path string `json:"path"`
	// Before and After are the leaf's result on the base and on the
	// patched kernel: pass, fail, skip, or absent.
	Before string `json:"before"`
	After  string `json:"after"`
	// Statement is the failing run's runner.FullStatement (the patched
	// kernel's; the base's for a leaf that passes after the patch), Hints
	// that run's HINT lines.
	Statement string   `json:"statement,omitempty"`
	Hints     []string `json:"hints,omitempty"`
	// StatementBefore is the base kernel's statement of a leaf failing on
	// both kernels.
	StatementBefore string `json:"statement_before,omitempty"`
}

// Changes are the correctness comparison's leaves, each with its statement.
type Changes struct {
	PassToFail []Change `json:"pass_to_fail,omitempty"`
	FailToPass []Change `json:"fail_to_pass,omitempty"`
	FailOnBoth []Change `json:"fail_on_both,omitempty"`
}

// nodes maps a run's leaf paths to their nodes (nil run: empty).
func nodes(r *runner.Results) map[string]*tap.Node {
	m := map[string]*tap.Node{}
	if r == nil || r.Root == nil {
		return m
	}
	for _, l := range runner.Leaves(r.Root) {
		m[l.Path] = l.Node
	}
	return m
}

// changeOf is c with the statement of the run in which the leaf failed:
// after, else before.
func changeOf(c runner.LeafChange, before, after map[string]*tap.Node) Change {
	ch := Change{Path: c.Path, Before: c.Before, After: c.After}
	n := after[c.Path]
	if n == nil || !n.Status.Failed() {
		n = before[c.Path]
	}
	if n != nil && n.Status.Failed() {
		ch.Statement, ch.Hints = runner.FullStatement(n), runner.Hints(n)
	} else {
		ch.Statement = c.Why
	}
	if c.Before == "fail" && c.After == "fail" {
		if b := before[c.Path]; b != nil {
			ch.StatementBefore = runner.FullStatement(b)
		}
	}
	return ch
}

// ChangesOf turns a correctness comparison into Changes (empty for nil).
func ChangesOf(d *runner.Diff) Changes {
	var cs Changes
	if d == nil {
		return cs
	}
	before, after := nodes(d.Before), nodes(d.After)
	conv := func(in []runner.LeafChange) []Change {
		var out []Change
		for _, c := range in {
			out = append(out, changeOf(c, before, after))
		}
		return out
	}
	cs.PassToFail, cs.FailToPass, cs.FailOnBoth = conv(d.Regressions), conv(d.Fixes), conv(d.FailBoth)
	return cs
}

// Figure is one cost figure on both kernels (runner.FigureChange in
// summary.json's naming). A bound or ratio that is not a finite number
// (an unbounded interval, no ratio) is left out.
type Figure struct {
	Path   string      `json:"path"`
	Unit   string      `json:"unit"`
	Before FigureValue `json:"before"`
	After  FigureValue `json:"after"`
	// Ratio is after / before, RatioLo and RatioHi its bounds from both
	// intervals.
	Ratio   *float64 `json:"ratio,omitempty"`
	RatioLo *float64 `json:"ratio_lo,omitempty"`
	RatioHi *float64 `json:"ratio_hi,omitempty"`
	// UnitsDiffer: the kernels' runs label the figure with different
	// units (not comparable).
	UnitsDiffer bool `json:"units_differ,omitempty"`
	// Gate is the threshold the patched run held the figure to (none: a
	// figure reported, not gated); Beyond that it went beyond it.
	Gate   *float64 `json:"gate,omitempty"`
	Beyond bool     `json:"beyond,omitempty"`
}

// FigureValue is one kernel's figure with its interval.
type FigureValue struct {
	Value *float64 `json:"value,omitempty"`
	Lo    *float64 `json:"lo,omitempty"`
	Hi    *float64 `json:"hi,omitempty"`
}

// CostGate is a cross-kernel gate of the cost step: the patched run's perf
// leaf judged by -baseline against the base's saved run.
type CostGate struct {
	Path   string `json:"path"`
	Result string `json:"result"`
	// Line is the engine's "baseline: ..." verdict, whole.
	Line string `json:"line"`
}

// num is v, nil when it is not a finite number (JSON has none such).
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// numNonZero is num, nil for 0 too (a bound or gate that is not there).
func numNonZero(v float64) *float64 {
	if v == 0 {
		return nil
	}
	return num(v)
}

// FiguresOf converts a cost comparison's figures.
func FiguresOf(fs []runner.FigureChange) []Figure {
	var out []Figure
	for _, f := range fs {
		val := func(m tap.Measurement) FigureValue {
			return FigureValue{Value: num(m.Value), Lo: numNonZero(m.Lo), Hi: numNonZero(m.Hi)}
		}
		out = append(out, Figure{Path: f.Path, Unit: f.Unit, Before: val(f.Before), After: val(f.After),
			Ratio: numNonZero(f.Ratio), RatioLo: numNonZero(f.Lo), RatioHi: numNonZero(f.Hi),
			UnitsDiffer: f.BeforeUnitDiff, Gate: numNonZero(f.Gate), Beyond: f.Beyond})
	}
	return out
}

// GatesOf converts the cost step's cross-kernel gates.
func GatesOf(gs []runner.LeafChange) []CostGate {
	var out []CostGate
	for _, g := range gs {
		out = append(out, CostGate{Path: g.Path, Result: g.After, Line: g.Why})
	}
	return out
}
