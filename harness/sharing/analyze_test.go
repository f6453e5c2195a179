package sharing

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsnsuite/fsnsuite/harness/perf"
)

// synth builds a plugin output and a chunk log for one case: blocks blocks,
// per block 4 windows per condition, each window of ops operations with
// shared[tag] shared writes (plus extra[i] in the i-th window of the run).
func synth(name, mode string, blocks int, ops int64, shared [2]int64, extra map[int]int64) (string, string) {
	var p, c strings.Builder
	p.WriteString("fsnshare version=1 vcpus=2 line=64 kernel_half=0xffff800000000000\n")
	seq := 0
	for b := 0; b < blocks; b++ {
		for j := 0; j < 8; j++ {
			tag := (j/2 + b) % 2
			seq++
			sw := shared[tag] + extra[seq]
			fmt.Fprintf(&p, "window seq=%d tag=%d stores=%d lines=40 shared_writes=%d shared_lines=%d remote_writes=%d transfers=%d vcpus=2\n",
				seq, tag, 30*ops, 2*sw, min(sw, 3), sw, sw/2)
			if sw > 0 {
				fmt.Fprintf(&p, "hot seq=%d line=0x1000 writes=%d remote=%d writers=0x3 pc=0xffffffff81000010\n", seq, 2*sw, sw)
			}
			c.WriteString(perf.SharingChunkLine("perf_x", name, mode, "", []string{"private", "shared"}[tag], tag, b, ops))
		}
	}
	p.WriteString("end windows=1\n")
	return p.String(), c.String()
}

func analyze(t *testing.T, plugin, chunks string) *Case {
	t.Helper()
	p, err := ParsePlugin(strings.NewReader(plugin))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ParseChunks(strings.NewReader(chunks))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Join(p, cs)
	if err != nil {
		t.Fatal(err)
	}
	got := Analyze(ms, nil)
	if len(got) != 1 {
		t.Fatalf("%d cases, want 1", len(got))
	}
	return got[0]
}

// TestAnalyzeAA: identical sides give identical, exact figures and a pass; a
// side that differs by more than 1% fails. A window with extra writes (a
// timer tick) in one of a block's four windows moves no block's median.
func TestAnalyzeAA(t *testing.T) {
	p, c := synth("x_n2", "aa", 30, 2000, [2]int64{4000, 4000}, map[int]int64{3: 500, 100: 70})
	k := analyze(t, p, c)
	f := k.Figures[0]
	if f.Metric != RemoteWritesPerOp || f.Base.Center != 2 || f.Cond.Center != 2 || !f.Exact || f.Ratio.Lo != 1 || f.Ratio.Hi != 1 {
		t.Errorf("figure %+v", f)
	}
	if !strings.HasPrefix(k.Verdict, "pass: -aa no difference (identical figures)") {
		t.Errorf("verdict %q, want a pass saying the figures are identical", k.Verdict)
	}
	// 2 and 2.001 remote writes per op are 5 parts in 10^4 apart: within
	// the floor, not identical; 745099 and 745101 stores per 2000 ops
	// (372.5495 and 372.5505, printed 372.5 and 372.6) are identical.
	p, c = synth("x_n2", "aa", 30, 2000, [2]int64{4000, 4002}, nil)
	if k := analyze(t, p, c); !strings.HasPrefix(k.Verdict, "pass: -aa no difference (within the floor)") {
		t.Errorf("2 and 2.001 per op: verdict %q, want a pass within the floor", k.Verdict)
	}
	if !Identical(Figure{Base: perf.Interval{Center: 745099.0 / 2000}, Cond: perf.Interval{Center: 745101.0 / 2000}}) {
		t.Errorf("372.5495 and 372.5505 per op: not identical, want identical (one part in 10^4)")
	}
	// Two sides that counted no kernel store are no measurement, not
	// "identical": synth's windows store 60000 per 2000 ops, here none.
	p, c = synth("x_n2", "aa", 30, 2000, [2]int64{0, 0}, nil)
	if k := analyze(t, strings.ReplaceAll(p, " stores=60000 ", " stores=0 "), c); !strings.HasPrefix(k.Verdict, "fail: kstores/op 0") {
		t.Errorf("no kernel store on either side: verdict %q, want a failure saying nothing was measured", k.Verdict)
	}
	p, c = synth("x_n2", "aa", 30, 2000, [2]int64{4000, 4100}, nil)
	if k := analyze(t, p, c); !strings.HasPrefix(k.Verdict, "fail") {
		t.Errorf("sides 2.5%% apart: verdict %q, want fail", k.Verdict)
	}
	// Near zero, counts of 11 against 13 per 2000 ops are the same figure.
	p, c = synth("x_n2", "aa", 30, 2000, [2]int64{11, 13}, nil)
	if k := analyze(t, p, c); !strings.HasPrefix(k.Verdict, "pass") {
		t.Errorf("11 and 13 per 2000 ops: verdict %q, want pass", k.Verdict)
	}
	// 0.05 against 0.1 per op is not (every block the same: the ratio's
	// interval is [2,2]).
	p, c = synth("x_n2", "aa", 30, 2000, [2]int64{100, 200}, nil)
	if k := analyze(t, p, c); !strings.HasPrefix(k.Verdict, "fail") {
		t.Errorf("100 and 200 per 2000 ops: verdict %q, want fail", k.Verdict)
	}
}

