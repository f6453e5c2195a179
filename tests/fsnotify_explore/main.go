// Command fsnotify_explore is the scenario explorer: it draws seeded random
// scenarios (a small tree; one to three groups among inotify and fanotify
// notification, content and FID groups; mark and watch calls with every
// mark type, both ignore flavours, SURV_MODIFY, EVICTABLE, FAN_ONDIR,
// FAN_EVENT_ON_CHILD, IN_MASK_ADD, IN_ONESHOT and IN_EXCL_UNLINK; file
// operations by an actor, among them a file unlinked while open, a FIFO read
// and written, and link(2)),
// runs each on the kernel and through the model of harness/model,
// and on a mismatch shrinks the scenario to a minimal script and prints it
// with want/got per group, the seed that replays it and a case row for the
// regressions table, with a HINT naming the kernel fix when the mismatch is
// the rule of a kernel without it. -model-fault plants a wrong rule in the model to
// measure the explorer's power; -record/-against compare two kernels.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// Defaults of the CI run: a fixed seed range per filesystem.
const (
	defaultSeed = 1
	defaultN    = 1000
)

// opts are the explorer's own flags.
var opts struct {
	seed     int64
	n        int
	duration time.Duration
	fault    string
	special  bool
	record   string     // -record: the file's base name, in recordDir
	recDir   int        // -record: the file's directory, opened before /tmp is shadowed
	against  string     // -against: the file's name
	recorded recordFile // -against: its contents
}

// registerFlags adds the explorer's flags to the command line (Suite.Flags).
func registerFlags(fs *flag.FlagSet) {
	fs.Int64Var(&opts.seed, "seed", defaultSeed, "first seed of the range")
	fs.IntVar(&opts.n, "n", defaultN, "scenarios per filesystem")
	fs.DurationVar(&opts.duration, "duration", 25*time.Second, "stop drawing scenarios after this long per filesystem, said in a note (0: run all -n; a safety cap for slow VMs)")
	fs.StringVar(&opts.fault, "model-fault", "", "plant this wrong rule in the model ('list' prints the names)")
	fs.BoolVar(&opts.special, "special", false, "no effect, kept for old command lines: every scenario's tree has a FIFO")
	fs.Func("record", "write the kernel's observations of the seed range to `FILE` (JSON)", setRecord)
	fs.Func("against", "replay the scenarios recorded in `FILE` by -record and list every difference", loadAgainst)
}

func main() {
	if listFaults(os.Args[1:]) {
		for _, f := range model.Faults {
			fmt.Println(f.Name)
		}
		os.Exit(0)
	}
	harness.Main(harness.Suite{
		Name:        "fsnotify_explore",
		Doc:         "seeded random fsnotify scenarios checked against the model oracle, shrunk on a mismatch",
		Needs:       []*feature.Feature{feature.Fanotify, feature.Inotify},
		Filesystems: []string{"tmpfs", "ext4"},
		Timeout:     2 * time.Minute,
		Cases:       cases(),
		Flags:       registerFlags,
	})
}

// listFaults reports whether the command line asks for -model-fault list.
func listFaults(args []string) bool {
	for i, a := range args {
		a = strings.TrimLeft(a, "-")
		if a == "model-fault=list" || (a == "model-fault" && i+1 < len(args) && args[i+1] == "list") {
			return true
		}
	}
	return false
}

func cases() []harness.Case {
	cs := []harness.Case{{
		Name: "scenarios",
		Doc:  "a fixed seed range of random scenarios: every mark errno, watch descriptor and event equals the model's (harness/model)",
		Run:  runExplore,
	}}
	for _, rg := range regressions {
		rg := rg
		cs = append(cs, harness.Case{
			Name: rg.Name,
			Doc:  rg.Doc,
			Fix:  rg.Fix,
			Run:  func(t *harness.T) { runRegression(t, rg) },
		})
	}
	return cs
}

