package runner

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// writeErrors remembers the first failed write to the results directory (or
// to the runner's stdout) and reports it once; later failures are dropped
// silently. Nothing the runner writes may fail back into a child's pipe: a
// copy that stops reading would leave the child to die of SIGPIPE.
type writeErrors struct {
	mu    sync.Mutex
	log   io.Writer
	first error
}

func (e *writeErrors) add(what string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.first != nil {
		return
	}
	e.first = fmt.Errorf("%s: %w", what, err)
	if e.log != nil {
		fmt.Fprintf(e.log, "fsnsuite: %v (the TAP stream on stdout goes on; later write errors are not reported)\n", e.first)
	}
}

func (e *writeErrors) err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.first
}

// sink is a writer that never fails: after its first error (reported to
// errs) it drops what it is given.
type sink struct {
	w      io.Writer
	what   string
	errs   *writeErrors
	mu     sync.Mutex
	broken bool
}

func newSink(w io.Writer, what string, errs *writeErrors) *sink {
	return &sink{w: w, what: what, errs: errs}
}

// Write passes p on until the first error, then drops it; it always succeeds.
func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return len(p), nil
	}
	if _, err := s.w.Write(p); err != nil {
		s.broken = true
		s.errs.add("writing "+s.what, err)
	}
	return len(p), nil
}

// descendants lists the processes below pid (children, their children, ...)
// from /proc, whatever process group or session they moved to.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command, which is in parentheses and may
		// hold anything: state, ppid, ...
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// killTree sends sig to pid's process group and to every descendant of pid,
// wherever it moved (actors of our binaries have process groups of their own).
func killTree(pid int, sig syscall.Signal) {
	below := descendants(pid)
	_ = syscall.Kill(-pid, sig)
	for _, p := range below {
		_ = syscall.Kill(p, sig)
	}
}
