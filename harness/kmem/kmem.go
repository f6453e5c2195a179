// Package kmem tells whether releasing kernel objects gives their memory
// back: it repeats a create-and-release loop and watches the kernel's
// unreclaimable slab (/proc/meminfo SUnreclaim), the memory kmalloc'd
// structures (fsnotify groups, their hash tables, marks, connectors) live in.
// Freed objects are reused by the next round; leaked ones make the slab grow
// by their size every round.
package kmem

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Unreclaimable returns /proc/meminfo's SUnreclaim in bytes.
func Unreclaimable() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("kmem: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "SUnreclaim:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("kmem: /proc/meminfo SUnreclaim %q: %w", rest, err)
			}
			return kb * 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("kmem: /proc/meminfo: %w", err)
	}
	return 0, ErrNoCounter
}

// ErrNoCounter: this kernel's /proc/meminfo has no SUnreclaim line.
var ErrNoCounter = fmt.Errorf("kmem: /proc/meminfo has no SUnreclaim line")

// Check is one leak check.
type Check struct {
	// PerRound objects are created and released per round, by Workers
	// goroutines at once (fewer than a per-user limit such as 128 groups).
	PerRound, Workers, Rounds int
	// Leak is the smallest per-object leak to detect (bytes): a round whose
	// slab grew by at least PerRound*Leak/2 is a growing round.
	Leak int64
	// Settle is how long to wait after a round before reading the slab
	// (deferred frees: RCU, work queues).
	Settle time.Duration
}

// Result is what the rounds measured.
type Result struct {
	// Growth is each round's change of SUnreclaim, bytes.
	Growth []int64
	// Threshold is the growth that makes a round a growing one.
	Threshold int64
}

// Leaks reports whether every round grew by the threshold or more: a leak
// of Leak bytes per object grows the slab by PerRound*Leak each round,
// while other programs' allocations do not keep up such growth in every
// round.
func (r Result) Leaks() bool {
	for _, g := range r.Growth {
		if g < r.Threshold {
			return false
		}
	}
	return len(r.Growth) > 0
}

func (r Result) String() string {
	parts := make([]string, len(r.Growth))
	for i, g := range r.Growth {
		parts[i] = fmt.Sprintf("%+d kB", g/1024)
	}
	return fmt.Sprintf("SUnreclaim per round %s (a growing round: >= %d kB)", strings.Join(parts, ", "), r.Threshold/1024)
}

// Run runs the rounds: one creates and releases an object and returns the
// first error (which stops the check).
func (c Check) Run(one func() error) (Result, error) {
	res := Result{Threshold: int64(c.PerRound) * c.Leak / 2}
	// A first round warms the caches (slab pages for the objects).
	for round := -1; round < c.Rounds; round++ {
		before, err := Unreclaimable()
		if err != nil {
			return res, err
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var first error
		per := c.PerRound / c.Workers
		for w := 0; w < c.Workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < per; i++ {
					if err := one(); err != nil {
						mu.Lock()
						if first == nil {
							first = err
						}
						mu.Unlock()
						return
					}
				}
			}()
		}
		wg.Wait()
		if first != nil {
			return res, first
		}
		time.Sleep(c.Settle)
		after, err := Unreclaimable()
		if err != nil {
			return res, err
		}
		if round >= 0 {
			res.Growth = append(res.Growth, after-before)
		}
	}
	return res, nil
}
