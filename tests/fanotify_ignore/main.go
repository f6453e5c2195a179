// Command fanotify_ignore checks how fanotify ignore masks merge with the
// marks that would report an event: inode, parent directory, mount and
// filesystem marks, legacy FAN_MARK_IGNORED_MASK and FAN_MARK_IGNORE, across
// every group class, plus the API rules of ignore masks and evictable marks.
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	// An actor is this binary re-executed (harness/actor); it serves file
	// operations and needs no case table, so it does not build one: building
	// the matrix runs the rule function for every case and would slow each
	// of the hundreds of actor starts.
	var cases []harness.Case
	if !actor.IsActor() {
		cases = append(matrixCases(), handCases...)
	}
	harness.Main(harness.Suite{
		Name:        "fanotify_ignore",
		Doc:         "ignore masks merged with inode/parent/mount/filesystem marks; ignore-mask API rules",
		Needs:       []*feature.Feature{feature.Fanotify},
		Filesystems: []string{"tmpfs", "ext4"},
		Cases:       cases,
	})
}
