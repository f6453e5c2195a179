package main

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

var umountCases = []harness.Case{{
	Name: "marks_removed_at_umount",
	Doc: "unmounting a filesystem removes the group's inode, mount and filesystem marks on it: umount returns and the " +
		"group's fdinfo lists none of them",
	Needs:       []*feature.Feature{feature.MarkFilesystem},
	Filesystems: []string{},
	Run:         marksRemovedAtUmount,
}}

// umountWait bounds the umount: a filesystem mark left attached keeps the
// superblock's connector count up, and generic_shutdown_super then waits for
// it without end (fsnotify_sb_delete: wait_var_event on
// s_fsnotify_connectors).
const umountWait = 10 * time.Second

// marksRemovedAtUmount: a mark lives as long as its object. Unmounting a
// filesystem ends all three kinds of object a group can mark on it: the
// superblock's shutdown removes its inodes' marks (fsnotify_sb_delete:
// fsnotify_unmount_inodes) and its own filesystem marks
// (fsnotify_clear_marks_by_sb), and the mount's teardown its mount marks
// (cleanup_mnt: fsnotify_vfsmount_delete), before umount(2) returns. The
// case marks a file, the mount and the filesystem of a private tmpfs in
// one group, unmounts it, and reads the group's marks from its fdinfo
// (fs/notify/fdinfo.c: one line per mark): none may be left, and the
// group stays usable.
func marksRemovedAtUmount(t *harness.T) {
	root := t.TempDir()
	if err := unix.Mount("fsnsuite-umount", root, "tmpfs", 0, "mode=0755,size=1m"); err != nil {
		t.Fatalf("setup: mount tmpfs: %v", err)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			unix.Unmount(root, unix.MNT_DETACH)
		}
	})
	f := root + "/f"
	setup.Touch(t, f)
	g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	for _, m := range []struct {
		flags uint
		path  string
	}{{0, f}, {unix.FAN_MARK_MOUNT, root}, {unix.FAN_MARK_FILESYSTEM, root}} {
		if err := g.Add(m.flags, unix.FAN_OPEN, m.path); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	marks, err := g.Marks()
	if err != nil {
		t.Fatalf("%v", err)
	}
	kinds := map[fanotify.MarkKind]int{}
	for _, m := range marks {
		kinds[m.Kind]++
	}
	if len(marks) != 3 || kinds[fanotify.InodeMark] != 1 || kinds[fanotify.MountMark] != 1 || kinds[fanotify.FilesystemMark] != 1 {
		t.Fatalf("setup: fdinfo lists %v, want one inode, one mount and one filesystem mark", marks)
	}
	done := make(chan error, 1)
	go func() {
		// EBUSY: another process may hold the mount a moment (passing
		// through /proc/PID/root, say); marks never make a mount busy.
		var err error
		for try := 0; try < 10; try++ {
			if err = unix.Unmount(root, 0); err != unix.EBUSY {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == unix.EBUSY {
			t.Skipf("undecided: umount %s stayed EBUSY for 1 s: something else holds the mount", root)
		}
		if err != nil {
			t.Fatalf("umount %s with an inode, a mount and a filesystem mark on it: %v", root, err)
		}
		mounted = false
	case <-time.After(umountWait + time.Second):
		t.Fatalf("umount %s with an inode, a mount and a filesystem mark on it did not return within %v (a mark left on the superblock keeps fsnotify_sb_delete waiting for its connector)", root, umountWait)
	}
	marks, err = g.Marks()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if len(marks) != 0 {
		t.Errorf("after umount the group's fdinfo still lists %v, want no mark (fsnotify_sb_delete, fsnotify_vfsmount_delete)", marks)
	}
	// The group is still usable: a new mark elsewhere.
	other := t.Path("other")
	setup.Touch(t, other)
	if err := g.Add(0, unix.FAN_OPEN, other); err != nil {
		t.Errorf("a new mark after the umount: %v", err)
	}
}
