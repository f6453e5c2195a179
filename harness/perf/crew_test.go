package perf

import (
	"errors"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// Every member runs the job exactly once per Run, and a member's errno is
// returned by Run.
func TestCrewRunsEachMemberOncePerRun(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skipf("sched_getaffinity: %v", err)
	}
	var cpus []int
	for c := 0; c < 1024 && len(cpus) < 4; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	const n, runs = 3, 50
	var counts [n]atomic.Int64
	var failOn atomic.Int32
	failOn.Store(-1)
	c, err := NewCrew(n, cpus, func(id int) unix.Errno {
		counts[id].Add(1)
		if int(failOn.Load()) == id {
			return unix.EIO
		}
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	for i := 0; i < runs; i++ {
		if err := c.Run(); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	for id := range counts {
		if got := counts[id].Load(); got != runs {
			t.Errorf("member %d ran %d times, want %d", id, got, runs)
		}
	}
	failOn.Store(2)
	if err := c.Run(); !errors.Is(err, unix.EIO) {
		t.Errorf("Run with member 2 failing = %v, want EIO", err)
	}
}

func TestCPUOrder(t *testing.T) {
	got := CPUOrder(1, 0, []int{0, 1, 2, 3})
	want := []int{1, 0, 2, 3}
	if len(got) != len(want) {
		t.Fatalf("CPUOrder = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("CPUOrder = %v, want %v", got, want)
		}
	}
	if got := CPUOrder(0, 0, []int{0}); len(got) != 1 || got[0] != 0 {
		t.Errorf("one CPU: %v", got)
	}
}
