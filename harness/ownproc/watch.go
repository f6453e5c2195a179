package ownproc

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/fanotify"
)

// WatchFS watches the filesystem mounted at root for d with a notification
// group's filesystem mark (a mount mark where the kernel has no filesystem
// marks) for opens, reads, writes and closes of files and directories, and
// returns the running processes outside the suite that caused any (Foreign,
// not Gone). It names the programs that may have caused a difference only
// inotify events showed (they carry no pid). The caller watches while its
// own case does nothing on that filesystem; the group is closed before
// WatchFS returns.
func WatchFS(root string, d time.Duration) ([]Process, error) {
	g, err := fanotify.Init(unix.FAN_CLASS_NOTIF|unix.FAN_NONBLOCK, unix.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("watching %s for other programs: %w", root, err)
	}
	// Not Close: another program's permission event waiting in one of the
	// case's groups pins this group's mark too (fsnotify_prepare_user_wait
	// raises its user_waits), and a synchronous close would wait for it.
	defer g.CloseAsync()
	const mask = unix.FAN_OPEN | unix.FAN_ACCESS | unix.FAN_MODIFY | unix.FAN_CLOSE | unix.FAN_ONDIR
	err = g.Add(unix.FAN_MARK_FILESYSTEM, mask, root)
	if errors.Is(err, unix.EINVAL) {
		err = g.Add(unix.FAN_MARK_MOUNT, mask, root)
	}
	if err != nil {
		return nil, fmt.Errorf("watching %s for other programs: %w", root, err)
	}
	evs, err := g.Collect(d)
	if err != nil {
		return nil, fmt.Errorf("watching %s for other programs: %w", root, err)
	}
	var out []Process
	for _, e := range evs {
		p, foreign := Foreign(e.Pid)
		if foreign && !p.Gone && !slices.ContainsFunc(out, func(q Process) bool { return q.Pid == p.Pid }) {
			out = append(out, p)
		}
	}
	return out, nil
}
