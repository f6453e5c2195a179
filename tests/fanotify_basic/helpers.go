package main

import (
	"errors"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
)

// settle is how long a case listens after its last step for an event that
// should not exist. fanotify queues every notification event before the
// syscall that caused it returns (fs/notify/fsnotify.c: fsnotify() calls
// fanotify_handle_event synchronously), so this only guards against a late,
// unexpected event; it is never relied on to receive an expected one.
const settle = expect.Quiet

// Group kinds, for the file-descriptor check of each event.
const (
	fdGroup  = false // legacy group: events carry an open fd
	fidGroup = true  // FAN_REPORT_*FID group: fd is always FAN_NOFD
)

// step is one operation of a case and every event it must queue, in order.
type step struct {
	did  string           // what the operation does, for the failure report
	do   func() error     // performs it (through the actor)
	want []fanotify.Event // the exact events, in order; nil: none
}

// runSteps performs each step, drains the group after the step's call has
// returned and compares the whole ordered list with the step's expectation.
// Draining between steps also keeps fanotify from merging events of
// different steps. After the last step it listens for settle and expects
// nothing more. setup describes the group and marks in one line.
func runSteps(t *harness.T, g *fanotify.Group, fid bool, setup string, steps []step) {
	t.Helper()
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %s: %v", setup, s.did, err)
		}
		got, err := g.Drain()
		if err != nil {
			t.Fatalf("%s: %s: reading events: %v", setup, s.did, err)
		}
		did := setup + "; " + s.did
		checkFds(t, did, got, fid)
		expect.Fanotify(t, did, got, s.want)
	}
	expectQuiet(t, g, setup+"; after the last step")
}

// expectQuiet listens for settle and fails on any event.
func expectQuiet(t *harness.T, g *fanotify.Group, did string) {
	t.Helper()
	expect.FanotifyQuiet(t, did, g, settle)
}

// checkFds checks the metadata fd of each event, which expect.Fanotify does
// not compare: fanotify(7) "fd ... FAN_NOFD if a queue overflow occurred.
// With an fanotify group that identifies filesystem objects by file handles,
// applications should expect this value to be set to FAN_NOFD for each event".
func checkFds(t *harness.T, did string, got []fanotify.Event, fid bool) {
	t.Helper()
	for i, e := range got {
		noFd := fid || uint64(e.Mask)&unix.FAN_Q_OVERFLOW != 0
		switch {
		case noFd && e.Fd != unix.FAN_NOFD:
			t.Errorf("%s: event [%d] %s: fd %d, want FAN_NOFD", did, i, e, e.Fd)
		case !noFd && e.Fd < 0:
			t.Errorf("%s: event [%d] %s: fd %d, want an open file descriptor", did, i, e, e.Fd)
		}
	}
}

// fev builds an expected event.
func fev(mask uint64, pid int, path string, info ...fanotify.Info) fanotify.Event {
	return fanotify.Event{Mask: fanotify.Mask(mask), Pid: int32(pid), Path: path, Info: info}
}

// mark adds a mark and fails the case on error. For a group reporting FIDs a
// tmpfs without f_fsid (before 5.13, fanotify_mark(2) ENODEV) skips the case.
func mark(t *harness.T, g *fanotify.Group, flags uint, mask uint64, path string) {
	t.Helper()
	err := g.Add(flags, mask, path)
	if err == nil {
		return
	}
	if errors.Is(err, unix.ENODEV) && t.FS().Type == "tmpfs" && !feature.KernelAtLeast("5.13") {
		t.Skipf("%v (tmpfs has no f_fsid before 5.13, fanotify_mark(2) ENODEV)", err)
	}
	t.Fatalf("%v", err)
}

// wantErrno fails the case unless err carries errno.
func wantErrno(t *harness.T, what string, err error, errno unix.Errno) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: succeeded, want %s", what, unix.ErrnoName(errno))
	case !errors.Is(err, errno):
		t.Errorf("%s: %v, want %s", what, err, unix.ErrnoName(errno))
	}
}

// fidOf is fanotify.FIDOf (statfs fsid + name_to_handle_at handle), fatal on error.
func fidOf(t *harness.T, path string) fanotify.Info {
	t.Helper()
	i, err := fanotify.FIDOf(path)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	return i
}

// dfidName is fanotify.DFIDNameOf, fatal on error.
func dfidName(t *harness.T, dir, name string) fanotify.Info {
	t.Helper()
	i, err := fanotify.DFIDNameOf(dir, name)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	return i
}

// writeFile creates path with data from the test process (setup only).
func writeFile(t *harness.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// mkdir makes a directory from the test process (setup only).
func mkdir(t *harness.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// bindMount bind-mounts dir on a fresh directory of the workspace and returns
// it; the mount is detached at cleanup. It gives a second vfsmount of the same
// filesystem, which a mount mark on the original mount does not cover.
func bindMount(t *harness.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	if err := unix.Mount(dir, dst, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("setup: bind mount %s on %s: %v", dir, dst, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dst, unix.MNT_DETACH); err != nil {
			t.Errorf("cleanup: unmount %s: %v", dst, err)
		}
	})
	return dst
}

// markKinds lists the kinds of the group's marks from fdinfo, sorted (the
// kernel promises no order of fdinfo lines).
func markKinds(t *harness.T, g *fanotify.Group) string {
	t.Helper()
	ms, err := g.Marks()
	if err != nil {
		t.Fatalf("%v", err)
	}
	var k []string
	for _, m := range ms {
		k = append(k, string(m.Kind))
	}
	sort.Strings(k)
	if len(k) == 0 {
		return "none"
	}
	return strings.Join(k, ",")
}

// wantMarks fails the case unless the group's marks are exactly want.
func wantMarks(t *harness.T, g *fanotify.Group, when, want string) {
	t.Helper()
	if got := markKinds(t, g); got != want {
		t.Errorf("%s: group marks (fdinfo) are %s, want %s", when, got, want)
	}
}

// The fanotify queue limit: fs.fanotify.max_queued_events since 5.13, read
// when the group is created (fs/notify/fanotify/fanotify_user.c
// fanotify_init: group->max_events = fanotify_max_queued_events); before
// 5.13 a fixed 16384 (fanotify(7)).
const (
	maxQueuedSysctl  = "fs.fanotify.max_queued_events"
	legacyQueueLimit = 16384
	fillableLimit    = 1 << 17
)

// limitedGroup opens a group without FAN_UNLIMITED_QUEUE and returns it with
// its queue limit. When the system limit is too large to fill quickly it
// lowers fs.fanotify.max_queued_events for the duration of fanotify_init only
// (the value is copied into the new group), restores it at once, and says so.
func limitedGroup(t *harness.T, flags uint) (*fanotify.Group, int) {
	t.Helper()
	limit, err := fixture.SysctlInt(maxQueuedSysctl)
	if errors.Is(err, os.ErrNotExist) {
		return t.Fanotify(flags, unix.O_RDONLY), legacyQueueLimit
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
	if limit <= fillableLimit {
		return t.Fanotify(flags, unix.O_RDONLY), limit
	}
	const lowered = 16384
	// The group copies the limit at fanotify_init: restore right after it.
	restore, err := t.SetSysctl(maxQueuedSysctl, strconv.Itoa(lowered))
	if err != nil {
		t.Fatalf("lowering the queue limit from %d: %v", limit, err)
	}
	g := t.Fanotify(flags, unix.O_RDONLY)
	restore()
	return g, lowered
}
