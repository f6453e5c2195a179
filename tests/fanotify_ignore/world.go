package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/markmirror"
	"github.com/fsnsuite/fsnsuite/harness/model"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// object is what an event happens on: a regular file inside the watched
// directory, or a subdirectory of it (events carry FS_ISDIR / FAN_ONDIR).
type object int

const (
	objFile object = iota
	objDir
)

func (o object) String() string {
	if o == objDir {
		return "dir"
	}
	return "file"
}

// groupKind is one class of fanotify group a case runs with.
type groupKind struct {
	name   string
	init   uint
	fid    bool // reports FID info records instead of an fd (FAN_ONDIR is reported)
	dirFID bool // FAN_REPORT_DIR_FID: parent fid + name
}

var (
	kindNotif      = groupKind{name: "notif", init: unix.FAN_CLASS_NOTIF}
	kindContent    = groupKind{name: "content", init: unix.FAN_CLASS_CONTENT}
	kindPreContent = groupKind{name: "pre_content", init: unix.FAN_CLASS_PRE_CONTENT}
	kindFID        = groupKind{name: "fid", init: unix.FAN_CLASS_NOTIF | unix.FAN_REPORT_FID, fid: true}
	kindDFIDName   = groupKind{name: "dfid_name", init: unix.FAN_CLASS_NOTIF | unix.FAN_REPORT_DFID_NAME, fid: true, dirFID: true}
)

// allKinds are the group classes every generated case runs at once, each
// group with the same marks: they must all give the same answer.
var allKinds = []groupKind{kindNotif, kindContent, kindPreContent, kindFID, kindDFIDName}

// gstate is one open group of a kind and the model of its marks.
type gstate struct {
	*markmirror.Group
	kind groupKind
	// absent: the group could not be had on this filesystem (a FID class
	// where the filesystem cannot report file handles on this kernel). It
	// keeps its index so that the plan's group numbers hold; it gets no
	// marks and is neither checked nor predicted anything.
	absent bool
}

// world is one case's tree, actor, groups and mark model. The tree is
//
//	<case dir>/dir          the watched directory (parent of both objects)
//	<case dir>/dir/file     a '#!/bin/sh' script, mode 0755 (the file object)
//	<case dir>/dir/sub      a subdirectory (the dir object)
//	<case dir>/dir/empty    an empty file
//	<case dir>/sibling      a directory beside dir, with sibling/file in it
//
// all made before any mark is placed; every later operation on it is done
// by the actor.
type world struct {
	t       *harness.T
	root    string
	dir     string
	actorCh chan actorResult
	file    string
	sub     string
	sibling string
	empty   string // an empty file (no page cache), for eviction
	pidFile string
	a       *actor.Actor // set by actor()
	groups  []*gstate
	leftOut bool // a group class was left out (noted once)
}

const fileContent = "#!/bin/sh\n"

func newWorld(t *harness.T) *world {
	w := &world{t: t, root: t.FS().Root, actorCh: make(chan actorResult, 1)}
	w.dir = t.Path("dir")
	w.file = filepath.Join(w.dir, "file")
	w.sub = filepath.Join(w.dir, "sub")
	w.sibling = t.Path("sibling")
	w.empty = filepath.Join(w.dir, "empty")
	// The exec'd script writes its shell's pid ($$: the pid that called
	// execve, which is the pid FAN_OPEN_EXEC carries) outside the marked
	// filesystem, so the pid of an exec event is known exactly.
	w.pidFile = filepath.Join(t.TempDir(), "exec.pid")
	script := fileContent + "echo $$ > " + w.pidFile + "\n"
	for _, d := range []string{w.dir, w.sub, w.sibling} {
		setup.Mkdir(t, d)
	}
	for _, f := range []string{w.file, filepath.Join(w.sibling, "file")} {
		setup.WriteFileMode(t, f, []byte(script), 0o755)
	}
	setup.WriteFile(t, w.empty, "")
	// The actor (a re-exec of this binary) starts while the marks are
	// placed: it touches nothing until it is asked to. It must start after
	// the tree is written: a child forked while a setup file is still open
	// for write holds that open file until its execve, and its close there
	// would be a FAN_CLOSE_WRITE with the actor's pid after the marks, and
	// would make the inode "open for write" to fanotify_add_inode_mark.
	go func() {
		a, err := actor.Start()
		w.actorCh <- actorResult{a, err}
	}()
	t.Cleanup(func() {
		if w.a == nil {
			if r := <-w.actorCh; r.a != nil {
				r.a.Kill()
			}
			return
		}
		w.a.Kill()
	})
	return w
}

type actorResult struct {
	a   *actor.Actor
	err error
}

// actor returns the case's actor, waiting for it to have started.
func (w *world) actor() *actor.Actor {
	if w.a == nil {
		r := <-w.actorCh
		if r.err != nil {
			w.t.Fatalf("%v", r.err)
		}
		w.a = r.a
	}
	return w.a
}

