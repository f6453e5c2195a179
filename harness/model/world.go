package model

import (
	"path"
	"sort"

	"golang.org/x/sys/unix"
)

// GroupKind is the kind of one group of a World: an inotify instance or a
// fanotify group of some class and reporting mode.
type GroupKind struct {
	Name    string
	Inotify bool
	Init    uint // fanotify_init(2) flags (class and FAN_REPORT_*)
	FID     bool // reports FID records (FAN_REPORT_FID)
}

// Event is one group's report of one event, as the model predicts it and as
// the explorer normalises what the kernel delivered.
type Event struct {
	Group int
	// Obj is the tree object the event names: for fanotify the object of
	// the event fd or FID record; for inotify the watched object.
	Obj string
	// Name is the child's name an inotify parent watch reports.
	Name string
	Mask uint32
}

// World is the scenario-level model: a tree of named objects, groups of
// several kinds, their marks and watches, and what each file operation
// delivers to each group. Object names are paths relative to the scenario
// directory ("." is the directory itself).
type World struct {
	K      Kernel
	nodes  map[string]bool // object -> is a directory
	kinds  []GroupKind
	marks  []*Mark
	nextWd map[int]int32
}

// NewWorld returns a model of a tree (object -> is a directory) and groups.
func NewWorld(k Kernel, tree map[string]bool, kinds []GroupKind) *World {
	nodes := map[string]bool{}
	for n, d := range tree {
		nodes[n] = d
	}
	return &World{K: k, nodes: nodes, kinds: kinds, nextWd: map[int]int32{}}
}

// IsDir reports whether obj is a directory of the tree.
func (w *World) IsDir(obj string) bool { return w.nodes[obj] }

func parentOf(obj string) string {
	if obj == "." {
		return "" // outside the tree: never marked
	}
	return path.Dir(obj)
}

func (w *World) find(g int, loc Loc, obj string) (int, *Mark) {
	for i, m := range w.marks {
		if m.Group == g && m.Loc == loc && m.Obj == obj {
			return i, m
		}
	}
	return -1, nil
}

func (w *World) drop(i int) { w.marks = append(w.marks[:i:i], w.marks[i+1:]...) }

// fdEvents is FANOTIFY_FD_EVENTS | FANOTIFY_EVENT_FLAGS: what a group
// reporting fds may mark, and what a mount mark may carry.
const fdEvents = unix.FAN_ACCESS | unix.FAN_MODIFY | unix.FAN_CLOSE | unix.FAN_OPEN |
	unix.FAN_OPEN_EXEC | unix.FAN_OPEN_PERM | unix.FAN_ACCESS_PERM | unix.FAN_OPEN_EXEC_PERM | fsEventFlags

// FanMark applies fanotify_mark(flags, mask) of fanotify group g on obj
// (ignored for FAN_MARK_MOUNT / FAN_MARK_FILESYSTEM, which mark the
// scenario's filesystem) and returns the errno the call must fail with.
func (w *World) FanMark(g int, flags uint, mask uint32, obj string) unix.Errno {
	k := w.K
	loc := LocSelf
	switch {
	case flags&unix.FAN_MARK_FILESYSTEM != 0:
		loc, obj = LocFS, ""
	case flags&unix.FAN_MARK_MOUNT != 0:
		loc, obj = LocMount, ""
	}
	// do_fanotify_mark: "Events that do not carry enough information to
	// report event->fd require a group that supports reporting fid. Those
	// events are not supported on a mount mark" (EINVAL; fanotify_mark(2)).
	if mask&^fdEvents != 0 && (!w.kinds[g].FID || loc == LocMount) && !k.faulty(FaultFidOnlyEventsOnFd) {
		k.hit(RuleErrFidOnly)
		return unix.EINVAL
	}
	isDir := loc == LocSelf && w.nodes[obj]
	i, m := w.find(g, loc, obj)
	if flags&unix.FAN_MARK_REMOVE != 0 {
		return w.fanRemove(i, m, flags, mask, loc, isDir)
	}
	tg := Target{Loc: loc, IsDir: isDir}
	nm, errno := k.MarkAdd(m, g, flags, mask, tg, false)
	if errno != 0 || nm == nil {
		return errno
	}
	nm.Obj = obj
	if i >= 0 {
		w.marks[i] = nm
	} else {
		w.marks = append(w.marks, nm)
	}
	return 0
}

