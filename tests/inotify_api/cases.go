package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/fdinfo"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// Every expectation comes from inotify(7), inotify_init(2),
// inotify_add_watch(2), inotify_rm_watch(2), fcntl(2) or the function of
// fs/notify named beside it.

var cases = []harness.Case{
	{
		Name: "fdinfo_watches",
		Doc:  "/proc/PID/fdinfo lists each watch with its wd, inode, device, user mask (IN_ONESHOT/IN_EXCL_UNLINK kept, IN_MASK_ADD merged) and file handle; a removed watch is gone",
		Run:  fdinfoWatches,
	},
	{
		Name: "ioctl_setnextwd",
		Doc:  "ioctl(INOTIFY_IOC_SETNEXTWD, n) makes n the next watch descriptor (CRIU's restore), INT_MAX included, after which the numbers wrap to 1; 0 and INT_MAX+1 are EINVAL and leave the next one as it was",
		Run:  ioctlSetNextWd,
	},
	{
		Name: "fionread",
		Doc:  "ioctl(FIONREAD) is the byte count of the queued events, names padded to 16 bytes, and 0 once read",
		Run:  fionread,
	},
	{
		Name: "sigio",
		Doc:  "with O_ASYNC and F_SETOWN an inotify fd sends SIGIO when an event is queued, and none once O_ASYNC is cleared",
		Run:  sigio,
	},
	{
		Name:        "legacy_inotify_init",
		Doc:         "the legacy inotify_init syscall returns a working inotify fd without FD_CLOEXEC or O_NONBLOCK",
		Filesystems: []string{},
		Run:         legacyInit,
	},
	{
		Name: "read_short_buffer",
		Doc:  "read(2) with a buffer smaller than the next event is EINVAL and leaves the event queued",
		Run:  readShortBuffer,
	},
	{
		Name: "read_blocks_until_event",
		Doc:  "read(2) of an empty instance made without IN_NONBLOCK sleeps in the read until an event is queued, then returns that event",
		Run:  readBlocksUntilEvent,
	},
	{
		Name: "read_efault",
		Doc:  "read(2) into an unmapped buffer is EFAULT and the event it was copying is gone",
		Run:  readEfault,
	},
	{
		Name:        "unmount_watched_fs",
		Doc:         "unmounting a filesystem queues IN_UNMOUNT (with IN_ISDIR for a directory) then IN_IGNORED for each watch on it",
		Filesystems: []string{},
		Run:         unmountWatchedFs,
	},
	{
		Name:        "overlay_file_watch_after_drop_caches",
		Doc:         "a watch on an overlayfs lower file still reports events after drop_caches and copy-up, and none for the real layer files",
		Filesystems: []string{"overlay"},
		Fix:         &harness.Fix{Commit: "764baba80168", Subject: "ovl: hash non-dir by lower inode for fsnotify"},
		Run:         overlayFileWatch,
	},
	{
		Name:        "overlay_dir_watch_after_drop_caches",
		Doc:         "a watch on an overlayfs lower directory still reports its own and its entries' events after drop_caches and copy-up",
		Filesystems: []string{"overlay"},
		Fix:         &harness.Fix{Commit: "31747eda41ef", Subject: "ovl: hash directory inodes for fsnotify"},
		Run:         overlayDirWatch,
	},
	{
		Name: "api_errors",
		// Subtests: the names its t.Run calls use, so that a skip keeps these leaves.
		Subtests: []string{"init1_unknown_flag", "add_mask_zero", "add_mask_no_known_bit", "add_mask_add_and_create", "add_fd_closed", "add_fd_not_inotify", "add_no_read_permission", "add_owner_read_only", "add_missing_path", "rm_unknown_wd", "rm_fd_closed", "rm_fd_not_inotify", "rm_valid_wd", "rm_same_wd_again"},
		Doc:      "errnos of inotify_init1, inotify_add_watch and inotify_rm_watch for bad flags, masks, descriptors, watch descriptors and files the caller may not read",
		Run:      apiErrors,
	},
}

