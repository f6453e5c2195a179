package mutate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shard is one part of a deterministic partition of a mutant list: the K-th
// of N (1-based), so that N machines each run one shard and the reports are
// merged (Merge) into the report one machine would have written.
type Shard struct{ K, N int }

// ParseShard reads "K/N" (1 <= K <= N).
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want K/N, e.g. 2/4", s)
	}
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil || ni < 1 || ki < 1 || ki > ni {
		return Shard{}, fmt.Errorf("shard %q: want K/N with 1 <= K <= N", s)
	}
	return Shard{K: ki, N: ni}, nil
}

// String is "K/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// Pick returns the mutants of ms at positions K-1, K-1+N, K-1+2N, ...: every
// mutant of ms is in exactly one of the N shards, the shards' sizes differ by
// at most one, and a shard keeps the list's order (a sample's order, so a
// shard cut short has run a prefix of its part).
func (s Shard) Pick(ms []Mutant) []Mutant {
	var out []Mutant
	for i := s.K - 1; i < len(ms); i += s.N {
		out = append(out, ms[i])
	}
	return out
}

// Merge joins the reports of the N shards of one run (the same source, base,
// sample and equivalents, each shard once) into one report: its results in
// the order the unsharded run would have listed them, its scores those of
// that run. The baseline is the first shard's (each machine ran its own;
// their leaf counts must agree). A missing or incomplete shard is an error
// unless allowPartial, and then the merged report is not Complete.
func Merge(reps []*Report, allowPartial bool) (*Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("merge: no report")
	}
	byK := map[int]*Report{}
	n := 0
	// The first suite build a shard recorded (older reports have none).
	var suite struct{ build, shard string }
	for i, r := range reps {
		if r.Shard == "" {
			return nil, fmt.Errorf("merge: report %d is not a shard's (no \"shard\" field)", i+1)
		}
		s, err := ParseShard(r.Shard)
		if err != nil {
			return nil, fmt.Errorf("merge: report %d: %w", i+1, err)
		}
		if n == 0 {
			n = s.N
		}
		if s.N != n {
			return nil, fmt.Errorf("merge: shard %s is of a %d-way partition, the first of a %d-way one", r.Shard, s.N, n)
		}
		if byK[s.K] != nil {
			return nil, fmt.Errorf("merge: shard %s given twice", r.Shard)
		}
		first := reps[0]
		if r.KSRC != first.KSRC || r.Base != first.Base || r.Seed != first.Seed || r.N != first.N ||
			!slices.Equal(r.IDs, first.IDs) || !slices.Equal(r.Files, first.Files) || r.Generated != first.Generated || r.Equivalent != first.Equivalent {
			return nil, fmt.Errorf("merge: shard %s is not of the same run as shard %s (source, base, sample, ids or equivalents differ)", r.Shard, first.Shard)
		}
		if r.Baseline != nil && first.Baseline != nil && r.Baseline.Leaves != first.Baseline.Leaves {
			return nil, fmt.Errorf("merge: shard %s's unmutated kernel ran %d leaves, shard %s's %d: not the same suite", r.Shard, r.Baseline.Leaves, first.Shard, first.Baseline.Leaves)
		}
		if r.SuiteBuild != "" {
			if suite.build != "" && r.SuiteBuild != suite.build {
				return nil, fmt.Errorf("merge: shard %s was judged by suite build %s, shard %s by %s: not the same suite", r.Shard, r.SuiteBuild, suite.shard, suite.build)
			}
			suite.build, suite.shard = r.SuiteBuild, r.Shard
		}
		byK[s.K] = r
	}
	out := *reps[0]
	out.Shard = ""
	out.Results = nil
	out.Complete = true
	out.Resumed = 0
	out.SuiteBuild = suite.build
	out.RunnerBuild, out.Inputs = "", nil // each shard's own
	var missing []string
	for k := 1; k <= n; k++ {
		r := byK[k]
		if r == nil {
			missing = append(missing, Shard{K: k, N: n}.String())
			out.Complete = false
			continue
		}
		out.Merged = append(out.Merged, r.Shard)
		out.Resumed += r.Resumed
		out.FirstKill = out.FirstKill || r.FirstKill
		if !r.Complete {
			out.Complete = false
			missing = append(missing, r.Shard+" (incomplete)")
		}
		if out.Baseline == nil {
			out.Baseline = r.Baseline
		}
	}
	if len(missing) > 0 && !allowPartial {
		return nil, fmt.Errorf("merge: missing %s of %d shards", strings.Join(missing, ", "), n)
	}
	// Interleave: the unsharded list's i-th mutant is shard (i mod n)+1's
	// (i div n)-th. A shard cut short leaves its later positions empty.
	seen := map[string]bool{}
	for i := 0; ; i++ {
		any := false
		for k := 1; k <= n; k++ {
			r := byK[k]
			if r == nil || i >= len(r.Results) {
				continue
			}
			any = true
			res := r.Results[i]
			if seen[res.ID] {
				return nil, fmt.Errorf("merge: mutant %s is in more than one shard", res.ID)
			}
			seen[res.ID] = true
			out.Results = append(out.Results, res)
		}
		if !any {
			break
		}
	}
	return &out, nil
}

// OnlyFiles keeps the mutants of the given source files (paths relative to
// the kernel tree, e.g. fs/notify/fsnotify.c). A file that has no mutant is
// an error: a typo must not make an empty run.
func OnlyFiles(ms []Mutant, files []string) ([]Mutant, error) {
	want := map[string]bool{}
	for _, f := range files {
		want[strings.TrimPrefix(strings.TrimSpace(f), "./")] = false
	}
	var out []Mutant
	for _, m := range ms {
		if _, ok := want[m.File]; ok {
			want[m.File] = true
			out = append(out, m)
		}
	}
	var none []string
	for f, seen := range want {
		if !seen {
			none = append(none, f)
		}
	}
	if len(none) > 0 {
		slices.Sort(none)
		return nil, fmt.Errorf("no mutant in %s (paths are relative to the kernel tree, e.g. fs/notify/fsnotify.c)", strings.Join(none, ", "))
	}
	return out, nil
}
