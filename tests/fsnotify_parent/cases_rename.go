package main

import (
	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
)

// Renames move a dentry between parents (__d_move, which re-evaluates the
// PARENT_WATCHED flag through fsnotify_update_flags). The child is held open
// by the actor across the rename, so later events come from the same struct
// file whose f_path.dentry now has the new parent and name.
const (
	inMoves  = unix.IN_MOVED_FROM | unix.IN_MOVED_TO
	fanMoves = unix.FAN_MOVED_FROM | unix.FAN_MOVED_TO
	inRW     = unix.IN_OPEN | unix.IN_MODIFY | unix.IN_CLOSE_WRITE
	fanRW    = unix.FAN_OPEN | unix.FAN_MODIFY | unix.FAN_CLOSE_WRITE
)

var renameCases = concat(
	pair("rename_into_watched",
		"a child renamed from an unwatched dir into the watched one: IN_MOVED_TO, then its events arrive under the new name (inotify(7); __d_move -> fsnotify_update_flags)",
		renameIntoInotify,
		"a child renamed into the marked dir: FAN_MOVED_TO, then its events arrive with DFID_NAME(new parent, new name) (fanotify_init(2) FAN_REPORT_NAME)",
		renameIntoFanotify),
	pair("rename_out_of_watched",
		"a child renamed out of the watched dir: IN_MOVED_FROM, then no more of its events (inotify(7); __d_move)",
		renameOutInotify,
		"a child renamed out of the marked dir: FAN_MOVED_FROM, then no more of its events (fanotify_mark(2) FAN_EVENT_ON_CHILD: immediate children only)",
		renameOutFanotify),
	pair("rename_within_watched",
		"a child renamed inside the watched dir: IN_MOVED_FROM/IN_MOVED_TO with one cookie, then events carry the new name (inotify(7))",
		renameWithinInotify,
		"a child renamed inside the marked dir: FAN_MOVED_FROM/FAN_MOVED_TO, then events carry the new name (fanotify_init(2) FAN_REPORT_NAME)",
		renameWithinFanotify),
	pair("rename_watched_dir",
		"the watched dir itself renamed: IN_MOVE_SELF (no IN_ISDIR: inotify_handle_inode_event), and its children keep reporting to the same watch (watches follow inodes: inotify(7))",
		renameDirInotify,
		"the marked dir itself renamed: FAN_MOVE_SELF|FAN_ONDIR with DFID_NAME(dir,\".\"), children keep reporting (fanotify_init(2): events on a directory report its own handle and \".\")",
		renameDirFanotify),
)

func renameIntoInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.u, "f", "")
	fd := e.open(f, unix.O_WRONLY)
	l := e.inotify()
	wd := l.watch(e.w, inRW|inMoves)
	e.write(fd)
	l.check() // parent is u, not watched
	e.rename(f, e.w+"/g")
	l.check(ievc(wd, unix.IN_MOVED_TO, "g", 1))
	e.write(fd)
	l.check(iev(wd, unix.IN_MODIFY, "g"))
	e.close(fd)
	l.check(iev(wd, unix.IN_CLOSE_WRITE, "g"))
	l.quiet()
}

func renameIntoFanotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.u, "f", "")
	fid := e.fid(f) // a handle does not change with the name
	fd := e.open(f, unix.O_WRONLY)
	g := e.fanotify("p")
	g.mark(0, fanRW|fanMoves|onChild, e.w)
	e.write(fd)
	g.check()
	e.rename(f, e.w+"/g")
	g.check(e.fev(unix.FAN_MOVED_TO, e.dname(e.w, "g")))
	e.write(fd)
	g.check(e.fev(unix.FAN_MODIFY, e.child(e.w, "g", fid)...))
	e.close(fd)
	g.check(e.fev(unix.FAN_CLOSE_WRITE, e.child(e.w, "g", fid)...))
	g.quiet()
}

func renameOutInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fd := e.open(f, unix.O_WRONLY)
	l := e.inotify()
	wd := l.watch(e.w, inRW|inMoves)
	e.write(fd)
	l.check(iev(wd, unix.IN_MODIFY, "f"))
	e.rename(f, e.u+"/g")
	l.check(ievc(wd, unix.IN_MOVED_FROM, "f", 1))
	e.write(fd)
	l.check()
	e.close(fd)
	l.check()
	fd = e.open(e.u+"/g", unix.O_WRONLY)
	l.check()
	e.close(fd)
	l.quiet()
}

func renameOutFanotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fid := e.fid(f)
	fd := e.open(f, unix.O_WRONLY)
	g := e.fanotify("p")
	g.mark(0, fanRW|fanMoves|onChild, e.w)
	e.write(fd)
	g.check(e.fev(unix.FAN_MODIFY, e.child(e.w, "f", fid)...))
	e.rename(f, e.u+"/g")
	g.check(e.fev(unix.FAN_MOVED_FROM, e.dname(e.w, "f")))
	e.write(fd)
	g.check()
	e.close(fd)
	g.check()
	fd = e.open(e.u+"/g", unix.O_WRONLY)
	g.check()
	e.close(fd)
	g.quiet()
}

func renameWithinInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fd := e.open(f, unix.O_WRONLY)
	l := e.inotify()
	wd := l.watch(e.w, inRW|inMoves)
	e.rename(f, e.w+"/g")
	// fsnotify_move: MOVED_FROM (old name) then MOVED_TO (new name), one
	// cookie (inotify(7): "the two events ... have the same cookie").
	l.check(ievc(wd, unix.IN_MOVED_FROM, "f", 1), ievc(wd, unix.IN_MOVED_TO, "g", 1))
	e.write(fd)
	l.check(iev(wd, unix.IN_MODIFY, "g"))
	e.close(fd)
	l.check(iev(wd, unix.IN_CLOSE_WRITE, "g"))
	l.quiet()
}

func renameWithinFanotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fid := e.fid(f)
	fd := e.open(f, unix.O_WRONLY)
	g := e.fanotify("p")
	g.mark(0, fanRW|fanMoves|onChild, e.w)
	e.rename(f, e.w+"/g")
	g.check(e.fev(unix.FAN_MOVED_FROM, e.dname(e.w, "f")), e.fev(unix.FAN_MOVED_TO, e.dname(e.w, "g")))
	e.write(fd)
	g.check(e.fev(unix.FAN_MODIFY, e.child(e.w, "g", fid)...))
	e.close(fd)
	g.check(e.fev(unix.FAN_CLOSE_WRITE, e.child(e.w, "g", fid)...))
	g.quiet()
}

func renameDirInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fd := e.open(f, unix.O_WRONLY)
	l := e.inotify()
	wd := l.watch(e.w, inRW|unix.IN_MOVE_SELF)
	w2 := e.root + "/w2"
	e.rename(e.w, w2)
	// fsnotify_move -> fsnotify_inode(source, FS_MOVE_SELF) adds FS_ISDIR for
	// a directory, but fs/notify/inotify/inotify_fsnotify.c
	// inotify_handle_inode_event masks it out of IN_MOVE_SELF/IN_DELETE_SELF
	// ("inotify never reported IN_ISDIR with those events").
	l.check(iev(wd, unix.IN_MOVE_SELF, ""))
	e.write(fd)
	l.check(iev(wd, unix.IN_MODIFY, "f"))
	e.close(fd)
	l.check(iev(wd, unix.IN_CLOSE_WRITE, "f"))
	e.writeThrough(w2+"/f",
		func() { l.check(iev(wd, unix.IN_OPEN, "f")) },
		func() { l.check(iev(wd, unix.IN_MODIFY, "f")) },
		func() { l.check(iev(wd, unix.IN_CLOSE_WRITE, "f")) })
	l.quiet()
}

func renameDirFanotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fid := e.fid(f)
	self := e.dname(e.w, ".")
	rec := e.child(e.w, "f", fid) // the directory's handle survives the rename
	fd := e.open(f, unix.O_WRONLY)
	g := e.fanotify("p")
	g.mark(0, fanRW|unix.FAN_MOVE_SELF|unix.FAN_ONDIR|onChild, e.w)
	w2 := e.root + "/w2"
	e.rename(e.w, w2)
	g.check(e.fev(unix.FAN_MOVE_SELF|unix.FAN_ONDIR, self))
	e.write(fd)
	g.check(e.fev(unix.FAN_MODIFY, rec...))
	e.close(fd)
	g.check(e.fev(unix.FAN_CLOSE_WRITE, rec...))
	ev := func(mask uint64) func() { return func() { g.check(e.fev(mask, rec...)) } }
	e.writeThrough(w2+"/f", ev(unix.FAN_OPEN), ev(unix.FAN_MODIFY), ev(unix.FAN_CLOSE_WRITE))
	g.quiet()
}
