package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/setup"
	"github.com/fsnsuite/fsnsuite/harness/tinyelf"
)

// specCases check rules of the man pages no earlier case checked; each
// names its rule ids in spec.go.
var specCases = []harness.Case{
	{
		Name: "spec_inode_based",
		Doc:  "a file's watch reports a write through another hard link of it, in another directory (inotify(7) \"Inotify monitoring is inode-based\")",
		Run:  specInodeBased,
	},
	{
		Name: "spec_not_recursive",
		Doc:  "a directory watch reports its entries, not the entries of its subdirectories (inotify(7) CAVEATS)",
		Run:  specNotRecursive,
	},
	{
		Name: "spec_mount_over",
		Doc:  "a tmpfs mounted on a watched directory hides it: mounting and creating under the mount report nothing; after the unmount the directory's entries are reported again (inotify(7) CAVEATS)",
		Run:  specMountOver,
	},
	{
		Name: "spec_mmap_no_events",
		Doc:  "reads and writes through a shared mmap(2), msync(2) and munmap(2) of a watched file create no event (inotify(7) CAVEATS)",
		Run:  specMmapNoEvents,
	},
	{
		Name: "spec_fallocate_modify",
		Doc:  "fallocate(2) of a watched file reports IN_MODIFY (inotify(7) BUGS: since 3.19)",
		Run:  specFallocateModify,
	},
	{
		Name: "spec_pending_after_rm",
		Doc:  "an event queued before inotify_rm_watch stays readable after it, followed by IN_IGNORED (inotify(7) BUGS)",
		Run:  specPendingAfterRm,
	},
	{
		Name: "spec_wd_cycles",
		Doc:  "a watch descriptor freed by inotify_rm_watch is not given to the next watch: descriptors go up (inotify(7) BUGS: the kernel cycles through 1..INT_MAX)",
		Run:  specWdCycles,
	},
	{
		Name: "spec_create_kinds",
		Doc:  "link(2), symlink(2), mknod(2) and bind(2) of a UNIX socket in a watched directory each report IN_CREATE with the new name (inotify(7) IN_CREATE)",
		Run:  specCreateKinds,
	},
	{
		Name: "spec_execve_access",
		Doc:  "execve(2) of a watched program reports IN_OPEN, IN_ACCESS as the kernel reads it, and IN_CLOSE_NOWRITE when it exits (inotify(7) IN_ACCESS \"e.g., read(2), execve(2)\")",
		Run:  specExecveAccess,
	},
	{
		Name: "spec_dir_own_events",
		Doc:  "a directory's own watch gets IN_ACCESS|IN_ISDIR when its entries are read (fs/readdir.c), and none of IN_MODIFY, IN_CLOSE_WRITE, IN_CREATE, IN_DELETE, IN_MOVED_FROM/TO when it is itself renamed and removed: only IN_IGNORED (inotify(7) \"inotify events\")",
		Run:  specDirOwnEvents,
	},
	{
		Name:        "spec_pseudo_fs",
		Doc:         "a watch on /proc/PID/fd reports nothing when the process opens and closes files: procfs entries the kernel makes are not monitorable (inotify(7) CAVEATS)",
		Filesystems: []string{},
		Run:         specPseudoFS,
	},
}

// specInodeBased: inotify(7) "Inotify monitoring is inode-based: when
// monitoring a file (but not when monitoring the directory containing a
// file), an event can be generated for activity on any link to the file (in
// the same or a different directory)."
func specInodeBased(t *harness.T) {
	d1, d2 := t.Path("d1"), t.Path("d2")
	setup.Mkdir(t, d1, d2)
	f, l := filepath.Join(d1, "f"), filepath.Join(d2, "l")
	setup.Touch(t, f)
	if err := unix.Link(f, l); err != nil {
		t.Fatalf("setup: link: %v", err)
	}
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, f, unix.IN_MODIFY)
	expect.InotifySteps(t, in, "watch d1/f IN_MODIFY; d2/l another link of it", []step{
		{Did: "write through d2/l", Do: func() error { return a.WriteFile(l, []byte("x")) }, Want: []inotify.Event{ev(wd, unix.IN_MODIFY, "")}},
	})
}

