package patchcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/tap"
)

// fakeSuite is a runner stand-in: it copies the results directory made for
// the kernel it is given (its directory's name: base or patched) into
// -results, writes a -record file when a runtest line asks for one, and
// logs its arguments.
const fakeSuite = `#!/bin/sh
log=$(dirname "$0")/calls
echo "$*" >>"$log"
while [ $# -gt 0 ]; do
	case $1 in
	-kernel) k=$2; shift ;;
	-results) r=$2; shift ;;
	-f) f=$2; shift ;;
	esac
	shift
done
role=$(basename "$(dirname "$k")")
mkdir -p "$r"
cp "$(dirname "$0")/$role/"* "$r/"
if [ -n "${f:-}" ] && grep -q -- '-record /results/explore.json' "$f"; then echo '{}' >"$r/explore.json"; fi
exit 0
`

// results writes a results directory with one binary and the given leaves
// (name -> status) into dir.
func writeResults(t *testing.T, dir, kernel string, leaves map[string]tap.Status) {
	t.Helper()
	var ns []*tap.Node
	for _, name := range []string{"a", "b"} {
		if st, ok := leaves[name]; ok {
			ns = append(ns, &tap.Node{Name: name, Status: st})
		}
	}
	writeNodes(t, dir, kernel, ns...)
}

// writeNodes writes a results directory with one binary, inotify_api,
// whose leaves are the given nodes.
func writeNodes(t *testing.T, dir, kernel string, leaves ...*tap.Node) {
	t.Helper()
	bin := &tap.Node{Name: "inotify_api", Number: 1}
	for _, n := range leaves {
		n.Number = len(bin.Children) + 1
		bin.Children = append(bin.Children, n)
		if n.Status == tap.StatusFail {
			bin.Status = tap.StatusFail
		}
	}
	bin.Plan = len(bin.Children)
	root := &tap.Node{Version: "TAP version 13", Plan: 1, Children: []*tap.Node{bin}}
	assert.NilError(t, os.MkdirAll(dir, 0o755))
	f, err := os.Create(filepath.Join(dir, "results.json"))
	assert.NilError(t, err)
	assert.NilError(t, tap.WriteJSON(f, root))
	f.Close()
	b, err := json.Marshal(runner.RunInfo{Suite: "fsnsuite", Kernel: kernel, Start: time.Now()})
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644))
}

func setup(t *testing.T, base, patched map[string]tap.Status) *Config {
	root := t.TempDir()
	suite := filepath.Join(root, "fsnsuite")
	assert.NilError(t, os.WriteFile(suite, []byte(fakeSuite), 0o755))
	writeResults(t, filepath.Join(root, "base"), "7.3.4-fsnbase", base)
	writeResults(t, filepath.Join(root, "patched"), "7.3.4-fsnpatched", patched)
	return &Config{
		Suite:   suite,
		Base:    Kernel{Role: "base", Image: filepath.Join(root, "base", "bzImage"), Release: "7.3.4-fsnbase"},
		Patched: Kernel{Role: "patched", Image: filepath.Join(root, "patched", "bzImage"), Release: "7.3.4-fsnpatched"},
		Patch:   "x.patch", Out: filepath.Join(root, "out"),
		Host: hostCopy(),
	}
}

// testHost stands for the machine's qemu, accelerator and guest userland
// (HostOf would run qemu -version).
var testHost = VMHost{QEMUVersion: "QEMU emulator version 8.2.2", QEMUSHA256: "q1", Accel: "tcg",
	Userland: []string{"/bin/busybox sha256:b1", "/usr/sbin/mke2fs sha256:m1"}}

func hostCopy() *VMHost {
	h := testHost
	h.Userland = append([]string(nil), testHost.Userland...)
	return &h
}

