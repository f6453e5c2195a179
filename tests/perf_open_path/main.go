// Command perf_open_path measures the open/close event path on tmpfs (the
// none/other/parent comparison of the cover letter of "fsnotify: Check parent watches
// without child dentry flags"): per-operation p50/p99 latency and throughput of an
// open(O_RDONLY)+close loop on one file, with
//   - none:   no watch anywhere on the filesystem;
//   - other:  an inotify watch for open/close on another directory of the same
//     filesystem (the superblock has watchers, the file's parent has none);
//   - parent: the same watch on the file's own directory, a listener on another CPU
//     draining the IN_OPEN/IN_CLOSE_NOWRITE events.
//
// The modes cannot coexist on one filesystem, so each run sets its mode up before the
// clock starts (add or remove the watch) and re-warms with untimed operations.
// Gate: other/none p50 <= 3%: a watcher elsewhere on the filesystem must cost
// nothing here (the dentry flag DCACHE_FSNOTIFY_PARENT_WATCHED exists so that
// fsnotify_parent() need not look at the parent). parent/none is reported.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/perf"
)

const suite = "perf_open_path"

// opsPerRun is the number of open+close pairs in one timed run (quick profile).
const opsPerRun = 1000

// watchMask is what "other" and "parent" watch for: the events the loop generates.
const watchMask = unix.IN_OPEN | unix.IN_CLOSE_NOWRITE

func main() {
	harness.Main(harness.Suite{
		Name:        suite,
		Timeout:     perf.CaseTimeout,
		Flags:       perf.Flags.Register,
		Doc:         "open/close loop on tmpfs: a watch elsewhere on the filesystem costs at most 3% at p50",
		Filesystems: []string{"tmpfs"},
		Needs:       []*feature.Feature{feature.Inotify},
		Cases: []harness.Case{
			{
				Name: "other_watch",
				Doc:  "an inotify watch on another directory of the same filesystem costs <= 3% at p50",
				Run: func(t *harness.T) {
					measure(t, "other", perf.Gate{Metric: perf.P50, Max: 1.03,
						Why: "gate: the file's parent is not watched, so fsnotify_parent() must return on the dentry flag and the inode's empty mask whatever else the superblock watches"})
				},
			},
			{
				Name: "parent_watch",
				Doc:  "the file's directory watched for open/close with a listener draining: cost reported, not gated; the listener reads exactly one IN_OPEN and one IN_CLOSE_NOWRITE per operation",
				Run: func(t *harness.T) {
					measure(t, "parent", perf.Gate{Metric: perf.P50,
						Why: "no gate: every open and close queues an event for the listener; the cost is the feature, reported for before/after comparisons"})
				},
			},
		},
	})
}

// setup is one case's files, watch and listener.
type setup struct {
	t        *harness.T
	in       *inotify.Instance // non-blocking
	target   string            // the file opened and closed
	watchDir string            // directory watched during a run of the measured mode
	wd       int32             // current watch, -1 if none
	lis      *perf.InotifyListener
	// Counted while the measured mode's watch exists: open+close pairs, and
	// inotify_rm_watch calls.
	watchedOps, rmCalls int64
}

func measure(t *harness.T, mode string, gate perf.Gate) {
	dir := t.Dir()
	s := &setup{t: t, wd: -1, target: filepath.Join(dir, "parent", "file")}
	for _, d := range []string{"parent", "other"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatalf("mkdir: %v", err)
		}
	}
	if err := os.WriteFile(s.target, make([]byte, 4096), 0o644); err != nil {
		t.Fatalf("create %s: %v", s.target, err)
	}
	s.watchDir = filepath.Join(dir, mode)
	s.in = t.Inotify(unix.IN_NONBLOCK)
	loop, err := openCloseLoop(s.target)
	if err != nil {
		t.Fatalf("%v", err)
	}
	perf.Check(t, &perf.Experiment{
		Suite: suite,
		Name:  t.Name(),
		Base:  perf.Condition{Name: "none", Run: loop},
		Cond: perf.Condition{Name: mode, Run: func(r *perf.Run) error {
			s.watchedOps += int64(r.N)
			return loop(r)
		}, Before: s.addWatch, After: s.rmWatch},
		OpsPerRun: opsPerRun,
		Latency:   true,
		Gate:      gate,
		FSPath:    dir,
		Helper:    perf.InotifyHelper(s.in.Fd(), &s.lis),
		Verify:    func(stage perf.Stage, _ string) (string, error) { return s.verify(stage, mode) },
	})
}

