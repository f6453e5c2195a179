package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/queuelimit"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// Every expectation below comes from inotify(7), inotify_add_watch(2),
// inotify_rm_watch(2) or the kernel source named next to it. Each case
// prepares its files from the test process before any watch exists and then
// acts only through the actor.

var cases = []harness.Case{
	{
		Name: "create_in_dir",
		Doc:  "IN_CREATE on a watched directory names the new file (inotify(7))",
		Run: func(t *harness.T) {
			in := t.Inotify(0)
			wd, err := in.AddWatch(t.Dir(), unix.IN_CREATE)
			if err != nil {
				t.Fatal(err)
			}
			a := t.Actor()
			if err := a.Touch(t.Path("f")); err != nil {
				t.Fatal(err)
			}
			got, err := in.Drain()
			if err != nil {
				t.Fatal(err)
			}
			expect.Inotify(t, "watch dir IN_CREATE; create f", got, []inotify.Event{{Wd: wd, Mask: unix.IN_CREATE, Name: "f"}})
		},
	},
	{
		Name: "dir_child_lifecycle",
		Doc:  "a directory watch reports create, open, modify, close, attrib, access and delete of a child, each with the child's name",
		Run:  dirChildLifecycle,
	},
	{
		Name: "dir_subdir_isdir",
		Doc:  "mkdir and rmdir of a child directory are IN_CREATE|IN_ISDIR and IN_DELETE|IN_ISDIR with its name",
		Run:  dirSubdirIsdir,
	},
	{
		Name: "file_self_unlink",
		Doc:  "a file watch reports events without a name; unlink gives IN_ATTRIB, IN_DELETE_SELF, IN_IGNORED and frees the wd",
		Run:  fileSelfUnlink,
	},
	{
		Name: "rmdir_watched_dir",
		Doc:  "rmdir of a watched directory gives IN_DELETE_SELF then IN_IGNORED on its watch",
		Run:  rmdirWatchedDir,
	},
	{
		Name: "rm_watch_ignored",
		Doc:  "inotify_rm_watch queues IN_IGNORED, later operations report nothing, a second rm_watch is EINVAL",
		Run:  rmWatchIgnored,
	},
	{
		Name: "rename_cookie_in_dir",
		Doc:  "rename in a watched dir: IN_MOVED_FROM and IN_MOVED_TO share a non-zero cookie, then IN_MOVE_SELF on the file's watch",
		Run:  renameCookieInDir,
	},
	{
		Name: "rename_cookie_across_dirs",
		Doc:  "renames between two watched dirs pair FROM/TO by cookie across watches; each rename has its own cookie",
		Run:  renameCookieAcrossDirs,
	},
	{
		Name: "oneshot",
		Doc:  "IN_ONESHOT reports one event, then IN_IGNORED, then nothing",
		Run:  oneshot,
	},
	{
		Name: "excl_unlink",
		Doc:  "IN_EXCL_UNLINK hides events of a child after it was unlinked; without it they are reported with its name",
		Run:  exclUnlink,
		// Subtests: exclUnlink's table, so that a skip keeps these leaves.
		Subtests: []string{"with_flag", "without_flag"},
	},
	{
		Name: "mask_add",
		Doc:  "IN_MASK_ADD ORs into the existing watch (same wd); without it the mask is replaced",
		Run:  maskAdd,
		// Subtests: maskAdd's table, so that a skip keeps these leaves.
		Subtests: []string{"add", "replace"},
	},
	{
		Name: "mask_create_eexist",
		Doc:  "IN_MASK_CREATE on a watched inode fails with EEXIST and leaves the watch unchanged; with IN_MASK_ADD it is EINVAL",
		// IN_MASK_CREATE came with 4d97f7d53da7 ("inotify: Add flag
		// IN_MASK_CREATE for inotify_add_watch()", 4.19): a feature, so an
		// older kernel skips the whole case (its EINVAL check included:
		// before 4.19 the unknown bit is ignored and the call succeeds).
		Needs: []*feature.Feature{maskCreate},
		Run:   maskCreateEexist,
	},
	{
		Name: "onlydir",
		Doc:  "IN_ONLYDIR on a regular file fails with ENOTDIR; on a directory it watches",
		Run:  onlydir,
	},
	{
		Name: "dont_follow",
		Doc:  "IN_DONT_FOLLOW watches the symlink itself (its own wd and events); without it the target is watched",
		Run:  dontFollow,
	},
	{
		Name: "coalesce_identical",
		Doc:  "identical successive unread events coalesce into one; different or already-read ones do not",
		Run:  coalesceIdentical,
	},
	{
		Name: "queue_overflow",
		Doc:  "past max_queued_events the queue ends with one IN_Q_OVERFLOW (wd -1), further events are dropped, and it accepts events again once read",
		Run:  queueOverflow,
	},
}

