package perf

import (
	"fmt"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Environment variables the VM runner (harness/vm) sets in the guest.
const (
	// PerfClockEnv is "icount" when the guest runs under qemu TCG with
	// -icount shift=0,sleep=off: its clock advances 1 ns per executed
	// instruction, so every figure the engine takes is a count of
	// instructions, not a time (instruction count mode).
	PerfClockEnv = "FSNSUITE_PERF_CLOCK"
	// GuestAccelEnv names the accelerator the guest runs under: "kvm",
	// "tcg" (emulation, real time) or "tcg-icount".
	GuestAccelEnv = "FSNSUITE_GUEST_ACCEL"
	// ClockICount is PerfClockEnv's value (and Result.Clock) in instruction
	// count mode.
	ClockICount = "icount"
)

// Metric names in instruction count mode: the time metrics' counterparts.
// Under -icount shift=0 one guest nanosecond is one instruction executed by
// any vCPU (qemu runs them in turn on one thread and counts them all), so a
// chunk's "time" is the instructions the guest executed while it ran.
const (
	InsnPerOp  = "insn/op"         // NsPerOp: the median chunk's instructions / chunk size
	P50Insn    = "p50-insn"        // P50: median per-operation instruction count
	P99Insn    = "p99-insn"        // P99
	OpsPerGI   = "ops/Ginsn"       // OpsPerSec: operations per 10^9 instructions
	CPUInsn    = "cpu-insn/op"     // CPUNs: the thread's CPU clock, which also counts instructions
	CPUInsnP99 = "p99-cpu-insn/op" // CPUNsP99
)

var insnNames = map[string]string{
	NsPerOp: InsnPerOp, P50: P50Insn, P99: P99Insn, OpsPerSec: OpsPerGI, CPUNs: CPUInsn, CPUNsP99: CPUInsnP99,
}

// metricFor returns the name the metric m (a time metric's name) has under
// clock: itself in time, its instruction count under ClockICount.
func metricFor(m, clock string) string {
	if clock == ClockICount {
		if n, ok := insnNames[m]; ok {
			return n
		}
	}
	return m
}

// ICount reports whether the process runs in instruction count mode
// (PerfClockEnv=icount, set by the VM runner's -vm-icount).
func ICount() bool { return os.Getenv(PerfClockEnv) == ClockICount }

// Emulated returns the guest's accelerator when it is qemu's TCG emulation
// ("tcg" or "tcg-icount"), else "".
func Emulated() string {
	if a := os.Getenv(GuestAccelEnv); strings.HasPrefix(a, "tcg") {
		return a
	}
	if ICount() {
		return "tcg-icount"
	}
	return ""
}

// ICountNote explains what the figures of instruction count mode are; it is
// printed with them.
const ICountNote = "instruction count mode (qemu TCG -icount shift=0,sleep=off): the guest clock advances 1 ns per " +
	"instruction executed by any vCPU, so insn/op is instructions per operation, exact and comparable across " +
	"kernels; it says nothing of cache misses, contention or real time"

// NoContention skips a case that measures contention or scaling between CPUs
// where those mean nothing: in instruction count mode qemu runs the vCPUs one
// at a time on one host thread (a skip), under plain TCG each vCPU is a host
// thread whose atomics and memory ordering are emulated (an undecided skip:
// a failure under -strict, as an interval that decides nothing). what names
// the case's subject ("2 clients writing at once"). In the sharing profile
// (Sharing) nothing is skipped: its figures are the cache lines the vCPUs'
// kernel writes share, which such a case exists to show. It returns true when the
// case must stop (t.Skipf stops a harness case itself; t.Errorf does not).
func NoContention(t TB, what string) bool {
	t.Helper()
	if Sharing() {
		// The sharing profile counts what the CPUs' writes share, not
		// time: the case runs, its clients on several vCPUs.
		return false
	}
	switch acc := Emulated(); {
	case acc == "tcg-icount" || ICount():
		t.Skipf("instruction count mode: %s measures contention between CPUs, and single-threaded TCG runs one vCPU at a time (their instructions interleave in slices, they never contend): the count means nothing here", what)
		return true
	case acc != "":
		reason := fmt.Sprintf("undecided: TCG emulation (%s): %s measures contention between CPUs, and emulated vCPUs contend through the host's threads and emulated atomics, not the hardware's: the figures mean nothing here", acc, what)
		if Flags.Strict || isStrict(t) {
			t.Errorf("%s (failure under -strict)", reason)
			return true
		}
		t.Skipf("%s", reason)
		return true
	}
	return false
}

// ClockInfo describes the clock the engine times chunks with
// (CLOCK_MONOTONIC, read through the vDSO when the clocksource allows).
type ClockInfo struct {
	// Source is the kernel's current clocksource (tsc, kvm-clock, hpet,
	// acpi_pm, jiffies, refined-jiffies), "" when unreadable.
	Source string `json:"clocksource,omitempty"`
	// ResNs is clock_getres(CLOCK_MONOTONIC): 1 with high-resolution
	// timers, a tick (e.g. 4000000 at HZ=250) on a jiffies clocksource.
	ResNs int64 `json:"res_ns"`
	// StepNs is the smallest non-zero difference seen between successive
	// reads; -1 when the clock did not advance in clockProbeReads reads.
	StepNs int64 `json:"step_ns"`
	// EveryRead is true when every read advanced the clock: its step is
	// then below the cost of one read, and StepNs measures that cost (it
	// grows on a loaded machine), not the clock's granularity.
	EveryRead bool `json:"every_read_advanced,omitempty"`
	// Counted is true in instruction count mode (ICount): the clock is the
	// guest's executed instructions, so a read that always advances it shows
	// the read's own instructions, and its unit is one instruction.
	Counted bool `json:"counted,omitempty"`
}

// clockProbeReads bounds the reads ReadClock makes to see the clock step.
const clockProbeReads = 20000

// ReadClock reads the clocksource, the resolution and the observed step of
// the engine's clock.
func ReadClock() ClockInfo {
	c := ClockInfo{StepNs: -1}
	if b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource"); err == nil {
		c.Source = strings.TrimSpace(string(b))
	}
	var ts unix.Timespec
	if _, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETRES, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&ts)), 0); e == 0 {
		c.ResNs = ts.Nano()
	}
	// Every probe read, not the first few changes: on a loaded machine a
	// few successive reads can each be slowed, and the smallest step over
	// them all is then nearest the clock's own.
	prev, changes, still := Now(), 0, 0
	for i := 0; i < clockProbeReads; i++ {
		t := Now()
		if d := t - prev; d > 0 {
			if c.StepNs < 0 || d < c.StepNs {
				c.StepNs = d
			}
			changes++
		} else {
			still++
		}
		prev = t
	}
	c.EveryRead = changes > 0 && still == 0
	c.Counted = ICount()
	return c
}

