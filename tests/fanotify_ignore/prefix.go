package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// A failing case prints "HINT: kernel may lack <fix>" only when what the
// groups reported is what a kernel without that fix reports (T.KernelLacks):
// the model is run with each fix of the seed thread turned off, and the
// reported masks are compared with its answer.

// preFix is a kernel without one fix of the seed thread (model.PreFixes).
type preFix struct {
	k   model.Kernel
	fix *harness.Fix // the fix that kernel lacks
}

// preFixKernels are the kernels a case's answer is compared with: combo.fix
// names the first whose answer differs from model.Fixed's; lackedFix names
// the one whose answer the kernel gave.
var preFixKernels = func() []preFix {
	var out []preFix
	for _, p := range model.PreFixes {
		out = append(out, preFix{p.Kernel, &harness.Fix{Commit: p.Fix.Commit, Subject: p.Fix.Subject}})
	}
	return out
}()

var (
	fixParentIgnore = preFixKernels[0].fix // 4f0b903ded72
	fixModifyOpt    = preFixKernels[1].fix // 04e317ba72d0
)

// prediction is one pre-fix kernel's answer: group index -> reported mask
// (missing: no event).
type prediction struct {
	fix   *harness.Fix
	masks map[int]uint32
}

// predictPreFix runs deliver (one event through the model of a kernel, on
// the marks it is given) for each pre-fix kernel, each on its own copy of
// marks: Deliver clears non-surviving ignore masks in place.
func predictPreFix(marks []*model.Mark, deliver func(model.Kernel, []*model.Mark) map[int]uint32) []prediction {
	var out []prediction
	for _, p := range preFixKernels {
		out = append(out, prediction{fix: p.fix, masks: deliver(p.k, cloneMarks(marks))})
	}
	return out
}

func cloneMarks(marks []*model.Mark) []*model.Mark {
	out := make([]*model.Mark, len(marks))
	for i, m := range marks {
		c := *m
		out[i] = &c
	}
	return out
}

// lackedFix returns the fix whose absence explains what the groups
// reported, or nil. got holds, for every group the case checked (a group
// left out is not in it), the mask of the one event it reported (0: none);
// want is model.Fixed's answer. A fix is named when got differs from want
// and equals, group by group, the answer of the kernel without that fix.
func lackedFix(got, want map[int]uint32, preds []prediction) *harness.Fix {
	if len(got) == 0 || sameOn(got, want) {
		return nil
	}
	for _, p := range preds {
		if sameOn(got, p.masks) {
			return p.fix
		}
	}
	return nil
}

// sameOn reports whether m gives every group of got the mask got gives it
// (a group missing from m reports nothing).
func sameOn(got, m map[int]uint32) bool {
	for gi, mask := range got {
		if m[gi] != mask {
			return false
		}
	}
	return true
}

// confirmPreFix tells the harness that the kernel lacks a fix when the
// masks the groups reported (got: see lackedFix; nil when some group
// reported something no kernel's rule gives, such as two events or another
// pid) are that pre-fix kernel's answer.
func (w *world) confirmPreFix(got, want map[int]uint32, preds []prediction) {
	if got == nil {
		return
	}
	w.t.KernelLacks(lackedFix(got, want, preds))
}
