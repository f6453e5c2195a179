// Command perf_watch_add measures inotify_add_watch() on directories with many
// cached children (seed 004, "fsnotify: Check parent watches without child dentry
// flags"): the first mark of a directory that asks for events on children walks
// every cached child dentry to set DCACHE_FSNOTIFY_PARENT_WATCHED
// (fs/notify/mark.c fsnotify_recalc_mask -> fs/notify/fsnotify.c
// fsnotify_set_children_dentry_flags), a mark without child events does not.
//
// In-run guards are on ratios measured side by side: the per-child cost of that
// walk against the per-child cost of reading the same directory, and the growth
// of the walk's per-child cost from 10k to 100k children (linear, not quadratic). The
// real verdict on a patch comes with -baseline: the child/plain latency ratio of
// each size is compared with the saved run (a patch that removes the walk shows
// there as a change of about -99%).
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/perf"
)

const suiteName = "perf_watch_add"

func main() {
	harness.Main(harness.Suite{
		Name:    suiteName,
		Timeout: perf.CaseTimeout,
		Flags:   perf.Flags.Register,
		Doc:     "inotify_add_watch latency with a child-event mask vs a plain mask over 0/10k/100k(/1M) cached children",
		Needs:   []*feature.Feature{feature.Inotify},
		// tmpfs only (no suffix): tmpfs keeps every dentry of a live file cached, so
		// "cached children" is exact there; the walk itself is filesystem-independent.
		Filesystems: nil,
		CaseFunc:    cases,
	})
}

func cases() []harness.Case {
	out := []harness.Case{
		{
			Name: "add_empty_dir",
			Doc: "on an empty directory a child-event watch (IN_MODIFY) costs what a plain watch (IN_DELETE_SELF) " +
				"costs, <= 1.25x (the walk has no child to visit)",
			Run: runEmpty,
		},
		{
			Name: "add_cached_10k",
			Doc: "10k cached children: child-event watch add latency reported against a plain watch; the walk costs " +
				"less per child than readdir of the directory",
			Run: func(t *harness.T) { runCached(t, 10_000, 0) },
		},
		{
			Name: "add_cached_100k",
			Doc: "100k cached children: as 10k, and the walk's per-child cost grows < 8x from 10k to 100k " +
				"children: linear (cache step only), not quadratic (10x)",
			Run: func(t *harness.T) { runCached(t, 100_000, 10_000) },
		},
		{
			Name: "add_mutators_100k",
			Doc: "100k cached children with a concurrent unlink/recreate worker timing its own operations: " +
				"add latency and worker max latency reported (seed 004's mutation workers)",
			Run: runMutators,
		},
	}
	if perf.FullProfile() {
		out = append(out, harness.Case{
			Name: "add_cached_1m",
			Doc:  "1M cached children: as 100k, growth checked against 100k",
			Run:  func(t *harness.T) { runCached(t, 1_000_000, 100_000) },
		})
	}
	return out
}
