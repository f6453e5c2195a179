package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
)

// findings: -findings adds the cases that show kernel bugs this suite found
// which the kernels its own CI runs on still have (tests/README.md, "Findings"), so
// that the default run stays green there while anyone can run them.
var findings bool

func flags(fs *flag.FlagSet) {
	fs.BoolVar(&findings, "findings", false, "also run the findings: cases that fail on kernels with a known unfixed bug (see tests/README.md)")
}

func findingCases() []harness.Case {
	if !findings {
		return nil
	}
	return []harness.Case{{
		Name: "overlay_listener_read_no_nested_event",
		Doc:  "a listener with FAN_OPEN_PERM marks on an overlayfs file and on its lower file reads the overlay file's event without a nested permission event of its own: the event fd is opened FMODE_NONOTIFY (fanotify_user.c create_fd) and overlayfs must open the backing file the same way (fs/backing-file.c backing_file_open), or the listener's read(2) waits on its own group",
		Run:  runOverlayNestedEvent,
	}}
}

// nestedWait bounds how long the listener's read may take before the case
// answers the nested event from another thread (and fails).
const nestedWait = 2 * time.Second

func runOverlayNestedEvent(t *harness.T) {
	e := prepare(t, 1, "lower/", "upper/", "work/", "ovl/", "lower/f")
	ovl := t.Path("ovl")
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", t.Path("lower"), t.Path("upper"), t.Path("work"))
	if err := unix.Mount("fsnsuite-ovl", ovl, "overlay", 0, opts); err != nil {
		if errors.Is(err, unix.ENODEV) {
			t.Skipf("overlayfs not available (ENODEV: no CONFIG_OVERLAY_FS)")
		}
		if errors.Is(err, unix.EINVAL) {
			t.Skipf("overlayfs refuses %s as its layers (EINVAL)", t.FS().Type)
		}
		t.Fatalf("setup: mount overlay on %s: %v", ovl, err)
	}
	t.Cleanup(func() { unix.Unmount(ovl, unix.MNT_DETACH) })
	file, lower := ovl+"/f", t.Path("lower/f")
	tf := statTarget(t, file)
	did := fmt.Sprintf("FAN_CLASS_CONTENT group, inode marks FAN_OPEN_PERM on %s (overlayfs) and on %s (its lower file); the actor opens the overlay file; the listener reads", file, lower)

	g := group(t, unix.FAN_CLASS_CONTENT)
	mark(t, g, 0, unix.FAN_OPEN_PERM, file)
	mark(t, g, 0, unix.FAN_OPEN_PERM, lower)
	p := send(t, e.a(0), openOp(file))

	// The first read returns the overlay file's event; creating its fd
	// opens the overlay file, and overlayfs its backing (lower) file.
	type readResult struct {
		evs []fanotify.Event
		err error
	}
	first := make(chan readResult, 1)
	go func() {
		evs, err := g.Read(time.Now().Add(eventWait + nestedWait))
		first <- readResult{evs, err}
	}()
	var got []fanotify.Event
	var nested []fanotify.Event
	select {
	case r := <-first:
		if r.err != nil {
			t.Fatalf("%s: %v", did, r.err)
		}
		got = r.evs
	case <-time.After(nestedWait):
		// Still inside read(2): answer whatever waits in the group from
		// this thread, so the first read can finish.
		evs, err := g.Read(time.Now().Add(eventWait))
		if err != nil {
			t.Fatalf("%s: the listener's read(2) blocked for %v, and no event to answer was found: %v", did, nestedWait, err)
		}
		nested = evs
		if aerr := g.Answer(evs, fanotify.Allow); aerr != nil {
			t.Fatalf("%s: %v", did, aerr)
		}
		r := <-first
		if r.err != nil {
			t.Fatalf("%s: %v", did, r.err)
		}
		got = r.evs
	}
	if err := g.Answer(got, fanotify.Allow); err != nil {
		t.Fatalf("%s: %v", did, err)
	}
	// The actor's open goes on; any later event of its (overlayfs opening
	// the lower file for it) is its own and allowed.
	for {
		r, err := p.Wait(blockedProbe)
		if err == nil {
			if r.Errno != 0 {
				t.Errorf("%s: the actor's open returned %v, want success", did, r.Errno)
			} else {
				e.a(0).Close(r.Fd)
			}
			break
		}
		evs, rerr := g.Read(time.Now().Add(answerWait))
		if rerr != nil {
			t.Fatalf("%s: the actor's open stays blocked and no event is queued: %v", did, rerr)
		}
		if aerr := g.Answer(evs, fanotify.Allow); aerr != nil {
			t.Fatalf("%s: %v", did, aerr)
		}
		got = append(got, evs...)
	}
	if len(nested) > 0 {
		own := 0
		for _, ev := range nested {
			if ev.Pid == int32(os.Getpid()) {
				own++
			}
		}
		t.Errorf("%s: the listener's own read(2) waited %v on its own group: opening the event fd of %s raised %d permission event(s) with the listener's pid (%s), answered here from another thread; a listener with one reader thread deadlocks there. The event fd is FMODE_NONOTIFY, but overlayfs opens the backing file with events since \"ovl: enable fsnotify events on underlying real files\" (bc2473c90fca, 6.5) unless backing_file_open passes FMODE_NONOTIFY on (as Debian's 7.3 fs/backing-file.c does)",
			did, nestedWait, tf.Path, own, expect.List(nested))
	}
	for _, ev := range got {
		if ev.Pid == int32(os.Getpid()) {
			t.Errorf("%s: an event with the listener's own pid arrived: %s", did, ev)
		}
	}
}
