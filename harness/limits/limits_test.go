package limits

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Each limit errno is named by its sysctl; other errnos pass through.
func TestWrapNamesTheSysctl(t *testing.T) {
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
