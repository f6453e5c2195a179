// Command fanotify_modify_clear checks when a write clears a fanotify ignore
// mask: FAN_MARK_IGNORED_SURV_MODIFY or not, on inode, directory, mount and
// filesystem marks, for both ignore flavours, with the mark state of
// /proc/self/fdinfo checked before and after the write.
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	harness.Main(harness.Suite{
		Name:        "fanotify_modify_clear",
		Doc:         "FS_MODIFY clearing of fanotify ignore masks (FAN_MARK_IGNORED_SURV_MODIFY)",
		Needs:       []*feature.Feature{feature.Fanotify},
		Filesystems: []string{"tmpfs", "ext4"},
		Cases:       cases(),
		Rules:       specRules,
	})
}
