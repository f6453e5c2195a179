package main

import (
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
