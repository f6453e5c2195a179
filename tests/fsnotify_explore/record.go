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
		t.Errorf("seed %d: %s (recorded) and %s (here) differ at step %d:\n%s", s.Seed, rf.Kernel, feature.KernelRelease(), d+1, strings.TrimRight(cut.Script(), "\n"))
		t.Logf("  %s: %s", rf.Kernel, obsAt(rc.Obs, d))
		t.Logf("  %s: %s", feature.KernelRelease(), obsAt(got, d))
	}
	if len(undecided) > 0 {
		t.Interfered(fmt.Sprintf("%d recorded scenarios undecided: other programs' events arrived in each of their %d runs: %s",
			len(undecided), settleRuns, strings.Join(undecided, "; ")), strings.Join(undecided, "; "))
	}
	t.Notef("against %s (%s): %d scenarios, %d differ; %d not replayed for lack of a feature here (group kinds missing: %s)",
		opts.against, rf.Kernel, len(fr.Scenarios), diffs, lacking, fmt.Sprint(missing))
}
