package main

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// mark adds a mark and fails the case on error. Where the filesystem cannot
// report file handles on this kernel the case skips with the errno and the
// release that added it: tmpfs has no f_fsid before 5.13 (ENODEV) and
// overlayfs encodes non-decodable handles for fanotify only since 6.6
// (before that, EOPNOTSUPP without the nfs_export option).
func mark(t *harness.T, g *fanotify.Group, flags uint, mask uint64, path string) {
	t.Helper()
	err := g.Add(flags, mask, path)
	if err == nil {
		return
	}
	switch fs := t.FS().Type; {
	case errors.Is(err, unix.ENODEV) && fs == "tmpfs" && !feature.KernelAtLeast("5.13"):
		t.Skipf("%v (tmpfs has no f_fsid before 5.13)", err)
	case (errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENODEV)) && fs == "overlay" && !feature.KernelAtLeast("6.6"):
		t.Skipf("%v (overlayfs file handles for fanotify need >= 6.6)", err)
	}
	t.Fatalf("%v", err)
}

// fev builds an expected event.
func fev(mask uint64, pid int, info ...fanotify.Info) fanotify.Event {
	return fanotify.Event{Mask: fanotify.Mask(mask), Pid: int32(pid), Info: info}
}
