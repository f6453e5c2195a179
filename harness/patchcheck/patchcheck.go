// Package patchcheck runs the suite on two kernels built from one tree, the
// base and the base with a patch applied (scripts/patchcheck/build-kernels.sh
// builds them), and turns the two runs into a verdict: which leaves changed
// between pass and fail, what the explorer's scenarios recorded on the base
// do on the patched kernel, and what the patch costs the measured paths.
package patchcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/harness/sharing"
	"github.com/fsnsuite/fsnsuite/harness/vm"
	"github.com/fsnsuite/fsnsuite/tap"
)

// Kernel is one of the two kernels: a directory holding bzImage and
// release, as build-kernels.sh keeps them.
type Kernel struct {
	// Role is "base" or "patched".
	Role string `json:"role"`
	// Image is the bzImage, Release its kernel release (7.3.4-fsnbase,
	// 7.3.4-fsnp-seed004-7.3-57d70211).
	Image   string `json:"image"`
	Release string `json:"release"`
	// BuildSeconds is how long its build took (0: unknown).
	BuildSeconds float64 `json:"build_seconds,omitempty"`
}

// LoadKernel reads a kernel directory (bzImage, release, build_seconds).
func LoadKernel(role, dir string) (Kernel, error) {
	k := Kernel{Role: role, Image: filepath.Join(dir, "bzImage")}
	if _, err := os.Stat(k.Image); err != nil {
		return k, fmt.Errorf("patchcheck: %s kernel: %w", role, err)
	}
	rel, err := os.ReadFile(filepath.Join(dir, "release"))
	if err != nil {
		return k, fmt.Errorf("patchcheck: %s kernel: %w", role, err)
	}
	k.Release = strings.TrimSpace(string(rel))
	if b, err := os.ReadFile(filepath.Join(dir, "build_seconds")); err == nil {
		k.BuildSeconds, _ = strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	}
	return k, nil
}

// Config is one patchcheck.
type Config struct {
	// Suite is bin/fsnsuite (its directory holds the test binaries).
	Suite string
	// Base and Patched are the two kernels; Patch names the patch.
	Base, Patched Kernel
	Patch         string
	// Out is the directory every run and the summary go to.
	Out string
	// Scenarios is the explorer's budget per filesystem (0: no explorer
	// step); Cost runs the perf binaries on both kernels.
	Scenarios int
	Cost      bool
	// NoCorrectness leaves the correctness runs out (a step run alone:
	// the verdict then says so).
	NoCorrectness bool
	// ICount measures cost in instructions (qemu -icount: no KVM) rather
	// than time.
	ICount bool
	// SharingPlugin, when set, runs the cost step in the sharing profile
	// (the VM runner's -vm-sharing with this qemu plugin): the
	// SharingBinaries only, and the two kernels' remote-writes/op compared
	// (harness/sharing Compare) in Result.Sharing.
	SharingPlugin string
	// RunArgs are more runner flags for every run (-vm-cpus, -vm-mem).
	RunArgs []string
	// Coverage is the coverage step's report (scripts/coverage/coverage.sh
	// on the patched tree with COV_DIFF: the changed lines as the suite ran
	// them), "" when the step did not run.
	Coverage string
	// Lock, when not empty, is a file flock'ed around each VM run
	// ($FSNSUITE_VM_LOCK).
	Lock string
	// Log receives progress lines.
	Log io.Writer
	// Started is when the whole patchcheck started (patchcheck.sh's start:
	// the source fetch and kernel builds included); zero: when Run did.
	Started time.Time
	// Cache is the project's cache directory (scripts/coverage/cache-dir.sh):
	// the base kernel's runs are kept below it and reused ("": none).
	// NoBaseCache runs the base again (and keeps the new run).
	Cache       string
	NoBaseCache bool
	suiteSHA    string
	// Host is the VM host the base runs' cache key covers (qemu, the
	// accelerator, the guest's userland); nil: HostOf, once, when the
	// cache is used.
	Host *VMHost
	// CacheLockWait bounds a wait for the cache's lock (0:
	// BaseCacheLockWait).
	CacheLockWait time.Duration
	// BuildLockWait is the time the kernel builds waited for the build
	// lock of their cache directory (build-kernels.sh).
	BuildLockWait time.Duration
}