// setup checks the flags and returns the group kinds this kernel and
// filesystem support, with a note for each one left out.
func setup(t *harness.T) []string {
	if opts.fault != "" && !model.IsFault(opts.fault) {
		t.Fatalf("-model-fault %q: unknown (try -model-fault list)", opts.fault)
	}
	kinds := []string{"notif", "inotify"}
	if err := feature.FanotifyPerm.Check(); err == nil {
		kinds = append(kinds, "content", "pre_content")
	} else if feature.IsSkip(err) {
		t.LeaveOut("content and pre-content groups: %v", err)
	} else {
		t.Fatalf("%v", err)
	}
	if err := fidUsable(t); err == nil {
		kinds = append(kinds, "fid")
	} else if feature.IsSkip(err) {
		t.LeaveOut("FID groups: %v", err)
	} else {
		t.Fatalf("%v", err)
	}
	if !contains(kinds, "fid") {
		return kinds
	}
	if err := feature.ReportDFIDName.Check(); err == nil {
		kinds = append(kinds, "dfid_name")
	} else if feature.IsSkip(err) {
		t.LeaveOut("FAN_REPORT_DFID_NAME groups: %v", err)
	} else {
		t.Fatalf("%v", err)
	}
	return kinds
}

func kernel() model.Kernel {
	k := model.Fixed
	k.Fault = opts.fault
	return k
}

func runExplore(t *harness.T) {
	kinds := setup(t)
	gen := Generator{Kinds: kinds}
	r := &runner{base: t.Dir(), root: t.FS().Root, a: t.Actor()}
	cov := model.NewCoverage()
	k := kernel()
	k.Cov = cov
	var rec *recording
	if opts.record != "" {
		rec = &recording{}
	}
	start := time.Now()
	ran, steps := 0, 0
	lacking := map[string]int{}
	for i := 0; i < opts.n; i++ {
		if opts.duration > 0 && time.Since(start) > opts.duration {
			t.Notef("-duration %v reached: seeds %d..%d not run", opts.duration, opts.seed+int64(i), opts.seed+int64(opts.n)-1)
			break
		}
		s := gen.Scenario(opts.seed + int64(i))
		if why := unsupported(t, s); why != "" {
			lacking[why]++
			continue
		}
		got, err := r.run(s)
		if err != nil {
			t.Fatalf("seed %d: %v", s.Seed, err)
		}
		ran++
		steps += len(s.Steps)
		if rec != nil {
			rec.add(s, got)
		}
		want := predict(k, s)
		if d := firstDiff(want, got); d >= 0 {
			reportMismatch(t, r, s, d, want, got)
			break
		}
	}
	for why, n := range lacking {
		t.Notef("%d scenarios not run: %s", n, why)
	}
	el := time.Since(start)
	rules, paths := cov.Counts()
	t.Notef("%d scenarios (%d steps) in %.1fs: %.0f scenarios/s; model rules hit %d/%d, distinct rule paths %d; kinds %s",
		ran, steps, el.Seconds(), float64(ran)/el.Seconds(), rules, len(model.Rules), paths, strings.Join(kinds, ","))
	if harness.Opts.Verbose {
		for _, m := range cov.Missed() {
			t.Logf("rule not hit: %s", m)
		}
	}
	if rec != nil {
		if err := rec.save(t.FS().Type, kinds); err != nil {
			t.Fatalf("-record: %v", err)
		}
	}
	if opts.against != "" {
		compareAgainst(t, r, kinds, &opts.recorded)
	}
}

// reportMismatch shrinks a scenario on which kernel and model differ and
// prints the minimal script, want/got at the differing step, the replay
// seed and a case row.
func reportMismatch(t *harness.T, r *runner, s *Scenario, d int, want, got []Obs) {
	k := kernel()
	fails := func(c *Scenario) bool {
		g, err := r.run(c)
		return err == nil && firstDiff(predict(k, c), g) >= 0
	}
	small := shrink(s, fails)
	sg, err := r.run(small)
	if err != nil {
		t.Fatalf("re-running the shrunk scenario: %v", err)
	}
	sw := predict(k, small)
	sd := firstDiff(sw, sg)
	t.Errorf("seed %d (%s): the kernel and the model differ at step %d of %d; shrunk to %d steps, %d groups:",
		s.Seed, t.FS().Type, d+1, len(s.Steps), len(small.Steps), len(small.Groups))
	t.Logf("%s", strings.TrimRight(small.Script(), "\n"))
	if sd >= 0 {
		t.Logf("  at step %d (%s):", sd+1, small.Steps[sd])
		t.Logf("  want: %s", obsAt(sw, sd))
		t.Logf("  got:  %s", obsAt(sg, sd))
	}
	if opts.fault != "" {
		t.Logf("  (model fault %s planted: the model, not the kernel, is wrong here)", opts.fault)
	} else {
		hintFix(t, small, sg, "")
	}
	fault := ""
	if opts.fault != "" {
		fault = " -model-fault " + opts.fault
	}
	t.Logf("replay: fsnotify_explore -seed %d -n 1 -run 'scenarios.%s'%s -v", s.Seed, t.FS().Type, fault)
	t.Logf("case row for tests/fsnotify_explore/regressions.go:\n%s", small.Row(fmt.Sprintf("seed%d", s.Seed)))
}

