package main

import (
	"maps"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// TestLackedFix: a fix is named only when the reported masks are the answer
// of the kernel without it and not the fixed kernel's.
func TestLackedFix(t *testing.T) {
	const open = unix.FAN_OPEN
	preds := []prediction{
		{fix: fixParentIgnore, masks: map[int]uint32{0: open, 1: open}},
		{fix: fixModifyOpt, masks: map[int]uint32{1: open}},
	}
	for _, tc := range []struct {
		name      string
		got, want map[int]uint32
		fix       *harness.Fix
	}{
		{"fixed_answer", map[int]uint32{0: 0, 1: 0}, map[int]uint32{}, nil},
		{"pre_parent_ignore", map[int]uint32{0: open, 1: open}, map[int]uint32{}, fixParentIgnore},
		{"pre_modify_opt", map[int]uint32{0: 0, 1: open}, map[int]uint32{}, fixModifyOpt},
		{"other_mask", map[int]uint32{0: unix.FAN_ACCESS, 1: open}, map[int]uint32{}, nil},
		{"one_group_differs_the_other_way", map[int]uint32{0: open, 1: 0}, map[int]uint32{}, nil},
		{"nothing_checked", map[int]uint32{}, map[int]uint32{0: open}, nil},
		// A group left out is not in got: the others decide.
		{"group_left_out", map[int]uint32{1: open}, map[int]uint32{}, fixParentIgnore},
		// A pre-fix kernel that agrees with the fixed one explains nothing.
		{"prefix_equals_fixed", map[int]uint32{0: 0, 1: open}, map[int]uint32{1: open}, nil},
	} {
		if got := lackedFix(tc.got, tc.want, preds); got != tc.fix {
			t.Errorf("%s: lackedFix = %v, want %v", tc.name, got, tc.fix)
		}
	}
}

// TestPreFixAnswersNameTheirFix runs every generated case through the model
// alone: the masks a kernel without a fix would report name a fix whose
// kernel gives them (the case's Fix, unless both pre-fix kernels agree), and
// the fixed kernel's masks name none.
func TestPreFixAnswersNameTheirFix(t *testing.T) {
	type modelCase struct {
		name    string
		fix     *harness.Fix
		deliver func(model.Kernel) map[int]uint32
		groups  int
	}
	var cs []modelCase
	for _, c := range combos() {
		cs = append(cs, modelCase{c.name(), c.fix(), c.expected, len(allKinds) + 1})
	}
	for _, ev := range []evKind{evOpenPerm, evOpenExecPerm} {
		for _, igLoc := range []model.Loc{model.LocSelf, model.LocParent, model.LocMount, model.LocFS} {
			for _, fl := range flavours(igLoc, objFile) {
				c := permCombo{combo{ev: ev, obj: objFile, evLoc: model.LocMount, igLoc: igLoc, fl: fl}}
				cs = append(cs, modelCase{"perm " + c.name(), c.fix(), c.expectedOn, len(permKinds)})
			}
		}
	}
	observe := func(m map[int]uint32, groups int) map[int]uint32 {
		out := map[int]uint32{}
		for gi := range groups {
			out[gi] = m[gi]
		}
		return out
	}
	withFix := 0
	for _, c := range cs {
		want := c.deliver(model.Fixed)
		var preds []prediction
		for _, p := range preFixKernels {
			preds = append(preds, prediction{fix: p.fix, masks: c.deliver(p.k)})
		}
		if f := lackedFix(observe(want, c.groups), want, preds); f != nil {
			t.Errorf("%s: the fixed kernel's answer names %s", c.name, f.Commit)
		}
		if c.fix == nil {
			continue
		}
		withFix++
		for _, p := range preds {
			if maps.Equal(p.masks, want) {
				continue
			}
			f := lackedFix(observe(p.masks, c.groups), want, preds)
			if f == nil {
				t.Errorf("%s: a kernel without %s names no fix", c.name, p.fix.Commit)
				continue
			}
			for _, q := range preds {
				if q.fix == f && !maps.Equal(q.masks, p.masks) {
					t.Errorf("%s: a kernel without %s names %s, whose kernel answers otherwise", c.name, p.fix.Commit, f.Commit)
				}
			}
		}
	}
	if withFix == 0 {
		t.Fatalf("no generated case depends on a fix: the test checks nothing")
	}
	t.Logf("%d of %d model cases depend on a fix", withFix, len(cs))
}