// ChangedLines is the part of a coverage report that lists the patch's
// lines ("Lines the patch changed ..." and its indented lines), or "" when
// the report has none.
func ChangedLines(report string) string {
	i := strings.Index(report, "Lines the patch changed")
	if i < 0 {
		return ""
	}
	var out []string
	for j, l := range strings.Split(report[i:], "\n") {
		if j > 0 && !strings.HasPrefix(l, "  ") {
			break
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

// Step is one run of the suite on one kernel.
type Step struct {
	Name    string   `json:"name"`
	Kernel  string   `json:"kernel"`
	Command []string `json:"command"`
	Dir     string   `json:"dir"`
	Seconds float64  `json:"seconds"`
	// VMLockWaitSeconds is the time spent waiting for the VM lock
	// (Config.Lock) before the run, not in Seconds.
	VMLockWaitSeconds float64 `json:"vm_lock_wait_seconds,omitempty"`
	// Reused is the cached base run this step's results were copied from
	// (no run), ReusedDate when that run was made.
	Reused     string    `json:"reused,omitempty"`
	ReusedDate time.Time `json:"reused_date,omitempty"`
	// Broken says why the run did not complete ("" when it did).
	Broken string `json:"broken,omitempty"`
}

// Result is what the patchcheck found.
type Result struct {
	Config *Config `json:"-"`
	Steps  []Step  `json:"steps"`
	// Correct compares the correctness runs leaf by leaf.
	Correct *runner.Diff `json:"-"`
	// Explore is the explorer's replay on the patched kernel of the
	// scenarios recorded on the base (nil: not run).
	Explore *Explore `json:"explore,omitempty"`
	// Cost compares the perf runs (nil: not run).
	Cost *runner.Diff `json:"-"`
	// CostGates are the patched run's perf leaves compared with the base
	// by -baseline: their verdicts and reasons.
	CostGates []runner.LeafChange `json:"-"`
	// Wall is the patchcheck's wall time from Config.Started (or Run's
	// start) to the end of Run, lock waits included.
	Wall time.Duration `json:"-"`
	// Sharing compares the two kernels' sharing profiles (nil: not run);
	// SharingErr says why it could not be made.
	Sharing    []sharing.Change `json:"sharing,omitempty"`
	SharingErr string           `json:"sharing_error,omitempty"`
}

// Time is where the wall time went: in all, and waiting for each lock.
type Time struct {
	WallSeconds          float64 `json:"wall_seconds"`
	VMLockWaitSeconds    float64 `json:"vm_lock_wait_seconds"`
	BuildLockWaitSeconds float64 `json:"build_lock_wait_seconds"`
	// StepSeconds is the VM runs' time (lock waits not included).
	StepSeconds float64 `json:"step_seconds"`
}

// Time sums the steps and lock waits.
func (r *Result) Time() Time {
	t := Time{WallSeconds: r.Wall.Seconds(), BuildLockWaitSeconds: r.Config.BuildLockWait.Seconds()}
	for _, s := range r.Steps {
		t.VMLockWaitSeconds += s.VMLockWaitSeconds
		t.StepSeconds += s.Seconds
	}
	return t
}

// Explore is the explorer step's outcome.
type Explore struct {
	// Scenarios is the budget per filesystem; Notes the runs' lines that
	// say how many ran.
	Scenarios int      `json:"scenarios"`
	Notes     []string `json:"notes,omitempty"`
	// Seeds are the seeds covered per filesystem (the explorer's notes).
	Seeds []Seeds `json:"seeds,omitempty"`
	// Differences are the scenarios the patched kernel does differently
	// from the base's recording, every one, each with its script.
	Differences []Difference `json:"differences,omitempty"`
	// Failures are the replay's failing leaves with no difference listed
	// (a replay that broke: the case's statement says why).
	Failures []Change `json:"failures,omitempty"`
	// BaseFailures are those of the recording run (model mismatches on
	// the base kernel: not caused by the patch).
	BaseFailures []Change `json:"base_failures,omitempty"`
}

// Changed reports whether the patch changed behaviour: a leaf between pass
// and fail, an explorer difference, or a run that broke on the patched
// kernel only.
func (r *Result) Changed() bool {
	if r.Correct != nil && r.Correct.Differs() {
		return true
	}
	if r.Explore != nil && (len(r.Explore.Differences) > 0 || len(r.Explore.Failures) > 0) {
		return true
	}
	return r.brokenOnPatchedOnly() != ""
}

func (r *Result) brokenOnPatchedOnly() string {
	broken := map[string]string{}
	for _, s := range r.Steps {
		if s.Broken != "" {
			broken[s.Name+" "+s.Kernel] = s.Broken
		}
	}
	for _, s := range r.Steps {
		if s.Kernel == "patched" && s.Broken != "" && broken[s.Name+" base"] == "" {
			return fmt.Sprintf("%s on the patched kernel: %s", s.Name, s.Broken)
		}
	}
	return ""
}

func (c *Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "patchcheck: "+format+"\n", args...)
	}
}

// Run runs every step: correctness on both kernels, then the explorer,
// then cost. A step that cannot run at all (no runner, no kernel) is an
// error; a run that breaks inside the VM is recorded and judged.
func Run(ctx context.Context, cfg *Config) (*Result, error) {
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, fmt.Errorf("patchcheck: %w", err)
	}
	res := &Result{Config: cfg}
	start := cfg.Started
	if start.IsZero() {
		start = time.Now()
	}
	defer func() { res.Wall = time.Since(start) }()
	var err error
	if !cfg.NoCorrectness {
		if res.Correct, err = cfg.correctness(ctx, res); err != nil {
			return res, err
		}
	}
	if cfg.Scenarios > 0 {
		if res.Explore, err = cfg.explore(ctx, res); err != nil {
			return res, err
		}
	}
	if cfg.Cost {
		if err := cfg.cost(ctx, res); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (c *Config) kernel(role string) Kernel {
	if role == "base" {
		return c.Base
	}
	return c.Patched
}

// suite runs the runner on one kernel into Out/NAME-ROLE and loads its
// results (nil when the run left none).
func (c *Config) suite(ctx context.Context, res *Result, name, role string, args ...string) (*runner.Results, error) {
	k := c.kernel(role)
	dir := filepath.Join(c.Out, name+"-"+role)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("patchcheck: %w", err)
	}
	full := append([]string{"-kernel", k.Image, "-results", dir}, c.RunArgs...)
	full = append(full, args...)
	st := Step{Name: name, Kernel: role, Command: append([]string{c.Suite}, full...), Dir: dir}
	// The base kernel's run is reused from the cache when the kernel
	// image, the suite build, the flags and the VM host are the same
	// (basecache.go).
	var entry baseEntry
	// A cost run is reused only where its figures are counts (instruction
	// count mode, the sharing profile): a time measured in another run is
	// not side by side with the patched kernel's (the perf engine's rule).
	cacheable := role == "base" && c.Cache != "" && (name != "cost" || countedRun(args))
	if cacheable {
		var err error
		if entry, err = c.baseKey(name, append(append([]string(nil), c.RunArgs...), args...)); err != nil {
			// The cache only saves time: without a key the base runs (and
			// the runner reports a missing qemu or file itself).
			c.logf("base cache: the %s run's key: %v: not using the cache", name, err)
			cacheable = false
		} else if c.NoBaseCache {
			c.logf("%s on the base kernel: not looking in the cache (-no-base-cache)", name)
		} else {
			e, from, ok, err := c.cachedBase(entry, dir)
			if err != nil {
				return nil, fmt.Errorf("patchcheck: %w", err)
			}
			if ok {
				if r, lerr := runner.LoadResults(dir); lerr == nil {
					st.Reused, st.ReusedDate, st.Seconds = from, e.Date, 0
					c.logf("%s on the base kernel %s: reusing the run of %s (%s; same kernel image, suite build, flags, qemu, accelerator and guest userland; -no-base-cache runs it again)",
						name, k.Release, e.Date.Format(time.RFC3339), from)
					res.Steps = append(res.Steps, st)
					return r, nil
				} else {
					c.logf("base cache: %s: %v: running it again", from, lerr)
					if err := os.RemoveAll(dir); err != nil {
						return nil, fmt.Errorf("patchcheck: %w", err)
					}
				}
			}
		}
	}
	waitStart := time.Now()
	unlock, err := vm.Lock(c.Lock, func() { c.logf("waiting for the VM lock %s", c.Lock) })
	if err != nil {
		return nil, fmt.Errorf("patchcheck: %w", err)
	}
	defer unlock()
	if w := time.Since(waitStart); w >= 100*time.Millisecond {
		st.VMLockWaitSeconds = w.Seconds()
		c.logf("waited %.0fs for the VM lock %s", w.Seconds(), c.Lock)
	}
	c.logf("%s on the %s kernel %s: %s", name, role, k.Release, strings.Join(st.Command, " "))
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, c.Suite, full...)
	cmd.Stdout = io.Discard // the TAP stream is in dir/results.tap
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	st.Seconds = time.Since(start).Seconds()
	if werr := os.WriteFile(dir+".log", stderr.Bytes(), 0o644); werr != nil {
		return nil, fmt.Errorf("patchcheck: %w", werr)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("patchcheck: interrupted: %w", ctx.Err())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return nil, fmt.Errorf("patchcheck: %s: %w", c.Suite, err)
	}
	code := 0
	if ee != nil {
		code = ee.ExitCode()
	}
	st.Broken = vm.BrokenRun(stderr.String(), code)
	r, lerr := runner.LoadResults(dir)
	if lerr != nil && st.Broken == "" {
		st.Broken = lerr.Error()
	}
	c.logf("%s on the %s kernel: %.0fs%s", name, role, st.Seconds, map[bool]string{true: ", broken: " + st.Broken, false: ""}[st.Broken != ""])
	res.Steps = append(res.Steps, st)
	if lerr != nil {
		return nil, nil
	}
	if timedOut := timeouts(r); cacheable && st.Broken == "" && timedOut > 0 {
		c.logf("base cache: the %s run has %d timed-out leaves: not cached (a host's stall must not stand for the base kernel in later patchchecks)", name, timedOut)
	} else if cacheable && st.Broken == "" {
		// Only a complete run is kept.
		entry.Date, entry.Seconds, entry.OriginalPath = start.UTC(), st.Seconds, dir
		if err := c.storeBase(entry, dir); err != nil {
			c.logf("base cache: keeping the %s run: %v (not cached)", name, err)
		}
	}
	return r, nil
}