// addGroup opens a group of the given kind; it is closed at the end of the
// case (its marks at once, its fd in the background: harness T.Fanotify).
//
// A FID class on a filesystem whose own probe says it cannot report file
// handles here (feature.FIDOn: 5.10's tmpfs has no f_fsid, fanotify_mark(2)
// ENODEV) is left out with a note (T.LeaveOut: a failure under -strict): the
// group keeps its index, and the case goes on with the other classes. A
// probe that fails for another reason fails the case.
func (w *world) addGroup(k groupKind) int {
	gi := len(w.groups)
	if k.fid {
		if err := w.t.FID().Check(); err != nil {
			if !feature.IsSkip(err) {
				w.t.Fatalf("%v", err)
			}
			if !w.leftOut {
				w.t.LeaveOut("the FID group classes (fid, dfid_name): %v", err)
				w.leftOut = true
			}
			w.groups = append(w.groups, &gstate{Group: markmirror.New(nil, gi, k.dirFID), kind: k, absent: true})
			return gi
		}
	}
	g := w.t.Fanotify(k.init, unix.O_RDONLY)
	w.groups = append(w.groups, &gstate{Group: markmirror.New(g, gi, k.dirFID), kind: k})
	return gi
}

// present reports whether group gi was opened (see addGroup).
func (w *world) present(gi int) bool { return !w.groups[gi].absent }

// places are the objects the mark locations name for events on obj.
func (w *world) places(obj object) markmirror.Places {
	return markmirror.Places{Self: w.objPath(obj), Parent: w.dir, Root: w.root, SelfIsDir: obj == objDir}
}

func (w *world) objPath(obj object) string {
	if obj == objDir {
		return w.sub
	}
	return w.file
}

// markCall is one fanotify_mark(FAN_MARK_ADD|flags, mask) of a plan; the
// location's type flag is added by world.mark.
type markCall struct {
	group int
	loc   model.Loc
	flags uint
	mask  uint32
}

func (c markCall) String() string {
	return fmt.Sprintf("g%d %s %s %s", c.group, c.loc, fanotify.MarkFlagsString(c.flags|unix.FAN_MARK_ADD), fanotify.Mask(c.mask))
}

// mark places a mark and updates the model. It returns the errno the model
// predicts (0: success) and the call's error.
func (w *world) mark(c markCall, obj object) (unix.Errno, error) {
	return w.groups[c.group].Mark(w.places(obj), c.loc, c.flags, c.mask)
}

// mustMark places a mark that the model says succeeds; any error fails the
// case. A group left out (addGroup) gets none.
func (w *world) mustMark(c markCall, obj object) {
	w.t.Helper()
	if !w.present(c.group) {
		return
	}
	want, err := w.mark(c, obj)
	if want != 0 {
		w.t.Fatalf("plan error: model says %s fails with %s", c, expect.ErrnoText(want))
	}
	if err != nil {
		w.t.Fatalf("%s: %v", c, err)
	}
}

// allMarks lists the model marks of every group.
func (w *world) allMarks() []*model.Mark { return markmirror.AllMarks(w.groups) }

func (w *world) fidGroups() map[int]bool {
	out := map[int]bool{}
	for i, gs := range w.groups {
		out[i] = gs.kind.fid
	}
	return out
}

// Event kinds a case can produce through the actor.
type evKind struct {
	name string
	bit  uint32
}

var (
	evOpen       = evKind{"open", unix.FAN_OPEN}
	evOpenExec   = evKind{"open_exec", unix.FAN_OPEN_EXEC}
	evAccess     = evKind{"access", unix.FAN_ACCESS}
	evModify     = evKind{"modify", unix.FAN_MODIFY}
	evCloseWrite = evKind{"close_write", unix.FAN_CLOSE_WRITE}
)

// do makes the actor produce ev on obj and returns the pid the event must
// carry and a description of what was done.
//   - open: open(O_RDONLY) (O_DIRECTORY for the dir), close
//   - access: open(O_RDONLY), read, close (fsnotify_access from vfs_read)
//   - modify / close_write: open(O_WRONLY), write one byte, close
//     (fsnotify_modify from vfs_write, FS_CLOSE_WRITE from __fput)
//   - open_exec: execve of the script (FS_OPEN_EXEC from do_open_execat);
//     the pid is the exec'd child's, read from the file the script writes.
func (w *world) do(ev evKind, obj object) (int32, string) {
	t, a, p := w.t, w.actor(), w.objPath(obj)
	rel := w.rel(p)
	switch ev.bit {
	case unix.FAN_OPEN:
		flags := unix.O_RDONLY
		if obj == objDir {
			flags |= unix.O_DIRECTORY
		}
		fd, err := a.Open(p, flags, 0)
		if err != nil {
			t.Fatalf("actor open %s: %v", p, err)
		}
		if err := a.Close(fd); err != nil {
			t.Fatalf("actor close: %v", err)
		}
		return int32(a.Pid()), "actor open+close " + rel
	case unix.FAN_ACCESS:
		fd, err := a.Open(p, unix.O_RDONLY, 0)
		if err != nil {
			t.Fatalf("actor open %s: %v", p, err)
		}
		if b, err := a.Read(fd, 64); err != nil || len(b) == 0 {
			t.Fatalf("actor read %s: %d bytes, %v", p, len(b), err)
		}
		if err := a.Close(fd); err != nil {
			t.Fatalf("actor close: %v", err)
		}
		return int32(a.Pid()), "actor open+read+close " + rel
	case unix.FAN_MODIFY, unix.FAN_CLOSE_WRITE:
		fd, err := a.Open(p, unix.O_WRONLY, 0)
		if err != nil {
			t.Fatalf("actor open %s: %v", p, err)
		}
		if n, err := a.Write(fd, []byte(fileContent[:1])); err != nil || n != 1 {
			t.Fatalf("actor write %s: %d, %v", p, n, err)
		}
		if err := a.Close(fd); err != nil {
			t.Fatalf("actor close: %v", err)
		}
		return int32(a.Pid()), "actor open(O_WRONLY)+write+close " + rel
	case unix.FAN_OPEN_EXEC:
		os.Remove(w.pidFile)
		st, err := a.Exec(p)
		if err != nil || st != 0 {
			t.Fatalf("actor exec %s: status %d, %v", p, st, err)
		}
		return w.scriptPid(), "actor exec " + rel
	}
	t.Fatalf("no action for %s", fanotify.Mask(ev.bit))
	return 0, ""
}

