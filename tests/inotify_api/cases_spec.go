package main

import (
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// specCases check rules of the man pages no earlier case checked; each
// names its rule ids in spec.go.
var specCases = []harness.Case{
	{
		Name: "spec_poll_readable",
		Doc:  "poll(2) reports an instance readable exactly while an event is queued (inotify(7) NOTES)",
		Run:  specPollReadable,
	},
	{
		Name:     "spec_add_watch_path_errors",
		Doc:      "inotify_add_watch with a path outside the address space is EFAULT, with a path over PATH_MAX or a component over NAME_MAX ENAMETOOLONG, with a dangling symbolic link ENOENT (inotify_add_watch(2) ERRORS)",
		Subtests: []string{"efault", "path_too_long", "component_too_long", "dangling_symlink"},
		Run:      specAddWatchPathErrors,
	},
}

// specPollReadable: inotify(7) NOTES "Inotify file descriptors can be
// monitored using select(2), poll(2), and epoll(7). When an event is
// available, the file descriptor indicates as readable" (inotify_poll:
// POLLIN while the notification list is not empty).
func specPollReadable(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	a := t.Actor()
	in := t.Inotify(unix.IN_NONBLOCK)
	if _, err := in.AddWatch(f, unix.IN_ATTRIB); err != nil {
		t.Fatalf("%v", err)
	}
	readable := func() bool {
		fds := []unix.PollFd{{Fd: int32(in.Fd()), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		return n == 1 && fds[0].Revents&unix.POLLIN != 0
	}
	if readable() {
		t.Errorf("poll: an empty instance is readable")
	}
	if err := a.Chmod(f, 0o600); err != nil {
		t.Fatalf("%v", err)
	}
	if !readable() {
		t.Errorf("poll: an instance with a queued IN_ATTRIB is not readable")
	}
	if _, err := in.Drain(); err != nil {
		t.Fatalf("%v", err)
	}
	if readable() {
		t.Errorf("poll: the instance is readable after its only event was read")
	}
}

// specAddWatchPathErrors: inotify_add_watch(2) ERRORS EFAULT "path points
// outside of the process's accessible address space", ENAMETOOLONG "path is
// too long" (getname: PATH_MAX including the NUL; a component over NAME_MAX
// in the lookup), ENOENT "A directory component in path does not exist or is
// a dangling symbolic link".
func specAddWatchPathErrors(t *harness.T) {
	in := t.Inotify(0)
	addRaw := func(p uintptr) error {
		_, _, e := unix.Syscall(unix.SYS_INOTIFY_ADD_WATCH, uintptr(in.Fd()), p, unix.IN_OPEN)
		if e != 0 {
			return e
		}
		return nil
	}
	t.Run("efault", func(t *harness.T) {
		const badAddress = 1 // the first page is never mapped
		expect.Errno(t, "inotify_add_watch with path at address 1", addRaw(badAddress), unix.EFAULT)
	})
	t.Run("path_too_long", func(t *harness.T) {
		long := t.Dir() + "/" + strings.Repeat("d/", unix.PathMax/2+1)
		b, err := unix.BytePtrFromString(long)
		if err != nil {
			t.Fatalf("%v", err)
		}
		expect.Errno(t, "inotify_add_watch with a path of more than PATH_MAX bytes", addRaw(uintptr(unsafe.Pointer(b))), unix.ENAMETOOLONG)
	})
	t.Run("component_too_long", func(t *harness.T) {
		_, err := in.AddWatch(t.Dir()+"/"+strings.Repeat("n", 256), unix.IN_OPEN)
		expect.Errno(t, "inotify_add_watch with a 256-byte name", err, unix.ENAMETOOLONG)
	})
	t.Run("dangling_symlink", func(t *harness.T) {
		l := t.Path("dangling")
		if err := os.Symlink("missing", l); err != nil {
			t.Fatalf("setup: %v", err)
		}
		_, err := in.AddWatch(l, unix.IN_OPEN)
		expect.Errno(t, "inotify_add_watch of a symbolic link to a missing file", err, unix.ENOENT)
	})
}
