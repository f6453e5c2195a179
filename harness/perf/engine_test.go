package perf

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// spinCond is a synthetic condition: k Spin iterations per operation.
func spinCond(name string, k int) Condition {
	return Condition{Name: name, Run: func(r *Run) error {
		for i := 0; i < r.N; i++ {
			Spin(k)
			Spin(r.Spin)
		}
		return nil
	}}
}

// verified is a Verify that always holds (the synthetic conditions have no setup).
func verified(Stage, string) (string, error) { return "synthetic condition", nil }

func testOptions(mode string) *Options {
	o := NewOptions()
	o.Budget = 3 * time.Second
	switch mode {
	case "aa":
		o.AA = true
	case "inject":
		o.Inject = 0.05
	}
	return o
}

func measure(t *testing.T, e *Experiment, o *Options) *Result {
	t.Helper()
	if e.Suite == "" {
		e.Suite = "perf_unit"
	}
	if e.OpsPerRun == 0 {
		e.OpsPerRun = 200
	}
	if e.Verify == nil {
		e.Verify = verified
	}
	res, err := e.Measure(o, time.Time{})
	if err != nil {
		t.Fatalf("Measure: %v", err)
	}
	for _, l := range res.Figures() {
		t.Log(l)
	}
	t.Log(res.Verdict, res.Reason)
	return res
}

func TestGatePassAndFail(t *testing.T) {
	pass := measure(t, &Experiment{Name: "same", Base: spinCond("a", 300), Cond: spinCond("b", 300),
		Gate: Gate{Max: 1.03}}, testOptions("gate"))
	if pass.Verdict != Pass {
		t.Errorf("equal work against 1.03: %v (%s), want pass", pass.Verdict, pass.Reason)
	}
	fail := measure(t, &Experiment{Name: "slower", Base: spinCond("a", 300), Cond: spinCond("b", 390),
		Gate: Gate{Max: 1.03}}, testOptions("gate"))
	if fail.Verdict != Fail {
		t.Errorf("30%% more work against 1.03: %v (%s), want fail", fail.Verdict, fail.Reason)
	}
	if pass.CostOverGate() || !fail.CostOverGate() {
		t.Errorf("CostOverGate: pass %v, fail %v; want false, true", pass.CostOverGate(), fail.CostOverGate())
	}
	if got := fail.Summaries[NsPerOp].Ratio.Center; got < 1.2 || got > 1.4 {
		t.Errorf("ratio of 390/300 spins = %.3f, want about 1.3", got)
	}
	// Chunk-interleaved blocks: one record per condition, the first condition
	// alternating (block 0 starts with A, block 1 with B).
	if len(fail.Runs) != 2*fail.Blocks {
		t.Errorf("%d runs for %d blocks, want 2 per block", len(fail.Runs), fail.Blocks)
	}
	if fail.Runs[0].Cond != "a" || fail.Runs[1].Cond != "b" || fail.Runs[2].Cond != "b" || fail.Runs[3].Cond != "a" {
		t.Errorf("order %s %s %s %s, want a b b a", fail.Runs[0].Cond, fail.Runs[1].Cond, fail.Runs[2].Cond, fail.Runs[3].Cond)
	}
}

func TestBadGateMetric(t *testing.T) {
	e := &Experiment{Suite: "perf_unit", Name: "bad", Base: spinCond("a", 1), Cond: spinCond("b", 1), OpsPerRun: 16,
		Gate: Gate{Metric: P50, Max: 1.03}, Verify: verified}
	if _, err := e.Measure(testOptions("gate"), time.Time{}); err == nil {
		t.Errorf("p50 gate without latencies accepted")
	}
}

func TestUndecidedWhenStraddling(t *testing.T) {
	o := testOptions("gate")
	o.Budget = time.Microsecond // one block: no interval yet
	res := measure(t, &Experiment{Name: "edge", Base: spinCond("a", 300), Cond: spinCond("b", 300),
		Gate: Gate{Max: 1.03}}, o)
	if res.Verdict != Undecided || res.Blocks != 1 {
		t.Errorf("budget out after %d blocks: %v (%s), want undecided", res.Blocks, res.Verdict, res.Reason)
	}
	if res.CostOverGate() {
		t.Errorf("an undecided interval counts as a cost over the gate")
	}
}