// fdinfoWatches: inotify(7) "/proc/[pid]/fdinfo ... inotify wd:... ino:...
// sdev:... mask:... ignored_mask:0 fhandle-bytes:... fhandle-type:...
// f_handle:..."; the mask is inotify_mark_user_mask
// (fs/notify/inotify/inotify.h): the watch's IN_ALL_EVENTS bits plus
// IN_EXCL_UNLINK and IN_ONESHOT; IN_MASK_ADD ORs into the existing watch
// (inotify_add_watch(2)); the handle is what name_to_handle_at(2) gives
// (show_mark_fhandle, fs/notify/fdinfo.c); inotify_rm_watch removes it.
// The IN_ONESHOT/IN_EXCL_UNLINK part is fdinfoUserFlags: before
// a32e697cda27 fdinfo printed mask & IN_ALL_EVENTS, so on a kernel without
// it those two bits are left out of the comparison, with a note. Where the
// probe saw the flags missing on a kernel that must show them
// (*feature.Misbehaved), the case fails with the probe's "succeeded, but"
// and compares the whole masks, so the fdinfo lines that lack them are
// named too.
func fdinfoWatches(t *harness.T) {
	flags := uint32(unix.IN_ONESHOT | unix.IN_EXCL_UNLINK)
	var wrong *feature.Misbehaved
	if err := fdinfoUserFlags.Check(); err == nil {
		flags = 0
	} else if feature.IsSkip(err) {
		t.Notef("IN_ONESHOT/IN_EXCL_UNLINK part left out of the fdinfo masks: %v", err)
	} else if errors.As(err, &wrong) {
		t.Errorf("%v", err)
		flags = 0
	} else {
		t.Fatalf("%v", err)
	}
	dir := t.Path("d")
	setup.Mkdir(t, dir)
	f, g := filepath.Join(dir, "f"), filepath.Join(dir, "g")
	setup.Touch(t, f, g)
	in := t.Inotify(0)
	type watch struct {
		path string
		mask uint32
		want inotify.Mask
	}
	watches := []watch{
		{dir, unix.IN_CREATE | unix.IN_DELETE | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW, unix.IN_CREATE | unix.IN_DELETE},
		{f, unix.IN_MODIFY | unix.IN_ONESHOT, unix.IN_MODIFY | unix.IN_ONESHOT},
		{g, unix.IN_OPEN | unix.IN_EXCL_UNLINK, unix.IN_OPEN | unix.IN_EXCL_UNLINK | unix.IN_ATTRIB},
	}
	wds := make([]int32, len(watches))
	for i, w := range watches {
		wd, err := in.AddWatch(w.path, w.mask)
		if err != nil {
			t.Fatalf("%v", err)
		}
		wds[i] = wd
	}
	// IN_MASK_ADD on g's watch: the same wd, mask ORed (IN_EXCL_UNLINK kept).
	wd, err := in.AddWatch(g, unix.IN_ATTRIB|unix.IN_MASK_ADD)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if wd != wds[2] {
		t.Errorf("IN_MASK_ADD on a watched inode returned wd %d, want the existing %d", wd, wds[2])
	}
	wantWatch := func(i int) inotify.WatchState {
		var st unix.Stat_t
		if err := unix.Stat(watches[i].path, &st); err != nil {
			t.Fatalf("%v", err)
		}
		fid, err := fanotify.FIDOf(watches[i].path)
		if err != nil {
			t.Fatalf("%v", err)
		}
		return inotify.WatchState{Wd: wds[i], Ino: st.Ino, Dev: st.Dev, Mask: watches[i].want &^ inotify.Mask(flags), HandleType: fid.HandleType, Handle: fid.Handle}
	}
	check := func(when string, idx ...int) {
		t.Helper()
		var wants []inotify.WatchState
		for _, i := range idx {
			wants = append(wants, wantWatch(i))
		}
		read := func() ([]inotify.WatchState, error) {
			got, err := in.Watches()
			for i := range got {
				got[i].Mask &^= inotify.Mask(flags)
			}
			return got, err
		}
		byWd := func(got []inotify.WatchState) map[int32]inotify.WatchState {
			m := map[int32]inotify.WatchState{}
			for _, w := range got {
				m[w.Wd] = w
			}
			return m
		}
		// handleless: the watch is as wanted but for its file handle,
		// which fdinfo left out. Such a read is made again
		// (harness/fdinfo: on 7.x show_mark_fhandle leaves the handle
		// out while another task holds the filesystem's s_umount).
		handleless := func(got map[int32]inotify.WatchState, want inotify.WatchState) bool {
			g, ok := got[want.Wd]
			if !ok || g.Handle != "" || g.HandleType != 0 || want.Handle == "" {
				return false
			}
			g.HandleType, g.Handle = want.HandleType, want.Handle
			return g == want
		}
		got, reads, err := fdinfo.ReadUntil(read, func(got []inotify.WatchState) bool {
			m := byWd(got)
			return slices.ContainsFunc(wants, func(w inotify.WatchState) bool { return handleless(m, w) })
		})
		if err != nil {
			t.Fatalf("%v", err)
		}
		if len(got) != len(idx) {
			t.Errorf("%s: fdinfo lists %d watches %v, want %d", when, len(got), got, len(idx))
		}
		m := byWd(got)
		for _, want := range wants {
			switch g, ok := m[want.Wd]; {
			case handleless(m, want):
				t.Errorf("%s: fdinfo watch wd=%d is as wanted but has no file handle, want type %d handle %s: %s", when, want.Wd, want.HandleType, want.Handle, fdinfo.MissingNote(reads))
			case !ok || g != want:
				t.Errorf("%s: fdinfo watch wd=%d is %v, want %v", when, want.Wd, g, want)
			}
		}
	}
	check("three watches, one with IN_MASK_ADD", 0, 1, 2)
	if err := in.RmWatch(wds[1]); err != nil {
		t.Fatalf("%v", err)
	}
	check("after inotify_rm_watch of f's watch", 0, 2)
}

