// Command fanotify_basic checks fanotify(7)'s basic event reporting: inode,
// mount and filesystem marks, file descriptors and FID records, mark flags,
// and the queue limit.
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	harness.Main(harness.Suite{
		Name:        "fanotify_basic",
		Doc:         "fanotify(7) inode/mount/filesystem marks, FID records, mark flags and queue overflow",
		Needs:       []*feature.Feature{feature.Fanotify},
		Filesystems: []string{"tmpfs", "ext4"},
		Cases:       append(append(cases, specCases...), featuresCase),
		Rules:       specRules,
	})
}
