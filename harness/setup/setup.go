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

// Mkdir makes the directory path, mode 0755.
func Mkdir(t TB, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatalf("setup: %v", err)
	}
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
