package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/model"
	"github.com/fsnsuite/fsnsuite/harness/ownproc"
)

// fakeRuns hands out prepared runs in order, then the model's answer.
type fakeRuns struct {
	runs    [][]Obs
	foreign [][]ownproc.Process
	around  []ownproc.Process // what othersAround adds
	model   []Obs
	n       int
}

func (f *fakeRuns) runSettled(*Scenario) ([]Obs, []ownproc.Process, error) {
	defer func() { f.n++ }()
	if f.n < len(f.runs) {
		var fo []ownproc.Process
		if f.n < len(f.foreign) {
			fo = f.foreign[f.n]
		}
		return f.runs[f.n], fo, nil
	}
	return f.model, nil, nil
}

func (f *fakeRuns) othersAround(foreign []ownproc.Process, _ time.Time) ([]ownproc.Process, error) {
	return addProcs(foreign, f.around), nil
}

// TestReplayMismatch: a mismatch counts as reproduced only when a replay
// differs at the same step in the same way; a difference that the replays
// do not show again keeps one note per replay with what it got; any other
// program seen around the runs (in the first run, a replay, or after) is
// named, so that the caller leaves the verdict undecided.
func TestReplayMismatch(t *testing.T) {
	want := []Obs{{"result: ok"}, {"g0 IN_OPEN f"}}
	bad := []Obs{{"result: ok"}, {"g0 IN_OPEN f", "g0 IN_ACCESS f"}}
	other := []Obs{{"result: ok"}, {"g0 IN_OPEN f", "g0 IN_CLOSE_NOWRITE f"}}
	indexer := ownproc.Process{Pid: 4123, Comm: "updatedb"}
	s := &Scenario{Seed: 200}
	for _, tc := range []struct {
		name       string
		fake       fakeRuns
		reproduced int
		notes      int
		others     int
	}{
		{"always", fakeRuns{runs: [][]Obs{bad, bad, bad}}, 3, 0, 0},
		{"never", fakeRuns{model: want}, 0, 3, 0},
		{"once", fakeRuns{runs: [][]Obs{want, bad}, model: want}, 1, 2, 0},
		{"other difference is no reproduction", fakeRuns{runs: [][]Obs{other, other, other}}, 0, 3, 0},
		{"another program in a replay", fakeRuns{runs: [][]Obs{bad, bad, bad}, foreign: [][]ownproc.Process{nil, {indexer}}}, 3, 0, 1},
		{"another program seen after", fakeRuns{model: want, around: []ownproc.Process{indexer}}, 0, 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp, err := replayMismatch(&tc.fake, s, 1, want, bad, nil, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if rp.reproduced != tc.reproduced || len(rp.notes) != tc.notes || len(rp.others) != tc.others {
				t.Errorf("reproduced %d, notes %d, others %v; want %d, %d, %d others", rp.reproduced, len(rp.notes), rp.others, tc.reproduced, tc.notes, tc.others)
			}
			for _, n := range rp.notes {
				if !strings.Contains(n, "step 2 got") {
					t.Errorf("note %q does not say what the replay got at step 2", n)
				}
			}
		})
	}
}

// TestLogStepPerGroup: the report at the differing step lists want and got
// group by group and marks the groups that differ.
func TestLogStepPerGroup(t *testing.T) {
	s := &Scenario{Steps: []Step{{Op: "read", Obj: "f"}}}
	want := []Obs{{"result: ok", "g0 FAN_ACCESS f", "g1 IN_ACCESS . name=f"}}
	got := []Obs{{"result: ok", "g0 FAN_ACCESS f", "g1 IN_ACCESS . name=f", "g1 IN_OPEN|IN_ISDIR ."}}
	var lines []string
	logStep(func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }, s, 0, want, got)
	out := strings.Join(lines, "\n")
	for _, w := range []string{"g0 want:", "g1 got:", "<- differs"} {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
	if strings.Count(out, "<- differs") != 1 {
		t.Errorf("only g1 differs:\n%s", out)
	}
}