// TestAnalyzeControl: the control passes with >= 1 shared write per op on the
// shared side and <= 0.1 on the private one, and fails otherwise.
func TestAnalyzeControl(t *testing.T) {
	for _, tc := range []struct {
		shared [2]int64
		pass   bool
	}{
		{[2]int64{20, 6000}, true},
		{[2]int64{0, 2000}, true},
		{[2]int64{20, 1900}, false},  // 0.95 per op
		{[2]int64{400, 6000}, false}, // private 0.2 per op
	} {
		p, c := synth(ControlPrefix+"n2", "gate", 12, 2000, tc.shared, nil)
		k := analyze(t, p, c)
		if got := strings.HasPrefix(k.Verdict, "pass"); got != tc.pass {
			t.Errorf("shared writes %v per 2000 ops: verdict %q, want pass=%v", tc.shared, k.Verdict, tc.pass)
		}
	}
}

// TestJoinMismatch: a window count or a tag that differs is refused.
func TestJoinMismatch(t *testing.T) {
	p, c := synth("x", "gate", 2, 100, [2]int64{1, 1}, nil)
	pl, _ := ParsePlugin(strings.NewReader(p))
	cs, _ := ParseChunks(strings.NewReader(c))
	if _, err := Join(pl, cs[1:]); err == nil || !strings.Contains(err.Error(), "do not match") {
		t.Errorf("one chunk short: %v", err)
	}
	cs[0].Tag = 1
	if _, err := Join(pl, cs); err == nil || !strings.Contains(err.Error(), "tag") {
		t.Errorf("tag differs: %v", err)
	}
	pl.End = ""
	if _, err := Join(pl, cs); err == nil || !strings.Contains(err.Error(), "end line") {
		t.Errorf("no end line: %v", err)
	}
}

// TestCompare: a change of +1 remote write per op fails, none passes.
func TestCompare(t *testing.T) {
	p, c := synth("shared_private_n2", "gate", 30, 2000, [2]int64{12, 12}, nil)
	before := analyze(t, p, c)
	p, c = synth("shared_private_n2", "gate", 30, 2000, [2]int64{12, 2012}, nil)
	after := analyze(t, p, c)
	got := Compare([]*Case{before}, []*Case{after})
	if len(got) != 2 || got[0].Verdict != "pass" || got[1].Verdict != "fail" || got[1].After-got[1].Before != 1 {
		t.Errorf("changes %+v", got)
	}
}

// The plugin's end line reporting stores it could not count makes the run
// no measurement (review: the counters were kept as text, never read).
func TestJoinRefusesIncompleteCounts(t *testing.T) {
	for _, end := range []string{"end windows=0 dropped=3", "end windows=0 oom=1"} {
		if _, err := Join(&Plugin{End: end}, nil); err == nil || !strings.Contains(err.Error(), "incomplete") {
			t.Errorf("Join with %q: %v, want an error saying the counts are incomplete", end, err)
		}
	}
	if _, err := Join(&Plugin{End: "end windows=0 orphan_stops=0 restarts=0 dropped=0 unmatched_leaves=0 joined_at_start=0 oom=0"}, nil); err != nil {
		t.Errorf("Join with clean counters: %v", err)
	}
}

// A join/leave protocol that does not pair voids the run: a vCPU left joined
// counts another thread's work (the measuring thread's waits) in every later
// window, which is what made -aa's kstores/op spread 2% (issue 36).
func TestJoinRefusesUnpairedJoins(t *testing.T) {
	for _, end := range []string{"end windows=0 unmatched_leaves=1 joined_at_start=0", "end windows=0 unmatched_leaves=0 joined_at_start=4"} {
		if _, err := Join(&Plugin{End: end}, nil); err == nil || !strings.Contains(err.Error(), "do not pair") {
			t.Errorf("Join with %q: %v, want an error saying the markers do not pair", end, err)
		}
	}
	// The error names the first window it happened in, with its case.
	_, err := Join(&Plugin{End: "end windows=1 unmatched_leaves=0 joined_at_start=1 first_unmatched_leaves=0 first_joined_at_start=1"},
		[]Chunk{{Suite: "perf_x", Case: "c_n2", Cond: "none"}})
	if err == nil || !strings.Contains(err.Error(), "first in window 1: perf_x c_n2 none") {
		t.Errorf("Join with a join left over in window 1: %v, want the window and its case named", err)
	}
}

// TestReadIsolation: the guest's account becomes the report's header line,
// saying when nohz_full is not in effect; an account with anything but CPU
// lists is not repeated.
func TestReadIsolation(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"housekeeping=0x1 nohz_full=1-2 online=0-2\n", "measured vCPUs 1-2 nohz_full"},
		{"housekeeping=0x1 nohz_full= online=0-2\n", "nohz_full not in effect"},
		{"housekeeping=0x1 nohz_full=$(reboot) online=0-2\n", "unreadable"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, IsolationFile), []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := ReadIsolation(dir); !strings.Contains(got, tc.want) {
			t.Errorf("ReadIsolation(%q) = %q, want it to say %q", tc.file, got, tc.want)
		}
	}
	if got := ReadIsolation(t.TempDir()); got != "" {
		t.Errorf("ReadIsolation of a run without the file = %q, want \"\"", got)
	}
}

// Figures in the change table are plain decimals (issue 34): no scientific
// notation, a rounding residue printed as 0.
func TestPlainDecimal(t *testing.T) {
	for _, tc := range []struct {
		x      float64
		signed bool
		want   string
	}{
		{-5.551e-17, true, "+0"}, {0.00675, false, "0.00675"}, {1.007, false, "1.007"}, {1.502, true, "+1.502"},
		{-0.00025, true, "-0.00025"}, {4.506, false, "4.506"}, {13.24, false, "13.24"}, {2820000, false, "2820000"},
	} {
		if got := plain(tc.x, tc.signed); got != tc.want {
			t.Errorf("plain(%g, %v) = %q, want %q", tc.x, tc.signed, got, tc.want)
		}
	}
}
