// Command fanotify_api checks the fanotify system-call interface around the
// events: fanotify_init(2) flag validation, fanotify_mark(2) errors (bad
// descriptors, ONLYDIR on a descriptor, read permission, unprivileged
// groups), removing mount and filesystem marks, FIONREAD, short reads, a
// permission-event waiter killed while its event is pending, and which
// queued events merge (fs/notify/fanotify/fanotify.c fanotify_should_merge).
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

func main() {
	harness.Main(harness.Suite{
		Name:        "fanotify_api",
		Doc:         "fanotify_init/fanotify_mark errnos, mark removal, FIONREAD, short reads, killed permission waiters, event merging",
		Needs:       []*feature.Feature{feature.Fanotify},
		Filesystems: []string{"tmpfs", "ext4"},
		Cases:       append(append(append(append([]harness.Case(nil), apiCases...), queueCases...), mergeCases...), append(append(append(append(copyErrCases, hsmCases...), fsidCases...), umountCases...), specCases...)...),
		Rules:       specRules,
		Roles:       map[string]func([]string) int{roleReadAtFdLimit: readAtFdLimitChild},
	})
}
