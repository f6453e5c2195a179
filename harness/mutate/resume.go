package mutate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// Resumable returns the results of prior, the report an interrupted run left
// in the results directory, that a run of cur's selection (ms, in its order)
// can keep: the run records mutants in the order of ms, so an interrupted
// run's results are a prefix of ms, each mutant's diff unchanged. A prior
// report of another selection (source, base, sample, ids, shard, files or
// equivalents), of another suite build, or whose results are not such a
// prefix is an error: its verdicts would not be this run's.
func Resumable(prior, cur *Report, ms []Mutant) ([]Result, error) {
	if prior.KSRC != cur.KSRC || prior.Base != cur.Base || prior.Seed != cur.Seed || prior.N != cur.N ||
		!slices.Equal(prior.IDs, cur.IDs) || prior.Shard != cur.Shard || !slices.Equal(prior.Files, cur.Files) ||
		prior.Generated != cur.Generated || prior.Equivalent != cur.Equivalent {
		return nil, fmt.Errorf("resume: the results directory holds another run (source, base, sample, ids, shard, files or equivalents differ)")
	}
	if prior.SuiteBuild != "" && cur.SuiteBuild != "" && prior.SuiteBuild != cur.SuiteBuild {
		return nil, fmt.Errorf("resume: the interrupted run's suite build was %s, this one is %s: its verdicts are not this suite's", prior.SuiteBuild, cur.SuiteBuild)
	}
	if len(prior.Results) > len(ms) {
		return nil, fmt.Errorf("resume: the interrupted run decided %d mutants, this selection has %d", len(prior.Results), len(ms))
	}
	for i, r := range prior.Results {
		if r.ID != ms[i].ID || r.Diff != ms[i].Diff {
			return nil, fmt.Errorf("resume: the interrupted run's mutant %d is %s, this selection's is %s (or its diff changed)", i+1, r.ID, ms[i].ID)
		}
	}
	return prior.Results, nil
}

// SameBaseline says why the baseline b differs from the interrupted run's
// (prior), "" when it does not: the same leaves, the same failing ones.
// Kept verdicts were judged against prior; they stand only if b is it.
func SameBaseline(prior, b *Baseline) string {
	if prior == nil {
		return "the interrupted run recorded no baseline"
	}
	if prior.Leaves != b.Leaves {
		return fmt.Sprintf("the unmutated kernel ran %d leaves, the interrupted run's %d", b.Leaves, prior.Leaves)
	}
	p, q := slices.Clone(prior.Failing), slices.Clone(b.Failing)
	sort.Strings(p)
	sort.Strings(q)
	if !slices.Equal(p, q) {
		return fmt.Sprintf("the unmutated kernel fails %v, the interrupted run's failed %v", q, p)
	}
	return ""
}

// SuiteBuild is the sha256 (12 hex digits) of the test binaries beside the
// runner (every regular file of its directory but the runner itself): what
// judges a mutant. The runner's own code (this driver) is left out, so a
// driver fix does not void an interrupted run's verdicts.
func SuiteBuild(runner string) (string, error) {
	dir := filepath.Dir(runner)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("mutate: suite build: %w", err)
	}
	h := sha256.New()
	for _, e := range ents { // ReadDir sorts by name
		if !e.Type().IsRegular() || e.Name() == filepath.Base(runner) {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
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