// dirChildLifecycle: inotify(7) "the name field ... is present only when an
// event is returned for a file inside a watched directory"; the events are the
// ones inotify(7) lists for each call (open(2) with O_CREAT gives IN_CREATE,
// then IN_OPEN: fs/namei.c creates in lookup_open before do_open's vfs_open).
func dirChildLifecycle(t *harness.T) {
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, t.Dir(), unix.IN_ALL_EVENTS)
	f := t.Path("f")
	var fd int
	expect.InotifySteps(t, in, "watch dir IN_ALL_EVENTS", []step{
		{Did: "open f O_CREAT|O_WRONLY", Do: func() (err error) { fd, err = a.Open(f, unix.O_CREAT|unix.O_WRONLY, 0o644); return }, Want: []inotify.Event{ev(wd, unix.IN_CREATE, "f"), ev(wd, unix.IN_OPEN, "f")}},
		{Did: "write 1 byte", Do: func() error { _, err := a.Write(fd, []byte("x")); return err }, Want: []inotify.Event{ev(wd, unix.IN_MODIFY, "f")}},
		{Did: "close", Do: func() error { return a.Close(fd) }, Want: []inotify.Event{ev(wd, unix.IN_CLOSE_WRITE, "f")}},
		{Did: "chmod f 0600", Do: func() error { return a.Chmod(f, 0o600) }, Want: []inotify.Event{ev(wd, unix.IN_ATTRIB, "f")}},
		{Did: "open f O_RDONLY", Do: func() (err error) { fd, err = a.Open(f, unix.O_RDONLY, 0); return }, Want: []inotify.Event{ev(wd, unix.IN_OPEN, "f")}},
		{Did: "read 1 byte", Do: func() error {
			b, err := a.Read(fd, 1)
			if err == nil && len(b) != 1 {
				err = fmt.Errorf("read returned %d bytes, want 1", len(b))
			}
			return err
		}, Want: []inotify.Event{ev(wd, unix.IN_ACCESS, "f")}},
		{Did: "close", Do: func() error { return a.Close(fd) }, Want: []inotify.Event{ev(wd, unix.IN_CLOSE_NOWRITE, "f")}},
		{Did: "unlink f", Do: func() error { return a.Unlink(f) }, Want: []inotify.Event{ev(wd, unix.IN_DELETE, "f")}},
	})
}

// dirSubdirIsdir: inotify(7) "IN_ISDIR Subject of this event is a directory".
func dirSubdirIsdir(t *harness.T) {
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, t.Dir(), unix.IN_CREATE|unix.IN_DELETE)
	d := t.Path("d")
	expect.InotifySteps(t, in, "watch dir IN_CREATE|IN_DELETE", []step{
		{Did: "mkdir d", Do: func() error { return a.Mkdir(d, 0o755) }, Want: []inotify.Event{ev(wd, unix.IN_CREATE|unix.IN_ISDIR, "d")}},
		{Did: "rmdir d", Do: func() error { return a.Rmdir(d) }, Want: []inotify.Event{ev(wd, unix.IN_DELETE|unix.IN_ISDIR, "d")}},
	})
}