// A leaf that passes on the base and fails on the patched kernel is the
// verdict "behaviour changed"; a leaf failing on both is listed apart.
func TestCorrectnessChanged(t *testing.T) {
	cfg := setup(t, map[string]tap.Status{"a": tap.StatusPass, "b": tap.StatusFail}, map[string]tap.Status{"a": tap.StatusFail, "b": tap.StatusFail})
	res, err := Run(context.Background(), cfg)
	assert.NilError(t, err)
	assert.Assert(t, res.Changed())
	assert.Equal(t, res.Verdict(), "BEHAVIOUR CHANGED")
	var b strings.Builder
	assert.NilError(t, res.WriteText(&b))
	out := b.String()
	assert.Assert(t, is.Contains(out, "1 pass -> fail, 0 fail -> pass, 1 fail on both"))
	assert.Assert(t, is.Contains(out, "pass -> fail inotify_api.a"))
	assert.Assert(t, is.Contains(out, "failing on both kernels, not caused by the patch"))
	assert.Assert(t, is.Contains(out, "base    kernel 7.3.4-fsnbase"))
	assert.Assert(t, is.Len(res.Steps, 2))
	assert.Equal(t, res.Steps[0].Kernel, "base")
	assert.Assert(t, is.Contains(strings.Join(res.Steps[0].Command, " "), "-no-perf"))
}

// The same verdicts on both kernels are "no difference".
func TestCorrectnessSame(t *testing.T) {
	same := map[string]tap.Status{"a": tap.StatusPass, "b": tap.StatusSkip}
	res, err := Run(context.Background(), setup(t, same, same))
	assert.NilError(t, err)
	assert.Assert(t, !res.Changed())
	assert.Equal(t, res.Verdict(), "no difference")
}

// The explorer's recording on the base goes into the patched kernel's
// guest, where -against reads it; a failing replay leaf is a difference.
func TestExploreAgainstRecording(t *testing.T) {
	cfg := setup(t, map[string]tap.Status{"a": tap.StatusPass}, map[string]tap.Status{"a": tap.StatusFail})
	cfg.Scenarios = 50
	res, err := Run(context.Background(), cfg)
	assert.NilError(t, err)
	assert.Assert(t, res.Explore != nil)
	// A failing replay leaf without a difference line is a failure of the
	// replay, and the verdict.
	assert.Assert(t, is.Len(res.Explore.Failures, 1))
	assert.Assert(t, res.Changed())
	calls, err := os.ReadFile(filepath.Join(filepath.Dir(cfg.Suite), "calls"))
	assert.NilError(t, err)
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	assert.Assert(t, is.Len(lines, 4))
	assert.Assert(t, is.Contains(lines[3], "-vm-file "+filepath.Join(cfg.Out, "explore-base", "explore.json")+"=/explore-base.json"))
	rt, err := os.ReadFile(filepath.Join(cfg.Out, "explore-record.runtest"))
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(rt), "-n 50 -duration 0"))
	assert.Assert(t, is.Contains(string(rt), "-record /results/explore.json"))
	rt, err = os.ReadFile(filepath.Join(cfg.Out, "explore-against.runtest"))
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(rt), "-n 0 -duration 0"))
	assert.Assert(t, is.Contains(string(rt), "-against /explore-base.json"))
}

// The summary takes the coverage report's changed-lines part only.
func TestChangedLines(t *testing.T) {
	rep := "fs/notify/mark.c 93.1 %\n\nLines the patch changed (patch.diff), as the suite ran them:\n" +
		"  fs/notify/mark.c:139: executed (12 times, in fsnotify_update_iref): if (x)\n" +
		"  verdict: 1 of the 1 changed lines with code ran (100.0 %); 0 not executed; 0 no code; 0 not instrumented\n" +
		"\nFunctions never executed:\n  foo\n"
	got := ChangedLines(rep)
	assert.Assert(t, is.Contains(got, "mark.c:139: executed"))
	assert.Assert(t, is.Contains(got, "verdict: 1 of the 1"))
	assert.Assert(t, !strings.Contains(got, "never executed"), "%s", got)
	assert.Equal(t, ChangedLines("no patch here"), "")
}

