// Command fsnotify_limits checks the per-user fsnotify limits: how many
// inotify instances and watches, fanotify groups and marks a user may hold,
// and the exact errno past each limit; and that inotify_init1 and
// fanotify_init are EMFILE when the process has no descriptor left under
// RLIMIT_NOFILE (fd_table_full, fdtable.go).
//
// The limits are per user and per user namespace (kernel/ucount.c): the
// fs.inotify.max_user_* and fs.fanotify.max_user_* sysctls are the initial
// namespace's, and every other user namespace has its own in /proc/sys/user/
// (max_inotify_instances, max_inotify_watches, max_fanotify_groups,
// max_fanotify_marks), checked by the same inc_ucount call on the way up the
// namespace chain. Each case runs a child of this binary in a new user
// namespace, created by an otherwise unused uid (userns.go) so that no other
// program holds any of these objects at any level of the chain, and lowers
// the child namespace's limit only: the count starts at zero, the expected
// number is exact, and no machine-wide setting changes while other suites run.
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	harness.Main(harness.Suite{
		Name:        "fsnotify_limits",
		Doc:         "per-user inotify instance/watch and fanotify group/mark limits: the exact count and errno",
		Needs:       []*feature.Feature{feature.Inotify},
		Filesystems: []string{},
		Cases:       append(append(append(cases, memCases()...), memcgReleaseCase, pidReleaseCase, allocFailureCase), specCases...),
		Rules:       specRules,
		Roles:       map[string]func([]string) int{roleChild: runChild, roleCreator: runCreator, roleFdTable: func([]string) int { return runFdTableChild() }, roleMemcg: runMemcgChild, roleMemcgGroups: runMemcgGroups, roleAllocFailure: runAllocFailure, rolePidnsHolder: runPidnsHolder, rolePidnsOpener: runPidnsOpener},
	})
}