// inotifyEventLen is sizeof(struct inotify_event) plus the name padded the
// way inotify does it: round_event_name_len (fs/notify/inotify/
// inotify_user.c) rounds name length + 1 up to a multiple of
// sizeof(struct inotify_event); no name, no padding. inotify(7): "len ...
// may include further null bytes ... to align subsequent reads".
func inotifyEventLen(name string) int {
	const hdr = unix.SizeofInotifyEvent
	if name == "" {
		return hdr
	}
	return hdr + (len(name)+1+hdr-1)/hdr*hdr
}

// inotifyIocSetNextWd is INOTIFY_IOC_SETNEXTWD, _IOW('I', 0, __s32)
// (include/uapi/linux/inotify.h).
const inotifyIocSetNextWd = 0x40044900

// ioctlSetNextWd: fs/notify/inotify/inotify_user.c inotify_ioctl, under
// CONFIG_CHECKPOINT_RESTORE (since 4.16, e1603b6effe1 "inotify: Extend
// ioctl to allow to request id of new watch descriptor"): an argument from
// 1 to INT_MAX becomes the cursor of the instance's IDR (idr_set_cursor),
// so inotify_add_watch's idr_alloc_cyclic hands out that number next, and
// the one after it then; any other argument is -EINVAL with the cursor
// untouched. INT_MAX itself is allowed and is the largest wd
// (idr_alloc_cyclic(idr, mark, 1, 0): end 0 is INT_MAX), after which the
// cursor wraps to the lowest free number from 1. Without
// CONFIG_CHECKPOINT_RESTORE the command is unknown: -ENOTTY (the switch's
// default).
func ioctlSetNextWd(t *harness.T) {
	f := []string{t.Path("f1"), t.Path("f2"), t.Path("f3"), t.Path("f4"), t.Path("f5")}
	setup.Touch(t, f...)
	in := t.Inotify(0)
	ioctl := func(arg uintptr) error {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(in.Fd()), inotifyIocSetNextWd, arg)
		if e != 0 {
			return e
		}
		return nil
	}
	add := func(path string, want int32, did string) {
		t.Helper()
		wd, err := in.AddWatch(path, unix.IN_OPEN)
		if err != nil {
			t.Fatalf("inotify_add_watch(%s): %v", path, err)
		}
		if wd != want {
			t.Errorf("%s: inotify_add_watch(%s) = wd %d, want %d", did, filepath.Base(path), wd, want)
		}
	}
	if err := ioctl(100); errors.Is(err, unix.ENOTTY) {
		t.Skipf("INOTIFY_IOC_SETNEXTWD: ENOTTY: this kernel is built without CONFIG_CHECKPOINT_RESTORE, or is older than 4.16 (inotify_ioctl)")
	} else if err != nil {
		t.Fatalf("ioctl(INOTIFY_IOC_SETNEXTWD, 100): %v, want success", err)
	}
	add(f[0], 100, "after SETNEXTWD 100")
	add(f[1], 101, "the watch after it")
	for _, arg := range []uintptr{0, 1 << 31} {
		if err := ioctl(arg); !errors.Is(err, unix.EINVAL) {
			t.Errorf("ioctl(INOTIFY_IOC_SETNEXTWD, %d): %v, want EINVAL (1..INT_MAX only)", arg, err)
		}
	}
	add(f[2], 102, "after SETNEXTWD 0 and 2^31 failed")
	if err := ioctl(math.MaxInt32); err != nil {
		t.Fatalf("ioctl(INOTIFY_IOC_SETNEXTWD, INT_MAX): %v, want success (1..INT_MAX)", err)
	}
	add(f[3], math.MaxInt32, "after SETNEXTWD INT_MAX")
	add(f[4], 1, "the watch after wd INT_MAX (the cursor wraps to the lowest free wd from 1)")
	// The numbers are the watches' own: an event on f1 carries wd 100.
	a := t.Actor()
	if _, err := a.ReadFile(f[0], 1); err != nil {
		t.Fatalf("%v", err)
	}
	got, err := in.Drain()
	if err != nil {
		t.Fatalf("%v", err)
	}
	expect.Inotify(t, "SETNEXTWD 100, watches IN_OPEN on f1 (wd 100), f2, f3; actor opens f1", got, []inotify.Event{{Wd: 100, Mask: unix.IN_OPEN}})
}