// fanRemove is fanotify_remove_mark() / fanotify_mark_remove_from_mask().
func (w *World) fanRemove(i int, m *Mark, flags uint, mask uint32, loc Loc, isDir bool) unix.Errno {
	k := w.K
	// do_fanotify_mark: FAN_EVENT_ON_CHILD is masked out, and is a bit the
	// user cannot remove (umask), for sb/mount/non-dir marks.
	var umask uint32
	if loc != LocSelf || !isDir {
		mask &^= fsOnChild
		umask = fsOnChild
	}
	if m == nil {
		k.hit(RuleErrNoMark)
		return unix.ENOENT
	}
	nm := *m
	mask &^= umask
	if flags&(unix.FAN_MARK_IGNORED_MASK|unix.FAN_MARK_IGNORE) == 0 {
		nm.Mask &^= mask
	} else {
		nm.Ignore &^= mask
	}
	w.marks[i] = &nm
	// "Destroy mark when only umask bits remain."
	if (nm.Mask|nm.Ignore)&^umask == 0 && !k.faulty(FaultRemoveKeepsEmptyMark) {
		k.hit(RuleMarkDestroyed)
		w.drop(i)
	}
	return 0
}

// inotifyMaskBits is IN_ALL_EVENTS.
const inotifyMaskBits = unix.IN_ALL_EVENTS

// InWatch applies inotify_add_watch(obj, mask) of inotify group g and returns
// the watch descriptor (inotify_new_watch: idr_alloc_cyclic from 1, so a new
// watch takes the next number; an existing watch keeps its wd).
func (w *World) InWatch(g int, obj string, mask uint32) (int32, unix.Errno) {
	k := w.K
	// inotify_arg_to_mask: "All directories care about children."
	bits := mask & inotifyMaskBits
	if w.nodes[obj] {
		bits |= fsOnChild
	}
	oneshot := mask&unix.IN_ONESHOT != 0
	i, m := w.find(g, LocSelf, obj)
	if m != nil {
		nm := *m
		// inotify_update_existing_watch: without IN_MASK_ADD the mask and
		// the flags are replaced.
		if mask&unix.IN_MASK_ADD == 0 || k.faulty(FaultInotifyMaskAddReplaces) {
			nm.Mask, nm.Oneshot = 0, false
		}
		k.hit(RuleInotifyMaskAdd)
		nm.Mask |= bits
		nm.Oneshot = nm.Oneshot || oneshot
		w.marks[i] = &nm
		return nm.Wd, 0
	}
	w.nextWd[g]++
	nm := &Mark{Group: g, Loc: LocSelf, Obj: obj, Inotify: true, Mask: bits, Wd: w.nextWd[g], Oneshot: oneshot}
	w.marks = append(w.marks, nm)
	return nm.Wd, 0
}

// InRm applies inotify_rm_watch() of the watch of group g on obj: EINVAL when
// there is none, else the watch goes and reports IN_IGNORED.
func (w *World) InRm(g int, obj string) (unix.Errno, []Event) {
	i, m := w.find(g, LocSelf, obj)
	if m == nil || !m.Inotify {
		w.K.hit(RuleInotifyRmEinval)
		return unix.EINVAL, nil
	}
	w.K.hit(RuleInotifyRm)
	w.drop(i)
	return 0, []Event{{Group: g, Obj: obj, Mask: unix.IN_IGNORED}}
}

// Hook is one fsnotify hook call: an event on an object.
type Hook struct {
	Ev  uint32
	Obj string
}

// Hooks returns the fsnotify hooks an operation of the actor calls, in order
// (include/linux/fsnotify.h):
//   - read: open(O_RDONLY) fsnotify_open FS_OPEN; read(2) fsnotify_access
//     FS_ACCESS; close fsnotify_close FS_CLOSE_NOWRITE.
//   - write: open(O_WRONLY) FS_OPEN; write(2) fsnotify_modify FS_MODIFY;
//     close FS_CLOSE_WRITE.
//   - opendir: open(O_RDONLY|O_DIRECTORY) FS_OPEN; close FS_CLOSE_NOWRITE.
//   - chmod: notify_change -> fsnotify_change FS_ATTRIB.
//
// Events on a directory carry FS_ISDIR (fsnotify_parent adds it).
func Hooks(op, obj string) []Hook {
	var evs []uint32
	switch op {
	case "read":
		evs = []uint32{unix.FAN_OPEN, unix.FAN_ACCESS, unix.FAN_CLOSE_NOWRITE}
	case "write":
		evs = []uint32{unix.FAN_OPEN, unix.FAN_MODIFY, unix.FAN_CLOSE_WRITE}
	case "opendir":
		evs = []uint32{unix.FAN_OPEN, unix.FAN_CLOSE_NOWRITE}
	case "chmod":
		evs = []uint32{unix.FAN_ATTRIB}
	}
	out := make([]Hook, len(evs))
	for i, e := range evs {
		out[i] = Hook{e, obj}
	}
	return out
}

