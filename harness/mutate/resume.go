package mutate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/runner"
)

// Resumable returns the results of prior, the report an interrupted run left
// in the results directory, that a run of cur's selection (ms, in its order)
// can keep: the run records mutants in the order of ms, so an interrupted
// run's results are a prefix of ms, each mutant's diff unchanged.
//
// A prior report of another selection (source tree path, base, sample, ids,
// shard, files, equivalents count) or whose results are not such a prefix
// is an error. So is one whose test binaries (SuiteBuild), runner
// (RunnerBuild) or other inputs (Inputs: coverage data, runner flags, VM
// settings, fs/notify's sources, the kernel configuration, the
// equivalents) differ from cur's or were not recorded, unless force: then
// each such difference is returned as a warning (the caller checked that
// they judge alike).
func Resumable(prior, cur *Report, ms []Mutant, force bool) (kept []Result, warnings []string, err error) {
	if prior.KSRC != cur.KSRC || prior.Base != cur.Base || prior.Seed != cur.Seed || prior.N != cur.N ||
		!slices.Equal(prior.IDs, cur.IDs) || prior.Shard != cur.Shard || !slices.Equal(prior.Files, cur.Files) ||
		prior.Generated != cur.Generated || prior.Equivalent != cur.Equivalent {
		return nil, nil, fmt.Errorf("mutate: resume: the results directory holds another run (source, base, sample, ids, shard, files or equivalents differ)")
	}
	if len(prior.Results) > len(ms) {
		return nil, nil, fmt.Errorf("mutate: resume: the interrupted run decided %d mutants, this selection has %d", len(prior.Results), len(ms))
	}
	for i, r := range prior.Results {
		switch {
		case r.ID != ms[i].ID:
			return nil, nil, fmt.Errorf("mutate: resume: the interrupted run's mutant %d is %s, this selection's is %s", i+1, r.ID, ms[i].ID)
		case r.Diff != ms[i].Diff:
			return nil, nil, fmt.Errorf("mutate: resume: mutant %d (%s) has another diff than in the interrupted run", i+1, r.ID)
		}
	}
	var diffs []string
	for _, b := range []struct{ name, was, is string }{
		{"suite_build (the test binaries)", prior.SuiteBuild, cur.SuiteBuild},
		{"runner_build (the runner and judge)", prior.RunnerBuild, cur.RunnerBuild},
	} {
		switch {
		case b.was == "":
			diffs = append(diffs, b.name+" was not recorded")
		case b.was != b.is:
			diffs = append(diffs, fmt.Sprintf("%s was %s, is %s", b.name, b.was, b.is))
		}
	}
	if prior.Inputs == nil {
		diffs = append(diffs, "inputs were not recorded")
	} else {
		keys := maps.Clone(prior.Inputs)
		maps.Copy(keys, cur.Inputs)
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if prior.Inputs[k] != cur.Inputs[k] {
				diffs = append(diffs, fmt.Sprintf("input %s was %q, is %q", k, prior.Inputs[k], cur.Inputs[k]))
			}
		}
	}
	if len(diffs) > 0 && !force {
		return nil, nil, fmt.Errorf("mutate: resume: %s; its verdicts may not be this run's (-resume-force keeps them anyway, once you have checked that they judge alike)", strings.Join(diffs, "; "))
	}
	return prior.Results, diffs, nil
}

// SameBaseline says why the baseline b differs from the interrupted run's
// (prior), "" when it does not: the same leaves (their LeafDigest when
// both recorded it, else their count) and the same failing ones. Kept
// verdicts were judged against prior; they stand only if b is it.
func SameBaseline(prior, b *Baseline) string {
	if prior == nil {
		return "the interrupted run recorded no baseline"
	}
	if prior.Leaves != b.Leaves {
		return fmt.Sprintf("the unmutated kernel ran %d leaves, the interrupted run's %d", b.Leaves, prior.Leaves)
	}
	if prior.LeafDigest != "" && b.LeafDigest != "" && prior.LeafDigest != b.LeafDigest {
		return fmt.Sprintf("the unmutated kernel ran other leaves than the interrupted run's (as many, %d, but leaf digest %s, was %s)", b.Leaves, b.LeafDigest, prior.LeafDigest)
	}
	p, q := slices.Clone(prior.Failing), slices.Clone(b.Failing)
	slices.Sort(p)
	slices.Sort(q)
	if !slices.Equal(p, q) {
		return fmt.Sprintf("the unmutated kernel fails %v, the interrupted run's failed %v", q, p)
	}
	return ""
}

// LeafDigest is a digest (12 hex digits) of a run's leaf paths, sorted.
func LeafDigest(leaves []runner.Leaf) string {
	paths := make([]string, 0, len(leaves))
	for _, l := range leaves {
		paths = append(paths, l.Path)
	}
	slices.Sort(paths)
	sum := sha256.Sum256([]byte(strings.Join(paths, "\n")))
	return hex.EncodeToString(sum[:])[:12]
}

// SuiteBuild is a digest (12 hex digits) of the test binaries beside the
// runner (every executable regular file of its directory, symlinks
// followed, but the runner): the cases that judge a mutant. RunnerBuild
// digests the runner itself.
func SuiteBuild(runnerPath string) (string, error) {
	self, err := filepath.EvalSymlinks(runnerPath)
	if err != nil {
		return "", fmt.Errorf("mutate: suite build: %w", err)
	}
	selfInfo, err := os.Stat(self)
	if err != nil {
		return "", fmt.Errorf("mutate: suite build: %w", err)
	}
	dir := filepath.Dir(self)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("mutate: suite build: %w", err)
	}
	h := sha256.New()
	for _, e := range ents { // ReadDir sorts by name
		name := filepath.Join(dir, e.Name())
		fi, err := os.Stat(name)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 || os.SameFile(fi, selfInfo) {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			return "", fmt.Errorf("mutate: suite build: %w", err)
		}
		fmt.Fprintf(h, "%s\x00", e.Name())
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("mutate: suite build: %s: %w", e.Name(), err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// RunnerBuild is the runner's sha256 (12 hex digits): the runner runs the
// cases and decides their verdicts, and the judge is in it.
func RunnerBuild(runnerPath string) (string, error) {
	self, err := filepath.EvalSymlinks(runnerPath)
	if err != nil {
		return "", fmt.Errorf("mutate: runner build: %w", err)
	}
	sum, err := FileSum(self)
	if err != nil {
		return "", err
	}
	return sum[:12], nil
}
