package main

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

var queueCases = []harness.Case{
	{
		Name: "fionread",
		Doc:  "ioctl(FIONREAD) is FAN_EVENT_METADATA_LEN per queued event of an fd group and 0 once read; another ioctl is ENOTTY",
		Run:  fionread,
	},
	{
		Name: "read_short_buffer",
		// Subtests: the names its t.Run calls use, so that a skip keeps these leaves.
		Subtests: []string{"fd_group", "fid_group"},
		Doc:      "read(2) with a buffer smaller than the next event is EINVAL and leaves it queued; a buffer for one of two events returns one; an empty non-blocking group is EAGAIN",
		Run:      readShortBuffer,
	},
	{
		Name: "read_blocks_until_event",
		Doc:  "read(2) of an empty group opened without FAN_NONBLOCK sleeps in the read until an event is queued, then returns that event",
		Run:  readBlocksUntilEvent,
	},
	{
		Name: "perm_waiter_killed",
		// Subtests: the names its t.Run calls use, so that a skip keeps these leaves.
		Subtests: []string{"before_read", "after_read"},
		Doc:      "a process killed while blocked on FAN_OPEN_PERM takes an unread event out of the queue; a read one still takes one response, then ENOENT",
		Needs:    []*feature.Feature{feature.FanotifyPerm},
		Run:      permWaiterKilled,
	},
}

// fionread: fanotify_ioctl (fs/notify/fanotify/fanotify_user.c) answers
// FIONREAD with FAN_EVENT_METADATA_LEN for each event on the notification
// list, and -ENOTTY for any other request. An fd group's events carry no info
// record, so that is also what read(2) would return (fanotify(7)).
func fionread(t *harness.T) {
	f, g2 := t.Path("f"), t.Path("g")
	setup.Touch(t, f, g2)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	for _, p := range []string{f, g2} {
		if err := g.Add(0, unix.FAN_OPEN, p); err != nil {
			t.Fatalf("%v", err)
		}
	}
	if n := expect.Queued(t, g.Fd()); n != 0 {
		t.Errorf("FIONREAD of an empty group: %d, want 0", n)
	}
	openClose(t, a, f, unix.O_RDONLY)
	openClose(t, a, g2, unix.O_RDONLY)
	if n, want := expect.Queued(t, g.Fd()), 2*int(unix.FAN_EVENT_METADATA_LEN); n != want {
		t.Errorf("FIONREAD with FAN_OPEN of f and of g queued: %d, want %d (2 x FAN_EVENT_METADATA_LEN)", n, want)
	}
	expect.FanotifyDrained(t, g, "inode marks FAN_OPEN on f and g; actor opens f then g", []fanotify.Event{
		fev(unix.FAN_OPEN, a.Pid(), f), fev(unix.FAN_OPEN, a.Pid(), g2),
	})
	if n := expect.Queued(t, g.Fd()); n != 0 {
		t.Errorf("FIONREAD after reading everything: %d, want 0", n)
	}
	_, err := unix.IoctlGetInt(g.Fd(), unix.TIOCOUTQ)
	expect.Errno(t, "ioctl(TIOCOUTQ) on a fanotify group", err, unix.ENOTTY)
}

// readShortBuffer: fanotify(7), errors of read(2) on a fanotify fd: "EINVAL
// The buffer is too small to hold the event"; get_one_event leaves the event on the
// queue and fanotify_read returns what it copied so far, or the error when
// that is nothing; an empty group opened with FAN_NONBLOCK answers EAGAIN
// (fanotify_init(2) FAN_NONBLOCK).
func readShortBuffer(t *harness.T) {
	f, g2 := t.Path("f"), t.Path("g")
	setup.Touch(t, f, g2)
	a := t.Actor()
	t.Run("fd_group", func(t *harness.T) {
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_NONBLOCK, unix.O_RDONLY)
		_, err := unix.Read(g.Fd(), make([]byte, 4096))
		expect.Errno(t, "read of an empty FAN_NONBLOCK group", err, unix.EAGAIN)
		for _, p := range []string{f, g2} {
			if err := g.Add(0, unix.FAN_OPEN, p); err != nil {
				t.Fatalf("%v", err)
			}
		}
		openClose(t, a, f, unix.O_RDONLY)
		openClose(t, a, g2, unix.O_RDONLY)
		meta := int(unix.FAN_EVENT_METADATA_LEN)
		_, err = unix.Read(g.Fd(), make([]byte, meta-1))
		expect.Errno(t, "read with a buffer of FAN_EVENT_METADATA_LEN-1 bytes", err, unix.EINVAL)
		if n := expect.Queued(t, g.Fd()); n != 2*meta {
			t.Errorf("FIONREAD after the refused read: %d, want %d (both events still queued)", n, 2*meta)
		}
		buf := make([]byte, meta+meta/2)
		n, err := unix.Read(g.Fd(), buf)
		if err != nil {
			t.Fatalf("read with room for one event and a half: %v", err)
		}
		evs, err := fanotify.Decode(buf[:n])
		fanotify.CloseEventFds(evs)
		if err != nil {
			t.Fatalf("%v", err)
		}
		expect.Fanotify(t, "two FAN_OPEN queued; read with room for 1.5 events", evs, []fanotify.Event{fev(unix.FAN_OPEN, a.Pid(), f)})
		expect.FanotifyDrained(t, g, "then the rest", []fanotify.Event{fev(unix.FAN_OPEN, a.Pid(), g2)})
	})
	t.Run("fid_group", func(t *harness.T) {
		t.Require(feature.ReportFID)
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID|unix.FAN_NONBLOCK, unix.O_RDONLY)
		t.JudgeFIDMark(g.Add(0, unix.FAN_OPEN, f))
		openClose(t, a, f, unix.O_RDONLY)
		// The event is metadata plus one FID record (fanotify_event_len):
		// room for the metadata alone is still too small.
		_, err := unix.Read(g.Fd(), make([]byte, unix.FAN_EVENT_METADATA_LEN))
		expect.Errno(t, "FID group: read with room for the metadata but not the FID record", err, unix.EINVAL)
		fid, err := fanotify.FIDOf(f)
		if err != nil {
			t.Fatalf("%v", err)
		}
		expect.FanotifyDrained(t, g, "FID group, FAN_OPEN on f; actor opens f; short read refused; then a full read",
			[]fanotify.Event{fev(unix.FAN_OPEN, a.Pid(), "", fid)})
	})
}

