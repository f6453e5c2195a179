package perf

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExactSamples: instruction counts give every block the same value. The
// statistics must then give zero-width intervals, a ratio of identical
// samples of exactly [1,1], and a U-test p without NaN (all ranks tied).
func TestExactSamples(t *testing.T) {
	same := func(v float64, n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = v
		}
		return xs
	}
	base, cond := same(1710, 24), same(1834, 24)
	for _, conf := range []float64{0.99, 1 - 0.001/MaxLooks} {
		iv := MedianCI(base, conf)
		if iv.Center != 1710 || iv.Lo != 1710 || iv.Hi != 1710 || !iv.Finite() || iv.HalfWidth() != 0 {
			t.Errorf("MedianCI of 24 x 1710 at %v: %+v (half-width %v), want [1710,1710]", conf, iv, iv.HalfWidth())
		}
		r := RatioCI(base, base, conf)
		if r.Center != 1 || r.Lo != 1 || r.Hi != 1 {
			t.Errorf("RatioCI of identical samples: %+v, want exactly [1,1]", r)
		}
		r = RatioCI(cond, base, conf)
		if want := 1834.0 / 1710; r.Center != want || r.Lo != want || r.Hi != want {
			t.Errorf("RatioCI 1834/1710: %+v, want exactly %v", r, want)
		}
		c := ChangeCI(base, base, conf)
		if c.Center != 1 || c.Lo != 1 || c.Hi != 1 {
			t.Errorf("ChangeCI of identical samples: %+v, want [1,1]", c)
		}
	}
	u, err := MannWhitney(base, base)
	if err != nil || u.P != 1 {
		t.Errorf("U-test of all-tied samples: p=%v err=%v, want 1", u.P, err)
	}
	u, err = MannWhitney(base, cond)
	if err != nil || math.IsNaN(u.P) || u.P > 1e-6 {
		t.Errorf("U-test of two different constants: p=%v err=%v, want tiny", u.P, err)
	}
	// A summary of exact samples says so.
	s := Summary{Base: MedianCI(base, 0.99), Cond: MedianCI(base, 0.99), Ratio: RatioCI(base, base, 0.99)}
	if !strings.Contains(exactness(s), "exact: every block") {
		t.Errorf("exactness of exact samples: %q", exactness(s))
	}
}

// counter is an exact clock for the engine: it advances only by what the
// synthetic conditions add, as the guest clock under -icount shift=0 advances
// by the instructions executed.
type counter struct{ n int64 }

func (c *counter) install(t *testing.T) {
	old := now
	now = func() int64 { return c.n }
	t.Cleanup(func() { now = old })
}

// insnCond costs exactly per "instructions" per operation, and each Spin
// iteration 5 more plus 7 for calling Spin with a non-zero count.
func (c *counter) cond(name string, per int64) Condition {
	return Condition{Name: name, Run: func(r *Run) error {
		for i := 0; i < r.N; i++ {
			c.n += per
			if r.Spin > 0 {
				c.n += 7 + 5*int64(r.Spin)
			}
		}
		return nil
	}}
}

func icountOptions(mode string) *Options {
	o := testOptions(mode)
	o.Clock = ClockICount
	o.Inject = 0
	if mode == "inject" {
		o.Inject = 0.02
	}
	return o
}