// Act runs the hooks of an operation through the model and returns every
// group's events.
func (w *World) Act(op, obj string) []Event {
	var out []Event
	for _, h := range Hooks(op, obj) {
		out = append(out, w.deliver(h)...)
	}
	return out
}

func (w *World) deliver(h Hook) []Event {
	k := w.K
	isDir := w.nodes[h.Obj]
	parent := parentOf(h.Obj)
	role := func(m *Mark) (Loc, bool) {
		switch {
		case m.Loc != LocSelf:
			return m.Loc, true
		case m.Obj == h.Obj:
			return LocSelf, true
		case m.Obj == parent:
			return LocParent, true
		}
		return 0, false
	}
	groups, order := k.route(w.marks, role, h.Ev)
	var out []Event
	for _, g := range order {
		if w.kinds[g].Inotify {
			out = append(out, w.inotifyEvents(g, groups[g], h, isDir)...)
			continue
		}
		if m := k.fanotifyMask(groups[g], h.Ev, isDir, w.kinds[g].FID); m != 0 {
			out = append(out, Event{Group: g, Obj: h.Obj, Mask: m})
		}
	}
	return out
}

// inotifyEvents is send_to_group + fsnotify_handle_event() +
// inotify_handle_inode_event() for one inotify instance: "If both parent dir
// and child are watching, report the event once to parent dir with name (if
// interested) and once to child without name (if interested)"; IN_ISDIR
// for directories; an IN_ONESHOT watch is destroyed after its event, which
// reports IN_IGNORED.
func (w *World) inotifyEvents(g int, vs []visit, h Hook, isDir bool) []Event {
	k := w.K
	var out []Event
	flag := uint32(0)
	if isDir {
		k.hit(RuleInotifyIsdir)
		flag = unix.IN_ISDIR
	}
	sentParent := false
	for _, pass := range []Loc{LocParent, LocSelf} {
		for _, v := range vs {
			if v.role != pass || h.Ev&v.m.Mask == 0 {
				continue
			}
			if pass == LocSelf && sentParent && k.faulty(FaultInotifyParentOnly) {
				continue
			}
			ev := Event{Group: g, Obj: v.m.Obj, Mask: h.Ev | flag}
			if pass == LocParent {
				k.hit(RuleInotifyParent)
				ev.Name = path.Base(h.Obj)
				sentParent = true
			} else {
				k.hit(RuleInotifySelf)
			}
			out = append(out, ev)
			if v.m.Oneshot && !k.faulty(FaultInotifyOneshotStays) {
				k.hit(RuleInotifyOneshot)
				if i, _ := w.find(g, LocSelf, v.m.Obj); i >= 0 {
					w.drop(i)
				}
				out = append(out, Event{Group: g, Obj: v.m.Obj, Mask: unix.IN_IGNORED})
			}
		}
	}
	return out
}

// Fold is the comparison's one normalisation of legitimate variation: the
// events of one group in one step are folded into one mask per (object,
// name), and groups are compared separately. fanotify merges an event into
// an earlier queued one of the same object and pid (fanotify_merge,
// fanotify_should_merge), inotify drops a duplicate of the last queued event
// (inotify_merge), and the order between groups is the order of their
// priorities and marks, which fanotify(7) does not promise; so neither the
// number of records nor the order of different objects is compared, only
// which events each group got on which object. The result is sorted.
func Fold(evs []Event) []Event {
	type key struct {
		g         int
		obj, name string
	}
	acc := map[key]uint32{}
	for _, e := range evs {
		acc[key{e.Group, e.Obj, e.Name}] |= e.Mask
	}
	out := make([]Event, 0, len(acc))
	for k, m := range acc {
		out = append(out, Event{Group: k.g, Obj: k.obj, Name: k.name, Mask: m})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Obj != b.Obj {
			return a.Obj < b.Obj
		}
		return a.Name < b.Name
	})
	return out
}
