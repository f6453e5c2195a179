package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/markmirror"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// Permission events go through the same merge of marks and ignore masks
// (fsnotify_open_perm -> fsnotify_path -> fsnotify_parent / fsnotify ->
// send_to_group -> fanotify_group_event_mask): an ignored permission event
// is never queued, so the operation does not wait for an answer. These cases
// put the event mark on the mount and the ignore mark at each place, for the
// two permission classes; a reported event must be answered (FAN_ALLOW)
// before the actor's call returns.

var (
	evOpenPerm     = evKind{"open_perm", unix.FAN_OPEN_PERM}
	evOpenExecPerm = evKind{"open_exec_perm", unix.FAN_OPEN_EXEC_PERM}
)

// permKinds are the groups a permission case runs with, highest priority
// first: that is the order in which they are asked (fsnotify_iter_select_report_types
// walks marks by group priority, FAN_CLASS_PRE_CONTENT before FAN_CLASS_CONTENT).
var permKinds = []groupKind{kindPreContent, kindContent}

type permCombo struct{ combo }

func permCases() []harness.Case {
	var out []harness.Case
	for _, ev := range []evKind{evOpenPerm, evOpenExecPerm} {
		for _, igLoc := range []model.Loc{model.LocSelf, model.LocParent, model.LocMount, model.LocFS} {
			for _, fl := range flavours(igLoc, objFile) {
				c := permCombo{combo{ev: ev, obj: objFile, evLoc: model.LocMount, igLoc: igLoc, fl: fl}}
				want := c.expected()
				verdict := "ignored, the call does not wait"
				if want[0] != 0 {
					verdict = "reported and answered"
				}
				needs := []*feature.Feature{feature.FanotifyPerm}
				if fl.api == unix.FAN_MARK_IGNORE {
					needs = append(needs, feature.MarkIgnore)
				}
				if igLoc == model.LocFS {
					needs = append(needs, feature.MarkFilesystem)
				}
				if ev.bit == unix.FAN_OPEN_EXEC_PERM {
					needs = append(needs, feature.OpenExecPerm)
				}
				out = append(out, harness.Case{
					Name: c.name(),
					Doc: fmt.Sprintf("FAN_%s on file; event mark mount; ignore mark %s (%s): %s in both permission classes (model.Deliver)",
						strings.ToUpper(ev.name), igLoc, fl.describe(), verdict),
					Needs: needs,
					Fix:   c.fix(),
					Run:   c.run,
				})
			}
		}
	}
	return out
}

// plan is combo.plan for the permission groups (no control group: a
// permission class group with the event mark alone is the combo's own
// "reported" outcome, checked by the flavours that do not apply).
func (c permCombo) plan() []markCall {
	var calls []markCall
	for gi := range permKinds {
		calls = append(calls, c.groupPlan(gi)...)
	}
	return calls
}

func (c permCombo) modelMarks() []*model.Mark {
	per := make([]*markmirror.Marks, len(permKinds))
	for i := range per {
		per[i] = markmirror.NewMarks(i, false)
	}
	for _, call := range c.plan() {
		per[call.group].Add(model.Target{Loc: call.loc, IsDir: call.loc == model.LocParent}, call.flags, call.mask)
	}
	return markmirror.AllMarks(per)
}

func (c permCombo) expectedOn(k model.Kernel) map[int]uint32 {
	return k.Deliver(c.modelMarks(), c.ev.bit, false, map[int]bool{})
}

func (c permCombo) expected() map[int]uint32 { return c.expectedOn(model.Fixed) }

// fix is combo.fix for the permission groups.
func (c permCombo) fix() *harness.Fix {
	want := c.expected()
	for _, p := range preFixKernels {
		if !maps.Equal(want, c.expectedOn(p.k)) {
			return p.fix
		}
	}
	return nil
}