// specNotRecursive: inotify(7) CAVEATS "Inotify monitoring of directories is
// not recursive: to monitor subdirectories under a directory, additional
// watches must be created."
func specNotRecursive(t *harness.T) {
	d := t.Path("d")
	sub := filepath.Join(d, "sub")
	setup.Mkdir(t, d, sub)
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, d, unix.IN_CREATE|unix.IN_MODIFY|unix.IN_CLOSE_WRITE)
	expect.InotifySteps(t, in, "watch d IN_CREATE|IN_MODIFY|IN_CLOSE_WRITE", []step{
		{Did: "create d/sub/g, write, close", Do: func() error { return a.WriteFile(filepath.Join(sub, "g"), []byte("x")) }, Want: nil},
		{Did: "create d/f", Do: func() error { return a.Touch(filepath.Join(d, "f")) },
			Want: []inotify.Event{ev(wd, unix.IN_CREATE, "f"), ev(wd, unix.IN_CLOSE_WRITE, "f")}},
	})
}

// specMountOver: inotify(7) CAVEATS "If a filesystem is mounted on top of a
// monitored directory, no event is generated, and no events are generated
// for objects immediately under the new mount point. If the filesystem is
// subsequently unmounted, events will subsequently be generated for the
// directory and the objects it contains." The case process is in its own
// mount namespace, as are its actors.
func specMountOver(t *harness.T) {
	d := t.Path("d")
	setup.Mkdir(t, d)
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, d, unix.IN_ALL_EVENTS)
	mounted := false
	t.Cleanup(func() {
		if mounted {
			unix.Unmount(d, unix.MNT_DETACH)
		}
	})
	expect.InotifySteps(t, in, "watch d IN_ALL_EVENTS", []step{
		{Did: "mount a tmpfs on d", Do: func() error {
			err := unix.Mount("fsnsuite", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m,mode=0755")
			mounted = err == nil
			if err != nil {
				return fmt.Errorf("setup: mount tmpfs on %s: %w", d, err)
			}
			return nil
		}, Want: nil},
		{Did: "create d/f (on the tmpfs)", Do: func() error { return a.Touch(filepath.Join(d, "f")) }, Want: nil},
		{Did: "unmount d", Do: func() error {
			err := unix.Unmount(d, 0)
			mounted = err != nil
			return err
		}, Want: nil},
		{Did: "create d/g (on the watched directory)", Do: func() error { return a.Touch(filepath.Join(d, "g")) },
			Want: []inotify.Event{ev(wd, unix.IN_CREATE, "g"), ev(wd, unix.IN_OPEN, "g"), ev(wd, unix.IN_CLOSE_WRITE, "g")}},
	})
}

// specMmapNoEvents: inotify(7) CAVEATS "The inotify API does not report file
// accesses and modifications that may occur because of mmap(2), msync(2),
// and munmap(2)." The file is opened before the watch, in the test process
// (the actor cannot map).
func specMmapNoEvents(t *harness.T) {
	f := t.Path("f")
	setup.WriteFile(t, f, "0123456789")
	fd := setup.Open(t, f, unix.O_RDWR)
	in := t.Inotify(0)
	watch(t, in, f, unix.IN_ACCESS|unix.IN_MODIFY)
	expect.InotifySteps(t, in, "f open O_RDWR; watch f IN_ACCESS|IN_MODIFY", []step{
		{Did: "mmap MAP_SHARED; read and write a byte through it; msync; munmap", Do: func() error {
			m, err := unix.Mmap(fd, 0, 10, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			if err != nil {
				return err
			}
			m[0] = m[1] + 1
			if err := unix.Msync(m, unix.MS_SYNC); err != nil {
				unix.Munmap(m)
				return err
			}
			return unix.Munmap(m)
		}, Want: nil},
	})
}

// specFallocateModify: inotify(7) BUGS "Since Linux 3.19, calls to
// fallocate(2) generate IN_MODIFY events" (vfs_fallocate ->
// fsnotify_modify).
func specFallocateModify(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	fd := setup.Open(t, f, unix.O_RDWR)
	in := t.Inotify(0)
	wd := watch(t, in, f, unix.IN_MODIFY)
	expect.InotifySteps(t, in, "f open O_RDWR; watch f IN_MODIFY", []step{
		{Did: "fallocate 4096 bytes", Do: func() error { return unix.Fallocate(fd, 0, 0, 4096) }, Want: []inotify.Event{ev(wd, unix.IN_MODIFY, "")}},
	})
}

// specPendingAfterRm: inotify(7) BUGS "When a watch descriptor is removed by
// calling inotify_rm_watch(2) ..., any pending unread events for that watch
// descriptor remain available to read"; IN_IGNORED follows ("Watch was
// removed explicitly").
func specPendingAfterRm(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, f, unix.IN_ATTRIB)
	expect.InotifySteps(t, in, "watch f IN_ATTRIB", []step{
		{Did: "chmod f; inotify_rm_watch before reading", Do: func() error {
			if err := a.Chmod(f, 0o600); err != nil {
				return err
			}
			return in.RmWatch(wd)
		}, Want: []inotify.Event{ev(wd, unix.IN_ATTRIB, ""), ev(wd, unix.IN_IGNORED, "")}},
	})
}

