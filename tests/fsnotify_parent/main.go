// Command fsnotify_parent pins down when an event on a child reaches a
// watching parent directory, with which name, and when it must not: the
// semantics that fs/notify's DCACHE_FSNOTIFY_PARENT_WATCHED dentry flag
// (set by fsnotify_set_children_dentry_flags and fsnotify_update_flags, read
// by fsnotify_parent/__fsnotify_parent) implements, so that a patch replacing
// that flag can be checked against them. Every case runs for inotify and for
// fanotify (suffix .inotify / .fanotify) unless the API has no such thing.
//
// Replay: the race cases print their seed; FSNOTIFY_PARENT_SEED=<seed>
// replays the same operation sequence (not the same interleaving).
package main

import (
	"strings"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	harness.Main(harness.Suite{
		Name:        "fsnotify_parent",
		Doc:         "parent/child event delivery: which child events reach a watching parent, with which name, and when not",
		Filesystems: []string{"tmpfs", "ext4"},
		Cases:       allCases(),
		Rules:       specRules,
		Roles:       map[string]func([]string) int{roleByHandle: byHandleMain},
	})
}

func allCases() []harness.Case {
	var cs []harness.Case
	for _, group := range [][]harness.Case{childCases, renameCases, maskCases, dirCases, specialCases, unlinkCases, permCases, raceCases, specCases} {
		cs = append(cs, group...)
	}
	// Requirements belong to cases: an .inotify case needs inotify only,
	// a .fanotify case fanotify only (so one API's absence does not skip
	// the other's cases); a case without the suffix uses fanotify.
	for i := range cs {
		api := feature.Fanotify
		if strings.HasSuffix(cs[i].Name, ".inotify") {
			api = feature.Inotify
		}
		cs[i].Needs = append([]*feature.Feature{api}, cs[i].Needs...)
	}
	return cs
}
