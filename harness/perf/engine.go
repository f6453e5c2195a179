package perf

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"time"
	_ "unsafe" // go:linkname runtime.nanotime
)

// Metric names, also the units of the Go benchmark lines.
const (
	NsPerOp   = "ns/op"  // time per operation of a run: its median chunk's time / chunk size
	P50       = "p50-ns" // median per-operation latency within a run
	P99       = "p99-ns" // 99th percentile per-operation latency within a run
	OpsPerSec = "ops/s"  // operations per second over a timed run
)

// Run is what a condition's Run function gets: perform N operations. It is reused
// from run to run, so the measured loop allocates nothing.
type Run struct {
	// N is the number of operations to perform.
	N int
	// Spin is how many Spin iterations to add to every operation (non-zero only for
	// the copy of the base condition that -inject slows down). Call Spin(r.Spin)
	// inside each operation, after the syscall.
	Spin int
	// Lat, for experiments with Latency set, receives the latency of operation i in
	// nanoseconds at Lat[i] (len(Lat) >= N).
	Lat []int64
}

// Condition is one side of an experiment: a workload under one setting (no mark, a
// mark on the file, ...). All conditions of an experiment exist at the same time;
// the engine runs them in turn.
type Condition struct {
	Name string
	// Before runs, untimed, before each run of this condition (for settings that
	// cannot coexist, such as a watch present or absent on the filesystem).
	Before func() error
	// Run performs r.N operations. It must not allocate, log, or use channels.
	Run func(r *Run) error
	// After runs, untimed, after each run.
	After func() error
}

// Gate is the verdict rule of an experiment: the ratio cond/base of Metric must stay
// at or below Max. Max zero means the experiment is reported but not gated.
type Gate struct {
	Metric string  `json:"metric"`
	Max    float64 `json:"max"`
	// Why justifies the threshold (or its absence), printed with the figures.
	Why string `json:"why,omitempty"`
}

// Experiment compares Cond with Base, interleaved in one process.
type Experiment struct {
	// Suite is the binary's name (perf_modify_overhead); Name is the case name.
	Suite, Name string
	Base, Cond  Condition
	// OpsPerRun is the number of operations of each condition in one block in the
	// quick profile (-profile full multiplies it).
	OpsPerRun int
	// Latency: the conditions record per-operation latencies in Run.Lat, and the
	// P50, P99 and OpsPerSec metrics are computed from them.
	Latency bool
	Gate    Gate
	// FSPath is a path on the filesystem under test, used to look for other
	// processes' fsnotify marks on it (recorded in the environment).
	FSPath string
	// Chunks is the number of timed chunks each condition gets in a block (default
	// DefaultChunks); the conditions alternate chunk by chunk.
	Chunks int
	// Helper, if set, is started on the helper CPU before the first run (a listener
	// draining events) and stopped by calling the returned function after the last.
	Helper func(cpu int) (stop func() error, err error)
}

// Verdict is the outcome of an experiment or a baseline comparison.
type Verdict int

// Verdicts. Undecided means the interval still straddled the threshold when the
// budget ran out: a skip, or a failure under -strict.
const (
	Pass Verdict = iota
	Fail
	Undecided
	Info
)

var verdictNames = [...]string{"pass", "fail", "undecided", "info"}

