package perf

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	_ "unsafe" // go:linkname runtime.nanotime

	"github.com/fsnsuite/fsnsuite/tap"
)

// Metric names, also the units of the Go benchmark lines.
const (
	NsPerOp   = "ns/op"  // time per operation of a run: its median chunk's time / chunk size
	P50       = "p50-ns" // median per-operation latency within a run
	P99       = "p99-ns" // 99th percentile per-operation latency within a run
	OpsPerSec = "ops/s"  // operations per second over a timed run
	// CPUNs and CPUNsP99 replace P50 and P99 in experiments with CPUTime set: the
	// median and 99th percentile of per-operation CPU time (the measuring threads'
	// CLOCK_THREAD_CPUTIME_ID), which is not a latency.
	CPUNs    = "cpu-ns/op"
	CPUNsP99 = "p99-cpu-ns/op"
)

// Run is what a condition's Run function gets: perform N operations. It is reused
// from run to run, so the measured loop allocates nothing.
type Run struct {
	// N is the number of operations to perform.
	N int
	// Spin is how many Spin iterations to add to every operation (non-zero only for
	// the copy of the base condition that -inject slows down). Call Spin(r.Spin)
	// inside each operation, after the syscall. The engine sizes it in the loop
	// itself (see Measure), so where the CPU overlaps part of it with the syscall
	// the injected fraction is still the nominal one.
	Spin int
	// Lat, for experiments with Latency (CPUTime) set, receives the latency (CPU
	// time) of operation i in nanoseconds at Lat[i] (len(Lat) >= N).
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
// at or below Max. Max zero means the ratio is reported but not gated: the case
// then passes with the ReportedMarker diagnostic (counted apart from gated passes),
// unless DecidedBy names the in-run checks that gate the case instead.
type Gate struct {
	Metric string  `json:"metric"`
	Max    float64 `json:"max"`
	// Why justifies the threshold (or its absence), printed with the figures.
	Why string `json:"why,omitempty"`
	// DecidedBy, for an ungated ratio (Max zero), names the case's other gates
	// (perf_watch_add's guards): the ratio is printed without ReportedMarker.
	DecidedBy string `json:"decided_by,omitempty"`
}

// ReportedMarker starts the diagnostic line that marks a case whose measurement is
// reported, not gated: the case is "ok" because its setup verified and nothing
// failed, not because a threshold held. It is the last line the engine prints for
// the case, just before the TAP result ("# reported, not gated: ratio ..."), and
// the runner counts such cases apart from gated passes (tap.Node.ReportedOnly).
const ReportedMarker = tap.ReportedMarker

// ErrMachineVoided marks a Verify error whose cause is the machine, not the
// kernel under test: a helper thread starved of CPU so long that its queue
// overflowed (the events it would have counted are gone, so neither the
// figures nor the count can be judged). Wrap it (fmt.Errorf("...: %w",
// perf.ErrMachineVoided)): the experiment is then undecided, a skip with the
// reason (a failure under -strict), like an interval too wide to decide.
var ErrMachineVoided = errors.New("voided by the machine, not the kernel")

// Stage says when an experiment's Verify runs.
type Stage string

// Verify stages.
const (
	// VerifyBefore: after the conditions were set up, before the first block.
	VerifyBefore Stage = "before"
	// VerifyAfter: after the last block, once the Helper has stopped (a listener
	// has then read every event the measured operations queued).
	VerifyAfter Stage = "after"
)

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
	// Parallel is how many clients each perform a run's N operations
	// (perf_parent_write's crew); the sharing profile divides a chunk's
	// counts by N·Parallel. 0 means 1.
	Parallel int
	// Helper, if set, is started on the helper CPU before the first run (a listener
	// draining events) and stopped by calling the returned function after the last.
	Helper func(cpu int) (stop func() error, err error)
	// CPUTime: the conditions fill Run.Lat with each operation's CPU time (not a
	// latency); the metrics are CPUNs and CPUNsP99 instead of P50, P99, ops/s.
	CPUTime bool
	// Verify checks that the experiment measures what its name says: the mark or
	// watch with the expected mask and flags in fdinfo, the listener's event counts
	// equal to what the kernel's rules allow, the tree's size. The engine calls it
	// before the first block and after the last (mode is "gate", "aa" or
	// "inject": in the self-checks the measured condition never runs). It returns
	// one line saying what held, or an error: the experiment then fails, whatever
	// its figures. Every experiment must have one.
	Verify func(stage Stage, mode string) (string, error)
	// BaselineGate, if set, adds a verdict to the -baseline comparison (the
	// seed's variability gate of perf_watch_churn): it gets this run's result
	// and the same experiment in each baseline file (nil where absent). Its
	// verdict is combined with the engine's, the worse one winning.
	BaselineGate func(cur *Result, before []*Result) (Verdict, string)
	// Describe, if set, adds lines to the printed figures (a workload's own
	// derived figures), before the verdict, which stays the last line.
	Describe func(r *Result) []string
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
	Suite string `json:"suite"`
	Name  string `json:"name"`
	Mode  string `json:"mode"` // gate, aa or inject
	// Clock is ClockICount in instruction count mode (the metrics are then
	// InsnPerOp and its kin), "" when the figures are times.
	Clock      string  `json:"clock,omitempty"`
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
	// LookConfidence is the confidence of each look's interval (Looks.PerLook);
	// Looks is how many looks the experiment took (at most MaxLooks).
	LookConfidence float64 `json:"look_confidence"`
	Looks          int     `json:"looks"`
	// InjectCal says how -inject sized its work in the loop (calibration blocks).
	InjectCal string `json:"inject_calibration,omitempty"`
	// InjectWant, in instruction count mode, is the ratio the calibration
	// predicts for the injected work (exact there: the calibration counted
	// the instructions k iterations add in the loop).
	InjectWant float64 `json:"inject_predicted,omitempty"`
	// Verified holds what Verify found before and after measuring.
	Verified []string `json:"verified,omitempty"`
	// VerifyFailed: the check after measuring failed (the figures are void).
	VerifyFailed bool `json:"verify_failed,omitempty"`
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

// SelfCheckConfidence is the overall confidence (over all looks) of the difference
// test of -aa and -inject. It is higher than the gates' 99% because the self-check
// runs every case of a binary 100 times and must flag at most one of them.
const SelfCheckConfidence = 0.999

// Equivalence is the margin within which -aa declares "no difference": the engine
// is meant to resolve 1%.
const Equivalence = 0.01

// infoHalfWidth stops an ungated experiment once its ratio is known to ±1%.
const infoHalfWidth = 0.01

// Measure runs the experiment with the options o, until the gate is decided, the
// profile's budget is spent, or deadline (if non-zero) comes near. The interval is
// looked at on the schedule of Looks (at most MaxLooks looks, the overall error
// rate 1-confidence split evenly over them). Verify runs before the first block
// and after the last; a condition that does not hold before is an error, one that
// no longer holds after makes the result a failure.
func (e *Experiment) Measure(o *Options, deadline time.Time) (out *Result, err error) {
	if e.Base.Run == nil || e.Cond.Run == nil {
		return nil, fmt.Errorf("experiment %s: condition without Run", e.Name)
	}
	if e.Verify == nil {
		return nil, fmt.Errorf("experiment %s: no Verify: a figure whose condition was not checked (mark, watch, events) is not a result", e.Name)
	}
	prof := o.profile()
	n := e.OpsPerRun * prof.OpsScale
	if n <= 0 {
		return nil, fmt.Errorf("experiment %s: OpsPerRun must be positive", e.Name)
	}
	latency := e.Latency || e.CPUTime
	metric := e.Gate.Metric
	switch {
	case metric == "":
		metric = NsPerOp
	case metric == NsPerOp:
	case (metric == P50 || metric == P99) && e.Latency && !e.CPUTime:
	case (metric == CPUNs || metric == CPUNsP99) && e.CPUTime:
	default:
		return nil, fmt.Errorf("experiment %s: cannot gate on %q (want %s, %s/%s with Latency, %s/%s with CPUTime)",
			e.Name, metric, NsPerOp, P50, P99, CPUNs, CPUNsP99)
	}
	res := &Result{
		Suite: e.Suite, Name: e.Name, Mode: o.Mode(), Profile: prof.Name, Gate: e.Gate,
		OpsPerRun: n, Confidence: o.Confidence, Clock: o.clock(),
	}
	res.Gate.Metric = metricFor(metric, res.Clock)
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
		res.Precision = o.threshold() / 4
	}
	looks := NewLooks(prof.MinBlocks, res.Confidence)
	res.LookConfidence = looks.PerLook()
	env := CollectEnv(e.FSPath)
	res.Env = &env

	what, err := e.Verify(VerifyBefore, res.Mode)
	if err != nil {
		return nil, fmt.Errorf("experiment %s: condition does not hold before measuring: %w", e.Name, err)
	}
	res.Verified = append(res.Verified, fmt.Sprintf("verify %s: %s", VerifyBefore, what))

	plan, err := PlanCPUs()
	if err != nil {
		return nil, err
	}
	res.CPU = plan
	stopHelper := func() error { return nil }
	if e.Helper != nil {
		stop, herr := e.Helper(plan.Helper)
		if herr != nil {
			return nil, fmt.Errorf("experiment %s: start helper: %w", e.Name, herr)
		}
		stopped := false
		stopHelper = func() error {
			if stopped {
				return nil
			}
			stopped = true
			return stop()
		}
		defer func() {
			if serr := stopHelper(); serr != nil && err == nil {
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
	m := newMeter(n, chunks, latency, e.CPUTime, res.Clock)
	if m.share, err = newShareLog(e, res.Mode); err != nil {
		return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	m.sharePhase("warm")
	m.rewarm = base.Before != nil || base.After != nil || cond.Before != nil || cond.After != nil
	if e.Latency {
		res.ClockNs = ClockCost()
	}
	conds := [2]*Condition{&base, &cond}
	spins := [2]int{}

	start := time.Now()
	stopAt := start.Add(prof.Budget)
	if !deadline.IsZero() {
		// Leave room for the verdict and cleanup before the harness's deadline.
		if d := deadline.Add(-2 * time.Second); d.Before(stopAt) {
			stopAt = d
		}
	}
	chunkNs := math.Inf(1)
	for b := 0; b < max(1, prof.WarmupBlocks); b++ {
		if _, err := m.block(conds, spins, b); err != nil {
			return nil, fmt.Errorf("experiment %s: warm-up: %w", e.Name, err)
		}
		for ci := range m.ns {
			chunkNs = min(chunkNs, float64(m.ns[ci][(len(m.ns[ci])-1)/2]))
		}
	}
	// A clock that steps coarser than a fraction of a chunk (a jiffies
	// clocksource: a tick of 4 ms) gives no figure at all.
	clk := ReadClock()
	env.Clock = &clk
	if why := clk.coarseFor(chunkNs); why != "" {
		return nil, &ClockError{Msg: fmt.Sprintf("experiment %s: %s", e.Name, why)}
	}
	if res.Mode == "inject" {
		var cal calibration
		var err error
		if res.Clock == ClockICount {
			cal, err = m.calibrateExact(&base, res.Gate.Metric, o.Inject)
		} else {
			cal, err = m.calibrate(&base, res.Gate.Metric, o.Inject)
		}
		if err != nil {
			return nil, fmt.Errorf("experiment %s: calibrate -inject: %w", e.Name, err)
		}
		spins[1], res.SpinPerOp, res.SpinNs, res.InjectCal, res.InjectWant = cal.k, cal.k, cal.iterNs, cal.how, cal.want
	}
	m.sharePhase("")
	for b := 0; ; b++ {
		recs, err := m.block(conds, spins, b)
		if err != nil {
			return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
		}
		res.Runs = append(res.Runs, recs...)
		res.Blocks = b + 1
		out := res.Blocks >= prof.MaxBlocks || !time.Now().Before(stopAt)
		if looks.Due(res.Blocks, out) {
			res.Looks = looks.Taken()
			res.summarize()
			if res.decide(out || looks.Last()) {
				break
			}
		}
	}
	res.Seconds = time.Since(start).Seconds()
	if err := stopHelper(); err != nil {
		return nil, fmt.Errorf("experiment %s: helper: %w", e.Name, err)
	}
	what, err = e.Verify(VerifyAfter, res.Mode)
	if err != nil {
		res.Verified = append(res.Verified, fmt.Sprintf("verify %s: FAILED: %v", VerifyAfter, err))
		res.VerifyFailed = true
		res.Verdict = Fail
		res.Reason = fmt.Sprintf("condition does not hold after measuring, the figures are void: %v", err)
		if errors.Is(err, ErrMachineVoided) {
			res.Verdict = Undecided
			res.Reason = fmt.Sprintf("undecided: the figures are void: %v", err)
		}
		return res, nil
	}
	res.Verified = append(res.Verified, fmt.Sprintf("verify %s: %s", VerifyAfter, what))
	return res, nil
}

type meter struct {
	n       int // operations per condition per block, a multiple of chunks
	chunks  int
	per     int // operations per chunk
	latency bool
	cpu     bool // latencies are CPU times: named CPUNs/CPUNsP99, no ops/s
	run     *Run
	warmLat []int64 // latencies of untimed operations, discarded
	// rewarm: a condition changes a setting around its chunks (Before/After), so
	// every chunk of both conditions follows an untimed quarter-size warm-up.
	rewarm bool
	ns     [2][]int64 // chunk times of each condition in the current block
	lat    [2][]int64 // per-operation latencies of each condition in the block
	clock  string     // Result.Clock: the metrics' names
	share  *shareLog  // the sharing profile's markers and chunk log (nil: not in it)
}

// sharePhase names the blocks that follow in the chunk log ("warm": warm-up
// and calibration, left out of the figures).
func (m *meter) sharePhase(p string) {
	if m.share != nil {
		m.share.phase = p
	}
}

func newMeter(n, chunks int, latency, cpu bool, clock string) *meter {
	m := &meter{n: n, chunks: chunks, per: n / chunks, latency: latency, cpu: cpu, run: &Run{}, clock: clock}
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
func (m *meter) block(conds [2]*Condition, spins [2]int, b int) (_ []RunRecord, err error) {
	r := m.run
	if m.share != nil {
		// Every window the plugin closed has its line, even when the
		// block fails: the host pairs them in order.
		defer func() {
			if ferr := m.share.flush(); ferr != nil && err == nil {
				err = ferr
			}
		}()
	}
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
			if m.share != nil {
				// The measuring thread's vCPU counts while it runs the
				// chunk (a Crew leaves it while it waits for its members,
				// which join their own).
				shareStart(ci)
				shareJoin()
				shareWindowJoined = true
			}
			t0 := now()
			err := c.Run(r)
			d := now() - t0
			if m.share != nil {
				shareWindowJoined = false
				shareLeave()
				shareStop(ci)
				m.share.add(c.Name, ci, b, r.N)
			}
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
		name := func(metric string) string { return metricFor(metric, m.clock) }
		rec := RunRecord{Block: b, Pos: pos, Cond: conds[ci].Name, N: m.n, Ns: tot[ci],
			Values: map[string]float64{name(NsPerOp): float64(ns[(len(ns)-1)/2]) / float64(m.per)}}
		if m.latency {
			l := m.lat[ci]
			slices.Sort(l)
			p50, p99 := float64(l[(m.n-1)/2]), float64(l[min(m.n-1, int(math.Ceil(0.99*float64(m.n)))-1)])
			if m.cpu {
				rec.Values[name(CPUNs)], rec.Values[name(CPUNsP99)] = p50, p99
			} else {
				rec.Values[name(P50)], rec.Values[name(P99)] = p50, p99
				// A coarse clock can time a block at 0: +Inf, which -save
				// writes as a string (Number).
				rec.Values[name(OpsPerSec)] = float64(m.n) / (float64(tot[ci]) / 1e9)
			}
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// calibration is how -inject sized its work.
type calibration struct {
	k      int     // Spin iterations per operation
	iterNs float64 // one iteration alone (SpinCost)
	how    string  // the in-loop measurements, for the figures
	want   float64 // instruction count mode: the ratio k iterations give, as counted
}

// calRounds is the number of calibration rounds; each round runs one block per
// calibration k (calFactors), so the in-loop calibration is calRounds·5 blocks
// (about 0.15 s for perf_modify_overhead's 2000-operation blocks).
const calRounds = 30

// calFactors are the calibration points, as multiples of k1 (the iteration count
// that Spin's cost alone would give).
var calFactors = []float64{0.5, 1, 1.5, 2, 3}

// calibrate sizes the -inject work in the loop it slows down. Spin's cost alone
// (SpinCost, a dependent chain timed on its own) is only a first guess: inside a
// syscall loop the CPU overlaps part of the chain with the kernel's own work
// around it (out-of-order execution; nothing serializes a syscall's entry and
// exit, and making the next syscall's argument depend on the chain's result did
// not change that here), so k iterations sized from SpinCost add less than the
// nominal fraction: the added fraction is close to linear in k with an offset
// (4, 8, 12 iterations added about 1.0%, 2.9%, 4.5% to a 240 ns pwrite).
//
// The fraction that counts is the one the metric sees, so it is measured where it
// happens: the base against a copy of itself with k iterations per operation, at
// five k from k1/2 to 3·k1, in calRounds interleaved rounds (one block per k each
// round, so a change of machine state hits every k alike). Each k's added fraction
// is the median of its paired block ratios; k is where the robust line through the
// five points (Theil-Sen: the median of the pairwise slopes) reaches the nominal
// fraction, kept within [0.8·k1, 4·k1]. The floor keeps the injection from
// shrinking to nothing when a noisy machine makes the first points look dear; it
// trades accuracy for detection power: in 7 of 400 perfcheck experiments the
// machine was in a state where an iteration cost about 1.2% in the loop (0.47%
// alone) and the floor held k there, so those measured 2.9-5.2%. A first version fitted three points of 12 blocks each, placed one
// after another; its points moved by up to 2.4% between runs (8 iterations: 0.47%
// and 2.87%), and one CI run injected 0.82% for a nominal 2%. These blocks are
// thrown away; the experiment proper then measures the injection afresh.
func (m *meter) calibrate(base *Condition, metric string, frac float64) (calibration, error) {
	cal := calibration{iterNs: SpinCost()}
	baseVal, err := m.baseline(base, metric)
	if err != nil {
		return cal, err
	}
	k1 := max(1, int(math.Round(frac*baseVal/cal.iterNs)))
	var ks []int
	for _, f := range calFactors {
		k := max(1, int(math.Round(f*float64(k1))))
		if len(ks) == 0 || k != ks[len(ks)-1] {
			ks = append(ks, k)
		}
	}
	ratios := make([][]float64, len(ks))
	for r := 0; r < calRounds; r++ {
		for i, k := range ks {
			b := r*len(ks) + i
			recs, err := m.block([2]*Condition{base, base}, [2]int{0, k}, b)
			if err != nil {
				return cal, err
			}
			// recs[0] is the condition that led the block: index b%2.
			plain, spun := recs[0].Values[metric], recs[1].Values[metric]
			if b%2 == 1 {
				plain, spun = spun, plain
			}
			if plain > 0 {
				ratios[i] = append(ratios[i], spun/plain)
			}
		}
	}
	as := make([]float64, len(ks))
	pts := make([]string, len(ks))
	for i := range ks {
		as[i] = Median(ratios[i]) - 1
		pts[i] = fmt.Sprintf("%d: %.2f%%", ks[i], 100*as[i])
	}
	lo, hi := max(1, int(math.Ceil(0.8*float64(k1)))), 4*k1
	cal.k = k1
	if slope, icept, ok := theilSen(ks, as); ok && slope > 0 {
		cal.k = min(hi, max(lo, int(math.Round((frac-icept)/slope))))
	}
	cal.how = fmt.Sprintf("in the loop (iterations: added, median of %d blocks) %s: %d for %.2f%%",
		calRounds, strings.Join(pts, ", "), cal.k, 100*frac)
	return cal, nil
}

// calibrateExact sizes the -inject work in instruction count mode. Emulation
// overlaps nothing (no out-of-order execution: an iteration adds in the loop
// exactly the instructions it executes alone), but calling Spin with a
// non-zero count runs a few instructions of its own. So the base runs against
// itself with k1 and 2·k1 iterations per operation (k1 from SpinCost), three
// blocks each, and the line through the two counts (median block each) gives
// the instructions an iteration adds (slope) and the call's own (intercept).
// k is the count nearest the nominal fraction, and want is the ratio those
// counts predict for it: the experiment proper must measure that ratio.
func (m *meter) calibrateExact(base *Condition, metric string, frac float64) (calibration, error) {
	cal := calibration{iterNs: SpinCost()}
	k1 := 1
	if baseVal, err := m.baseline(base, metric); err != nil {
		return cal, err
	} else if cal.iterNs > 0 {
		k1 = max(1, int(math.Round(frac*baseVal/cal.iterNs)))
	}
	ks := [2]int{k1, 2 * k1}
	var plain, added [2]float64
	for i, k := range ks {
		var ps, as []float64
		for r := 0; r < 3; r++ {
			b := 2*i + r
			recs, err := m.block([2]*Condition{base, base}, [2]int{0, k}, b)
			if err != nil {
				return cal, err
			}
			p, q := recs[0].Values[metric], recs[1].Values[metric]
			if b%2 == 1 {
				p, q = q, p
			}
			ps, as = append(ps, p), append(as, q-p)
		}
		plain[i], added[i] = Median(ps), Median(as)
	}
	slope := (added[1] - added[0]) / float64(ks[1]-ks[0])
	icept := added[0] - slope*float64(ks[0])
	p := (plain[0] + plain[1]) / 2
	cal.k = k1
	if slope > 0 && p > 0 {
		cal.k = max(1, int(math.Round((frac*p-icept)/slope)))
		cal.want = (p + icept + slope*float64(cal.k)) / p
	}
	cal.how = fmt.Sprintf("counted in the loop (median of 3 blocks each): base %.2f %s, +%d iterations add %.2f, +%d add %.2f: %.3f per iteration + %.2f for the call; %d iterations add %.2f, predicted ratio %.6f",
		p, metric, ks[0], added[0], ks[1], added[1], slope, icept, cal.k, icept+slope*float64(cal.k), cal.want)
	return cal, nil
}

// theilSen is the Theil-Sen line y = slope*x + icept through the points: the
// median of the slopes of all pairs with distinct x, and the median of y - slope*x.
// One wild point moves it little, unlike a least-squares line. ok is false when
// the x are all equal.
func theilSen(xs []int, ys []float64) (slope, icept float64, ok bool) {
	var slopes []float64
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			if xs[i] != xs[j] {
				slopes = append(slopes, (ys[j]-ys[i])/float64(xs[j]-xs[i]))
			}
		}
	}
	if len(slopes) == 0 {
		return 0, 0, false
	}
	slope = Median(slopes)
	rest := make([]float64, len(xs))
	for i, x := range xs {
		rest[i] = ys[i] - slope*float64(x)
	}
	return slope, Median(rest), true
}

// baseline returns the median of the base condition's metric over a few blocks
// of the base against itself.
func (m *meter) baseline(base *Condition, metric string) (float64, error) {
	var vals []float64
	for b := 0; b < 4; b++ {
		recs, err := m.block([2]*Condition{base, base}, [2]int{}, b)
		if err != nil {
			return 0, err
		}
		for _, rec := range recs {
			vals = append(vals, rec.Values[metric])
		}
	}
	return Median(vals), nil
}

// summarize computes the per-metric figures from the runs.
func (r *Result) summarize() {
	r.Summaries = map[string]Summary{}
	conf := r.LookConfidence
	if conf == 0 {
		conf = r.Confidence
	}
	for _, metric := range r.Metrics() {
		b, c := r.BlockValues(metric)
		s := Summary{
			Base:  MedianCI(b, conf),
			Cond:  MedianCI(c, conf),
			Ratio: RatioCI(c, b, conf),
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
	for _, m := range []string{NsPerOp, P50, P99, OpsPerSec, CPUNs, CPUNsP99} {
		m = metricFor(m, r.Clock)
		if len(r.Runs) > 0 {
			if _, ok := r.Runs[0].Values[m]; ok {
				add(m)
			}
		}
	}
	return out
}

// Metric returns r's name for the time metric m: m itself, or in instruction
// count mode its instruction counterpart (NsPerOp is InsnPerOp there).
func (r *Result) Metric(m string) string { return metricFor(m, r.Clock) }

// Summary returns the figures of the time metric m under r's name for it
// (Metric), so a binary's Describe reads the same figures in either mode.
func (r *Result) Summary(m string) Summary { return r.Summaries[r.Metric(m)] }

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

// CostOverGate reports whether the measured cost itself failed the gate: a
// gate run (not -aa or -inject) with a threshold, whose condition held before
// and after measuring, and whose ratio interval lies above Max. Not a void
// measurement, an undecided interval or a -baseline comparison: a case whose
// gate bounds the cost a kernel fix removed confirms the fix
// (harness.T.KernelLacks) only on this.
func (r *Result) CostOverGate() bool {
	return r != nil && r.Mode == "gate" && r.Gate.Max > 0 && !r.VerifyFailed && r.Verdict == Fail
}

// decide sets Verdict and Reason and reports whether the experiment may stop.
func (r *Result) decide(final bool) bool {
	s := r.Summaries[r.Gate.Metric]
	iv := s.Ratio
	if !iv.Finite() {
		if final {
			r.Verdict, r.Reason = Undecided, fmt.Sprintf("too few blocks (%d) for a %.3g%% interval", r.Blocks, 100*r.LookConfidence)
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
	icount := r.Clock == ClockICount
	switch r.Mode {
	case "aa":
		switch {
		case iv.Lo > 1 || iv.Hi < 1:
			r.Verdict, r.Reason = Fail, fmt.Sprintf("A/A flagged a difference: ratio %s excludes 1", ivs)
			return true
		case iv.Lo >= 1-Equivalence && iv.Hi <= 1+Equivalence:
			r.Verdict, r.Reason = Pass, fmt.Sprintf("A/A: no difference, ratio %s within ±%.0f%%", ivs, 100*Equivalence)
			if icount {
				r.Reason += exactness(s)
			}
			return true
		}
	case "inject":
		want := 1 + r.Inject
		switch {
		case iv.Lo > 1 && icount && r.InjectWant > 0:
			r.Verdict, r.Reason = Pass, fmt.Sprintf("injected %.2f%% detected: measured %+.4f%%, ratio %s (nominal %.4f); the calibration counted %+.4f%% for %d iterations: %s",
				100*r.Inject, 100*(iv.Center-1), ivs, want, 100*(r.InjectWant-1), r.SpinPerOp, injectExactness(iv, r.InjectWant))
			return true
		case iv.Lo > 1:
			r.Verdict, r.Reason = Pass, fmt.Sprintf("injected %.2f%% detected: measured %+.2f%%, ratio %s (nominal %.4f)", 100*r.Inject, 100*(iv.Center-1), ivs, want)
			return true
		case iv.Hi < 1:
			r.Verdict, r.Reason = Fail, fmt.Sprintf("injected %.2f%% slowdown seen as a speed-up: ratio %s", 100*r.Inject, ivs)
			return true
		case iv.Hi < 1+r.Inject/2 && iv.HalfWidth() < r.Inject/4:
			r.Verdict, r.Reason = Fail, fmt.Sprintf("injected %.2f%% missed: ratio %s", 100*r.Inject, ivs)
			return true
		}
	default:
		if r.Gate.Max == 0 || icount {
			if iv.HalfWidth() <= infoHalfWidth || final {
				r.Verdict, r.Reason = Info, fmt.Sprintf("ratio %s", ivs)
				if icount {
					r.Reason = fmt.Sprintf("instruction count mode: %s ratio %s%s", r.Gate.Metric, ivs, exactness(s))
					if r.Gate.Max > 0 {
						// DESIGN.md: instructions are not time.
						r.Reason += fmt.Sprintf("; the time gate <= %.3g is not applied to instructions (-baseline gates the change in instructions)", r.Gate.Max)
					}
				}
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

// exactness says whether a summary's figures are exact (every block gave the
// same count: zero-width intervals), as instruction count mode should give.
func exactness(s Summary) string {
	if s.Base.Lo == s.Base.Hi && s.Cond.Lo == s.Cond.Hi && s.Ratio.Lo == s.Ratio.Hi {
		return " (exact: every block's median chunk the same count)"
	}
	return fmt.Sprintf(" (not exact: base ±%.2g%%, cond ±%.2g%%)", 100*s.Base.HalfWidth(), 100*s.Cond.HalfWidth())
}

// injectExactness compares the measured -inject ratio with the calibration's
// count.
func injectExactness(iv Interval, want float64) string {
	if d := math.Abs(iv.Center - want); d <= 1e-9*want {
		return "exact"
	} else if iv.Lo <= want && want <= iv.Hi {
		return fmt.Sprintf("within the interval (off by %.2g%%)", 100*d/want)
	}
	return fmt.Sprintf("NOT the counted ratio (off by %.2g%%)", 100*math.Abs(iv.Center-want)/want)
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
			case r.Mode == "gate" && r.Gate.Max > 0 && r.Clock == ClockICount:
				l += fmt.Sprintf(" (time gate <= %.3g not applied)", r.Gate.Max)
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
	if r.Clock == ClockICount {
		lines = append(lines, ICountNote)
		if Sharing() {
			lines = append(lines, SharingNote)
		}
	}
	how := fmt.Sprintf("%d+%d ops interleaved A B B A / B A A B in chunks of %d", r.OpsPerRun, r.OpsPerRun, r.OpsPerRun/max(1, r.Chunks))
	lines = append(lines, fmt.Sprintf("%.4g%% intervals at each of %d looks (of at most %d: %.3g%% over all); %d blocks of %s; %.1f s; worker cpu %d, helper cpu %d; profile %s",
		100*r.LookConfidence, r.Looks, MaxLooks, 100*r.Confidence, r.Blocks, how, r.Seconds, r.CPU.Worker, r.CPU.Helper, r.Profile))
	unit := "ns"
	if r.Clock == ClockICount {
		unit = "insn"
	}
	if r.ClockNs > 0 {
		lines = append(lines, fmt.Sprintf("per-op latencies include one clock read (%.0f %s each, measured)", r.ClockNs, unit))
	}
	if r.Mode == "inject" {
		lines = append(lines, fmt.Sprintf("inject: %d spin iterations per op (%.3f %s each alone); %s",
			r.SpinPerOp, r.SpinNs, unit, r.InjectCal))
	}
	if r.Gate.Why != "" && r.Mode == "gate" {
		why := r.Gate.Why
		if r.Clock == ClockICount && r.Gate.Max > 0 {
			why = "time gate, not applied here: " + why
		}
		lines = append(lines, why)
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
// It is the extra work of -inject. (A one-cycle add chain would size a 2%
// injection more finely, but inside a syscall loop its iterations cost about
// twice as much as alone, which breaks calibrate's bounds; the multiply-add
// chain costs at most what it costs alone.)
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
// In instruction count mode it counts instructions.
func Now() int64 { return nanotime() }

// now is the clock that times chunks (Now; a test puts an exact counter here).
var now = Now

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