func TestSelfChecks(t *testing.T) {
	aa := measure(t, &Experiment{Name: "aa", Base: spinCond("a", 300), Cond: spinCond("b", 900),
		Gate: Gate{Max: 1.03}}, testOptions("aa"))
	if aa.Cond != "a_aa" || aa.Verdict != Pass {
		t.Errorf("-aa: cond %s verdict %v (%s), want a_aa pass", aa.Cond, aa.Verdict, aa.Reason)
	}
	inj := measure(t, &Experiment{Name: "inject", Base: spinCond("a", 300), Cond: spinCond("b", 300),
		Gate: Gate{Max: 1.03}}, testOptions("inject"))
	if inj.Verdict != Pass {
		t.Errorf("-inject 5%%: %v (%s), want pass", inj.Verdict, inj.Reason)
	}
	if c := inj.Summaries[NsPerOp].Ratio.Center; c < 1.03 || c > 1.07 {
		t.Errorf("-inject 5%%: ratio %.4f, want about 1.05", c)
	}
}

func TestLatencyMetrics(t *testing.T) {
	lat := func(name string, k int) Condition {
		return Condition{Name: name, Run: func(r *Run) error {
			t0 := Now()
			for i := 0; i < r.N; i++ {
				Spin(k)
				Spin(r.Spin)
				t1 := Now()
				r.Lat[i] = t1 - t0
				t0 = t1
			}
			return nil
		}}
	}
	res := measure(t, &Experiment{Name: "lat", Base: lat("a", 500), Cond: lat("b", 500), Latency: true,
		Gate: Gate{Metric: P50, Max: 1.03}}, testOptions("gate"))
	if res.Verdict != Pass {
		t.Errorf("p50 gate: %v (%s)", res.Verdict, res.Reason)
	}
	for _, m := range []string{NsPerOp, P50, P99, OpsPerSec} {
		if _, ok := res.Summaries[m]; !ok {
			t.Errorf("no %s summary", m)
		}
	}
	if res.ClockNs <= 0 || res.ClockNs > 1000 {
		t.Errorf("clock cost %.1f ns", res.ClockNs)
	}
}

var benchLine = regexp.MustCompile(`^Benchmark[A-Za-z]+/case=[a-z0-9_]+/cond=[a-z0-9_:]+-\d+\t\d+(\t[0-9.]+ [a-z/0-9-]+)+$`)

