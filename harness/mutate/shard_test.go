package mutate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func TestParseShard(t *testing.T) {
	s, err := ParseShard("2/4")
	assert.NilError(t, err)
	assert.Equal(t, s, Shard{K: 2, N: 4})
	assert.Equal(t, s.String(), "2/4")
	for _, bad := range []string{"", "2", "0/4", "5/4", "1/0", "a/4", "1/b", "-1/4"} {
		_, err := ParseShard(bad)
		assert.Assert(t, err != nil, "ParseShard(%q) accepted", bad)
	}
}

// The N shards partition the list: every mutant in exactly one shard, sizes
// within one of each other, each shard in the list's order.
func TestShardsPartition(t *testing.T) {
	var ms []Mutant
	for i := range 23 {
		ms = append(ms, Mutant{ID: fmt.Sprintf("m%02d", i)})
	}
	for n := 1; n <= 6; n++ {
		seen := map[string]int{}
		minSize, maxSize := len(ms), 0
		for k := 1; k <= n; k++ {
			part := Shard{K: k, N: n}.Pick(ms)
			minSize, maxSize = min(minSize, len(part)), max(maxSize, len(part))
			for i, m := range part {
				seen[m.ID]++
				if i > 0 {
					assert.Assert(t, part[i-1].ID < m.ID, "shard %d/%d out of the list's order", k, n)
				}
			}
		}
		assert.Equal(t, len(seen), len(ms), "N=%d: not every mutant is in a shard", n)
		for id, c := range seen {
			assert.Equal(t, c, 1, "N=%d: %s is in %d shards", n, id, c)
		}
		assert.Assert(t, maxSize-minSize <= 1, "N=%d: shard sizes %d..%d", n, minSize, maxSize)
	}
}

func TestMergeRefusals(t *testing.T) {
	rep := func(shard string, ids ...string) *Report {
		r := &Report{KSRC: "k", Seed: 1, N: 0, Generated: 4, Shard: shard, Complete: true}
		for _, id := range ids {
			r.Results = append(r.Results, Result{Mutant: Mutant{ID: id}, Outcome: Killed})
		}
		return r
	}
	_, err := Merge([]*Report{rep("1/2", "a"), rep("1/2", "b")}, false)
	assert.ErrorContains(t, err, "given twice")
	_, err = Merge([]*Report{rep("1/2", "a")}, false)
	assert.ErrorContains(t, err, "missing 2/2")
	m, err := Merge([]*Report{rep("1/2", "a")}, true)
	assert.NilError(t, err)
	assert.Assert(t, !m.Complete, "a merge with a shard missing is complete")
	other := rep("2/2", "b")
	other.Seed = 2
	_, err = Merge([]*Report{rep("1/2", "a"), other}, false)
	assert.ErrorContains(t, err, "not of the same run")
	_, err = Merge([]*Report{rep("1/2", "a"), rep("2/2", "a")}, false)
	assert.ErrorContains(t, err, "more than one shard")
	_, err = Merge([]*Report{rep("", "a")}, false)
	assert.ErrorContains(t, err, "not a shard's")
	_, err = Merge([]*Report{rep("1/2", "a"), rep("2/3", "b")}, false)
	assert.ErrorContains(t, err, "partition")
}

// Shards run one after another with the fake make and suite, merged, give
// the unsharded run's report: the same mutants in the same order, the same
// outcomes, the same scores per file and per function.
func TestMergedShardsEqualUnsharded(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	assert.NilError(t, os.MkdirAll(bin, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "make"), []byte(fakeMake), 0o755))
	suite := filepath.Join(bin, "fsnsuite")
	assert.NilError(t, os.WriteFile(suite, []byte(fakeSuite), 0o755))
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("FAKE_LOG", filepath.Join(root, "fake.log"))
	t.Setenv("FAKE_NOWAIT", "1") // overlap is TestRunOverlapped's business

	rel := "fs/notify/a.c"
	orig := body("\tif (x)", "\t\treturn -EINVAL;", "\treturn 0;")
	ms := Generate(rel, orig, nil)
	assert.Assert(t, len(ms) >= 3, "only %d mutants", len(ms))

	run := func(name string, part []Mutant, shard string) *Report {
		ksrc, src := filepath.Join(root, name, "ksrc"), filepath.Join(root, name, "dir", "src")
		for _, d := range []string{ksrc, src} {
			assert.NilError(t, os.MkdirAll(filepath.Join(d, "fs/notify"), 0o755))
			assert.NilError(t, os.WriteFile(filepath.Join(d, rel), []byte(orig), 0o644))
		}
		cfg := &Config{KSRC: ksrc, Src: src, Build: filepath.Join(root, name, "dir", "build"), Suite: suite,
			Results: filepath.Join(root, name, "results"), Jobs: 1, NoStages: true}
		bl, rs, err := Run(context.Background(), cfg, part, func(*Baseline, []Result) error { return nil })
		assert.NilError(t, err)
		return &Report{KSRC: "ksrc", Seed: 1, Generated: len(ms), ByOp: map[string]int{}, NeverRan: -1,
			Baseline: bl, Results: rs, Complete: true, Shard: shard}
	}
	whole := run("whole", ms, "")
	var shards []*Report
	for k := 1; k <= 2; k++ {
		s := Shard{K: k, N: 2}
		shards = append(shards, run(fmt.Sprintf("shard%d", k), s.Pick(ms), s.String()))
	}
	// Given in any order.
	merged, err := Merge([]*Report{shards[1], shards[0]}, false)
	assert.NilError(t, err)
	assert.Assert(t, merged.Complete)
	assert.Equal(t, len(merged.Results), len(whole.Results))
	for i := range whole.Results {
		w, m := whole.Results[i], merged.Results[i]
		assert.Equal(t, m.ID, w.ID, "result %d", i)
		assert.Equal(t, m.Outcome, w.Outcome, "%s", w.ID)
	}
	wt, wf, wfn := whole.Scores()
	mt, mf, mfn := merged.Scores()
	assert.Equal(t, mt, wt)
	assert.Equal(t, len(mf), len(wf))
	for k, v := range wf {
		assert.Equal(t, *mf[k], *v, k)
	}
	assert.Equal(t, len(mfn), len(wfn))
	for k, v := range wfn {
		assert.Equal(t, *mfn[k], *v, k)
	}
	var b strings.Builder
	assert.NilError(t, merged.WriteText(&b))
	assert.Assert(t, strings.Contains(b.String(), "Merged from shards 1/2, 2/2."), b.String())
}
