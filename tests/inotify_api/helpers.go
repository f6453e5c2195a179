package main

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
)

// wantErrno fails the case unless err carries errno (0: success wanted).
func wantErrno(t *harness.T, what string, err error, errno unix.Errno) {
	t.Helper()
	switch {
	case errno == 0 && err != nil:
		t.Errorf("%s: %v, want success", what, err)
	case errno == 0:
	case err == nil:
		t.Errorf("%s: succeeded, want %s", what, unix.ErrnoName(errno))
	case !errors.Is(err, errno):
		t.Errorf("%s: %v, want %s", what, err, unix.ErrnoName(errno))
	}
}

// inotifyQueued returns ioctl(FIONREAD) on fd (FIONREAD is TIOCINQ's number
// on every Linux architecture; golang.org/x/sys/unix names only TIOCINQ).
func inotifyQueued(t *harness.T, fd int) int {
	t.Helper()
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	if err != nil {
		t.Fatalf("ioctl(FIONREAD): %v", err)
	}
	return n
}

// touch creates empty files from the test process (setup only).
func touch(t *harness.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
}

// mkdirs makes directories from the test process (setup only).
func mkdirs(t *harness.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
}