func TestSaveLoadBenchBaseline(t *testing.T) {
	resetRecorder()
	t.Cleanup(resetRecorder)
	o := testOptions("gate")
	o.Budget = time.Second
	dir := t.TempDir()
	o.Save = filepath.Join(dir, "old.json")
	res := measure(t, &Experiment{Name: "rt", Base: spinCond("a", 300), Cond: spinCond("b", 300),
		Gate: Gate{Max: 1.03}}, o)
	if hw := res.Summaries[NsPerOp].Ratio.HalfWidth(); res.Precision != 0.0125 || hw > res.Precision {
		t.Errorf("with -save: precision target %v, interval ±%.4f", res.Precision, hw)
	}
	if err := Record(res, o); err != nil {
		t.Fatal(err)
	}
	f, err := Load(o.Save)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Find("rt", "gate")
	if got == nil || len(got.Runs) != len(res.Runs) || got.Env == nil || got.Env.Kernel == "" {
		t.Fatalf("round trip lost data: %+v", got)
	}
	txt, err := os.ReadFile(filepath.Join(dir, "old.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(txt), "\n") {
		if strings.HasPrefix(l, "Benchmark") {
			n++
			if !benchLine.MatchString(l) {
				t.Errorf("bad benchmark line %q", l)
			}
		}
	}
	if want := len(res.Runs) + res.Blocks; n != want {
		t.Errorf("%d benchmark lines, want %d (runs + block ratios)", n, want)
	}

	// Against itself: no regression.
	rows := Compare(res, []*SavedFile{f}, o)
	if rows[0].Verdict != Pass || !rows[0].Gated {
		t.Errorf("self comparison: %+v", rows[0])
	}
	tab := Table(rows, []string{"old"})
	if tab[0] != "| metric | before | after | change | verdict |" || len(tab) != 2+len(rows) {
		t.Errorf("table:\n%s", strings.Join(tab, "\n"))
	}
	// A copy whose measured condition is 10% slower: regression.
	slow := *res
	slow.Runs = nil
	for _, r := range res.Runs {
		c := r
		c.Values = map[string]float64{}
		for k, v := range r.Values {
			c.Values[k] = v
			if r.Cond == "b" {
				c.Values[k] = v * 1.10
			}
		}
		slow.Runs = append(slow.Runs, c)
	}
	rows = Compare(&slow, []*SavedFile{f}, o)
	if rows[0].Verdict != Fail {
		t.Errorf("10%% slower against 5%%: %v (%s)", rows[0].Verdict, rows[0].Reason)
	}
	// Two baselines: drift column, verdicts against both.
	rows = Compare(res, []*SavedFile{f, f}, o)
	tab = Table(rows, []string{"a", "b"})
	if !strings.Contains(tab[0], "drift") || rows[0].Drift == nil || rows[0].Verdict != Pass {
		t.Errorf("two baselines: %+v\n%s", rows[0], strings.Join(tab, "\n"))
	}
	t.Log("\n" + strings.Join(tab, "\n"))
}

// fakeT records what Check reports.
type fakeT struct {
	logs, errs, skips []string
	strict            bool
	noHint            string
}

func (f *fakeT) NoKernelHint(why string) { f.noHint = why }

func (f *fakeT) Helper()                   {}
func (f *fakeT) Logf(s string, a ...any)   { f.logs = append(f.logs, fmt.Sprintf(s, a...)) }
func (f *fakeT) Errorf(s string, a ...any) { f.errs = append(f.errs, fmt.Sprintf(s, a...)) }
func (f *fakeT) Skipf(s string, a ...any)  { f.skips = append(f.skips, fmt.Sprintf(s, a...)) }
func (f *fakeT) Strict() bool              { return f.strict }
func (f *fakeT) has(sub string) bool       { return strings.Contains(strings.Join(f.logs, "\n"), sub) }

func (f *fakeT) check(tb testing.TB, e, s int) {
	tb.Helper()
	if len(f.errs) != e || len(f.skips) != s {
		tb.Errorf("errors %d skips %d, want %d %d: errs=%q skips=%q", len(f.errs), len(f.skips), e, s, f.errs, f.skips)
	}
}

func TestCheckReporting(t *testing.T) {
	o := testOptions("gate")
	o.Budget = time.Microsecond
	e := &Experiment{Suite: "perf_unit", Name: "edge", Base: spinCond("a", 300), Cond: spinCond("b", 300),
		OpsPerRun: 200, Gate: Gate{Max: 1.03}, Verify: verified}
	ft := &fakeT{}
	res := CheckWith(ft, e, o)
	t.Log(strings.Join(ft.logs, "\n"))
	if res == nil {
		t.Fatal("no result")
	}
	if !ft.has("ratio") {
		t.Errorf("figures missing")
	}
	if res.Verdict != Undecided {
		t.Fatalf("verdict %v, want undecided", res.Verdict)
	}
	ft.check(t, 0, 1)
	st := &fakeT{strict: true}
	CheckWith(st, e, o)
	st.check(t, 1, 0)
	// With an interval that straddles, the skip names it.
	o.Budget = 3 * time.Second
	e.Gate.Max = 1.0
	e.Cond = spinCond("b", 301)
	ft = &fakeT{}
	if res := CheckWith(ft, e, o); res != nil && res.Verdict == Undecided && !strings.Contains(ft.skips[0], "[") {
		t.Errorf("skip reason without interval: %q", ft.skips[0])
	}
}

func TestVerify(t *testing.T) {
	e := &Experiment{Suite: "perf_unit", Name: "noverify", Base: spinCond("a", 2000), Cond: spinCond("b", 2000), OpsPerRun: 64}
	if _, err := e.Measure(testOptions("gate"), time.Time{}); err == nil || !strings.Contains(err.Error(), "no Verify") {
		t.Errorf("experiment without Verify: err %v, want a refusal", err)
	}
	e.Verify = func(s Stage, _ string) (string, error) {
		if s == VerifyBefore {
			return "", fmt.Errorf("mark missing")
		}
		return "ok", nil
	}
	if _, err := e.Measure(testOptions("gate"), time.Time{}); err == nil || !strings.Contains(err.Error(), "before measuring: mark missing") {
		t.Errorf("failing check before: err %v", err)
	}
	// A condition lost while measuring (the mark removed mid-run) voids a passing
	// ratio: the verdict is a failure naming what the check found.
	e.Verify = func(s Stage, mode string) (string, error) {
		if s == VerifyAfter {
			return "", fmt.Errorf("fanotify fdinfo marks [], want one (%s)", mode)
		}
		return "one mark", nil
	}
	e.Gate = Gate{Max: 1.03}
	ft := &fakeT{}
	res := CheckWith(ft, e, testOptions("gate"))
	if res == nil || res.Verdict != Fail || !strings.Contains(res.Reason, "after measuring") {
		t.Fatalf("failing check after: %+v", res)
	}
	if res.CostOverGate() {
		t.Errorf("a void measurement counts as a cost over the gate")
	}
	ft.check(t, 1, 0)
	if !ft.has("verify before: one mark") || !ft.has("verify after: FAILED: fanotify fdinfo marks [], want one (gate)") {
		t.Errorf("verify lines missing:\n%s", strings.Join(ft.logs, "\n"))
	}
	// The case's kernel fix is the gate's subject, not judged: no HINT.
	if !strings.Contains(ft.noHint, "setup check failed") {
		t.Errorf("a void measurement did not withhold the kernel HINT (NoKernelHint %q)", ft.noHint)
	}
	// A check the machine voided (a starved listener's queue overflowed) is
	// undecided: a skip with the reason, never a pass, a failure under -strict.
	e.Verify = func(s Stage, _ string) (string, error) {
		if s == VerifyAfter {
			return "", fmt.Errorf("listener: 3 IN_Q_OVERFLOW: %w", ErrMachineVoided)
		}
		return "one mark", nil
	}
	ft = &fakeT{}
	res = CheckWith(ft, e, testOptions("gate"))
	if res == nil || res.Verdict != Undecided || !strings.Contains(res.Reason, "IN_Q_OVERFLOW") {
		t.Fatalf("check voided by the machine: %+v", res)
	}
	ft.check(t, 0, 1)
}

func TestReportedMarker(t *testing.T) {
	o := testOptions("gate")
	o.Budget = time.Second
	e := &Experiment{Suite: "perf_unit", Name: "info", Base: spinCond("a", 300), Cond: spinCond("b", 600),
		OpsPerRun: 200, Verify: verified}
	ft := &fakeT{}
	res := CheckWith(ft, e, o)
	if res == nil || res.Verdict != Info {
		t.Fatalf("ungated: %+v", res)
	}
	ft.check(t, 0, 0)
	if last := ft.logs[len(ft.logs)-1]; !strings.HasPrefix(last, ReportedMarker+" ratio ") {
		t.Errorf("last line %q, want the %q marker", last, ReportedMarker)
	}
	if ft.has("gate: ") {
		t.Errorf("an ungated ratio printed a gate:\n%s", strings.Join(ft.logs, "\n"))
	}
	// A gated one prints its threshold for the report, machine-readable.
	e.Gate.Max = 5
	ft = &fakeT{}
	CheckWith(ft, e, o)
	if !ft.has("\ngate: ratio <= 5\n") {
		t.Errorf("no gate line:\n%s", strings.Join(ft.logs, "\n"))
	}
	e.Gate.Max = 0
	e.Gate.DecidedBy = "the guards"
	ft = &fakeT{}
	CheckWith(ft, e, o)
	if ft.has(ReportedMarker) || !ft.has("gated by the guards") {
		t.Errorf("ratio of a case gated elsewhere:\n%s", strings.Join(ft.logs, "\n"))
	}
	ft = &fakeT{}
	Reported(ft, "worst %d ms", 3)
	if len(ft.logs) != 1 || ft.logs[0] != ReportedMarker+" worst 3 ms" {
		t.Errorf("Reported: %q", ft.logs)
	}
}

// TestCostOverGate: only a gate run's own failure on the ratio is a cost over
// the gate.
func TestCostOverGate(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *Result
		want bool
	}{
		{"gate_fail", &Result{Mode: "gate", Gate: Gate{Max: 1.03}, Verdict: Fail}, true},
		{"gate_pass", &Result{Mode: "gate", Gate: Gate{Max: 1.03}, Verdict: Pass}, false},
		{"gate_undecided", &Result{Mode: "gate", Gate: Gate{Max: 1.03}, Verdict: Undecided}, false},
		{"void", &Result{Mode: "gate", Gate: Gate{Max: 1.03}, Verdict: Fail, VerifyFailed: true}, false},
		{"ungated", &Result{Mode: "gate", Verdict: Info}, false},
		{"aa_fail", &Result{Mode: "aa", Gate: Gate{Max: 1.03}, Verdict: Fail}, false},
		{"inject_fail", &Result{Mode: "inject", Gate: Gate{Max: 1.03}, Verdict: Fail}, false},
		{"not_run", nil, false},
	} {
		if got := tc.r.CostOverGate(); got != tc.want {
			t.Errorf("%s: CostOverGate() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
