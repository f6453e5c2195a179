package main

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
)

// step is one operation of a case and every event it must queue, in order
// (expect.InotifySteps drains after each and listens expect.Quiet after the
// last).
type step = expect.Step[inotify.Event]

// watch adds a watch and fails the case on error.
func watch(t *harness.T, in *inotify.Instance, path string, mask uint32) int32 {
	t.Helper()
	wd, err := in.AddWatch(path, mask)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return wd
}

// ev builds an expected event.
func ev(wd int32, mask uint32, name string) inotify.Event {
	return inotify.Event{Wd: wd, Mask: inotify.Mask(mask), Name: name}
}

// evc builds an expected event with a cookie number (see expect.NormalizeCookies).
func evc(wd int32, mask uint32, name string, cookie uint32) inotify.Event {
	return inotify.Event{Wd: wd, Mask: inotify.Mask(mask), Name: name, Cookie: cookie}
}

// maskCreate is IN_MASK_CREATE. Kernels before it ignore the unknown mask bit
// (inotify_add_watch only rejects masks without any known event), so the
// probe watches twice and expects EEXIST the second time.
var maskCreate = feature.New("IN_MASK_CREATE", "4.19", func() error {
	return feature.WithInotifyWatch(unix.IN_ATTRIB|unix.IN_MASK_CREATE, func(fd int, dir string) error {
		_, err := unix.InotifyAddWatch(fd, dir, unix.IN_ATTRIB|unix.IN_MASK_CREATE)
		switch {
		case errors.Is(err, unix.EEXIST):
			return nil
		case err == nil:
			return fmt.Errorf("second IN_MASK_CREATE watch succeeded (flag ignored): %w", unix.EOPNOTSUPP)
		}
		return fmt.Errorf("second inotify_add_watch(IN_MASK_CREATE): %w", err)
	})
})