func TestVerdictStepsLeftOut(t *testing.T) {
	r := &Result{Config: &Config{NoCorrectness: true}}
	if v := r.Verdict(); v != "not judged (the correctness step was not run)" {
		t.Errorf("cost alone: verdict %q", v)
	}
	r.Explore = &Explore{Scenarios: 10}
	if v := r.Verdict(); !strings.HasPrefix(v, "no difference in the explorer's scenarios") {
		t.Errorf("explorer alone, no difference: verdict %q", v)
	}
	r.Explore.Differences = []Difference{{Leaf: "fsnotify_explore.scenarios.tmpfs", Seed: 3}}
	if v := r.Verdict(); v != "BEHAVIOUR CHANGED" {
		t.Errorf("explorer alone, a difference: verdict %q", v)
	}
}

// The cost step's cross-kernel gates are the leaves whose diagnostics
// carry the engine's "baseline: ..." verdict (the "baseline A: file" line
// that names the saved run is not one).
func TestBaselineGates(t *testing.T) {
	leaf := func(name string, st tap.Status, reason string, diags ...string) *tap.Node {
		return &tap.Node{Name: name, Status: st, Reason: reason, Diagnostics: diags}
	}
	bin := &tap.Node{Name: "perf_parent_write", Number: 1, Status: tap.StatusFail, Children: []*tap.Node{
		leaf("other_none_n1", tap.StatusFail, "", "baseline A: /perf-base/perf_parent_write.json (kernel 7.3.4-fsnbase)",
			"other_none_n1 (tmpfs): baseline: regression: other_none_n1 other cpu-insn/op change +6.8% [+6.8%,+6.8%] vs threshold +2.0%"),
		leaf("watch_none_n1", tap.StatusSkip, "baseline: watch_none_n1 watch cpu-insn/op: variability gate"),
		leaf("other_none_n2", tap.StatusSkip, "instruction count mode: other_none (2 clients writing at once) measures contention"),
	}}
	root := &tap.Node{Version: "TAP version 13", Plan: 1, Children: []*tap.Node{bin}}
	got := baselineGates(&runner.Results{Root: root})
	assert.Assert(t, is.Len(got, 2))
	assert.Equal(t, got[0].Path, "perf_parent_write.other_none_n1")
	assert.Equal(t, got[0].After, "fail")
	assert.Assert(t, strings.HasPrefix(got[0].Why, "regression: other_none_n1 other cpu-insn/op change +6.8%"), got[0].Why)
	assert.Equal(t, got[1].After, "skip")
	assert.Assert(t, strings.HasPrefix(got[1].Why, "watch_none_n1 watch cpu-insn/op: variability gate"), got[1].Why)
}

