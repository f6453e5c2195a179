package perf

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Crew runs one job on several OS threads at once: the calling (measuring) thread
// is member 0, members 1..n-1 are goroutines locked to their own OS threads and
// pinned to CPUs. A run is released through a futex word and its end is signalled
// through another, so nothing in a run allocates, logs or uses a channel. The
// engine pins and times the calling thread only; a Crew is what lets one timed run
// span N clients (the N-client write and watch-churn workloads).
type Crew struct {
	n    int
	job  func(id int) unix.Errno
	errs []atomic.Uint32 // errno of each member's last run

	gen  atomic.Uint32 // futex word: bumped to release a run
	left atomic.Int32  // members 1..n-1 still working in this run
	done atomic.Uint32 // futex word: 1 once the last of them finished
	quit atomic.Bool
	wg   sync.WaitGroup
	// share: the sharing profile (Sharing): members join their vCPU
	// around their job and the calling thread leaves its own while it
	// waits, so only the vCPUs running a job count (sharing.go).
	share bool
}

// NewCrew starts members 1..n-1, member i pinned to cpus[i%len(cpus)], each
// running job(i) once per run. job must not allocate, log, or block on Go
// primitives. Stop the crew with Stop.
func NewCrew(n int, cpus []int, job func(id int) unix.Errno) (*Crew, error) {
	c := &Crew{n: n, job: job, errs: make([]atomic.Uint32, n), share: Sharing()}
	started := make(chan error, n)
	for i := 1; i < n; i++ {
		c.wg.Add(1)
		go c.member(i, cpus[i%len(cpus)], started)
	}
	var first error
	for i := 1; i < n; i++ {
		if err := <-started; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		c.Stop()
		return nil, first
	}
	return c, nil
}

func (c *Crew) member(id, cpu int, started chan<- error) {
	defer c.wg.Done()
	if err := PinForever(cpu); err != nil {
		started <- fmt.Errorf("crew member %d: %w", id, err)
		return
	}
	seen := c.gen.Load()
	started <- nil
	for {
		for c.gen.Load() == seen {
			futexWait(&c.gen, seen)
		}
		seen = c.gen.Load()
		if c.quit.Load() {
			return
		}
		if c.share {
			shareJoin()
		}
		c.errs[id].Store(uint32(c.job(id)))
		if c.share {
			shareLeave()
		}
		if c.left.Add(-1) == 0 {
			c.done.Store(1)
			futexWake(&c.done)
		}
	}
}

// Run performs one run: it releases members 1..n-1, runs job(0) on the calling
// thread, and waits for all of them. It returns the first member's error.
// Call it on the measuring goroutine (the engine's Condition.Run): in the
// sharing profile it reads shareWindowJoined, which only that goroutine
// writes.
func (c *Crew) Run() error {
	// In the sharing profile only the jobs count: the calling thread's
	// vCPU is left around the release and the wait, as each member joins
	// its own around its job only, so the wake-ups that start and end a
	// run (whose path depends on whether a member was still going to
	// sleep, and which write the waiters' futex_q on their stacks) are in
	// no window. Only a run inside a window (the engine joined the calling
	// thread's vCPU) leaves and rejoins: a warm-up run outside one would
	// otherwise leave a vCPU it never joined and then join it for good,
	// counting member 0's waits in every later window.
	joined := c.share && shareWindowJoined
	if c.n > 1 {
		c.left.Store(int32(c.n - 1))
		c.done.Store(0)
		if joined {
			shareLeave()
		}
		c.gen.Add(1)
		futexWake(&c.gen)
		if joined {
			shareJoin()
		}
	}
	c.errs[0].Store(uint32(c.job(0)))
	if c.n > 1 {
		if joined {
			shareLeave()
		}
		for c.done.Load() == 0 {
			futexWait(&c.done, 0)
		}
		if joined {
			shareJoin()
		}
	}
	for i := range c.errs {
		if e := c.errs[i].Load(); e != 0 {
			return fmt.Errorf("client %d: %w", i, unix.Errno(e))
		}
	}
	return nil
}

// Stop ends the members and waits for their threads to exit.
func (c *Crew) Stop() {
	c.quit.Store(true)
	c.gen.Add(1)
	futexWake(&c.gen)
	c.wg.Wait()
}

// futex(2) operations (linux/futex.h: FUTEX_WAIT 0, FUTEX_WAKE 1, FUTEX_PRIVATE_FLAG 128).
const (
	futexWaitPrivate = 0 | 128
	futexWakePrivate = 1 | 128
)

// futexWait sleeps while *w == val (FUTEX_WAIT_PRIVATE; spurious wake-ups are
// handled by the callers' loops).
func futexWait(w *atomic.Uint32, val uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitPrivate,
		uintptr(val), 0, 0, 0)
}

// futexWake wakes every thread sleeping on w.
func futexWake(w *atomic.Uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakePrivate,
		uintptr(1<<30), 0, 0, 0)
}

// CPUOrder returns the allowed CPUs starting with the engine's worker CPU, then its
// helper CPU, then the rest: client i runs on CPUOrder[i%len].
func CPUOrder(worker, helper int, allowed []int) []int {
	out := []int{worker}
	if helper != worker {
		out = append(out, helper)
	}
	for _, c := range allowed {
		if c != worker && c != helper {
			out = append(out, c)
		}
	}
	return out
}
