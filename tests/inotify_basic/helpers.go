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

// maskCreate is IN_MASK_CREATE (4d97f7d53da7, 4.19). The probe watches a
// directory with IN_MASK_CREATE, then again: inotify_add_watch(2) "EEXIST:
// mask contains IN_MASK_CREATE and pathname refers to a file already being
// watched by the same fd". A kernel without the flag answers in one of two
// ways: EINVAL, where inotify_add_watch refuses a bit outside
// ALL_INOTIFY_BITS (fs/notify/inotify/inotify_user.c; 6.1 and 7.3 do), or
// success, where it only refuses a mask with no known event and ignores the
// rest (older kernels): that second answer is the feature's OlderResult, an
// absence below 4.19 and a wrong result (a failure) from 4.19 on.
var maskCreate = func() *feature.Feature {
	f := feature.New("IN_MASK_CREATE", "4.19", func() error {
		return feature.WithInotifyWatch(unix.IN_ATTRIB|unix.IN_MASK_CREATE, func(fd int, dir string) error {
			wd, err := unix.InotifyAddWatch(fd, dir, unix.IN_ATTRIB|unix.IN_MASK_CREATE)
			return maskCreateOutcome(wd, err)
		})
	})
	f.OlderResult = "what a kernel before 4.19 does, which ignores a mask bit it does not know"
	f.Privilege = "" // inotify_add_watch(2) checks no capability
	return f
}()

// maskCreateOutcome is maskCreate's decision on the second
// inotify_add_watch(IN_MASK_CREATE) of the same directory: EEXIST is the
// feature; success a wrong result; any other errno the kernel's answer,
// for feature.Decide (EINVAL: the bit is unknown).
func maskCreateOutcome(wd int, err error) error {
	switch {
	case errors.Is(err, unix.EEXIST):
		return nil
	case err == nil:
		return feature.Wrong("a second inotify_add_watch(IN_ATTRIB|IN_MASK_CREATE) of a watched directory",
			"it returned wd %d; want EEXIST (inotify_add_watch(2))", wd)
	}
	return fmt.Errorf("second inotify_add_watch(IN_MASK_CREATE): %w", err)
}
