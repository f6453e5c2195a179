package perf

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// ErrOversubscribed is StartCrew's error, in the sharing profile, for more
// clients than measured vCPUs: the profile counts each vCPU's kernel work
// while a client runs there, so each client needs a vCPU of its own. A case
// skips on it, naming the -vm-cpus that would run it.
var ErrOversubscribed = errors.New("sharing profile: each client needs a measured vCPU of its own")

// StartCrew starts a Crew of n members running job on the CPUs of this
// machine's plan, in CPUOrder(plan.Worker, plan.Helper, allowed), and returns
// the plan and that order. Every member thread holds a P of the Go scheduler
// while inside a raw syscall, so GOMAXPROCS is first raised to cover the
// members, a listener and the runtime (n+4). cleanup (a case's t.Cleanup)
// receives the crew's Stop and the GOMAXPROCS restore, in that order of
// running.
func StartCrew(n int, job func(id int) unix.Errno, cleanup func(func())) (*Crew, CPUPlan, []int, error) {
	old := runtime.GOMAXPROCS(0)
	if want := n + 4; want > old {
		runtime.GOMAXPROCS(want)
		cleanup(func() { runtime.GOMAXPROCS(old) })
	}
	plan, err := PlanCPUs()
	if err != nil {
		return nil, CPUPlan{}, nil, fmt.Errorf("plan CPUs: %w", err)
	}
	allowed, err := AllowedCPUs()
	if err != nil {
		return nil, CPUPlan{}, nil, err
	}
	cpus := CPUOrder(plan.Worker, plan.Helper, allowed)
	if Sharing() && n > len(cpus) {
		// Two members on one vCPU: the one waiting for its turn is on a
		// joined vCPU, so its wait (a context switch, the wake-up) would
		// be counted as the workload's.
		return nil, CPUPlan{}, nil, fmt.Errorf("%w: %d clients on %d measured vCPUs (-vm-cpus %d)", ErrOversubscribed, n, len(cpus), n)
	}
	c, err := NewCrew(n, cpus, job)
	if err != nil {
		return nil, CPUPlan{}, nil, err
	}
	cleanup(c.Stop)
	return c, plan, cpus, nil
}