// fionread: inotify(7) "ioctl(2) FIONREAD returns the number of bytes
// available to read from an inotify file descriptor" (inotify_ioctl sums
// each queued event's size); read(2) returns that many bytes.
func fionread(t *harness.T) {
	dir := t.Path("d")
	setup.Mkdir(t, dir)
	a := t.Actor()
	in := t.Inotify(0)
	wd, err := in.AddWatch(dir, unix.IN_CREATE)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if n := expect.Queued(t, in.Fd()); n != 0 {
		t.Errorf("FIONREAD of an empty instance: %d, want 0", n)
	}
	names := []string{"f", "a_name_of_twenty_one_"}
	want := 0
	for _, n := range names {
		if err := a.Touch(filepath.Join(dir, n)); err != nil {
			t.Fatalf("%v", err)
		}
		want += inotifyEventLen(n)
	}
	if n := expect.Queued(t, in.Fd()); n != want {
		t.Errorf("FIONREAD with IN_CREATE of %q queued: %d, want %d", names, n, want)
	}
	buf := make([]byte, 4096)
	n, err := unix.Read(in.Fd(), buf)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if n != want {
		t.Errorf("read returned %d bytes, want %d (what FIONREAD promised)", n, want)
	}
	got, err := inotify.Decode(buf[:n])
	if err != nil {
		t.Fatalf("%v", err)
	}
	expect.Inotify(t, "watch dir IN_CREATE; actor creates f and a_name_of_twenty_one_", got, []inotify.Event{
		{Wd: wd, Mask: unix.IN_CREATE, Name: names[0]}, {Wd: wd, Mask: unix.IN_CREATE, Name: names[1]},
	})
	if n := expect.Queued(t, in.Fd()); n != 0 {
		t.Errorf("FIONREAD after reading everything: %d, want 0", n)
	}
}

// sigio: fcntl(2) F_SETOWN / O_ASYNC "generate a signal when input or output
// becomes possible on this file descriptor"; inotify implements it with
// fsnotify_fasync (fs/notify/notification.c fsnotify_insert_event calls
// kill_fasync(SIGIO) for each queued event). Go delivers the process-directed
// signal to the channel.
func sigio(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	a := t.Actor()
	in := t.Inotify(unix.IN_NONBLOCK)
	wd, err := in.AddWatch(f, unix.IN_ATTRIB)
	if err != nil {
		t.Fatalf("%v", err)
	}
	sig := make(chan os.Signal, 16)
	signal.Notify(sig, syscall.SIGIO)
	t.Cleanup(func() { signal.Stop(sig) })
	if _, err := unix.FcntlInt(uintptr(in.Fd()), unix.F_SETOWN, os.Getpid()); err != nil {
		t.Fatalf("F_SETOWN: %v", err)
	}
	setFl := func(async bool) {
		fl, err := unix.FcntlInt(uintptr(in.Fd()), unix.F_GETFL, 0)
		if err != nil {
			t.Fatalf("F_GETFL: %v", err)
		}
		if async {
			fl |= unix.O_ASYNC
		} else {
			fl &^= unix.O_ASYNC
		}
		if _, err := unix.FcntlInt(uintptr(in.Fd()), unix.F_SETFL, fl); err != nil {
			t.Fatalf("F_SETFL: %v", err)
		}
	}
	setFl(true)
	select {
	case <-sig:
		t.Fatalf("SIGIO before any event")
	case <-time.After(expect.Quiet):
	}
	if err := a.Chmod(f, 0o600); err != nil {
		t.Fatalf("%v", err)
	}
	select {
	case <-sig:
	case <-time.After(5 * time.Second):
		t.Errorf("O_ASYNC inotify fd, F_SETOWN self, watch f IN_ATTRIB; actor chmods f: no SIGIO within 5s")
	}
	if _, err := in.Drain(); err != nil {
		t.Fatalf("%v", err)
	}
	setFl(false)
	if err := a.Chmod(f, 0o644); err != nil {
		t.Fatalf("%v", err)
	}
	got, err := in.Drain()
	if err != nil {
		t.Fatalf("%v", err)
	}
	// inotify(7): IN_ATTRIB "Metadata changed—for example, permissions
	// (e.g., chmod(2))"; a watch on the file itself: no name.
	expect.Inotify(t, "watch f IN_ATTRIB; O_ASYNC cleared; actor chmods f", got, []inotify.Event{{Wd: wd, Mask: unix.IN_ATTRIB}})
	select {
	case <-sig:
		t.Errorf("SIGIO after O_ASYNC was cleared")
	case <-time.After(expect.Quiet):
	}
}

