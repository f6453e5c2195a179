package mutate

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/coverage"
	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/harness/vm"
)

// Outcome is what became of one mutant.
type Outcome string

// The outcomes. Killed and Crashed count as killed in the score; Survived
// counts against it; the others are left out of it.
const (
	// Killed: a leaf that passed (or skipped) on the unmutated kernel
	// fails on the mutant.
	Killed Outcome = "killed"
	// Survived: no leaf changed from pass to fail.
	Survived Outcome = "survived"
	// Crashed: the mutant kernel panicked, hung (VM timeout), reported a
	// bug the unmutated kernel did not (a WARNING or BUG on its console:
	// KernelReports) or the VM run broke otherwise; counted as killed and
	// listed.
	Crashed Outcome = "crashed"
	// BuildFailed: the mutant does not compile; discarded.
	BuildFailed Outcome = "build-failed"
	// NotCovered: the line never runs (coverage data): not run.
	NotCovered Outcome = "not-covered"
	// Equivalent: listed in the equivalents file (a reason why it cannot
	// change behaviour, whatever the configuration): not run.
	Equivalent Outcome = "equivalent"
	// SameCode: compiled to the same object code as the unmutated source
	// in this build (SameObjects, trivial compiler equivalence): not run.
	// It holds for this configuration only (a call that is an empty
	// inline here may be code in another), so it is not called
	// equivalent; like it, it is left out of the score.
	SameCode Outcome = "same-code"
)

// RunResult is what one run of the suite (bin/fsnsuite -kernel) gave.
type RunResult struct {
	// ExitCode is the runner's exit status.
	ExitCode int
	// Stderr is the runner's standard error.
	Stderr string
	// Dir is its results directory.
	Dir string
	// Seconds is how long it ran (the VM lock's wait left out).
	Seconds float64
}

// Broken returns why a run is not a complete run of the suite ("" when it
// is): vm.BrokenRun of its stderr and exit status.
func (r RunResult) Broken() string { return vm.BrokenRun(r.Stderr, r.ExitCode) }

// Verdict is the judgement of one mutant's run against the baseline.
type Verdict struct {
	Outcome Outcome
	// Reason says why a crashed mutant is so (the VM's message).
	Reason string
	// KilledBy lists the leaves that went from pass or skip to fail.
	KilledBy []Leaf
}

// Leaf is one leaf whose verdict changed: its dotted path, its verdict on
// the baseline and on the mutant ("pass", "skip", "fail", "absent") and the
// mutant run's reason for it.
type Leaf struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
	Why    string `json:"why,omitempty"`
}

func leaves(cs []runner.LeafChange) []Leaf {
	var out []Leaf
	for _, c := range cs {
		out = append(out, Leaf{Path: c.Path, Before: c.Before, After: c.After, Why: c.Why})
	}
	return out
}

// Judge compares a mutant's run with the baseline's results. A broken run
// is Crashed; a results directory that cannot be read is Crashed too (the
// runner did not finish writing it).
func Judge(base *runner.Results, run RunResult) Verdict {
	if why := run.Broken(); why != "" {
		v := Verdict{Outcome: Crashed, Reason: why}
		if r, err := runner.LoadResults(run.Dir); err == nil {
			v.KilledBy = leaves(runner.CompareResults(base, r).Regressions)
		}
		return v
	}
	r, err := runner.LoadResults(run.Dir)
	if err != nil {
		return Verdict{Outcome: Crashed, Reason: fmt.Sprintf("no complete results (exit status %d): %v", run.ExitCode, err)}
	}
	d := runner.CompareResults(base, r)
	if len(d.Regressions) > 0 {
		return Verdict{Outcome: Killed, KilledBy: leaves(d.Regressions)}
	}
	return Verdict{Outcome: Survived}
}

// Equivalents maps a mutant id to the reason it is equivalent (no test
// could tell it from the original).
type Equivalents map[string]string

// ReadEquivalents reads an equivalents list: one mutant per line, "ID
// REASON" (the reason is required), '#' starts a comment line.
func ReadEquivalents(r io.Reader) (Equivalents, error) {
	eq := Equivalents{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, _ := strings.Cut(line, " ")
		reason = strings.TrimSpace(reason)
		if !validID.MatchString(id) {
			return nil, fmt.Errorf("mutate: equivalents line %d: %q is not a mutant id (10 hex digits)", n, id)
		}
		if reason == "" {
			return nil, fmt.Errorf("mutate: equivalents line %d: mutant %s has no reason", n, id)
		}
		eq[id] = reason
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mutate: reading equivalents: %w", err)
	}
	return eq, nil
}

var validID = regexp.MustCompile(`^[0-9a-f]{10}$`)

// Covered tells whether a mutant's line ran, from `make coverage`'s line
// data: ok is false when the data cannot say (no data for the file, the
// file's source differs from the one measured, or the line is not
// instrumented), else ran says whether it ran at all (boot included).
func Covered(d *coverage.LineData, sums map[string]string, m *Mutant) (ran, ok bool) {
	if d == nil {
		return false, false
	}
	f, have := d.Files[m.File]
	if !have || f.SHA256 != sums[m.File] {
		return false, false
	}
	c, have := f.Lines[m.Line]
	if !have {
		return false, false
	}
	return c.Suite+c.Boot > 0, true
}

// RanBy names the binaries during which a mutant's line ran, from line
// data with per-binary counts (make coverage's lines.json "by"): ok is
// false when the data cannot say (Covered's reasons, no per-binary counts,
// or the line also ran at boot, before any binary). Until the mutated line
// first runs the mutant kernel does what the unmutated one does, so the
// binaries that run before the first of these see no difference; Narrow
// keeps that one and every binary after it.
func RanBy(d *coverage.LineData, sums map[string]string, m *Mutant) (bins []string, ok bool) {
	if _, known := Covered(d, sums, m); !known {
		return nil, false
	}
	c := d.Files[m.File].Lines[m.Line]
	if c.Boot > 0 || len(c.By) == 0 {
		return nil, false
	}
	for b, n := range c.By {
		if n > 0 {
			bins = append(bins, b)
		}
	}
	sort.Strings(bins)
	return bins, len(bins) > 0
}
