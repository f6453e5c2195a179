package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/perf"
)

// Sizes of the seed reproducer: 96 instance/inode pairs, 25 measured rounds.
const (
	nPairs     = 96
	roundsRun  = 25
	watchMask  = unix.IN_MODIFY      // each worker's watch
	keeperMask = unix.IN_DELETE_SELF // the keeper's watch on the shared inode
	// maxRatio was the in-run gate on distinct/shared (see Gate.Why: now
	// reported, not gated).
	maxRatio = 1.25
	maxCV    = 0.15 // seed 001's variability gate, applied with -baseline
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
	keeper  *inotify.Instance
	target  string // the shared inode's first name
	// rmCalls counts inotify_rm_watch calls, ignored the IN_IGNORED events
	// drained, others any other event drained.
	rmCalls, ignored, others int64
	countEv                  func(wd int32, mask inotify.Mask, cookie uint32, name []byte)
	// quiesce is the sleep before each round in instruction count mode
	// (quiesceICount), 0 otherwise; the instances are then also renewed
	// before each round (renew).
	quiesce time.Duration
}

// quiesceICount is how long a round waits, in instruction count mode, for the
// work the last round deferred: inotify_rm_watch's last mark reference puts
// the mark on the destroy list, freed by a delayed work FSNOTIFY_REAPER_DELAY
// (1 jiffy) later after an SRCU grace period, and an inode's connector is
// freed by a work after one too (fs/notify/mark.c fsnotify_put_mark,
// fsnotify_mark_destroy_workfn, fsnotify_connector_destroy_workfn). Left to
// run when they fall due, those works and the slab frees behind them land
// in a later round, on the one vCPU, in different rounds in each block: a
// round's count then varies by itself. 25 ms is 6 jiffies at HZ=250, 2.5 at
// HZ=100; the guest's clock skips idle time there (sleep=off), so the wait
// costs no real time, only budget (quiesceBudget). The chunks' wall figure
// (insn/op) then includes the waits and means nothing in this mode; the
// gated figure is the workers' own count (cpu-insn/op), which does not.
const (
	quiesceICount = 25 * time.Millisecond
	quiesceBudget = 120 * time.Second
)