// fileSelfUnlink: inotify(7) — events on a watched file carry no name;
// IN_ATTRIB covers "link count (since Linux 2.6.25)"; IN_DELETE_SELF then
// IN_IGNORED "Watch was removed ... automatically (file was deleted ...)".
// Order from fs/namei.c vfs_unlink (fsnotify_link_count before
// d_delete_notify) and fs/dcache.c dentry_unlink_inode -> fsnotify_inoderemove
// (FS_DELETE_SELF, then the marks are destroyed: inotify_freeing_mark queues
// IN_IGNORED). inotify_rm_watch(2): EINVAL "wd is not valid" once the watch is gone.
func fileSelfUnlink(t *harness.T) {
	f := t.Path("f")
	setup.WriteFile(t, f, "")
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, f, unix.IN_ALL_EVENTS)
	var fd int
	expect.InotifySteps(t, in, "watch file IN_ALL_EVENTS", []step{
		{Did: "open f O_WRONLY", Do: func() (err error) { fd, err = a.Open(f, unix.O_WRONLY, 0); return }, Want: []inotify.Event{ev(wd, unix.IN_OPEN, "")}},
		{Did: "write 1 byte", Do: func() error { _, err := a.Write(fd, []byte("x")); return err }, Want: []inotify.Event{ev(wd, unix.IN_MODIFY, "")}},
		{Did: "close", Do: func() error { return a.Close(fd) }, Want: []inotify.Event{ev(wd, unix.IN_CLOSE_WRITE, "")}},
		{Did: "chmod f 0600", Do: func() error { return a.Chmod(f, 0o600) }, Want: []inotify.Event{ev(wd, unix.IN_ATTRIB, "")}},
		{Did: "unlink f", Do: func() error { return a.Unlink(f) }, Want: []inotify.Event{ev(wd, unix.IN_ATTRIB, ""), ev(wd, unix.IN_DELETE_SELF, ""), ev(wd, unix.IN_IGNORED, "")}},
	})
	expect.Errno(t, "inotify_rm_watch of the wd removed by unlink", in.RmWatch(wd), unix.EINVAL)
}

// rmdirWatchedDir: inotify(7) IN_DELETE_SELF, IN_IGNORED; fs/dcache.c
// dentry_unlink_inode -> fsnotify_inoderemove on the emptied directory. That
// passes FS_ISDIR, but fs/notify/inotify/inotify_fsnotify.c
// inotify_handle_inode_event masks IN_ISDIR out of IN_DELETE_SELF and
// IN_MOVE_SELF ("inotify never reported IN_ISDIR with those events").
func rmdirWatchedDir(t *harness.T) {
	d := t.Path("d")
	setup.Mkdir(t, d)
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, d, unix.IN_ALL_EVENTS)
	expect.InotifySteps(t, in, "watch dir d IN_ALL_EVENTS", []step{
		{Did: "rmdir d", Do: func() error { return a.Rmdir(d) }, Want: []inotify.Event{ev(wd, unix.IN_DELETE_SELF, ""), ev(wd, unix.IN_IGNORED, "")}},
	})
}

// rmWatchIgnored: inotify(7) IN_IGNORED "Watch was removed explicitly
// (inotify_rm_watch(2))"; inotify_rm_watch(2) EINVAL for an invalid wd.
func rmWatchIgnored(t *harness.T) {
	f := t.Path("f")
	setup.WriteFile(t, f, "")
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, f, unix.IN_ATTRIB)
	expect.InotifySteps(t, in, "watch file IN_ATTRIB", []step{
		{Did: "inotify_rm_watch", Do: func() error { return in.RmWatch(wd) }, Want: []inotify.Event{ev(wd, unix.IN_IGNORED, "")}},
		{Did: "chmod f 0600", Do: func() error { return a.Chmod(f, 0o600) }, Want: nil},
	})
	expect.Errno(t, "second inotify_rm_watch of the same wd", in.RmWatch(wd), unix.EINVAL)
}

// renameCookieInDir: inotify(7) "IN_MOVED_FROM/IN_MOVED_TO ... cookie ... a
// unique cookie associating related events"; order from
// include/linux/fsnotify.h fsnotify_move (FS_MOVED_FROM on the old dir, then
// FS_MOVED_TO on the new dir, then FS_MOVE_SELF on the moved inode).
func renameCookieInDir(t *harness.T) {
	a, b := t.Path("a"), t.Path("b")
	setup.WriteFile(t, a, "")
	act := t.Actor()
	in := t.Inotify(0)
	wdD := watch(t, in, t.Dir(), unix.IN_MOVE)
	wdF := watch(t, in, a, unix.IN_MOVE_SELF)
	expect.InotifySteps(t, in, "watch dir IN_MOVE, file a IN_MOVE_SELF", []step{
		{Did: "rename a b", Do: func() error { return act.Rename(a, b) }, Want: []inotify.Event{evc(wdD, unix.IN_MOVED_FROM, "a", 1), evc(wdD, unix.IN_MOVED_TO, "b", 1), ev(wdF, unix.IN_MOVE_SELF, "")}},
	})
}