// legacyInit: inotify_init(2) "If flags is 0, then inotify_init1() is the
// same as inotify_init()": an inotify fd with neither close-on-exec nor
// O_NONBLOCK. Architectures added after inotify_init1 have no inotify_init
// syscall (ENOSYS here): a skip naming that.
func legacyInit(t *harness.T) {
	fd, err := legacyInotifyInit()
	if errors.Is(err, unix.ENOSYS) {
		t.Skipf("inotify_init(2): ENOSYS (this architecture has only inotify_init1)")
	}
	if err != nil {
		t.Fatalf("inotify_init(): %v", err)
	}
	defer unix.Close(fd)
	fdFlags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		t.Fatalf("%v", err)
	}
	flFlags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if fdFlags&unix.FD_CLOEXEC != 0 || flFlags&unix.O_NONBLOCK != 0 {
		t.Errorf("inotify_init() fd: FD_CLOEXEC=%v O_NONBLOCK=%v, want neither", fdFlags&unix.FD_CLOEXEC != 0, flFlags&unix.O_NONBLOCK != 0)
	}
	dir := t.TempDir()
	wd, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE)
	if err != nil {
		t.Fatalf("inotify_add_watch on the inotify_init() fd: %v", err)
	}
	setup.Touch(t, filepath.Join(dir, "f"))
	buf := make([]byte, 4096)
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatalf("%v", err)
	}
	n, err := unix.Read(fd, buf)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	got, err := inotify.Decode(buf[:n])
	if err != nil {
		t.Fatalf("%v", err)
	}
	expect.Inotify(t, "inotify_init(); watch dir IN_CREATE; create f", got, []inotify.Event{{Wd: int32(wd), Mask: unix.IN_CREATE, Name: "f"}})
}

// readShortBuffer: inotify(7) "since Linux 2.6.21, read(2) returns EINVAL"
// when "the buffer given to read(2) is too small to return information about
// the next event" (inotify_read: get_one_event leaves it queued).
func readShortBuffer(t *harness.T) {
	dir := t.Path("d")
	setup.Mkdir(t, dir)
	a := t.Actor()
	in := t.Inotify(unix.IN_NONBLOCK)
	wd, err := in.AddWatch(dir, unix.IN_CREATE)
	if err != nil {
		t.Fatalf("%v", err)
	}
	_, err = unix.Read(in.Fd(), make([]byte, 64))
	expect.Errno(t, "read of an empty IN_NONBLOCK instance", err, unix.EAGAIN)
	if err := a.Touch(filepath.Join(dir, "f")); err != nil {
		t.Fatalf("%v", err)
	}
	size := inotifyEventLen("f")
	_, err = unix.Read(in.Fd(), make([]byte, size-1))
	expect.Errno(t, fmt.Sprintf("read with %d bytes for a %d-byte event", size-1, size), err, unix.EINVAL)
	got, err := in.Drain()
	if err != nil {
		t.Fatalf("%v", err)
	}
	expect.Inotify(t, "watch dir IN_CREATE; actor creates f; short read refused; then a full read", got,
		[]inotify.Event{{Wd: wd, Mask: unix.IN_CREATE, Name: "f"}})
}

// readEfault: inotify_read (fs/notify/inotify/inotify_user.c) takes the event
// off the queue (get_one_event), destroys it after copy_event_to_user whatever
// the copy's result, and returns the copy's error: read(2) EFAULT "buf is
// outside your accessible address space".
func readEfault(t *harness.T) {
	dir := t.Path("d")
	setup.Mkdir(t, dir)
	a := t.Actor()
	in := t.Inotify(unix.IN_NONBLOCK)
	if _, err := in.AddWatch(dir, unix.IN_CREATE); err != nil {
		t.Fatalf("%v", err)
	}
	if err := a.Touch(filepath.Join(dir, "f")); err != nil {
		t.Fatalf("%v", err)
	}
	const badAddress = 1 // the first page is never mapped
	_, _, e := unix.Syscall(unix.SYS_READ, uintptr(in.Fd()), badAddress, 4096)
	var err error
	if e != 0 {
		err = e
	}
	expect.Errno(t, "read of a queued IN_CREATE into an unmapped buffer", err, unix.EFAULT)
	if n := expect.Queued(t, in.Fd()); n != 0 {
		t.Errorf("FIONREAD after the failed read: %d, want 0 (the event is consumed)", n)
	}
	expect.InotifyQuiet(t, "watch dir IN_CREATE; actor creates f; read into an unmapped buffer", in, expect.Quiet)
}

