// Package vm runs the fsnsuite runner inside a qemu guest booted on a given
// kernel image, so a kernel can be validated without rebooting the host.
//
// Run packs the host's static binaries (the runner and the test binaries), a
// static busybox, mke2fs with its shared libraries and, optionally, kernel
// modules (loop, ext4 and their dependencies) into an initramfs, boots the
// kernel under qemu (KVM when /dev/kvm is usable, TCG otherwise), and reads
// the guest's merged TAP stream live from a dedicated serial port. The guest's
// exit status and its results directory are carried back to the host, so a VM
// run reports the same TAP, results and exit code as a native run.
//
// Guest serial ports: ttyS0 is the kernel console, ttyS1 carries the runner's
// stdout (TAP) and the protocol lines of the guest /init, ttyS2 the runner's
// stderr. Protocol lines start with "FSNSUITE-VM ".
package vm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Paths inside the guest.
const (
	// GuestBinDir is where the host's BinDir is copied in the guest; the
	// runner runs as GuestBinDir/fsnsuite.
	GuestBinDir = "/opt/fsnsuite/bin"
	// GuestResultsDir is the guest directory whose contents are copied back
	// into Config.ResultsDir after the run. The guest runner gets it in the
	// environment variable FSNSUITE_RESULTS_DIR; a caller that passes a results
	// flag in Config.Args should point it here.
	GuestResultsDir = "/results"
	// RunnerName is the runner binary looked up in BinDir.
	RunnerName = "fsnsuite"
)

// Default values used when the corresponding Config field is zero.
const (
	DefaultMemMB       = 2048
	DefaultCPUs        = 2
	DefaultTimeout     = 30 * time.Minute
	DefaultBootTimeout = 2 * time.Minute
	DefaultBusybox     = "/bin/busybox"
	DefaultQEMU        = "qemu-system-x86_64"
)

// ICountCPUs is the guest CPU count of ICount when Config.CPUs is 0. One:
// single-threaded TCG runs the vCPUs one at a time and counts the
// instructions of all of them in the one virtual clock, so a second vCPU adds
// nothing to a measurement but its own instructions (timer ticks, a helper
// thread's work), and Debian's 6.1 under -icount with 2 vCPUs stopped at
// "smp: Bringing up secondary CPUs" (no console line within the 2 min boot
// timeout).
const ICountCPUs = 1

// SharingCPUs is the sharing profile's count of measured vCPUs when
// Config.CPUs is 0: two clients on two vCPUs is the smallest case that
// shares. The guest has one vCPU more, vCPU 0, for everything else.
const SharingCPUs = 2

// DefaultTCGArgs are runner flags put before Config.Args when the guest runs
// under TCG emulation, which is 5 to 20 times slower than the host: longer
// per-binary and per-case deadlines. Flags given in Args come later and win.
var DefaultTCGArgs = []string{"-timeout=1800s", "-case-timeout=120s"}

// DefaultModules are the modules loaded in the guest when Config.Modules is
// set and Config.LoadModules is nil; dependencies and soft dependencies are
// resolved from the tree's modules.dep and modules.softdep. xfs, btrfs and
// overlay are the extra fixtures' filesystems (harness/fixture/morefs.go); a
// module the tree lacks is only warned about and those cases skip.
var DefaultModules = []string{"loop", "ext4", "xfs", "btrfs", "overlay"}