// renameCookieAcrossDirs: inotify(7) — "when renaming from one directory to
// another, events will be produced in the correct order"; each rename gets a
// fresh cookie (fs/notify/fsnotify.c fsnotify_get_cookie, an incrementing counter).
func renameCookieAcrossDirs(t *harness.T) {
	d1, d2 := t.Path("d1"), t.Path("d2")
	setup.Mkdir(t, d1)
	setup.Mkdir(t, d2)
	setup.WriteFile(t, d1+"/a", "")
	act := t.Actor()
	in := t.Inotify(0)
	wd1 := watch(t, in, d1, unix.IN_MOVE)
	wd2 := watch(t, in, d2, unix.IN_MOVE)
	expect.InotifySteps(t, in, "watch d1 and d2 IN_MOVE", []step{
		{Did: "rename d1/a d2/b; rename d2/b d1/a", Do: func() error {
			if err := act.Rename(d1+"/a", d2+"/b"); err != nil {
				return err
			}
			return act.Rename(d2+"/b", d1+"/a")
		}, Want: []inotify.Event{
			evc(wd1, unix.IN_MOVED_FROM, "a", 1), evc(wd2, unix.IN_MOVED_TO, "b", 1),
			evc(wd2, unix.IN_MOVED_FROM, "b", 2), evc(wd1, unix.IN_MOVED_TO, "a", 2),
		}},
	})
}

// oneshot: inotify(7) IN_ONESHOT "for one event, then remove from watch
// list"; BUGS: since 2.6.36 an IN_IGNORED is generated when the watch is
// dropped (fs/notify/inotify/inotify_fsnotify.c inotify_handle_inode_event
// destroys the mark after queueing the event).
func oneshot(t *harness.T) {
	f := t.Path("f")
	setup.WriteFile(t, f, "")
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, f, unix.IN_ATTRIB|unix.IN_ONESHOT)
	expect.InotifySteps(t, in, "watch file IN_ATTRIB|IN_ONESHOT", []step{
		{Did: "chmod f 0600", Do: func() error { return a.Chmod(f, 0o600) }, Want: []inotify.Event{ev(wd, unix.IN_ATTRIB, ""), ev(wd, unix.IN_IGNORED, "")}},
		{Did: "chmod f 0644", Do: func() error { return a.Chmod(f, 0o644) }, Want: nil},
	})
	expect.Errno(t, "inotify_rm_watch of the oneshot wd after its event", in.RmWatch(wd), unix.EINVAL)
}

// exclUnlink: inotify(7) IN_EXCL_UNLINK "events are not generated for
// children after they have been unlinked from the watched directory";
// fs/notify/fsnotify.c fsnotify_handle_inode_event drops path events of an
// unlinked dentry for a mark with FS_EXCL_UNLINK. The subtest without the
// flag shows the same operations are otherwise reported.
func exclUnlink(t *harness.T) {
	for _, v := range []struct {
		name string
		flag uint32
		want func(wd int32) [2][]inotify.Event // write, close
	}{
		{"with_flag", unix.IN_EXCL_UNLINK, func(int32) [2][]inotify.Event { return [2][]inotify.Event{nil, nil} }},
		{"without_flag", 0, func(wd int32) [2][]inotify.Event {
			return [2][]inotify.Event{{ev(wd, unix.IN_MODIFY, "f")}, {ev(wd, unix.IN_CLOSE_WRITE, "f")}}
		}},
	} {
		t.Run(v.name, func(t *harness.T) {
			dir := t.Path(v.name)
			setup.Mkdir(t, dir)
			f := dir + "/f"
			setup.WriteFile(t, f, "")
			a := t.Actor()
			fd, err := a.Open(f, unix.O_WRONLY, 0)
			if err != nil {
				t.Fatalf("setup: actor open: %v", err)
			}
			in := t.Inotify(0)
			wd := watch(t, in, dir, unix.IN_MODIFY|unix.IN_CLOSE_WRITE|unix.IN_DELETE|v.flag)
			w := v.want(wd)
			expect.InotifySteps(t, in, fmt.Sprintf("f open in actor; watch dir %s", inotify.Mask(unix.IN_MODIFY|unix.IN_CLOSE_WRITE|unix.IN_DELETE|v.flag)), []step{
				{Did: "unlink f", Do: func() error { return a.Unlink(f) }, Want: []inotify.Event{ev(wd, unix.IN_DELETE, "f")}},
				{Did: "write 1 byte to the unlinked f", Do: func() error { _, err := a.Write(fd, []byte("x")); return err }, Want: w[0]},
				{Did: "close it", Do: func() error { return a.Close(fd) }, Want: w[1]},
			})
		})
	}
}