// Each changed leaf is listed with the case's own statement of what it
// wanted and got (runner.FullStatement: the first line that states a want,
// its dump's want/got folded in), whole, with its HINT below it; the same
// statement in summary.json. Diagnostics from real results.tap files.
func TestSummaryNamesStatement(t *testing.T) {
	cfg := setup(t, nil, nil)
	root := filepath.Dir(cfg.Suite)
	pipe := `a (tmpfs): inode mark FAN_MODIFY on a pipe: fanotify_mark(FAN_MARK_ADD, FAN_MODIFY, "/proc/self/fd/7"): invalid argument, want it accepted (only mount and filesystem marks are refused on SB_NOUSER)`
	writeNodes(t, filepath.Join(root, "base"), "7.3.4-fsnbase",
		&tap.Node{Name: "a", Status: tap.StatusPass}, &tap.Node{Name: "b", Status: tap.StatusPass})
	writeNodes(t, filepath.Join(root, "patched"), "7.3.4-fsnpatched",
		&tap.Node{Name: "a", Status: tap.StatusFail, Diagnostics: []string{pipe}},
		&tap.Node{Name: "b", Status: tap.StatusFail, Diagnostics: []string{
			"b: 3 lookups: the events' error_count add up to 1 within 5s of the last failing call, want 3",
			"event pid 35: kworker/1:1-mm_percpu_wq, ppid 2, a kernel thread",
			`HINT: kernel may lack 0123456789ab ("fanotify: merge")`,
		}})
	res, err := Run(context.Background(), cfg)
	assert.NilError(t, err)
	var txt, js strings.Builder
	assert.NilError(t, res.WriteText(&txt))
	assert.NilError(t, res.WriteJSON(&js))
	out := txt.String()
	assert.Assert(t, is.Contains(out, "pass -> fail inotify_api.a: "+strings.TrimPrefix(pipe, "a (tmpfs): ")+"\n"), out)
	assert.Assert(t, is.Contains(out, "pass -> fail inotify_api.b: 3 lookups: the events' error_count add up to 1 within 5s of the last failing call, want 3\n"+
		`      HINT: kernel may lack 0123456789ab ("fanotify: merge")`), out)
	assert.Assert(t, !strings.Contains(out, "kworker"), out)
	var doc struct {
		PassToFail []Change `json:"pass_to_fail"`
	}
	assert.NilError(t, json.Unmarshal([]byte(js.String()), &doc))
	assert.Assert(t, is.Len(doc.PassToFail, 2))
	assert.Equal(t, doc.PassToFail[0].Statement, strings.TrimPrefix(pipe, "a (tmpfs): "))
	assert.Assert(t, strings.HasSuffix(doc.PassToFail[1].Statement, "want 3"))
	assert.DeepEqual(t, doc.PassToFail[1].Hints, []string{`HINT: kernel may lack 0123456789ab ("fanotify: merge")`})
}