// unmountWatchedFs: inotify(7) IN_UNMOUNT "Filesystem containing watched
// object was unmounted. In addition, an IN_IGNORED event will subsequently be
// generated for the watch descriptor" (fsnotify_unmount_inodes sends
// FS_UNMOUNT to each watched inode through fsnotify_inode, which adds
// FS_ISDIR for a directory: inotify(7) IN_ISDIR "Subject of this event is a
// directory"; then fsnotify_inode_delete drops its marks). Two watches on the filesystem: the kernel walks its inodes in no
// promised order, so each watch's own pair is compared in order.
func unmountWatchedFs(t *harness.T) {
	mnt := t.TempDir()
	if err := unix.Mount("fsnsuite-unmount", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			unix.Unmount(mnt, unix.MNT_DETACH)
		}
	})
	f := filepath.Join(mnt, "f")
	setup.Touch(t, f)
	in := t.Inotify(0)
	wdRoot, err := in.AddWatch(mnt, unix.IN_CREATE)
	if err != nil {
		t.Fatalf("%v", err)
	}
	wdFile, err := in.AddWatch(f, unix.IN_OPEN)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if err := unix.Unmount(mnt, 0); err != nil {
		t.Fatalf("unmount %s: %v", mnt, err)
	}
	mounted = false
	got, err := in.Drain()
	if err != nil {
		t.Fatalf("%v", err)
	}
	byWd := map[int32][]inotify.Event{}
	for _, e := range got {
		byWd[e.Wd] = append(byWd[e.Wd], e)
	}
	if len(byWd) > 2 {
		t.Errorf("events for %d watch descriptors, want 2: %v", len(byWd), got)
	}
	for _, w := range []struct {
		wd    int32
		isdir inotify.Mask
	}{{wdRoot, unix.IN_ISDIR}, {wdFile, 0}} {
		expect.Inotify(t, fmt.Sprintf("watch the root (wd %d) and a file (wd %d) of a tmpfs; unmount it; events of wd %d", wdRoot, wdFile, w.wd),
			byWd[w.wd], []inotify.Event{{Wd: w.wd, Mask: unix.IN_UNMOUNT | w.isdir}, {Wd: w.wd, Mask: unix.IN_IGNORED}})
	}
	if w, err := in.Watches(); err != nil || len(w) != 0 {
		t.Errorf("fdinfo after the unmount: %v (%v), want no watch", w, err)
	}
}

// The overlay watch cases: an inotify watch pins the inode, not the dentry;
// after drop_caches a new overlayfs dentry must find the same inode, which
// overlayfs guarantees by hashing its inodes (the Fix of each case; LTP
// inotify07/inotify08). The events are inotify(7)'s: IN_ATTRIB for chmod
// (which copies the object up), IN_OPEN and IN_CLOSE_WRITE for a write,
// IN_CREATE/IN_DELETE with the name in a watched directory, IN_ISDIR when the
// subject is the directory itself. Changes made directly to the layers' real
// files are not overlayfs events. vm.drop_caches = 2 is global but changes no
// setting (fixture.DropCaches).
//
// On a kernel without the Fix the lookup after drop_caches makes a new
// overlayfs inode (the one the watch pins is not found by its hash): the
// operations reach the new inode and the watch reports nothing at all. The
// case confirms the Fix (T.KernelLacks) only when exactly nothing arrived,
// in the steps and in the final window (overlaySilence).

// overlaySilence counts what an overlay watch case got, for its HINT.
type overlaySilence struct{ events int }

// step performs one operation, drains in and compares.
func (o *overlaySilence) step(t *harness.T, in *inotify.Instance, did string, do func() error, want []inotify.Event) {
	t.Helper()
	if err := do(); err != nil {
		t.Fatalf("%s: %v", did, err)
	}
	got, err := in.Drain()
	if err != nil {
		t.Fatalf("%v", err)
	}
	o.events += len(got)
	expect.Inotify(t, did, got, want)
}

