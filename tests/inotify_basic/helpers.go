package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
)

// settle is how long a case listens after its last step for an event that
// should not exist. inotify queues every event before the syscall that caused
// it returns (fs/notify/fsnotify.c: fsnotify() calls the group's
// handle_inode_event synchronously), so this only guards against a late,
// unexpected event; it is never relied on to receive an expected one.
const settle = expect.Quiet

// step is one operation of a case and every event it must queue, in order.
type step struct {
	did  string          // what the operation does, for the failure report
	do   func() error    // performs it (through the actor)
	want []inotify.Event // the exact events, in order; nil: none
}

// runSteps performs each step, drains the queue after the step's call has
// returned and compares the whole ordered list with the step's expectation.
// After the last step it listens for settle and expects nothing more.
// setup describes the watches in one line for the report.
func runSteps(t *harness.T, in *inotify.Instance, setup string, steps []step) {
	t.Helper()
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %s: %v", setup, s.did, err)
		}
		got, err := in.Drain()
		if err != nil {
			t.Fatalf("%s: %s: reading events: %v", setup, s.did, err)
		}
		expect.Inotify(t, setup+"; "+s.did, got, s.want)
	}
	expectQuiet(t, in, setup+"; after the last step")
}

// expectQuiet listens for settle and fails on any event.
func expectQuiet(t *harness.T, in *inotify.Instance, did string) {
	t.Helper()
	expect.InotifyQuiet(t, did, in, settle)
}

// watch adds a watch and fails the case on error.
func watch(t *harness.T, in *inotify.Instance, path string, mask uint32) int32 {
	t.Helper()
	wd, err := in.AddWatch(path, mask)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return wd
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

// writeFile creates path with data from the test process, before any watch
// exists (setup only).
func writeFile(t *harness.T, path string, data string) {
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

// ev builds an expected event.
func ev(wd int32, mask uint32, name string) inotify.Event {
	return inotify.Event{Wd: wd, Mask: inotify.Mask(mask), Name: name}
}

// evc builds an expected event with a cookie number (see expect.NormalizeCookies).
func evc(wd int32, mask uint32, name string, cookie uint32) inotify.Event {
	return inotify.Event{Wd: wd, Mask: inotify.Mask(mask), Name: name, Cookie: cookie}
}

// The inotify queue limit is read from fs.inotify.max_queued_events when the
// instance is created (fs/notify/inotify/inotify_user.c inotify_new_group:
// group->max_events = max_events).
const maxQueuedSysctl = "fs.inotify.max_queued_events"

// fillableLimit is the largest queue limit the overflow case fills as it is;
// above it the case lowers the sysctl around inotify_init1 only.
const fillableLimit = 1 << 17

// overflowInstance opens an inotify instance and returns it with its queue
// limit. When the system limit is too large to fill quickly it lowers
// fs.inotify.max_queued_events for the duration of inotify_init1 only (the
// value is copied into the new group), restores it at once, and says so.
func overflowInstance(t *harness.T) (*inotify.Instance, int) {
	t.Helper()
	limit, err := fixture.SysctlInt(maxQueuedSysctl)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if limit <= fillableLimit {
		return t.Inotify(0), limit
	}
	const lowered = 16384
	// The instance copies the limit at inotify_init1: restore right after it.
	restore, err := t.SetSysctl(maxQueuedSysctl, strconv.Itoa(lowered))
	if err != nil {
		t.Fatalf("lowering the queue limit from %d: %v", limit, err)
	}
	in := t.Inotify(0)
	restore()
	return in, lowered
}

// maskCreate is IN_MASK_CREATE. Kernels before it ignore the unknown mask bit
// (inotify_add_watch only rejects masks without any known event), so the
// probe watches twice and expects EEXIST the second time.
var maskCreate = feature.New("IN_MASK_CREATE", "4.19", func() error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("inotify_init1: %w", err)
	}
	defer unix.Close(fd)
	dir := os.Getenv("FSNSUITE_WORKSPACE")
	if dir == "" {
		dir = os.TempDir()
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_ATTRIB|unix.IN_MASK_CREATE); err != nil {
		return fmt.Errorf("inotify_add_watch(IN_MASK_CREATE): %w", err)
	}
	_, err = unix.InotifyAddWatch(fd, dir, unix.IN_ATTRIB|unix.IN_MASK_CREATE)
	switch {
	case errors.Is(err, unix.EEXIST):
		return nil
	case err == nil:
		return fmt.Errorf("second IN_MASK_CREATE watch succeeded (flag ignored): %w", unix.EOPNOTSUPP)
	}
	return fmt.Errorf("second inotify_add_watch(IN_MASK_CREATE): %w", err)
})
