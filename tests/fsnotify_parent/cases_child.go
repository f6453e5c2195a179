package main

import (
	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
)

// Masks used throughout. inotify: every watch on a directory also watches its
// children for the events in its mask that are possible on a child
// (inotify(7): "When a directory is monitored, inotify will return events for
// the directory itself, and for files inside the directory"; fs/notify/inotify/
// inotify_user.c inotify_arg_to_mask always sets FS_EVENT_ON_CHILD). fanotify:
// a directory's inode mark reports its children's events only with
// FAN_EVENT_ON_CHILD (fanotify_mark(2)).
const (
	inFileEvents  = unix.IN_OPEN | unix.IN_ACCESS | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_CLOSE_NOWRITE
	fanFileEvents = unix.FAN_OPEN | unix.FAN_ACCESS | unix.FAN_MODIFY | unix.FAN_CLOSE_WRITE | unix.FAN_CLOSE_NOWRITE
	onChild       = unix.FAN_EVENT_ON_CHILD
)

var childCases = concat(
	pair("child_cached_before_watch",
		"children whose dentries were cached (one stat'ed, one held open) before the watch report to it with their names (inotify(7); fsnotify_set_children_dentry_flags)",
		cachedBeforeWatchInotify,
		"children cached or open before the FAN_EVENT_ON_CHILD mark report DFID_NAME(parent,name)+FID (fanotify_mark(2); fsnotify_set_children_dentry_flags)",
		cachedBeforeWatchFanotify),
	pair("child_created_after_watch",
		"a child created after the watch (on a cached negative dentry) reports IN_CREATE then its open/modify/close with its name (inotify(7); d_instantiate -> fsnotify_update_flags)",
		createdAfterWatchInotify,
		"a child created after the mark (on a cached negative dentry) reports FAN_CREATE then FAN_OPEN/MODIFY/CLOSE_WRITE with DFID_NAME (fanotify_init(2) FAN_REPORT_NAME; fsnotify_update_flags)",
		createdAfterWatchFanotify),
	pair("hardlink_two_parents",
		"an operation through a hard link reaches only the parent of the path used, with that path's name (__fsnotify_parent takes the parent of file->f_path.dentry)",
		hardlinkInotify,
		"an operation through a hard link reaches only the mark on the parent of the path used, named by that path (__fsnotify_parent, fanotify_init(2) FAN_REPORT_NAME)",
		hardlinkFanotify),
	pair("parent_and_child_one_group",
		"parent and child watched in one instance: each watch gets its mask's events once, the parent's with the name and first (fsnotify.c fsnotify_handle_event)",
		parentChildOneInotify,
		"parent (ON_CHILD) and child marked in one group: one event per operation, the union of the marks' interest, never duplicated (fsnotify.c send_to_group once per group)",
		parentChildOneFanotify),
	pair("parent_and_child_two_groups",
		"parent and child watched in two instances: each instance gets exactly what its watch asked for (fsnotify.c fsnotify, one send_to_group per group)",
		parentChildTwoInotify,
		"parent and child marked in two groups: each group gets exactly what its mark asked for (fsnotify.c fsnotify, one send_to_group per group)",
		parentChildTwoFanotify),
	[]harness.Case{{
		Name: "parent_uninterested_child_interested.inotify",
		Doc: "an instance whose directory watch does not want an event its file watch wants still gets it on the file watch, " +
			"while another instance's directory watch that wants it makes the event go through the directory (fsnotify.c fsnotify_handle_event)",
		Run: parentUninterestedInotify,
	}},
)

