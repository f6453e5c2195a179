// Command fanotify_perm validates fanotify permission events end to end:
// FAN_OPEN_PERM, FAN_ACCESS_PERM, FAN_OPEN_EXEC_PERM and FAN_PRE_ACCESS are
// read by the listener while another process (the actor) is blocked in the
// syscall, checked (mask, pid, the event fd refers to the same file), and
// answered; the actor's call must then succeed or fail with exactly the errno
// the answer asked for. It also covers the response protocol (validation,
// FAN_DENY_ERRNO, FAN_AUDIT), a listener that closes or dies with events
// pending, several groups of different classes, ignore masks, a
// non-blocking, slow listener, and the events of one execve(2) (every
// combination of FAN_OPEN_EXEC_PERM, FAN_OPEN_PERM, FAN_OPEN_EXEC and
// FAN_OPEN, in one group and across groups, each permission event allowed
// and denied: cases_exec.go).
//
// Where fanotify_init(FAN_CLASS_CONTENT) is refused with EPERM (a container,
// a user namespace, lockdown) every case skips with the errno and the hint to
// run as real root; -strict turns those skips into failures, so "FAN_OPEN_PERM
// unvalidated" cannot pass silently.
//
// Rule every case follows: the case directory and the actors are made before
// any group, so the harness's cleanup (LIFO) closes the groups before it
// removes the directory, and the test process never touches a marked object
// while a group can still ask it for permission.
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	harness.Main(harness.Suite{
		Name:        "fanotify_perm",
		Doc:         "fanotify permission events: answered, denied, abandoned (fanotify(7), fanotify_init(2), fanotify_mark(2))",
		Needs:       []*feature.Feature{feature.FanotifyPerm},
		Filesystems: []string{"tmpfs", "ext4"},
		Cases:       allCases(),
		Rules:       specRules(),
		Flags:       flags,
		CaseFunc:    findingCases,
	})
}

func allCases() []harness.Case {
	var cs []harness.Case
	cs = append(cs, verdictCases()...)
	cs = append(cs, responseCases...)
	cs = append(cs, listenerCases...)
	cs = append(cs, releaseCases...)
	cs = append(cs, groupCases...)
	cs = append(cs, ignoreCases...)
	cs = append(cs, preContentCases...)
	cs = append(cs, execMaskCases()...)
	cs = append(cs, execGroupCases...)
	cs = append(cs, specCases...)
	return cs
}
