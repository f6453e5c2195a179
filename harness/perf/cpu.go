package perf

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ThreadCPU returns the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID) in ns,
// with a raw syscall (no allocation). Multi-thread workloads (perf_parent_write's
// clients, perf_watch_churn's workers) time themselves with it: on a small shared
// machine a preempted thread would otherwise be charged for others' work in wall
// time, while every cost the kernel adds to an operation, spinning on a contended
// lock or a stalled cacheline included, is CPU time. Experiments that report it
// set CPUTime, so their metrics are named CPUNs/CPUNsP99.
func ThreadCPU() int64 {
	var ts unix.Timespec
	unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_THREAD_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// WithBudget returns a copy of o whose per-experiment time budget, in the quick
// profile and unless -budget was given, is quick, or saved with -save or
// -baseline (the engine then adds blocks until the ratio is known to
// ±threshold/4, so the saved run passes the comparison's variability gate).
// Binaries size it so that the whole binary stays within its share of CI time.
func (o *Options) WithBudget(quick, saved time.Duration) *Options {
	c := *o
	if c.Budget == 0 && c.Profile != "full" {
		c.Budget = quick
		if c.Save != "" || len(c.Baselines) > 0 {
			c.Budget = saved
		}
	}
	return &c
}
