package main

import (
	"fmt"
	"maps"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/markmirror"
	"github.com/fsnsuite/fsnsuite/harness/model"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// flavour is how a case places its ignore mask.
type flavour struct {
	name string
	// api is FAN_MARK_IGNORED_MASK (legacy) or FAN_MARK_IGNORE.
	api uint
	// parentOnChild: before the legacy ignore mask, FAN_EVENT_ON_CHILD alone
	// is added to the parent mark's own mask, so that the legacy ignore mask
	// applies to children (fanotify_mark(2): "the ignore mask applies to
	// children only when FAN_EVENT_ON_CHILD is set in the mark's mask") while
	// the mark's mask still does not contain the event: the 2022 bug shape.
	parentOnChild bool
	// flags are the event flags put in a FAN_MARK_IGNORE ignore mask.
	flags uint32
}

// flavours lists the ignore flavours that differ for an ignore mark at loc
// on events on obj. FAN_MARK_IGNORE gets every subset of the event flags that
// matter there: FAN_EVENT_ON_CHILD on the parent, FAN_ONDIR for a directory
// object (on a non-dir inode the flags are refused with ENOTDIR, and on
// mount/sb marks FAN_EVENT_ON_CHILD is dropped; see model.MarkAdd).
func flavours(loc model.Loc, obj object) []flavour {
	out := []flavour{{name: "legacy", api: unix.FAN_MARK_IGNORED_MASK}}
	if loc == model.LocParent {
		out = append(out, flavour{name: "legacy_onchild", api: unix.FAN_MARK_IGNORED_MASK, parentOnChild: true})
	}
	var relevant []uint32
	if loc == model.LocParent {
		relevant = append(relevant, unix.FAN_EVENT_ON_CHILD)
	}
	if obj == objDir {
		relevant = append(relevant, unix.FAN_ONDIR)
	}
	for set := 0; set < 1<<len(relevant); set++ {
		f := flavour{name: "ignore", api: unix.FAN_MARK_IGNORE}
		for i, fl := range relevant {
			if set&(1<<i) != 0 {
				f.flags |= fl
				if fl == unix.FAN_EVENT_ON_CHILD {
					f.name += "_onchild"
				} else {
					f.name += "_ondir"
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// combo is one generated case: an event on an object, an event mark at one
// place, an ignore mark at another (or the same) place.
type combo struct {
	ev    evKind
	obj   object
	evLoc model.Loc
	igLoc model.Loc
	fl    flavour
}

// describe renders the flavour for a Doc line.
func (f flavour) describe() string {
	if f.api == unix.FAN_MARK_IGNORED_MASK {
		if f.parentOnChild {
			return "legacy FAN_MARK_IGNORED_MASK, mark mask FAN_EVENT_ON_CHILD"
		}
		return "legacy FAN_MARK_IGNORED_MASK"
	}
	if f.flags == 0 {
		return "FAN_MARK_IGNORE, no event flags"
	}
	return "FAN_MARK_IGNORE with " + fanotify.Mask(f.flags).String()
}

func (c combo) name() string {
	return fmt.Sprintf("%s_%s_ev_%s_ig_%s_%s", c.ev.name, c.obj, c.evLoc, c.igLoc, c.fl.name)
}

// eventMask is the mask of the event mark: the event, FAN_ONDIR for a
// directory object, FAN_EVENT_ON_CHILD on the parent.
func (c combo) eventMask() uint32 {
	m := c.ev.bit
	if c.obj == objDir {
		m |= unix.FAN_ONDIR
	}
	if c.evLoc == model.LocParent {
		m |= unix.FAN_EVENT_ON_CHILD
	}
	return m
}

// controlGroup is the index of the group that has the event mark only.
var controlGroup = len(allKinds)

// plan lists the mark calls of the case: for each group class the event mark
// then the ignore mark (always FAN_MARK_IGNORED_SURV_MODIFY here: clearing on
// modify is fanotify_modify_clear's subject), and for the control group the
// event mark alone.
func (c combo) plan() []markCall {
	var calls []markCall
	for gi := range allKinds {
		calls = append(calls, c.groupPlan(gi)...)
	}
	calls = append(calls, markCall{group: controlGroup, loc: c.evLoc, mask: c.eventMask()})
	return calls
}

// groupPlan is the marks of group gi: the event mark, the parent's
// FAN_EVENT_ON_CHILD where the flavour needs it, then the ignore mark.
func (c combo) groupPlan(gi int) []markCall {
	calls := []markCall{{group: gi, loc: c.evLoc, mask: c.eventMask()}}
	if c.fl.parentOnChild {
		calls = append(calls, markCall{group: gi, loc: model.LocParent, mask: unix.FAN_EVENT_ON_CHILD})
	}
	return append(calls, markCall{group: gi, loc: c.igLoc,
		flags: c.fl.api | unix.FAN_MARK_IGNORED_SURV_MODIFY, mask: c.ev.bit | c.fl.flags})
}

// setup describes the marks in one line for failure reports.
func (c combo) setup() string {
	s := fmt.Sprintf("event mark %s %s; ignore mark %s %s %s", c.evLoc, fanotify.Mask(c.eventMask()),
		c.igLoc, fanotify.MarkFlagsString(c.fl.api|unix.FAN_MARK_IGNORED_SURV_MODIFY), fanotify.Mask(c.ev.bit|c.fl.flags))
	if c.fl.parentOnChild {
		s += "; parent mask FAN_EVENT_ON_CHILD"
	}
	return s
}

// modelMarks applies the plan to the model alone (no syscalls).
func (c combo) modelMarks() ([]*model.Mark, map[int]bool) {
	kinds := append(append([]groupKind{}, allKinds...), kindNotif)
	per := make([]*markmirror.Marks, len(kinds))
	fid := map[int]bool{}
	for i, k := range kinds {
		per[i] = markmirror.NewMarks(i, k.dirFID)
		fid[i] = k.fid
	}
	for _, call := range c.plan() {
		tg := model.Target{Loc: call.loc, IsDir: call.loc == model.LocParent || (call.loc == model.LocSelf && c.obj == objDir)}
		per[call.group].Add(tg, call.flags, call.mask)
	}
	marks := markmirror.AllMarks(per)
	return marks, fid
}

// expected is the rule's answer on a kernel k: the mask each group reports.
func (c combo) expected(k model.Kernel) map[int]uint32 {
	marks, fid := c.modelMarks()
	return k.Deliver(marks, c.ev.bit, c.obj == objDir, fid)
}

// fix names the kernel commit the case's answer depends on: the rule is run
// again with each fix of the seed thread turned off (preFixKernels), and a
// different answer means a kernel without that fix fails this case.
func (c combo) fix() *harness.Fix {
	want := c.expected(model.Fixed)
	for _, p := range preFixKernels {
		if !maps.Equal(want, c.expected(p.k)) {
			return p.fix
		}
	}
	return nil
}

// events lists the events a case can produce on each object: a directory
// can only be opened by the actor (read, write and exec are not directory
// operations).
func events(obj object) []evKind {
	if obj == objDir {
		return []evKind{evOpen}
	}
	return []evKind{evOpen, evOpenExec, evAccess, evModify, evCloseWrite}
}

// combos is the whole matrix: object x event x event-mark place x
// ignore-mark place x ignore flavour.
func combos() []combo {
	var out []combo
	for _, obj := range []object{objFile, objDir} {
		for _, ev := range events(obj) {
			for _, evLoc := range []model.Loc{model.LocSelf, model.LocParent, model.LocMount, model.LocFS} {
				for _, igLoc := range []model.Loc{model.LocSelf, model.LocParent, model.LocMount, model.LocFS} {
					for _, fl := range flavours(igLoc, obj) {
						out = append(out, combo{ev: ev, obj: obj, evLoc: evLoc, igLoc: igLoc, fl: fl})
					}
				}
			}
		}
	}
	return out
}

// matrixCases turns the matrix into harness cases.
func matrixCases() []harness.Case {
	var cases []harness.Case
	for _, c := range combos() {
		want := c.expected(model.Fixed)
		verdict := "ignored"
		if want[0] != 0 {
			verdict = "reported"
		}
		needs := []*feature.Feature{feature.ReportFID, feature.ReportDFIDName}
		if c.fl.api == unix.FAN_MARK_IGNORE {
			needs = append(needs, feature.MarkIgnore)
		}
		if c.evLoc == model.LocFS || c.igLoc == model.LocFS {
			needs = append(needs, feature.MarkFilesystem)
		}
		if c.ev.bit == unix.FAN_OPEN_EXEC {
			needs = append(needs, feature.OpenExec)
		}
		cases = append(cases, harness.Case{
			Name: c.name(),
			Doc: fmt.Sprintf("FAN_%s on %s; event mark %s; ignore mark %s (%s): %s in all 5 group classes, control group reports it (model.Deliver)",
				strings.ToUpper(c.ev.name), c.obj, c.evLoc, c.igLoc, c.fl.describe(), verdict),
			Needs: needs,
			Fix:   c.fix(),
			Run:   c.run,
		})
	}
	return cases
}

// run is the body of a generated case.
func (c combo) run(t *harness.T) {
	w := newWorld(t)
	for _, k := range allKinds {
		w.addGroup(k)
	}
	w.addGroup(kindNotif) // the control group
	for _, call := range c.plan() {
		w.mustMark(call, c.obj)
	}
	// The marks the kernel shows must be the marks the model reasons about.
	w.checkStates("after marking", c.obj)
	deliver := func(k model.Kernel, marks []*model.Mark) map[int]uint32 {
		return k.Deliver(marks, c.ev.bit, c.obj == objDir, w.fidGroups())
	}
	preds := predictPreFix(w.allMarks(), deliver)
	want := deliver(model.Fixed, w.allMarks())
	if want[controlGroup] == 0 {
		t.Fatalf("rule error: the control group (event mark only) must get the event")
	}
	pid, did := w.do(c.ev, c.obj)
	got := w.checkGroups(did+"; "+c.setup(), want, c.obj, pid)
	w.confirmPreFix(got, want, preds)
}