// scriptPid is the pid the exec'd script wrote ($$: the process that called
// execve), the pid its FAN_OPEN_EXEC(_PERM) event must carry.
func (w *world) scriptPid() int32 {
	b, err := os.ReadFile(w.pidFile)
	if err != nil {
		w.t.Fatalf("exec'd script left no pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		w.t.Fatalf("exec'd script pid %q: %v", b, err)
	}
	return int32(pid)
}

func (w *world) rel(p string) string {
	if r, err := filepath.Rel(w.t.Dir(), p); err == nil {
		return r
	}
	return p
}

// wantEvent is the event group gi must report: mask, the actor's pid, and
// the fd path or the FID records its class reports (fanotify(7)).
func (w *world) wantEvent(gi int, mask uint32, obj object, pid int32) fanotify.Event {
	t := w.t
	k := w.groups[gi].kind
	p := w.objPath(obj)
	e := fanotify.Event{Mask: fanotify.Mask(mask), Pid: pid}
	if !k.fid {
		e.Path = p
		return e
	}
	e.Fd = unix.FAN_NOFD
	var rec fanotify.Info
	var err error
	switch {
	case !k.dirFID:
		rec, err = fanotify.FIDOf(p)
	case obj == objDir:
		// copy_info_records_to_user: with FAN_REPORT_NAME, an event on a
		// directory itself is reported as DFID_NAME of the directory with name ".".
		rec, err = fanotify.DFIDNameOf(p, ".")
	default:
		rec, err = fanotify.DFIDNameOf(filepath.Dir(p), filepath.Base(p))
	}
	if err != nil {
		t.Fatalf("expected FID: %v", err)
	}
	e.Info = []fanotify.Info{rec}
	return e
}

// checkGroups drains every group and compares what it got with want (group
// index -> reported mask; missing: no event). It returns what each group
// reported as a mask (reported), or nil when a group's events are no
// answer of the rule (for confirmPreFix).
func (w *world) checkGroups(did string, want map[int]uint32, obj object, pid int32) map[int]uint32 {
	masks := map[int]uint32{}
	for i, gs := range w.groups {
		if gs.absent {
			continue
		}
		got, err := gs.G.Drain()
		if err != nil {
			w.t.Fatalf("drain group %d (%s): %v", i, gs.kind.name, err)
		}
		var wantEvs []fanotify.Event
		if m := want[i]; m != 0 {
			wantEvs = []fanotify.Event{w.wantEvent(i, m, obj, pid)}
		}
		expect.Fanotify(w.t, fmt.Sprintf("%s; group %d %s", did, i, fanotify.InitFlagsString(gs.kind.init)), got, wantEvs)
		if m, ok := w.reported(i, got, obj, pid); ok && masks != nil {
			masks[i] = m
		} else {
			masks = nil
		}
	}
	return masks
}

// reported is the mask group gi reported in evs when evs is an answer the
// rule can give (with any kernel's fixes): no event (0), or one event that is
// exactly the event of the group's class for its mask (wantEvent: pid, fd
// path or records). ok is false for anything else.
func (w *world) reported(gi int, evs []fanotify.Event, obj object, pid int32) (mask uint32, ok bool) {
	switch {
	case len(evs) == 0:
		return 0, true
	case len(evs) > 1 || uint64(uint32(evs[0].Mask)) != uint64(evs[0].Mask):
		return 0, false
	}
	m := uint32(evs[0].Mask)
	return m, expect.FanotifyEqual(evs, []fanotify.Event{w.wantEvent(gi, m, obj, pid)}) == ""
}

// checkStates compares fdinfo with the model for every group.
func (w *world) checkStates(when string, obj object) {
	for gi, gs := range w.groups {
		if gs.absent {
			continue
		}
		gs.Check(w.t, fmt.Sprintf("%d (%s)", gi, gs.kind.name), when, w.places(obj))
	}
}