// The replay's diagnostics as fsnotify_explore -against prints them (from a
// real run, paths and releases as on a patchcheck): every difference is
// listed, each whole with its script, the shrunk one when there is one.
func TestExplorerDifferences(t *testing.T) {
	n := &tap.Node{Name: "scenarios.tmpfs", Status: tap.StatusFail, Diagnostics: []string{
		"0 scenarios (0 steps) in 0.0s: no rate; model rules hit 0/44, distinct rule paths 0; kinds notif,inotify,content,pre_content,fid,dfid_name",
		"against /explore-base.json (7.3.4-fsnbase): 30 scenarios, 2 differ; 0 not replayed for lack of a feature here (group kinds missing: [])",
		"scenarios.tmpfs (tmpfs): seed 1 (tmpfs): 7.3.4-fsnbase (recorded) and 7.3.4-fsnpatched (here) differ at step 5 of 7 (g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORE, FAN_ACCESS|FAN_ONDIR, s)): recorded result: EINVAL; here result: ok",
		"  g0 = pre_content",
		"  1. g0 fanotify_mark(FAN_MARK_REMOVE, FAN_MODIFY, .)",
		"  5. g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORE, FAN_ACCESS|FAN_ONDIR, s)",
		"  (not shrunk: the model does not tell the two kernels apart on this scenario)",
		"seed 10 (tmpfs): 7.3.4-fsnbase (recorded) and 7.3.4-fsnpatched (here) differ at step 13 of 13 (actor write g): recorded (nothing); here g0 FAN_OPEN g",
		"  g0 = fid",
		"  g1 = notif",
		"  1. g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_FILESYSTEM, FAN_OPEN, <fs root>)",
		"  13. actor write g",
		"  shrunk to 3 steps, 1 groups (the model as the recording kernel's oracle):",
		"    g0 = fid",
		"    1. g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_FILESYSTEM, FAN_OPEN, <fs root>)",
		"    2. g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORED_SURV_MODIFY|FAN_MARK_IGNORE, FAN_OPEN|FAN_EVENT_ON_CHILD, .)",
		"    3. actor write g",
		"    at step 3 (actor write g): recorded kernel (model) (nothing); here g0 FAN_OPEN g",
	}}
	ds := Differences("fsnotify_explore.scenarios.tmpfs", n)
	assert.Assert(t, is.Len(ds, 2))
	assert.Equal(t, ds[0].Seed, int64(1))
	assert.Equal(t, ds[0].Step, 5)
	assert.Assert(t, strings.HasSuffix(ds[0].Statement, "recorded result: EINVAL; here result: ok"), ds[0].Statement)
	assert.Assert(t, !ds[0].Shrunk)
	assert.DeepEqual(t, ds[0].Script, []string{"g0 = pre_content", "1. g0 fanotify_mark(FAN_MARK_REMOVE, FAN_MODIFY, .)",
		"5. g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORE, FAN_ACCESS|FAN_ONDIR, s)", "(not shrunk: the model does not tell the two kernels apart on this scenario)"})
	assert.Equal(t, ds[1].Seed, int64(10))
	assert.Assert(t, ds[1].Shrunk)
	assert.Equal(t, ds[1].Script[0], "shrunk to 3 steps, 1 groups (the model as the recording kernel's oracle):")
	assert.Equal(t, ds[1].Script[len(ds[1].Script)-1], "  at step 3 (actor write g): recorded kernel (model) (nothing); here g0 FAN_OPEN g")

	base := &tap.Node{Name: "scenarios.tmpfs", Status: tap.StatusPass, Diagnostics: []string{
		"-duration 25s reached: seeds 185..1000 not run",
		"2 scenarios not run: FAN_MARK_IGNORE not supported",
		"182 scenarios (1676 steps) in 25.1s: 7 scenarios/s; model rules hit 43/44, distinct rule paths 146; kinds notif,inotify",
	}}
	// The note of the explorer builds since the 2026-12-05 merge.
	capped := &tap.Node{Name: "scenarios.tmpfs", Status: tap.StatusPass, Diagnostics: []string{
		"seeds covered: tmpfs 1..363 of 1..1000 (time cap 25s)",
		"363 scenarios (3310 steps) in 25.0s: 15 scenarios/s; distinct rule paths 150; kinds notif,inotify",
	}}
	assert.Equal(t, SeedsOf("fsnotify_explore.scenarios.tmpfs", capped, n, 1, 1000).String(),
		"tmpfs: seeds 1..363 run on the base (363 scenarios; of 1..1000: time cap 25s), 30 replayed on the patched kernel, 2 differ")
	all := &tap.Node{Name: "scenarios.ext4", Status: tap.StatusPass, Diagnostics: []string{"seeds covered: ext4 1..3000 of 1..3000", "3000 scenarios (27001 steps) in 300.0s: 10 scenarios/s"}}
	assert.Equal(t, SeedsOf("fsnotify_explore.scenarios.ext4", all, nil, 1, 1000).String(),
		"ext4: seeds 1..3000 run on the base (3000 scenarios), no replay on the patched kernel")
	none := &tap.Node{Name: "scenarios.ext4", Status: tap.StatusFail, Diagnostics: []string{"seeds covered: ext4 none of 1..3000 (stopped at the mismatch of seed 1)"}}
	assert.Equal(t, SeedsOf("fsnotify_explore.scenarios.ext4", none, nil, 1, 3000).String(),
		"ext4: no seed run on the base (of 1..3000: stopped at the mismatch of seed 1), no replay on the patched kernel")

	sd := SeedsOf("fsnotify_explore.scenarios.tmpfs", base, n, 1, 1000)
	assert.Equal(t, sd.String(), "tmpfs: seeds 1..184 run on the base (182 scenarios; -duration 25s reached: seeds 185..1000 not run; "+
		"2 scenarios not run: FAN_MARK_IGNORE not supported), 30 replayed on the patched kernel, 2 differ")

	// In the summary: both differences, whole, with their scripts.
	r := &Result{Config: &Config{Patch: "x.patch", NoCorrectness: true}, Explore: &Explore{Scenarios: 1000, Seeds: []Seeds{sd}, Differences: ds}}
	var b strings.Builder
	assert.NilError(t, r.WriteText(&b))
	out := b.String()
	assert.Assert(t, is.Contains(out, "  tmpfs: seeds 1..184 run on the base"), out)
	assert.Assert(t, is.Contains(out, "  difference 1 of 2: seed 1 (tmpfs): 7.3.4-fsnbase (recorded) and 7.3.4-fsnpatched (here) differ at step 5 of 7"), out)
	assert.Assert(t, is.Contains(out, "  difference 2 of 2: seed 10 (tmpfs):"), out)
	assert.Assert(t, is.Contains(out, "      shrunk to 3 steps, 1 groups"), out)
	assert.Assert(t, is.Contains(out, "        3. actor write g\n"), out)
	assert.Assert(t, !strings.Contains(out, "NaN"), out)
}

