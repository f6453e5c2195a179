package main

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// fidFS is the filesystem side of FID reporting: fanotify_mark(2) answers
// ENODEV when the filesystem has no fsid, EOPNOTSUPP/EXDEV when it cannot
// encode file handles (fanotify_test_fsid, fanotify_test_fid).
var fidFS = feature.New("FID reporting on this filesystem (fsid and file handles)", "", nil)

// fidUsable returns nil when a FAN_REPORT_FID group can mark this
// filesystem, or the reason it cannot, as a skip-class error.
func fidUsable(t *harness.T) error {
	if err := feature.ReportFID.Check(); err != nil {
		return err
	}
	g, err := fanotify.Init(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
	if err != nil {
		return feature.ReportFID.ClassifyErr(err)
	}
	defer g.CloseAsync()
	err = g.Add(0, unix.FAN_OPEN, t.Dir())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENODEV), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EXDEV):
		return &feature.Unsupported{Feature: fidFS, Err: err}
	}
	return fmt.Errorf("FID probe on %s: %w", t.FS().Type, err)
}