func runChurn(t *harness.T, p int) {
	if p > 1 {
		// Workers add and remove watches at once: contention on the
		// instances' and connectors' locks between CPUs.
		if perf.NoContention(t, fmt.Sprintf("churn_p%d (%d workers adding and removing watches at once)", p, p)) {
			return
		}
	}
	n := instancesAvailable(t, nPairs+1)
	if n-1 < nPairs {
		// The seed's condition is 96 pairs; fewer would measure something else.
		t.Skipf("only %d inotify instances available, the workload needs %d (fs.inotify.max_user_instances could not be raised)", n, nPairs+1)
	}
	c := &churn{t: t, p: p, elapsed: make([]atomic.Int64, p), buf: make([]byte, 64<<10), created: n - 1}
	budget := perf.Flags.WithBudget(6*time.Second, 20*time.Second)
	if perf.ICount() {
		// A block is 50 rounds, so 50 waits: 1.25 s of guest time each.
		c.quiesce = quiesceICount
		budget = perf.Flags.WithBudget(quiesceBudget, quiesceBudget)
	}
	c.countEv = func(_ int32, mask inotify.Mask, _ uint32, _ []byte) {
		if mask == unix.IN_IGNORED {
			c.ignored++
		} else {
			c.others++
		}
	}
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
	c.keeper, c.target = keeper, target
	// One cleanup for the instances: renew replaces them in instruction
	// count mode, so their numbers change.
	t.Cleanup(func() {
		for _, fd := range c.fds {
			unix.Close(fd)
		}
	})
	for i := 0; i < c.created; i++ {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			t.Fatalf("inotify_init1 #%d of %d: %v", i+1, c.created, err)
		}
		c.fds = append(c.fds, fd)
	}
	c.paths.Store(&c.dist)

	crew, _, cpus, err := perf.StartCrew(p, c.job, t.Cleanup)
	if errors.Is(err, perf.ErrOversubscribed) {
		t.Skipf("%v", err)
	}
	if err != nil {
		t.Fatalf("start %d workers: %v", p, err)
	}
	c.crew, c.ncpu = crew, len(cpus)

	e := &perf.Experiment{
		Suite: suiteName, Name: fmt.Sprintf("churn_p%d", p), Latency: true, FSPath: dir,
		Base: c.condition("shared", &c.shared), Cond: c.condition("distinct", &c.dist),
		// 5 chunks of 5 rounds, in instruction count mode too: one round per
		// chunk (25 chunks) was tried there to leave timer ticks out of the
		// median chunk and made the A/A interval wider (base ±5.3% on 7.3,
		// against ±0.4% with five rounds on 6.1): a round's instructions
		// varied by themselves (deferred mark and connector frees landing
		// in it), which is why each round there now starts once the last
		// one's deferred work has run (quiesceICount).
		OpsPerRun: roundsRun, Chunks: 5, CPUTime: true,
		Verify:       c.verify,
		BaselineGate: variabilityGate,
		// Reported, not gated in-run: the distinct side does the control's
		// work plus one inode connector created and destroyed per watch
		// (fs/notify/mark.c fsnotify_add_mark_list / fsnotify_put_mark, since
		// 94bd01253c3d also the sb's connector list under its lock), and
		// what that costs against an add/remove is the machine's, not a
		// property of the kernel: the in-run gate of 1.25 held at P1 on the
		// machines of issue 7 (1.038) and of 2026-12-04 (1.05), and failed
		// at 1.98-2.09 on 2026-12-05's, with the same 6.18.44 kernel and
		// the fb7ddc5 binary, drop_caches or not. A kernel change is judged
		// where the seed judged it: against another kernel's run on the same
		// machine (-baseline, BaselineGate and the engine's threshold).
		Gate: perf.Gate{Metric: perf.CPUNs,
			Why: fmt.Sprintf("distinct/shared on the median round's aggregate worker ns/watch, reported: a connector's "+
				"create/destroy against an add/remove is the machine's cost (1.04-1.05 at P1 on earlier machines, "+
				"1.98-2.09 on 2026-12-05's with the same kernel and binary), so no in-run bound (%.2f was) is a "+
				"kernel property; -baseline gates the change between kernels", maxRatio)},
	}
	e.Describe = func(res *perf.Result) []string {
		_, cond := res.BlockValues(res.Metric(perf.CPUNs))
		return []string{fmt.Sprintf("distinct aggregate CPU %s over blocks: CV %.1f%% (seed's variability gate %.0f%%, applied with -baseline)",
			res.Metric(perf.CPUNs), 100*coefVar(cond), 100*maxCV)}
	}
	perf.CheckWith(t, e, budget)
}

// verify checks the setup the ratio depends on: 96 instances with no watch left
// between rounds (inotify fdinfo), the keeper's IN_DELETE_SELF watch on the
// shared inode (which keeps its connector attached), that inode's 96+1 names,
// and, after measuring, one IN_IGNORED and nothing else drained per
// inotify_rm_watch (inotify(7): "watch was removed explicitly").
func (c *churn) verify(stage perf.Stage, _ string) (string, error) {
	for i, fd := range c.fds {
		ws, err := inotify.ReadWatches(os.Getpid(), fd)
		if err != nil {
			return "", err
		}
		if len(ws) != 0 {
			return "", fmt.Errorf("instance %d: watches %v between rounds, want none", i, ws)
		}
	}
	var st unix.Stat_t
	if err := unix.Stat(c.target, &st); err != nil {
		return "", fmt.Errorf("stat %s: %w", c.target, err)
	}
	if st.Nlink != uint64(len(c.shared)+1) {
		return "", fmt.Errorf("%s has %d names, want %d (one per pair and its own)", c.target, st.Nlink, len(c.shared)+1)
	}
	ks, err := c.keeper.Watches()
	if err != nil {
		return "", err
	}
	if len(ks) != 1 || ks[0].Ino != st.Ino || ks[0].Dev != st.Dev || ks[0].Mask != keeperMask {
		return "", fmt.Errorf("keeper fdinfo: %v, want one IN_DELETE_SELF watch on the shared inode %d", ks, st.Ino)
	}
	what := fmt.Sprintf("%d instances with no watch between rounds, %d distinct files, shared inode with %d names and the keeper's %s",
		len(c.fds), len(c.dist), st.Nlink, ks[0])
	if stage == perf.VerifyBefore {
		return what, nil
	}
	if err := c.drain(); err != nil {
		return "", err
	}
	if c.ignored != c.rmCalls || c.others != 0 {
		return "", fmt.Errorf("drained %d IN_IGNORED and %d other events for %d inotify_rm_watch, want one IN_IGNORED each and nothing else",
			c.ignored, c.others, c.rmCalls)
	}
	return fmt.Sprintf("%s; %d IN_IGNORED for %d inotify_rm_watch", what, c.ignored, c.rmCalls), nil
}