func (c *Config) correctness(ctx context.Context, res *Result) (*runner.Diff, error) {
	var runs [2]*runner.Results
	for i, role := range []string{"base", "patched"} {
		r, err := c.suite(ctx, res, "correctness", role, "-no-perf")
		if err != nil {
			return nil, err
		}
		runs[i] = r
	}
	if runs[0] == nil || runs[1] == nil {
		return nil, nil
	}
	return runner.CompareResults(runs[0], runs[1]), nil
}

// runtest writes an LTP runtest file of lines ("tag command args") into Out.
func (c *Config) runtest(name string, lines ...string) (string, error) {
	p := filepath.Join(c.Out, name+".runtest")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("patchcheck: %w", err)
	}
	return p, nil
}

// explore records the explorer's scenarios on the base kernel and replays
// them on the patched one (-record, -against), -n Scenarios per filesystem
// with no time cap.
func (c *Config) explore(ctx context.Context, res *Result) (*Explore, error) {
	ex := &Explore{Scenarios: c.Scenarios}
	n := strconv.Itoa(c.Scenarios)
	// Generous bounds: under TCG a scenario takes tens of milliseconds.
	bound := time.Duration(c.Scenarios)*2*200*time.Millisecond + 5*time.Minute
	limits := []string{"-timeout", bound.String(), "-vm-timeout", (bound + 5*time.Minute).String()}
	rec, err := c.runtest("explore-record", "fsnotify_explore fsnotify_explore -n "+n+" -duration 0 -timeout "+bound.String()+" -record /results/explore.json")
	if err != nil {
		return nil, err
	}
	base, err := c.suite(ctx, res, "explore", "base", append(limits, "-f", rec)...)
	if err != nil {
		return nil, err
	}
	recorded := filepath.Join(c.Out, "explore-base", "explore.json")
	if base == nil {
		return ex, nil
	}
	ex.BaseFailures = failing(base)
	ex.Notes = append(ex.Notes, scenarioNotes("base", base)...)
	if _, err := os.Stat(recorded); err != nil {
		return nil, fmt.Errorf("patchcheck: the explorer's recording on the base kernel: %w", err)
	}
	// -n 0: only the recorded scenarios (the base run checked the seed
	// range against the model already).
	against, err := c.runtest("explore-against", "fsnotify_explore fsnotify_explore -n 0 -duration 0 -timeout "+bound.String()+" -against /explore-base.json")
	if err != nil {
		return nil, err
	}
	patched, err := c.suite(ctx, res, "explore", "patched", append(limits, "-f", against, "-vm-file", recorded+"=/explore-base.json")...)
	if err != nil {
		return nil, err
	}
	replays := map[string]*tap.Node{}
	if patched != nil {
		ex.Notes = append(ex.Notes, scenarioNotes("patched", patched)...)
		for _, l := range runner.Leaves(patched.Root) {
			replays[l.Path] = l.Node
			if !l.Node.Status.Failed() {
				continue
			}
			if ds := Differences(l.Path, l.Node); len(ds) > 0 {
				ex.Differences = append(ex.Differences, ds...)
			} else {
				ex.Failures = append(ex.Failures, failed(l))
			}
		}
	}
	for _, l := range runner.Leaves(base.Root) {
		if strings.Contains(l.Path, ".scenarios.") {
			ex.Seeds = append(ex.Seeds, SeedsOf(l.Path, l.Node, replays[l.Path], 1, c.Scenarios))
		}
	}
	return ex, nil
}

