package main

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// fev builds an expected event.
func fev(mask uint64, pid int, path string, info ...fanotify.Info) fanotify.Event {
	return fanotify.Event{Mask: fanotify.Mask(mask), Pid: int32(pid), Path: path, Info: info}
}

// waitReadable polls fd until it is readable or d passes, for an event that
// another process queues while this one waits (a blocked permission event).
func waitReadable(t *harness.T, fd int, d time.Duration) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(d.Milliseconds()))
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	if n == 0 {
		t.Fatalf("no event queued within %v", d)
	}
}

// openClose opens path in the actor and closes it.
func openClose(t *harness.T, a interface {
	Open(string, int, uint32) (int, error)
	Close(int) error
}, path string, flags int) {
	t.Helper()
	fd, err := a.Open(path, flags, 0)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	if err := a.Close(fd); err != nil {
		t.Fatalf("close %s: %v", path, err)
	}
}

// blockedOpen creates name, marks it for FAN_OPEN_PERM in a new
// FAN_CLASS_CONTENT group and has a new actor open it read-only; it returns
// once the permission event is queued, with the actor's open waiting for the
// response (fanotify(7): the opener blocks until the listener answers).
func blockedOpen(t *harness.T, name string) (f string, a *actor.Actor, g *fanotify.Group, p *actor.Pending) {
	t.Helper()
	f = t.Path(name)
	setup.Touch(t, f)
	a = t.Actor()
	g = t.Fanotify(unix.FAN_CLASS_CONTENT, unix.O_RDONLY)
	if err := g.Add(0, unix.FAN_OPEN_PERM, f); err != nil {
		t.Fatalf("%v", err)
	}
	p, err := a.Send(actor.Op{Kind: "open", Path: f, Flags: unix.O_RDONLY})
	if err != nil {
		t.Fatalf("%v", err)
	}
	waitReadable(t, g.Fd(), 10*time.Second)
	return f, a, g, p
}

// withFdZeroFree runs fn while descriptor 0 of the case process (its stdin,
// /dev/null) is closed, so that the next descriptor the kernel allocates is
// 0: alloc_fd (fs/file.c) returns the lowest free number, the rule open(2)
// states. Descriptor 0 is where a kernel that treats a valid descriptor as
// an error ("fd <= 0", "fd > 0") differs from one that does not. fn must
// open nothing but what it tests, and close what it opened; stdin is put
// back after it (only if 0 is free again: nothing another goroutine put
// there is replaced), even when fn stops the case. A process started
// without stdin has 0 free already; a descriptor 0 that is anything but
// /dev/null is someone else's: the case is undecided.
func withFdZeroFree(t *harness.T, fn func()) {
	t.Helper()
	switch h := fdZeroHolder(); h {
	case "":
		fn()
		return
	case "/dev/null":
	default:
		t.Skipf("undecided: descriptor 0 of the case process is %q, not its stdin /dev/null: it cannot be freed for the case", h)
	}
	saved, err := unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		t.Fatalf("setup: dup descriptor 0: %v", err)
	}
	if err := unix.Close(0); err != nil {
		unix.Close(saved)
		t.Fatalf("setup: close descriptor 0: %v", err)
	}
	defer func() {
		// F_DUPFD from 0 takes the lowest free descriptor: 0 unless something
		// else holds it now.
		if fd, err := unix.FcntlInt(uintptr(saved), unix.F_DUPFD, 0); err != nil {
			t.Errorf("cleanup: restore descriptor 0: %v", err)
		} else if fd != 0 {
			unix.Close(fd)
			t.Errorf("cleanup: descriptor 0 is %q after the case, which must close what it opened there", fdZeroHolder())
		}
		unix.Close(saved)
	}()
	fn()
}

// fdZeroHolder names what descriptor 0 refers to (its /proc/self/fd link,
// proc(5)), or "" when it is free. It opens nothing.
func fdZeroHolder() string {
	if _, err := unix.FcntlInt(0, unix.F_GETFD, 0); err != nil {
		return ""
	}
	buf := make([]byte, 256)
	n, err := unix.Readlink("/proc/self/fd/0", buf)
	if err != nil {
		return fmt.Sprintf("open (readlink: %v)", err)
	}
	return string(buf[:n])
}

// fdZeroAllocatable reports whether the next descriptor the kernel
// allocates is 0, by opening /dev/null (closed again): false when 0 is
// installed or only reserved (get_unused_fd_flags without fd_install or
// put_unused_fd: free to fdZeroHolder, never handed out).
func fdZeroAllocatable() (bool, error) {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("open /dev/null: %w", err)
	}
	unix.Close(fd)
	return fd == 0, nil
}
