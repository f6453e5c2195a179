package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/perf"
)

// Sizes of the seed reproducer: 96 instance/inode pairs, 25 measured rounds.
const (
	nPairs     = 96
	roundsRun  = 25
	watchMask  = unix.IN_MODIFY      // each worker's watch
	keeperMask = unix.IN_DELETE_SELF // the keeper's watch on the shared inode
	maxRatio   = 1.25                // in-run gate on distinct/shared
	maxCV      = 0.15                // seed 001's variability gate, applied with -baseline
)

const sysctlInstances = "fs.inotify.max_user_instances"

// churn is one case's state: the instances, both sets of paths, the crew.
type churn struct {
	t       *harness.T
	p       int
	fds     []int   // nPairs inotify instances, one watch at most each
	dist    []*byte // distinct files d-00..d-95
	shared  []*byte // hard links l-00..l-95 to one inode
	paths   atomic.Pointer[[]*byte]
	spin    atomic.Int64   // -inject work per watch
	ready   atomic.Int32   // start barrier of a round
	elapsed []atomic.Int64 // each worker's time in the round
	crew    *perf.Crew
	ncpu    int
	buf     []byte
	created int
}

func runChurn(t *harness.T, p int) {
	n := instancesAvailable(t, nPairs+1)
	c := &churn{t: t, p: p, elapsed: make([]atomic.Int64, p), buf: make([]byte, 64<<10), created: n - 1}
	dir := t.Dir()
	for i := 0; i < c.created; i++ {
		c.dist = append(c.dist, cpath(t, filepath.Join(dir, fmt.Sprintf("d-%02d", i))))
		c.shared = append(c.shared, cpath(t, filepath.Join(dir, fmt.Sprintf("l-%02d", i))))
	}
	for i := 0; i < c.created; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("d-%02d", i)), nil, 0o644); err != nil {
			t.Fatalf("%v", err)
		}
	}
	target := filepath.Join(dir, "shared")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatalf("%v", err)
	}
	for i := 0; i < c.created; i++ {
		if err := os.Link(target, filepath.Join(dir, fmt.Sprintf("l-%02d", i))); err != nil {
			t.Fatalf("%v", err)
		}
	}
	// The keeper watch keeps the shared inode's connector attached, so the control
	// never creates or destroys one (seed 001).
	keeper := t.Inotify(unix.IN_NONBLOCK)
	if _, err := keeper.AddWatch(target, keeperMask); err != nil {
		t.Fatalf("keeper: %v", err)
	}
	for i := 0; i < c.created; i++ {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			t.Fatalf("inotify_init1 #%d of %d: %v", i+1, c.created, err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		c.fds = append(c.fds, fd)
	}
	c.paths.Store(&c.dist)

	old := runtime.GOMAXPROCS(0)
	if want := p + 4; want > old {
		runtime.GOMAXPROCS(want)
		t.Cleanup(func() { runtime.GOMAXPROCS(old) })
	}
	plan, err := perf.PlanCPUs()
	if err != nil {
		t.Fatalf("%v", err)
	}
	allowed, err := perf.AllowedCPUs()
	if err != nil {
		t.Fatalf("%v", err)
	}
	c.ncpu = len(allowed)
	c.crew, err = perf.NewCrew(p, perf.CPUOrder(plan.Worker, plan.Helper, allowed), c.job)
	if err != nil {
		t.Fatalf("start %d workers: %v", p, err)
	}
	t.Cleanup(c.crew.Stop)

	e := &perf.Experiment{
		Suite: suiteName, Name: fmt.Sprintf("churn_p%d", p), Latency: true, FSPath: dir,
		Base: c.condition("shared", &c.shared), Cond: c.condition("distinct", &c.dist),
		OpsPerRun: roundsRun, Chunks: 5,
		Gate: perf.Gate{Metric: perf.P50, Max: maxRatio,
			Why: fmt.Sprintf("gate distinct/shared <= %.2f on the median round's aggregate worker ns/watch: the distinct "+
				"side does the control's work plus one inode connector created and destroyed per watch "+
				"(fs/notify/mark.c fsnotify_add_mark_list / fsnotify_put_mark, since 94bd01253c3d also the sb's "+
				"connector list under its lock); issue 7 measured 1.038 at P1 here, the seed ~0.25 at P8 (the shared "+
				"control serializes on one connector); 25%% is room for that creation (and this VM's noise), not for a connector costing "+
				"a quarter of an add/remove", maxRatio)},
	}
	check(t, e, c)
}

