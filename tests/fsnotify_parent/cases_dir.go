package main

import (
	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// Subdirectories as children. include/linux/fsnotify.h fsnotify_parent: for a
// directory the parent is consulted only when the dentry is flagged
// PARENT_WATCHED ("sb/mount marks are not interested in name of directory").
var dirCases = concat(
	pair("subdir_child",
		"events on a subdirectory reach the watched parent with its name and IN_ISDIR, before and after its creation (inotify(7) IN_ISDIR)",
		subdirInotify,
		"events on a subdirectory reach the ON_CHILD|ONDIR mark as FAN_ONDIR with DFID_NAME(subdir,\".\") (fanotify(7) FAN_ONDIR; fanotify_init(2) FAN_REPORT_NAME)",
		subdirFanotify),
	[]harness.Case{{
		Name: "subdir_sb_mount_marks",
		Doc: "filesystem and mount marks with FAN_REPORT_DFID_NAME report a directory as DFID_NAME(dir,\".\") and a file as DFID_NAME(parent,name)+FID, " +
			"whether or not another group watches the parent (fanotify_init(2) FAN_REPORT_NAME; fsnotify_parent); fanotify only: inotify has no such marks",
		Needs: []*feature.Feature{feature.ReportDFIDName, feature.MarkFilesystem},
		Run:   subdirSbMount,
	}},
)

func subdirInotify(t *harness.T) {
	e := newEnv(t)
	d := e.w + "/d"
	if err := unix.Mkdir(d, 0o755); err != nil {
		t.Fatalf("setup: %v", err)
	}
	e.cache(d)
	l := e.inotify()
	wd := l.watch(e.w, unix.IN_OPEN|unix.IN_CLOSE_NOWRITE|unix.IN_ATTRIB|unix.IN_CREATE)
	const dir = unix.IN_ISDIR
	fd := e.open(d, unix.O_RDONLY|unix.O_DIRECTORY)
	l.check(iev(wd, unix.IN_OPEN|dir, "d"))
	e.close(fd)
	l.check(iev(wd, unix.IN_CLOSE_NOWRITE|dir, "d"))
	e.chmod(d, 0o700)
	l.check(iev(wd, unix.IN_ATTRIB|dir, "d"))
	x := e.w + "/x"
	e.mkdir(x)
	l.check(iev(wd, unix.IN_CREATE|dir, "x"))
	fd = e.open(x, unix.O_RDONLY|unix.O_DIRECTORY)
	l.check(iev(wd, unix.IN_OPEN|dir, "x"))
	e.close(fd)
	l.check(iev(wd, unix.IN_CLOSE_NOWRITE|dir, "x"))
	l.quiet()
}

func subdirFanotify(t *harness.T) {
	e := newEnv(t)
	d := e.w + "/d"
	if err := unix.Mkdir(d, 0o755); err != nil {
		t.Fatalf("setup: %v", err)
	}
	e.cache(d)
	selfD := e.dname(d, ".")
	g := e.fanotify("p")
	// FAN_ONDIR: "Create events for directories" (fanotify_mark(2)); needed
	// for events on a subdirectory as on the directory itself.
	g.mark(0, unix.FAN_OPEN|unix.FAN_CLOSE_NOWRITE|unix.FAN_ATTRIB|unix.FAN_CREATE|unix.FAN_ONDIR|onChild, e.w)
	const dir = unix.FAN_ONDIR // reported in fid mode (fanotify(7) FAN_ONDIR)
	fd := e.open(d, unix.O_RDONLY|unix.O_DIRECTORY)
	g.check(e.fev(unix.FAN_OPEN|dir, selfD))
	e.close(fd)
	g.check(e.fev(unix.FAN_CLOSE_NOWRITE|dir, selfD))
	e.chmod(d, 0o700)
	g.check(e.fev(unix.FAN_ATTRIB|dir, selfD))
	x := e.w + "/x"
	e.mkdir(x)
	g.check(e.fev(unix.FAN_CREATE|dir, e.dname(e.w, "x")))
	selfX := e.dname(x, ".") // x exists now (made by the actor)
	fd = e.open(x, unix.O_RDONLY|unix.O_DIRECTORY)
	g.check(e.fev(unix.FAN_OPEN|dir, selfX))
	e.close(fd)
	g.check(e.fev(unix.FAN_CLOSE_NOWRITE|dir, selfX))
	g.quiet()
}

func subdirSbMount(t *harness.T) {
	e := newEnv(t)
	d := e.w + "/d"
	if err := unix.Mkdir(d, 0o755); err != nil {
		t.Fatalf("setup: %v", err)
	}
	e.cache(d)
	f := e.file(e.w, "f", "")
	selfD := e.dname(d, ".")
	fileRec := e.child(e.w, "f", e.fid(f))
	root := t.FS().Root
	gs, gm := e.fanotify("sb"), e.fanotify("mnt")
	const m = unix.FAN_OPEN | unix.FAN_ONDIR
	gs.mark(unix.FAN_MARK_FILESYSTEM, m, root)
	gm.mark(unix.FAN_MARK_MOUNT, m, root)
	openDir := func(alsoIn func()) {
		fd := e.open(d, unix.O_RDONLY|unix.O_DIRECTORY)
		gs.check(e.fev(unix.FAN_OPEN|unix.FAN_ONDIR, selfD))
		gm.check(e.fev(unix.FAN_OPEN|unix.FAN_ONDIR, selfD))
		alsoIn()
		e.close(fd)
	}
	openFile := func(alsoIn func()) {
		fd := e.open(f, unix.O_RDONLY)
		gs.check(e.fev(unix.FAN_OPEN, fileRec...))
		gm.check(e.fev(unix.FAN_OPEN, fileRec...))
		alsoIn()
		e.close(fd)
	}
	nothing := func() {}
	openDir(nothing)
	openFile(nothing)
	// Now an inotify watch on w watches its children: d and f get flagged
	// PARENT_WATCHED and __fsnotify_parent hands the fanotify groups the
	// parent and name "d" too; fanotify still reports the directory itself.
	l := e.inotify()
	wd := l.watch(e.w, unix.IN_OPEN)
	openDir(func() { l.check(iev(wd, unix.IN_OPEN|unix.IN_ISDIR, "d")) })
	openFile(func() { l.check(iev(wd, unix.IN_OPEN, "f")) })
	e.quiet(gs, gm, l)
}