// maskAdd: inotify(7) IN_MASK_ADD "add (OR) the events in mask to the watch
// mask (instead of replacing the mask)"; inotify_add_watch(2) returns the
// existing wd when the inode is already watched.
func maskAdd(t *harness.T) {
	for _, v := range []struct {
		name      string
		flag      uint32
		wantWrite bool
	}{
		{"add", unix.IN_MASK_ADD, true},
		{"replace", 0, false},
	} {
		t.Run(v.name, func(t *harness.T) {
			f := t.Path("f_" + v.name)
			setup.WriteFile(t, f, "")
			a := t.Actor()
			in := t.Inotify(0)
			wd := watch(t, in, f, unix.IN_MODIFY)
			wd2 := watch(t, in, f, unix.IN_ATTRIB|v.flag)
			if wd2 != wd {
				t.Errorf("second inotify_add_watch on the same inode returned wd %d, want the existing %d", wd2, wd)
			}
			var fd int
			var onWrite []inotify.Event
			if v.wantWrite {
				onWrite = []inotify.Event{ev(wd, unix.IN_MODIFY, "")}
			}
			expect.InotifySteps(t, in, fmt.Sprintf("watch file IN_MODIFY, then IN_ATTRIB|%s", inotify.Mask(v.flag)), []step{
				{Did: "chmod f 0600", Do: func() error { return a.Chmod(f, 0o600) }, Want: []inotify.Event{ev(wd, unix.IN_ATTRIB, "")}},
				{Did: "open f O_WRONLY", Do: func() (err error) { fd, err = a.Open(f, unix.O_WRONLY, 0); return }, Want: nil},
				{Did: "write 1 byte", Do: func() error { _, err := a.Write(fd, []byte("x")); return err }, Want: onWrite},
				{Did: "close", Do: func() error { return a.Close(fd) }, Want: nil},
			})
		})
	}
}

// maskCreateEexist: inotify_add_watch(2) EEXIST "mask contains IN_MASK_CREATE
// and pathname refers to a file already being watched by the same fd"; EINVAL
// "mask contains both IN_MASK_ADD and IN_MASK_CREATE".
func maskCreateEexist(t *harness.T) {
	f := t.Path("f")
	setup.WriteFile(t, f, "")
	a := t.Actor()
	in := t.Inotify(0)
	wd := watch(t, in, f, unix.IN_MODIFY)
	_, err := in.AddWatch(f, unix.IN_ATTRIB|unix.IN_MASK_CREATE|unix.IN_MASK_ADD)
	expect.Errno(t, "inotify_add_watch(IN_MASK_CREATE|IN_MASK_ADD)", err, unix.EINVAL)
	_, err = in.AddWatch(f, unix.IN_ATTRIB|unix.IN_MASK_CREATE)
	expect.Errno(t, "inotify_add_watch(IN_MASK_CREATE) on a watched file", err, unix.EEXIST)
	// The failed calls must not have touched the watch: IN_ATTRIB stays
	// unreported, IN_MODIFY still is.
	var fd int
	expect.InotifySteps(t, in, "watch file IN_MODIFY; IN_MASK_CREATE|IN_ATTRIB rejected", []step{
		{Did: "chmod f 0600", Do: func() error { return a.Chmod(f, 0o600) }, Want: nil},
		{Did: "open f O_WRONLY", Do: func() (err error) { fd, err = a.Open(f, unix.O_WRONLY, 0); return }, Want: nil},
		{Did: "write 1 byte", Do: func() error { _, err := a.Write(fd, []byte("x")); return err }, Want: []inotify.Event{ev(wd, unix.IN_MODIFY, "")}},
		{Did: "close", Do: func() error { return a.Close(fd) }, Want: nil},
	})
	// On an unwatched inode IN_MASK_CREATE makes a new watch.
	g := t.Path("g")
	setup.WriteFile(t, g, "")
	if wdG, err := in.AddWatch(g, unix.IN_ATTRIB|unix.IN_MASK_CREATE); err != nil {
		t.Errorf("inotify_add_watch(IN_MASK_CREATE) on an unwatched file: %v", err)
	} else if wdG == wd {
		t.Errorf("IN_MASK_CREATE on another file returned the existing wd %d", wd)
	}
}

