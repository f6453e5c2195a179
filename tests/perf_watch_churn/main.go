// Command perf_watch_churn measures concurrent inotify watch add/remove (seed 001,
// "[REGRESSION] fsnotify: concurrent inotify watch add/remove slows after
// 94bd01253c3d"): P workers each add and remove one watch on their share of 96
// instance/inode pairs; the distinct-inode side creates and destroys an inode
// connector per watch, the shared-inode control (96 hard links to one inode, a
// keeper watch holding its connector) does not. Metric: aggregate worker
// ns/watch (the sum of the workers' times over 96) and the distinct/shared ratio,
// measured side by side. With -baseline the ratio is compared with a saved run
// under the seed's pre-registered 5% threshold and its 15% CV variability gate.
package main

import (
	"fmt"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/perf"
)

const suiteName = "perf_watch_churn"

func main() {
	harness.Main(harness.Suite{
		Name:    suiteName,
		Timeout: perf.CaseTimeout,
		Flags:   perf.Flags.Register,
		Doc:     "P workers add/remove inotify watches on 96 instance/inode pairs: distinct inodes vs the shared-inode control",
		Needs:   []*feature.Feature{feature.Inotify},
		// tmpfs only (no suffix): the seed's filesystem; connector handling is
		// filesystem-independent (fs/notify/mark.c).
		Filesystems: nil,
		CaseFunc:    cases,
	})
}

// workerCounts: quick 1 and 2 (this machine's CPUs: no oversubscription), full
// the seed's P1, P4, P6, P8 (oversubscribed where CPUs are fewer).
func workerCounts() []int {
	if perf.FullProfile() {
		return []int{1, 2, 4, 6, 8}
	}
	return []int{1, 2}
}

func cases() []harness.Case {
	var out []harness.Case
	for _, p := range workerCounts() {
		out = append(out, harness.Case{
			Name: fmt.Sprintf("churn_p%d", p),
			Doc: fmt.Sprintf("%d worker(s): aggregate ns/watch on distinct inodes against the shared-inode control "+
				"(reported; -baseline gates its change between kernels)", p),
			Run: func(t *harness.T) { runChurn(t, p) },
		})
	}
	return out
}
