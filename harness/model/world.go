package model

import (
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// GroupKind is the kind of one group of a World: an inotify instance or a
// fanotify group of some class and reporting mode.
type GroupKind struct {
	Name    string
	Inotify bool
	Init    uint // fanotify_init(2) flags (class and FAN_REPORT_*)
	FID     bool // reports FID records (FAN_REPORT_FID, or FAN_REPORT_DFID_NAME with DirName)
	DirName bool // FAN_REPORT_DFID_NAME: directory fid + entry name records
	Perm    bool // FAN_CLASS_CONTENT or FAN_CLASS_PRE_CONTENT: may mark permission events
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
	// Rec is the record type a FAN_REPORT_DFID_NAME group reports the
	// object with: "dfid_name" (directory fid + name; Obj is the entry, or
	// the directory itself for the name ".") or "fid" (no directory).
	Rec string
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
	empty  map[string]bool // files with no data (read(2) returns 0: no FS_ACCESS)
	// staleParent: with FaultRenameStaleParent, a renamed object's old parent.
	staleParent map[string]string
	// fifo: the objects that are FIFOs (SetFIFO).
	fifo map[string]bool
	// linked: a link(2) succeeded; the model does not follow a hardlink
	// pair, so no step may follow (Link).
	linked bool
	// writers: how many descriptors the actor holds open for write on
	// each object (the operations "openw" and "closew"): a non-surviving
	// ignore mask is not added to an inode open for write
	// (inode_is_open_for_write: in fanotify_add_inode_mark on 6.1, in
	// do_fanotify_mark on 7.3; MarkAdd, Target.OpenForWrite). The
	// explorer holds a file so within one step only: no rename or unlink
	// meets a held descriptor.
	writers map[string]int
}

// afterLink panics when a step follows a successful link(2).
func (w *World) afterLink() {
	if w.linked {
		panic("model: a step after link(2): the model does not follow a hardlink pair")
	}
}

// NewWorld returns a model of a tree (object -> is a directory) and groups.
// Every object's parent must be in the tree, except "."'s; its files have
// data.
func NewWorld(k Kernel, tree map[string]bool, kinds []GroupKind) *World {
	nodes := map[string]bool{}
	for n, d := range tree {
		nodes[n] = d
	}
	return &World{K: k, nodes: nodes, kinds: kinds, nextWd: map[int]int32{}, empty: map[string]bool{}, staleParent: map[string]string{}, fifo: map[string]bool{}, writers: map[string]int{}}
}

// SetFIFO says that obj, a non-directory of the tree, is a FIFO.
func (w *World) SetFIFO(obj string) { w.fifo[obj] = true }

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

// permEvents is FANOTIFY_PERM_EVENTS (without the pre-content event).
// What a group reporting fds may mark, and what a mount mark may carry, is
// fdEvents.
const permEvents = unix.FAN_OPEN_PERM | unix.FAN_ACCESS_PERM | unix.FAN_OPEN_EXEC_PERM

// fdEvents is FANOTIFY_FD_EVENTS | FANOTIFY_EVENT_FLAGS.
const fdEvents = unix.FAN_ACCESS | unix.FAN_MODIFY | unix.FAN_CLOSE | unix.FAN_OPEN |
	unix.FAN_OPEN_EXEC | unix.FAN_OPEN_PERM | unix.FAN_ACCESS_PERM | unix.FAN_OPEN_EXEC_PERM | fsEventFlags

// FanMark applies fanotify_mark(flags, mask) of fanotify group g on obj
// (ignored for FAN_MARK_MOUNT / FAN_MARK_FILESYSTEM, which mark the
// scenario's filesystem) and returns the errno the call must fail with.
func (w *World) FanMark(g int, flags uint, mask uint32, obj string) unix.Errno {
	w.afterLink()
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
	// do_fanotify_mark: permission events need a group of a content class
	// ("group->priority == FS_PRIO_0": EINVAL; fanotify_mark(2)).
	if mask&permEvents != 0 && !w.kinds[g].Perm {
		k.hit(RuleErrPermNotif)
		return unix.EINVAL
	}
	if _, ok := w.nodes[obj]; loc == LocSelf && !ok {
		return unix.ENOENT // fanotify_find_path
	}
	// fanotify_find_path: FAN_MARK_ONLYDIR looks up with LOOKUP_DIRECTORY
	// ("ENOTDIR: flags contains FAN_MARK_ONLYDIR, and dirfd and pathname do
	// not specify a directory", fanotify_mark(2)); mount and filesystem
	// marks here name the mount root, a directory.
	if flags&unix.FAN_MARK_ONLYDIR != 0 && loc == LocSelf && !w.nodes[obj] {
		k.hit(RuleErrOnlydir)
		return unix.ENOTDIR
	}
	isDir := loc == LocSelf && w.nodes[obj]
	i, m := w.find(g, loc, obj)
	if flags&unix.FAN_MARK_REMOVE != 0 {
		return w.fanRemove(i, m, flags, mask, loc, isDir)
	}
	tg := Target{Loc: loc, IsDir: isDir, OpenForWrite: loc == LocSelf && w.writers[obj] > 0}
	nm, errno := k.MarkAdd(m, g, flags, mask, tg, w.kinds[g].DirName)
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
	// do_fanotify_mark: "Event flags (FAN_ONDIR, FAN_EVENT_ON_CHILD) have
	// no effect with FAN_MARK_IGNORED_MASK": they are dropped from the mask
	// and are bits the call cannot remove (umask = FANOTIFY_EVENT_FLAGS);
	// for sb/mount/non-dir marks FAN_EVENT_ON_CHILD is masked out and the
	// umask is set to it alone ("umask = FAN_EVENT_ON_CHILD", which
	// replaces the former).
	var umask uint32
	if flags&(unix.FAN_MARK_IGNORED_MASK|unix.FAN_MARK_IGNORE) == unix.FAN_MARK_IGNORED_MASK {
		mask &^= fsEventFlags
		umask = fsEventFlags
	}
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
	w.afterLink()
	k := w.K
	if _, ok := w.nodes[obj]; !ok {
		return 0, unix.ENOENT // inotify_find_inode
	}
	// inotify(7) IN_ONLYDIR: "Watch pathname only if it is a directory";
	// ENOTDIR otherwise (inotify_find_inode with LOOKUP_DIRECTORY).
	if mask&unix.IN_ONLYDIR != 0 && !w.nodes[obj] {
		k.hit(RuleErrOnlydir)
		return 0, unix.ENOTDIR
	}
	// inotify_arg_to_mask: "All directories care about children."
	bits := mask & inotifyMaskBits
	if w.nodes[obj] {
		bits |= fsOnChild
	}
	oneshot := mask&unix.IN_ONESHOT != 0
	// inotify_arg_to_flags: IN_EXCL_UNLINK and IN_ONESHOT become mark
	// flags, replaced with the mask (or ORed in with IN_MASK_ADD) by
	// inotify_update_existing_watch.
	excl := mask&unix.IN_EXCL_UNLINK != 0
	i, m := w.find(g, LocSelf, obj)
	if m != nil {
		nm := *m
		// inotify_update_existing_watch: without IN_MASK_ADD the mask and
		// the flags are replaced.
		if mask&unix.IN_MASK_ADD == 0 || k.faulty(FaultInotifyMaskAddReplaces) {
			nm.Mask, nm.Oneshot, nm.ExclUnlink = 0, false, false
		}
		k.hit(RuleInotifyMaskAdd)
		nm.Mask |= bits
		nm.Oneshot = nm.Oneshot || oneshot
		nm.ExclUnlink = nm.ExclUnlink || excl
		w.marks[i] = &nm
		return nm.Wd, 0
	}
	w.nextWd[g]++
	nm := &Mark{Group: g, Loc: LocSelf, Obj: obj, Inotify: true, Mask: bits, Wd: w.nextWd[g], Oneshot: oneshot, ExclUnlink: excl}
	w.marks = append(w.marks, nm)
	return nm.Wd, 0
}

// InRm applies inotify_rm_watch() of the watch of group g on obj: EINVAL when
// there is none, else the watch goes and reports IN_IGNORED.
func (w *World) InRm(g int, obj string) (unix.Errno, []Event) {
	w.afterLink()
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
	Ev    uint32
	Obj   string // the object whose own (inode) marks see the event
	IsDir bool   // the event carries FS_ISDIR
	// Name is the entry a dirent event (FS_CREATE, FS_DELETE) names in Obj,
	// the directory; "" for other events.
	Name string
	// InodeOnly: fsnotify_inode() (FS_DELETE_SELF, the FS_ATTRIB of a link
	// count change): no parent is notified and, without a path, no mount
	// mark is visited; the filesystem's marks are.
	InodeOnly bool
	// NoPath: dirent events are reported with a dentry, not a path
	// (fsnotify_name with FSNOTIFY_EVENT_DENTRY): no mount mark is visited.
	NoPath bool
	// Unlinked: an event on a path (FSNOTIFY_EVENT_PATH: fsnotify_file
	// through an open file) whose dentry was unlinked (d_unlinked); an
	// inotify watch with IN_EXCL_UNLINK drops it.
	Unlinked bool
}

// Ops are the file operations the model knows, with the kind of object
// each acts on ("file" or "dir").
var Ops = map[string]string{
	"read": "file", "write": "file", "chmod": "", "opendir": "dir",
	"create": "file", "unlink": "file", "mkdir": "dir", "rmdir": "dir",
	"unlinkrw": "file", "fifo": "fifo", "openw": "file", "closew": "file",
}

// hooks returns the errno of an operation of the actor on obj and the
// fsnotify hooks it calls, in order (include/linux/fsnotify.h, fs/namei.c):
//   - read: open(O_RDONLY) fsnotify_open_perm FS_OPEN_PERM (do_dentry_open)
//     and fsnotify_open FS_OPEN; read(2) rw_verify_area ->
//     fsnotify_file_area_perm FS_ACCESS_PERM (MAY_READ only), then
//     fsnotify_access FS_ACCESS (not from a file with no data: vfs_read
//     notifies only when it read something); close FS_CLOSE_NOWRITE.
//   - write: open(O_WRONLY) FS_OPEN_PERM, FS_OPEN; write(2) fsnotify_modify
//     FS_MODIFY (no FS_ACCESS_PERM for a write); close FS_CLOSE_WRITE.
//   - opendir: open(O_RDONLY|O_DIRECTORY) FS_OPEN_PERM, FS_OPEN; close
//     FS_CLOSE_NOWRITE.
//   - chmod: notify_change -> fsnotify_change FS_ATTRIB (fsnotify_dentry:
//     parent notified, no path).
//   - create: open(O_CREAT|O_EXCL|O_WRONLY) fsnotify_create FS_CREATE on the
//     directory with the name, FS_OPEN_PERM, FS_OPEN; close FS_CLOSE_WRITE.
//   - mkdir: fsnotify_mkdir FS_CREATE|FS_ISDIR on the directory.
//   - unlink: vfs_unlink fsnotify_link_count FS_ATTRIB on the inode, then
//     d_delete_notify: d_delete -> dentry_unlink_inode ->
//     fsnotify_inoderemove FS_DELETE_SELF and the inode's marks go
//     (inotify: IN_IGNORED); fsnotify_delete FS_DELETE on the directory.
//   - rmdir: the same without the link count FS_ATTRIB, with FS_ISDIR.
//   - fifo (a FIFO opened O_RDWR, a byte written and read back, closed):
//     the hooks of a regular file opened for reading and writing -
//     FS_OPEN_PERM, FS_OPEN (do_dentry_open, do_open -> fsnotify_open;
//     the FIFO's own open, fifo_open, adds none), write(2) FS_MODIFY
//     (vfs_write notifies after pipe_write returned a count), read(2)
//     rw_verify_area FS_ACCESS_PERM, FS_ACCESS (vfs_read after
//     pipe_read), close FS_CLOSE_WRITE. fs/pipe.c calls no fsnotify hook
//     itself. Since 6.14 file_set_fsnotify_mode_from_watchers() disables
//     only the pre-content events for files neither regular nor
//     directories (FMODE_NONOTIFY_HSM), which the generator does not mark.
//     The events of the write and the read (FS_MODIFY, FS_ACCESS) do
//     not reach the FIFO's parent (635bc4def026, deliver); its open and
//     close do.
//   - unlinkrw (an unlinked child used through an open file): open(O_RDWR)
//     FS_OPEN_PERM, FS_OPEN; unlink(2) as above, except that the open
//     file holds the dentry: d_delete only drops it (__d_drop, the dentry
//     is not the last reference) and FS_DELETE_SELF waits for the last
//     dput; read(2) of one byte at offset 0 FS_ACCESS_PERM, FS_ACCESS (not
//     from a file with no data); write(2) twice, FS_MODIFY twice; close
//     FS_CLOSE_WRITE, then the dput of the last reference ->
//     dentry_unlink_inode -> fsnotify_inoderemove FS_DELETE_SELF, and the
//     inode's marks go. The last reference is __fput's, or that of a
//     queued event of an fd-reporting fanotify group (it holds the path:
//     fanotify_alloc_path_event), freed when the group is read; the
//     explorer reads those groups first, so either way FS_DELETE_SELF
//     comes last in the step. The events through the open file after the unlink
//     carry the unlinked path (Unlinked): the dentry keeps its name and
//     its parent (d_parent), so __fsnotify_parent still notifies the
//     directory (inotify(7) IN_EXCL_UNLINK: "By default, when watching
//     events on the children of a directory, events are generated for
//     children even after they have been unlinked from the directory").
//   - openw: open(O_WRONLY) of a regular file, the descriptor kept:
//     FS_OPEN_PERM, FS_OPEN; the inode is open for write (do_dentry_open
//     -> file_get_write_access raises i_writecount; not for a FIFO or
//     another special file, which the model does not open so: EINVAL)
//     until closew.
//   - closew: the close of a descriptor openw kept: FS_CLOSE_WRITE
//     (fsnotify_close: FMODE_WRITE, written to or not); EBADF when none
//     is held.
//
// Events on a directory carry FS_ISDIR (fsnotify_parent and fsnotify_inode
// add it). An operation on a missing object is ENOENT; create and mkdir of
// an existing name EEXIST; rmdir of a non-empty directory ENOTEMPTY.
func (w *World) hooks(op, obj string) (unix.Errno, []Hook) {
	_, exists := w.nodes[obj]
	isDir := w.nodes[obj]
	parent := parentOf(obj)
	if _, ok := w.nodes[parent]; !ok && obj != "." {
		return unix.ENOENT, nil
	}
	name := path.Base(obj)
	switch op {
	case "create", "mkdir":
		if exists {
			return unix.EEXIST, nil
		}
		if op == "mkdir" {
			return 0, []Hook{{Ev: unix.FAN_CREATE, Obj: parent, IsDir: true, Name: name, NoPath: true}}
		}
		return 0, []Hook{{Ev: unix.FAN_CREATE, Obj: parent, Name: name, NoPath: true},
			{Ev: unix.FAN_OPEN_PERM, Obj: obj}, {Ev: unix.FAN_OPEN, Obj: obj}, {Ev: unix.FAN_CLOSE_WRITE, Obj: obj}}
	}
	if !exists {
		return unix.ENOENT, nil
	}
	switch op {
	case "fifo":
		if isDir {
			return unix.EISDIR, nil
		}
		if !w.fifo[obj] {
			return unix.EINVAL, nil // the explorer does this only to a FIFO
		}
		w.K.hit(RuleFifo)
		evs := []uint32{unix.FAN_OPEN_PERM, unix.FAN_OPEN, unix.FAN_MODIFY, unix.FAN_ACCESS_PERM, unix.FAN_ACCESS, unix.FAN_CLOSE_WRITE}
		var out []Hook
		for _, e := range evs {
			if e&(unix.FAN_ACCESS|unix.FAN_MODIFY) != 0 && w.K.faulty(FaultFifoReadWriteSilent) {
				continue
			}
			out = append(out, Hook{Ev: e, Obj: obj})
		}
		return 0, out
	case "unlinkrw":
		if isDir {
			return unix.EISDIR, nil // open(O_RDWR) of a directory
		}
		k := w.K
		out := []Hook{{Ev: unix.FAN_OPEN_PERM, Obj: obj}, {Ev: unix.FAN_OPEN, Obj: obj},
			{Ev: unix.FAN_ATTRIB, Obj: obj, InodeOnly: true}}
		if k.faulty(FaultDeleteSelfAtUnlink) {
			out = append(out, Hook{Ev: unix.FAN_DELETE_SELF, Obj: obj, InodeOnly: true})
		}
		out = append(out, Hook{Ev: unix.FAN_DELETE, Obj: parent, Name: name, NoPath: true},
			Hook{Ev: unix.FAN_ACCESS_PERM, Obj: obj, Unlinked: true})
		if !w.empty[obj] {
			out = append(out, Hook{Ev: unix.FAN_ACCESS, Obj: obj, Unlinked: true})
		}
		out = append(out, Hook{Ev: unix.FAN_MODIFY, Obj: obj, Unlinked: true},
			Hook{Ev: unix.FAN_MODIFY, Obj: obj, Unlinked: true},
			Hook{Ev: unix.FAN_CLOSE_WRITE, Obj: obj, Unlinked: true})
		if !k.faulty(FaultDeleteSelfAtUnlink) {
			k.hit(RuleUnlinkedOpen)
			out = append(out, Hook{Ev: unix.FAN_DELETE_SELF, Obj: obj, InodeOnly: true})
		}
		return 0, out
	case "openw":
		switch {
		case isDir:
			return unix.EISDIR, nil
		case w.fifo[obj]:
			return unix.EINVAL, nil // the explorer holds only regular files open
		}
		return 0, []Hook{{Ev: unix.FAN_OPEN_PERM, Obj: obj}, {Ev: unix.FAN_OPEN, Obj: obj}}
	case "closew":
		if w.writers[obj] == 0 {
			return unix.EBADF, nil
		}
		return 0, []Hook{{Ev: unix.FAN_CLOSE_WRITE, Obj: obj}}
	case "unlink":
		return 0, []Hook{{Ev: unix.FAN_ATTRIB, Obj: obj, InodeOnly: true},
			{Ev: unix.FAN_DELETE_SELF, Obj: obj, InodeOnly: true},
			{Ev: unix.FAN_DELETE, Obj: parent, Name: name, NoPath: true}}
	case "rmdir":
		if w.hasChildren(obj) {
			return unix.ENOTEMPTY, nil
		}
		return 0, []Hook{{Ev: unix.FAN_DELETE_SELF, Obj: obj, IsDir: true, InodeOnly: true},
			{Ev: unix.FAN_DELETE, Obj: parent, IsDir: true, Name: name, NoPath: true}}
	}
	var evs []uint32
	switch op {
	case "read":
		evs = []uint32{unix.FAN_OPEN_PERM, unix.FAN_OPEN, unix.FAN_ACCESS_PERM, unix.FAN_ACCESS, unix.FAN_CLOSE_NOWRITE}
		if w.empty[obj] {
			// vfs_read: fsnotify_access only "if (ret > 0)".
			evs = []uint32{unix.FAN_OPEN_PERM, unix.FAN_OPEN, unix.FAN_ACCESS_PERM, unix.FAN_CLOSE_NOWRITE}
		}
	case "write":
		evs = []uint32{unix.FAN_OPEN_PERM, unix.FAN_OPEN, unix.FAN_MODIFY, unix.FAN_CLOSE_WRITE}
	case "opendir":
		evs = []uint32{unix.FAN_OPEN_PERM, unix.FAN_OPEN, unix.FAN_CLOSE_NOWRITE}
	case "chmod":
		return 0, []Hook{{Ev: unix.FAN_ATTRIB, Obj: obj, IsDir: isDir, NoPath: true}}
	}
	out := make([]Hook, len(evs))
	for i, e := range evs {
		out[i] = Hook{Ev: e, Obj: obj, IsDir: isDir}
	}
	return 0, out
}

// Act runs an operation of the actor through the model: its errno, and
// every group's events. The tree changes with create, mkdir, unlink and
// rmdir (isDir gives a new object's kind).
func (w *World) Act(op, obj string) (unix.Errno, []Event) {
	w.afterLink()
	errno, hs := w.hooks(op, obj)
	var out []Event
	for _, h := range hs {
		if h.Name != "" {
			w.K.hit(RuleDirent)
		}
		out = append(out, w.deliver(h)...)
		if h.Ev == unix.FAN_DELETE_SELF {
			w.K.hit(RuleDeleteSelf)
			// fsnotify_inoderemove -> fsnotify_clear_marks_by_inode.
			out = append(out, w.clearMarks(h.Obj)...)
		}
	}
	switch {
	case errno != 0:
	case op == "create":
		w.nodes[obj] = false
		w.empty[obj] = true
	case op == "write":
		delete(w.empty, obj)
	case op == "openw":
		w.writers[obj]++
	case op == "closew":
		w.writers[obj]--
	case op == "mkdir":
		w.nodes[obj] = true
	case op == "unlink", op == "rmdir", op == "unlinkrw":
		delete(w.fifo, obj)
		delete(w.nodes, obj)
		delete(w.empty, obj)
	}
	return errno, out
}

// Rename runs rename(from, to) of the actor through the model
// (fs/namei.c do_renameat2, vfs_rename; fsnotify_move): its errno, and every
// group's events. The errno checks, in the kernel's order: a missing
// source or target directory ENOENT; a source that is an ancestor of the
// target EINVAL; over an existing name, a directory over a non-directory
// ENOTDIR, a non-directory over a directory EISDIR (may_delete), a
// directory over a non-empty one ENOTEMPTY. The same name is a no-op.
//
// The hooks (fsnotify_move): FS_MOVED_FROM on the old directory and
// FS_MOVED_TO on the new one, with the names (no path: no mount mark);
// the link count FS_ATTRIB of an overwritten target (fsnotify_link_count);
// FS_MOVE_SELF on the moved inode (fsnotify_inode). FS_ISDIR for a
// directory. An overwritten target loses its last link: at the final dput
// dentry_unlink_inode -> fsnotify_inoderemove, FS_DELETE_SELF and its
// marks go. The moved object's marks go with it (they are on the inode),
// and its parent is the new directory from then on (__d_move updates the
// dentry's parent-watched flag: fsnotify_update_flags).
func (w *World) Rename(from, to string) (unix.Errno, []Event) {
	w.afterLink()
	k := w.K
	isDir, ok := w.nodes[from]
	if !ok || from == "." {
		return unix.ENOENT, nil
	}
	if _, ok := w.nodes[parentOf(to)]; !ok {
		return unix.ENOENT, nil
	}
	if from == to {
		return 0, nil
	}
	if strings.HasPrefix(to, from+"/") {
		return unix.EINVAL, nil
	}
	tDir, target := w.nodes[to]
	if target {
		switch {
		case isDir && !tDir:
			return unix.ENOTDIR, nil
		case !isDir && tDir:
			return unix.EISDIR, nil
		case tDir && w.hasChildren(to):
			return unix.ENOTEMPTY, nil
		}
	}
	k.hit(RuleRename)
	hooks := []Hook{
		{Ev: unix.FAN_MOVED_FROM, Obj: parentOf(from), IsDir: isDir, Name: path.Base(from), NoPath: true},
		{Ev: unix.FAN_MOVED_TO, Obj: parentOf(to), IsDir: isDir, Name: path.Base(to), NoPath: true},
	}
	var out []Event
	for _, h := range hooks {
		out = append(out, w.deliver(h)...)
	}
	if target {
		out = append(out, w.deliver(Hook{Ev: unix.FAN_ATTRIB, Obj: to, IsDir: tDir, InodeOnly: true})...)
	}
	if !k.faulty(FaultRenameNoMoveSelf) {
		out = append(out, w.deliver(Hook{Ev: unix.FAN_MOVE_SELF, Obj: from, IsDir: isDir, InodeOnly: true})...)
	}
	if target {
		k.hit(RuleRenameOverwrite)
		out = append(out, w.deliver(Hook{Ev: unix.FAN_DELETE_SELF, Obj: to, IsDir: tDir, InodeOnly: true})...)
		out = append(out, w.clearMarks(to)...)
		delete(w.nodes, to)
		delete(w.empty, to)
	}
	// The object (and anything under it) takes its new name.
	rename := func(n string) (string, bool) {
		if n == from {
			return to, true
		}
		if rest, ok := strings.CutPrefix(n, from+"/"); ok {
			return to + "/" + rest, true
		}
		return n, false
	}
	nodes, empty, fifo := map[string]bool{}, map[string]bool{}, map[string]bool{}
	delete(w.fifo, to) // an overwritten target
	for n, d := range w.nodes {
		nn, _ := rename(n)
		nodes[nn] = d
	}
	for n := range w.fifo {
		nn, _ := rename(n)
		fifo[nn] = true
	}
	w.fifo = fifo
	for n := range w.empty {
		nn, _ := rename(n)
		empty[nn] = true
	}
	w.nodes, w.empty = nodes, empty
	for i, m := range w.marks {
		if nn, ok := rename(m.Obj); ok && m.Loc == LocSelf {
			cp := *m
			cp.Obj = nn
			w.marks[i] = &cp
		}
	}
	if k.faulty(FaultRenameStaleParent) {
		w.staleParent[to] = parentOf(from)
	}
	return 0, out
}

// Link runs link(from, to) of the actor through the model (fs/namei.c
// do_linkat, vfs_link; fsnotify_link): its errno, and every group's
// events. The errno checks, in the kernel's order: a missing source or
// target directory ENOENT (the lookups), an existing target EEXIST
// (filename_create), a directory source EPERM (vfs_link; link(2) "EPERM
// oldpath is a directory").
//
// The hooks (fsnotify_link): fsnotify_link_count FS_ATTRIB on the inode
// (fsnotify_inode: its own marks, the filesystem's, no parent, no mount
// mark), then FS_CREATE on the new directory with the new name (no path).
//
// The model does not follow the hardlink pair afterwards (events through
// either name are the one inode's): a link must be the last step of a
// scenario, and World panics on any later step.
func (w *World) Link(from, to string) (unix.Errno, []Event) {
	w.afterLink()
	k := w.K
	isDir, ok := w.nodes[from]
	if !ok {
		return unix.ENOENT, nil
	}
	// The target "." is the scenario directory itself, an existing name
	// (filename_create: EEXIST), not a name in a missing directory.
	if _, ok := w.nodes[parentOf(to)]; !ok && to != "." {
		return unix.ENOENT, nil
	}
	if _, ok := w.nodes[to]; ok {
		return unix.EEXIST, nil
	}
	if isDir {
		return unix.EPERM, nil
	}
	k.hit(RuleLink)
	var out []Event
	if !k.faulty(FaultLinkNoAttrib) {
		out = append(out, w.deliver(Hook{Ev: unix.FAN_ATTRIB, Obj: from, InodeOnly: true})...)
	}
	out = append(out, w.deliver(Hook{Ev: unix.FAN_CREATE, Obj: parentOf(to), Name: path.Base(to), NoPath: true})...)
	w.linked = true
	return 0, out
}

func (w *World) hasChildren(dir string) bool {
	for n := range w.nodes {
		if parentOf(n) == dir && n != "." {
			return true
		}
	}
	return false
}

// clearMarks destroys every mark on obj; an inotify watch reports IN_IGNORED
// (inotify_freeing_mark).
func (w *World) clearMarks(obj string) []Event {
	var out []Event
	kept := w.marks[:0:0]
	for _, m := range w.marks {
		if m.Loc != LocSelf || m.Obj != obj {
			kept = append(kept, m)
			continue
		}
		if m.Inotify {
			out = append(out, Event{Group: m.Group, Obj: obj, Mask: unix.IN_IGNORED})
		}
	}
	w.marks = kept
	return out
}

func (w *World) deliver(h Hook) []Event {
	k := w.K
	parent := parentOf(h.Obj)
	if p, ok := w.staleParent[h.Obj]; ok {
		parent = p // FaultRenameStaleParent
	}
	// __fsnotify_parent (635bc4def026 "fsnotify: do not generate
	// ACCESS/MODIFY events on child for special files"): "The parent
	// interest in ACCESS/MODIFY events does not apply to special files" -
	// parent_interested is false for a path event (FSNOTIFY_EVENT_PATH) on
	// a d_is_special dentry (a FIFO) with FS_ACCESS or FS_MODIFY. No
	// FS_EVENT_ON_CHILD, so fsnotify() does not iterate the parent's marks
	// at all (no inode2 of type FSNOTIFY_ITER_TYPE_PARENT): a parent's
	// watch or FAN_EVENT_ON_CHILD mark gets nothing, its ignore mask hides
	// nothing from the other mark types and is not cleared by the FIFO's
	// FS_MODIFY. The FIFO's own marks, the mount's and the filesystem's
	// still get the event, and a group that wants the parent and name
	// (parent_needed: do_fanotify_mark gives a FAN_REPORT_DIR_FID group's marks
	// FAN_EVENT_ON_CHILD) still gets them (dfidName).
	special := w.fifo[h.Obj] && !h.NoPath && !h.InodeOnly &&
		h.Ev&(unix.FAN_ACCESS|unix.FAN_MODIFY) != 0 && !k.faulty(FaultSpecialAccessToParent)
	skipped := false
	role := func(m *Mark) (Loc, bool) {
		switch {
		case m.Loc == LocMount:
			return LocMount, !h.InodeOnly && !h.NoPath
		case m.Loc != LocSelf:
			return m.Loc, true
		case m.Obj == h.Obj:
			return LocSelf, true
		case m.Obj == parent && h.Name == "" && !h.InodeOnly:
			if h.Unlinked && k.faulty(FaultUnlinkedNotToParent) {
				return 0, false
			}
			if special {
				skipped = true
				return 0, false
			}
			return LocParent, true
		}
		return 0, false
	}
	groups, order := k.route(w.marks, role, h.Ev)
	if skipped {
		k.hit(RuleSpecialNoParent)
	}
	var out []Event
	for _, g := range order {
		if w.kinds[g].Inotify {
			out = append(out, w.inotifyEvents(g, groups[g], h)...)
			continue
		}
		if m := k.fanotifyMask(groups[g], h.Ev, h.IsDir, w.kinds[g].FID); m != 0 {
			// fanotify_group_event_mask, for a group reporting fds: "Path
			// type events are only relevant for files and dirs" - no event
			// on a FIFO (after send_to_group cleared ignore masks).
			if !w.kinds[g].FID && w.fifo[h.Obj] && !k.faulty(FaultFdGroupFifoEvents) {
				k.hit(RuleFanotifyRegDirOnly)
				continue
			}
			ev := Event{Group: g, Obj: h.Obj, Mask: m}
			if w.kinds[g].DirName {
				var ok bool
				if ev.Obj, ev.Rec, ok = k.dfidName(h); !ok {
					continue
				}
			}
			out = append(out, ev)
		}
	}
	return out
}

// dfidName is what a FAN_REPORT_DFID_NAME group reports an event with
// (fanotify_alloc_event, fanotify_dfid_inode, copy_info_records_to_user),
// or false when it reports none:
//   - a dirent event: the directory's fid and the entry's name;
//   - an event on a directory: its own fid and the name ".";
//   - an event on a non-directory with its parent (every hook that goes
//     through fsnotify_parent: the group's marks carry FS_EVENT_ON_CHILD,
//     so __fsnotify_parent passes the parent and name): the parent's fid and
//     the name;
//   - an event on a non-directory without a parent (fsnotify_inode:
//     FS_DELETE_SELF, FS_MOVE_SELF, a link count FS_ATTRIB): none.
//     fanotify_group_event_mask, for a group with FAN_REPORT_DIR_FID but
//     not FAN_REPORT_FID: "Do we have a directory inode to report?"
func (k Kernel) dfidName(h Hook) (string, string, bool) {
	switch {
	case h.Name != "":
		return path.Join(h.Obj, h.Name), "dfid_name", true
	case h.IsDir:
		return h.Obj, "dfid_name", true
	case h.InodeOnly:
		if k.faulty(FaultDFIDFileSelfEvents) {
			return h.Obj, "fid", true
		}
		k.hit(RuleDFIDNoDir)
		return "", "", false
	}
	return h.Obj, "dfid_name", true
}

// inotifyEvents is send_to_group + fsnotify_handle_event() +
// inotify_handle_inode_event() for one inotify instance: "If both parent dir
// and child are watching, report the event once to parent dir with name (if
// interested) and once to child without name (if interested)"; IN_ISDIR
// for directories; an IN_ONESHOT watch is destroyed after its event, which
// reports IN_IGNORED.
func (w *World) inotifyEvents(g int, vs []visit, h Hook) []Event {
	k := w.K
	var out []Event
	flag := uint32(0)
	// inotify_handle_inode_event: IN_ISDIR is masked out of IN_DELETE_SELF
	// and IN_MOVE_SELF ("to avoid the risk of breaking existing inotify programs").
	if h.IsDir && h.Ev != unix.IN_DELETE_SELF && h.Ev != unix.IN_MOVE_SELF {
		k.hit(RuleInotifyIsdir)
		flag = unix.IN_ISDIR
	}
	sentParent := false
	for _, pass := range []Loc{LocParent, LocSelf} {
		for _, v := range vs {
			if v.role != pass || h.Ev&v.m.Mask == 0 {
				continue
			}
			// fsnotify_handle_inode_event: "if ((inode_mark->flags &
			// FSNOTIFY_MARK_FLAG_EXCL_UNLINK) && path &&
			// d_unlinked(path->dentry)) return 0;" - for the parent's
			// watch and the child's own alike (inotify(7) IN_EXCL_UNLINK).
			if v.m.ExclUnlink && h.Unlinked && !k.faulty(FaultExclUnlinkIgnored) {
				k.hit(RuleInotifyExclUnlink)
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
				ev.Name = h.Name // a dirent event names the entry
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

// Fold is the comparison's normalisation of a fanotify group's events in
// one step: they are folded into one mask per (object, name, record), and
// groups are compared separately. fanotify merges an event into an earlier
// queued one of the same object, type and pid (fanotify_merge,
// fanotify_should_merge in fs/notify/fanotify/fanotify.c), and fanotify(7)
// promises no order between events; so neither the number of records nor
// their order is compared, only which events each group got on which
// object. The explorer checks separately, on the kernel's side, that the
// kernel merged what fanotify_should_merge says must merge (unmerged in
// tests/fsnotify_explore/kernel.go). The result is sorted.
func Fold(evs []Event) []Event {
	type key struct {
		g              int
		obj, name, rec string
	}
	acc := map[key]uint32{}
	for _, e := range evs {
		acc[key{e.Group, e.Obj, e.Name, e.Rec}] |= e.Mask
	}
	out := make([]Event, 0, len(acc))
	for k, m := range acc {
		out = append(out, Event{Group: k.g, Obj: k.obj, Name: k.name, Rec: k.rec, Mask: m})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Obj != b.Obj {
			return a.Obj < b.Obj
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Rec < b.Rec
	})
	return out
}

// InotifyMerge is inotify_merge (fs/notify/inotify/inotify_fsnotify.c) for
// the model's predictions: fsnotify_insert_event (fs/notify/notification.c)
// offers each new event to inotify_merge, which drops it when event_compare
// finds it equal to the tail of the instance's queue (same mask, wd and
// name; never into a queued IN_IGNORED). inotify(7): "If successive output
// inotify events produced on the inotify file descriptor are identical
// (same wd, mask, cookie, and name), then they are coalesced into a single
// event if the older event has not yet been read". The explorer reads a
// queue only after a step, so within a step the kernel never delivers two
// such successive events of one instance; the kernel's side is therefore
// compared raw, and a doubled delivery is a mismatch. inotify reports the
// events of one step in the order of the fsnotify calls, a parent's watch
// before the child's own (fsnotify_handle_event), through one queue per
// instance: that order is compared exactly.
func InotifyMerge(kinds []GroupKind, evs []Event) []Event { return Fixed.InotifyMerge(kinds, evs) }

// InotifyMerge is the package-level InotifyMerge under this kernel (its fault, its coverage).
func (k Kernel) InotifyMerge(kinds []GroupKind, evs []Event) []Event {
	if k.faulty(FaultInotifyNoCoalesce) {
		return evs
	}
	var out []Event
	tail := map[int]int{} // group -> index in out of its queue's tail
	for _, e := range evs {
		if kinds[e.Group].Inotify {
			if i, ok := tail[e.Group]; ok && out[i] == e && e.Mask&unix.IN_IGNORED == 0 {
				k.hit(RuleInotifyCoalesce)
				continue
			}
			if k.faulty(FaultInotifyCoalesceAny) && e.Mask&unix.IN_IGNORED == 0 && slices.Contains(out, e) {
				continue
			}
			tail[e.Group] = len(out)
		}
		out = append(out, e)
	}
	return out
}

// Normalise prepares one step's events for the comparison: groups in
// index order (the order between groups is that of their priorities and
// marks, which neither man page promises); an inotify group's events as
// the exact sequence its queue delivered; a fanotify group's events folded
// (Fold).
func Normalise(kinds []GroupKind, evs []Event) []Event {
	var fan []Event
	seq := map[int][]Event{}
	for _, e := range evs {
		if kinds[e.Group].Inotify {
			seq[e.Group] = append(seq[e.Group], e)
		} else {
			fan = append(fan, e)
		}
	}
	out := Fold(fan)
	for g := range kinds {
		if len(seq[g]) == 0 {
			continue
		}
		i := sort.Search(len(out), func(i int) bool { return out[i].Group > g })
		out = append(out[:i], append(seq[g], out[i:]...)...)
	}
	return out
}

// permRank is a group's place in the order fsnotify() offers it a
// permission event: fsnotify_iter_select_report_types picks, among the
// heads of every mark list the event visits, the group that
// fsnotify_compare_groups puts first, the one of higher priority
// (FS_PRIO_2 for FAN_CLASS_PRE_CONTENT, FS_PRIO_1 for FAN_CLASS_CONTENT);
// fanotify_handle_event then waits for the group's answer before the next
// group is offered the event. fanotify(7) FAN_CLASS_PRE_CONTENT /
// FAN_CLASS_CONTENT: the order in which listeners receive events.
func permRank(k GroupKind) int {
	switch {
	case k.Init&unix.FAN_CLASS_PRE_CONTENT == unix.FAN_CLASS_PRE_CONTENT:
		return 2
	case k.Init&unix.FAN_CLASS_CONTENT != 0:
		return 1
	}
	return 0
}

// PermOrder is the model's order in which groups receive each permission
// event of a step (see permRank): the events of evs with a permission
// bit, each group's in priority order, rendered by RenderPermOrder. Groups
// of one class are not ordered (fsnotify_compare_groups then compares the
// groups' addresses).
func (k Kernel) PermOrder(kinds []GroupKind, evs []Event) []string {
	var perm []Event
	for _, e := range evs {
		if !kinds[e.Group].Inotify && e.Mask&permEvents != 0 {
			perm = append(perm, e)
		}
	}
	sort.SliceStable(perm, func(i, j int) bool {
		ri, rj := permRank(kinds[perm[i].Group]), permRank(kinds[perm[j].Group])
		if k.faulty(FaultPermClassOrderReversed) {
			ri, rj = rj, ri
		}
		return ri > rj
	})
	if len(perm) > 0 {
		k.hit(RulePermClassOrder)
	}
	return RenderPermOrder(kinds, perm)
}

// RenderPermOrder renders the order in which groups received each
// permission event (mask bit and object), evs in that order: one line per
// event that groups of more than one class received, listing the classes
// in order, each with its groups (sorted, since groups of one class are
// not ordered), e.g. "FAN_OPEN_PERM f: pre_content{g1} < content{g0,g2}".
func RenderPermOrder(kinds []GroupKind, evs []Event) []string {
	type key struct {
		bit uint32
		obj string
	}
	var keys []key
	seq := map[key][]int{}
	for _, e := range evs {
		for bit := uint32(1); bit != 0; bit <<= 1 {
			if e.Mask&bit&permEvents == 0 {
				continue
			}
			kk := key{bit, e.Obj}
			if _, ok := seq[kk]; !ok {
				keys = append(keys, kk)
			}
			seq[kk] = append(seq[kk], e.Group)
		}
	}
	var out []string
	for _, kk := range keys {
		var runs []string
		var cur []int
		curName := ""
		classes := 0
		flush := func() {
			if len(cur) == 0 {
				return
			}
			sort.Ints(cur)
			var gs []string
			for _, g := range cur {
				gs = append(gs, "g"+strconv.Itoa(g))
			}
			runs = append(runs, curName+"{"+strings.Join(gs, ",")+"}")
			cur = nil
		}
		for _, g := range seq[kk] {
			if n := kinds[g].Name; n != curName {
				flush()
				curName = n
				classes++
			}
			cur = append(cur, g)
		}
		flush()
		if classes > 1 {
			out = append(out, permName(kk.bit)+" "+kk.obj+": "+strings.Join(runs, " < "))
		}
	}
	return out
}

func permName(bit uint32) string {
	switch bit {
	case unix.FAN_OPEN_PERM:
		return "FAN_OPEN_PERM"
	case unix.FAN_ACCESS_PERM:
		return "FAN_ACCESS_PERM"
	case unix.FAN_OPEN_EXEC_PERM:
		return "FAN_OPEN_EXEC_PERM"
	}
	return "perm:" + strconv.FormatUint(uint64(bit), 16)
}
