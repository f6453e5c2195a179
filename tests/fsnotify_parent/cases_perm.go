package main

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// Permission events through the parent: fsnotify_open_perm_and_set_mode
// (fs/notify/fsnotify.c) looks at the parent's interest only for a dentry
// flagged PARENT_WATCHED, so a missing flag would let an open through
// unasked. inotify has no permission events.
var permCases = []harness.Case{{
	Name: "open_perm_via_parent",
	Doc: "FAN_OPEN_PERM|FAN_EVENT_ON_CHILD on a dir gates opens of its children, cached before or created after the mark; FAN_DENY gives EPERM; " +
		"opens elsewhere or after the mark's removal are not held (fanotify(7) FAN_OPEN_PERM, FAN_DENY); fanotify only",
	Needs: []*feature.Feature{feature.FanotifyPerm},
	Run:   permViaParent,
}}

const permWait = 2 * time.Second

// permOpen has the actor open p. With want empty the open must complete
// without the group hearing of it; otherwise the group must get exactly want,
// each permission event answered with resp, and the actor's result is returned.
func (e *env) permOpen(g *fanotify.Group, p string, flags int, resp uint32, want ...fanotify.Event) actor.Result {
	e.did("actor open %s %s (async)", e.rel(p), openFlags(flags))
	pend, err := e.a.Send(actor.Op{Kind: "open", Path: p, Flags: flags, Mode: 0o644})
	if err != nil {
		e.t.Fatalf("%v", err)
	}
	var got []fanotify.Event
	if len(want) > 0 {
		got, err = g.ReadN(len(want), time.Now().Add(permWait))
		if err != nil {
			e.t.Errorf("reading the permission event: %v", err)
		}
		e.answer(g, got, resp)
		e.did("answered %#x", resp)
	}
	r, err := pend.Wait(permWait)
	if err != nil {
		// Still blocked: something asked the group that should not have.
		more, _ := g.Drain()
		e.answer(g, more, fanotify.Allow)
		e.t.Fatalf("actor open %s did not return: %v; the group got %v [after: %s]", e.rel(p), err, more, e.history())
	}
	more, err := g.Drain()
	if err != nil {
		e.t.Fatalf("drain: %v", err)
	}
	e.answer(g, more, fanotify.Allow)
	expect.Fanotify(e.t, e.history(), append(got, more...), want)
	return r
}

// answer responds to every permission event in evs and releases its fd.
func (e *env) answer(g *fanotify.Group, evs []fanotify.Event, resp uint32) {
	if err := g.Answer(evs, resp); err != nil {
		e.t.Errorf("%v", err)
	}
}

func (e *env) wantOpened(r actor.Result, p string) {
	if r.Errno != 0 {
		e.t.Fatalf("actor open %s: got %v, want success [after: %s]", e.rel(p), r.Errno, e.history())
	}
	e.close(r.Fd)
}

func permViaParent(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "data")
	other := e.file(e.u, "g", "data")
	g := t.Fanotify(unix.FAN_CLASS_CONTENT, unix.O_RDONLY)
	const m = unix.FAN_OPEN_PERM | onChild
	if err := g.Add(0, m, e.w); err != nil {
		t.Fatalf("%v", err)
	}
	e.did("FAN_CLASS_CONTENT group: mark add inode w FAN_OPEN_PERM|FAN_EVENT_ON_CHILD")
	perm := func(p string) fanotify.Event {
		return fanotify.Event{Mask: unix.FAN_OPEN_PERM, Pid: int32(e.a.Pid()), Path: p}
	}

	e.wantOpened(e.permOpen(g, other, unix.O_RDONLY, 0), other)

	r := e.permOpen(g, f, unix.O_RDONLY, fanotify.Deny, perm(f))
	// fanotify(7): "FAN_DENY ... the file operation is denied"; the open
	// fails with EPERM.
	if r.Errno != unix.EPERM {
		t.Errorf("denied open of w/f: got errno %v (fd %d), want EPERM", r.Errno, r.Fd)
		if r.Errno == 0 {
			e.close(r.Fd)
		}
	}
	e.wantOpened(e.permOpen(g, f, unix.O_RDONLY, fanotify.Allow, perm(f)), f)

	n := e.w + "/n" // created after the mark
	e.wantOpened(e.permOpen(g, n, unix.O_CREAT|unix.O_WRONLY, fanotify.Allow, perm(n)), n)

	if err := g.Remove(0, m, e.w); err != nil {
		t.Fatalf("%v", err)
	}
	e.did("mark remove w")
	e.wantOpened(e.permOpen(g, f, unix.O_RDONLY, 0), f)
	expect.FanotifyQuiet(t, e.history(), g, expect.Quiet)
}
