package main

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// Group kinds, for the file-descriptor check of each event.
const (
	fdGroup  = false // legacy group: events carry an open fd
	fidGroup = true  // FAN_REPORT_*FID group: fd is always FAN_NOFD
)

// step is one operation of a case and every event it must queue, in order
// (expect.FanotifySteps drains after each, checks the event fds, and listens
// expect.Quiet after the last).
type step = expect.Step[fanotify.Event]

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