// permWaiterKilled: fanotify(7) permission events; the waiter sleeps
// TASK_KILLABLE in fanotify_get_response (fs/notify/fanotify/fanotify.c).
// Killed before the listener read the event (FAN_EVENT_INIT), the waiter
// removes it from the queue (fsnotify_remove_queued_event): nothing is left
// to read. Killed after the read (FAN_EVENT_REPORTED), the event is marked
// canceled and stays on the group's access list until answered: one response
// is accepted (write(2) returns sizeof(struct fanotify_response),
// process_access_response), a second finds nothing (fanotify(7) ENOENT "The
// file descriptor fd in the response structure is invalid. This may occur
// when a response for the permission event has already been written").
func permWaiterKilled(t *harness.T) {
	for _, v := range []struct {
		name      string
		readFirst bool
	}{{"before_read", false}, {"after_read", true}} {
		t.Run(v.name, func(t *harness.T) {
			f, a, g, p := blockedOpen(t, v.name)
			if _, err := p.Wait(0); !errors.Is(err, actor.ErrStillBlocked) {
				t.Fatalf("actor's open returned before any response (%v)", err)
			}
			var ev fanotify.Event
			if v.readFirst {
				evs, err := g.Drain()
				if err != nil {
					t.Fatalf("%v", err)
				}
				if !expect.Fanotify(t, "FAN_OPEN_PERM on f; actor opens f", evs, []fanotify.Event{fev(unix.FAN_OPEN_PERM, a.Pid(), f)}) {
					return
				}
				ev = evs[0]
			} else if n := expect.Queued(t, g.Fd()); n != int(unix.FAN_EVENT_METADATA_LEN) {
				t.Errorf("FIONREAD with the permission event queued: %d, want %d", n, unix.FAN_EVENT_METADATA_LEN)
			}
			a.Kill() // SIGKILL, then reaped: the waiter has left fanotify_get_response
			if !v.readFirst {
				if n := expect.Queued(t, g.Fd()); n != 0 {
					t.Errorf("FIONREAD after the waiter was killed: %d, want 0 (event removed from the queue)", n)
				}
				expect.FanotifyDrained(t, g, "FAN_OPEN_PERM on f; actor blocked opening f is killed before the event is read", nil)
				return
			}
			expect.Errno(t, "FAN_ALLOW for the read event of the killed waiter", g.Respond(ev.Fd, fanotify.Allow), 0)
			expect.Errno(t, "a second response for it", g.Respond(ev.Fd, fanotify.Allow), unix.ENOENT)
			g.ReleaseFd(ev.Fd)
			expect.FanotifyDrained(t, g, "after the responses", nil)
		})
	}
}

// readBlocksUntilEvent: fanotify_init(2) FAN_NONBLOCK "Reading from the file
// descriptor will not block" — without it read(2) waits: fanotify_read
// (fs/notify/fanotify/fanotify_user.c) sleeps (wait_woken) while
// get_one_event finds nothing and the fd is blocking, and returns once an
// event is queued (fanotify_insert_event wakes notification_waitq). The
// reader is seen asleep in read(2) before the actor opens the file.
func readBlocksUntilEvent(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	if err := g.Add(0, unix.FAN_OPEN, f); err != nil {
		t.Fatalf("%v", err)
	}
	res, err := fixture.BlockingRead(g.Fd(), 4096, 5*time.Second)
	if err != nil {
		t.Fatalf("blocking group, FAN_OPEN on f, nothing queued: %v", err)
	}
	openClose(t, a, f, unix.O_RDONLY)
	buf, err := res.Wait(5 * time.Second)
	if err != nil {
		t.Fatalf("after the actor opened f: %v", err)
	}
	evs, err := fanotify.Decode(buf)
	fanotify.CloseEventFds(evs)
	if err != nil {
		t.Fatalf("%v", err)
	}
	did := "blocking group, FAN_OPEN on f; read(2) asleep; actor opens f"
	expect.Fanotify(t, did, evs, []fanotify.Event{fev(unix.FAN_OPEN, a.Pid(), f)})
	expect.FanotifyDrained(t, g, did+"; then", nil)
}