// hintFix names the kernel fix a mismatch shows missing (missingFixes): a
// line per model fault the kernel follows, and T.KernelLacks, so that the
// failure prints "HINT: kernel may lack <fix>" (the fix of fault first if it
// is among them, else of the first one). A mismatch no such fault explains
// prints no HINT.
func hintFix(t *harness.T, s *Scenario, got []Obs, first string) {
	fs := missingFixes(s, got)
	if i := slices.IndexFunc(fs, func(f model.Fault) bool { return f.Name == first }); i > 0 {
		fs[0], fs[i] = fs[i], fs[0]
	}
	for _, f := range fs {
		kf := model.FaultFixes[f.Name]
		fix := &harness.Fix{Commit: kf.Commit, Subject: kf.Subject}
		t.Logf("the kernel follows model fault %s, the rule of a kernel without %s: %s", f.Name, kf.Commit, f.Doc)
		t.KernelLacks(fix)
	}
}

// missingFixes returns the faults that are the rule of a kernel without a
// fix (model.FaultFixes) and predict exactly what the kernel did on s,
// where the correct model does not.
func missingFixes(s *Scenario, got []Obs) []model.Fault {
	if firstDiff(predict(model.Fixed, s), got) < 0 {
		return nil
	}
	var out []model.Fault
	for _, f := range model.Faults {
		if _, ok := model.FaultFixes[f.Name]; !ok {
			continue
		}
		bad := model.Fixed
		bad.Fault = f.Name
		if firstDiff(predict(bad, s), got) < 0 {
			out = append(out, f)
		}
	}
	return out
}

func obsAt(o []Obs, i int) string {
	if i >= len(o) {
		return "(step not run)"
	}
	return o[i].String()
}

// runRegression runs one row of the regressions table.
func runRegression(t *harness.T, rg regression) {
	kinds := setup(t)
	for _, g := range rg.Scenario.Groups {
		if !contains(kinds, g) {
			t.Skipf("needs a %s group, not available here (see the note above)", g)
		}
	}
	r := &runner{base: t.Dir(), root: t.FS().Root, a: t.Actor()}
	s := rg.Scenario
	if why := unsupported(t, &s); why != "" {
		t.Skip(why)
	}
	got, err := r.run(&s)
	if err != nil {
		t.Fatal(err)
	}
	want := predict(kernel(), &s)
	if d := firstDiff(want, got); d >= 0 {
		t.Errorf("kernel and model differ at step %d:\n%s", d+1, s.Script())
		t.Logf("  want: %s", obsAt(want, d))
		t.Logf("  got:  %s", obsAt(got, d))
		if opts.fault != "" {
			t.Logf("  (model fault %s planted: the model, not the kernel, is wrong here)", opts.fault)
		} else {
			// The row's Witness, when it is the rule of a kernel without
			// the row's Fix, is among the faults tried, and named first.
			hintFix(t, &s, got, rg.Witness)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// markFeatures are the mark flags a kernel may lack, with their features.
var markFeatures = []struct {
	flag uint
	f    *feature.Feature
}{
	{unix.FAN_MARK_FILESYSTEM &^ unix.FAN_MARK_MOUNT, feature.MarkFilesystem},
	{unix.FAN_MARK_EVICTABLE, feature.MarkEvictable},
	{unix.FAN_MARK_IGNORE, feature.MarkIgnore},
}

// unsupported returns why a scenario cannot run on this kernel (a mark flag
// it lacks: the feature and the errno), or "". A feature missing on a
// kernel at or above the release that merged it fails the case.
func unsupported(t *harness.T, s *Scenario) string {
	for _, st := range s.Steps {
		if st.Op != "mark" {
			continue
		}
		for _, mf := range markFeatures {
			if st.Flags&mf.flag == 0 {
				continue
			}
			if err := mf.f.Check(); err != nil {
				if !feature.IsSkip(err) {
					t.Fatalf("%v", err)
				}
				return err.Error()
			}
		}
	}
	return ""
}
