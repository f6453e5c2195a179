// Package setup makes a case's files and mounts from the test process, before
// any mark or watch exists (so making them raises no event a case checks).
// Every helper fails the case on error, with "setup:" in the message.
package setup

import (
	"os"

	"golang.org/x/sys/unix"
)

// TB is the part of harness.T the helpers need.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}

// WriteFile creates (or truncates) path with data, mode 0644.
func WriteFile(t TB, path, data string) {
	t.Helper()
	WriteFileMode(t, path, []byte(data), 0o644)
}

// WriteFileMode creates (or truncates) path with data and the given mode.
func WriteFileMode(t TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatalf("setup: %v", err)
	}
}

// Mkdir makes each directory of paths, in order, mode 0755.
func Mkdir(t TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
}

// Touch creates each file of paths empty (or truncates it), mode 0644.
func Touch(t TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		WriteFileMode(t, p, nil, 0o644)
	}
}

// Open opens path with flags|O_CLOEXEC and closes the descriptor at cleanup.
func Open(t TB, path string, flags int) int {
	t.Helper()
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("setup: open %s: %v", path, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// ClosedFd returns a descriptor number that was open a moment ago and is
// closed now (dup of fd, then close), for EBADF expectations.
func ClosedFd(t TB, fd int) int {
	t.Helper()
	closed, err := unix.Dup(fd)
	if err != nil {
		t.Fatalf("setup: dup: %v", err)
	}
	if err := unix.Close(closed); err != nil {
		t.Fatalf("setup: close: %v", err)
	}
	return closed
}

// Stat stats path; the lookup also leaves its dentry in the dcache.
func Stat(t TB, path string) unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatalf("setup: stat %s: %v", path, err)
	}
	return st
}

// BindMount bind-mounts dir on a fresh directory of the workspace and returns
// it; the mount is detached at cleanup. It gives a second vfsmount of the same
// filesystem, which a mount mark on the original mount does not cover.
func BindMount(t TB, dir string) string {
	t.Helper()
	dst := t.TempDir()
	if err := unix.Mount(dir, dst, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("setup: bind mount %s on %s: %v", dir, dst, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dst, unix.MNT_DETACH); err != nil {
			t.Errorf("cleanup: unmount %s: %v", dst, err)
		}
	})
	return dst
}
