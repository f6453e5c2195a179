package limits

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Each limit errno is named by its sysctl when a fresh object is refused
// too; other errnos pass through.
func TestWrapNamesTheSysctl(t *testing.T) {
	defer func(p func(string) unix.Errno) { probe = p }(probe)
	probe = func(string) unix.Errno { return unix.ENOSPC }
	for _, tc := range []struct {
		wrap   func(string, error) error
		errno  unix.Errno
		sysctl string
	}{
		{FanotifyInit, unix.EMFILE, "fs.fanotify.max_user_groups"},
		{FanotifyMark, unix.ENOSPC, "fs.fanotify.max_user_marks"},
		{InotifyInit, unix.EMFILE, "fs.inotify.max_user_instances"},
		{InotifyWatch, unix.ENOSPC, "fs.inotify.max_user_watches"},
	} {
		err := tc.wrap("call()", fmt.Errorf("call(): %w", tc.errno))
		l, ok := As(err)
		if !ok || l.Sysctl != tc.sysctl || !strings.Contains(err.Error(), tc.sysctl+"=") || !errors.Is(err, tc.errno) {
			t.Errorf("%v: got %v, want the limit %s named and the errno kept", tc.errno, err, tc.sysctl)
		}
		other := tc.wrap("call()", fmt.Errorf("call(): %w", unix.EINVAL))
		if _, ok := As(other); ok {
			t.Errorf("EINVAL wrapped as a limit: %v", other)
		}
	}
}

// A limit errno that a fresh object of the same kind does not meet is the
// kernel's answer to the call itself, not a limit: it is returned bare, so
// that a case expecting another errno fails on it (issue 33 review: a
// kernel returning ENOSPC for IN_MASK_CREATE must not read as a limit).
func TestWrapNeedsTheLimitReached(t *testing.T) {
	defer func(p func(string) unix.Errno) { probe = p }(probe)
	probe = func(string) unix.Errno { return 0 }
	for _, wrapf := range []func(string, error) error{FanotifyInit, FanotifyMark, InotifyInit, InotifyWatch} {
		for _, errno := range []unix.Errno{unix.EMFILE, unix.ENOSPC} {
			err := wrapf("call()", fmt.Errorf("call(): %w", errno))
			if _, ok := As(err); ok {
				t.Errorf("%v read as a limit although a fresh object was made: %v", errno, err)
			}
			if !errors.Is(err, errno) {
				t.Errorf("%v lost: %v", errno, err)
			}
		}
	}
}

// The real probes are well-formed calls: each makes its object, or meets
// only an errno a limit or a missing privilege gives (a malformed probe,
// such as a FAN_DELETE_SELF mark in a group without FIDs, is EINVAL).
func TestProbesWellFormed(t *testing.T) {
	for kind, allowed := range map[string][]unix.Errno{
		"inotify instance": {unix.EMFILE},
		"inotify watch":    {unix.EMFILE, unix.ENOSPC},
		"fanotify group":   {unix.EMFILE, unix.EPERM},
		"fanotify mark":    {unix.EMFILE, unix.EPERM, unix.ENOSPC},
	} {
		if got := probe(kind); got != 0 && !slices.Contains(allowed, got) {
			t.Errorf("probe %s: %v, want success or one of %v", kind, got, allowed)
		}
	}
}
