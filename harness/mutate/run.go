package mutate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/coverage"
	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/harness/vm"
)

// Config is one run of the mutation analysis.
type Config struct {
	// KSRC is the kernel tree the mutants are made from; it is only read.
	KSRC string
	// Src is the private copy of KSRC the kernel is built from (hard
	// links: a mutated file replaces its link with a new file, never
	// writing through it) and Build its build directory (O=).
	Src, Build string
	// Suite is bin/fsnsuite; SuiteArgs are more runner flags.
	Suite     string
	SuiteArgs []string
	// Results is the directory for the report and each mutant's files.
	Results string
	// Jobs and Nice set make's -j and niceness.
	Jobs, Nice int
	// Lock, when not empty, is a file flock'ed around each VM run (so
	// runs of several tools on one machine take turns).
	Lock string
	// VMCPUs, VMMem are the guest's CPUs and MiB; VMTimeout the limit
	// of a mutant's run (0: twice the baseline's run plus 3 minutes).
	VMCPUs, VMMem int
	VMTimeout     time.Duration
	// Lines is `make coverage`'s per-line data, nil when there is none.
	Lines *coverage.LineData
	// Equivalents are skipped (unless Force) and reported as equivalent.
	Equivalents Equivalents
	// Force runs equivalent mutants too (ID=: a chosen mutant always runs).
	Force bool
	// NoStages runs every mutant on the whole suite in one VM run. Else,
	// unless SuiteArgs choose the binaries, a mutant runs the quickest
	// binaries first and the rest only if they did not kill it
	// (PlanStages).
	NoStages bool
	// FirstKill stops a mutant's run at the first leaf that kills it
	// (killWatch): the score is the same, killed_by names that one leaf,
	// and a hung mutant costs its hung case's TIMEOUT, not the VM's.
	FirstKill bool
	// Log receives progress lines.
	Log io.Writer
	// Prior are the results an interrupted run of the same selection
	// decided (Resumable): the first len(Prior) mutants are not run again.
	// PriorBaseline is that run's baseline; this run's must be the same
	// (SameBaseline) or Run stops.
	Prior         []Result
	PriorBaseline *Baseline

	// baseObjects are the sha256 sums of fs/notify's objects in Build
	// after the unmutated build (ObjectSums), for SameObjects.
	baseObjects map[string]string
	// baseReports are the kernel bug reports of the baseline's console
	// (KernelReports): a mutant's run showing another one crashed.
	baseReports map[string]bool
}

// Result is one mutant's fate.
type Result struct {
	Mutant
	Outcome Outcome `json:"outcome"`
	// Reason: why it crashed, why it is equivalent, or the compiler's
	// first error.
	Reason   string `json:"reason,omitempty"`
	KilledBy []Leaf `json:"killed_by,omitempty"`
	// Listed is set when the mutant is in the equivalents list but was
	// run anyway (Force).
	Listed       bool    `json:"listed_equivalent,omitempty"`
	BuildSeconds float64 `json:"build_seconds,omitempty"`
	RunSeconds   float64 `json:"run_seconds,omitempty"`
	// Stages is how many of the baseline's stages it ran (0: unstaged).
	Stages int `json:"stages_run,omitempty"`
	// RanBy are the binaries that ran its line (RanBy); it was run on them
	// and on every binary after the first of them (Narrow); empty when the
	// line data could not say (all were).
	RanBy []string `json:"ran_by,omitempty"`
}

// Baseline is the unmutated kernel's build and run.
type Baseline struct {
	BuildSeconds float64 `json:"build_seconds"`
	RunSeconds   float64 `json:"run_seconds"`
	Dir          string  `json:"dir"`
	Leaves       int     `json:"leaves"`
	// Failing lists the leaves that already fail on it: a mutant cannot
	// be killed by them.
	Failing []string `json:"failing,omitempty"`
	// LeafDigest digests its leaves' paths (LeafDigest).
	LeafDigest string `json:"leaf_digest,omitempty"`
	// Stages are the runs each mutant is run in, in order (none: one run
	// of SuiteArgs' selection).
	Stages []Stage `json:"stages,omitempty"`
}

