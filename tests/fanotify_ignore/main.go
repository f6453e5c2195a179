// Command fanotify_ignore checks how fanotify ignore masks merge with the
// marks that would report an event: inode, parent directory, mount and
// filesystem marks, legacy FAN_MARK_IGNORED_MASK and FAN_MARK_IGNORE, across
// every group class, plus the API rules of ignore masks and evictable marks.
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	// An actor (this binary re-executed) never gets here: the harness's
	// init serves it and exits, so the matrix is built only in the test
	// process.
	cases := append(matrixCases(), handCases...)
	harness.Main(harness.Suite{
		Name:        "fanotify_ignore",
		Doc:         "ignore masks merged with inode/parent/mount/filesystem marks; ignore-mask API rules",
		Needs:       []*feature.Feature{feature.Fanotify},
		Filesystems: []string{"tmpfs", "ext4"},
		Cases:       cases,
		Rules:       specRules(cases),
	})
}