// failed is a failing leaf as a Change, with the case's statement.
func failed(l runner.Leaf) Change {
	return Change{Path: l.Path, After: "fail", Statement: runner.FullStatement(l.Node), Hints: runner.Hints(l.Node)}
}

// failing lists a run's failing leaves.
func failing(r *runner.Results) []Change {
	var out []Change
	for _, l := range runner.Leaves(r.Root) {
		if l.Node.Status.Failed() {
			out = append(out, failed(l))
		}
	}
	return out
}

// scenarioLine matches the explorer's notes that say how many scenarios
// ran or were compared (not the empty seed range of the -n 0 replay).
var scenarioLine = regexp.MustCompile(`[1-9]\d* scenarios`)

func scenarioNotes(role string, r *runner.Results) []string {
	var out []string
	for _, l := range runner.Leaves(r.Root) {
		for _, d := range append([]string{l.Node.Reason}, l.Node.Diagnostics...) {
			if scenarioLine.MatchString(d) {
				out = append(out, fmt.Sprintf("%s %s: %s", role, l.Path, strings.TrimSpace(d)))
				break
			}
		}
	}
	return out
}

// PerfBinaries are the perf binaries the cost step runs.
var PerfBinaries = []string{"perf_modify_overhead", "perf_open_path", "perf_parent_write", "perf_watch_add", "perf_watch_churn"}