// The summary's wall time counts from the patchcheck's start (the builds
// before Run included) and names the time waiting for the VM lock (held
// here by another open file for about a second) and for the build lock.
func TestWallTimeWithLockWaits(t *testing.T) {
	same := map[string]tap.Status{"a": tap.StatusPass}
	cfg := setup(t, same, same)
	cfg.Lock = filepath.Join(t.TempDir(), "vm.lock")
	cfg.Started = time.Now().Add(-100 * time.Second)
	cfg.BuildLockWait = 42 * time.Second
	f, err := os.OpenFile(cfg.Lock, os.O_CREATE|os.O_RDWR, 0o600)
	assert.NilError(t, err)
	defer f.Close()
	assert.NilError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX))
	go func() {
		time.Sleep(time.Second)
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
	}()
	res, err := Run(context.Background(), cfg)
	assert.NilError(t, err)
	tm := res.Time()
	assert.Assert(t, tm.VMLockWaitSeconds >= 0.9, "%+v", tm)
	assert.Assert(t, tm.WallSeconds >= 100+tm.VMLockWaitSeconds, "%+v", tm)
	assert.Equal(t, tm.BuildLockWaitSeconds, 42.0)
	var b, js strings.Builder
	assert.NilError(t, res.WriteText(&b))
	assert.Assert(t, is.Regexp(`Wall time: 10\d+s in all \(from the start of the patchcheck: source, builds, coverage and every step\); \d+s in the VM runs below, 1s waiting for the VM lock, 42s waiting for the build lock`, b.String()))
	assert.Assert(t, is.Contains(b.String(), "after 1s waiting for the VM lock"))
	assert.NilError(t, res.WriteJSON(&js))
	assert.Assert(t, is.Contains(js.String(), `"build_lock_wait_seconds": 42`))
}

// summary.json names every key in snake_case, every part of it filled (a
// change of each kind, explorer seeds and differences, cost figures with an
// unbounded interval, gates, time), and encodes at all with figures that
// are not finite numbers.
func TestJSONSnakeCase(t *testing.T) {
	cfg := setup(t, map[string]tap.Status{"a": tap.StatusPass, "b": tap.StatusFail}, map[string]tap.Status{"a": tap.StatusFail, "b": tap.StatusFail})
	res, err := Run(context.Background(), cfg)
	assert.NilError(t, err)
	res.Explore = &Explore{Scenarios: 10, Notes: []string{"x"}, Seeds: []Seeds{{Filesystem: "tmpfs", Last: 9, NotRunWhy: []string{"y"}}},
		Differences: []Difference{{Leaf: "l", Script: []string{"1. x"}}}, Failures: []Change{{Path: "p", Hints: []string{"HINT: h"}}}, BaseFailures: []Change{{Path: "q"}}}
	res.Cost = &runner.Diff{Figures: []runner.FigureChange{{Path: "perf.x.ops", Unit: "ns/op",
		Before: tap.Measurement{Name: "ops", Value: 1, Lo: 0.9, Hi: math.Inf(1)}, After: tap.Measurement{Name: "ops", Value: 2, Lo: 1.5, Hi: 2.5},
		Ratio: 2, Lo: 0.6, Hi: math.Inf(1), Gate: 1.5, Beyond: true, BeforeUnitDiff: true}}}
	res.CostGates = []runner.LeafChange{{Path: "perf.x", After: "fail", Why: "regression: ..."}}
	var b strings.Builder
	assert.NilError(t, res.WriteJSON(&b))
	var doc any
	assert.NilError(t, json.Unmarshal([]byte(b.String()), &doc))
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	var walk func(path string, v any)
	keys := 0
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				keys++
				if !snake.MatchString(k) {
					t.Errorf("%s.%s: not snake_case", path, k)
				}
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk("", doc)
	for _, k := range []string{`"pass_to_fail"`, `"fail_on_both"`, `"cost_figures"`, `"ratio_lo"`, `"units_differ"`, `"cost_gates"`, `"differences"`, `"seeds"`, `"vm_lock_wait_seconds"`} {
		assert.Assert(t, is.Contains(b.String(), k))
	}
	t.Logf("%d keys, all snake_case", keys)
}