func (c *Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "mutants: "+format+"\n", args...)
	}
}

// Run builds and runs the unmutated kernel, then each mutant in turn, and
// calls done after each mutant with the results so far (to write the
// report as it grows). The source copy is restored whatever happens.
func Run(ctx context.Context, cfg *Config, ms []Mutant, done func(*Baseline, []Result) error) (*Baseline, []Result, error) {
	if cfg.Jobs <= 0 {
		cfg.Jobs = 2
	}
	// One run at a time on a source copy and build directory: a second
	// would mutate and rebuild under the first. The lock is beside the
	// directory, not in it (build-kernel.sh may remove the directory to
	// build it again: it takes this lock first).
	unlock, err := lockInUse(InUseLock(cfg.Build))
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	files, err := SourceFiles(cfg.KSRC)
	if err != nil {
		return nil, nil, err
	}
	sums := map[string]string{}
	for _, f := range files {
		if sums[f], err = FileSum(filepath.Join(cfg.KSRC, f)); err != nil {
			return nil, nil, err
		}
	}
	// A run interrupted before it restored a file left it mutated.
	for _, f := range files {
		if err := cfg.restore(f, false); err != nil {
			return nil, nil, err
		}
	}
	if err := os.MkdirAll(cfg.Results, 0o755); err != nil {
		return nil, nil, fmt.Errorf("mutate: %w", err)
	}

	base := &Baseline{Dir: filepath.Join(cfg.Results, "base")}
	cfg.logf("building the unmutated kernel in %s", cfg.Build)
	start := time.Now()
	if out, err := cfg.make(ctx); err != nil {
		return nil, nil, fmt.Errorf("mutate: the unmutated kernel does not build: %w\n%s", err, tail(out, 20))
	}
	base.BuildSeconds = time.Since(start).Seconds()
	if cfg.baseObjects, err = ObjectSums(cfg.Build); err != nil {
		return nil, nil, err
	}
	cfg.logf("unmutated kernel built in %.0fs; running the suite on it (the baseline)", base.BuildSeconds)
	rr, err := cfg.runSuite(ctx, filepath.Join(cfg.Build, "arch/x86/boot/bzImage"), base.Dir, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	base.RunSeconds = rr.Seconds
	cfg.baseReports = map[string]bool{}
	for _, r := range consoleReports(base.Dir) {
		if !cfg.baseReports[r] {
			cfg.logf("the unmutated kernel reported %q: a mutant reporting it too is not called crashed for it", r)
		}
		cfg.baseReports[r] = true
	}
	if why := rr.Broken(); why != "" {
		return nil, nil, fmt.Errorf("mutate: the baseline run broke (%s): nothing to compare mutants with (see %s)", why, base.Dir)
	}
	baseRes, err := runner.LoadResults(base.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("mutate: baseline: %w", err)
	}
	base.LeafDigest = LeafDigest(runner.Leaves(baseRes.Root))
	for _, l := range runner.Leaves(baseRes.Root) {
		base.Leaves++
		if l.Node.Status.Failed() {
			base.Failing = append(base.Failing, l.Path)
		}
	}
	cfg.logf("baseline: %d leaves, %d failing, in %.0fs", base.Leaves, len(base.Failing), base.RunSeconds)
	if len(cfg.Prior) > 0 {
		if why := SameBaseline(cfg.PriorBaseline, base); why != "" {
			return nil, nil, fmt.Errorf("mutate: cannot resume: %s; its verdicts were judged against another baseline (run again without -resume)", why)
		}
		cfg.logf("resuming: keeping the %d mutants the interrupted run decided (same selection, suite build and baseline)", len(cfg.Prior))
	}
	if !cfg.NoStages && !selectsBinaries(cfg.SuiteArgs) {
		base.Stages = PlanStages(baseRes, FirstStageShare)
		for i := range base.Stages {
			st := &base.Stages[i]
			st.Timeout = cfg.VMTimeout
			if st.Timeout <= 0 {
				st.Timeout = 2*time.Duration(st.Share*base.RunSeconds*float64(time.Second)) + 3*time.Minute
			}
			cfg.logf("stage %d: %s: %s", i+1, st, strings.Join(st.Binaries, " "))
		}
	}
	timeout := cfg.VMTimeout
	if timeout <= 0 {
		timeout = 2*time.Duration(base.RunSeconds*float64(time.Second)) + 3*time.Minute
	}

	// Each mutant's VM run goes on while the next mutant is built (the
	// build takes the CPU the guest leaves, at Nice): at most one run is
	// in flight, and the source copy is unmutated again before it starts,
	// since the run boots a copy of the mutant's bzImage. Results are
	// recorded in the sample's order: a mutant decided without a run
	// while one is in flight waits for it, so a run cut short has recorded
	// the first k mutants of the sample, the sample of k.
	var results []Result
	record := func(r Result) error {
		cfg.logf("[%d/%d] %s %s %s (%s): %s %s", len(results)+1, len(ms), r.ID, r.Where(), r.Op, r.Func, r.Outcome, r.Reason)
		results = append(results, r)
		if done != nil {
			return done(base, results)
		}
		return nil
	}
	var inflight chan runDone
	var queued []Result // decided after the one in flight, recorded after it
	land := func(d runDone) error {
		inflight = nil
		if d.err != nil {
			return d.err
		}
		if err := record(d.r); err != nil {
			return err
		}
		for len(queued) > 0 {
			r := queued[0]
			queued = queued[1:]
			if err := record(r); err != nil {
				return err
			}
		}
		return nil
	}
	// wait lands the run in flight; poll lands it only if it has ended
	// (so a finished run is recorded as soon as the loop looks).
	wait := func() error {
		if inflight == nil {
			return nil
		}
		return land(<-inflight)
	}
	poll := func() error {
		if inflight == nil {
			return nil
		}
		select {
		case d := <-inflight:
			return land(d)
		default:
			return nil
		}
	}
	decided := func(r Result) error {
		if inflight != nil {
			queued = append(queued, r)
			return nil
		}
		return record(r)
	}
	for i, m := range ms {
		if i < len(cfg.Prior) {
			// A prefix of ms, recorded before any run is in flight.
			if err := record(cfg.Prior[i]); err != nil {
				return base, results, err
			}
			continue
		}
		if err := poll(); err != nil {
			return base, results, err
		}
		if err := ctx.Err(); err != nil {
			if werr := wait(); werr != nil {
				return base, results, werr
			}
			return base, results, fmt.Errorf("mutate: interrupted: %w", err)
		}
		r := Result{Mutant: m}
		reason, listed := cfg.Equivalents[m.ID]
		ran, known := Covered(cfg.Lines, sums, &m)
		switch {
		case listed && !cfg.Force:
			r.Outcome, r.Reason = Equivalent, reason
		case known && !ran:
			r.Outcome = NotCovered
		default:
			r.Listed = listed
			stages := base.Stages
			if bins, ok := RanBy(cfg.Lines, sums, &m); ok && len(stages) > 0 {
				stages = Narrow(stages, bins, RunOrder(baseRes))
				r.RanBy = bins
			}
			kernel, err := cfg.build(ctx, &r)
			if err != nil {
				if werr := wait(); werr != nil {
					return base, results, werr
				}
				return base, results, err
			}
			if kernel != "" {
				// Decided by its run: start it once the one before is over.
				if err := wait(); err != nil {
					os.Remove(kernel)
					return base, results, err
				}
				ch := make(chan runDone, 1)
				inflight = ch
				go func(r Result) {
					err := cfg.run(ctx, baseRes, stages, &r, timeout, kernel)
					ch <- runDone{r, err}
				}(r)
				continue
			}
		}
		if err := decided(r); err != nil {
			wait()
			return base, results, err
		}
	}
	if err := wait(); err != nil {
		return base, results, err
	}
	return base, results, nil
}

// PanicOnReport is the kernel command line of every run: an oops or a
// WARN panics (kernel/panic.c: oops=panic sets panic_on_oops, panic_on_warn).
const PanicOnReport = "oops=panic panic_on_warn=1"

// splitVMAppend takes the -vm-append flags out of runner flags and returns
// the rest with their values joined: the runner keeps only the last
// -vm-append, so a user's would otherwise drop PanicOnReport.
func splitVMAppend(args []string) (rest []string, appendLine string) {
	var parts []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "vm-append" {
			rest = append(rest, a)
			continue
		}
		if !hasVal && i+1 < len(args) {
			i++
			val = args[i]
		}
		if val != "" {
			parts = append(parts, val)
		}
	}
	return rest, strings.Join(parts, " ")
}

