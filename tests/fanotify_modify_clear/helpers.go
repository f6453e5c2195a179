package main

import (
	"fmt"
	"path/filepath"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/markmirror"
	"github.com/fsnsuite/fsnsuite/harness/model"
	"github.com/fsnsuite/fsnsuite/harness/setup"
	"golang.org/x/sys/unix"
)

// obj names the objects of a case's tree:
//
//	<case dir>/dir         the directory (model.LocParent marks are on it)
//	<case dir>/dir/file    the file (model.LocSelf marks are on it)
//	<case dir>/dir/other   another file in dir, on no inode mark
type obj int

const (
	objFile obj = iota
	objOther
	objDir
)

var objNames = [...]string{"dir/file", "dir/other", "dir"}

func (o obj) String() string { return objNames[o] }

// world is one case's tree, actor, and group with the model of its marks.
type world struct {
	t      *harness.T
	paths  [3]string
	places markmirror.Places
	a      *actor.Actor
	g      *markmirror.Group
	// reported holds, per step done, the masks of the events that arrived
	// (for clearCase.lackedFix); odd is set once a step got something no
	// kernel's rule gives (another pid or path).
	reported [][]uint32
	odd      bool
}

func newWorld(t *harness.T) *world {
	w := &world{t: t}
	dir := t.Path("dir")
	w.paths = [3]string{filepath.Join(dir, "file"), filepath.Join(dir, "other"), dir}
	w.places = markmirror.Places{Self: w.paths[objFile], Parent: w.paths[objDir], Root: t.FS().Root}
	setup.Mkdir(t, dir)
	for _, p := range w.paths[:2] {
		setup.WriteFile(t, p, "data\n")
	}
	w.a = t.Actor()
	w.g = markmirror.New(t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY), 0, false)
	return w
}

// markCall is one fanotify_mark(FAN_MARK_ADD|flags, mask) on the object at loc.
type markCall struct {
	loc   model.Loc
	flags uint
	mask  uint32
	want  unix.Errno // the errno fanotify_user.c gives it (0: success)
}

func (c markCall) String() string {
	return fmt.Sprintf("%s %s %s", c.loc, fanotify.MarkFlagsString(c.flags|c.loc.MarkFlags()|unix.FAN_MARK_ADD), fanotify.Mask(c.mask))
}

// mark places a mark, checks its errno against the case's and the model's
// (model.MarkAdd), and updates the model.
func (w *world) mark(c markCall) {
	t := w.t
	predicted, err := w.g.Mark(w.places, c.loc, c.flags, c.mask)
	if predicted != c.want {
		t.Fatalf("rule error: model predicts %s for %s, the case says %s", expect.ErrnoText(predicted), c, expect.ErrnoText(c.want))
	}
	got, err := markmirror.Errno(err)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	if got != c.want {
		t.Fatalf("%s: got %s, want %s", c, expect.ErrnoText(got), expect.ErrnoText(c.want))
	}
}

// role says what part a mark plays for an event on o: the file's inode mark
// is the object's own for events on the file and takes no part in events on
// the other file or the directory; the directory's mark is the parent's for
// events on its entries and the object's own for events on the directory.
func role(o obj) func(*model.Mark) (model.Loc, bool) {
	return func(m *model.Mark) (model.Loc, bool) {
		switch {
		case m.Loc == model.LocSelf:
			return model.LocSelf, o == objFile
		case m.Loc == model.LocParent && o == objDir:
			return model.LocSelf, true
		}
		return m.Loc, true
	}
}

// step is one actor operation and the events it generates, in order
// (fs/notify: open -> FS_OPEN, write -> FS_MODIFY, close -> FS_CLOSE_WRITE or
// FS_CLOSE_NOWRITE).
type step struct {
	what string
	o    obj
	evs  []uint32
	run  func(w *world) error
}

// openClose opens o read-only and closes it.
func openClose(o obj) step {
	return step{what: "open+close " + o.String(), o: o, evs: []uint32{unix.FAN_OPEN, unix.FAN_CLOSE_NOWRITE},
		run: func(w *world) error {
			flags := unix.O_RDONLY
			if o == objDir {
				flags |= unix.O_DIRECTORY
			}
			fd, err := w.a.Open(w.paths[o], flags, 0)
			if err != nil {
				return err
			}
			return w.a.Close(fd)
		}}
}

// write opens o for writing, writes one byte and closes it.
func write(o obj) step {
	return step{what: "open(O_WRONLY)+write+close " + o.String(), o: o,
		evs: []uint32{unix.FAN_OPEN, unix.FAN_MODIFY, unix.FAN_CLOSE_WRITE},
		run: func(w *world) error {
			fd, err := w.a.Open(w.paths[o], unix.O_WRONLY, 0)
			if err != nil {
				return err
			}
			if _, err := w.a.Write(fd, []byte("d")); err != nil {
				return err
			}
			return w.a.Close(fd)
		}}
}

// do runs a step through the actor, drains the group and compares what
// arrived with what the model (model.Fixed) says each of the step's events
// gives, in order. The model's marks are updated (FS_MODIFY clears
// non-surviving ignore masks).
func (w *world) do(s step, setup string) {
	t := w.t
	marks := w.g.List()
	var want []fanotify.Event
	for _, ev := range s.evs {
		m := model.Fixed.DeliverAs(marks, role(s.o), ev, s.o == objDir, map[int]bool{})[0]
		if m != 0 {
			want = append(want, fanotify.Event{Mask: fanotify.Mask(m), Pid: int32(w.a.Pid()), Path: w.paths[s.o]})
		}
	}
	if err := s.run(w); err != nil {
		t.Fatalf("actor %s: %v", s.what, err)
	}
	got, err := w.g.G.Drain()
	if err != nil {
		t.Fatalf("drain: %v", err)
	}
	expect.Fanotify(t, setup+"; actor "+s.what, got, want)
	var masks []uint32
	for _, e := range got {
		m := uint32(e.Mask)
		ok := uint64(m) == uint64(e.Mask) &&
			expect.FanotifyEqual([]fanotify.Event{e}, []fanotify.Event{{Mask: e.Mask, Pid: int32(w.a.Pid()), Path: w.paths[s.o]}}) == ""
		w.odd = w.odd || !ok
		masks = append(masks, m)
	}
	w.reported = append(w.reported, masks)
}

// checkStates compares the group's marks in /proc/self/fdinfo with the model,
// so a case fails for the right reason.
func (w *world) checkStates(when string) {
	w.g.Check(w.t, "0", when, w.places)
}
