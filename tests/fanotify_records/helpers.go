package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
)

// mark adds a mark and stops the case on error. Where the filesystem cannot
// report file handles on this kernel the case skips with the errno and the
// filesystem probe's reason (T.JudgeFIDMark, feature.FIDOn: tmpfs has no
// f_fsid before 5.13, ENODEV; overlayfs encodes non-decodable handles for
// fanotify only since 6.6, before that EOPNOTSUPP without nfs_export); a
// refusal the probe does not share, or one at or above that release, fails.
func mark(t *harness.T, g *fanotify.Group, flags uint, mask uint64, path string) {
	t.Helper()
	t.JudgeFIDMark(g.Add(flags, mask, path))
}

// fev builds an expected event.
func fev(mask uint64, pid int, info ...fanotify.Info) fanotify.Event {
	return fanotify.Event{Mask: fanotify.Mask(mask), Pid: int32(pid), Info: info}
}
