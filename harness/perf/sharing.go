package perf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// SharingEnv names the guest's chunk log in the sharing profile (the VM
// runner's -vm-sharing sets it to /results/sharing-chunks.txt; the perf clock
// is then ClockICount too). Set, the engine runs each timed chunk between two
// markers the qemu plugin recognizes (sharing_amd64.s, fsnshare.c) and logs
// one line per chunk (SharingChunkLine); the host joins the two records
// (harness/sharing). Cases about contention between CPUs then run (their
// clients on several vCPUs at once: NoContention does not skip them).
const SharingEnv = "FSNSUITE_PERF_SHARING"

// Sharing reports whether the process runs in the sharing profile.
func Sharing() bool { return os.Getenv(SharingEnv) != "" }

// SharingNote says what the sharing profile counts; printed with the figures.
const SharingNote = "sharing profile: every timed chunk runs between two markers of a qemu plugin that counts the " +
	"kernel-mode stores of every vCPU by 64-byte physical line; the per-operation figures (shared-line writes, " +
	"ownership transfers) are in the host's sharing.txt after the VM run, the figures here are instructions"

// SharingChunkLine is one line of the chunk log: the window the engine just
// closed. harness/sharing parses it (ParseChunks).
func SharingChunkLine(suite, name, mode, phase, cond string, tag, block int, ops int64) string {
	if phase == "" {
		phase = "measure"
	}
	return fmt.Sprintf("chunk suite=%s case=%s mode=%s phase=%s cond=%s tag=%d block=%d ops=%d\n",
		suite, name, mode, phase, cond, tag, block, ops)
}

// shareWindowJoined is true while the engine's measuring thread has joined
// its vCPU for a window (only that thread reads or writes it): a Crew's Run
// then leaves the vCPU while it waits for its members, and joins it again.
var shareWindowJoined bool

// shareLog is the sharing profile's state of one experiment.
type shareLog struct {
	suite, name, mode string
	parallel          int64  // operations per chunk operation (clients)
	phase             string // "warm" for warm-up and calibration blocks, else ""
	buf               []byte
}

// chunkLog is the process's open chunk log.
var chunkLog struct {
	sync.Mutex
	f    *os.File
	path string
}

// newShareLog returns the experiment's log state in the sharing profile, nil
// otherwise.
func newShareLog(e *Experiment, mode string) (*shareLog, error) {
	if !Sharing() {
		return nil, nil
	}
	if !markersSupported {
		return nil, errors.New("the sharing profile's markers exist on x86-64 only")
	}
	for _, s := range []string{e.Suite, e.Name, e.Base.Name, e.Cond.Name} {
		if s == "" || strings.ContainsAny(s, " \t\n=") {
			return nil, fmt.Errorf("sharing profile: name %q cannot go in the chunk log", s)
		}
	}
	learnSyscallSite.Do(func() {
		// The plugin learns the workload's syscall site: the one
		// syscall instruction that x/sys/unix's and package syscall's
		// calls (raw or not) all run (internal/runtime/syscall.Syscall6).
		// From then on a measured vCPU's kernel work counts only after
		// a syscall from there, not after the Go runtime's own
		// (runtime.futex of a preempted goroutine handing its P over, or
		// the vDSO's fallback), whatever the window.
		runtime.LockOSThread()
		shareLearn()
		unix.RawSyscall(unix.SYS_GETPID, 0, 0, 0)
		runtime.UnlockOSThread()
	})
	return &shareLog{suite: e.Suite, name: e.Name, mode: mode, parallel: int64(max(1, e.Parallel))}, nil
}

// learnSyscallSite runs the sharing profile's learn marker once per process.
var learnSyscallSite sync.Once

func shareStart(ci int) {
	if ci == 0 {
		shareStart0()
	} else {
		shareStart1()
	}
}

func shareStop(ci int) {
	if ci == 0 {
		shareStop0()
	} else {
		shareStop1()
	}
}

// add records a chunk just measured (outside the window: no store of its own).
func (s *shareLog) add(cond string, ci, block, n int) {
	s.buf = append(s.buf, SharingChunkLine(s.suite, s.name, s.mode, s.phase, cond, ci, block, int64(n)*s.parallel)...)
}

// flush appends the block's lines to the chunk log (opened once, O_APPEND:
// the binaries of a run write one after another, in the order the plugin saw
// their windows).
func (s *shareLog) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	chunkLog.Lock()
	defer chunkLog.Unlock()
	path := os.Getenv(SharingEnv)
	if chunkLog.f != nil && chunkLog.path != path {
		chunkLog.f.Close()
		chunkLog.f = nil
	}
	if chunkLog.f == nil {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return fmt.Errorf("sharing profile: chunk log %s: %w", path, err)
		}
		chunkLog.f, chunkLog.path = os.NewFile(uintptr(fd), path), path
		copyKallsyms(filepath.Join(filepath.Dir(path), SharingKallsyms))
	}
	if _, err := chunkLog.f.Write(s.buf); err != nil {
		return fmt.Errorf("sharing profile: chunk log: %w", err)
	}
	s.buf = s.buf[:0]
	return nil
}

// SharingKallsyms is the copy of the guest's /proc/kallsyms beside the chunk
// log: the host names the writing instructions with it (the VM runner boots
// the sharing profile with nokaslr; Debian's System.map is a stub).
const SharingKallsyms = "kallsyms"

// copyKallsyms copies /proc/kallsyms to path once (the first binary of the
// run); a failure only costs the report its symbol names.
func copyKallsyms(path string) {
	if _, err := os.Lstat(path); err == nil {
		return
	}
	b, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		return
	}
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), path)
	f.Write(b)
	f.Close()
}
