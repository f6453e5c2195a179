package main

import (
	"testing"

	"github.com/fsnsuite/fsnsuite/harness/model"
)

// allKinds are the group kinds of a kernel and filesystem that have them all
// (6.18 on tmpfs or ext4): the generator's full space.
var allKinds = []string{"notif", "inotify", "content", "pre_content", "fid", "dfid_name"}

// TestModelFaults measures the explorer's power without a kernel: the
// correct model stands in for a correct kernel (the default run shows that
// they agree), and each planted fault must be found within the default
// seed range and shrunk to at most 6 steps. It prints scenarios-to-detection
// and the shrunk size per fault.
func TestModelFaults(t *testing.T) {
	gen := Generator{Kinds: allKinds}
	for _, f := range model.Faults {
		t.Run(f.Name, func(t *testing.T) {
			bad := model.Fixed
			bad.Fault = f.Name
			fails := func(s *Scenario) bool { return firstDiff(predict(bad, s), predict(model.Fixed, s)) >= 0 }
			for i := 0; i < defaultN; i++ {
				s := gen.Scenario(defaultSeed + int64(i))
				if !fails(s) {
					continue
				}
				small := shrink(s, fails)
				t.Logf("%-40s found after %4d scenarios (seed %d), shrunk %d -> %d steps, %d groups",
					f.Name, i+1, s.Seed, len(s.Steps), len(small.Steps), len(small.Groups))
				if len(small.Steps) > 6 {
					t.Errorf("shrunk to %d steps, want <= 6:\n%s", len(small.Steps), small.Script())
				}
				return
			}
			t.Errorf("fault %s (%s) not found in %d scenarios", f.Name, f.Doc, defaultN)
		})
	}
}

// TestGeneratorReproducible: a seed is a scenario.
func TestGeneratorReproducible(t *testing.T) {
	gen := Generator{Kinds: allKinds}
	a, b := gen.Scenario(42), gen.Scenario(42)
	if a.Script() != b.Script() {
		t.Fatalf("seed 42 gave two scenarios:\n%s\n%s", a.Script(), b.Script())
	}
}

// TestShrinkMinimal: ddmin drops every step that does not matter.
func TestShrinkMinimal(t *testing.T) {
	s := &Scenario{Groups: []string{"notif", "inotify"}, Steps: []Step{
		{Op: "read", Obj: "f"}, {Op: "write", Obj: "g"}, {Op: "opendir", Obj: "s"},
		{Op: "chmod", Obj: "f"}, {Op: "write", Obj: "s/h"},
	}}
	fails := func(c *Scenario) bool {
		for _, st := range c.Steps {
			if st.Op == "opendir" {
				return true
			}
		}
		return false
	}
	small := shrink(s, fails)
	if len(small.Steps) != 1 || small.Steps[0].Op != "opendir" || len(small.Groups) != 1 {
		t.Fatalf("shrunk to:\n%s", small.Script())
	}
}

// TestWitnesses: every model fault has a witness row in the regressions
// table, and the row still tells the fault apart from the correct model
// (so the row fails on a kernel that follows the wrong rule).
func TestWitnesses(t *testing.T) {
	have := map[string]bool{}
	for _, rg := range regressions {
		if rg.Witness == "" {
			continue
		}
		have[rg.Witness] = true
		bad := model.Fixed
		bad.Fault = rg.Witness
		s := rg.Scenario
		if firstDiff(predict(bad, &s), predict(model.Fixed, &s)) < 0 {
			t.Errorf("%s no longer tells fault %s from the correct model:\n%s", rg.Name, rg.Witness, s.Script())
		}
	}
	for _, f := range model.Faults {
		if !have[f.Name] {
			t.Errorf("fault %s has no witness row in regressions.go", f.Name)
		}
	}
}

// TestFixHints: on each witness of a fault that is a kernel without a fix,
// observations that follow the fault name that fix (and only faults that
// explain them), and the correct model's name none.
func TestFixHints(t *testing.T) {
	for _, rg := range regressions {
		fix, ok := model.FaultFixes[rg.Witness]
		if !ok {
			continue
		}
		s := rg.Scenario
		if rg.Fix == nil || rg.Fix.Commit != fix.Commit {
			t.Errorf("%s: Fix %v, want %s (model.FaultFixes)", rg.Name, rg.Fix, fix.Commit)
		}
		bad := model.Fixed
		bad.Fault = rg.Witness
		named := false
		for _, f := range missingFixes(&s, predict(bad, &s)) {
			named = named || f.Name == rg.Witness
		}
		if !named {
			t.Errorf("%s: observations of a kernel without %s do not name it", rg.Name, fix.Commit)
		}
		if fs := missingFixes(&s, predict(model.Fixed, &s)); len(fs) != 0 {
			t.Errorf("%s: the correct model's observations name %v", rg.Name, fs)
		}
	}
}