// Config describes one VM run.
type Config struct {
	// Kernel is the x86_64 kernel image (bzImage, e.g. arch/x86/boot/bzImage
	// or a distribution's /boot/vmlinuz-*).
	Kernel string
	// Modules is an unpacked module tree: lib/modules/VERSION (or a directory
	// containing lib/modules/VERSION). Empty: no modules are loaded.
	Modules string
	// LoadModules names the modules to load; nil means DefaultModules.
	LoadModules []string
	// KernelConfig is the kernel's .config. Empty: looked up next to Kernel
	// (config-VERSION, .config, the build tree of arch/x86/boot/bzImage).
	// When found, options the suite needs are checked before booting.
	KernelConfig string
	// MemMB is the guest memory in MiB (DefaultMemMB when 0).
	MemMB int
	// CPUs is the guest CPU count (DefaultCPUs when 0, ICountCPUs with
	// ICount).
	CPUs int
	// Timeout bounds the whole run, boot to power-off (DefaultTimeout when 0).
	Timeout time.Duration
	// BootTimeout bounds the time from starting qemu until the guest /init
	// reports in (DefaultBootTimeout when 0).
	BootTimeout time.Duration
	// BinDir is the host directory of static binaries: the runner
	// (RunnerName) and the test binaries it runs.
	BinDir string
	// Files are extra host files to put in the guest, keyed by guest path.
	Files map[string]string
	// Args are the runner's arguments inside the guest.
	Args []string
	// TCGArgs are put before Args when the guest runs under TCG; nil means
	// DefaultTCGArgs, an empty slice nothing.
	TCGArgs []string
	// Env are extra KEY=VALUE environment entries for the guest runner.
	Env []string
	// Stdout receives the guest runner's stdout: the merged TAP stream.
	Stdout io.Writer
	// Stderr receives the guest runner's stderr (Progress when nil).
	Stderr io.Writer
	// Progress receives human-readable progress lines ("vm: ..."); nil
	// discards them.
	Progress io.Writer
	// IncludePerf puts perf binaries in the guest even without KVM. Without
	// KVM (TCG emulation) their numbers mean nothing, so by default they are
	// left out; with KVM every binary is included.
	IncludePerf bool
	// ICount runs the guest in instruction-count mode: qemu TCG, one thread
	// for all vCPUs, "-icount shift=0,sleep=off" (the guest's virtual clock
	// advances 1 ns per executed instruction, and jumps over idle time), the
	// perf binaries included, the guest runner told through PerfClockEnv
	// (the perf engine then reports instructions per operation), and the
	// kernel given "clocksource=tsc tsc=reliable" (the TSC follows the
	// instruction count) unless ExtraAppend names a clocksource. KVM is
	// refused: it has no instruction counter.
	ICount bool
	// IsPerf reports whether a binary of BinDir is a perf binary; nil means
	// DefaultIsPerf.
	IsPerf func(name string) bool
	// ResultsDir is the host directory that receives the guest's results
	// directory and the console log (vm-console.log). Empty: not kept.
	ResultsDir string
	// Accel is "kvm", "tcg" or "" (KVM when /dev/kvm is usable, else TCG).
	Accel string
	// QEMU is the qemu binary (qemu-system-x86_64 in PATH when empty).
	QEMU string
	// Busybox is a static busybox for the guest (/bin/busybox when empty).
	Busybox string
	// Mke2fs is the host mke2fs copied into the guest with its libraries
	// (looked up in PATH and /sbin when empty; skipped when not found).
	Mke2fs string
	// WorkDir holds the initramfs and logs; a temporary directory, removed
	// afterwards, when empty.
	WorkDir string
	// ExtraAppend is appended to the kernel command line (after the
	// runner's own parameters and, with ICount, the clocksource ones).
	ExtraAppend string
	// GcovDir, when set, asks for the kernel's gcov counters (make coverage):
	// the guest mounts debugfs and copies every .gcda file under
	// /sys/kernel/debug/gcov just before the runner starts and again after
	// it exits, and sends both snapshots back as a gcov block (see init.sh).
	// They are unpacked here as GcovDir/boot/... and GcovDir/suite/..., each
	// under its path relative to that directory, e.g.
	// GcovDir/suite/<build dir>/fs/notify/mark.gcda; the counters are never
	// reset, so suite minus boot is what the suite ran. A kernel without
	// CONFIG_GCOV_KERNEL is an *Error of Kind "gcov". Empty: taken from
	// $FSNSUITE_VM_GCOV_DIR, so the runner needs no flag for it.
	GcovDir string
	// SharingPlugin, when set, runs the sharing profile (harness/sharing):
	// instruction-count mode (ICount) with this qemu plugin
	// (scripts/vm/sharing/fsnshare.so, make sharing-plugin) loaded, the
	// guest runner told where to log its chunks (perf.SharingEnv), the
	// kernel booted with nokaslr (so its System.map names the writers), and
	// SharingCPUs measured vCPUs unless CPUs says otherwise, isolated
	// (SharingIsolationAppend, SharingGODEBUG, PerfCPUsEnv) from vCPU 0,
	// which qemu adds for the rest of the guest. The plugin's output and
	// the guest's chunk log land in ResultsDir as sharing-plugin.txt and
	// sharing-chunks.txt.
	SharingPlugin string

	modVersion string // version of the module tree put in the guest
	sharingOut string // the sharing plugin's output file (in the work directory)
	// housekeeping: the guest gets one vCPU more than CPUs, vCPU 0, where
	// everything but the measured threads runs (the sharing profile's
	// isolation, SharingIsolationAppend).
	housekeeping bool
}

