package perf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/fixture"
)

// FileFormat identifies files written by -save.
const FileFormat = "fsnsuite-perf/1"

// SavedFile is the JSON document written by -save: every sample of every
// experiment of one binary run, with the environment.
type SavedFile struct {
	Format  string    `json:"format"`
	Suite   string    `json:"suite"`
	Env     *Env      `json:"env"`
	Results []*Result `json:"results"`
}

// Find returns the saved result of the experiment name measured in mode, or nil.
func (f *SavedFile) Find(name, mode string) *Result {
	for _, r := range f.Results {
		if r.Name == name && r.Mode == mode {
			return r
		}
	}
	return nil
}

// recorder keeps the results of this process for -save.
var recorder struct {
	sync.Mutex
	file SavedFile
}

// resetRecorder forgets what Record gathered (for tests that run in one process).
func resetRecorder() {
	recorder.Lock()
	defer recorder.Unlock()
	recorder.file = SavedFile{}
}

// Record adds r to the results of this process and, when o.Save is set, rewrites the
// JSON file and its Go benchmark companion (so a run cut short still leaves every
// finished experiment on disk).
func Record(r *Result, o *Options) error {
	recorder.Lock()
	defer recorder.Unlock()
	f := &recorder.file
	f.Format, f.Suite = FileFormat, r.Suite
	if f.Env == nil {
		f.Env = r.Env
	}
	f.Results = append(f.Results, r)
	switch {
	case o.Save == "":
		return nil
	case o.saveDir > 0:
		return f.saveAt(o.saveDir, o.Save)
	}
	return f.Save(o.Save)
}

// SavePaths names the two files -save NAME writes: NAME.json (every sample and
// the environment, read back by -baseline) and NAME.txt (Go benchmark lines
// for benchstat), after dropping a .json or .txt ending from NAME, so that
// "-save old.txt" never writes JSON into old.txt.
func SavePaths(name string) (jsonPath, benchPath string) {
	stem := strings.TrimSuffix(strings.TrimSuffix(name, ".json"), ".txt")
	return stem + ".json", stem + ".txt"
}

// BenchPath returns the name of the Go benchmark file written beside the JSON file
// path: x.json gives x.txt, anything else gets .txt appended.
func BenchPath(path string) string {
	if p, ok := strings.CutSuffix(path, ".json"); ok {
		return p + ".txt"
	}
	return path + ".txt"
}

// Save writes f as JSON to path and in Go benchmark format to BenchPath(path).
func (f *SavedFile) Save(path string) error {
	dfd, abs, err := fixture.OutputDir(path)
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	defer unix.Close(dfd)
	return f.saveAt(dfd, abs)
}

// saveAt writes the two files into the directory open as dfd, under the base names
// of path and BenchPath(path).
func (f *SavedFile) saveAt(dfd int, path string) error {
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := fixture.WriteFileAt(dfd, filepath.Base(path), append(b, '\n')); err != nil {
		return fmt.Errorf("save results: %w", err)
	}
	var buf bytes.Buffer
	if err := f.WriteBench(&buf); err != nil {
		return err
	}
	if err := fixture.WriteFileAt(dfd, filepath.Base(BenchPath(path)), buf.Bytes()); err != nil {
		return fmt.Errorf("save results: %w", err)
	}
	return nil
}

// Load reads a file written by Save.
func Load(path string) (*SavedFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load baseline: %w", err)
	}
	var f SavedFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("load baseline %s: %w", path, err)
	}
	if f.Format != FileFormat {
		return nil, fmt.Errorf("load baseline %s: format %q, want %q", path, f.Format, FileFormat)
	}
	return &f, nil
}

