package mutate

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"
)

// Report is the mutation analysis written to mutants.json and report.txt.
type Report struct {
	KSRC string `json:"ksrc"`
	// Base is BASE= (only lines changed since it were mutated), "" for all.
	Base string `json:"base,omitempty"`
	// Seed and N drew the sample; IDs, when set, chose the mutants instead.
	Seed uint64   `json:"seed"`
	N    int      `json:"n"`
	IDs  []string `json:"ids,omitempty"`
	// Generated counts every mutant of the source (before sampling),
	// Equivalent those of them in the equivalents list, and NeverRan those
	// on lines the coverage data says never ran (-1: no coverage data).
	Generated  int            `json:"generated"`
	ByOp       map[string]int `json:"generated_by_op"`
	Equivalent int            `json:"equivalent_listed"`
	NeverRan   int            `json:"never_ran"`
	// Coverage names the line data used, or says there was none.
	Coverage string    `json:"coverage"`
	Baseline *Baseline `json:"baseline"`
	Results  []Result  `json:"mutants"`
	// Complete is false while the run is still going (or was cut short).
	Complete bool `json:"complete"`
	// Shard is the part of the list this run ran ("K/N", -shard), "" for
	// the whole; Merged lists the shards a merged report joins (Merge).
	Shard string `json:"shard,omitempty"`
	// Files, when set, are the only source files mutated (-files).
	Files  []string `json:"files,omitempty"`
	Merged []string `json:"merged_shards,omitempty"`
	// SuiteBuild and RunnerBuild identify the test binaries and the
	// runner that judged the mutants (SuiteBuild, RunnerBuild); Inputs
	// the rest of what a verdict depends on (coverage data, runner flags,
	// VM settings, sources, kernel configuration, equivalents), each as a
	// value or a digest. Empty in reports written before they were
	// recorded.
	SuiteBuild  string            `json:"suite_build,omitempty"`
	RunnerBuild string            `json:"runner_build,omitempty"`
	Inputs      map[string]string `json:"inputs,omitempty"`
	// FirstKill: mutants run by this run stopped at their first killing
	// leaf (-first-kill); such a result's killed_by is that leaf.
	FirstKill bool `json:"first_kill,omitempty"`
	// Resumed counts the results kept from an interrupted run (-resume).
	Resumed int `json:"resumed,omitempty"`
}

// Score is killed (crashed included) out of killed plus survived.
type Score struct {
	Killed     int `json:"killed"`
	Crashed    int `json:"crashed"`
	Survived   int `json:"survived"`
	BuildFail  int `json:"build_failed"`
	NotCovered int `json:"not_covered"`
	Equivalent int `json:"equivalent"`
	SameCode   int `json:"same_code"`
}

// Add counts one outcome.
func (s *Score) Add(o Outcome) {
	switch o {
	case Killed:
		s.Killed++
	case Crashed:
		s.Crashed++
	case Survived:
		s.Survived++
	case BuildFailed:
		s.BuildFail++
	case NotCovered:
		s.NotCovered++
	case Equivalent:
		s.Equivalent++
	case SameCode:
		s.SameCode++
	}
}

// String is "killed/(killed+survived) pct %" with the other counts.
func (s Score) String() string {
	k := s.Killed + s.Crashed
	pct := "-"
	if k+s.Survived > 0 {
		pct = fmt.Sprintf("%.1f %%", 100*float64(k)/float64(k+s.Survived))
	}
	return fmt.Sprintf("%d/%d %s (killed %d, crashed/hung %d, survived %d; build-failed %d, not covered %d, equivalent %d, same code %d)",
		k, k+s.Survived, pct, s.Killed, s.Crashed, s.Survived, s.BuildFail, s.NotCovered, s.Equivalent, s.SameCode)
}

// Scores returns the total and the score per file and per "file function".
func (r *Report) Scores() (total Score, files, funcs map[string]*Score) {
	files, funcs = map[string]*Score{}, map[string]*Score{}
	for _, res := range r.Results {
		total.Add(res.Outcome)
		for _, mk := range []struct {
			m map[string]*Score
			k string
		}{{files, res.File}, {funcs, res.File + " " + res.Func}} {
			if mk.m[mk.k] == nil {
				mk.m[mk.k] = &Score{}
			}
			mk.m[mk.k].Add(res.Outcome)
		}
	}
	return total, files, funcs
}