// SharingBinaries are the perf binaries the cost step runs in the sharing
// profile: those whose cases run clients on several CPUs at once.
var SharingBinaries = []string{"perf_parent_write"}

// cost runs every perf binary on the base with -save and on the patched
// kernel with -baseline (the saved files put in the guest), in instruction
// count mode when ICount.
func (c *Config) cost(ctx context.Context, res *Result) error {
	mode := []string{"-perf"}
	if c.ICount {
		mode = []string{"-vm-icount"}
	}
	bins := PerfBinaries
	if c.SharingPlugin != "" {
		mode, bins = []string{"-vm-sharing", c.SharingPlugin}, SharingBinaries
	}
	var save, cmp []string
	var files []string
	for _, b := range bins {
		save = append(save, fmt.Sprintf("%s %s -save /results/%s", b, b, b))
		cmp = append(cmp, fmt.Sprintf("%s %s -baseline /perf-base/%s.json", b, b, b))
	}
	rt, err := c.runtest("cost-save", save...)
	if err != nil {
		return err
	}
	base, err := c.suite(ctx, res, "cost", "base", append(mode, "-f", rt)...)
	if err != nil || base == nil {
		return err
	}
	for _, b := range bins {
		f := filepath.Join(c.Out, "cost-base", b+".json")
		if _, err := os.Stat(f); err == nil {
			files = append(files, "-vm-file", f+"=/perf-base/"+b+".json")
		}
	}
	rt, err = c.runtest("cost-baseline", cmp...)
	if err != nil {
		return err
	}
	patched, err := c.suite(ctx, res, "cost", "patched", append(append(mode, "-f", rt), files...)...)
	if err != nil || patched == nil {
		return err
	}
	res.Cost = runner.CompareResults(base, patched)
	res.CostGates = baselineGates(patched)
	if c.SharingPlugin != "" {
		res.Sharing, err = compareSharing(filepath.Join(c.Out, "cost-base"), filepath.Join(c.Out, "cost-patched"))
		if err != nil {
			res.SharingErr = err.Error()
		}
	}
	return nil
}

