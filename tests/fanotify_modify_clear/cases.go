package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/markmirror"
	"github.com/fsnsuite/fsnsuite/harness/model"
	"golang.org/x/sys/unix"
)

const (
	fLegacy = unix.FAN_MARK_IGNORED_MASK
	fIgnore = unix.FAN_MARK_IGNORE
	fSurv   = unix.FAN_MARK_IGNORED_SURV_MODIFY
	open    = unix.FAN_OPEN
)

// clearCase is one row: marks of one group, probes (opens whose events show
// whether the ignore masks still apply) before and after a write, and the
// ignore masks the write must clear or leave, stated from the source and
// cross-checked with the rule function.
type clearCase struct {
	name, doc string
	marks     []markCall
	probes    []obj // opened (and closed) before and after the write
	write     obj   // the file the actor writes
	cleared   []model.Loc
	kept      []model.Loc
	needs     []*feature.Feature
	why       string // the source line that decides cleared/kept
}

var table = []clearCase{
	{
		name: "inode_legacy_cleared", doc: "a legacy ignore mask without SURV_MODIFY on a file is cleared by a write to it; the next open is reported",
		marks:  []markCall{{model.LocSelf, 0, open, 0}, {model.LocSelf, fLegacy, open, 0}},
		probes: []obj{objFile}, write: objFile, cleared: []model.Loc{model.LocSelf},
		why: "fanotify_mark(2) FAN_MARK_IGNORED_SURV_MODIFY; fs/notify/fsnotify.c send_to_group: clear ignored on inode modification",
	},
	{
		name: "inode_legacy_surv_kept", doc: "with FAN_MARK_IGNORED_SURV_MODIFY the file's ignore mask survives a write to it",
		marks:  []markCall{{model.LocSelf, 0, open, 0}, {model.LocSelf, fLegacy | fSurv, open, 0}},
		probes: []obj{objFile}, write: objFile, kept: []model.Loc{model.LocSelf},
		why: "send_to_group skips marks with FSNOTIFY_MARK_FLAG_IGNORED_SURV_MODIFY",
	},
	{
		name: "inode_legacy_other_write_kept", doc: "a write to another file leaves a file's ignore mask alone",
		marks:  []markCall{{model.LocSelf, 0, open, 0}, {model.LocSelf, fLegacy, open, 0}},
		probes: []obj{objFile}, write: objOther, kept: []model.Loc{model.LocSelf},
		why: "fsnotify() visits only the marks of the written inode, its parent, mount and sb",
	},
	{
		name: "mount_legacy_cleared", doc: "a mount mark's legacy ignore mask is cleared by a write to any file of the mount",
		marks:  []markCall{{model.LocMount, 0, open, 0}, {model.LocMount, fLegacy, open, 0}},
		probes: []obj{objFile}, write: objOther, cleared: []model.Loc{model.LocMount},
		why: "fsnotify() visits the mount's marks for every event under it (FS_MODIFY is in mnt_fsnotify_mask: fsnotify_calc_mask)",
	},
	{
		name: "mount_legacy_surv_kept", doc: "a mount mark's legacy ignore mask with SURV_MODIFY survives writes under the mount",
		marks:  []markCall{{model.LocMount, 0, open, 0}, {model.LocMount, fLegacy | fSurv, open, 0}},
		probes: []obj{objFile}, write: objOther, kept: []model.Loc{model.LocMount},
		why: "send_to_group skips marks with FSNOTIFY_MARK_FLAG_IGNORED_SURV_MODIFY",
	},
	{
		name: "fs_legacy_cleared", doc: "a filesystem mark's legacy ignore mask is cleared by a write to any file of the filesystem",
		marks:  []markCall{{model.LocFS, 0, open, 0}, {model.LocFS, fLegacy, open, 0}},
		probes: []obj{objFile}, write: objOther, cleared: []model.Loc{model.LocFS},
		needs: []*feature.Feature{feature.MarkFilesystem},
		why:   "fsnotify() visits the sb's marks for every event on it (FS_MODIFY is in s_fsnotify_mask: fsnotify_calc_mask)",
	},
	{
		name: "fs_legacy_surv_kept", doc: "a filesystem mark's legacy ignore mask with SURV_MODIFY survives writes on the filesystem",
		marks:  []markCall{{model.LocFS, 0, open, 0}, {model.LocFS, fLegacy | fSurv, open, 0}},
		probes: []obj{objFile}, write: objOther, kept: []model.Loc{model.LocFS},
		needs: []*feature.Feature{feature.MarkFilesystem},
		why:   "send_to_group skips marks with FSNOTIFY_MARK_FLAG_IGNORED_SURV_MODIFY",
	},
	{
		name: "dir_children_legacy_cleared", doc: "a directory mark watching children loses its legacy ignore mask when a child is written",
		marks:  []markCall{{model.LocParent, 0, open | unix.FAN_EVENT_ON_CHILD, 0}, {model.LocParent, fLegacy, open, 0}},
		probes: []obj{objFile}, write: objOther, cleared: []model.Loc{model.LocParent},
		why: "fsnotify_calc_mask puts FS_MODIFY in the dir's mask (04e317ba72d0), so __fsnotify_parent finds the parent interested and send_to_group visits its mark",
	},
	{
		name: "dir_children_legacy_surv_kept", doc: "a directory mark watching children keeps a SURV_MODIFY ignore mask when a child is written",
		marks:  []markCall{{model.LocParent, 0, open | unix.FAN_EVENT_ON_CHILD, 0}, {model.LocParent, fLegacy | fSurv, open, 0}},
		probes: []obj{objFile}, write: objOther, kept: []model.Loc{model.LocParent},
		why: "send_to_group skips marks with FSNOTIFY_MARK_FLAG_IGNORED_SURV_MODIFY",
	},
	{
		name: "dir_no_children_legacy_kept", doc: "a directory mark not watching children keeps its legacy ignore mask when a child is written",
		marks:  []markCall{{model.LocParent, 0, open | unix.FAN_ONDIR, 0}, {model.LocParent, fLegacy, open, 0}},
		probes: []obj{objDir}, write: objOther, kept: []model.Loc{model.LocParent},
		why: "without FS_EVENT_ON_CHILD in its mask the dir does not watch children (fsnotify_inode_watches_children): __fsnotify_parent never visits its mark",
	},
	{
		name: "ignore_file_no_surv_cleared", doc: "FAN_MARK_IGNORE on a file without SURV_MODIFY is cleared by a write, like the legacy flavour",
		marks:  []markCall{{model.LocSelf, 0, open, 0}, {model.LocSelf, fIgnore, open, 0}},
		probes: []obj{objFile}, write: objFile, cleared: []model.Loc{model.LocSelf},
		needs: []*feature.Feature{feature.MarkIgnore},
		why:   "send_to_group clears any mark without FSNOTIFY_MARK_FLAG_IGNORED_SURV_MODIFY, whatever its flavour",
	},
	{
		name: "ignore_surv_no_downgrade_eexist", doc: "FAN_MARK_IGNORE cannot make a surviving ignore mask non-surviving (EEXIST); it still survives a write",
		marks: []markCall{{model.LocSelf, 0, open, 0}, {model.LocSelf, fIgnore | fSurv, open, 0},
			{model.LocSelf, fIgnore, unix.FAN_ACCESS, unix.EEXIST}},
		probes: []obj{objFile}, write: objFile, kept: []model.Loc{model.LocSelf},
		needs: []*feature.Feature{feature.MarkIgnore},
		why:   "fanotify_may_update_existing_mark: FAN_MARK_IGNORE without SURV_MODIFY on a surviving mark is EEXIST",
	},
	{
		name: "legacy_surv_downgrade_accepted", doc: "the legacy flavour accepts an update without SURV_MODIFY on a surviving mark, which keeps surviving",
		marks: []markCall{{model.LocSelf, 0, open, 0}, {model.LocSelf, fLegacy | fSurv, open, 0},
			{model.LocSelf, fLegacy, unix.FAN_ACCESS, 0}},
		probes: []obj{objFile}, write: objFile, kept: []model.Loc{model.LocSelf},
		why: "fanotify_mark_update_flags only ever sets FSNOTIFY_MARK_FLAG_IGNORED_SURV_MODIFY",
	},
	{
		name: "mixed_mount_cleared_inode_kept", doc: "one write clears the mount's non-surviving ignore mask and keeps the file's surviving one",
		marks: []markCall{{model.LocMount, 0, open, 0}, {model.LocMount, fLegacy, open, 0},
			{model.LocSelf, fLegacy | fSurv, open, 0}},
		probes: []obj{objFile, objOther}, write: objFile, cleared: []model.Loc{model.LocMount}, kept: []model.Loc{model.LocSelf},
		why: "send_to_group decides per mark on FSNOTIFY_MARK_FLAG_IGNORED_SURV_MODIFY",
	},
}

