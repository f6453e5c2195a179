// Command fanotify_fs_error checks FAN_FS_ERROR (fanotify(7), Linux 5.16):
// the error record (errno and count) and the FID record of the object, for
// an ext4 inode corrupted with debugfs and for a filesystem-wide abort.
// Only ext4 reports filesystem errors to fsnotify
// (Documentation/admin-guide/filesystem-monitoring.rst: "the only file system
// that emits FAN_FS_ERROR notifications is Ext4").
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	harness.Main(harness.Suite{
		Name:        "fanotify_fs_error",
		Doc:         "FAN_FS_ERROR error and FID records for a corrupted ext4 inode and an aborted ext4",
		Needs:       []*feature.Feature{feature.Fanotify, feature.ReportFID, feature.MarkFilesystem},
		Filesystems: []string{"ext4"},
		Cases:       cases,
		Rules:       specRules,
	})
}