// job is worker id's part of a round: it waits for the other workers (when each
// has a CPU), then adds and removes one watch on each of its pairs, timing itself
// in CPU time.
func (c *churn) job(id int) unix.Errno {
	paths := *c.paths.Load()
	if c.p > 1 {
		c.ready.Add(1)
		for spins := 0; c.ready.Load() < int32(c.p); spins++ {
			if c.p > c.ncpu || spins > 1<<16 {
				unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			}
		}
	}
	spin := int(c.spin.Load())
	t0 := threadCPU()
	for i := id; i < len(paths); i += c.p {
		wd, _, e := unix.Syscall(unix.SYS_INOTIFY_ADD_WATCH, uintptr(c.fds[i]), uintptr(unsafe.Pointer(paths[i])), watchMask)
		if e != 0 {
			return e
		}
		if _, _, e := unix.Syscall(unix.SYS_INOTIFY_RM_WATCH, uintptr(c.fds[i]), wd, 0); e != 0 {
			return e
		}
		perf.Spin(spin)
	}
	c.elapsed[id].Store(threadCPU() - t0)
	return 0
}

// threadCPU returns the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID) in ns.
// A worker's time is its CPU time, not wall time: on a 2-CPU VM shared with other
// tenants a preempted worker would otherwise be charged for others' work, while
// every cost of an add/remove, spinning on a contended lock included, is CPU time.
func threadCPU() int64 {
	var ts unix.Timespec
	unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_THREAD_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// condition runs r.N rounds on paths; op i's latency is the round's aggregate
// worker ns/watch (sum of the workers' CPU times / pairs), the seed's metric with
// CPU time for wall time (see threadCPU).
func (c *churn) condition(name string, paths *[]*byte) perf.Condition {
	return perf.Condition{
		Name: name,
		Run: func(r *perf.Run) error {
			// Read the IN_IGNORED events of the previous removals (not timed: the
			// latencies are the workers' own times).
			if err := c.drain(); err != nil {
				return err
			}
			c.paths.Store(paths)
			c.spin.Store(int64(r.Spin))
			for i := 0; i < r.N; i++ {
				c.ready.Store(0)
				if err := c.crew.Run(); err != nil {
					return fmt.Errorf("round: %w", err)
				}
				var sum int64
				for w := range c.elapsed {
					sum += c.elapsed[w].Load()
				}
				r.Lat[i] = sum / int64(len(*paths))
			}
			return nil
		},
	}
}

func (c *churn) drain() error {
	for _, fd := range c.fds {
		for {
			_, err := unix.Read(fd, c.buf)
			if err == unix.EAGAIN {
				break
			}
			if err != nil && err != unix.EINTR {
				return fmt.Errorf("read inotify: %w", err)
			}
		}
	}
	return nil
}

// check measures e, prints the figures, records it for -save, and decides: the
// in-run gate, and with -baseline the engine's comparison plus the seed's CV gate
// (the coefficient of variation of the distinct side's per-block medians must be
// <= 15%, else the comparison is undecided, as seed 001 excluded its 16-worker run).
// harness/perf.CheckWith has no hook for an extra variability gate, so this is
// CheckWith's sequence with that gate inserted before the verdict.
func check(t *harness.T, e *perf.Experiment, c *churn) {
	o := options()
	res, err := e.Measure(o, t.Deadline())
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, l := range res.Figures() {
		t.Notef("%s", l)
	}
	if c.created != nPairs {
		t.Notef("sized down: %d instance/inode pairs instead of %d (fs.inotify.max_user_instances)", c.created, nPairs)
	}
	if err := perf.Record(res, o); err != nil {
		t.Errorf("%v", err)
	}
	_, cond := res.BlockValues(perf.P50)
	cv := coefVar(cond)
	t.Notef("distinct aggregate ns/watch over blocks: CV %.1f%% (seed's variability gate %.0f%%, applied with -baseline)", 100*cv, 100*maxCV)
	v, reason := res.Verdict, res.Reason
	if len(o.Baselines) > 0 {
		var files []*perf.SavedFile
		for _, p := range o.Baselines {
			f := baselines[p]
			if f == nil {
				t.Fatalf("baseline %s: not readable when the binary started", p)
			}
			files = append(files, f)
			t.Notef("baseline %s: kernel %s", p, f.Env.Kernel)
		}
		rows := perf.Compare(res, files, o)
		t.Notef("this run: kernel %s; pre-registered regression threshold +%.1f%% on the gated ratio", res.Env.Kernel, 100*o.Threshold)
		for _, l := range perf.Table(rows, o.Baselines) {
			t.Notef("%s", l)
		}
		for _, r := range rows {
			if !r.Gated {
				continue
			}
			bv, br := r.Verdict, r.Reason
			for i, f := range files {
				if old := f.Find(res.Name, res.Mode); old != nil {
					_, oc := old.BlockValues(perf.P50)
					if ocv := coefVar(oc); ocv > maxCV {
						bv, br = perf.Undecided, fmt.Sprintf("variability gate: baseline %d CV %.1f%% > %.0f%%; %s", i+1, 100*ocv, 100*maxCV, br)
					}
				}
			}
			if cv > maxCV {
				bv, br = perf.Undecided, fmt.Sprintf("variability gate: this run's CV %.1f%% > %.0f%%; %s", 100*cv, 100*maxCV, br)
			}
			v, reason = worse(v, reason, bv, "baseline: "+br)
		}
	}
	switch v {
	case perf.Fail:
		t.Errorf("%s", reason)
	case perf.Undecided:
		if t.Strict() || o.Strict {
			t.Errorf("undecided (failure under -strict): %s", reason)
			return
		}
		t.Skipf("%s", reason)
	default:
		t.Notef("%s", reason)
	}
}

// worse combines two verdicts: a failure wins, then undecided, then pass.
func worse(v1 perf.Verdict, r1 string, v2 perf.Verdict, r2 string) (perf.Verdict, string) {
	rank := map[perf.Verdict]int{perf.Fail: 3, perf.Undecided: 2, perf.Pass: 1}
	switch {
	case rank[v2] > rank[v1]:
		return v2, r2 + "; " + r1
	case rank[v2] == rank[v1]:
		return v1, r1 + "; " + r2
	}
	return v1, r1
}

func coefVar(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	var s, ss float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / m
}

// options returns the command line's engine options with a budget per experiment
// in the quick profile, unless -budget was given: 6 s, 20 s with -save/-baseline.
func options() *perf.Options {
	o := *perf.Flags
	if o.Budget == 0 && o.Profile != "full" {
		o.Budget = 6 * time.Second
		if o.Save != "" || len(o.Baselines) > 0 {
			// the engine then adds blocks until the ratio is known to
			// ±threshold/4, so the saved run passes the variability gate
			o.Budget = 20 * time.Second
		}
	}
	return &o
}

func cpath(t *harness.T, p string) *byte {
	b, err := unix.BytePtrFromString(p)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return b
}

// instancesAvailable makes room for need more inotify instances of this user:
// fs.inotify.max_user_instances (128 here) counts every instance root holds on the
// machine, so when fewer than need are free it raises the limit (restored at
// cleanup, said in a diagnostic). If it cannot, it returns what is free and the
// case runs sized down, also said.
func instancesAvailable(t *harness.T, need int) int {
	limit, err := fixture.SysctlInt(sysctlInstances)
	if err != nil {
		t.Fatalf("%v", err)
	}
	used := inotifyInUse()
	const margin = 32 // for the harness and other binaries starting meanwhile
	if used+need+margin <= limit {
		t.Notef("fs.inotify.max_user_instances %d: %d in use, %d needed: not raised", limit, used, need)
		return need
	}
	want := used + need + 2*margin
	if _, err := t.SetSysctl(sysctlInstances, strconv.Itoa(want)); err != nil {
		free := max(2, min(need, limit-used-margin))
		t.Notef("fs.inotify.max_user_instances is %d with %d in use and cannot be raised (%v): sized down to %d instances", limit, used, err, free)
		return free
	}
	t.Notef("fs.inotify.max_user_instances raised for %d instances in use and %d needed", used, need)
	return need
}

// inotifyInUse counts the inotify instances open on the machine (an upper bound
// of root's: the limit is per user).
func inotifyInUse() int {
	n := 0
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, f := range fds {
		if l, err := os.Readlink(f); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}
