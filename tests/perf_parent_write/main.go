// Command perf_parent_write measures what a watch costs one-byte writes to the
// children of a tmpfs directory as the number of writing clients grows: Jan
// Kara's workload from the "Check parent watches without child dentry flags"
// thread (seeds 000 and 003), gated on ratios measured side by side.
package main

import (
	"fmt"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/perf"
)

func main() {
	harness.Main(harness.Suite{
		Name:    suiteName,
		Timeout: perf.CaseTimeout,
		Flags:   perf.Flags.Register,
		Doc:     "one-byte pwrite scaling under none / other / watch: other/none, shared/private parent gates",
		Needs:   []*feature.Feature{feature.Inotify},
		// tmpfs only (no suffix): the seed workload is defined on tmpfs (/dev/shm), where
		// a 1-byte pwrite is cheap enough for the fsnotify hooks to show.
		Filesystems: nil,
		CaseFunc:    cases,
	})
}

const suiteName = "perf_parent_write"

// clientCounts returns the N of the profile: quick 1, 2, 4; full the seed
// script's 1..1024.
func clientCounts() []int {
	if perf.FullProfile() {
		return []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
	}
	return []int{1, 2, 4}
}

// cases builds the table once the harness has parsed the flags (Suite.CaseFunc),
// so the profile that decides the N is known.
func cases() []harness.Case {
	var out []harness.Case
	for _, n := range clientCounts() {
		n := n
		out = append(out, harness.Case{
			Name: fmt.Sprintf("other_none_n%d", n),
			Doc: fmt.Sprintf("%d client(s): a watch on another directory of the filesystem costs the writes <= %.0f%% "+
				"(fsnotify_parent and __fsnotify_parent skip the parent unless DCACHE_FSNOTIFY_PARENT_WATCHED)", n, 100*(maxOtherNone-1)),
			Run: func(t *harness.T) { runOtherNone(t, n) },
		})
		if n >= 2 {
			out = append(out, harness.Case{
				Name: fmt.Sprintf("shared_private_n%d", n),
				Doc: fmt.Sprintf("%d clients, other-directory watch present: files in one shared directory cost <= %.0f%% "+
					"more than one directory per client (no parent cacheline is touched on the write path)", n, 100*(maxSharedPrivate-1)),
				Run: func(t *harness.T) { runSharedPrivate(t, n) },
			})
		}
		if n >= 2 && perf.Sharing() {
			// Only in the sharing profile, whose control it is (harness/sharing):
			// elsewhere it would be a skip, a failure under -strict.
			out = append(out, harness.Case{
				Name: fmt.Sprintf("samefile_private_n%d", n),
				Doc: fmt.Sprintf("%d clients: the sharing profile's control, one file written by every client against one "+
					"file each in its own directory (reported here; judged by the host's sharing.txt)", n),
				Run: func(t *harness.T) { runSameFilePrivate(t, n) },
			})
		}
		out = append(out, harness.Case{
			Name: fmt.Sprintf("watch_none_n%d", n),
			Doc: fmt.Sprintf("%d client(s): IN_MODIFY watch on the directory with a draining listener; ratio reported, "+
				"no IN_Q_OVERFLOW allowed, IN_IGNORED exactly once per inotify_rm_watch (inotify(7))", n),
			Run: func(t *harness.T) { runWatchNone(t, n) },
		})
	}
	return out
}