// steps lists the case's actor operations: the probes, the write, the probes.
func (c clearCase) steps() []step {
	var s []step
	for _, p := range c.probes {
		s = append(s, openClose(p))
	}
	s = append(s, write(c.write))
	for _, p := range c.probes {
		s = append(s, openClose(p))
	}
	return s
}

// behaviour is what a kernel does in a case: per step, the masks of the
// events it reports, in order; and its marks after the write, as fdinfo
// shows them (markmirror.Group.FdinfoStates).
type behaviour struct {
	events     [][]uint32
	afterWrite []string
}

func (b behaviour) equal(o behaviour) bool {
	return slices.Equal(b.afterWrite, o.afterWrite) &&
		slices.EqualFunc(b.events, o.events, func(x, y []uint32) bool { return slices.Equal(x, y) })
}

// trace runs the whole case through the model of kernel k alone; it
// returns the behaviour and the marks after the last step.
func (c clearCase) trace(k model.Kernel) (behaviour, []*model.Mark) {
	marks := markmirror.NewMarks(0, false)
	for _, mc := range c.marks {
		marks.Add(model.Target{Loc: mc.loc, IsDir: mc.loc == model.LocParent}, mc.flags, mc.mask)
	}
	list := marks.List()
	var b behaviour
	for i, s := range c.steps() {
		var got []uint32
		for _, ev := range s.evs {
			if m := k.DeliverAs(list, role(s.o), ev, s.o == objDir, map[int]bool{})[0]; m != 0 {
				got = append(got, m)
			}
		}
		b.events = append(b.events, got)
		if i == len(c.probes) {
			b.afterWrite = marks.States()
		}
	}
	return b, list
}