// end checks the final window and confirms the case's Fix when the watch
// reported nothing at all (every step expects an event).
func (o *overlaySilence) end(t *harness.T, in *inotify.Instance, did string) {
	t.Helper()
	if expect.InotifyQuiet(t, did, in, expect.Quiet) && o.events == 0 {
		t.KernelLacks(t.CaseFix())
	}
}

// overlayFileWatch: see above.
func overlayFileWatch(t *harness.T) {
	f := filepath.Join(t.FS().Root, fixture.OverlayLowerFile)
	lower, err := fixture.OverlayLayer("lower")
	if err != nil {
		t.Fatalf("%v", err)
	}
	upper, err := fixture.OverlayLayer("upper")
	if err != nil {
		t.Fatalf("%v", err)
	}
	a := t.Actor()
	in := t.Inotify(0)
	wd, err := in.AddWatch(f, unix.IN_ATTRIB|unix.IN_OPEN|unix.IN_CLOSE_WRITE)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if err := fixture.DropCaches(); err != nil {
		t.Fatalf("%v", err)
	}
	did := "watch overlay lower_file ATTRIB|OPEN|CLOSE_WRITE; drop_caches; "
	var o overlaySilence
	o.step(t, in, did+"actor chmods it (copy-up)", func() error { return a.Chmod(f, 0o600) },
		[]inotify.Event{{Wd: wd, Mask: unix.IN_ATTRIB}})
	o.step(t, in, did+"actor writes it", func() error { return a.WriteFile(f, []byte("x")) },
		[]inotify.Event{{Wd: wd, Mask: unix.IN_OPEN}, {Wd: wd, Mask: unix.IN_CLOSE_WRITE}})
	now := time.Now()
	o.step(t, in, did+"touch the real lower and upper files", func() error {
		if err := os.Chtimes(filepath.Join(lower, fixture.OverlayLowerFile), now, now); err != nil {
			return err
		}
		return os.Chtimes(filepath.Join(upper, fixture.OverlayLowerFile), now, now)
	}, nil)
	o.end(t, in, did+"after the last step")
}

// overlayDirWatch: see above.
func overlayDirWatch(t *harness.T) {
	root := t.FS().Root
	d := filepath.Join(root, fixture.OverlayLowerDir)
	a := t.Actor()
	in := t.Inotify(0)
	wd, err := in.AddWatch(d, unix.IN_ATTRIB|unix.IN_CREATE|unix.IN_DELETE)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if err := fixture.DropCaches(); err != nil {
		t.Fatalf("%v", err)
	}
	did := "watch overlay lower_dir ATTRIB|CREATE|DELETE; drop_caches; "
	var o overlaySilence
	o.step(t, in, did+"actor chmods it (copy-up)", func() error { return a.Chmod(d, 0o700) },
		[]inotify.Event{{Wd: wd, Mask: unix.IN_ATTRIB | unix.IN_ISDIR}})
	o.step(t, in, did+"actor creates new in it", func() error { return a.Touch(filepath.Join(d, "new")) },
		[]inotify.Event{{Wd: wd, Mask: unix.IN_CREATE, Name: "new"}})
	o.step(t, in, did+"actor unlinks the lower child", func() error { return a.Unlink(filepath.Join(root, fixture.OverlayLowerChild)) },
		[]inotify.Event{{Wd: wd, Mask: unix.IN_DELETE, Name: filepath.Base(fixture.OverlayLowerChild)}})
	o.end(t, in, did+"after the last step")
}

