// Command inotify_api checks the inotify system-call interface around the
// events: /proc/PID/fdinfo of an inotify fd, FIONREAD, O_ASYNC/F_SETOWN
// (SIGIO), the legacy inotify_init syscall, short reads and the errnos of
// inotify_init1, inotify_add_watch and inotify_rm_watch.
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	harness.Main(harness.Suite{
		Name:        "inotify_api",
		Doc:         "inotify fdinfo, FIONREAD, SIGIO, legacy inotify_init, short reads and errnos",
		Needs:       []*feature.Feature{feature.Inotify},
		Filesystems: []string{"tmpfs", "ext4"},
		Cases:       append(cases, specCases...),
		Rules:       specRules,
	})
}