// predict renders trace: per step the masks reported, then the ignore masks
// left after the last step.
func (c clearCase) predict(k model.Kernel) string {
	b, list := c.trace(k)
	var sb strings.Builder
	for _, s := range b.events {
		for _, m := range s {
			fmt.Fprintf(&sb, "%x ", m)
		}
		sb.WriteString("| ")
	}
	for _, m := range list {
		fmt.Fprintf(&sb, "%s:%x ", m.Loc, m.Ignore)
	}
	return sb.String()
}

// preFix is a kernel without one fix of the seed thread (model.PreFixes).
type preFix struct {
	k   model.Kernel
	fix *harness.Fix // the fix it lacks
}

var preFixes = func() []preFix {
	var out []preFix
	for _, p := range model.PreFixes {
		out = append(out, preFix{p.Kernel, &harness.Fix{Commit: p.Fix.Commit, Subject: p.Fix.Subject}})
	}
	return out
}()

// fix names the commit the case depends on: the model's answer changes when
// the fix is turned off.
func (c clearCase) fix() *harness.Fix {
	want := c.predict(model.Fixed)
	for _, p := range preFixes {
		if c.predict(p.k) != want {
			return p.fix
		}
	}
	return nil
}

// lackedFix returns the fix whose absence explains what the kernel did, or
// nil: got differs from model.Fixed's behaviour and equals that of the
// kernel without that fix, the events of every step and the ignore masks
// the write left.
func (c clearCase) lackedFix(got behaviour) *harness.Fix {
	same := func(k model.Kernel) bool {
		want, _ := c.trace(k)
		return got.equal(want)
	}
	if same(model.Fixed) {
		return nil
	}
	for _, p := range preFixes {
		if same(p.k) {
			return p.fix
		}
	}
	return nil
}

func cases() []harness.Case {
	var out []harness.Case
	for _, c := range table {
		out = append(out, harness.Case{
			Name:  c.name,
			Doc:   c.doc + " (" + c.why + ")",
			Needs: c.needs,
			Fix:   c.fix(),
			Run:   c.run,
		})
	}
	return out
}

func (c clearCase) run(t *harness.T) {
	w := newWorld(t)
	var setup []string
	for _, mc := range c.marks {
		w.mark(mc)
		setup = append(setup, mc.String())
	}
	did := strings.Join(setup, "; ")
	w.checkStates("before the write")
	steps := c.steps()
	n := len(c.probes)
	for _, s := range steps[:n+1] {
		w.do(s, did)
	}
	// The case states what the write clears; the model must agree, and
	// fdinfo must show it.
	for _, l := range c.cleared {
		if m := w.g.At(l); m == nil || m.Ignore != 0 {
			t.Fatalf("rule error: the case says the write clears the %s ignore mask, the model keeps it", l)
		}
	}
	for _, l := range c.kept {
		if m := w.g.At(l); m == nil || m.Ignore == 0 {
			t.Fatalf("rule error: the case says the %s ignore mask survives the write, the model clears it", l)
		}
	}
	w.checkStates("after the write")
	states, err := w.g.FdinfoStates(w.places)
	for _, s := range steps[n+1:] {
		w.do(s, did+"; after "+steps[n].what)
	}
	if !w.odd && err == nil {
		t.KernelLacks(c.lackedFix(behaviour{events: w.reported, afterWrite: states}))
	}
}