// String returns the verdict's lowercase name.
func (v Verdict) String() string {
	if v >= 0 && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

// MarshalText encodes the verdict as its name.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText decodes a name written by MarshalText.
func (v *Verdict) UnmarshalText(b []byte) error {
	for i, n := range verdictNames {
		if n == string(b) {
			*v = Verdict(i)
			return nil
		}
	}
	return fmt.Errorf("unknown verdict %q", b)
}

// RunRecord is what one condition measured in one block (its chunks interleaved
// with the other condition's): every sample the engine takes is kept.
type RunRecord struct {
	Block int    `json:"block"`
	Pos   int    `json:"pos"` // 0 if the condition led the block, 1 if it followed
	Cond  string `json:"cond"`
	N     int    `json:"n"`
	Ns    int64  `json:"ns"` // summed time of its timed chunks
	// Values holds the run's metrics (NsPerOp always; P50, P99, OpsPerSec for
	// latency experiments).
	Values map[string]float64 `json:"values"`
}

// Summary gathers the figures of one metric.
type Summary struct {
	Base  Interval `json:"base"`  // median of per-block values with its interval
	Cond  Interval `json:"cond"`  // same for the measured condition
	Ratio Interval `json:"ratio"` // median of paired per-block ratios cond/base
	// UTestP is the Mann-Whitney p-value of per-block base against cond values
	// (unpaired: a check that does not rely on the pairing).
	UTestP Number `json:"utest_p"` // NaN (null in JSON) when there were too few blocks
}

// Result is everything an experiment measured and decided.
type Result struct {
	Suite      string  `json:"suite"`
	Name       string  `json:"name"`
	Mode       string  `json:"mode"` // gate, aa or inject
	Profile    string  `json:"profile"`
	Base       string  `json:"base"`
	Cond       string  `json:"cond"`
	Gate       Gate    `json:"gate"`
	Inject     float64 `json:"inject,omitempty"`
	SpinPerOp  int     `json:"spin_per_op,omitempty"`
	SpinNs     float64 `json:"spin_ns_per_iter,omitempty"`
	OpsPerRun  int     `json:"ops_per_run"` // operations per condition per block
	Chunks     int     `json:"chunks"`
	Blocks     int     `json:"blocks"`
	Seconds    float64 `json:"seconds"`
	Confidence float64 `json:"confidence"`
	// Precision, when non-zero, is the relative half-width the gate ratio's
	// interval must reach before a verdict stops the experiment (with -save and
	// -baseline: a quarter of the regression threshold, so that saved results pass
	// the comparison's variability gate of half the threshold).
	Precision float64            `json:"precision,omitempty"`
	CPU       CPUPlan            `json:"cpu"`
	ClockNs   float64            `json:"clock_ns,omitempty"` // cost of one clock read, included in latencies
	Env       *Env               `json:"env,omitempty"`
	Summaries map[string]Summary `json:"summaries"`
	Verdict   Verdict            `json:"verdict"`
	Reason    string             `json:"reason"`
	Runs      []RunRecord        `json:"runs"`
}

// DefaultChunks is the number of timed chunks of each condition in a block.
const DefaultChunks = 16

// SelfCheckConfidence is the confidence of the difference test of -aa and -inject.
// It is higher than the gates' because an A/A run must flag nothing even though the
// interval is looked at several times as rounds are added (about ten looks: a
// per-look error of 0.1% keeps the whole run near 1%).
const SelfCheckConfidence = 0.999

// Equivalence is the margin within which -aa declares "no difference": the engine
// is meant to resolve 1%.
const Equivalence = 0.01

// infoHalfWidth stops an ungated experiment once its ratio is known to ±1%.
const infoHalfWidth = 0.01

// Measure runs the experiment with the options o, until the gate is decided, the
// profile's budget is spent, or deadline (if non-zero) comes near.
func (e *Experiment) Measure(o *Options, deadline time.Time) (out *Result, err error) {
	if e.Base.Run == nil || e.Cond.Run == nil {
		return nil, fmt.Errorf("experiment %s: condition without Run", e.Name)
	}
	prof := o.profile()
	n := e.OpsPerRun * prof.OpsScale
	if n <= 0 {
		return nil, fmt.Errorf("experiment %s: OpsPerRun must be positive", e.Name)
	}
	metric := e.Gate.Metric
	switch {
	case metric == "":
		metric = NsPerOp
	case metric == NsPerOp:
	case (metric == P50 || metric == P99) && e.Latency:
	default:
		return nil, fmt.Errorf("experiment %s: cannot gate on %q (want %s, or %s/%s with Latency)", e.Name, metric, NsPerOp, P50, P99)
	}
	res := &Result{
		Suite: e.Suite, Name: e.Name, Mode: o.Mode(), Profile: prof.Name, Gate: e.Gate,
		OpsPerRun: n, Confidence: o.Confidence,
	}
	res.Gate.Metric = metric
	base, cond := e.Base, e.Cond
	switch res.Mode {
	case "aa":
		cond = base
		cond.Name = base.Name + "_aa"
		res.Confidence = SelfCheckConfidence
	case "inject":
		cond = base
		cond.Name = base.Name + "_inject"
		res.Inject = o.Inject
		res.Confidence = SelfCheckConfidence
	}
	res.Base, res.Cond = base.Name, cond.Name
	if o.Save != "" || len(o.Baselines) > 0 {
		res.Precision = o.Threshold / 4
	}
	env := CollectEnv(e.FSPath)
	res.Env = &env

	plan, err := PlanCPUs()
	if err != nil {
		return nil, err
	}
	res.CPU = plan
	if e.Helper != nil {
		stop, herr := e.Helper(plan.Helper)
		if herr != nil {
			return nil, fmt.Errorf("experiment %s: start helper: %w", e.Name, herr)
		}
		defer func() {
			if serr := stop(); serr != nil && err == nil {
				out, err = nil, fmt.Errorf("experiment %s: helper: %w", e.Name, serr)
			}
		}()
	}
	restore, err := PinThread(plan.Worker)
	if err != nil {
		return nil, err
	}
	defer restore()
	gc := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(gc)
	runtime.GC()

	chunks := e.Chunks
	if chunks <= 0 {
		chunks = DefaultChunks
	}
	n = max(chunks, n/chunks*chunks)
	res.OpsPerRun, res.Chunks = n, chunks
	m := newMeter(n, chunks, e.Latency)
	m.rewarm = base.Before != nil || base.After != nil || cond.Before != nil || cond.After != nil
	if e.Latency {
		res.ClockNs = ClockCost()
	}
	conds := [2]*Condition{&base, &cond}
	spins := [2]int{}
	if res.Mode == "inject" {
		k, iterNs, err := m.calibrate(&base, metric, o.Inject)
		if err != nil {
			return nil, fmt.Errorf("experiment %s: calibrate -inject: %w", e.Name, err)
		}
		spins[1], res.SpinPerOp, res.SpinNs = k, k, iterNs
	}

	start := time.Now()
	stopAt := start.Add(prof.Budget)
	if !deadline.IsZero() {
		// Leave room for the verdict and cleanup before the harness's deadline.
		if d := deadline.Add(-2 * time.Second); d.Before(stopAt) {
			stopAt = d
		}
	}
	for b := 0; b < prof.WarmupBlocks; b++ {
		if _, err := m.block(conds, spins, b); err != nil {
			return nil, fmt.Errorf("experiment %s: warm-up: %w", e.Name, err)
		}
	}
	next := prof.MinBlocks
	for b := 0; ; b++ {
		recs, err := m.block(conds, spins, b)
		if err != nil {
			return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
		}
		res.Runs = append(res.Runs, recs...)
		res.Blocks = b + 1
		final := res.Blocks >= prof.MaxBlocks || !time.Now().Before(stopAt)
		if res.Blocks >= next || final {
			next = max(next+1, next*5/4)
			res.summarize()
			if res.decide(final) {
				break
			}
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

type meter struct {
	n       int // operations per condition per block, a multiple of chunks
	chunks  int
	per     int // operations per chunk
	latency bool
	run     *Run
	warmLat []int64 // latencies of untimed operations, discarded
	// rewarm: a condition changes a setting around its chunks (Before/After), so
	// every chunk of both conditions follows an untimed quarter-size warm-up.
	rewarm bool
	ns     [2][]int64 // chunk times of each condition in the current block
	lat    [2][]int64 // per-operation latencies of each condition in the block
}

func newMeter(n, chunks int, latency bool) *meter {
	m := &meter{n: n, chunks: chunks, per: n / chunks, latency: latency, run: &Run{}}
	for i := range m.ns {
		m.ns[i] = make([]int64, chunks)
		if latency {
			m.lat[i] = make([]int64, n)
		}
	}
	if latency {
		m.warmLat = make([]int64, m.per)
	}
	return m
}

// block runs one block: 2·chunks timed chunks of n/chunks operations in the order
// A B B A A B B A ... (B A A B B A A B ... for odd b), so the two conditions are never
// more than a chunk apart in time and a change of load on the machine hits both
// alike, and a linear drift cancels within every four chunks. Before and After run
// around each chunk of their condition, untimed; when a condition has them, every
// chunk of both conditions follows an untimed quarter-size warm-up (after Before),
// so the two get the same treatment. The first chunk of each condition in a block
// is preceded by an untimed one.
//
// It returns one record per condition: ns/op is its median chunk time per operation
// (a preemption that hits a chunk does not move it); with latencies, p50 and p99 are
// over all its operations in the block and ops/s is operations over the summed chunk
// times.
func (m *meter) block(conds [2]*Condition, spins [2]int, b int) ([]RunRecord, error) {
	r := m.run
	first := b % 2
	var idx [2]int
	var tot [2]int64
	for j := -2; j < 2*m.chunks; j++ {
		ci := first
		switch {
		case j == -1:
			ci = 1 - first
		case j >= 0 && (j%4 == 1 || j%4 == 2):
			ci = 1 - first
		}
		c := conds[ci]
		if c.Before != nil {
			if err := c.Before(); err != nil {
				return nil, fmt.Errorf("%s: before: %w", c.Name, err)
			}
		}
		r.Spin = spins[ci]
		if m.rewarm || j < 0 {
			r.N = m.per
			if j >= 0 {
				r.N = max(1, m.per/4)
			}
			r.Lat = m.warmLat
			if err := c.Run(r); err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
		}
		if j >= 0 {
			r.N = m.per
			if m.latency {
				r.Lat = m.lat[ci][idx[ci]*m.per : (idx[ci]+1)*m.per]
			}
			t0 := Now()
			err := c.Run(r)
			d := Now() - t0
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			m.ns[ci][idx[ci]] = d
			tot[ci] += d
			idx[ci]++
		}
		if c.After != nil {
			if err := c.After(); err != nil {
				return nil, fmt.Errorf("%s: after: %w", c.Name, err)
			}
		}
	}
	recs := make([]RunRecord, 0, 2)
	for pos, ci := range [2]int{first, 1 - first} {
		ns := m.ns[ci]
		slices.Sort(ns)
		rec := RunRecord{Block: b, Pos: pos, Cond: conds[ci].Name, N: m.n, Ns: tot[ci],
			Values: map[string]float64{NsPerOp: float64(ns[(len(ns)-1)/2]) / float64(m.per)}}
		if m.latency {
			l := m.lat[ci]
			slices.Sort(l)
			rec.Values[P50] = float64(l[(m.n-1)/2])
			rec.Values[P99] = float64(l[min(m.n-1, int(math.Ceil(0.99*float64(m.n)))-1)])
			rec.Values[OpsPerSec] = float64(m.n) / (float64(tot[ci]) / 1e9)
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// calibrate sizes the -inject work: it measures the base condition's metric (blocks
// of the base against itself) and the cost of one Spin iteration, and returns the
// iterations per operation that add frac of the metric.
func (m *meter) calibrate(base *Condition, metric string, frac float64) (int, float64, error) {
	var vals []float64
	for b := 0; b < 4; b++ {
		recs, err := m.block([2]*Condition{base, base}, [2]int{}, b)
		if err != nil {
			return 0, 0, err
		}
		for _, rec := range recs {
			vals = append(vals, rec.Values[metric])
		}
	}
	iterNs := SpinCost()
	k := int(math.Round(frac * Median(vals) / iterNs))
	return max(k, 1), iterNs, nil
}

// summarize computes the per-metric figures from the runs.
func (r *Result) summarize() {
	r.Summaries = map[string]Summary{}
	for _, metric := range r.Metrics() {
		b, c := r.BlockValues(metric)
		s := Summary{
			Base:  MedianCI(b, r.Confidence),
			Cond:  MedianCI(c, r.Confidence),
			Ratio: RatioCI(c, b, r.Confidence),
		}
		if u, err := MannWhitney(b, c); err == nil {
			s.UTestP = Number(u.P)
		} else {
			s.UTestP = Number(math.NaN())
		}
		r.Summaries[metric] = s
	}
}

// Metrics lists the metrics the runs carry, gate metric first.
func (r *Result) Metrics() []string {
	seen := map[string]bool{}
	var out []string
	add := func(m string) {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	add(r.Gate.Metric)
	for _, m := range []string{NsPerOp, P50, P99, OpsPerSec} {
		if len(r.Runs) > 0 {
			if _, ok := r.Runs[0].Values[m]; ok {
				add(m)
			}
		}
	}
	return out
}

// BlockValues returns, per block, the mean of the two runs of each condition.
func (r *Result) BlockValues(metric string) (base, cond []float64) {
	nb := 0
	for _, rec := range r.Runs {
		nb = max(nb, rec.Block+1)
	}
	base, cond = make([]float64, nb), make([]float64, nb)
	var nbase, ncond = make([]int, nb), make([]int, nb)
	for _, rec := range r.Runs {
		v := rec.Values[metric]
		switch rec.Cond {
		case r.Base:
			base[rec.Block] += v
			nbase[rec.Block]++
		case r.Cond:
			cond[rec.Block] += v
			ncond[rec.Block]++
		}
	}
	var ob, oc []float64
	for i := range nb {
		if nbase[i] > 0 && ncond[i] > 0 {
			ob = append(ob, base[i]/float64(nbase[i]))
			oc = append(oc, cond[i]/float64(ncond[i]))
		}
	}
	return ob, oc
}

// decide sets Verdict and Reason and reports whether the experiment may stop.
func (r *Result) decide(final bool) bool {
	s := r.Summaries[r.Gate.Metric]
	iv := s.Ratio
	if !iv.Finite() {
		if final {
			r.Verdict, r.Reason = Undecided, fmt.Sprintf("too few blocks (%d) for a %.1f%% interval", r.Blocks, 100*r.Confidence)
			return true
		}
		return false
	}
	ivs := fmtRatio(iv)
	if r.Precision > 0 && iv.HalfWidth() > r.Precision && !final {
		// Results to be saved or compared with a baseline must be precise
		// enough for the baseline's variability gate, decided or not.
		return false
	}
	switch r.Mode {
	case "aa":
		switch {
		case iv.Lo > 1 || iv.Hi < 1:
			r.Verdict, r.Reason = Fail, fmt.Sprintf("A/A flagged a difference: ratio %s excludes 1", ivs)
			return true
		case iv.Lo >= 1-Equivalence && iv.Hi <= 1+Equivalence:
			r.Verdict, r.Reason = Pass, fmt.Sprintf("A/A: no difference, ratio %s within ±%.0f%%", ivs, 100*Equivalence)
			return true
		}
	case "inject":
		want := 1 + r.Inject
		switch {
		case iv.Lo > 1:
			r.Verdict, r.Reason = Pass, fmt.Sprintf("injected %.2f%% detected: ratio %s (nominal %.4f)", 100*r.Inject, ivs, want)
			return true
		case iv.Hi < 1:
			r.Verdict, r.Reason = Fail, fmt.Sprintf("injected %.2f%% slowdown seen as a speed-up: ratio %s", 100*r.Inject, ivs)
			return true
		case iv.Hi < 1+r.Inject/2 && iv.HalfWidth() < r.Inject/4:
			r.Verdict, r.Reason = Fail, fmt.Sprintf("injected %.2f%% missed: ratio %s", 100*r.Inject, ivs)
			return true
		}
	default:
		if r.Gate.Max == 0 {
			if iv.HalfWidth() <= infoHalfWidth || final {
				r.Verdict, r.Reason = Info, fmt.Sprintf("reported, not gated: ratio %s", ivs)
				return true
			}
			return false
		}
		switch {
		case iv.Hi <= r.Gate.Max:
			r.Verdict, r.Reason = Pass, fmt.Sprintf("ratio %s <= %.3g", ivs, r.Gate.Max)
			return true
		case iv.Lo > r.Gate.Max:
			r.Verdict, r.Reason = Fail, fmt.Sprintf("ratio %s > %.3g", ivs, r.Gate.Max)
			return true
		}
	}
	if final {
		r.Verdict = Undecided
		r.Reason = fmt.Sprintf("undecided after %d blocks: ratio %s straddles the threshold", r.Blocks, ivs)
		return true
	}
	return false
}

func fmtRatio(iv Interval) string {
	return fmt.Sprintf("%.4f [%.4f,%.4f]", iv.Center, iv.Lo, iv.Hi)
}

// Figures returns the diagnostic lines of the result, the first one in the shape
// "none 1664 ns/op [1651,1678]  mark 1672 ns/op [1660,1685]  ratio 1.005 [0.998,1.012] <= 1.03".
func (r *Result) Figures() []string {
	var lines []string
	for i, metric := range r.Metrics() {
		s, ok := r.Summaries[metric]
		if !ok {
			continue
		}
		l := fmt.Sprintf("%s %s %s %s  %s %s %s %s  ratio %s", r.Base, fmtVal(s.Base.Center), metric, fmtIv(s.Base),
			r.Cond, fmtVal(s.Cond.Center), metric, fmtIv(s.Cond), fmtRatio(s.Ratio))
		if i == 0 {
			switch {
			case r.Mode == "gate" && r.Gate.Max > 0:
				l += fmt.Sprintf(" <= %.3g", r.Gate.Max)
			case r.Mode == "aa":
				l += fmt.Sprintf(" within 1±%.2f and containing 1", Equivalence)
			case r.Mode == "inject":
				l += fmt.Sprintf(" > 1 (nominal %.4f)", 1+r.Inject)
			}
		}
		if !math.IsNaN(float64(s.UTestP)) {
			l += fmt.Sprintf("  U-test p=%.3g", float64(s.UTestP))
		}
		lines = append(lines, l)
	}
	how := fmt.Sprintf("%d+%d ops interleaved A B B A / B A A B in chunks of %d", r.OpsPerRun, r.OpsPerRun, r.OpsPerRun/max(1, r.Chunks))
	lines = append(lines, fmt.Sprintf("%.3g%% intervals; %d blocks of %s; %.1f s; worker cpu %d, helper cpu %d; profile %s",
		100*r.Confidence, r.Blocks, how, r.Seconds, r.CPU.Worker, r.CPU.Helper, r.Profile))
	if r.ClockNs > 0 {
		lines = append(lines, fmt.Sprintf("per-op latencies include one clock read (%.0f ns each, measured)", r.ClockNs))
	}
	if r.Mode == "inject" {
		lines = append(lines, fmt.Sprintf("inject: %d spin iterations per op x %.3f ns = %.1f ns per op (%.2f%% of the base)",
			r.SpinPerOp, r.SpinNs, float64(r.SpinPerOp)*r.SpinNs, 100*r.Inject))
	}
	if r.Gate.Why != "" && r.Mode == "gate" {
		lines = append(lines, r.Gate.Why)
	}
	if r.Env != nil {
		lines = append(lines, r.Env.Line())
	}
	return lines
}

func fmtVal(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprint(v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func fmtIv(iv Interval) string {
	return fmt.Sprintf("[%s,%s]", fmtVal(iv.Lo), fmtVal(iv.Hi))
}

var spinSink uint64

// Spin does n iterations of a dependent multiply-add chain: work of a known,
// stable size (about one nanosecond per iteration) that the compiler cannot remove.
// It is the extra work of -inject.
func Spin(n int) {
	if n <= 0 {
		return
	}
	x := spinSink | 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	spinSink = x
}

// SpinCost measures the cost of one Spin iteration in nanoseconds (the fastest of a
// few timings of 2^20 iterations, on the calling thread).
func SpinCost() float64 {
	best := math.Inf(1)
	const iters = 1 << 20
	for i := 0; i < 9; i++ {
		t0 := time.Now()
		Spin(iters)
		best = math.Min(best, float64(time.Since(t0).Nanoseconds())/iters)
	}
	return best
}

// Now returns the monotonic clock in nanoseconds: the runtime's nanotime, a vDSO
// clock_gettime(CLOCK_MONOTONIC) without the wall-clock read of time.Now.
func Now() int64 { return nanotime() }

//go:linkname nanotime runtime.nanotime
//go:noescape
func nanotime() int64

// ClockCost measures the cost of one Now call in nanoseconds: the overhead included
// in each per-operation latency.
func ClockCost() float64 {
	best := math.Inf(1)
	const iters = 100000
	var sink int64
	for i := 0; i < 5; i++ {
		t0 := Now()
		for j := 0; j < iters; j++ {
			sink += Now() & 1
		}
		best = math.Min(best, float64(Now()-t0)/iters)
	}
	spinSink += uint64(sink)
	return best
}