// Environment of the guest runner, set by /init from run.conf (the perf
// engine, harness/perf, reads them).
const (
	// AccelEnv names the accelerator the guest runs under: "kvm", "tcg" or
	// "tcg-icount" (ICount).
	AccelEnv = "FSNSUITE_GUEST_ACCEL"
	// PerfClockEnv is "icount" with ICount: the guest clock counts
	// instructions, not time.
	PerfClockEnv = "FSNSUITE_PERF_CLOCK"
	// LeftOutEnv lists, space-separated, the perf binaries left out of
	// the guest (no KVM and no IncludePerf): a runtest line naming one is
	// a skip with LeftOutReason, not a failure to start it.
	LeftOutEnv = "FSNSUITE_VM_LEFT_OUT"
	// SharingEnv is the guest's chunk log in the sharing profile
	// (harness/perf's SharingEnv).
	SharingEnv = "FSNSUITE_PERF_SHARING"
	// SharingChunks and SharingPluginOut are the sharing profile's records
	// in the results directory (harness/sharing's ChunksFile and PluginFile).
	SharingChunks    = "sharing-chunks.txt"
	SharingPluginOut = "sharing-plugin.txt"
	// SharingPCsEnv, set to 1 on the host, has the sharing plugin write
	// its per-instruction diagnostic (fsnshare.c, pcs=) into the work
	// directory, copied into the results as SharingPCsOut.
	SharingPCsEnv = "FSNSUITE_SHARING_PCS"
	SharingPCsOut = "sharing-pcs.txt"
	// SharingIsolation is the guest's account of its isolation in the
	// results: the measured vCPUs and what the kernel made of nohz_full=.
	SharingIsolation = "sharing-isolation.txt"
	// PerfCPUsEnv lists the CPUs the perf engine places its measured and
	// helper threads on (harness/perf's PerfCPUsEnv), in the sharing
	// profile the isolated vCPUs 1..CPUs.
	PerfCPUsEnv = "FSNSUITE_PERF_CPUS"
	// HostResultsEnv is the host directory the guest's results are copied
	// into (Config.ResultsDir, absolute): the guest runner's summary names
	// it, not its own /results, in the commands it suggests.
	HostResultsEnv = "FSNSUITE_VM_HOST_RESULTS"
)

// LeftOutReason is the skip reason of a runtest line naming a perf binary
// that is not in the guest.
const LeftOutReason = "perf binaries are not in the guest without -perf (no KVM: under TCG emulation their figures would mean nothing)"

// SharingMaxVCPUs is the sharing plugin's vCPU limit (FSN_MAX_VCPUS in
// scripts/vm/sharing/fsnshare_core.h): measured vCPUs and vCPU 0.
const SharingMaxVCPUs = 16

// SharingIsolationAppend is the kernel command line the sharing profile
// adds (%s: the measured vCPUs, 1..CPUs), so that a window holds the
// measured threads' kernel work and nothing else, the same in every window:
// nohz_full= stops the scheduler tick on a vCPU running one task
// (Documentation/timers/no_hz.rst; kernels built without CONFIG_NO_HZ_FULL,
// Debian's 5.10, ignore it and keep the tick), irqaffinity= sends device
// interrupts to vCPU 0 (Documentation/admin-guide/kernel-parameters.txt),
// and randomize_kstack_offset=off keeps each syscall's stack at one offset
// (the lines a syscall writes on its stack are then the same every time).
const SharingIsolationAppend = "nohz_full=%s irqaffinity=0 randomize_kstack_offset=off"

// SharingGODEBUG turns off the Go runtime's asynchronous preemption in the
// sharing profile's guest: sysmon would otherwise signal a long-running
// measured thread (SIGURG), whose signal delivery and return
// (x64_setup_rt_frame, restore_sigcontext: thousands of kernel stores) land
// in some windows and not in others.
const SharingGODEBUG = "GODEBUG=asyncpreemptoff=1"

// sharingGODEBUG is SharingGODEBUG merged with a GODEBUG of env (the last
// one: /init exports them in order).
func sharingGODEBUG(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "GODEBUG="); ok && v != "" {
			return SharingGODEBUG + "," + v
		}
	}
	return SharingGODEBUG
}

// ICountAppend is the kernel command line ICount adds: the TSC as the
// clocksource (under -icount qemu derives it from the instruction count, so
// it is exact and monotonic; the kernel's TSC checks and the clocksource
// watchdog, which compare it with the HPET under emulation, are skipped).
const ICountAppend = "clocksource=tsc tsc=reliable"