// InUseLock is the file `fsnsuite mutants` holds locked while it uses the
// build directory build (DIR/build): DIR.in-use, beside DIR.
func InUseLock(build string) string { return filepath.Dir(build) + ".in-use" }

// lockInUse takes the in-use lock or fails at once, naming it: a second
// campaign on one directory is a mistake to report, not to wait for.
func lockInUse(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("mutate: another fsnsuite mutants (or a rebuild by build-kernel.sh) is using %s (%s is locked: %v)", filepath.Dir(path), path, err)
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

// runDone is the end of a mutant's run in the background.
type runDone struct {
	r   Result
	err error
}

// FileSum is the hex sha256 of a file's content (coverage.LineFile.SHA256).
func FileSum(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("mutate: %w", err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

// build applies one mutant, builds the kernel, copies its bzImage into the
// mutant's results directory and reverts the source. It returns that
// copy's path, or "" when the build decided the outcome (it did not
// compile, or compiled to the unmutated objects).
func (c *Config) build(ctx context.Context, r *Result) (kernel string, err error) {
	dir := filepath.Join(c.Results, r.ID)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("mutate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("mutate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mutant.diff"), []byte(r.Diff), 0o644); err != nil {
		return "", fmt.Errorf("mutate: %w", err)
	}
	if err := c.apply(&r.Mutant); err != nil {
		return "", err
	}
	defer func() {
		if rerr := c.restore(r.File, true); rerr != nil && err == nil {
			kernel, err = "", rerr
		}
	}()
	start := time.Now()
	out, berr := c.make(ctx)
	r.BuildSeconds = time.Since(start).Seconds()
	if werr := os.WriteFile(filepath.Join(dir, "build.log"), out, 0o644); werr != nil {
		return "", fmt.Errorf("mutate: %w", werr)
	}
	if berr != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("mutate: interrupted: %w", ctx.Err())
		}
		r.Outcome, r.Reason = BuildFailed, firstError(out)
		return "", nil
	}
	if same, err := c.sameObjects(r.File); err != nil {
		return "", err
	} else if same {
		r.Outcome, r.Reason = SameCode, SameObjectsReason
		return "", nil
	}
	// The runner checks the guest kernel's configuration before booting
	// (vm.findKernelConfig looks for "config" beside the image).
	kernel = filepath.Join(dir, "bzImage")
	if err := copyFile(filepath.Join(c.Build, "arch/x86/boot/bzImage"), kernel); err != nil {
		return "", err
	}
	if err := copyFile(filepath.Join(c.Build, ".config"), filepath.Join(dir, "config")); err != nil {
		os.Remove(kernel)
		return "", err
	}
	return kernel, nil
}

// run runs one built mutant's kernel: in one run, or stage by stage until
// a stage's verdict is not Survived. The kernel copy is removed after.
func (c *Config) run(ctx context.Context, base *runner.Results, stages []Stage, r *Result, timeout time.Duration, kernel string) error {
	defer os.Remove(kernel)
	defer os.Remove(filepath.Join(filepath.Dir(kernel), "config"))
	dir := filepath.Dir(kernel)
	runs := [][]string{nil}
	timeouts := []time.Duration{timeout}
	if len(stages) > 0 {
		runs, timeouts = nil, nil
		for _, st := range stages {
			runs = append(runs, []string{"-run", st.RunFlag()})
			timeouts = append(timeouts, st.Timeout)
		}
	}
	var logs bytes.Buffer
	for i, extra := range runs {
		name := "run"
		if len(runs) > 1 {
			name = fmt.Sprintf("run%d", i+1)
			fmt.Fprintf(&logs, "== stage %d: -run %s (VM timeout %s)\n", i+1, extra[1], timeouts[i])
		}
		var watch *killWatch
		if c.FirstKill {
			watch = newKillWatch(base, nil)
		}
		rr, err := c.runSuite(ctx, kernel, filepath.Join(dir, name), timeouts[i], watch, extra...)
		if err != nil {
			return err
		}
		r.RunSeconds += rr.Seconds
		logs.WriteString(rr.Stderr)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("mutate: interrupted: %w", err)
		}
		var v Verdict
		if first := watch.killed(); first != nil {
			fmt.Fprintf(&logs, "== stopped at the first failing leaf %s (-first-kill)\n", first.Path)
			v = Verdict{Outcome: Killed, KilledBy: []Leaf{*first}}
		} else {
			v = Judge(base, rr)
		}
		if v.Outcome == Survived {
			// The kernel's own assertions saw the mutant where no leaf did.
			if rep := c.newReport(filepath.Join(dir, name)); rep != "" {
				v.Outcome, v.Reason = Crashed, "the kernel reported a bug the unmutated kernel did not: "+rep
			}
		}
		r.Outcome, r.Reason, r.KilledBy = v.Outcome, v.Reason, v.KilledBy
		if len(runs) > 1 {
			r.Stages = i + 1
		}
		if v.Outcome != Survived {
			break
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "run.log"), logs.Bytes(), 0o644); err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	return nil
}

