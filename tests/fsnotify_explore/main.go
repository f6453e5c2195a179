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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/model"
	"github.com/fsnsuite/fsnsuite/harness/ownproc"
)

// Defaults of the CI run: seeds 1..1000 per filesystem, stopped after
// -duration (25 s): the note "seeds covered: ..." says which seeds ran (a
// TCG guest covers 1..184 to 1..363, the host all of them).
const (
	defaultSeed = 1
	defaultN    = 1000
)

// Defaults of -soak, where -n, -duration or -timeout are not given: the
// case's deadline covers the time cap, a mismatch's replays and shrinking
// (shrinkBudget) and the last scenario.
const (
	soakN        = 100000
	soakDuration = 10 * time.Minute
	soakTimeout  = soakDuration + 5*time.Minute
)

// opts are the explorer's own flags.
var opts struct {
	seed     int64
	n        int
	duration time.Duration
	soak     bool
	flags    *flag.FlagSet // to tell a flag given from its default
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
	fs.BoolVar(&opts.soak, "soak", false, fmt.Sprintf("a soak: fail when a model rule within reach here is never reached; -n %d, -duration %v and -timeout %v where not given", soakN, soakDuration, soakTimeout))
	opts.flags = fs
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
	timeout := 2 * time.Minute
	if soakAsked(os.Args[1:]) {
		timeout = soakTimeout // where -timeout is not given
	}
	harness.Main(harness.Suite{
		Name:        "fsnotify_explore",
		Doc:         "seeded random fsnotify scenarios checked against the model oracle, shrunk on a mismatch",
		Needs:       []*feature.Feature{feature.Fanotify, feature.Inotify},
		Filesystems: []string{"tmpfs", "ext4"},
		Timeout:     timeout,
		Cases:       cases(),
		Rules:       specRules,
		Flags:       registerFlags,
	})
}

// seedsCovered is the TAP note on the seeds a run drew, of those asked
// for: "seeds covered: tmpfs 1..363 of 1..1000 (time cap 25s)". The
// runner's summary shows it beside the binary's verdict (harness/runner,
// seedsNotes): it keys on the prefix "seeds covered: ".
func seedsCovered(fs string, first int64, drawn, n int, stop string) string {
	line := fmt.Sprintf("seeds covered: %s %s of %d..%d", fs, seedRange(first, drawn), first, first+int64(n)-1)
	if stop != "" {
		line += " (" + stop + ")"
	}
	return line
}

// seedRange renders the first n seeds from first: "1..363", "none".
func seedRange(first int64, n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprintf("%d..%d", first, first+int64(n)-1)
}

// soakAsked reports whether the command line asks for -soak (read before
// the flags are parsed: it sets the case's deadline).
func soakAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), "soak"); ok && strings.HasPrefix(a, "-") && (v == "" || v == "=true" || v == "=1") {
			return true
		}
	}
	return false
}

