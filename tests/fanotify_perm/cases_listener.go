package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// slowAnswer is how long the slow listener keeps its actors waiting.
const slowAnswer = 250 * time.Millisecond

var listenerCases = []harness.Case{
	{
		Name: "close_releases_pending",
		Doc:  "closing the group allows every pending permission event, read or still queued: both blocked opens succeed within 1s; a second group's blocked actor stays blocked and its DENY still applies (fanotify(7); fanotify_user.c fanotify_release)",
		Run:  runCloseReleases,
	},
	{
		Name: "listener_killed_releases",
		Doc:  "when the last process holding the group dies (SIGKILL) with an event read and unanswered, the blocked open is allowed within 1s (fanotify(7): closing the group allows pending events)",
		Run:  runListenerKilled,
	},
	{
		Name: "nonblock_slow_answer",
		Doc:  "FAN_NONBLOCK listener: read(2) on an empty queue is EAGAIN; three actors' opens each arrive once, wait through a slow answer, and complete when answered (fanotify_init(2), fanotify(7))",
		Run:  runNonblockSlow,
	},
	{
		Name:  "listener_event_fd_no_event",
		Doc:   "the listener reads the file through the event's fd without raising a permission event for itself (the fd is opened FMODE_NONOTIFY: fanotify_user.c create_fd), so it cannot deadlock on its own access",
		Needs: []*feature.Feature{feature.MarkFilesystem},
		Run:   runListenerOwnAccess,
	},
}

func runCloseReleases(t *harness.T) {
	e := prepare(t, 3, "f", "g")
	f, f2 := e.f("f"), e.f("g")
	g := group(t, unix.FAN_CLASS_CONTENT)
	g2 := group(t, unix.FAN_CLASS_CONTENT)
	mark(t, g, 0, unix.FAN_OPEN_PERM, f.Path)
	mark(t, g2, 0, unix.FAN_OPEN_PERM, f2.Path)
	did := fmt.Sprintf("group A: inode mark FAN_OPEN_PERM on %s; group B: the same on %s", f.Path, f2.Path)

	// Actor 0's event is read (on the group's access list), actor 1's is left
	// queued unread (on the notification list): fanotify_release allows both.
	p0 := send(t, e.a(0), openOp(f.Path))
	readOne(t, g, did+"; actor 0 opens f", want(unix.FAN_OPEN_PERM, e.a(0).Pid(), f))
	p1 := send(t, e.a(1), openOp(f.Path))
	waitReadable(t, g, did+"; actor 1 opens f")
	p2 := send(t, e.a(2), openOp(f2.Path))
	ev2 := readOne(t, g2, did+"; actor 2 opens "+f2.Path, want(unix.FAN_OPEN_PERM, e.a(2).Pid(), f2))

	start := time.Now()
	if err := g.Close(); err != nil {
		t.Fatalf("close group A: %v", err)
	}
	finish(t, p0, releaseWait, 0, did+"; group A closed with actor 0's event read, unanswered")
	finish(t, p1, releaseWait, 0, did+"; group A closed with actor 1's event queued, unread")
	if d := time.Since(start); d > releaseWait {
		t.Errorf("%s: releasing the blocked actors took %v, want < %v", did, d, releaseWait)
	}
	stillBlocked(t, p2, did+"; group B must be unaffected by A's close")
	respond(t, g2, ev2, fanotify.Deny)
	finish(t, p2, answerWait, unix.EPERM, did+"; group B answered FAN_DENY")
	quiet(t, g2, did)
}