// apiErrors: inotify_init1(2) EINVAL "An invalid value was specified in
// flags"; inotify_add_watch(2) EBADF "fd is not a valid file descriptor",
// EINVAL "The given event mask contains no valid events; or IN_MASK_ADD and
// IN_MASK_CREATE were both specified in mask; or fd is not an inotify file
// descriptor", ENOENT "A directory component in pathname does not exist";
// inotify_rm_watch(2) EBADF "fd is not a valid file descriptor", EINVAL "The
// watch descriptor wd is not valid; or fd is not an inotify file descriptor".
func apiErrors(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	in := t.Inotify(0)
	regular := setup.Open(t, f, unix.O_RDONLY)
	closed := setup.ClosedFd(t, regular)
	wd, err := in.AddWatch(f, unix.IN_OPEN)
	if err != nil {
		t.Fatalf("%v", err)
	}
	// inotify_add_watch(2) EACCES "Read access to the given file is not
	// permitted": inotify_find_inode (fs/notify/inotify/inotify_user.c)
	// checks path_permission(MAY_READ) after the lookup; root passes it only
	// through CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH (capabilities(7)), which
	// the calling thread drops. Its owner may watch a mode-0400 file.
	dacCaps := []uintptr{unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH}
	unreadable, ownerReadable := t.Path("mode_0000"), t.Path("mode_0400")
	setup.Touch(t, unreadable, ownerReadable)
	for p, mode := range map[string]os.FileMode{unreadable: 0, ownerReadable: 0o400} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	withoutDAC := func(call func() error) func() error {
		return func() error { return fixture.WithoutCaps(dacCaps, call) }
	}
	const noEventBit = 0x00100000 // in no IN_* event or flag (ALL_INOTIFY_BITS)
	addWatch := func(fd int, path string, mask uint32) func() error {
		return func() error { _, err := unix.InotifyAddWatch(fd, path, mask); return err }
	}
	for _, r := range []struct {
		name string
		call func() error
		want unix.Errno
	}{
		{"init1_unknown_flag", func() error {
			fd, err := unix.InotifyInit1(0x1)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}, unix.EINVAL},
		{"add_mask_zero", addWatch(in.Fd(), f, 0), unix.EINVAL},
		{"add_mask_no_known_bit", addWatch(in.Fd(), f, noEventBit), unix.EINVAL},
		{"add_mask_add_and_create", addWatch(in.Fd(), f, unix.IN_OPEN|unix.IN_MASK_ADD|unix.IN_MASK_CREATE), unix.EINVAL},
		{"add_fd_closed", addWatch(closed, f, unix.IN_OPEN), unix.EBADF},
		{"add_fd_not_inotify", addWatch(regular, f, unix.IN_OPEN), unix.EINVAL},
		{"add_no_read_permission", withoutDAC(addWatch(in.Fd(), unreadable, unix.IN_OPEN)), unix.EACCES},
		{"add_owner_read_only", withoutDAC(addWatch(in.Fd(), ownerReadable, unix.IN_OPEN)), 0},
		{"add_missing_path", addWatch(in.Fd(), filepath.Join(t.Dir(), "missing", "x"), unix.IN_OPEN), unix.ENOENT},
		{"rm_unknown_wd", func() error { _, err := unix.InotifyRmWatch(in.Fd(), uint32(wd+100)); return err }, unix.EINVAL},
		{"rm_fd_closed", func() error { _, err := unix.InotifyRmWatch(closed, uint32(wd)); return err }, unix.EBADF},
		{"rm_fd_not_inotify", func() error { _, err := unix.InotifyRmWatch(regular, uint32(wd)); return err }, unix.EINVAL},
		{"rm_valid_wd", func() error { _, err := unix.InotifyRmWatch(in.Fd(), uint32(wd)); return err }, 0},
		{"rm_same_wd_again", func() error { _, err := unix.InotifyRmWatch(in.Fd(), uint32(wd)); return err }, unix.EINVAL},
	} {
		t.Run(r.name, func(t *harness.T) { expect.Errno(t, r.name, r.call(), r.want) })
	}
}

// readBlocksUntilEvent: inotify(7) "If no events have so far occurred, then,
// assuming a blocking file descriptor, read(2) will block until at least one
// event occurs"; inotify_read (fs/notify/inotify/inotify_user.c) sleeps
// (wait_woken) until get_one_event finds one. The reader is seen asleep in
// read(2) before the actor creates the file.
func readBlocksUntilEvent(t *harness.T) {
	dir := t.Path("d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("setup: %v", err)
	}
	a := t.Actor()
	in := t.Inotify(0)
	wd, err := in.AddWatch(dir, unix.IN_CREATE)
	if err != nil {
		t.Fatalf("%v", err)
	}
	res, err := fixture.BlockingRead(in.Fd(), 4096, 5*time.Second)
	if err != nil {
		t.Fatalf("blocking instance, IN_CREATE on d, nothing queued: %v", err)
	}
	if err := a.Touch(filepath.Join(dir, "f")); err != nil {
		t.Fatalf("create d/f: %v", err)
	}
	buf, err := res.Wait(5 * time.Second)
	if err != nil {
		t.Fatalf("after the actor created d/f: %v", err)
	}
	got, err := inotify.Decode(buf)
	if err != nil {
		t.Fatalf("%v", err)
	}
	did := "blocking instance, IN_CREATE on d; read(2) asleep; actor creates d/f"
	expect.Inotify(t, did, got, []inotify.Event{{Wd: wd, Mask: unix.IN_CREATE, Name: "f"}})
	expect.InotifyQuiet(t, did, in, expect.Quiet)
}
