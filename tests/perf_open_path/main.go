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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
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
				Doc:  "the file's directory watched for open/close with a listener draining: cost reported, not gated",
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
	in       int    // inotify fd (non-blocking)
	target   string // the file opened and closed
	watchDir string // directory watched during a run of the measured mode
	wd       int32  // current watch, -1 if none
	events   atomic.Int64
	overflow atomic.Int64
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
	in := t.Inotify(unix.IN_NONBLOCK)
	s.in = in.Fd()
	loop, err := openCloseLoop(s.target)
	if err != nil {
		t.Fatalf("%v", err)
	}
	perf.Check(t, &perf.Experiment{
		Suite: suite,
		Name:  t.Name(),
		Base:  perf.Condition{Name: "none", Run: loop},
		Cond: perf.Condition{Name: mode, Run: loop,
			Before: s.addWatch, After: s.rmWatch},
		OpsPerRun: opsPerRun,
		Latency:   true,
		Gate:      gate,
		FSPath:    dir,
		Helper:    s.listen,
	})
	t.Notef("listener: %d events read, %d queue overflows", s.events.Load(), s.overflow.Load())
}

func (s *setup) addWatch() error {
	wd, err := unix.InotifyAddWatch(s.in, s.watchDir, watchMask)
	if err != nil {
		return fmt.Errorf("inotify_add_watch(%s): %w", s.watchDir, err)
	}
	s.wd = int32(wd)
	return nil
}

func (s *setup) rmWatch() error {
	if s.wd < 0 {
		return nil
	}
	_, err := unix.InotifyRmWatch(s.in, uint32(s.wd))
	s.wd = -1
	if err != nil {
		return fmt.Errorf("inotify_rm_watch: %w", err)
	}
	return nil
}

// listen starts the listener on cpu: it drains the inotify fd (poll, then read until
// EAGAIN) and counts events and overflows until stopped.
func (s *setup) listen(cpu int) (func() error, error) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 1)
	started := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		restore, err := perf.PinThread(cpu)
		started <- err
		if err != nil {
			return
		}
		defer restore()
		buf := make([]byte, 64*1024)
		fds := []unix.PollFd{{Fd: int32(s.in), Events: unix.POLLIN}}
		for !stop.Load() {
			if _, err := unix.Poll(fds, 20); err != nil && !errors.Is(err, unix.EINTR) {
				errc <- fmt.Errorf("poll inotify: %w", err)
				return
			}
			for {
				n, err := unix.Read(s.in, buf)
				if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
					break
				}
				if err != nil {
					errc <- fmt.Errorf("read inotify: %w", err)
					return
				}
				s.count(buf[:n])
			}
		}
	}()
	if err := <-started; err != nil {
		wg.Wait()
		return nil, err
	}
	return func() error {
		stop.Store(true)
		wg.Wait()
		select {
		case err := <-errc:
			return err
		default:
			return nil
		}
	}, nil
}

func (s *setup) count(b []byte) {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			s.overflow.Add(1)
		}
		s.events.Add(1)
		step := unix.SizeofInotifyEvent + int(ev.Len)
		if step > len(b) {
			return
		}
		b = b[step:]
	}
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