// copyFile copies src to dst (a new file).
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	return nil
}

// SameObjectsReason is the reason of a SameCode mutant: the compiler made
// the same code of it (SameObjects).
const SameObjectsReason = "compiled to the same object code as the unmutated source in this build: every object of fs/notify is byte for byte the one of the unmutated kernel (trivial compiler equivalence), so no run of this kernel can tell the two apart; with another configuration (e.g. a call that is an empty inline here) the mutant may change the code"

// ObjectSums returns the sha256 of every object file (*.o) under
// build/fs/notify, by path relative to build. Every mutated line is in
// fs/notify (a .c file, or a header there that only fs/notify includes), so
// these are the objects a mutant can change.
func ObjectSums(build string) (map[string]string, error) {
	sums := map[string]string{}
	root := filepath.Join(build, "fs", "notify")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".o") {
			return err
		}
		sum, err := FileSum(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(build, path)
		sums[rel] = sum
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("mutate: objects of fs/notify in %s: %w", build, err)
	}
	if len(sums) == 0 {
		return nil, fmt.Errorf("mutate: no object file under %s: is %s the build directory?", root, build)
	}
	return sums, nil
}

// SameObjects reports whether two ObjectSums are equal: the same objects,
// each with the same content.
func SameObjects(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// sameObjects reports whether the mutant of file (relative to Src) just
// built compiled to the unmutated kernel's fs/notify objects. False when no
// base was recorded, and when make rewrote no object under fs/notify since
// the mutated file was written (a build that did not see the change, e.g.
// a clock or cache out of step, must not read as equivalence: the mutant is
// then run like any other).
func (c *Config) sameObjects(file string) (bool, error) {
	if len(c.baseObjects) == 0 {
		return false, nil
	}
	st, err := os.Stat(filepath.Join(c.Src, file))
	if err != nil {
		return false, fmt.Errorf("mutate: %w", err)
	}
	if rebuilt, err := rewrittenSince(c.Build, st.ModTime()); err != nil || !rebuilt {
		return false, err
	}
	now, err := ObjectSums(c.Build)
	if err != nil {
		return false, err
	}
	return SameObjects(c.baseObjects, now), nil
}

// rewrittenSince reports whether an object under build/fs/notify was
// written at or after t.
func rewrittenSince(build string, t time.Time) (bool, error) {
	found := false
	err := filepath.WalkDir(filepath.Join(build, "fs", "notify"), func(path string, d os.DirEntry, err error) error {
		if err != nil || found || d.IsDir() || !strings.HasSuffix(path, ".o") {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		found = !info.ModTime().Before(t)
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("mutate: objects of fs/notify in %s: %w", build, err)
	}
	return found, nil
}

// apply writes the mutated file into the source copy as a new file (the
// copy's hard link to KSRC is replaced, not written through).
func (c *Config) apply(m *Mutant) error {
	orig, err := os.ReadFile(filepath.Join(c.KSRC, m.File))
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	lines := bytes.SplitAfter(orig, []byte("\n"))
	if m.Line < 1 || m.Line > len(lines) || string(bytes.TrimSuffix(lines[m.Line-1], []byte("\n"))) != m.Orig {
		return fmt.Errorf("mutate: %s in %s is not the line mutant %s was made from", m.Where(), c.KSRC, m.ID)
	}
	lines[m.Line-1] = []byte(m.New + "\n")
	if err := c.replace(m.File, bytes.Join(lines, nil)); err != nil {
		return err
	}
	return nil
}

// restore puts KSRC's content of file back into the source copy, as a new
// file with the current time (so make rebuilds the object a mutant left
// behind). Unless always, a file whose content already matches is left as
// it is.
func (c *Config) restore(file string, always bool) error {
	orig, err := os.ReadFile(filepath.Join(c.KSRC, file))
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	if !always {
		have, err := os.ReadFile(filepath.Join(c.Src, file))
		if err == nil && bytes.Equal(have, orig) {
			return nil
		}
		c.logf("restoring %s in %s (left mutated by an earlier run)", file, c.Src)
	}
	return c.replace(file, orig)
}

// replace writes content to file in the source copy through a new file
// renamed over it, and checks that KSRC's file is not the one written.
func (c *Config) replace(file string, content []byte) error {
	dst := filepath.Join(c.Src, file)
	tmp := dst + ".fsnsuite-mutant"
	if err := os.WriteFile(tmp, content, 0o644); err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("mutate: %w", err)
	}
	a, err := os.Stat(dst)
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	b, err := os.Stat(filepath.Join(c.KSRC, file))
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	if os.SameFile(a, b) {
		return fmt.Errorf("mutate: %s is %s itself, not a copy", dst, filepath.Join(c.KSRC, file))
	}
	return nil
}

// make builds the bzImage incrementally and returns make's output.
func (c *Config) make(ctx context.Context) ([]byte, error) {
	args := []string{"-n", strconv.Itoa(c.Nice), "make", "-s", "-C", c.Src, "O=" + c.Build, "-j" + strconv.Itoa(c.Jobs), "bzImage"}
	cmd := exec.CommandContext(ctx, "nice", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("make: %w", err)
	}
	return out, nil
}

// runSuite runs the correctness suite on kernel (a bzImage) into dir.
// extra are runner flags for this run only, after SuiteArgs.
//
// A watch, when not nil, reads the runner's TAP stream: once it sees a
// leaf that kills the mutant, the runner is sent SIGTERM (it stops its
// guest and exits) and the run's exit status is not an error.
func (c *Config) runSuite(ctx context.Context, kernel, dir string, timeout time.Duration, watch *killWatch, extra ...string) (RunResult, error) {
	if err := os.RemoveAll(dir); err != nil {
		return RunResult{}, fmt.Errorf("mutate: %w", err)
	}
	cpus := c.VMCPUs
	if cpus <= 0 {
		cpus = 2
	}
	// A kernel bug report ends the run at once (a panic: crashed), where
	// the task that hit it would otherwise hang the run until its timeout
	// (minutes); the baseline runs so too, so a kernel that warns unmutated
	// stops the analysis instead of hiding every mutant's warning. Runner
	// flags in SuiteArgs come later and win.
	suiteArgs, userAppend := splitVMAppend(c.SuiteArgs)
	appendLine := PanicOnReport
	if userAppend != "" {
		appendLine += " " + userAppend
	}
	args := []string{"-kernel", kernel, "-no-perf", "-results", dir, "-vm-append", appendLine,
		"-j=" + strconv.Itoa(cpus), "-vm-cpus", strconv.Itoa(cpus)}
	if c.VMMem > 0 {
		args = append(args, "-vm-mem", strconv.Itoa(c.VMMem))
	}
	if timeout > 0 {
		args = append(args, "-vm-timeout", timeout.String())
	}
	args = append(args, suiteArgs...)
	args = append(args, extra...)
	unlock, err := vm.Lock(c.Lock, func() { c.logf("waiting for the VM lock %s", c.Lock) })
	if err != nil {
		return RunResult{}, fmt.Errorf("mutate: %w", err)
	}
	defer unlock()
	var stderr bytes.Buffer
	start := time.Now()
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	cmd := exec.CommandContext(runCtx, c.Suite, args...)
	cmd.Stdout = io.Discard // the TAP stream is in dir/results.tap
	if watch != nil {
		// The stream is kept (dir/stream.tap): a run stopped early has
		// no results.tap from its guest.
		watch.stop = stopRun
		cmd.Stdout = watch
	}
	// The runner stops its guest and removes its work files on SIGTERM
	// (qemu also dies with it: Pdeathsig); SIGKILL only if it has not
	// exited within runnerStopWait.
	cmd.Cancel = func() error { return cmd.Process.Signal(unix.SIGTERM) }
	cmd.WaitDelay = runnerStopWait
	cmd.Stderr = &stderr
	err = cmd.Run()
	rr := RunResult{Stderr: stderr.String(), Dir: dir, Seconds: time.Since(start).Seconds()}
	if watch != nil {
		werr := os.MkdirAll(dir, 0o755)
		if werr == nil {
			werr = os.WriteFile(filepath.Join(dir, "stream.tap"), watch.stream(), 0o644)
		}
		if werr != nil {
			return rr, fmt.Errorf("mutate: %w", werr)
		}
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return rr, fmt.Errorf("mutate: interrupted: %w", ctx.Err())
	case watch.killed() != nil:
		// Stopped by the watch: its leaf is the verdict.
		if errors.As(err, &ee) {
			rr.ExitCode = ee.ExitCode()
		}
	case errors.As(err, &ee):
		rr.ExitCode = ee.ExitCode()
	default:
		return rr, fmt.Errorf("mutate: %s: %w", c.Suite, err)
	}
	return rr, nil
}

// runnerStopWait is how long a runner sent SIGTERM (an interrupted run, a
// run stopped at its first killing leaf) has to stop its guest and exit.
const runnerStopWait = time.Minute

// firstError is the compiler's first "error:" line of a build log.
func firstError(out []byte) string {
	for _, l := range bytes.Split(out, []byte("\n")) {
		if bytes.Contains(l, []byte("error:")) {
			return string(bytes.TrimSpace(l))
		}
	}
	return string(bytes.TrimSpace(tail(out, 1)))
}

func tail(b []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}