// given reports whether flag name was on the command line.
func given(name string) bool {
	set := false
	if opts.flags != nil {
		opts.flags.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	}
	return set
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
		Doc:  "random scenarios of seeds -seed.. (-n of them, or as many as -duration allows: see 'seeds covered'): every mark errno, watch descriptor and event equals the model's (harness/model)",
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
	n, duration := opts.n, opts.duration
	if opts.soak && !given("n") {
		n = soakN
	}
	if opts.soak && !given("duration") {
		duration = soakDuration
	}
	away := outOfReach(kinds)
	within := len(model.Rules) - len(away)
	allAt := "" // when every rule within reach was first reached
	start := time.Now()
	ran, steps := 0, 0
	lacking := map[string]int{}
	var undecided []string
	drawn, stop := 0, ""
	for i := 0; i < n; i++ {
		if duration > 0 && time.Since(start) > duration {
			stop = fmt.Sprintf("time cap %v", duration)
			break
		}
		drawn++
		s := gen.Scenario(opts.seed + int64(i))
		if why := unsupported(t, s); why != "" {
			lacking[why]++
			continue
		}
		got, foreign, err := r.runSettled(s)
		if err != nil {
			t.Fatalf("seed %d: %v", s.Seed, err)
		}
		ran++
		steps += len(s.Steps)
		want := predict(k, s)
		if rules, _ := cov.Counts(); allAt == "" && rules-reachedAway(cov, away) == within {
			allAt = fmt.Sprintf("every rule within reach reached by seed %d (%d scenarios run, %.1fs)", s.Seed, ran, time.Since(start).Seconds())
		}
		d := firstDiff(want, got)
		if len(foreign) > 0 && d < 0 {
			// The actor's events were as predicted, but another
			// program used the scenario's files in every run: what it
			// did may have changed what the kernel did, so the
			// scenario is decided neither way.
			undecided = append(undecided, fmt.Sprintf("seed %d (%s)", s.Seed, procList(foreign)))
			continue
		}
		// Only a decided run is recorded: -against compares with it.
		if d < 0 && rec != nil {
			rec.add(s, got)
		}
		if d >= 0 && reportMismatch(t, r, s, d, want, got, foreign) {
			stop = fmt.Sprintf("stopped at the mismatch of seed %d", s.Seed)
			break
		}
	}
	if n > 0 {
		t.Notef("%s", seedsCovered(t.FS().Type, opts.seed, drawn, n, stop))
	}
	if len(undecided) > 0 {
		t.Interfered(fmt.Sprintf("%d scenarios undecided: other programs' events arrived in each of their %d runs: %s",
			len(undecided), settleRuns, strings.Join(undecided, "; ")), strings.Join(undecided, "; "))
	}
	for why, n := range lacking {
		t.Notef("%d scenarios not run: %s", n, why)
	}
	el := time.Since(start)
	_, paths := cov.Counts()
	// A rate only when scenarios ran (a -n 0 replay runs none: 0/0 was
	// "NaN scenarios/s").
	rate := "no rate"
	if ran > 0 && el > 0 {
		rate = fmt.Sprintf("%.0f scenarios/s", float64(ran)/el.Seconds())
	}
	t.Notef("%d scenarios (%d steps) in %.1fs: %s; distinct rule paths %d; kinds %s",
		ran, steps, el.Seconds(), rate, paths, strings.Join(kinds, ","))
	t.Notef("%s", rulesLine(cov, away))
	if allAt != "" {
		t.Notef("%s", allAt)
	}
	if missed := missedWithin(cov, away); opts.soak && len(missed) > 0 {
		t.Errorf("soak: %d of the %d model rules within reach here never reached in %d scenarios: %s",
			len(missed), within, ran, quoteAll(missed))
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

// replays is how many times a mismatching scenario is run again, unchanged,
// before it is shrunk: a mismatch that does not come back is reported as it
// was first seen, unshrunk.
const replays = 3

// recentWindow: another program whose events a run met this long before a
// mismatch counts as using the filesystem at the time of the mismatch.
const recentWindow = 5 * time.Second

// shrinkBudget bounds the time a mismatch's shrinking takes.
const shrinkBudget = 20 * time.Second

// reportMismatch reports a scenario on which kernel and model differ: the
// first run's script and want/got per group at the differing step, then
// replays of it. A mismatch that comes back is shrunk to a minimal script,
// printed with its want/got, the replay seed and a case row. One that does
// not is kept whole (a timing-dependent finding, or state the first run
// met): a failure. Either is undecided instead while another program is
// seen using the filesystem (foreign: its events in the run that
// differed). It reports whether the case
// failed (the run stops there; after an undecided one it goes on).
func reportMismatch(t *harness.T, r *runner, s *Scenario, d int, want, got []Obs, foreign []ownproc.Process) (failed bool) {
	k := kernel()
	firstRun := time.Now() // the run that differed has just ended
	// The report is held until the verdict (a failure, or undecided) is
	// known, so that it follows its headline.
	headline := fmt.Sprintf("seed %d (%s): the kernel and the model differ at step %d of %d (%d groups):", s.Seed, t.FS().Type, d+1, len(s.Steps), len(s.Groups))
	var held []string
	logf := func(format string, args ...any) { held = append(held, fmt.Sprintf(format, args...)) }
	fail := func() {
		t.Errorf("%s", headline)
		for _, l := range held {
			t.Logf("%s", l)
		}
	}
	undecided := func(report, procs string) {
		t.Logf("%s", headline)
		for _, l := range held {
			t.Logf("%s", l)
		}
		t.Interfered(report, procs)
	}
	logf("%s", strings.TrimRight(s.Script(), "\n"))
	logStep(logf, s, d, want, got)
	if len(foreign) > 0 {
		logf("  other programs' events also arrived in that run (not compared): %s", procList(foreign))
	}
	// Each replay runs in a new directory with new groups, after the
	// earlier runs' groups were destroyed (runner.run).
	r.replaying = true
	defer func() { r.replaying = false }()
	rp, err := replayMismatch(r, s, d, want, got, foreign, firstRun)
	if err != nil {
		t.Fatalf("replaying seed %d: %v", s.Seed, err)
	}
	for _, n := range rp.notes {
		logf("%s", n)
	}
	reproduced, others := rp.reproduced, rp.others
	fault := ""
	if opts.fault != "" {
		fault = " -model-fault " + opts.fault
	}
	replay := fmt.Sprintf("fsnotify_explore -seed %d -n 1 -run 'scenarios.%s'%s -v", s.Seed, t.FS().Type, fault)
	if len(others) > 0 && !othersCouldAdd(obsOrNil(want, d), obsOrNil(got, d)) {
		logf("  other programs used files on this filesystem around these runs (%s), but what differs is nothing another program's reads could add: judged as a mismatch", procList(others))
		others = nil
	}
	if len(others) > 0 {
		logf("  reproduced (the same difference at the same step) on %d of %d replays; not shrunk", reproduced, replays)
		logf("replay: %s", replay)
		undecided(fmt.Sprintf("  other programs used files on this filesystem (their fanotify events in the run that differed, in a replay or in the %v before, or a filesystem mark's events in the %v after the replays, no scenario running): the difference may be their doing (inotify events carry no pid)", recentWindow, othersWindow), procList(others))
		return false
	}
	if reproduced == 0 {
		logf("  the mismatch did not reproduce on %d replays of the same script: it depends on timing or on state the first run met; the whole script above is the finding (not shrunk)", replays)
		logf("replay: %s", replay)
		logf("case row for tests/fsnotify_explore/regressions.go:\n%s", s.Row(fmt.Sprintf("seed%d", s.Seed)))
		fail()
		if opts.fault == "" {
			hintFix(t, s, got, "")
		}
		return true
	}
	logf("  reproduced (the same difference at the same step) on %d of %d replays", reproduced, replays)
	// A mismatch that does not always come back counts for a candidate
	// when one of several runs shows it.
	tries := 1
	if reproduced < replays {
		tries = replays
	}
	// Shrinking is bounded in time (each candidate is a real run, several
	// for a mismatch that does not always come back): past the budget no
	// candidate counts and the smallest script so far is reported.
	shrinkStart, overBudget := time.Now(), false
	fails := func(c *Scenario) bool {
		if time.Since(shrinkStart) > shrinkBudget {
			overBudget = true
			return false
		}
		for range tries {
			g, _, err := r.runSettled(c)
			if err == nil && firstDiff(predict(k, c), g) >= 0 {
				return true
			}
		}
		return false
	}
	small := shrink(s, fails)
	sw := predict(k, small)
	var sg []Obs
	sd := -1
	for range tries {
		g, _, err := r.runSettled(small)
		if err != nil {
			t.Fatalf("re-running the shrunk scenario: %v", err)
		}
		if sg, sd = g, firstDiff(sw, g); sd >= 0 {
			break
		}
	}
	if overBudget {
		logf("shrinking stopped after %v (its time budget); the script below is the smallest found by then", shrinkBudget)
	}
	logf("shrunk to %d steps, %d groups:", len(small.Steps), len(small.Groups))
	logf("%s", strings.TrimRight(small.Script(), "\n"))
	if sd >= 0 {
		logStep(logf, small, sd, sw, sg)
	} else {
		logf("  (the shrunk script did not show the mismatch again when re-run for this report)")
	}
	if opts.fault != "" {
		logf("  (model fault %s planted: the model, not the kernel, is wrong here)", opts.fault)
	}
	logf("replay: %s", replay)
	logf("case row for tests/fsnotify_explore/regressions.go:\n%s", small.Row(fmt.Sprintf("seed%d", s.Seed)))
	fail()
	if opts.fault == "" {
		hintFix(t, small, sg, "")
	}
	return true
}

// mismatchRunner is what replayMismatch needs of a runner.
type mismatchRunner interface {
	runSettled(s *Scenario) ([]Obs, []ownproc.Process, error)
	othersAround(foreign []ownproc.Process, end time.Time) ([]ownproc.Process, error)
}

// replayed is what the replays of a mismatch showed.
type replayed struct {
	reproduced int               // replays with the same difference at the same step
	notes      []string          // one per replay that did not reproduce it
	others     []ownproc.Process // other programs using the filesystem around the runs
}

// replayMismatch runs a scenario whose first run (got, ending at firstRun,
// with other programs' events from foreign) differed from want at step d
// replays times more, and names the other programs seen around the runs
// (othersAround). A replay reproduces the mismatch only when it differs
// from the model at the same step in the same way: another difference (say
// another program's inotify events) is no replay of it. While other
// programs use the filesystem, a difference may be their doing, even one
// that comes back on every replay (a program walking the tree over and
// over): the caller leaves it undecided.
func replayMismatch(r mismatchRunner, s *Scenario, d int, want, got []Obs, foreign []ownproc.Process, firstRun time.Time) (replayed, error) {
	var out replayed
	for i := range replays {
		g, gf, err := r.runSettled(s)
		if err != nil {
			return out, err
		}
		foreign = addProcs(foreign, gf)
		rd := firstDiff(want, g)
		if rd == d && slices.Equal(obsOrNil(g, d), obsOrNil(got, d)) {
			out.reproduced++
		} else {
			out.notes = append(out.notes, fmt.Sprintf("  replay %d: step %d got %s (first difference: %s)", i+1, d+1, obsAt(g, d), stepName(rd)))
		}
	}
	others, err := r.othersAround(foreign, firstRun)
	out.others = others
	return out, err
}

// logStep prints step d of s and, group by group, what the model wanted
// and what the kernel did there.
func logStep(logf func(string, ...any), s *Scenario, d int, want, got []Obs) {
	logf("  at step %d (%s):", d+1, stepAt(s, d))
	w, g := obsOrNil(want, d), obsOrNil(got, d)
	for _, key := range obsKeys(w, g) {
		wl, gl := linesOf(w, key), linesOf(g, key)
		mark := ""
		if !slices.Equal(wl, gl) {
			mark = "  <- differs"
		}
		logf("    %s want: %s%s", key, joinOr(wl), mark)
		logf("    %s got:  %s", key, joinOr(gl))
	}
}

// obsKeys lists the parts of two observations, in order: "result", each
// group "gN", "permission order".
func obsKeys(a, b Obs) []string {
	var keys []string
	for _, o := range []Obs{a, b} {
		for _, l := range o {
			if k := obsKey(l); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.SortStableFunc(keys, func(x, y string) int { return keyRank(x) - keyRank(y) })
	return keys
}

func keyRank(k string) int {
	switch {
	case k == "result":
		return -1
	case strings.HasPrefix(k, "g"):
		n, _ := strconv.Atoi(k[1:])
		return n
	}
	return 1 << 20
}

// obsKey is the part of an observation line: "result", "gN" or "permission order".
func obsKey(l string) string {
	if k, _, ok := strings.Cut(l, ":"); ok && (k == "result" || k == "permission order") {
		return k
	}
	k, _, _ := strings.Cut(l, " ")
	return k
}

func linesOf(o Obs, key string) []string {
	var out []string
	for _, l := range o {
		if obsKey(l) == key {
			out = append(out, l)
		}
	}
	return out
}

func joinOr(ls []string) string {
	if len(ls) == 0 {
		return "(nothing)"
	}
	return strings.Join(ls, "; ")
}

func obsOrNil(o []Obs, i int) Obs {
	if i < 0 || i >= len(o) {
		return nil
	}
	return o[i]
}

func stepAt(s *Scenario, i int) string {
	if i < 0 || i >= len(s.Steps) {
		return "after the last step"
	}
	return s.Steps[i].String()
}

func stepName(d int) string {
	if d < 0 {
		return "none, as the model predicts"
	}
	return fmt.Sprintf("step %d", d+1)
}

// readingLine is an inotify observation another program's use of a file
// can add: an open, a read or a close without writing (of a file or a
// directory), of any group, object or name.
var readingLine = regexp.MustCompile(`^g[0-9]+ IN_(OPEN|ACCESS|CLOSE_NOWRITE)(\|IN_ISDIR)? `)

// othersCouldAdd reports whether got (one step's observation) is want with
// lines added that another program reading the scenario's files could have
// caused: inotify opens, reads and closes without writing; a repeat of a
// wanted line (its events between two equal ones stop inotify merging
// them). Anything else (a line missing or changed, a result, a fanotify
// event, a permission order) no other program explains: other programs'
// fanotify events are already kept out of got. Left out of the comparison
// (withoutDeleteSelf): DELETE_SELF, since a file another program holds open
// loses its last reference only when that program closes it, so the event
// may come in a later step; and IN_IGNORED, which follows it, or an
// IN_ONESHOT watch another program's event spent.
func othersCouldAdd(want, got Obs) bool {
	want, got = withoutDeleteSelf(want), withoutDeleteSelf(got)
	want = withoutSpentOneshot(want, got)
	i := 0
	for _, l := range got {
		if i < len(want) && l == want[i] {
			i++
			continue
		}
		if slices.Contains(want[:i], l) || readingLine.MatchString(l) {
			continue
		}
		return false
	}
	return i == len(want)
}

// withoutSpentOneshot drops from want the inotify events of a group that
// did not arrive when that group got a reading event the scenario did not
// make: an IN_ONESHOT watch is spent by its first event, whoever caused it
// (inotify_handle_inode_event destroys the watch after sending it), so
// another program's open of a watched directory takes the event the actor's
// step was to cause (seen under the hostile condition
// other_program_walks_the_tree: g2 IN_OPEN|IN_ISDIR . where g2 IN_OPEN .
// name=f was wanted). Such a run is undecided, never a pass.
func withoutSpentOneshot(want, got Obs) Obs {
	group := func(l string) string { return strings.SplitN(l, " ", 2)[0] }
	// A spent watch sends one event: the group's only line in got (its
	// IN_IGNORED is gone with withoutDeleteSelf) is that read.
	lines := map[string]int{}
	for _, l := range got {
		lines[group(l)]++
	}
	spent := map[string]bool{}
	for _, l := range got {
		if lines[group(l)] == 1 && strings.Contains(l, " IN_") && readingLine.MatchString(l) && !slices.Contains(want, l) {
			spent[group(l)] = true
		}
	}
	if len(spent) == 0 {
		return want
	}
	var out Obs
	for _, l := range want {
		if spent[group(l)] && strings.Contains(l, " IN_") && !slices.Contains(got, l) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// withoutDeleteSelf drops FAN_DELETE_SELF and IN_DELETE_SELF from each
// line's mask, and the lines left without a mask and IN_IGNORED lines.
func withoutDeleteSelf(o Obs) Obs {
	var out Obs
	for _, l := range o {
		f := strings.SplitN(l, " ", 3)
		if len(f) < 3 || !strings.HasPrefix(f[0], "g") {
			out = append(out, l)
			continue
		}
		var bits []string
		for _, b := range strings.Split(f[1], "|") {
			if b != "FAN_DELETE_SELF" && b != "IN_DELETE_SELF" && b != "IN_IGNORED" {
				bits = append(bits, b)
			}
		}
		if len(bits) == 0 || len(bits) == 1 && (bits[0] == "IN_ISDIR" || bits[0] == "FAN_ONDIR") {
			continue
		}
		out = append(out, f[0]+" "+strings.Join(bits, "|")+" "+f[2])
	}
	return out
}

// addProcs adds the processes of more that ps lacks.
func addProcs(ps, more []ownproc.Process) []ownproc.Process {
	for _, p := range more {
		if !slices.ContainsFunc(ps, func(q ownproc.Process) bool { return q.Pid == p.Pid }) {
			ps = append(ps, p)
		}
	}
	return ps
}

// procList joins processes for a report: "pid 4123 comm updatedb, pid 4200 gone".
func procList(ps []ownproc.Process) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.String())
	}
	return strings.Join(parts, ", ")
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
	got, foreign, err := r.runSettled(&s)
	if err != nil {
		t.Fatal(err)
	}
	want := predict(kernel(), &s)
	d := firstDiff(want, got)
	if len(foreign) > 0 && d < 0 {
		t.Interfered(fmt.Sprintf("other programs' events arrived in each of %d runs of the row", settleRuns), procList(foreign))
		return
	}
	if d >= 0 {
		others, err := r.othersAround(foreign, time.Now())
		if err != nil {
			t.Fatalf("%v", err)
		}
		if len(others) > 0 && othersCouldAdd(obsOrNil(want, d), obsOrNil(got, d)) {
			t.Logf("kernel and model differ at step %d:\n%s", d+1, s.Script())
			logStep(t.Logf, &s, d, want, got)
			t.Interfered("other programs used files on this filesystem around the run (their fanotify events, or a filesystem mark's events after it): the difference may be their doing (inotify events carry no pid)", procList(others))
			return
		}
		t.Errorf("kernel and model differ at step %d:\n%s", d+1, s.Script())
		logStep(t.Logf, &s, d, want, got)
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
		if st.Op != "mark" && st.Op != "markw" {
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