// specWdCycles: inotify(7) BUGS "the kernel cycles through the range of
// possible watch descriptors (1 to INT_MAX) incrementally": a freed number
// is not reused by the next watch (inotify_add_to_idr allocates cyclically
// from last_wd+1).
func specWdCycles(t *harness.T) {
	f, g, h := t.Path("f"), t.Path("g"), t.Path("h")
	setup.Touch(t, f, g, h)
	in := t.Inotify(0)
	wdF := watch(t, in, f, unix.IN_ATTRIB)
	wdG := watch(t, in, g, unix.IN_ATTRIB)
	if err := in.RmWatch(wdF); err != nil {
		t.Fatalf("%v", err)
	}
	wdH := watch(t, in, h, unix.IN_ATTRIB)
	if !(wdF < wdG && wdG < wdH) {
		t.Errorf("watch f = %d, g = %d, rm f, watch h = %d: want increasing descriptors (h does not reuse f's %d)", wdF, wdG, wdH, wdF)
	}
}

// specPseudoFS: inotify(7) CAVEATS "various pseudo-filesystems such as
// /proc, /sys, and /dev/pts are not monitorable with inotify": the entries
// procfs shows for a process's descriptors come and go with no event.
func specPseudoFS(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	a := t.Actor()
	in := t.Inotify(0)
	watch(t, in, fmt.Sprintf("/proc/%d/fd", a.Pid()), unix.IN_CREATE|unix.IN_DELETE|unix.IN_ATTRIB|unix.IN_MODIFY)
	expect.InotifySteps(t, in, fmt.Sprintf("watch /proc/%d/fd (the actor's) IN_CREATE|IN_DELETE|IN_ATTRIB|IN_MODIFY", a.Pid()), []step{
		{Did: "actor opens f and closes it", Do: func() error {
			fd, err := a.Open(f, unix.O_RDONLY, 0)
			if err != nil {
				return err
			}
			return a.Close(fd)
		}, Want: nil},
	})
}

// specCreateKinds: inotify(7) IN_CREATE "File/directory created in watched
// directory (e.g., open(2) O_CREAT, mkdir(2), link(2), symlink(2), bind(2)
// on a UNIX domain socket)"; mknod(2) goes the same way (vfs_mknod ->
// fsnotify_create). The socket is bound by the test process (the actor has
// no bind); inotify events carry no pid.
func specCreateKinds(t *harness.T) {
	d := t.Path("d")
	setup.Mkdir(t, d)
	src := t.Path("src")
	setup.Touch(t, src)
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, d, unix.IN_CREATE)
	do := func(op actor.Op) func() error {
		return func() error {
			r, err := a.Do(op)
			if err == nil {
				err = r.Err()
			}
			return err
		}
	}
	steps := []step{
		{Did: "link src d/hard", Do: func() error { return a.Link(src, filepath.Join(d, "hard")) }, Want: []inotify.Event{ev(wd, unix.IN_CREATE, "hard")}},
		{Did: "symlink d/soft -> src", Do: do(actor.Op{Kind: "symlink", Path: src, Path2: filepath.Join(d, "soft")}), Want: []inotify.Event{ev(wd, unix.IN_CREATE, "soft")}},
		{Did: "mknod d/fifo S_IFIFO", Do: do(actor.Op{Kind: "mknod", Path: filepath.Join(d, "fifo"), Mode: unix.S_IFIFO | 0o644}), Want: []inotify.Event{ev(wd, unix.IN_CREATE, "fifo")}},
		{Did: "bind a UNIX socket to d/sock", Do: func() error {
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("setup: socket: %w", err)
			}
			defer unix.Close(fd)
			return unix.Bind(fd, &unix.SockaddrUnix{Name: filepath.Join(d, "sock")})
		}, Want: []inotify.Event{ev(wd, unix.IN_CREATE, "sock")}},
	}
	// A kernel built without networking has no socket(2) (ENOSYS: the
	// tinyconfig kernels of patchcheck and mutants) or without AF_UNIX
	// (EAFNOSUPPORT): the bind step is left out, said so, not failed.
	if fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
		if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EAFNOSUPPORT) {
			t.Fatalf("setup: socket(AF_UNIX): %v", err)
		}
		t.Notef("the bind(2) step is left out: socket(AF_UNIX): %v (a kernel without UNIX domain sockets)", err)
		steps = steps[:len(steps)-1]
	} else {
		unix.Close(fd)
	}
	expect.InotifySteps(t, in, "watch d IN_CREATE", steps)
}