// variabilityGate is seed 001's variability gate for -baseline: the coefficient
// of variation of the distinct side's per-block medians must be <= 15% in this
// run and in each baseline, else the comparison is undecided (the seed excluded
// its 16-worker run for that).
func variabilityGate(cur *perf.Result, before []*perf.Result) (perf.Verdict, string) {
	for i, old := range before {
		if old == nil {
			continue
		}
		_, oc := old.BlockValues(old.Metric(perf.CPUNs))
		if cv := coefVar(oc); cv > maxCV {
			return perf.Undecided, fmt.Sprintf("variability gate: baseline %d CV %.1f%% > %.0f%%", i+1, 100*cv, 100*maxCV)
		}
	}
	_, cc := cur.BlockValues(cur.Metric(perf.CPUNs))
	if cv := coefVar(cc); cv > maxCV {
		return perf.Undecided, fmt.Sprintf("variability gate: this run's CV %.1f%% > %.0f%%", 100*cv, 100*maxCV)
	}
	return perf.Pass, fmt.Sprintf("variability gate: CV <= %.0f%% in every run", 100*maxCV)
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
	t0 := perf.ThreadCPU()
	for i := id; i < len(paths); i += c.p {
		wd, _, e := unix.RawSyscall(unix.SYS_INOTIFY_ADD_WATCH, uintptr(c.fds[i]), uintptr(unsafe.Pointer(paths[i])), watchMask)
		if e != 0 {
			return e
		}
		if _, _, e := unix.RawSyscall(unix.SYS_INOTIFY_RM_WATCH, uintptr(c.fds[i]), wd, 0); e != 0 {
			return e
		}
		perf.Spin(spin)
	}
	c.elapsed[id].Store(perf.ThreadCPU() - t0)
	return 0
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
			c.rmCalls += int64(r.N) * int64(len(*paths))
			for i := 0; i < r.N; i++ {
				if c.quiesce > 0 {
					// Untimed (the latencies are the workers' CPU times):
					// every round starts from the same state, with the last
					// round's IN_IGNORED events read (freed), new instances
					// (renew) and the deferred frees run.
					if err := c.drain(); err != nil {
						return err
					}
					if err := c.renew(); err != nil {
						return err
					}
					time.Sleep(c.quiesce)
				}
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

// renew replaces each instance by a new one (instruction count mode, before
// each round, untimed). An instance's watch descriptors only grow
// (inotify_add_watch takes them from idr_alloc_cyclic,
// fs/notify/inotify/inotify_user.c inotify_add_to_idr): with one watch at a
// time, each add allocates the radix tree's nodes down to its slot and each
// remove frees them through RCU (lib/radix-tree.c delete_node), two levels
// of them once the numbers pass 64. Left to grow, the blocks' counts were
// serially correlated on 7.3 (the base's interval, widened for that, was
// unbounded). A new instance starts again at wd 1, so every round does the
// same work: each watch is its instance's first, in a one-level tree. That
// is less than a long-lived instance does (timing mode, the seed): on 6.1
// 11474 against 12241 instructions per watch, -6%, the same on both sides of
// the comparison and on every kernel. Renewed before each chunk only (wds 1
// to 5), 6.1 counted 11745 and was exact, 7.3 was not ([0.9997,1.0003]):
// the rounds of a chunk then differ by their wd and by the IN_IGNORED
// events queued by the rounds before them.
// The instances have no watch here (verify), so closing one queues nothing.
func (c *churn) renew() error {
	for i, fd := range c.fds {
		nfd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			return fmt.Errorf("renew instance %d: inotify_init1: %w", i, err)
		}
		c.fds[i] = nfd
		if err := unix.Close(fd); err != nil {
			return fmt.Errorf("renew instance %d: close: %w", i, err)
		}
	}
	return nil
}

func (c *churn) drain() error {
	for _, fd := range c.fds {
		for {
			n, err := unix.Read(fd, c.buf)
			if err == unix.EAGAIN {
				break
			}
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return fmt.Errorf("read inotify: %w", err)
			}
			if err := inotify.Walk(c.buf[:n], c.countEv); err != nil {
				return err
			}
		}
	}
	return nil
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