// calls counts the fake suite's runs on each kernel.
func calls(t *testing.T, cfg *Config) (base, patched int) {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(cfg.Suite), "calls"))
	assert.NilError(t, err)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		switch {
		case strings.Contains(l, "/base/bzImage"):
			base++
		case strings.Contains(l, "/patched/bzImage"):
			patched++
		}
	}
	return base, patched
}

// A second patchcheck on the same base kernel, suite build and flags reuses
// the base's runs from the cache, saying so with the cached run's date and
// path; another suite build, other flags or -no-base-cache run it again;
// an entry that does not match what is computed now is not used; a cache
// in a directory others can write to is refused.
func TestBaseReused(t *testing.T) {
	cfg := setup(t, map[string]tap.Status{"a": tap.StatusPass}, map[string]tap.Status{"a": tap.StatusFail})
	cache := t.TempDir()
	cfg.Cache = cache
	assert.NilError(t, os.WriteFile(cfg.Base.Image, []byte("base kernel"), 0o644))
	var log strings.Builder
	cfg.Log = &log
	cfg.Scenarios = 5
	run := func() *Result {
		t.Helper()
		cfg.suiteSHA = "" // each patchcheck hashes the build anew
		res, err := Run(context.Background(), cfg)
		assert.NilError(t, err)
		return res
	}
	first := run()
	assert.Assert(t, first.Changed())
	b, p := calls(t, cfg)
	assert.Equal(t, b, 2) // correctness, explore
	assert.Equal(t, p, 2)

	second := run()
	b, p = calls(t, cfg)
	assert.Equal(t, b, 2, "the base ran again")
	assert.Equal(t, p, 4)
	assert.Assert(t, second.Changed(), "the reused base run still judges the patched one")
	assert.Equal(t, len(second.Correct.Regressions), 1)
	assert.Assert(t, second.Steps[0].Reused != "" && !second.Steps[0].ReusedDate.IsZero())
	assert.Assert(t, strings.HasPrefix(second.Steps[0].Reused, filepath.Join(cache, BaseCacheDir)), second.Steps[0].Reused)
	assert.Assert(t, is.Regexp(`correctness on the base kernel 7.3.4-fsnbase: reusing the run of 20\d\d-\d\d-\d\dT[^ ]+ \(`+regexp.QuoteMeta(cache), log.String()))
	// The explorer's recording came back with its run: the replay had it.
	_, err := os.Stat(filepath.Join(cfg.Out, "explore-base", "explore.json"))
	assert.NilError(t, err)
	var txt strings.Builder
	assert.NilError(t, second.WriteText(&txt))
	assert.Assert(t, is.Contains(txt.String(), "reused the base run of "))

	// Other flags: run again.
	cfg.RunArgs = []string{"-vm-mem", "2G"}
	run()
	b, _ = calls(t, cfg)
	assert.Equal(t, b, 4)
	// -no-base-cache: run again.
	cfg.NoBaseCache = true
	run()
	b, _ = calls(t, cfg)
	assert.Equal(t, b, 6)
	cfg.NoBaseCache = false
	// Another suite build (a binary beside the runner changed): run again.
	assert.NilError(t, os.WriteFile(filepath.Join(filepath.Dir(cfg.Suite), "inotify_api"), []byte("v2"), 0o755))
	run()
	b, _ = calls(t, cfg)
	assert.Equal(t, b, 8)
	run()
	b, _ = calls(t, cfg)
	assert.Equal(t, b, 8, "the new build's run is cached in turn")

	// An entry edited to name other flags is not used.
	ents, err := filepath.Glob(filepath.Join(cache, BaseCacheDir, "correctness-*", entryFile))
	assert.NilError(t, err)
	for _, e := range ents {
		b, err := os.ReadFile(e)
		assert.NilError(t, err)
		assert.NilError(t, os.WriteFile(e, []byte(strings.Replace(string(b), `"-no-perf"`, `"-perf"`, 1)), 0o600))
	}
	run()
	b, _ = calls(t, cfg)
	assert.Equal(t, b, 9)
	assert.Assert(t, is.Contains(log.String(), "does not match this run"))

	// A cache directory others can write to is refused.
	assert.NilError(t, os.Chmod(cache, 0o777))
	_, err = Run(context.Background(), cfg)
	assert.ErrorContains(t, err, "refusing")
	assert.NilError(t, os.Chmod(cache, 0o700))
}