// String renders the clock for the env line.
func (c ClockInfo) String() string {
	src := c.Source
	if src == "" {
		src = "clocksource unknown"
	}
	step := "never advanced"
	if c.StepNs >= 0 {
		step = fmt.Sprintf("%d ns", c.StepNs)
	}
	if c.EveryRead {
		step += ", every read advanced it"
	}
	if c.Counted {
		step += "; instruction count: its unit is one instruction"
	}
	return fmt.Sprintf("clock %s (resolution %d ns, smallest step seen %s)", src, c.ResNs, step)
}

// MaxClockFraction is the coarsest clock the engine measures with, as a
// fraction of a chunk's duration: a chunk timed in steps of more than 1% of
// it cannot show the 1% the engine is meant to resolve (Equivalence).
const MaxClockFraction = 0.01

// coarseFor returns why the clock cannot time chunks of chunkNs (the median
// chunk of the warm-up), or "" when it can. For a clock that advanced on
// every read, clock_getres does not count (without CONFIG_HIGH_RES_TIMERS
// it gives the tick, 4 ms at HZ=250, for a TSC read to the nanosecond): its
// step is at most the smallest step seen over all the probe's reads (a
// read's cost, or the clock's own granularity, acpi_pm's 279 ns). In
// instruction count mode such a clock counts instructions one by one: the
// smallest step is the instructions of a read (110 on Debian's 6.1), which
// every chunk's reads add alike on both sides, so its step is 1.
func (c ClockInfo) coarseFor(chunkNs float64) string {
	step := max(c.ResNs, c.StepNs)
	if c.EveryRead {
		step = c.StepNs
		if c.Counted {
			step = 1
		}
	}
	switch {
	case c.StepNs < 0:
		return fmt.Sprintf("clock too coarse to measure: CLOCK_MONOTONIC did not advance in %d reads (%s)", clockProbeReads, c)
	case chunkNs <= 0:
		return fmt.Sprintf("clock too coarse to measure: a chunk took 0 ns by it (%s)", c)
	case float64(step) > MaxClockFraction*chunkNs:
		return fmt.Sprintf("clock too coarse to measure: a step of %d ns is more than %.0f%% of a chunk (%.0f ns) (%s); no figure taken",
			step, 100*MaxClockFraction, chunkNs, c)
	}
	return ""
}

// ClockError is the error of an experiment that was not measured because the
// clock is too coarse for its chunks: Check reports it as a skip naming the
// clocksource, never as a figure.
type ClockError struct{ Msg string }

func (e *ClockError) Error() string { return e.Msg }