// onlydir: inotify_add_watch(2) ENOTDIR "mask contains IN_ONLYDIR and
// pathname is not a directory"; inotify(7) IN_ONLYDIR.
func onlydir(t *harness.T) {
	f := t.Path("f")
	setup.WriteFile(t, f, "")
	d := t.Path("d")
	setup.Mkdir(t, d)
	a := t.Actor()
	in := t.Inotify(0)
	_, err := in.AddWatch(f, unix.IN_ATTRIB|unix.IN_ONLYDIR)
	expect.Errno(t, "inotify_add_watch(file, IN_ONLYDIR)", err, unix.ENOTDIR)
	wd := watch(t, in, d, unix.IN_ATTRIB|unix.IN_ONLYDIR)
	expect.InotifySteps(t, in, "IN_ONLYDIR watch on file rejected, on dir d IN_ATTRIB", []step{
		{Did: "chmod f 0600", Do: func() error { return a.Chmod(f, 0o600) }, Want: nil},
		{Did: "chmod d 0700", Do: func() error { return a.Chmod(d, 0o700) }, Want: []inotify.Event{ev(wd, unix.IN_ATTRIB|unix.IN_ISDIR, "")}},
	})
}

// dontFollow: inotify(7) IN_DONT_FOLLOW "Don't dereference pathname if it is
// a symbolic link"; inotify_add_watch(2) returns the existing wd for an inode
// already watched, so following the link gives the target's wd.
func dontFollow(t *harness.T) {
	f, l := t.Path("f"), t.Path("l")
	setup.WriteFile(t, f, "")
	if err := os.Symlink("f", l); err != nil {
		t.Fatalf("setup: %v", err)
	}
	a := t.Actor()
	in := t.Inotify(0)
	wdF := watch(t, in, f, unix.IN_ATTRIB)
	wdL := watch(t, in, l, unix.IN_ATTRIB|unix.IN_DELETE_SELF|unix.IN_DONT_FOLLOW)
	if wdL == wdF {
		t.Errorf("IN_DONT_FOLLOW watch on the symlink returned the target's wd %d", wdF)
	}
	if wd := watch(t, in, l, unix.IN_ATTRIB); wd != wdF {
		t.Errorf("watch on the symlink without IN_DONT_FOLLOW returned wd %d, want the target's %d", wd, wdF)
	}
	expect.InotifySteps(t, in, "watch f IN_ATTRIB, symlink l->f IN_ATTRIB|IN_DELETE_SELF|IN_DONT_FOLLOW", []step{
		{Did: "chmod l 0600 (follows to f)", Do: func() error { return a.Chmod(l, 0o600) }, Want: []inotify.Event{ev(wdF, unix.IN_ATTRIB, "")}},
		{Did: "unlink l", Do: func() error { return a.Unlink(l) }, Want: []inotify.Event{ev(wdL, unix.IN_ATTRIB, ""), ev(wdL, unix.IN_DELETE_SELF, ""), ev(wdL, unix.IN_IGNORED, "")}},
	})
}

