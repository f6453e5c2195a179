// Command fanotify_records checks the info records fanotify(7) appends to an
// event: FAN_RENAME's old and new parent+name records, the renamed object's
// FID (FAN_REPORT_TARGET_FID), the pidfd record (FAN_REPORT_PIDFD), thread ids
// (FAN_REPORT_TID), several records in one event, and file handles longer than
// the ones fanotify keeps inline (btrfs, overlayfs).
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	harness.Main(harness.Suite{
		Name:        "fanotify_records",
		Doc:         "fanotify(7) info records: FAN_RENAME old/new DFID_NAME, TARGET_FID, PIDFD, TID, multiple records, long file handles",
		Needs:       []*feature.Feature{feature.Fanotify},
		Filesystems: []string{"tmpfs", "ext4", "xfs", "btrfs", "overlay"},
		Cases:       append(append([]harness.Case(nil), cases...), mntCases...),
		Rules:       specRules,
	})
}