func TestICountEngine(t *testing.T) {
	resetRecorder()
	t.Cleanup(resetRecorder)
	c := &counter{}
	c.install(t)
	e := &Experiment{Suite: "perf_unit", Name: "delete_self", Base: c.cond("none", 1710), Cond: c.cond("mark", 1834), OpsPerRun: 2000, Verify: verified,
		Gate: Gate{Max: 1.03, Why: "gate: a time gate"}}

	// Gate mode: labelled in instructions, the time gate not applied.
	ft := &fakeT{}
	res := CheckWith(ft, e, icountOptions("gate"))
	ft.check(t, 0, 0)
	if res.Gate.Metric != InsnPerOp || res.Clock != ClockICount {
		t.Fatalf("gate metric %q clock %q, want insn/op icount", res.Gate.Metric, res.Clock)
	}
	s := res.Summaries[InsnPerOp]
	if want := 1834.0 / 1710; s.Ratio.Center != want || s.Ratio.Lo != want || s.Ratio.Hi != want || s.Base.Center != 1710 {
		t.Errorf("ratio %+v base %+v, want exactly %v and 1710", s.Ratio, s.Base, want)
	}
	if res.Looks != 1 || res.Blocks != 24 {
		t.Errorf("exact counts decided after %d blocks, %d looks; want the first look (24)", res.Blocks, res.Looks)
	}
	if _, ok := res.Summaries[NsPerOp]; ok {
		t.Errorf("an ns/op summary in instruction count mode")
	}
	if res.Summary(NsPerOp).Base.Center != 1710 {
		t.Errorf("Summary(NsPerOp) does not map to insn/op")
	}
	last := ft.logs[len(ft.logs)-1]
	if res.Verdict != Info || !strings.HasPrefix(last, ReportedMarker+" instruction count mode: insn/op ratio 1.0725") ||
		!strings.Contains(last, "time gate <= 1.03 is not applied") || !strings.Contains(last, "(exact") {
		t.Errorf("verdict %v, last line %q: want the reported marker naming instruction count mode", res.Verdict, last)
	}
	if !ft.has("measurement: none_insn_per_op 1710 insn/op [1710,1710]") || !ft.has("(time gate <= 1.03 not applied)") ||
		!ft.has("time gate, not applied here: gate: a time gate") || !ft.has(ICountNote) {
		t.Errorf("labels missing:\n%s", strings.Join(ft.logs, "\n"))
	}
	var bench bytes.Buffer
	f := &SavedFile{Format: FileFormat, Suite: "perf_unit", Env: res.Env, Results: []*Result{res}}
	if err := f.WriteBench(&bench); err != nil {
		t.Fatal(err)
	}
	if b := bench.String(); !strings.Contains(b, "clock: icount\n") || !strings.Contains(b, "\t1710 insn/op") ||
		!strings.Contains(b, "1.072515 ratio") || strings.Contains(b, "ns/op") {
		t.Errorf("benchmark lines:\n%.600s", b)
	}

	// -aa: exact.
	aa := measure(t, &Experiment{Name: "aa", Base: c.cond("none", 1710), Cond: c.cond("mark", 1834), OpsPerRun: 2000}, icountOptions("aa"))
	if r := aa.Summaries[InsnPerOp].Ratio; aa.Verdict != Pass || r.Lo != 1 || r.Hi != 1 || !strings.Contains(aa.Reason, "(exact") {
		t.Errorf("-aa: %v %q ratio %+v, want pass, exactly [1,1]", aa.Verdict, aa.Reason, r)
	}

	// -inject: the in-loop count predicts the measured ratio exactly.
	inj := measure(t, &Experiment{Name: "inj", Base: c.cond("none", 1710), Cond: c.cond("mark", 1834), OpsPerRun: 2000}, icountOptions("inject"))
	k := inj.SpinPerOp
	want := float64(1710+7+5*k) / 1710
	if r := inj.Summaries[InsnPerOp].Ratio; inj.Verdict != Pass || r.Center != want || inj.InjectWant != want || !strings.Contains(inj.Reason, ": exact") {
		t.Errorf("-inject: %v %q, ratio %+v predicted %v, want exactly %v", inj.Verdict, inj.Reason, r, inj.InjectWant, want)
	}
	// The line through the counts: 5 per iteration, 7 for the call, so
	// 2% of 1710 (34.2) takes round((34.2-7)/5) = 5 iterations.
	if k != 5 {
		t.Errorf("-inject: %d iterations, want 5", k)
	}
}

