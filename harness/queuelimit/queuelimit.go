// Package queuelimit opens inotify instances and fanotify groups whose event
// queue limit a case can fill in reasonable time, and says what that limit is.
//
// Both backends copy the system limit into a group when it is created
// (fs/notify/inotify/inotify_user.c inotify_new_group and
// fs/notify/fanotify/fanotify_user.c fanotify_init: group->max_events =
// max_queued_events), so lowering the sysctl for the duration of the create
// call alone gives the new group the lowered limit, and nothing else on the
// machine is affected for longer than that call.
package queuelimit

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
)

// TB is the part of harness.T the package needs.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	SetSysctl(name, value string) (restore func(), err error)
}

// Fillable is the largest queue limit a case fills as it is; a larger system
// limit is lowered to Lowered around the create call.
const Fillable = 1 << 17

// Lowered is the limit a case works with when the system's is above Fillable:
// the default of both backends (inotify(7), fanotify(7)).
const Lowered = 16384

// Queue is one backend's queue limit: its sysctl and, for a kernel before the
// sysctl existed, the fixed limit it had.
type Queue struct {
	Sysctl string
	// Fixed is the limit before Since (0: the sysctl always exists).
	Fixed int
	Since string
}

// Inotify is inotify's limit, fs.inotify.max_queued_events (inotify(7); the
// sysctl is as old as inotify).
var Inotify = Queue{Sysctl: "fs.inotify.max_queued_events"}

// Fanotify is fanotify's limit: fs.fanotify.max_queued_events since 5.13,
// a fixed 16384 before (fanotify(7)).
var Fanotify = Queue{Sysctl: "fs.fanotify.max_queued_events", Fixed: 16384, Since: "5.13"}

// Limit returns the limit a group created now gets. A sysctl that is absent
// where the kernel should have it, or that cannot be read, fails the case.
func (q Queue) Limit(t TB) int {
	t.Helper()
	n, err := q.read()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return n
}

// read returns the limit: the sysctl's value, or Fixed on a kernel before Since.
func (q Queue) read() (int, error) {
	n, err := fixture.SysctlInt(q.Sysctl)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, os.ErrNotExist) && q.Fixed != 0 && !feature.KernelAtLeast(q.Since):
		return q.Fixed, nil
	case errors.Is(err, os.ErrNotExist) && q.Fixed != 0:
		return 0, fmt.Errorf("%w (the sysctl exists since %s; this is %s)", err, q.Since, feature.KernelRelease())
	}
	return 0, err
}

// Open calls create (which opens the groups) while the system limit is at
// most Fillable and returns the limit the groups got: the system's, or
// Lowered, to which the sysctl is set for the duration of create only and then
// restored (harness.T.SetSysctl says so in the output). create may stop the
// case; the sysctl is restored all the same.
func (q Queue) Open(t TB, create func()) int {
	t.Helper()
	n, err := q.read()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if n <= Fillable {
		create()
		return n
	}
	restore, err := t.SetSysctl(q.Sysctl, strconv.Itoa(Lowered))
	if err != nil {
		t.Fatalf("lowering the queue limit from %d: %v", n, err)
	}
	defer restore()
	create()
	return Lowered
}