// TestOthersCouldAdd: another program's reads can add inotify opens, reads
// and non-writing closes and repeats of wanted lines, and move a
// DELETE_SELF (and IN_IGNORED) to another step; never remove another line
// or add a create, a write or a fanotify event.
func TestOthersCouldAdd(t *testing.T) {
	want := Obs{"g0 IN_MODIFY . name=f", "g0 IN_CLOSE_WRITE . name=f"}
	for _, tc := range []struct {
		name string
		got  Obs
		ok   bool
	}{
		{"reads added", Obs{"g0 IN_OPEN|IN_ISDIR .", "g0 IN_MODIFY . name=f", "g0 IN_ACCESS . name=g", "g0 IN_CLOSE_WRITE . name=f", "g0 IN_CLOSE_NOWRITE . name=g"}, true},
		{"repeat", Obs{"g0 IN_MODIFY . name=f", "g0 IN_ACCESS . name=g", "g0 IN_MODIFY . name=f", "g0 IN_CLOSE_WRITE . name=f"}, true},
		{"oneshot spent", Obs{"g1 IN_OPEN|IN_ISDIR s", "g1 IN_IGNORED s", "g0 IN_MODIFY . name=f", "g0 IN_CLOSE_WRITE . name=f"}, true},
		{"missing", Obs{"g0 IN_MODIFY . name=f", "g0 IN_OPEN . name=g"}, false},
		{"create added", Obs{"g0 IN_CREATE . name=x", "g0 IN_MODIFY . name=f", "g0 IN_CLOSE_WRITE . name=f"}, false},
		{"ignored (a delete_self held back earlier)", Obs{"g1 IN_IGNORED s", "g0 IN_MODIFY . name=f", "g0 IN_CLOSE_WRITE . name=f"}, true},
		{"write added", Obs{"g0 IN_MODIFY . name=g", "g0 IN_MODIFY . name=f", "g0 IN_CLOSE_WRITE . name=f"}, false},
		{"fanotify added", Obs{"g2 FAN_OPEN f", "g0 IN_MODIFY . name=f", "g0 IN_CLOSE_WRITE . name=f"}, false},
		{"delete_self held back", Obs{"g0 IN_MODIFY . name=f", "g0 IN_CLOSE_WRITE . name=f", "g2 FAN_ATTRIB g"}, true},
		{"oneshot taken by another's read", Obs{"g0 IN_OPEN|IN_ISDIR .", "g0 IN_IGNORED ."}, true},
		{"event lost, no read in its place", Obs{"g0 IN_MODIFY . name=f"}, false},
	} {
		w := want
		if tc.name == "oneshot taken by another's read" {
			w = Obs{"g0 IN_OPEN . name=f", "g0 IN_IGNORED ."}
		}
		if tc.name == "delete_self held back" {
			w = Obs{"g0 IN_MODIFY . name=f", "g0 IN_CLOSE_WRITE . name=f", "g2 FAN_ATTRIB|FAN_DELETE_SELF g", "g1 IN_DELETE_SELF g", "g1 IN_IGNORED g"}
		}
		if got := othersCouldAdd(w, tc.got); got != tc.ok {
			t.Errorf("%s: othersCouldAdd = %t, want %t", tc.name, got, tc.ok)
		}
	}
}

// faultyKernel is a kernel that follows a planted model fault: what a
// patched kernel with that mistake would do.
type faultyKernel struct{ k model.Kernel }

func (f faultyKernel) runSettled(s *Scenario) ([]Obs, []ownproc.Process, error) {
	return predict(f.k, s), nil, nil
}

func (faultyKernel) othersAround(foreign []ownproc.Process, _ time.Time) ([]ownproc.Process, error) {
	return foreign, nil
}

// TestShrinkAgainst: a recorded scenario that differs on the replaying
// kernel is shrunk with the model as the recording kernel's oracle, and the
// shrunk script with its differing step is logged under the difference; a
// recording the model does not predict is left unshrunk, saying so.
func TestShrinkAgainst(t *testing.T) {
	gen := Generator{Kinds: allKinds}
	bad := model.Fixed
	bad.Fault = model.Faults[0].Name
	for i := 0; i < defaultN; i++ {
		s := gen.Scenario(defaultSeed + int64(i))
		recorded, got := predict(model.Fixed, s), predict(bad, s)
		if firstDiff(recorded, got) < 0 {
			continue
		}
		var lines []string
		logf := func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }
		shrinkAgainst(logf, faultyKernel{bad}, model.Fixed, s, recorded, got)
		out := strings.Join(lines, "\n")
		if !strings.Contains(out, "  shrunk to ") || !strings.Contains(out, "    at step ") || !strings.Contains(out, "    1. ") {
			t.Fatalf("seed %d (%d steps): no shrunk script:\n%s", s.Seed, len(s.Steps), out)
		}
		t.Logf("seed %d, %d steps:\n%s", s.Seed, len(s.Steps), out)
		lines = nil
		shrinkAgainst(logf, faultyKernel{bad}, model.Fixed, s, got, got)
		if len(lines) != 1 || !strings.Contains(lines[0], "not shrunk") {
			t.Fatalf("a recording the model does not predict: %q", lines)
		}
		return
	}
	t.Fatalf("fault %s found in no scenario", bad.Fault)
}
