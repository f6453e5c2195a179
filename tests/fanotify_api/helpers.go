package main

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
)

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
