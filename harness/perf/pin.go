package perf

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// AllowedCPUs returns the CPUs this process may run on, in ascending order.
func AllowedCPUs() ([]int, error) {
	if v := os.Getenv(PerfCPUsEnv); v != "" {
		return parsePerfCPUs(v)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("sched_getaffinity: empty CPU set")
	}
	return cpus, nil
}

// CPUPlan says where the measuring thread and the helper threads (listeners,
// mutators) run.
type CPUPlan struct {
	Worker int `json:"worker"`
	// Helper is a CPU other than Worker when there is one, else Worker itself
	// (Shared is then true).
	Helper int  `json:"helper"`
	Shared bool `json:"shared"`
}

// PlanCPUs puts the measuring thread on the highest allowed CPU (CPU 0 takes most
// device interrupts and housekeeping) and helpers on the next one down.
func PlanCPUs() (CPUPlan, error) {
	cpus, err := AllowedCPUs()
	if err != nil {
		return CPUPlan{}, err
	}
	w := cpus[len(cpus)-1]
	if len(cpus) == 1 {
		return CPUPlan{Worker: w, Helper: w, Shared: true}, nil
	}
	return CPUPlan{Worker: w, Helper: cpus[len(cpus)-2]}, nil
}

// PinThread locks the calling goroutine to its OS thread and binds that thread to
// cpu. The returned function restores the thread's previous affinity and unlocks it;
// call it from the same goroutine.
func PinThread(cpu int) (restore func(), err error) {
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("sched_setaffinity(cpu %d): %w", cpu, err)
	}
	return func() {
		// Best effort: a thread whose affinity cannot be restored is still
		// released; the runtime may reuse it with the narrower set.
		_ = unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}, nil
}

// CurrentCPU returns the CPU the calling thread runs on (a check that pinning held).
func CurrentCPU() (int, error) {
	var cpu, node uint32
	_, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), uintptr(unsafe.Pointer(&node)), 0)
	if e != 0 {
		return -1, fmt.Errorf("getcpu: %w", e)
	}
	return int(cpu), nil
}

// PinForever locks the calling goroutine to its OS thread for good and binds that
// thread to cpu: for a helper goroutine (a listener, a crew member, a mutator) whose
// thread exits with it, so a pinned thread is never handed back to the scheduler.
func PinForever(cpu int) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("sched_setaffinity(cpu %d): %w", cpu, err)
	}
	return nil
}

// PerfCPUsEnv, when set, lists the CPUs ("1-2", "1,3") the engine places its
// measured and helper threads on instead of the process's affinity: the
// sharing profile's guest starts every process on a housekeeping vCPU and
// names the isolated ones here (harness/vm's PerfCPUsEnv).
const PerfCPUsEnv = "FSNSUITE_PERF_CPUS"

// parsePerfCPUs parses a CPU list of PerfCPUsEnv: comma-separated CPUs and
// ranges, ascending, each below the set's size.
func parsePerfCPUs(v string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(v, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b >= len(unix.CPUSet{})*64 {
			return nil, fmt.Errorf("%s=%q: want CPUs and ranges like 1-2,4", PerfCPUsEnv, v)
		}
		for c := a; c <= b; c++ {
			if len(cpus) > 0 && c <= cpus[len(cpus)-1] {
				return nil, fmt.Errorf("%s=%q: CPUs out of order or repeated", PerfCPUsEnv, v)
			}
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