// BenchName turns a suite name into a benchmark name: perf_modify_overhead gives
// BenchmarkModifyOverhead.
func BenchName(suite string) string {
	var b strings.Builder
	b.WriteString("Benchmark")
	for _, w := range strings.Split(strings.TrimPrefix(suite, "perf_"), "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// WriteBench writes every timed run as a Go benchmark line,
//
//	BenchmarkModifyOverhead/case=mark_inotify/cond=none-2  2000  1664 ns/op
//
// and every block's paired ratio as a line with the unit "ratio" under
// cond=<cond>:<base>, after a header of configuration lines (goos, goarch, cpu,
// kernel, ...), so that benchstat old.txt new.txt compares two saved runs.
func (f *SavedFile) WriteBench(w io.Writer) error {
	var b strings.Builder
	b.WriteString("goos: linux\n")
	fmt.Fprintf(&b, "goarch: %s\n", runtime.GOARCH)
	fmt.Fprintf(&b, "pkg: github.com/fsnsuite/fsnsuite/tests/%s\n", f.Suite)
	if f.Env != nil {
		fmt.Fprintf(&b, "cpu: %s\n", f.Env.CPUModel)
		fmt.Fprintf(&b, "kernel: %s\n", f.Env.Kernel)
		fmt.Fprintf(&b, "nproc: %d\n", f.Env.NumCPU)
	}
	procs := runtime.GOMAXPROCS(0)
	for _, r := range f.Results {
		fmt.Fprintf(&b, "mode: %s\nprofile: %s\n", r.Mode, r.Profile)
		clock := "time"
		if r.Clock != "" {
			clock = r.Clock // benchstat keeps configuration lines apart: icount is not compared with time
		}
		fmt.Fprintf(&b, "clock: %s\n", clock)
		name := BenchName(r.Suite) + "/case=" + r.Name
		metrics := r.Metrics()
		for _, rec := range r.Runs {
			fmt.Fprintf(&b, "%s/cond=%s-%d\t%d", name, rec.Cond, procs, rec.N)
			for _, m := range metrics {
				if v, ok := rec.Values[m]; ok && finite(v) {
					fmt.Fprintf(&b, "\t%s %s", benchVal(v), m)
				}
			}
			b.WriteByte('\n')
		}
		for _, m := range metrics {
			base, cond := r.BlockValues(m)
			unit := "ratio"
			if m != r.Metric(NsPerOp) {
				unit = m + "-ratio"
			}
			for i := range base {
				if base[i] > 0 && finite(cond[i]/base[i]) {
					fmt.Fprintf(&b, "%s/cond=%s:%s-%d\t1\t%.6f %s\n", name, r.Cond, r.Base, procs, cond[i]/base[i], unit)
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("write benchmark lines: %w", err)
	}
	return nil
}

func benchVal(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// TB is the part of the harness's *T the engine reports through. harness.T (and
// testing.T) satisfy it; Notef (always-printed diagnostics), Strict() bool and
// Deadline() are used when present.
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Check measures e with the command-line options, prints its figures, records it
// for -save, compares it with each -baseline, and reports the verdict on t: pass,
// failure (t.Errorf), or for an undecided interval a skip whose reason carries the
// interval (a failure under -strict). It returns the result, or nil if the
// experiment could not run (already reported as a failure).
func Check(t TB, e *Experiment) *Result {
	t.Helper()
	return CheckWith(t, e, Flags)
}

// CheckWith is Check with explicit options.
func CheckWith(t TB, e *Experiment, o *Options) *Result {
	t.Helper()
	res, err := e.Measure(o, deadlineOf(t))
	var ce *ClockError
	if errors.As(err, &ce) {
		// Never a figure from a clock that cannot time a chunk.
		t.Skipf("%v", ce)
		return nil
	}
	if err != nil {
		t.Errorf("%v", err)
		return nil
	}
	note := noter(t)
	for _, l := range res.Verified[:1] {
		note("%s", l)
	}
	for _, l := range res.Figures() {
		note("%s", l)
	}
	if e.Describe != nil {
		for _, l := range e.Describe(res) {
			note("%s", l)
		}
	}
	for _, l := range res.Verified[1:] {
		note("%s", l)
	}
	for _, m := range res.Measurements() {
		note("%s", m) // machine-readable: LAVA, KCIDB and the HTML report read these
	}
	if g, ok := res.GateMeasurement(); ok {
		note("%s", g) // the threshold, machine-readable: the report draws it
	}
	if err := Record(res, o); err != nil {
		t.Errorf("%v", err)
	}
	v, reason := res.Verdict, res.Reason
	if len(o.Baselines) > 0 {
		bv, breason, lines, err := compareWithFiles(res, o)
		if err != nil {
			t.Errorf("%v", err)
		}
		for _, l := range lines {
			note("%s", l)
		}
		v, reason = worse(v, reason, bv, breason)
		if e.BaselineGate != nil && err == nil {
			var before []*Result
			for _, p := range o.Baselines {
				f, _ := loadCached(p) // loaded above
				before = append(before, f.Find(res.Name, res.Mode))
			}
			gv, greason := e.BaselineGate(res, before)
			v, reason = worse(v, reason, gv, "baseline: "+greason)
		}
	}
	if res.VerifyFailed {
		// The measurement's setup did not hold: the figures are void,
		// and the case's kernel fix (the gate's subject) was not judged.
		if h, ok := t.(interface{ NoKernelHint(string) }); ok {
			h.NoKernelHint("the measurement's own setup check failed (verify), so the gate's kernel fix was not judged")
		}
	}
	if v == Info && res.Gate.DecidedBy != "" {
		note("ratio reported; the case is gated by %s: %s", res.Gate.DecidedBy, reason)
		return res
	}
	finish(t, note, v, reason, o)
	return res
}

// noter returns t's always-printed diagnostic (Notef) if it has one, else Logf.
func noter(t TB) func(string, ...any) {
	if n, ok := t.(interface{ Notef(string, ...any) }); ok {
		return n.Notef // always printed, also for passing cases
	}
	return t.Logf
}

// Reported marks a case that measures without a gate (its figures are printed,
// its setup was verified, no threshold decides it): it prints the ReportedMarker
// line, which must be the case's last diagnostic. The engine does this itself for
// an experiment with Gate.Max zero; call it for measurements made outside it.
func Reported(t TB, format string, args ...any) {
	t.Helper()
	noter(t)("%s %s", ReportedMarker, fmt.Sprintf(format, args...))
}

// worse combines two verdicts: a failure wins, then undecided, then pass.
func worse(v1 Verdict, r1 string, v2 Verdict, r2 string) (Verdict, string) {
	rank := func(v Verdict) int {
		switch v {
		case Fail:
			return 3
		case Undecided:
			return 2
		case Pass:
			return 1
		}
		return 0
	}
	switch {
	case rank(v2) > rank(v1):
		return v2, r2 + "; " + r1
	case rank(v2) == rank(v1) && r2 != "":
		return v1, r1 + "; " + r2
	}
	return v1, r1
}

func finish(t TB, note func(string, ...any), v Verdict, reason string, o *Options) {
	t.Helper()
	switch v {
	case Fail:
		t.Errorf("%s", reason)
	case Undecided:
		if o.Strict || isStrict(t) {
			t.Errorf("undecided (failure under -strict): %s", reason)
			return
		}
		t.Skipf("%s", reason)
	case Info:
		note("%s %s", ReportedMarker, reason)
	default:
		note("%s", reason)
	}
}

func isStrict(t TB) bool {
	if s, ok := t.(interface{ Strict() bool }); ok {
		return s.Strict()
	}
	return os.Getenv("FSNSUITE_STRICT") == "1"
}