func concat(parts ...[]harness.Case) []harness.Case {
	var out []harness.Case
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func cachedBeforeWatchInotify(t *harness.T) {
	e := newEnv(t)
	a := e.file(e.w, "a", "data")
	b := e.file(e.w, "b", "")
	fdB := e.open(b, unix.O_WRONLY)
	l := e.inotify()
	wd := l.watch(e.w, inFileEvents)
	e.write(fdB)
	l.check(iev(wd, unix.IN_MODIFY, "b"))
	e.close(fdB)
	l.check(iev(wd, unix.IN_CLOSE_WRITE, "b"))
	fd := e.open(a, unix.O_RDONLY)
	l.check(iev(wd, unix.IN_OPEN, "a"))
	e.read(fd)
	l.check(iev(wd, unix.IN_ACCESS, "a"))
	e.close(fd)
	l.check(iev(wd, unix.IN_CLOSE_NOWRITE, "a"))
	l.quiet()
}

func cachedBeforeWatchFanotify(t *harness.T) {
	e := newEnv(t)
	a := e.file(e.w, "a", "data")
	b := e.file(e.w, "b", "")
	fidA, fidB := e.fid(a), e.fid(b)
	fdB := e.open(b, unix.O_WRONLY)
	g := e.fanotify("p")
	g.mark(0, fanFileEvents|onChild, e.w)
	e.write(fdB)
	g.check(e.fev(unix.FAN_MODIFY, e.child(e.w, "b", fidB)...))
	e.close(fdB)
	g.check(e.fev(unix.FAN_CLOSE_WRITE, e.child(e.w, "b", fidB)...))
	fd := e.open(a, unix.O_RDONLY)
	g.check(e.fev(unix.FAN_OPEN, e.child(e.w, "a", fidA)...))
	e.read(fd)
	g.check(e.fev(unix.FAN_ACCESS, e.child(e.w, "a", fidA)...))
	e.close(fd)
	g.check(e.fev(unix.FAN_CLOSE_NOWRITE, e.child(e.w, "a", fidA)...))
	g.quiet()
}

func createdAfterWatchInotify(t *harness.T) {
	e := newEnv(t)
	e.negative(e.w + "/c")
	l := e.inotify()
	wd := l.watch(e.w, inFileEvents|unix.IN_CREATE)
	// open(O_CREAT) of a new name: IN_CREATE (fsnotify_create from the
	// directory operation) then IN_OPEN (fsnotify_open on the new file).
	fd := e.open(e.w+"/c", unix.O_CREAT|unix.O_WRONLY)
	l.check(iev(wd, unix.IN_CREATE, "c"), iev(wd, unix.IN_OPEN, "c"))
	e.write(fd)
	l.check(iev(wd, unix.IN_MODIFY, "c"))
	e.close(fd)
	l.check(iev(wd, unix.IN_CLOSE_WRITE, "c"))
	l.quiet()
}

func createdAfterWatchFanotify(t *harness.T) {
	e := newEnv(t)
	e.negative(e.w + "/c")
	g := e.fanotify("p")
	g.mark(0, fanFileEvents|unix.FAN_CREATE|onChild, e.w)
	c := e.w + "/c"
	fd := e.open(c, unix.O_CREAT|unix.O_WRONLY)
	// The new dentry exists now (the actor made it); looking it up for its
	// handle does not change whether it is flagged.
	fidC := e.fid(c)
	// Directory entry events carry only DFID_NAME without
	// FAN_REPORT_TARGET_FID (fanotify_init(2)); FAN_OPEN carries DFID_NAME+FID.
	g.check(e.fev(unix.FAN_CREATE, e.dname(e.w, "c")), e.fev(unix.FAN_OPEN, e.child(e.w, "c", fidC)...))
	e.write(fd)
	g.check(e.fev(unix.FAN_MODIFY, e.child(e.w, "c", fidC)...))
	e.close(fd)
	g.check(e.fev(unix.FAN_CLOSE_WRITE, e.child(e.w, "c", fidC)...))
	g.quiet()
}

// writeThrough opens p for writing, writes and closes it through the actor,
// running check after each of the three calls.
func (e *env) writeThrough(p string, afterOpen, afterWrite, afterClose func()) {
	fd := e.open(p, unix.O_WRONLY)
	afterOpen()
	e.write(fd)
	afterWrite()
	e.close(fd)
	afterClose()
}

func hardlinkInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	g := e.u + "/g"
	if err := unix.Link(f, g); err != nil {
		t.Fatalf("setup: link: %v", err)
	}
	e.cache(g)
	l := e.inotify()
	const m = unix.IN_OPEN | unix.IN_MODIFY | unix.IN_CLOSE_WRITE
	wdW := l.watch(e.w, m)
	none := func() { l.check() }
	e.writeThrough(g, none, none, none)
	e.writeThrough(f,
		func() { l.check(iev(wdW, unix.IN_OPEN, "f")) },
		func() { l.check(iev(wdW, unix.IN_MODIFY, "f")) },
		func() { l.check(iev(wdW, unix.IN_CLOSE_WRITE, "f")) })
	wdU := l.watch(e.u, m)
	e.writeThrough(g,
		func() { l.check(iev(wdU, unix.IN_OPEN, "g")) },
		func() { l.check(iev(wdU, unix.IN_MODIFY, "g")) },
		func() { l.check(iev(wdU, unix.IN_CLOSE_WRITE, "g")) })
	e.writeThrough(f,
		func() { l.check(iev(wdW, unix.IN_OPEN, "f")) },
		func() { l.check(iev(wdW, unix.IN_MODIFY, "f")) },
		func() { l.check(iev(wdW, unix.IN_CLOSE_WRITE, "f")) })
	l.quiet()
}

func hardlinkFanotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	gp := e.u + "/g"
	if err := unix.Link(f, gp); err != nil {
		t.Fatalf("setup: link: %v", err)
	}
	e.cache(gp)
	fid := e.fid(f) // one inode, one FID, two names
	const m = unix.FAN_OPEN | unix.FAN_MODIFY | unix.FAN_CLOSE_WRITE
	g := e.fanotify("p")
	g.mark(0, m|onChild, e.w)
	none := func() { g.check() }
	viaW := func(mask uint64) func() {
		return func() { g.check(e.fev(mask, e.child(e.w, "f", fid)...)) }
	}
	viaU := func(mask uint64) func() {
		return func() { g.check(e.fev(mask, e.child(e.u, "g", fid)...)) }
	}
	e.writeThrough(gp, none, none, none)
	e.writeThrough(f, viaW(unix.FAN_OPEN), viaW(unix.FAN_MODIFY), viaW(unix.FAN_CLOSE_WRITE))
	g.mark(0, m|onChild, e.u)
	e.writeThrough(gp, viaU(unix.FAN_OPEN), viaU(unix.FAN_MODIFY), viaU(unix.FAN_CLOSE_WRITE))
	e.writeThrough(f, viaW(unix.FAN_OPEN), viaW(unix.FAN_MODIFY), viaW(unix.FAN_CLOSE_WRITE))
	g.quiet()
}

// Parent watches MODIFY|CLOSE_WRITE, child watches OPEN|MODIFY: an open is
// the child's only, a write both's, a close the parent's only.

func parentChildOneInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	l := e.inotify()
	wdW := l.watch(e.w, unix.IN_MODIFY|unix.IN_CLOSE_WRITE)
	wdF := l.watch(f, unix.IN_OPEN|unix.IN_MODIFY)
	// fsnotify_handle_event: the parent mark is handled first (with the
	// name), then the inode mark without name; each only if its own mask has
	// the event (fsnotify_handle_inode_event "Check interest of this mark").
	e.writeThrough(f,
		func() { l.check(iev(wdF, unix.IN_OPEN, "")) },
		func() { l.check(iev(wdW, unix.IN_MODIFY, "f"), iev(wdF, unix.IN_MODIFY, "")) },
		func() { l.check(iev(wdW, unix.IN_CLOSE_WRITE, "f")) })
	l.quiet()
}