func TestICountBaseline(t *testing.T) {
	resetRecorder()
	t.Cleanup(resetRecorder)
	c := &counter{}
	c.install(t)
	o := icountOptions("gate")
	o.Save = filepath.Join(t.TempDir(), "old.json")
	res := measure(t, &Experiment{Name: "b", Base: c.cond("none", 1710), Cond: c.cond("mark", 1834), OpsPerRun: 2000,
		Gate: Gate{Max: 1.03}}, o)
	if err := Record(res, o); err != nil {
		t.Fatal(err)
	}
	old, err := Load(o.Save)
	if err != nil {
		t.Fatal(err)
	}
	if got := old.Find("b", "gate"); got == nil || got.Clock != ClockICount || got.Gate.Metric != InsnPerOp {
		t.Fatalf("saved result lost its clock: %+v", got)
	}
	scaled := func(cond float64) *Result {
		r := *res
		r.Runs = nil
		for _, rec := range res.Runs {
			cp := rec
			cp.Values = map[string]float64{}
			for k, v := range rec.Values {
				cp.Values[k] = v
				if rec.Cond == "mark" {
					cp.Values[k] = v * cond
				}
			}
			r.Runs = append(r.Runs, cp)
		}
		r.summarize()
		return &r
	}
	for _, tc := range []struct {
		factor float64
		want   Verdict
	}{{1, Pass}, {1.01, Pass}, {1.03, Fail}} {
		rows := Compare(scaled(tc.factor), []*SavedFile{old}, o)
		// ratio row informational, the absolute rows gated
		if rows[0].Gated || !rows[1].Gated || !rows[2].Gated {
			t.Fatalf("gated rows: %v %v %v, want the absolute insn/op rows", rows[0].Gated, rows[1].Gated, rows[2].Gated)
		}
		if rows[1].Verdict != Pass || rows[2].Verdict != tc.want {
			t.Errorf("mark x%v against +2%%: base %v, cond %v (%s), want pass, %v", tc.factor, rows[1].Verdict, rows[2].Verdict, rows[2].Reason, tc.want)
		}
		if ch := rows[2].Change[0]; ch.Lo != ch.Hi {
			t.Errorf("change of exact counts not exact: %+v", ch)
		}
	}
	// -threshold given: it holds in instruction count mode too.
	o2 := *o
	o2.Threshold, o2.thresholdSet = 0.05, true
	if rows := Compare(scaled(1.03), []*SavedFile{old}, &o2); rows[2].Verdict != Pass {
		t.Errorf("+3%% against -threshold 5%%: %v", rows[2].Verdict)
	}
	// A time baseline is not comparable with instructions.
	timed := *old
	timed.Results = nil
	for _, r := range old.Results {
		cp := *r
		cp.Clock = ""
		timed.Results = append(timed.Results, &cp)
	}
	rows := Compare(res, []*SavedFile{&timed}, o)
	if rows[1].Verdict != Undecided || !strings.Contains(rows[1].Reason, "not comparable") {
		t.Errorf("time baseline against instructions: %v %q", rows[1].Verdict, rows[1].Reason)
	}
	_, reason, lines, err := compareWithFiles(res, &Options{Clock: ClockICount, Baselines: []string{o.Save}, Confidence: 0.99})
	if err != nil || !strings.Contains(strings.Join(lines, "\n"), "+2.0% on each condition's insn/op") {
		t.Errorf("comparison lines (%v, %s):\n%s", err, reason, strings.Join(lines, "\n"))
	}
}