// WriteJSON writes the report as JSON, with the scores.
func (r *Report) WriteJSON(w io.Writer) error {
	total, files, funcs := r.Scores()
	doc := struct {
		*Report
		Score     Score             `json:"score"`
		PerFile   map[string]*Score `json:"score_per_file"`
		PerFunc   map[string]*Score `json:"score_per_function"`
		Survivors []string          `json:"survivors"`
	}{r, total, files, funcs, nil}
	for _, res := range r.Results {
		if res.Outcome == Survived {
			doc.Survivors = append(doc.Survivors, res.ID)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("mutate: writing the JSON report: %w", err)
	}
	return nil
}

// WriteText writes the report for a reader: what was run, the score in
// total, per file and per function, every mutant's outcome, and every
// survivor with its diff.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	total, files, funcs := r.Scores()
	fmt.Fprintf(&b, "Mutation analysis of fs/notify (dnotify left out) in %s\n", r.KSRC)
	if r.Base != "" {
		fmt.Fprintf(&b, "Lines changed since %s only.\n", r.Base)
	}
	ops := make([]string, 0, len(r.ByOp))
	for _, op := range Ops {
		if r.ByOp[op] > 0 {
			ops = append(ops, fmt.Sprintf("%s %d", op, r.ByOp[op]))
		}
	}
	fmt.Fprintf(&b, "Mutants generated: %d (%s); %d listed as equivalent", r.Generated, strings.Join(ops, ", "), r.Equivalent)
	if r.NeverRan >= 0 {
		fmt.Fprintf(&b, "; %d on lines the suite never ran", r.NeverRan)
	}
	b.WriteString(".\n")
	if len(r.IDs) > 0 {
		fmt.Fprintf(&b, "Chosen: %s.\n", strings.Join(r.IDs, ", "))
	} else if r.N > 0 {
		fmt.Fprintf(&b, "Sample: N=%d SEED=%d.\n", r.N, r.Seed)
	} else {
		b.WriteString("Sample: every mutant.\n")
	}
	if len(r.Files) > 0 {
		fmt.Fprintf(&b, "Files: %s only.\n", strings.Join(r.Files, ", "))
	}
	if r.FirstKill {
		b.WriteString("First kill: mutants run with -first-kill stopped at their first killing leaf; their killed_by names that leaf alone (its reason says so).\n")
	}
	if r.Resumed > 0 {
		fmt.Fprintf(&b, "Resumed: %d verdicts kept from an interrupted run of this selection (-resume).\n", r.Resumed)
	}
	if r.Shard != "" {
		fmt.Fprintf(&b, "Shard: %s of that list (fsnsuite mutants -merge joins the shards' reports).\n", r.Shard)
	}
	if len(r.Merged) > 0 {
		fmt.Fprintf(&b, "Merged from shards %s.\n", strings.Join(r.Merged, ", "))
	}
	fmt.Fprintf(&b, "Coverage: %s.\n", r.Coverage)
	if bl := r.Baseline; bl != nil {
		fmt.Fprintf(&b, "Baseline: built in %.0fs, suite in %.0fs, %d leaves, %d already failing", bl.BuildSeconds, bl.RunSeconds, bl.Leaves, len(bl.Failing))
		if len(bl.Failing) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(bl.Failing, ", "))
		}
		b.WriteString(".\n")
		for i, st := range bl.Stages {
			fmt.Fprintf(&b, "Stage %d: %s: %s.\n", i+1, st, strings.Join(st.Binaries, " "))
		}
		if len(bl.Stages) > 0 {
			b.WriteString("A mutant killed or crashed in a stage is not run in the next one (its killing leaves are those of that stage only).\n")
		}
	}
	if !r.Complete {
		b.WriteString("INCOMPLETE: the run is still going or was cut short.\n")
	}
	fmt.Fprintf(&b, "\nMutation score: %s\n", total)
	fmt.Fprintf(&b, "\nPer file:\n")
	for _, k := range sortedScoreKeys(files) {
		fmt.Fprintf(&b, "  %-40s %s\n", k, files[k])
	}
	fmt.Fprintf(&b, "\nPer function:\n")
	for _, k := range sortedScoreKeys(funcs) {
		fmt.Fprintf(&b, "  %-60s %s\n", k, funcs[k])
	}
	fmt.Fprintf(&b, "\nMutants:\n")
	for _, res := range r.Results {
		fmt.Fprintf(&b, "  %s %-12s %-38s %-10s %s", res.ID, res.Outcome, res.Where(), res.Op, res.Func)
		if res.BuildSeconds > 0 {
			fmt.Fprintf(&b, " (build %.0fs", res.BuildSeconds)
			if res.RunSeconds > 0 {
				fmt.Fprintf(&b, ", run %.0fs", res.RunSeconds)
			}
			if res.Stages > 0 {
				fmt.Fprintf(&b, " in %d stage", res.Stages)
				if res.Stages > 1 {
					b.WriteString("s")
				}
			}
			b.WriteString(")")
		}
		b.WriteString("\n")
		if res.Reason != "" {
			fmt.Fprintf(&b, "      %s\n", res.Reason)
		}
		if res.Listed {
			b.WriteString("      (listed as equivalent; run because it was chosen by id)\n")
		}
		if len(res.RanBy) > 0 {
			fmt.Fprintf(&b, "      run on the binaries that ran its line (lines.json): %s\n", strings.Join(res.RanBy, " "))
		}
		for i, k := range res.KilledBy {
			if i == 5 {
				fmt.Fprintf(&b, "      ... and %d more leaves\n", len(res.KilledBy)-5)
				break
			}
			fmt.Fprintf(&b, "      %s -> %s %s", k.Before, k.After, k.Path)
			if strings.IndexFunc(k.Why, unicode.IsLetter) >= 0 {
				// (a closing brace of a dump says nothing)
				fmt.Fprintf(&b, ": %s", k.Why)
			}
			b.WriteString("\n")
		}
	}
	first := true
	for _, res := range r.Results {
		if res.Outcome != Survived {
			continue
		}
		if first {
			fmt.Fprintf(&b, "\nSurvivors (no leaf went from pass to fail; equivalent ones go in scripts/mutants/equivalent.txt):\n")
			first = false
		}
		fmt.Fprintf(&b, "\n%s %s %s in %s\n%s", res.ID, res.Where(), res.Op, res.Func, res.Diff)
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("mutate: writing the report: %w", err)
	}
	return nil
}

func sortedScoreKeys(m map[string]*Score) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
