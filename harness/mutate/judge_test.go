package mutate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/fsnsuite/fsnsuite/harness/coverage"
	"github.com/fsnsuite/fsnsuite/harness/runner"
)

// resultsDir writes a results directory of one binary "b" whose cases have
// the given statuses ("a=pass", "c=fail").
func resultsDir(t *testing.T, cases ...string) string {
	t.Helper()
	dir := t.TempDir()
	var kids []string
	binStatus := "pass"
	for i, c := range cases {
		name, st, _ := strings.Cut(c, "=")
		if st == "fail" {
			binStatus = "fail"
		}
		kids = append(kids, `{"name":"`+name+`","number":`+string(rune('1'+i))+`,"status":"`+st+`","plan":-1}`)
	}
	doc := `{"version":"TAP version 13","status":"` + binStatus + `","plan":1,"children":[{"name":"b","number":1,"status":"` + binStatus + `","plan":` + string(rune('0'+len(cases))) + `,"children":[` + strings.Join(kids, ",") + `]}]}`
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "results.json"), []byte(doc), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"suite":"fsnsuite","start":"2026-01-01T00:00:00Z"}`), 0o644))
	return dir
}

func TestJudge(t *testing.T) {
	base, err := runner.LoadResults(resultsDir(t, "a=pass", "c=fail", "s=skip"))
	assert.NilError(t, err)
	for _, tc := range []struct {
		name     string
		run      RunResult
		want     Outcome
		killedBy []string
		reason   string
	}{
		{"same", RunResult{ExitCode: 1, Dir: resultsDir(t, "a=pass", "c=fail", "s=skip")}, Survived, nil, ""},
		{"pass to fail", RunResult{ExitCode: 1, Dir: resultsDir(t, "a=fail", "c=fail", "s=skip")}, Killed, []string{"b.a"}, ""},
		{"skip to fail", RunResult{ExitCode: 1, Dir: resultsDir(t, "a=pass", "c=fail", "s=fail")}, Killed, []string{"b.s"}, ""},
		{"fail to pass is no kill", RunResult{ExitCode: 0, Dir: resultsDir(t, "a=pass", "c=pass", "s=skip")}, Survived, nil, ""},
		{"panic", RunResult{ExitCode: 1, Stderr: "vm: booting\nfsnsuite: vm: kernel panic: Oops\n", Dir: t.TempDir()}, Crashed, nil, "vm: kernel panic: Oops"},
		{"timeout with partial results", RunResult{ExitCode: 1, Stderr: "fsnsuite: vm: guest timed out after 5m\n", Dir: resultsDir(t, "a=fail", "c=fail", "s=skip")}, Crashed, []string{"b.a"}, "vm: guest timed out after 5m"},
		{"usage error", RunResult{ExitCode: 2, Stderr: "fsnsuite: bad flag\n", Dir: t.TempDir()}, Crashed, nil, "runner exit status 2: fsnsuite: bad flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(base, tc.run)
			assert.Equal(t, v.Outcome, tc.want)
			var got []string
			for _, k := range v.KilledBy {
				got = append(got, k.Path)
			}
			assert.DeepEqual(t, got, tc.killedBy)
			if tc.reason != "" {
				assert.Equal(t, v.Reason, tc.reason)
			}
		})
	}
	// A run without a results directory is crashed, saying so.
	v := Judge(base, RunResult{ExitCode: 1, Dir: filepath.Join(t.TempDir(), "none")})
	assert.Equal(t, v.Outcome, Crashed)
	assert.Assert(t, strings.Contains(v.Reason, "no complete results"), v.Reason)
}

func TestReadEquivalents(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Equivalents
		err      string
	}{
		{"entries and comments", "# c\n\n0123456789 kfree of NULL\nabcdefabcd   two  words\n", Equivalents{"0123456789": "kfree of NULL", "abcdefabcd": "two  words"}, ""},
		{"no reason", "0123456789\n", nil, "line 1: mutant 0123456789 has no reason"},
		{"not an id", "fs/notify/mark.c:12 negate x\n", nil, `line 1: "fs/notify/mark.c:12" is not a mutant id`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadEquivalents(strings.NewReader(tc.in))
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

func TestCovered(t *testing.T) {
	d := &coverage.LineData{Files: map[string]coverage.LineFile{
		"fs/notify/mark.c": {SHA256: "aa", Lines: map[int]coverage.LineCount{10: {Suite: 3}, 11: {}, 12: {Boot: 1}}},
	}}
	sums := map[string]string{"fs/notify/mark.c": "aa", "fs/notify/group.c": "bb"}
	for _, tc := range []struct {
		name      string
		d         *coverage.LineData
		sums      map[string]string
		m         Mutant
		ran, know bool
	}{
		{"ran in the suite", d, sums, Mutant{File: "fs/notify/mark.c", Line: 10}, true, true},
		{"never ran", d, sums, Mutant{File: "fs/notify/mark.c", Line: 11}, false, true},
		{"ran at boot", d, sums, Mutant{File: "fs/notify/mark.c", Line: 12}, true, true},
		{"not instrumented", d, sums, Mutant{File: "fs/notify/mark.c", Line: 13}, false, false},
		{"file not measured", d, sums, Mutant{File: "fs/notify/group.c", Line: 10}, false, false},
		{"other source", d, map[string]string{"fs/notify/mark.c": "cc"}, Mutant{File: "fs/notify/mark.c", Line: 11}, false, false},
		{"no data", nil, sums, Mutant{File: "fs/notify/mark.c", Line: 11}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran, know := Covered(tc.d, tc.sums, &tc.m)
			assert.Equal(t, ran, tc.ran)
			assert.Equal(t, know, tc.know)
		})
	}
}

func TestReport(t *testing.T) {
	r := &Report{KSRC: "/k", Seed: 1, N: 4, Generated: 9, ByOp: map[string]int{OpNegate: 9}, NeverRan: 1, Coverage: "lines.json", Complete: true,
		Baseline: &Baseline{BuildSeconds: 200, RunSeconds: 90, Leaves: 10},
		Results: []Result{
			{Mutant: Mutant{ID: "0000000001", File: "fs/notify/mark.c", Line: 3, Func: "f", Op: OpNegate, Diff: "--- a\n+++ b\n"}, Outcome: Survived},
			{Mutant: Mutant{ID: "0000000002", File: "fs/notify/mark.c", Line: 4, Func: "f", Op: OpNegate}, Outcome: Killed,
				KilledBy: []Leaf{{Path: "b.a", Before: "pass", After: "fail", Why: "events differ"}}},
			{Mutant: Mutant{ID: "0000000003", File: "fs/notify/group.c", Line: 5, Func: "g", Op: OpNegate}, Outcome: Crashed, Reason: "vm: kernel panic"},
			{Mutant: Mutant{ID: "0000000004", File: "fs/notify/group.c", Line: 6, Func: "g", Op: OpNegate}, Outcome: NotCovered},
		}}
	total, files, funcs := r.Scores()
	assert.DeepEqual(t, total, Score{Killed: 1, Crashed: 1, Survived: 1, NotCovered: 1})
	assert.Equal(t, files["fs/notify/mark.c"].String(), "1/2 50.0 % (killed 1, crashed/hung 0, survived 1; build-failed 0, not covered 0, equivalent 0, same code 0)")
	assert.Equal(t, funcs["fs/notify/group.c g"].String(), "1/1 100.0 % (killed 0, crashed/hung 1, survived 0; build-failed 0, not covered 1, equivalent 0, same code 0)")
	var b strings.Builder
	assert.NilError(t, r.WriteText(&b))
	for _, want := range []string{
		"Mutation score: 2/3 66.7 %",
		"0000000002 killed       fs/notify/mark.c:4",
		"pass -> fail b.a: events differ",
		"vm: kernel panic",
		"Survivors",
		"0000000001 fs/notify/mark.c:3 negate in f\n--- a\n+++ b\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	var j strings.Builder
	assert.NilError(t, r.WriteJSON(&j))
	if diff := cmp.Diff(true, strings.Contains(j.String(), `"survivors": [
    "0000000001"
  ]`)); diff != "" {
		t.Errorf("JSON survivors:\n%s", j.String())
	}
}

func TestRanBy(t *testing.T) {
	d := &coverage.LineData{Files: map[string]coverage.LineFile{
		"fs/notify/mark.c": {SHA256: "aa", Lines: map[int]coverage.LineCount{
			10: {Suite: 3, By: map[string]int64{"inotify_api": 2, "fanotify_api": 1}},
			11: {Suite: 3},
			12: {Suite: 3, Boot: 1, By: map[string]int64{"inotify_api": 3}},
		}},
	}}
	sums := map[string]string{"fs/notify/mark.c": "aa"}
	bins, ok := RanBy(d, sums, &Mutant{File: "fs/notify/mark.c", Line: 10})
	assert.Assert(t, ok)
	assert.DeepEqual(t, bins, []string{"fanotify_api", "inotify_api"})
	for _, line := range []int{11, 12, 13} {
		_, ok := RanBy(d, sums, &Mutant{File: "fs/notify/mark.c", Line: line})
		assert.Assert(t, !ok, "line %d: no per-binary counts, ran at boot, or not instrumented", line)
	}
	_, ok = RanBy(d, map[string]string{"fs/notify/mark.c": "cc"}, &Mutant{File: "fs/notify/mark.c", Line: 10})
	assert.Assert(t, !ok, "another source")
}
