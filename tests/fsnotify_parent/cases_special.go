package main

import (
	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// Special files (FIFO, character device) in a watched directory. Their
// read/write happen outside the parent's filesystem, and fs/notify/fsnotify.c
// __fsnotify_parent does not treat the parent as interested in
// FS_ACCESS/FS_MODIFY of a special file (d_is_special) reported with a path:
// "The parent interest in ACCESS/MODIFY events does not apply to special
// files, where read/write are not on the filesystem of the parent and events
// can provide an undesirable side-channel for information exfiltration."
// Open and close still reach the parent; a watch on the special file itself
// gets everything. A kernel without that fix also reports the read and write
// to the parent's watch or mark, with the name, as for a regular file; the
// HINT is printed only when the case saw exactly that (env.confirmPreFix).
var sideChannelFix = &harness.Fix{
	Commit:  "635bc4def026a24e071436f4f356ea08c0eed6ff",
	Subject: "fsnotify: do not generate ACCESS/MODIFY events on child for special files",
}

var specialCases = withFix(sideChannelFix, concat(
	pair("special_fifo",
		"FIFO in a watched dir: open/close reach the parent watch, read/write only the FIFO's own watch (fsnotify.c __fsnotify_parent d_is_special rule)",
		func(t *harness.T) { specialInotify(t, unix.S_IFIFO, 0) },
		"FIFO in a marked dir: FAN_OPEN/FAN_CLOSE_WRITE reach the parent's group, FAN_ACCESS/FAN_MODIFY only the FIFO's own mark (fsnotify.c __fsnotify_parent)",
		func(t *harness.T) { specialFanotify(t, unix.S_IFIFO, 0) }),
	pair("special_chardev",
		"char device (1:5, like /dev/zero) in a watched dir: open/close reach the parent, read/write only the device's own watch (fsnotify.c __fsnotify_parent)",
		func(t *harness.T) { specialInotify(t, unix.S_IFCHR, int(unix.Mkdev(1, 5))) },
		"char device (1:5) in a marked dir: FAN_OPEN/FAN_CLOSE_WRITE reach the parent's group, FAN_ACCESS/FAN_MODIFY only the device's own mark (fsnotify.c __fsnotify_parent)",
		func(t *harness.T) { specialFanotify(t, unix.S_IFCHR, int(unix.Mkdev(1, 5))) }),
))

func withFix(f *harness.Fix, cs []harness.Case) []harness.Case {
	for i := range cs {
		cs[i].Fix = f
	}
	return cs
}

// mkspecial makes w/s in setup. The fixture filesystems are mounted without
// MS_NODEV, so a device node opens. A device node refused for lack of
// CAP_MKNOD (in a user namespace) skips the case: that is no kernel's lack
// of 635bc4def026.
func (e *env) mkspecial(kind uint32, dev int) string {
	p := e.w + "/s"
	setup.Mknod(e.t, p, kind|0o666, dev)
	e.cache(p)
	return p
}

// The actor opens the special file O_RDWR (a FIFO opened O_RDWR does not
// block on Linux, fifo(7)), writes one byte, reads one byte (the FIFO gives it
// back; 1:5 gives a zero byte) and closes it. vfs_write/vfs_read report
// FS_MODIFY/FS_ACCESS only when they moved bytes.

func specialInotify(t *harness.T, kind uint32, dev int) {
	e := newEnv(t)
	s := e.mkspecial(kind, dev)
	l := e.inotify()
	wdP := l.watch(e.w, inFileEvents)
	wdS := l.watch(s, inFileEvents)
	fd := e.open(s, unix.O_RDWR)
	// Parent mark first, then the inode mark (fsnotify_handle_event).
	l.check(iev(wdP, unix.IN_OPEN, "s"), iev(wdS, unix.IN_OPEN, ""))
	e.write(fd)
	// Without 635bc4def026 the parent's watch gets it too, first.
	l.checkPre([]inotify.Event{iev(wdP, unix.IN_MODIFY, "s"), iev(wdS, unix.IN_MODIFY, "")},
		iev(wdS, unix.IN_MODIFY, ""))
	e.read(fd)
	l.checkPre([]inotify.Event{iev(wdP, unix.IN_ACCESS, "s"), iev(wdS, unix.IN_ACCESS, "")},
		iev(wdS, unix.IN_ACCESS, ""))
	e.close(fd)
	l.check(iev(wdP, unix.IN_CLOSE_WRITE, "s"), iev(wdS, unix.IN_CLOSE_WRITE, ""))
	l.quiet()
	e.confirmPreFix(sideChannelFix)
}

func specialFanotify(t *harness.T, kind uint32, dev int) {
	e := newEnv(t)
	s := e.mkspecial(kind, dev)
	rec := e.child(e.w, "s", e.fid(s))
	// Two groups, so that what reaches the parent's mark is not merged with
	// what reaches the file's own mark (one group reports one event for both).
	gp, gs := e.fanotify("parent"), e.fanotify("self")
	gp.mark(0, fanFileEvents|onChild, e.w)
	gs.mark(0, fanFileEvents, s)
	fd := e.open(s, unix.O_RDWR)
	gp.check(e.fev(unix.FAN_OPEN, rec...))
	gs.check(e.fev(unix.FAN_OPEN, rec...))
	e.write(fd)
	// Without 635bc4def026 the parent's group gets it too.
	gp.checkPre([]fanotify.Event{e.fev(unix.FAN_MODIFY, rec...)})
	// The self mark's group still gets parent and name: a FAN_REPORT_DIR_FID
	// group asks for them on a non-dir mark (fsnotify_event_needs_parent);
	// only the parent's *interest* is dropped for special files.
	gs.check(e.fev(unix.FAN_MODIFY, rec...))
	e.read(fd)
	gp.checkPre([]fanotify.Event{e.fev(unix.FAN_ACCESS, rec...)})
	gs.check(e.fev(unix.FAN_ACCESS, rec...))
	e.close(fd)
	gp.check(e.fev(unix.FAN_CLOSE_WRITE, rec...))
	gs.check(e.fev(unix.FAN_CLOSE_WRITE, rec...))
	e.quiet(gp, gs)
	e.confirmPreFix(sideChannelFix)
}