// A cache whose directory is a symlink, or whose cached run's directory was
// replaced by a symlink, is not trusted: the first is refused, the second
// not used (the base runs again).
func TestBaseCacheSymlinks(t *testing.T) {
	cfg := setup(t, map[string]tap.Status{"a": tap.StatusPass}, map[string]tap.Status{"a": tap.StatusPass})
	assert.NilError(t, os.WriteFile(cfg.Base.Image, []byte("base kernel"), 0o644))
	cache, elsewhere := t.TempDir(), t.TempDir()
	cfg.Cache = cache
	assert.NilError(t, os.Symlink(elsewhere, filepath.Join(cache, BaseCacheDir)))
	_, err := Run(context.Background(), cfg)
	assert.ErrorContains(t, err, "refusing")
	assert.NilError(t, os.Remove(filepath.Join(cache, BaseCacheDir)))

	var log strings.Builder
	cfg.Log = &log
	_, err = Run(context.Background(), cfg)
	assert.NilError(t, err)
	runs, err := filepath.Glob(filepath.Join(cache, BaseCacheDir, "correctness-*"))
	assert.NilError(t, err)
	assert.Assert(t, is.Len(runs, 1), "%v", runs)
	assert.NilError(t, os.Rename(runs[0], runs[0]+".moved"))
	assert.NilError(t, os.Symlink(runs[0]+".moved", runs[0]))
	cfg.suiteSHA = ""
	res, err := Run(context.Background(), cfg)
	assert.NilError(t, err)
	assert.Equal(t, res.Steps[0].Reused, "")
	assert.Assert(t, is.Contains(log.String(), runs[0]+" is a symlink"))
	// The new run replaced the symlink, not what it pointed to.
	fi, err := os.Lstat(runs[0])
	assert.NilError(t, err)
	assert.Assert(t, fi.IsDir())
	_, err = os.Stat(filepath.Join(runs[0]+".moved", entryFile))
	assert.NilError(t, err)
	// The run directory inside the entry replaced by a symlink: not used.
	run := filepath.Join(runs[0], entryRun)
	assert.NilError(t, os.Rename(run, run+".moved"))
	assert.NilError(t, os.Symlink(run+".moved", run))
	log.Reset()
	res, err = Run(context.Background(), cfg)
	assert.NilError(t, err)
	assert.Equal(t, res.Steps[0].Reused, "")
	assert.Assert(t, is.Contains(log.String(), run+" is a symlink"))
}
