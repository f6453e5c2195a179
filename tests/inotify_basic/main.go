// Command inotify_basic checks inotify(7)'s basic event reporting.
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	harness.Main(harness.Suite{
		Name:        "inotify_basic",
		Doc:         "inotify(7) events with names, cookies, flags and errnos",
		Needs:       []*feature.Feature{feature.Inotify},
		Filesystems: []string{"tmpfs", "ext4"},
		Cases:       append(cases, specCases...),
		Rules:       specRules,
	})
}