// compareSharing analyzes both kernels' sharing records (each run's
// sharing.txt is rewritten the same way) and compares them.
func compareSharing(baseDir, patchedDir string) ([]sharing.Change, error) {
	var cases [2][]*sharing.Case
	for i, dir := range []string{baseDir, patchedDir} {
		syms := filepath.Join(dir, "kallsyms")
		if _, err := os.Stat(syms); err != nil {
			syms = ""
		}
		cs, _, err := sharing.Report(dir, syms)
		if err != nil {
			return nil, err
		}
		cases[i] = cs
	}
	return sharing.Compare(cases[0], cases[1]), nil
}

// baselineGates are the patched cost run's leaves that -baseline judged:
// each with its result and the engine's "baseline: ..." line (the change
// against the base kernel's saved run, per gated figure, and the verdict).
func baselineGates(patched *runner.Results) []runner.LeafChange {
	var out []runner.LeafChange
	for _, l := range runner.Leaves(patched.Root) {
		for _, d := range append([]string{l.Node.Reason}, l.Node.Diagnostics...) {
			if _, after, ok := strings.Cut(d, "baseline: "); ok && !strings.HasPrefix(strings.TrimSpace(d), "baseline A:") {
				out = append(out, runner.LeafChange{Path: l.Path, After: runner.ResultWord(l.Node.Status), Why: after})
				break
			}
		}
	}
	return out
}

// countedRun reports whether a cost run's flags make its figures counts, not
// times: -vm-icount or -vm-sharing (the sharing profile runs in instruction
// count mode too).
func countedRun(args []string) bool {
	for _, a := range args {
		switch strings.TrimLeft(a, "-") {
		case "vm-icount", "vm-icount=true", "vm-sharing":
			return true
		}
		if strings.HasPrefix(strings.TrimLeft(a, "-"), "vm-sharing=") {
			return true
		}
	}
	return false
}

// timeouts counts the leaves of r that timed out.
func timeouts(r *runner.Results) int {
	n := 0
	r.Root.Walk(func(_ []string, leaf *tap.Node) {
		if leaf.Status == tap.StatusTimeout {
			n++
		}
	})
	return n
}