// TestSaveNonFinite: -save never fails on a value JSON cannot carry (an
// ops/s of +Inf from a block a coarse clock timed at 0), and reads it back.
func TestSaveNonFinite(t *testing.T) {
	r := &Result{Suite: "perf_unit", Name: "inf", Mode: "gate", Base: "a", Cond: "b", Gate: Gate{Metric: NsPerOp, Max: math.NaN()},
		ClockNs: math.Inf(1), Seconds: math.NaN(), SpinNs: math.Inf(-1),
		Runs: []RunRecord{
			{Block: 0, Cond: "a", N: 16, Values: map[string]float64{NsPerOp: 0, OpsPerSec: math.Inf(1), P50: math.NaN()}},
			{Block: 0, Cond: "b", N: 16, Values: map[string]float64{NsPerOp: 0, OpsPerSec: math.Inf(-1), P50: 3}},
		}}
	r.summarize()
	path := filepath.Join(t.TempDir(), "inf.json")
	f := &SavedFile{Format: FileFormat, Suite: "perf_unit", Results: []*Result{r}}
	if err := f.Save(path); err != nil {
		t.Fatalf("save with Inf/NaN: %v", err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"+Inf"`) || !strings.Contains(string(b), `"-Inf"`) {
		t.Errorf("infinities not written as strings:\n%s", b)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	g := back.Results[0]
	if v := g.Runs[0].Values; !math.IsInf(v[OpsPerSec], 1) || !math.IsNaN(v[P50]) || v[NsPerOp] != 0 {
		t.Errorf("values read back: %v", v)
	}
	if !math.IsInf(g.Runs[1].Values[OpsPerSec], -1) || !math.IsInf(g.ClockNs, 1) || !math.IsInf(g.SpinNs, -1) ||
		!math.IsNaN(g.Seconds) || !math.IsNaN(g.Gate.Max) || g.Gate.Metric != NsPerOp || g.Name != "inf" {
		t.Errorf("fields read back: %+v", g)
	}
	// A plain value still round-trips as before, and old files (null) read.
	var n Number
	for in, want := range map[string]float64{"1.5": 1.5, "null": math.NaN(), `"NaN"`: math.NaN(), `"Inf"`: math.Inf(1)} {
		if err := json.Unmarshal([]byte(in), &n); err != nil || !(float64(n) == want || math.IsNaN(want) && math.IsNaN(float64(n))) {
			t.Errorf("Number %s: %v %v", in, n, err)
		}
	}
	if err := json.Unmarshal([]byte(`"x"`), &n); err == nil {
		t.Errorf(`Number "x" accepted`)
	}
	var bench bytes.Buffer
	if err := f.WriteBench(&bench); err != nil || strings.Contains(bench.String(), "Inf") {
		t.Errorf("benchmark lines carry a non-finite value (%v):\n%s", err, bench.String())
	}
}

func TestClockCoarse(t *testing.T) {
	jiffies := ClockInfo{Source: "jiffies", ResNs: 4000000, StepNs: 4000000}
	if why := jiffies.coarseFor(30000); !strings.Contains(why, "clocksource") && !strings.Contains(why, "jiffies") {
		t.Errorf("jiffies against a 30 µs chunk: %q", why)
	}
	if why := (ClockInfo{Source: "tsc", ResNs: 1, StepNs: 25}).coarseFor(30000); why != "" {
		t.Errorf("tsc against a 30 µs chunk: %q", why)
	}
	// A fine clock read on a loaded machine: every read advanced it, by 89 ns
	// at least (the read's own cost), against a chunk of 6670 ns.
	if why := (ClockInfo{Source: "tsc", ResNs: 1, StepNs: 25, EveryRead: true}).coarseFor(6670); why != "" {
		t.Errorf("tsc advancing on every read by >= 25 ns, chunk 6670 ns: %q, want no objection", why)
	}
	// acpi_pm advances on every (slow) read, in steps of 279 ns: too
	// coarse for a 6670 ns chunk, fine for a 100 µs one.
	if why := (ClockInfo{Source: "acpi_pm", ResNs: 1, StepNs: 279, EveryRead: true}).coarseFor(6670); !strings.Contains(why, "too coarse") {
		t.Errorf("acpi_pm against a 6670 ns chunk: %q, want too coarse", why)
	}
	if why := (ClockInfo{Source: "acpi_pm", ResNs: 1, StepNs: 279, EveryRead: true}).coarseFor(100000); why != "" {
		t.Errorf("acpi_pm against a 100 µs chunk: %q", why)
	}
	// A TSC read to the nanosecond on a kernel without high-resolution
	// timers: clock_getres says 4 ms (the tick), every read advanced it.
	if why := (ClockInfo{Source: "tsc", ResNs: 4000000, StepNs: 118, EveryRead: true}).coarseFor(191909); why != "" {
		t.Errorf("tsc without HIGH_RES_TIMERS, every read advancing: %q, want no objection", why)
	}
	// Instruction count mode: a vDSO read is 110 instructions, every read
	// advances the count, and a 9588-instruction chunk (perf_watch_add's
	// add_cached_100k on a minimal 6.1) is measured; a count that never
	// advanced still is not.
	if why := (ClockInfo{Source: "tsc", ResNs: 1, StepNs: 110, EveryRead: true, Counted: true}).coarseFor(9588); why != "" {
		t.Errorf("instruction count, reads of 110 instructions, chunk 9588: %q, want no objection", why)
	}
	if why := (ClockInfo{Source: "tsc", ResNs: 1, StepNs: 110, EveryRead: true}).coarseFor(9588); !strings.Contains(why, "too coarse") {
		t.Errorf("time, steps of 110 ns, chunk 9588 ns: %q, want too coarse", why)
	}
	if why := (ClockInfo{Source: "tsc", ResNs: 1, StepNs: -1, Counted: true}).coarseFor(9588); !strings.Contains(why, "did not advance") {
		t.Errorf("instruction count that never advanced: %q, want did not advance", why)
	}
	if why := (ClockInfo{Source: "refined-jiffies", ResNs: 4000000, StepNs: 4000000}).coarseFor(191909); !strings.Contains(why, "too coarse") {
		t.Errorf("refined-jiffies: %q, want too coarse", why)
	}
	if why := (ClockInfo{Source: "tsc", ResNs: 1, StepNs: -1}).coarseFor(30000); !strings.Contains(why, "did not advance") {
		t.Errorf("a clock that never advanced: %q", why)
	}
	if c := ReadClock(); c.ResNs <= 0 || c.StepNs <= 0 || c.coarseFor(1e6) != "" {
		t.Errorf("this machine's clock: %+v", c)
	}
	// A clock that never moves times every chunk at 0: a skip naming the
	// clock, no figure.
	old := now
	now = func() int64 { return 42 }
	t.Cleanup(func() { now = old })
	ft := &fakeT{}
	res := CheckWith(ft, &Experiment{Suite: "perf_unit", Name: "coarse", Base: spinCond("a", 10), Cond: spinCond("b", 10),
		OpsPerRun: 64, Verify: verified, Gate: Gate{Max: 1.03}}, testOptions("gate"))
	ft.check(t, 0, 1)
	if res != nil || !strings.Contains(ft.skips[0], "clock too coarse") || !strings.Contains(ft.skips[0], "clock ") || ft.has("measurement:") {
		t.Errorf("coarse clock: result %v, skips %q, logs %q", res, ft.skips, ft.logs)
	}
}

func TestNoContention(t *testing.T) {
	for _, tc := range []struct {
		clock, accel, want string
		strict, stop       bool
	}{
		{"", "", "", false, false},
		{"", "kvm", "", false, false},
		{"icount", "tcg-icount", "skip:instruction count mode", false, true},
		{"icount", "tcg-icount", "skip:single-threaded TCG", true, true},
		{"", "tcg", "skip:undecided: TCG emulation (tcg)", false, true},
		{"", "tcg", "error:failure under -strict", true, true},
	} {
		t.Setenv(PerfClockEnv, tc.clock)
		t.Setenv(GuestAccelEnv, tc.accel)
		ft := &fakeT{strict: tc.strict}
		stop := NoContention(ft, "2 clients")
		got := ""
		switch {
		case len(ft.skips) > 0:
			got = "skip:" + ft.skips[0]
		case len(ft.errs) > 0:
			got = "error:" + ft.errs[0]
		}
		kind, sub, _ := strings.Cut(tc.want, ":")
		if stop != tc.stop || (tc.want == "") != (got == "") || !strings.HasPrefix(got, kind) || !strings.Contains(got, sub) || (got != "" && !strings.Contains(got, "2 clients")) {
			t.Errorf("clock %q accel %q strict %v: stop %v, %q; want %v, %q", tc.clock, tc.accel, tc.strict, stop, got, tc.stop, tc.want)
		}
	}
}
