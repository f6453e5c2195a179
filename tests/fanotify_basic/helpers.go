package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
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

// mark adds a mark and stops the case on error: a skip where a group
// reporting FIDs meets a filesystem that cannot report file handles on this
// kernel (the filesystem's own probe decides: T.JudgeFIDMark; 5.10's tmpfs
// has no f_fsid, fanotify_mark(2) ENODEV), else a failure.
func mark(t *harness.T, g *fanotify.Group, flags uint, mask uint64, path string) {
	t.Helper()
	t.JudgeFIDMark(g.Add(flags, mask, path))
}
