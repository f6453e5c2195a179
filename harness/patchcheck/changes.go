package patchcheck

import (
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