// applyMode picks the accelerator (TCG for ICount) and sets what the guest
// is told: AccelEnv, and with ICount PerfClockEnv and ICountAppend (unless
// ExtraAppend names a clocksource). mode is the accelerator as the guest
// hears it ("tcg-icount" with ICount).
func (c *Config) applyMode() (accel, mode string, err error) {
	want := c.Accel
	if c.ICount {
		if want == "" {
			want = "tcg"
		}
		if want != "tcg" {
			return "", "", &Error{Kind: "qemu", Msg: "instruction-count mode (-icount) needs TCG emulation; KVM has no instruction counter"}
		}
	}
	if accel, err = chooseAccel(want); err != nil {
		return "", "", err
	}
	mode = accel
	if c.ICount {
		mode = "tcg-icount"
	}
	c.Env = append(append([]string(nil), c.Env...), AccelEnv+"="+mode)
	if c.SharingPlugin != "" {
		c.Env = append(c.Env, SharingEnv+"="+GuestResultsDir+"/"+SharingChunks)
		c.ExtraAppend = strings.TrimSpace("nokaslr " + c.ExtraAppend)
		if c.housekeeping {
			cpus := fmt.Sprintf("1-%d", c.CPUs)
			c.ExtraAppend = strings.TrimSpace(fmt.Sprintf(SharingIsolationAppend, cpus) + " " + c.ExtraAppend)
			// GOMAXPROCS: a process bound to one vCPU would get one P, and
			// a perf binary's pinned listener would wait for the measuring
			// thread's P (sysmon's 10 ms preemption) inside windows.
			c.Env = append(c.Env, PerfCPUsEnv+"="+cpus, fmt.Sprintf("GOMAXPROCS=%d", c.CPUs+4), sharingGODEBUG(c.Env))
			c.progressf("sharing profile: %d vCPUs for the measured threads (1-%d: nohz_full, no device interrupts, the perf engine's CPUs) and vCPU 0 for everything else (the guest's processes start bound to it)", c.CPUs, c.CPUs)
		}
		c.progressf("sharing profile: qemu plugin %s counts kernel-mode stores by vCPU and 64-byte physical line between the perf engine's markers; its record and the guest's chunk log go to %s and %s", c.SharingPlugin, SharingPluginOut, SharingChunks)
	}
	if c.ICount {
		c.Env = append(c.Env, PerfClockEnv+"=icount")
		if !strings.Contains(c.ExtraAppend, "clocksource=") {
			c.ExtraAppend = strings.TrimSpace(ICountAppend + " " + c.ExtraAppend)
		}
		c.progressf("instruction-count mode: qemu -accel tcg,thread=single -icount shift=0,sleep=off (1 guest ns per instruction); perf figures are instructions per operation")
	}
	return accel, mode, nil
}

// DefaultIsPerf reports binaries named perf_*, *_perf or *_bench as perf
// binaries.
func DefaultIsPerf(name string) bool {
	return strings.HasPrefix(name, "perf_") || strings.HasPrefix(name, "perf-") ||
		strings.HasSuffix(name, "_perf") || strings.HasSuffix(name, "_bench")
}

// Error is a diagnosis of a run that did not produce a result: a bad kernel
// image, a kernel missing a needed option, a panic, a boot or run timeout.
// Its message is one line.
type Error struct {
	// Kind is a short category: "kernel", "config", "panic", "boot", "sharing",
	// "timeout", "qemu", "protocol", "gcov".
	Kind string
	// Missing lists the kernel options found missing (without CONFIG_).
	Missing []string
	// Msg is the one-line diagnosis.
	Msg string
}

// Error returns the one-line diagnosis, prefixed "vm: ".
func (e *Error) Error() string { return "vm: " + e.Msg }

func (c *Config) progressf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, "vm: "+format+"\n", args...)
	}
}

