package main

import (
	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
)

// The parent's interest changes while its children stay cached and open: the
// flag on the children is set by the walk when the parent starts watching
// children (fs/notify/mark.c fsnotify_recalc_mask ->
// fsnotify_set_children_dentry_flags) and cleared lazily on the next child
// event once it stopped (fsnotify.c fsnotify_clear_child_dentry_flag).
var maskCases = concat(
	pair("watch_removed",
		"after inotify_rm_watch the parent gets IN_IGNORED and no more child events; a new watch gets only its own mask's events (inotify(7), inotify_rm_watch(2))",
		watchRemovedInotify,
		"after FAN_MARK_REMOVE the group gets no more child events; a new mark gets only its own mask's events (fanotify_mark(2))",
		watchRemovedFanotify),
	pair("mask_child_events_toggle",
		"a watch whose mask gains (IN_MASK_ADD), loses and regains a child event reports it exactly while it is in the mask (inotify(7) IN_MASK_ADD; fsnotify_inode_watches_children)",
		maskToggleInotify,
		"a mark that gains, loses and regains FAN_EVENT_ON_CHILD reports child events exactly while it has it (fanotify_mark(2) FAN_EVENT_ON_CHILD)",
		maskToggleFanotify),
)

func watchRemovedInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fd := e.open(f, unix.O_WRONLY)
	l := e.inotify()
	wd := l.watch(e.w, inRW)
	e.write(fd)
	l.check(iev(wd, unix.IN_MODIFY, "f"))
	l.rm(wd)
	// inotify(7) IN_IGNORED: "Watch was removed explicitly (inotify_rm_watch(2))".
	l.check(iev(wd, unix.IN_IGNORED, ""))
	e.write(fd)
	l.check()
	e.writeThrough(f, func() { l.check() }, func() { l.check() }, func() { l.check() })
	wd2 := l.watch(e.w, unix.IN_CLOSE_WRITE)
	e.write(fd)
	l.check()
	e.close(fd)
	l.check(iev(wd2, unix.IN_CLOSE_WRITE, "f"))
	l.quiet()
}

func watchRemovedFanotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fid := e.fid(f)
	fd := e.open(f, unix.O_WRONLY)
	g := e.fanotify("p")
	g.mark(0, fanRW|onChild, e.w)
	e.write(fd)
	g.check(e.fev(unix.FAN_MODIFY, e.child(e.w, "f", fid)...))
	// Removing every bit of the mask destroys the mark (fanotify_mark(2)
	// FAN_MARK_REMOVE).
	g.unmark(0, fanRW|onChild, e.w)
	e.write(fd)
	g.check()
	e.writeThrough(f, func() { g.check() }, func() { g.check() }, func() { g.check() })
	g.mark(0, unix.FAN_CLOSE_WRITE|onChild, e.w)
	e.write(fd)
	g.check()
	e.close(fd)
	g.check(e.fev(unix.FAN_CLOSE_WRITE, e.child(e.w, "f", fid)...))
	g.quiet()
}

func maskToggleInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fd := e.open(f, unix.O_WRONLY)
	l := e.inotify()
	// IN_CREATE alone is a directory-entry event, none possible on a child
	// (FS_EVENTS_POSS_ON_CHILD), so the directory does not watch children.
	wd := l.watch(e.w, unix.IN_CREATE)
	same := func(got int32) {
		// inotify_add_watch(2): on an object already watched by this
		// instance, the existing watch descriptor is returned.
		if got != wd {
			t.Errorf("inotify_add_watch on the watched dir returned wd %d, want the existing wd %d", got, wd)
		}
	}
	e.write(fd)
	l.check()
	same(l.watch(e.w, unix.IN_MODIFY|unix.IN_MASK_ADD))
	e.write(fd)
	l.check(iev(wd, unix.IN_MODIFY, "f"))
	same(l.watch(e.w, unix.IN_CREATE)) // replaces the mask: no child event left
	e.write(fd)
	l.check()
	e.write(fd)
	l.check()
	same(l.watch(e.w, unix.IN_MODIFY|unix.IN_MASK_ADD))
	e.write(fd)
	l.check(iev(wd, unix.IN_MODIFY, "f"))
	e.close(fd) // IN_CLOSE_WRITE is not in the mask
	l.check()
	l.quiet()
}

func maskToggleFanotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fid := e.fid(f)
	fd := e.open(f, unix.O_WRONLY)
	g := e.fanotify("p")
	// Without FAN_EVENT_ON_CHILD a directory mark reports only events on the
	// directory itself (fanotify_mark(2)).
	g.mark(0, unix.FAN_MODIFY, e.w)
	e.write(fd)
	g.check()
	g.mark(0, unix.FAN_MODIFY|onChild, e.w)
	e.write(fd)
	g.check(e.fev(unix.FAN_MODIFY, e.child(e.w, "f", fid)...))
	g.unmark(0, onChild, e.w)
	e.write(fd)
	g.check()
	e.write(fd)
	g.check()
	g.mark(0, unix.FAN_MODIFY|onChild, e.w)
	e.write(fd)
	g.check(e.fev(unix.FAN_MODIFY, e.child(e.w, "f", fid)...))
	e.close(fd)
	g.check()
	g.quiet()
}