// waitReadable waits until the group has an event queued, without reading it.
func waitReadable(t *harness.T, g *fanotify.Group, did string) {
	t.Helper()
	deadline := time.Now().Add(eventWait)
	for {
		fds := []unix.PollFd{{Fd: int32(g.Fd()), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(time.Until(deadline)/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: poll: %v", did, err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no event queued within %v", did, eventWait)
		}
	}
}

func runListenerKilled(t *harness.T) {
	e := prepare(t, 1, "f")
	f := e.f("f")
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("the listener stand-in needs sleep(1): %v", err)
	}
	g := group(t, unix.FAN_CLASS_CONTENT)
	mark(t, g, 0, unix.FAN_OPEN_PERM, f.Path)
	did := fmt.Sprintf("inode mark FAN_OPEN_PERM on %s; actor open(2)", f.Path)
	p := send(t, e.a(0), openOp(f.Path))
	readOne(t, g, did, want(unix.FAN_OPEN_PERM, e.a(0).Pid(), f))

	// Another process becomes the group's last holder: it inherits a
	// duplicate of the group fd, then this process closes its own.
	// F_DUPFD_CLOEXEC: no other child may inherit it; ExtraFiles clears the
	// flag in the holder only.
	dup, err := unix.FcntlInt(uintptr(g.Fd()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("dup group fd: %v", err)
	}
	fdFile := os.NewFile(uintptr(dup), "fanotify-group")
	holder := exec.Command(sleep, "60")
	holder.ExtraFiles = []*os.File{fdFile}
	holder.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := holder.Start(); err != nil {
		fdFile.Close()
		t.Fatalf("start group holder: %v", err)
	}
	fdFile.Close()
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	if err := g.Close(); err != nil {
		t.Fatalf("close this process's group fd: %v", err)
	}
	stillBlocked(t, p, did+"; group still held by pid "+fmt.Sprint(holder.Process.Pid))

	start := time.Now()
	if err := holder.Process.Kill(); err != nil {
		t.Fatalf("kill group holder: %v", err)
	}
	holder.Wait()
	finish(t, p, releaseWait, 0, did+"; the group's last holder was killed with SIGKILL")
	if d := time.Since(start); d > releaseWait {
		t.Errorf("%s: release took %v after the holder died, want < %v", did, d, releaseWait)
	}
}

func runNonblockSlow(t *harness.T) {
	const n = 3
	e := prepare(t, n, "f")
	f := e.f("f")
	g := group(t, unix.FAN_CLASS_CONTENT|unix.FAN_NONBLOCK)
	mark(t, g, 0, unix.FAN_OPEN_PERM, f.Path)
	did := fmt.Sprintf("group FAN_CLASS_CONTENT|FAN_NONBLOCK; inode mark FAN_OPEN_PERM on %s; %d actors open(2)", f.Path, n)

	buf := make([]byte, 4096)
	if _, err := unix.Read(g.Fd(), buf); !errors.Is(err, unix.EAGAIN) {
		t.Errorf("read(2) of an empty FAN_NONBLOCK group: want EAGAIN, got %v", errOrNil(err))
	}

	var ps []*actor.Pending
	for i := 0; i < n; i++ {
		ps = append(ps, send(t, e.a(i), openOp(f.Path)))
	}
	evs := readEvents(t, g, n, did)
	// Several processes' events are queued in the order they reached the
	// group, which the kernel does not promise; compare them sorted by pid.
	sort.Slice(evs, func(i, j int) bool { return evs[i].Pid < evs[j].Pid })
	var wants []fanotify.Event
	for i := 0; i < n; i++ {
		wants = append(wants, want(unix.FAN_OPEN_PERM, e.a(i).Pid(), f))
	}
	sort.Slice(wants, func(i, j int) bool { return wants[i].Pid < wants[j].Pid })
	for i := range wants {
		if !expectOne(t, did+" (sorted by pid)", evs[i], wants[i]) {
			t.FailNow()
		}
	}

	time.Sleep(slowAnswer)
	for i, p := range ps {
		stillBlocked(t, p, fmt.Sprintf("%s; actor %d after %v without an answer", did, i, slowAnswer))
	}
	byPid := map[int32]int{}
	for i := 0; i < n; i++ {
		byPid[int32(e.a(i).Pid())] = i
	}
	for k, ev := range evs {
		i := byPid[ev.Pid]
		respond(t, g, ev, fanotify.Allow)
		finish(t, ps[i], answerWait, 0, fmt.Sprintf("%s; actor %d answered FAN_ALLOW", did, i))
		for _, later := range evs[k+1:] {
			stillBlocked(t, ps[byPid[later.Pid]], fmt.Sprintf("%s; actor %d not answered yet", did, byPid[later.Pid]))
		}
	}
	quiet(t, g, did)
	if _, err := unix.Read(g.Fd(), buf); !errors.Is(err, unix.EAGAIN) {
		t.Errorf("read(2) of the drained FAN_NONBLOCK group: want EAGAIN, got %v", errOrNil(err))
	}
}

func runListenerOwnAccess(t *harness.T) {
	e := prepare(t, 1, "f")
	f := e.f("f")
	root := t.FS().Root
	g := group(t, unix.FAN_CLASS_CONTENT)
	mark(t, g, unix.FAN_MARK_FILESYSTEM, unix.FAN_OPEN_PERM|unix.FAN_ACCESS_PERM, root)
	did := fmt.Sprintf("filesystem mark FAN_OPEN_PERM|FAN_ACCESS_PERM on %s; actor open(2) %s", root, f.Path)

	p := send(t, e.a(0), openOp(f.Path))
	ev := readOne(t, g, did, want(unix.FAN_OPEN_PERM, e.a(0).Pid(), f))

	// Read the file through the event fd while the actor is still blocked.
	// Should that read raise a permission event, it would wait for this very
	// goroutine: bound it, and let the group's close release it.
	type res struct {
		data []byte
		err  error
	}
	done := make(chan res, 1)
	go func() {
		b := make([]byte, 256)
		n, err := unix.Pread(int(ev.Fd), b, 0)
		if n < 0 {
			n = 0
		}
		done <- res{b[:n], err}
	}()
	select {
	case r := <-done:
		if r.err != nil || !bytes.Equal(r.data, fileContent) {
			t.Errorf("listener pread of the event fd: got %q, %v; want %q", r.data, errOrNil(r.err), fileContent)
		}
	case <-time.After(eventWait):
		t.Fatalf("%s: the listener's own read of the event fd blocked for %v (a permission event for itself?)", did, eventWait)
	}
	none(t, g, did+"; listener read the event fd")
	stillBlocked(t, p, did)
	respond(t, g, ev, fanotify.Allow)
	r := finish(t, p, answerWait, 0, did+"; answered FAN_ALLOW")

	// The same read by another process is reported: the mark is live, and
	// only the event fd is exempt.
	pr := send(t, e.a(0), readOp(r.Fd, 64))
	ev2 := readOne(t, g, did+"; actor read(2)", want(unix.FAN_ACCESS_PERM, e.a(0).Pid(), f))
	respond(t, g, ev2, fanotify.Allow)
	finish(t, pr, answerWait, 0, did+"; actor read(2) answered FAN_ALLOW")
	quiet(t, g, did)
}