func (c permCombo) run(t *harness.T) {
	w := newWorld(t)
	for _, k := range permKinds {
		w.addGroup(k)
	}
	for _, call := range c.plan() {
		w.mustMark(call, c.obj)
	}
	w.checkStates("after marking", c.obj)
	deliver := func(k model.Kernel, marks []*model.Mark) map[int]uint32 {
		return k.Deliver(marks, c.ev.bit, false, w.fidGroups())
	}
	preds := predictPreFix(w.allMarks(), deliver)
	want := deliver(model.Fixed, w.allMarks())
	a := w.actor()
	op := actor.Op{Kind: "open", Path: w.file, Flags: unix.O_RDONLY | unix.O_CLOEXEC}
	what := "actor open " + w.rel(w.file)
	if c.ev.bit == unix.FAN_OPEN_EXEC_PERM {
		os.Remove(w.pidFile)
		op = actor.Op{Kind: "exec", Path: w.file}
		what = "actor exec " + w.rel(w.file)
	}
	p, err := a.Send(op)
	if err != nil {
		t.Fatal(err)
	}
	// Each group that the rule says reports the event gets it, in priority
	// order, and must answer before the next one is asked; the others get
	// nothing.
	got := make([][]fanotify.Event, len(w.groups))
	for gi := range w.groups {
		if want[gi] == 0 {
			continue
		}
		got[gi] = w.readAnswer(gi, 5*time.Second)
	}
	r, err := p.Wait(5 * time.Second)
	if err != nil {
		// A group the rule says gets nothing holds the event (a kernel
		// without one of the fixes reports what the rule ignores). Allow
		// what is pending, group by group in priority order, so that the
		// actor goes on and every group's events are compared below.
		t.Errorf("%s: %v (blocked on a permission event the rule says is ignored; allowing every pending event)", what, err)
		for gi := range w.groups {
			if len(got[gi]) == 0 {
				got[gi] = w.readAnswer(gi, time.Second)
			}
		}
		if r, err = p.Wait(5 * time.Second); err != nil {
			// Show what is waiting for an answer; closing the groups at
			// cleanup releases the actor (fanotify(7): closing the fd
			// allows the events).
			for gi, gs := range w.groups {
				evs, _ := gs.G.Drain()
				expect.Fanotify(t, fmt.Sprintf("%s; %s; group %d", what, c.setup(), gi), append(got[gi], evs...), nil)
			}
			t.Fatalf("%s: %v (still blocked with every pending event allowed)", what, err)
		}
	}
	if r.Errno != 0 || (op.Kind == "exec" && r.N != 0) {
		t.Fatalf("%s: errno %v, status %d", what, r.Errno, r.N)
	}
	pid := int32(a.Pid())
	if op.Kind == "open" {
		if err := a.Close(r.Fd); err != nil {
			t.Fatalf("actor close: %v", err)
		}
	} else {
		pid = w.scriptPid()
	}
	masks := map[int]uint32{}
	for gi, gs := range w.groups {
		rest, err := gs.G.Drain()
		if err != nil {
			t.Fatalf("drain group %d: %v", gi, err)
		}
		var wantEvs []fanotify.Event
		if want[gi] != 0 {
			wantEvs = []fanotify.Event{{Mask: fanotify.Mask(want[gi]), Pid: pid, Path: w.file}}
		}
		all := append(got[gi], rest...)
		expect.Fanotify(t, fmt.Sprintf("%s; %s; group %d %s", what, c.setup(), gi, fanotify.InitFlagsString(gs.kind.init)),
			all, wantEvs)
		if m, ok := w.reported(gi, all, c.obj, pid); ok && masks != nil {
			masks[gi] = m
		} else {
			masks = nil
		}
	}
	w.confirmPreFix(masks, want, preds)
}

// readAnswer waits up to d for group gi's permission event and allows it.
func (w *world) readAnswer(gi int, d time.Duration) []fanotify.Event {
	g := w.groups[gi].G
	evs, err := g.ReadN(1, time.Now().Add(d))
	if aerr := g.Answer(evs, fanotify.Allow); aerr != nil {
		w.t.Fatalf("%v", aerr)
	}
	if err != nil && !errors.Is(err, fanotify.ErrTimeout) {
		w.t.Fatalf("read group %d: %v", gi, err)
	}
	return evs
}
