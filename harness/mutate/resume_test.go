package mutate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func resumeMutants() []Mutant {
	return []Mutant{
		{ID: "aaaaaaaaaa", File: "fs/notify/a.c", Diff: "-a\n+b\n"},
		{ID: "bbbbbbbbbb", File: "fs/notify/a.c", Diff: "-c\n+d\n"},
		{ID: "cccccccccc", File: "fs/notify/a.c", Diff: "-e\n+f\n"},
	}
}

// TestResumable keeps an interrupted run's results only when they are a
// prefix of this selection, of the same selection and suite build.
func TestResumable(t *testing.T) {
	ms := resumeMutants()
	cur := &Report{KSRC: "/k", N: 0, Seed: 1, Shard: "2/4", Generated: 12, SuiteBuild: "0123456789ab", RunnerBuild: "ba9876543210",
		Inputs: map[string]string{"coverage": "none", "vm_mem": "2048"}}
	prior := *cur
	prior.Results = []Result{{Mutant: ms[0], Outcome: Killed}, {Mutant: ms[1], Outcome: Survived}}

	kept, warnings, err := Resumable(&prior, cur, ms, false)
	assert.NilError(t, err)
	assert.Equal(t, len(kept), 2)
	assert.Equal(t, len(warnings), 0)
	assert.Equal(t, kept[1].Outcome, Survived)

	// Builds or inputs that differ or were not recorded: refused, unless
	// forced, and then each is named.
	for name, change := range map[string]func(r *Report){
		"another suite build":    func(r *Report) { r.SuiteBuild = "ffffffffffff" },
		"no suite build":         func(r *Report) { r.SuiteBuild = "" },
		"another runner build":   func(r *Report) { r.RunnerBuild = "ffffffffffff" },
		"other coverage data":    func(r *Report) { r.Inputs = map[string]string{"coverage": "0123abcd0123", "vm_mem": "2048"} },
		"an input not recorded":  func(r *Report) { r.Inputs = map[string]string{"coverage": "none"} },
		"no inputs (an old run)": func(r *Report) { r.Inputs = nil },
	} {
		p := prior
		change(&p)
		_, _, err := Resumable(&p, cur, ms, false)
		assert.ErrorContains(t, err, "-resume-force", name)
		kept, warnings, err := Resumable(&p, cur, ms, true)
		assert.NilError(t, err, name)
		assert.Equal(t, len(kept), 2, name)
		assert.Equal(t, len(warnings), 1, "%s: %v", name, warnings)
	}

	for name, change := range map[string]func(r *Report){
		"another shard":     func(r *Report) { r.Shard = "1/4" },
		"another seed":      func(r *Report) { r.Seed = 2 },
		"another file list": func(r *Report) { r.Files = []string{"fs/notify/mark.c"} },
		"not a prefix":      func(r *Report) { r.Results = []Result{{Mutant: ms[1]}} },
		"a changed diff": func(r *Report) {
			m := ms[0]
			m.Diff = "-a\n+z\n"
			r.Results = []Result{{Mutant: m}}
		},
		"more than the selection": func(r *Report) {
			r.Results = []Result{{Mutant: ms[0]}, {Mutant: ms[1]}, {Mutant: ms[2]}, {Mutant: ms[2]}}
		},
	} {
		p := prior
		change(&p)
		_, _, err := Resumable(&p, cur, ms, true)
		assert.ErrorContains(t, err, "resume:", name)
	}
}

// TestSameBaseline: kept verdicts stand only against the same leaves and
// the same failing ones.
func TestSameBaseline(t *testing.T) {
	a := &Baseline{Leaves: 10, Failing: []string{"x", "y"}}
	assert.Equal(t, SameBaseline(a, &Baseline{Leaves: 10, Failing: []string{"y", "x"}}), "")
	assert.Assert(t, strings.Contains(SameBaseline(a, &Baseline{Leaves: 11, Failing: []string{"x", "y"}}), "11 leaves"))
	assert.Assert(t, strings.Contains(SameBaseline(a, &Baseline{Leaves: 10, Failing: []string{"x"}}), "fails"))
	assert.Assert(t, SameBaseline(nil, a) != "")
	d := &Baseline{Leaves: 10, Failing: []string{"x", "y"}, LeafDigest: "aaaaaaaaaaaa"}
	e := &Baseline{Leaves: 10, Failing: []string{"x", "y"}, LeafDigest: "bbbbbbbbbbbb"}
	assert.Assert(t, strings.Contains(SameBaseline(d, e), "other leaves"))
	assert.Equal(t, SameBaseline(a, e), "", "a prior baseline without a digest is compared by count")
}

// TestSuiteBuild digests the test binaries, not the runner beside them.
func TestSuiteBuild(t *testing.T) {
	dir := t.TempDir()
	runner := filepath.Join(dir, "fsnsuite")
	assert.NilError(t, os.WriteFile(runner, []byte("driver 1"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "inotify_basic"), []byte("test 1"), 0o755))
	a, err := SuiteBuild(runner)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(runner, []byte("driver 2"), 0o755))
	b, err := SuiteBuild(runner)
	assert.NilError(t, err)
	assert.Equal(t, a, b, "a change to the runner changed the suite build")
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "inotify_basic"), []byte("test 2"), 0o755))
	c, err := SuiteBuild(runner)
	assert.NilError(t, err)
	assert.Assert(t, c != a, "a change to a test binary did not change the suite build")
	// Through a symlink to the runner (an installed fsnsuite): the same.
	link := filepath.Join(t.TempDir(), "fsnsuite")
	assert.NilError(t, os.Symlink(runner, link))
	l, err := SuiteBuild(link)
	assert.NilError(t, err)
	assert.Equal(t, l, c)
	r1, err := RunnerBuild(runner)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(runner, []byte("driver 3"), 0o755))
	r2, err := RunnerBuild(runner)
	assert.NilError(t, err)
	assert.Assert(t, r1 != r2, "a change to the runner did not change the runner build")
}

// TestRunResume runs the fake pipeline twice: the second run keeps the
// first's verdicts for a prefix, does not run those mutants again (their
// directories are untouched) and runs the rest; a baseline that differs
// from the kept verdicts' stops it.
func TestRunResume(t *testing.T) {
	w := newFakeWorld(t, fakeSuite, body("\tif (x)", "\t\treturn -EINVAL;", "\treturn 0;"))
	t.Setenv("FAKE_NOWAIT", "1")
	ms := Generate(w.rel, w.orig, nil)
	assert.Assert(t, len(ms) >= 3, "want 3 mutants, have %d", len(ms))
	cfg := w.config()
	base, first, err := Run(context.Background(), cfg, ms, nil)
	assert.NilError(t, err)

	// The kept mutant's directory gets a marker a rerun would remove.
	keep := 2
	marker := filepath.Join(cfg.Results, first[0].ID, "kept")
	assert.NilError(t, os.WriteFile(marker, nil, 0o644))
	again := *cfg
	again.Prior, again.PriorBaseline = first[:keep], base
	_, second, err := Run(context.Background(), &again, ms, nil)
	assert.NilError(t, err)
	assert.Equal(t, len(second), len(ms))
	for i := range ms {
		assert.Equal(t, second[i].ID, first[i].ID)
		assert.Equal(t, second[i].Outcome, first[i].Outcome, "%s", second[i].ID)
	}
	_, err = os.Stat(marker)
	assert.NilError(t, err, "a kept mutant was run again")

	other := *base
	other.Leaves++
	again.PriorBaseline = &other
	_, _, err = Run(context.Background(), &again, ms, nil)
	assert.ErrorContains(t, err, "cannot resume")
}
