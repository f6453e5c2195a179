package expect

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
)

// FatalTB is a TB that can also stop the case (harness.T).
type FatalTB interface {
	TB
	Fatalf(format string, args ...any)
}

// Step is one operation of a case and every event it must queue, in order.
type Step[E any] struct {
	Did  string       // what the operation does, for the failure report
	Do   func() error // performs it (through the actor)
	Want []E          // the exact events, in order; nil: none
}

// InotifySteps performs each step, drains in after the step's call has
// returned and compares the whole ordered list with the step's Want (inotify
// queues an event before the syscall that caused it returns: fsnotify() calls
// the group's handler synchronously, so a drain sees everything). After the
// last step it checks InotifyQuiet for the Quiet window. setup describes the
// watches in one line for the report.
func InotifySteps(t FatalTB, in *inotify.Instance, setup string, steps []Step[inotify.Event]) {
	t.Helper()
	runSteps(t, setup, steps, in.Drain, func(did string, got, want []inotify.Event) { Inotify(t, did, got, want) })
	InotifyQuiet(t, setup+"; after the last step", in, Quiet)
}

// FanotifySteps is InotifySteps for a fanotify group. Draining between steps
// also keeps fanotify from merging events of different steps. Each event's
// fd is checked with FanotifyFds (fid: the group reports FIDs).
func FanotifySteps(t FatalTB, g *fanotify.Group, fid bool, setup string, steps []Step[fanotify.Event]) {
	t.Helper()
	runSteps(t, setup, steps, g.Drain, func(did string, got, want []fanotify.Event) {
		FanotifyFds(t, did, got, fid)
		Fanotify(t, did, got, want)
	})
	FanotifyQuiet(t, setup+"; after the last step", g, Quiet)
}

// FanotifyDrained drains g after the operations of did have returned (their
// events are queued by then), compares the whole ordered list with want,
// checks each event's fd with FanotifyFds when g reports file handles
// (FAN_REPORT_FID or FAN_REPORT_DIR_FID: FAN_NOFD on every event), then
// listens for the Quiet window: nothing else may arrive.
func FanotifyDrained(t FatalTB, g *fanotify.Group, did string, want []fanotify.Event) {
	t.Helper()
	got, err := g.Drain()
	if err != nil {
		t.Fatalf("%s: reading events: %v", did, err)
	}
	if g.InitFlags&(unix.FAN_REPORT_FID|unix.FAN_REPORT_DIR_FID) != 0 {
		FanotifyFds(t, did, got, true)
	}
	Fanotify(t, did, got, want)
	FanotifyQuiet(t, did, g, Quiet)
}

// runSteps performs each step, then drains and compares with compare.
func runSteps[E any](t FatalTB, setup string, steps []Step[E], drain func() ([]E, error), compare func(did string, got, want []E)) {
	t.Helper()
	for _, s := range steps {
		if err := s.Do(); err != nil {
			t.Fatalf("%s: %s: %v", setup, s.Did, err)
		}
		got, err := drain()
		if err != nil {
			t.Fatalf("%s: %s: reading events: %v", setup, s.Did, err)
		}
		compare(setup+"; "+s.Did, got, s.Want)
	}
}

// FanotifyFds checks the metadata fd of each event, which Fanotify does not
// compare: fanotify(7) "fd ... FAN_NOFD if a queue overflow occurred. With an
// fanotify group that identifies filesystem objects by file handles,
// applications should expect this value to be set to FAN_NOFD for each
// event". fid says the group reports FIDs; otherwise every event but an
// overflow must carry an open fd.
func FanotifyFds(t TB, did string, got []fanotify.Event, fid bool) bool {
	t.Helper()
	ok := true
	for i, e := range got {
		noFd := fid || uint64(e.Mask)&unix.FAN_Q_OVERFLOW != 0
		switch {
		case noFd && e.Fd != unix.FAN_NOFD:
			t.Errorf("%s: event [%d] %s: fd %d, want FAN_NOFD", did, i, e, e.Fd)
			ok = false
		case !noFd && e.Fd < 0:
			t.Errorf("%s: event [%d] %s: fd %d, want an open file descriptor", did, i, e, e.Fd)
			ok = false
		}
	}
	return ok
}

// Errno fails t unless err carries want. what names the call.
func Errno(t TB, what string, err error, want unix.Errno) bool {
	t.Helper()
	switch {
	case err == nil && want == 0:
		return true
	case err == nil:
		t.Errorf("%s: succeeded, want %s", what, ErrnoText(want))
	case want == 0:
		t.Errorf("%s: %v, want success", what, err)
	case !errors.Is(err, want):
		t.Errorf("%s: %v, want %s", what, err, ErrnoText(want))
	default:
		return true
	}
	return false
}

// ErrnoText names an errno for a report: "success" for 0, else
// feature.ErrnoName ("EPERM", or "errno N" for an unnamed one).
func ErrnoText(e unix.Errno) string {
	if e == 0 {
		return "success"
	}
	return feature.ErrnoName(e)
}

// Queued returns ioctl(FIONREAD) on the inotify or fanotify descriptor fd:
// the bytes read(2) would return now. FIONREAD is TIOCINQ's number on every
// Linux architecture (asm-generic/ioctls.h and the arch ones);
// golang.org/x/sys/unix names it only as TIOCINQ. An error stops the case.
func Queued(t FatalTB, fd int) int {
	t.Helper()
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	if err != nil {
		t.Fatalf("ioctl(FIONREAD): %v", err)
	}
	return n
}
