package mutate

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/runner"
)

// Stage is one VM run of a staged mutant run: the binaries it runs and the
// runner flag that selects them.
type Stage struct {
	Binaries []string `json:"binaries"`
	// Share is the part of the baseline's summed binary time it took.
	Share float64 `json:"share"`
	// Timeout bounds the stage's VM run (Config.VMTimeout, or twice its
	// share of the baseline's run plus 3 minutes).
	Timeout time.Duration `json:"timeout_ns"`
}

// RunFlag is the runner's -run regex selecting exactly the stage's binaries.
func (s Stage) RunFlag() string {
	q := make([]string, len(s.Binaries))
	for i, b := range s.Binaries {
		q[i] = regexp.QuoteMeta(b)
	}
	return "^(" + strings.Join(q, "|") + ")$"
}

// FirstStageShare is the part of the baseline's binary time the first
// stage gets. Most mutants that are killed are killed by the quick API
// and basic binaries; the slow ones (the explorer, the ignore matrix) are
// run only for a mutant the first stage did not kill.
const FirstStageShare = 0.35

// PlanStages splits the baseline's binaries in two runs: the quickest,
// until they add up to share of the summed binary time, then the rest.
// A mutant killed (or crashed) by the first run is not run again; one that
// survived it runs the second, and its verdict is that of both runs
// together (a leaf absent from a run is not a change: CompareResults).
// Nil when there are fewer than two binaries or their times are unknown.
func PlanStages(base *runner.Results, share float64) []Stage {
	type bin struct {
		name string
		d    time.Duration
	}
	var bins []bin
	var total time.Duration
	for _, c := range base.Root.Children {
		if c.Name == "" || slices.ContainsFunc(bins, func(b bin) bool { return b.name == c.Name }) {
			continue
		}
		bins = append(bins, bin{c.Name, c.Duration})
		total += c.Duration
	}
	if len(bins) < 2 || total <= 0 {
		return nil
	}
	sort.SliceStable(bins, func(i, j int) bool { return bins[i].d < bins[j].d })
	var first, second Stage
	var sum time.Duration
	for i, b := range bins {
		// The first stage always gets the quickest binary and never the
		// slowest one.
		if i == 0 || i < len(bins)-1 && float64(sum+b.d) <= share*float64(total) {
			first.Binaries = append(first.Binaries, b.name)
			sum += b.d
			continue
		}
		second.Binaries = append(second.Binaries, b.name)
	}
	first.Share = float64(sum) / float64(total)
	second.Share = 1 - first.Share
	sort.Strings(first.Binaries)
	sort.Strings(second.Binaries)
	return []Stage{first, second}
}

// selectsBinaries tells whether runner flags already choose the binaries
// (-run, -f): staging would override that choice, so it is left off.
func selectsBinaries(args []string) bool {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "run" || name == "f") {
			return true
		}
	}
	return false
}

func (s Stage) String() string {
	return fmt.Sprintf("%d binaries (%.0f %% of the baseline's binary time)", len(s.Binaries), 100*s.Share)
}

// Narrow keeps of each stage the binaries that run, in order (the
// baseline's run order), at or after the first binary of keep: kernel
// state carries over from one binary to the next (a leaked reference, a
// corrupted list, deferred work counted against the next binary), so a
// binary after the first that ran the mutated line may be the one that
// shows it, while one before it runs an unmutated kernel in effect.
// Stages left empty are dropped; when none of keep is in order (line
// data from another set of binaries) the stages are returned unchanged.
func Narrow(stages []Stage, keep, order []string) []Stage {
	first := -1
	for i, b := range order {
		if slices.Contains(keep, b) {
			first = i
			break
		}
	}
	if first < 0 {
		return stages
	}
	from := map[string]bool{}
	for _, b := range order[first:] {
		from[b] = true
	}
	var out []Stage
	for _, st := range stages {
		var bins []string
		for _, b := range st.Binaries {
			if from[b] {
				bins = append(bins, b)
			}
		}
		if len(bins) > 0 {
			st.Binaries = bins
			out = append(out, st)
		}
	}
	if len(out) == 0 {
		return stages
	}
	return out
}

// RunOrder is the order the baseline ran its binaries in.
func RunOrder(base *runner.Results) []string {
	var out []string
	for _, c := range base.Root.Children {
		if c.Name != "" {
			out = append(out, c.Name)
		}
	}
	return out
}