// parentUninterestedInotify: instance p watches the directory for IN_OPEN,
// so the directory wants its children's opens and an open of f goes to
// fsnotify with the parent (FS_EVENT_ON_CHILD, __fsnotify_parent). Instance
// c watches the directory for IN_MODIFY only and f for IN_OPEN. For c,
// fsnotify_handle_event hands the event to its directory watch first, which
// does not want it (fsnotify_handle_inode_event: "Check interest of this
// mark"), and then to its file watch, which does: c reads IN_OPEN on f's
// wd, without a name, and nothing on the directory's; p reads IN_OPEN
// with the name (inotify(7): each watch reports the events of its mask,
// a directory watch with the entry's name). A kernel that ends c's
// delivery at the uninterested directory watch loses c's event. A kernel
// of the 5.9 rework without fecc4559780d ("fsnotify: fix events reported
// to watching parent and child", December 2020) gave c IN_OPEN "f" on its
// directory watch instead.
func parentUninterestedInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	lp, lc := e.inotify(), e.inotify()
	wdP := lp.watch(e.w, unix.IN_OPEN)
	lc.watch(e.w, unix.IN_MODIFY)
	wdF := lc.watch(f, unix.IN_OPEN)
	fd := e.open(f, unix.O_RDONLY)
	lp.check(iev(wdP, unix.IN_OPEN, "f"))
	lc.check(iev(wdF, unix.IN_OPEN, ""))
	e.close(fd)
	e.quiet(lp, lc)
}

func parentChildTwoInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	lp, lc := e.inotify(), e.inotify()
	wdW := lp.watch(e.w, unix.IN_MODIFY|unix.IN_CLOSE_WRITE)
	wdF := lc.watch(f, unix.IN_OPEN|unix.IN_MODIFY)
	both := func(p, c []inotify.Event) func() {
		return func() { lp.check(p...); lc.check(c...) }
	}
	e.writeThrough(f,
		both(nil, []inotify.Event{iev(wdF, unix.IN_OPEN, "")}),
		both([]inotify.Event{iev(wdW, unix.IN_MODIFY, "f")}, []inotify.Event{iev(wdF, unix.IN_MODIFY, "")}),
		both([]inotify.Event{iev(wdW, unix.IN_CLOSE_WRITE, "f")}, nil))
	e.quiet(lp, lc)
}

func parentChildOneFanotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fid := e.fid(f)
	g := e.fanotify("pc")
	g.mark(0, unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE|onChild, e.w)
	g.mark(0, unix.FAN_OPEN|unix.FAN_MODIFY, f)
	ev := func(mask uint64) func() {
		return func() { g.check(e.fev(mask, e.child(e.w, "f", fid)...)) }
	}
	e.writeThrough(f, ev(unix.FAN_OPEN), ev(unix.FAN_MODIFY), ev(unix.FAN_CLOSE_WRITE))
	g.quiet()
}

func parentChildTwoFanotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fid := e.fid(f)
	gp, gc := e.fanotify("parent"), e.fanotify("child")
	gp.mark(0, unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE|onChild, e.w)
	gc.mark(0, unix.FAN_OPEN|unix.FAN_MODIFY, f)
	// A group with FAN_REPORT_DIR_FID gets parent and name on a non-dir
	// inode mark too (fanotify_user.c adds FAN_EVENT_ON_CHILD to it;
	// fanotify_init(2): "For other events that occur on a non-directory
	// object, the reported file handle is that of the parent directory").
	rec := e.child(e.w, "f", fid)
	e.writeThrough(f,
		func() { gp.check(); gc.check(e.fev(unix.FAN_OPEN, rec...)) },
		func() { gp.check(e.fev(unix.FAN_MODIFY, rec...)); gc.check(e.fev(unix.FAN_MODIFY, rec...)) },
		func() { gp.check(e.fev(unix.FAN_CLOSE_WRITE, rec...)); gc.check() })
	e.quiet(gp, gc)
}
