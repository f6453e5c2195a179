package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// recorded is one scenario and what the kernel did with it.
type recorded struct {
	Scenario Scenario
	Obs      []Obs
}

// recordFile is the -record format: per filesystem, the group kinds that
// kernel offered and every scenario of the seed range with its observations.
type recordFile struct {
	Kernel string
	FS     map[string]*fsRecord
}

type fsRecord struct {
	Kinds     []string
	Scenarios []recorded
}

type recording struct{ list []recorded }

func (r *recording) add(s *Scenario, o []Obs) { r.list = append(r.list, recorded{*s, o}) }

// setRecord takes -record FILE: the directory is opened now, because the
// test process later mounts its workspace tmpfs over /tmp (harness/fixture),
// where the file may be.
func setRecord(file string) error {
	fd, abs, err := fixture.OutputDir(file)
	if err != nil {
		return fmt.Errorf("-record %s: %w", file, err)
	}
	opts.record, opts.recDir = filepath.Base(abs), fd
	return nil
}

// loadAgainst reads -against FILE at once (before /tmp is shadowed).
func loadAgainst(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("-against: %w", err)
	}
	if err := json.Unmarshal(b, &opts.recorded); err != nil {
		return fmt.Errorf("-against %s: %w", file, err)
	}
	opts.against = file
	return nil
}

// save merges this filesystem's recording into the -record file (one file
// holds every filesystem of the run).
func (r *recording) save(fs string, kinds []string) error {
	rf := &recordFile{}
	if fd, err := unix.Openat(opts.recDir, opts.record, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		f := os.NewFile(uintptr(fd), opts.record)
		if json.NewDecoder(f).Decode(rf) != nil {
			rf = &recordFile{}
		}
		f.Close()
	}
	if rf.Kernel != feature.KernelRelease() {
		rf = &recordFile{Kernel: feature.KernelRelease()}
	}
	if rf.FS == nil {
		rf.FS = map[string]*fsRecord{}
	}
	rf.FS[fs] = &fsRecord{Kinds: kinds, Scenarios: r.list}
	b, err := json.Marshal(rf)
	if err != nil {
		return err
	}
	return fixture.WriteFileAt(opts.recDir, opts.record, b)
}

// compareAgainst replays the scenarios recorded in -against for this
// filesystem and lists every one whose observations differ from the
// recording, cut after the first differing step, with both sides.
// Scenarios with a group kind this kernel lacks are listed as such.
func compareAgainst(t *harness.T, r *runner, kinds []string, rf *recordFile) {
	fr := rf.FS[t.FS().Type]
	if fr == nil {
		t.Fatalf("-against %s: nothing recorded for %s", opts.against, t.FS().Type)
	}
	var missing []string
	for _, k := range fr.Kinds {
		if !contains(kinds, k) {
			missing = append(missing, k)
		}
	}
	diffs, lacking := 0, 0
	var undecided []string
	for _, rc := range fr.Scenarios {
		s := rc.Scenario
		if slices.ContainsFunc(s.Groups, func(g string) bool { return !contains(kinds, g) }) || unsupported(t, &s) != "" {
			lacking++
			continue
		}
		got, foreign, err := r.runSettled(&s)
		if err != nil {
			t.Fatalf("seed %d: %v", s.Seed, err)
		}
		d := firstDiff(rc.Obs, got)
		if len(foreign) > 0 && d < 0 {
			undecided = append(undecided, fmt.Sprintf("seed %d (%s)", s.Seed, procList(foreign)))
			continue
		}
		if d < 0 {
			continue
		}
		if others, err := r.othersAround(foreign, time.Now()); err != nil {
			t.Fatalf("%v", err)
		} else if len(others) > 0 {
			undecided = append(undecided, fmt.Sprintf("seed %d differs at step %d (%s)", s.Seed, d+1, procList(others)))
			continue
		}
		diffs++
		cut := s
		cut.Steps = s.Steps[:d+1]
		// One line per difference with both sides, then the script up to
		// the step that differs, indented under it.
		t.Errorf("seed %d (%s): %s (recorded) and %s (here) differ at step %d of %d (%s): recorded %s; here %s\n%s",
			s.Seed, t.FS().Type, rf.Kernel, feature.KernelRelease(), d+1, len(s.Steps), stepAt(&s, d), obsAt(rc.Obs, d), obsAt(got, d), strings.TrimRight(cut.Script(), "\n"))
		if diffs <= shrinkAgainstMax {
			// As reportMismatch's replays: each run after the earlier
			// runs' groups are gone.
			r.replaying = true
			shrinkAgainst(t.Logf, r, kernel(), &s, rc.Obs, got)
			r.replaying = false
		}
	}
	if len(undecided) > 0 {
		t.Interfered(fmt.Sprintf("%d recorded scenarios undecided: other programs' events arrived in each of their %d runs: %s",
			len(undecided), settleRuns, strings.Join(undecided, "; ")), strings.Join(undecided, "; "))
	}
	t.Notef("against %s (%s): %d scenarios, %d differ; %d not replayed for lack of a feature here (group kinds missing: %s)",
		opts.against, rf.Kernel, len(fr.Scenarios), diffs, lacking, fmt.Sprint(missing))
}

// shrinkAgainstMax bounds how many of a replay's differences are shrunk
// (each within shrinkBudget); the rest keep their script cut at the step
// that differs.
const shrinkAgainstMax = 10

// shrinkAgainst shrinks a recorded scenario that differs here, the way a
// model mismatch is shrunk (shrink), with the model as the oracle for the
// recording kernel: a scenario is recorded only when that kernel did what
// the model predicts (runExplore), so where this kernel differs from the
// recording it differs from the model too, and a smaller script that still
// makes it differ from the model is a reproducer of the same difference.
// When the recording does not equal the model's prediction (another model,
// a planted -model-fault) or this kernel agrees with the model, nothing is
// shrunk and that is said.
func shrinkAgainst(logf func(string, ...any), r mismatchRunner, k model.Kernel, s *Scenario, recorded, got []Obs) {
	if firstDiff(predict(k, s), recorded) >= 0 || firstDiff(predict(k, s), got) < 0 {
		logf("  (not shrunk: the model does not tell the two kernels apart on this scenario)")
		return
	}
	start, over := time.Now(), false
	fails := func(c *Scenario) bool {
		if time.Since(start) > shrinkBudget {
			over = true
			return false
		}
		g, _, err := r.runSettled(c)
		return err == nil && firstDiff(predict(k, c), g) >= 0
	}
	small := shrink(s, fails)
	g, _, err := r.runSettled(small)
	if err != nil {
		logf("  (re-running the shrunk script: %v)", err)
		return
	}
	w := predict(k, small)
	d := firstDiff(w, g)
	budget := ""
	if over {
		budget = fmt.Sprintf(", stopped by its %v budget", shrinkBudget)
	}
	logf("  shrunk to %d steps, %d groups (the model as the recording kernel's oracle%s):\n%s", len(small.Steps), len(small.Groups), budget,
		strings.TrimRight(indent(small.Script()), "\n"))
	if d >= 0 {
		logf("    at step %d (%s): recorded kernel (model) %s; here %s", d+1, stepAt(small, d), obsAt(w, d), obsAt(g, d))
	} else {
		logf("    (the shrunk script did not differ again when re-run for this report)")
	}
}

// indent puts two more spaces before every line of s.
func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}