// coalesceIdentical: inotify(7) NOTES "If successive output inotify events
// ... are identical (same wd, mask, cookie, and name), then they are coalesced
// into a single event if the older event has not yet been read";
// fs/notify/inotify/inotify_fsnotify.c inotify_merge compares with the last
// queued event only.
func coalesceIdentical(t *harness.T) {
	f := t.Path("f")
	setup.WriteFile(t, f, "")
	a := t.Actor()
	fd, err := a.Open(f, unix.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("setup: actor open: %v", err)
	}
	in := t.Inotify(0)
	wd := watch(t, in, t.Dir(), unix.IN_MODIFY|unix.IN_ATTRIB)
	write := func() error { _, err := a.Write(fd, []byte("x")); return err }
	expect.InotifySteps(t, in, "f open in actor; watch dir IN_MODIFY|IN_ATTRIB", []step{
		{Did: "write; write", Do: func() error {
			if err := write(); err != nil {
				return err
			}
			return write()
		}, Want: []inotify.Event{ev(wd, unix.IN_MODIFY, "f")}},
		{Did: "write (the earlier event was read)", Do: write, Want: []inotify.Event{ev(wd, unix.IN_MODIFY, "f")}},
		{Did: "write; chmod; write", Do: func() error {
			if err := write(); err != nil {
				return err
			}
			if err := a.Chmod(f, 0o600); err != nil {
				return err
			}
			return write()
		}, Want: []inotify.Event{ev(wd, unix.IN_MODIFY, "f"), ev(wd, unix.IN_ATTRIB, "f"), ev(wd, unix.IN_MODIFY, "f")}},
		{Did: "close", Do: func() error { return a.Close(fd) }, Want: nil},
	})
}

// queueOverflow: inotify(7) /proc/sys/fs/inotify/max_queued_events "Events
// in excess of this limit are dropped, but an IN_Q_OVERFLOW event is always
// generated"; IN_Q_OVERFLOW "wd is -1". fs/notify/notification.c
// fsnotify_insert_event: at q_len >= max_events the group's single overflow
// event is queued once (it counts in q_len) and later events are dropped
// while it is queued; reading it makes room again. Alternating writes and
// reads give alternating IN_MODIFY and IN_ACCESS, which never coalesce
// (inotify_merge compares with the last queued event only).
//
// The limit is 16384 by default, too many for one actor round trip each, so
// the test process itself writes and reads here: only the sequence matters,
// and inotify events carry no pid.
func queueOverflow(t *harness.T) {
	f := t.Path("f")
	setup.WriteFile(t, f, "x")
	fd, err := unix.Open(f, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	var in *inotify.Instance
	limit := queuelimit.Inotify.Open(t, func() { in = t.Inotify(0) })
	wd := watch(t, in, f, unix.IN_MODIFY|unix.IN_ACCESS)
	// limit events fill the queue, the next one queues IN_Q_OVERFLOW, the
	// one after that is dropped.
	n := limit + 2
	want := make([]inotify.Event, 0, limit+1)
	buf := []byte("x")
	for i := 0; i < n; i++ {
		mask := uint32(unix.IN_MODIFY)
		var err error
		if i%2 == 0 {
			_, err = unix.Pwrite(fd, buf, 0)
		} else {
			mask = unix.IN_ACCESS
			var m int
			if m, err = unix.Pread(fd, buf, 0); err == nil && m != 1 {
				err = fmt.Errorf("pread returned %d bytes, want 1", m)
			}
		}
		if err != nil {
			t.Fatalf("operation %d: %v", i, err)
		}
		if i < limit {
			want = append(want, ev(wd, mask, ""))
		}
	}
	want = append(want, inotify.Event{Wd: -1, Mask: unix.IN_Q_OVERFLOW})
	got, err := in.Drain()
	if err != nil {
		t.Fatalf("reading events: %v", err)
	}
	expect.Inotify(t, fmt.Sprintf("max_queued_events=%d; watch file IN_MODIFY|IN_ACCESS; %d alternating pwrite/pread", limit, n), got, want)
	a := t.Actor()
	expect.InotifySteps(t, in, "after reading the overflowed queue", []step{
		{Did: "actor writes f", Do: func() error { return a.WriteFile(f, []byte("y")) }, Want: []inotify.Event{ev(wd, unix.IN_MODIFY, "")}},
	})
}
