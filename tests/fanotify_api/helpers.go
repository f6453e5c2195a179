package main

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
)

// wantErrno fails the case unless err carries errno (0: success wanted).
func wantErrno(t *harness.T, what string, err error, errno unix.Errno) {
	t.Helper()
	switch {
	case errno == 0 && err != nil:
		t.Errorf("%s: %v, want success", what, err)
	case errno == 0:
	case err == nil:
		t.Errorf("%s: succeeded, want %s", what, unix.ErrnoName(errno))
	case !errors.Is(err, errno):
		t.Errorf("%s: %v, want %s", what, err, unix.ErrnoName(errno))
	}
}

// drainExpect drains g (the operations have returned, so their events are
// queued), compares the whole ordered list, then listens for expect.Quiet.
func drainExpect(t *harness.T, g *fanotify.Group, did string, want []fanotify.Event) {
	t.Helper()
	got, err := g.Drain()
	if err != nil {
		t.Fatalf("%s: reading events: %v", did, err)
	}
	expect.Fanotify(t, did, got, want)
	expect.FanotifyQuiet(t, did, g, expect.Quiet)
}

// fev builds an expected event.
func fev(mask uint64, pid int, path string, info ...fanotify.Info) fanotify.Event {
	return fanotify.Event{Mask: fanotify.Mask(mask), Pid: int32(pid), Path: path, Info: info}
}

// queuedBytes returns ioctl(FIONREAD) on fd. FIONREAD is TIOCINQ's number on
// every Linux architecture (asm-generic/ioctls.h and the arch ones);
// golang.org/x/sys/unix names it only as TIOCINQ.
func queuedBytes(t *harness.T, fd int) int {
	t.Helper()
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	if err != nil {
		t.Fatalf("ioctl(FIONREAD): %v", err)
	}
	return n
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

// touch creates empty files from the test process (setup only).
func touch(t *harness.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
}

// mkdirs makes directories from the test process (setup only).
func mkdirs(t *harness.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatalf("setup: %v", err)
		}
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
