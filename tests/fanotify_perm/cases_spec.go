package main

import (
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// specCases check rules of the man pages no earlier case checked; each
// names its rule ids in spec.go.
var specCases = []harness.Case{{
	Name: "spec_perm_events_not_merged",
	Doc:  "two FAN_OPEN_PERM events of one process on one file, both queued, are two events with two fds, each answered on its own (fanotify(7): \"two permission events are never merged into one queue entry\")",
	Run:  specPermEventsNotMerged,
}}

// specPermEventsNotMerged: fanotify(7) "consecutive events for the same
// filesystem object and originating from the same process may be merged into
// a single event, with the exception that two permission events are never
// merged into one queue entry" (fanotify_merge skips permission events). One
// process is two threads of the test process here: the actor runs one
// operation at a time, and two actors are two processes, whose events would
// not merge anyway. The group is made before the opens and closed by the
// harness's cleanup, which allows whatever is still pending.
func specPermEventsNotMerged(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	g := t.Fanotify(unix.FAN_CLASS_CONTENT, unix.O_RDONLY)
	if err := g.Add(0, unix.FAN_OPEN_PERM, f); err != nil {
		t.Fatalf("%v", err)
	}
	done := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() {
			fd, err := unix.Open(f, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err == nil {
				unix.Close(fd)
			}
			done <- err
		}()
	}
	evs, err := g.ReadN(2, time.Now().Add(10*time.Second))
	pending := evs
	defer func() { g.Answer(pending, unix.FAN_ALLOW) }() // what a failure left unanswered
	if err != nil {
		t.Fatalf("two threads of this process open f marked FAN_OPEN_PERM: %v (events: %v)", err, evs)
	}
	// Both opens are waiting: nothing answered them yet.
	if len(evs) > 2 {
		t.Errorf("events of two opens: %v, want two FAN_OPEN_PERM", evs)
	}
	for i, e := range evs {
		if uint64(e.Mask) != unix.FAN_OPEN_PERM || int(e.Pid) != os.Getpid() || e.Path != f {
			t.Errorf("event [%d] %s, want FAN_OPEN_PERM %s pid=%d", i, e, f, os.Getpid())
		}
	}
	if len(evs) == 2 && evs[0].Fd == evs[1].Fd {
		t.Errorf("the two events share fd %d, want one each", evs[0].Fd)
	}
	// Answer the first: one open returns, the other still waits.
	pending = evs[1:]
	if err := g.Answer(evs[:1], unix.FAN_ALLOW); err != nil {
		t.Fatalf("%v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the open answered FAN_ALLOW: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the open answered FAN_ALLOW did not return within 10s")
	}
	select {
	case err := <-done:
		t.Errorf("the second open returned (%v) before its own event was answered", err)
	case <-time.After(expect.Quiet):
	}
	pending = nil
	if err := g.Answer(evs[1:], unix.FAN_ALLOW); err != nil {
		t.Fatalf("%v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the second open answered FAN_ALLOW: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the second open did not return within 10s of its answer")
	}
	expect.FanotifyQuiet(t, "after both opens", g, expect.Quiet)
}
