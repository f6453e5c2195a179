package runner

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// writeErrors remembers the first failed write to the results directory and
// the first to the runner's stdout, apart (the message at the end says
// exactly which is incomplete), and reports each once as it happens; later
// failures are not reported as they happen, but every results file that
// was not written whole is named at the end. Nothing the runner writes may
// fail back into a child's pipe: a copy that stops reading would leave the
// child to die of SIGPIPE.
type writeErrors struct {
	mu         sync.Mutex
	log        io.Writer
	resultsDir string   // "" when the run writes none
	results    error    // the first failure in the results directory
	files      []string // every file of it that failed, in order
	stdout     error    // the first failure of the merged stream on stdout
}

// add records a failed write of file (a path in the results directory).
func (e *writeErrors) add(file, what string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rel, rerr := filepath.Rel(e.resultsDir, file); rerr == nil && !strings.HasPrefix(rel, "..") {
		file = rel
	}
	if !slices.Contains(e.files, file) {
		e.files = append(e.files, file)
	}
	if e.results != nil {
		return
	}
	e.results = fmt.Errorf("%s: %w", what, err)
	if e.log != nil {
		fmt.Fprintf(e.log, "fsnsuite: %v (the TAP stream on stdout goes on; every file not written whole is named at the end)\n", e.results)
	}
}

// addStdout records a failed write of the merged stream to stdout.
func (e *writeErrors) addStdout(what string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stdout != nil {
		return
	}
	e.stdout = fmt.Errorf("%s: %w", what, err)
	if e.log != nil {
		rest := "the run goes on"
		if e.resultsDir != "" {
			rest += "; " + filepath.Join(e.resultsDir, "results.tap") + " gets the whole stream"
		}
		fmt.Fprintf(e.log, "fsnsuite: %v (the stream on stdout stops here; %s)\n", e.stdout, rest)
	}
}

// errs returns the first failure in the results directory, naming after it
// every file that was not written whole, and the first failure on stdout.
func (e *writeErrors) errs() (results, stdout error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	results = e.results
	if results != nil {
		results = fmt.Errorf("%w (not written whole: %s)", results, strings.Join(e.files, ", "))
	}
	return results, e.stdout
}

// sink is a writer that never fails: after its first error (reported to
// errs) it drops what it is given.
type sink struct {
	w      io.Writer
	what   string
	errs   *writeErrors
	stdout bool // w is the runner's stdout, not a file of the results directory
	mu     sync.Mutex
	broken bool
}

func newSink(w io.Writer, what string, errs *writeErrors) *sink {
	return &sink{w: w, what: what, errs: errs}
}

func newStdoutSink(w io.Writer, errs *writeErrors) *sink {
	return &sink{w: w, what: "the merged stream to stdout", errs: errs, stdout: true}
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
		if s.stdout {
			s.errs.addStdout("writing "+s.what, err)
		} else {
			s.errs.add(s.what, "writing "+s.what, err)
		}
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