// specExecveAccess: inotify(7) IN_ACCESS "File was accessed (e.g., read(2),
// execve(2))": execve opens the program (do_open_execat -> fsnotify_open:
// IN_OPEN), reads its headers with kernel_read (__kernel_read ->
// fsnotify_access: IN_ACCESS; successive reads coalesce), and the last
// reference goes at exit (IN_CLOSE_NOWRITE). The program is
// tinyelf.Program: exit(0) and nothing else (a copy of true(1) could be
// busybox, which does not run as "prog").
func specExecveAccess(t *harness.T) {
	data, err := tinyelf.Program(runtime.GOARCH, 0)
	if err != nil {
		t.Skipf("no program to execute: %v", err)
	}
	prog := t.Path("prog")
	setup.WriteFileMode(t, prog, data, 0o755)
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, prog, unix.IN_ACCESS|unix.IN_OPEN|unix.IN_CLOSE_NOWRITE)
	expect.InotifySteps(t, in, "watch prog (exit(0) only) IN_ACCESS|IN_OPEN|IN_CLOSE_NOWRITE", []step{
		{Did: "actor executes prog and waits for it", Do: func() error {
			st, err := a.Exec(prog)
			if err == nil && st != 0 {
				err = fmt.Errorf("exit status %d", st)
			}
			return err
		}, Want: []inotify.Event{ev(wd, unix.IN_OPEN, ""), ev(wd, unix.IN_ACCESS, ""), ev(wd, unix.IN_CLOSE_NOWRITE, "")}},
	})
}

// specDirOwnEvents: inotify(7) marks IN_ACCESS, IN_CLOSE_WRITE, IN_CREATE,
// IN_DELETE, IN_MODIFY, IN_MOVED_FROM and IN_MOVED_TO (+): on a directory
// watch they "occur only for objects inside the directory (not for the
// directory itself)". The kernel keeps that for all but IN_ACCESS: reading
// the directory's entries (iterate_dir -> fsnotify_access, fs/readdir.c)
// reports IN_ACCESS|IN_ISDIR on the directory's own watch. Its rename and
// removal are IN_MOVE_SELF and IN_DELETE_SELF, not in the mask here; the
// removal still queues IN_IGNORED, once the last reference (the test
// process's descriptor) is gone. The test process reads the directory (the
// actor has no getdents).
func specDirOwnEvents(t *harness.T) {
	p := t.Path("p")
	d := filepath.Join(p, "d")
	setup.Mkdir(t, p, d)
	fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	open := true
	t.Cleanup(func() {
		if open {
			unix.Close(fd)
		}
	})
	a := t.Actor()
	in := t.Inotify(0)
	mask := uint32(unix.IN_ACCESS | unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVE)
	wd := watch(t, in, d, mask)
	d2 := filepath.Join(p, "d2")
	expect.InotifySteps(t, in, "d open O_DIRECTORY; watch d "+inotify.Mask(mask).String(), []step{
		{Did: "getdents d", Do: func() error {
			n, err := unix.Getdents(fd, make([]byte, 4096))
			if err == nil && n == 0 {
				err = fmt.Errorf("getdents returned no entry")
			}
			return err
		}, Want: []inotify.Event{ev(wd, unix.IN_ACCESS|unix.IN_ISDIR, "")}},
		{Did: "rename p/d p/d2", Do: func() error { return a.Rename(d, d2) }, Want: nil},
		{Did: "rmdir p/d2 (the test process still has it open)", Do: func() error { return a.Rmdir(d2) }, Want: nil},
		{Did: "close the test process's descriptor of it", Do: func() error { open = false; return unix.Close(fd) }, Want: []inotify.Event{ev(wd, unix.IN_IGNORED, "")}},
	})
}