func (c *Config) setDefaults() error {
	if c.Kernel == "" {
		return &Error{Kind: "kernel", Msg: "no kernel image given"}
	}
	if c.BinDir == "" {
		return errors.New("vm: Config.BinDir is empty")
	}
	if c.MemMB <= 0 {
		c.MemMB = DefaultMemMB
	}
	if c.SharingPlugin != "" {
		c.ICount = true
		if strings.ContainsAny(c.SharingPlugin, ",") {
			return &Error{Kind: "qemu", Msg: fmt.Sprintf("sharing plugin path %q has a comma: qemu's -plugin option cannot name it", c.SharingPlugin)}
		}
		if c.CPUs > 0 && c.CPUs+1 > SharingMaxVCPUs {
			return &Error{Kind: "qemu", Msg: fmt.Sprintf("sharing profile: %d measured vCPUs and vCPU 0 are more than the plugin's %d (FSN_MAX_VCPUS)", c.CPUs, SharingMaxVCPUs)}
		}
		if _, err := os.Stat(c.SharingPlugin); err != nil {
			return &Error{Kind: "qemu", Msg: fmt.Sprintf("sharing plugin: %v (make sharing-plugin builds it)", err)}
		}
		if c.CPUs <= 0 {
			c.CPUs = SharingCPUs
		}
		c.housekeeping = true
	}
	if c.CPUs <= 0 {
		c.CPUs = DefaultCPUs
		if c.ICount {
			c.CPUs = ICountCPUs
		}
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.BootTimeout <= 0 {
		c.BootTimeout = DefaultBootTimeout
	}
	if c.BootTimeout > c.Timeout {
		c.BootTimeout = c.Timeout
	}
	if c.LoadModules == nil {
		c.LoadModules = DefaultModules
	}
	if c.IsPerf == nil {
		c.IsPerf = DefaultIsPerf
	}
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	if c.Stderr == nil {
		if c.Progress != nil {
			c.Stderr = c.Progress
		} else {
			c.Stderr = io.Discard
		}
	}
	if c.Busybox == "" {
		c.Busybox = DefaultBusybox
	}
	if c.QEMU == "" {
		c.QEMU = DefaultQEMU
	}
	if c.GcovDir == "" {
		c.GcovDir = os.Getenv("FSNSUITE_VM_GCOV_DIR")
	}
	return nil
}

// Run boots cfg.Kernel under qemu with the suite inside, streams the guest's
// TAP to cfg.Stdout and returns the guest runner's exit code. A run that
// yields no exit code returns a non-nil error (an *Error for diagnoses of the
// kernel or the guest) and exit code 1.
func Run(ctx context.Context, cfg Config) (exitCode int, err error) {
	if err := cfg.setDefaults(); err != nil {
		return 1, err
	}
	if cfg.ICount && cfg.Accel != "" && cfg.Accel != "tcg" {
		return 1, &Error{Kind: "qemu", Msg: "instruction-count mode (-icount) needs TCG emulation; KVM has no instruction counter"}
	}
	if err := checkKernelImage(cfg.Kernel); err != nil {
		return 1, err
	}
	if err := cfg.checkKernelConfig(); err != nil {
		return 1, err
	}
	qemu, err := lookPath(cfg.QEMU)
	if err != nil {
		return 1, fmt.Errorf("vm: %s not found (install qemu-system-x86, e.g. scripts/vm/deps.sh): %w", cfg.QEMU, err)
	}
	accel, mode, err := cfg.applyMode()
	if err != nil {
		return 1, err
	}
	cfg.progressf("kernel %s, accel %s, %d CPUs, %d MiB", cfg.Kernel, mode, cfg.vcpus(), cfg.MemMB)

	work := cfg.WorkDir
	if work == "" {
		work, err = os.MkdirTemp("", "fsnsuite-vm-")
		if err != nil {
			return 1, fmt.Errorf("vm: work directory: %w", err)
		}
		defer os.RemoveAll(work)
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return 1, fmt.Errorf("vm: work directory: %w", err)
	}

	if accel == "tcg" {
		pre := cfg.TCGArgs
		if pre == nil {
			pre = DefaultTCGArgs
		}
		if len(pre) > 0 {
			cfg.Args = append(append([]string(nil), pre...), cfg.Args...)
			cfg.progressf("TCG emulation is slow: runner gets %s (flags given later win)", strings.Join(pre, " "))
		}
	}
	withPerf := cfg.IncludePerf || cfg.ICount || accel == "kvm"
	start := time.Now()
	initrd, skipped, err := buildInitramfs(&cfg, work, withPerf)
	if err != nil {
		return 1, err
	}
	if len(skipped) > 0 {
		cfg.progressf("no KVM: perf binaries give no meaningful numbers under TCG emulation; running correctness binaries only (left out: %s; IncludePerf to run them anyway)",
			strings.Join(skipped, " "))
	}
	cfg.progressf("initramfs %s built in %.1fs", filepath.Base(initrd), time.Since(start).Seconds())

	if cfg.SharingPlugin != "" {
		if strings.Contains(work, ",") {
			return 1, &Error{Kind: "qemu", Msg: fmt.Sprintf("work directory %q has a comma: qemu's -plugin option cannot name the record", work)}
		}
		cfg.sharingOut = filepath.Join(work, SharingPluginOut)
	}
	return cfg.boot(ctx, qemu, accel, initrd, work)
}