// verify checks that no watch is left between runs (fdinfo: each run of the
// measured mode adds its watch and removes it) and, after measuring, that the
// listener read exactly the events inotify(7) promises:
//   - one IN_IGNORED per inotify_rm_watch ("watch was removed explicitly");
//   - parent: one IN_OPEN and one IN_CLOSE_NOWRITE per open+close made while the
//     watch existed. inotify merges an event only into the queue's last one, when
//     the two are identical (fs/notify/inotify/inotify_fsnotify.c inotify_merge,
//     called by fsnotify_insert_event for a non-empty queue); this one thread
//     queues OPEN, CLOSE, OPEN, ... and the reader removes from the head, so the
//     tail is the other type or the queue is empty: none is merged;
//   - other: nothing else (the watched directory is not the file's parent);
//   - no IN_Q_OVERFLOW: an overflow drops events (and would make the watched
//     runs cheaper), so any difference from these counts fails the case.
//
// With -aa and -inject the measured mode never runs: no watch, no event.
func (s *setup) verify(stage perf.Stage, mode string) (string, error) {
	ws, err := s.in.Watches()
	if err != nil {
		return "", err
	}
	if len(ws) != 0 {
		return "", fmt.Errorf("inotify fdinfo: watches %v between runs, want none (each %s run adds and removes its own)", ws, mode)
	}
	if stage == perf.VerifyBefore {
		return fmt.Sprintf("inotify fdinfo: no watch between runs; %s mode watches %s for IN_OPEN|IN_CLOSE_NOWRITE", mode, s.watchDir), nil
	}
	var wantOpen int64
	if mode == "parent" {
		wantOpen = s.watchedOps
	}
	l := s.lis
	got := fmt.Sprintf("listener read %s for %d watched open+close and %d inotify_rm_watch", l, s.watchedOps, s.rmCalls)
	if l.Count(unix.IN_OPEN) != wantOpen || l.Count(unix.IN_CLOSE_NOWRITE) != wantOpen ||
		l.Count(unix.IN_IGNORED) != s.rmCalls || l.Others(unix.IN_OPEN, unix.IN_CLOSE_NOWRITE, unix.IN_IGNORED) != 0 {
		return "", fmt.Errorf("%s; want exactly IN_OPEN %d, IN_CLOSE_NOWRITE %d, IN_IGNORED %d and nothing else (no merge, no IN_Q_OVERFLOW)",
			got, wantOpen, wantOpen, s.rmCalls)
	}
	return "inotify fdinfo: no watch left; " + got + ": exact", nil
}

func (s *setup) addWatch() error {
	wd, err := s.in.AddWatch(s.watchDir, watchMask)
	if err != nil {
		return err
	}
	s.wd = wd
	return nil
}

func (s *setup) rmWatch() error {
	if s.wd < 0 {
		return nil
	}
	err := s.in.RmWatch(s.wd)
	s.wd = -1
	s.rmCalls++
	return err
}

// openCloseLoop returns the measured loop: r.N times openat(O_RDONLY) + close on
// path with raw syscalls (the path is converted once, so nothing allocates), each
// operation's latency taken with the vDSO monotonic clock (one read per operation:
// the end of one is the start of the next).
func openCloseLoop(path string) (func(r *perf.Run) error, error) {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return nil, fmt.Errorf("path %q: %w", path, err)
	}
	atFDCWD := unix.AT_FDCWD // a variable: the negative constant does not convert to uintptr
	return func(r *perf.Run) error {
		t0 := perf.Now()
		for i := 0; i < r.N; i++ {
			fd, _, e := unix.Syscall6(unix.SYS_OPENAT, uintptr(atFDCWD), uintptr(unsafe.Pointer(p)),
				uintptr(unix.O_RDONLY|unix.O_CLOEXEC), 0, 0, 0)
			if e != 0 {
				return fmt.Errorf("open %s: %w", path, e)
			}
			if _, _, e := unix.Syscall(unix.SYS_CLOSE, fd, 0, 0); e != 0 {
				return fmt.Errorf("close: %w", e)
			}
			perf.Spin(r.Spin)
			t1 := perf.Now()
			r.Lat[i] = t1 - t0
			t0 = t1
		}
		return nil
	}, nil
}
