// Package procfail says why a child process (an actor, a binary's helper, a
// test binary under the runner) failed to start or died young: its start
// error or exit status, the lines of its stderr that name the cause, and,
// where a process or thread could not be created (EAGAIN), the limit that
// likely refused it. Without it such a case read "actor hello: EOF" while
// the cause ("runtime: failed to create new OS thread (have 5 already;
// errno=11)") sat in a log no one reads.
package procfail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/internal/cgroupfs"
)

// maxCause bounds the stderr text a message quotes.
const maxCause = 400

// Describe says why a child failed: err (the start error, or the wait
// error carrying its exit status or signal; nil if unknown) and the cause
// in its stderr, plus PidsHint when the failure is a refused fork, clone
// or thread creation. It is one line.
func Describe(err error, stderr []byte) string { return DescribeSince(err, stderr, nil) }

// DescribeSince is Describe for a child started after before was read: a
// pids.max that refused a fork or thread since then is named as such
// (RefusedSince) instead of the guess.
func DescribeSince(err error, stderr []byte, before Pids) string {
	var parts []string
	if err != nil {
		parts = append(parts, err.Error())
	}
	if c := Cause(stderr); c != "" {
		parts = append(parts, "its stderr: "+strconv.Quote(c))
	}
	if r := RefusedSince(before); r != "" {
		parts = append(parts, r)
	} else if IsEAGAIN(err, stderr) {
		parts = append(parts, PidsHint())
	}
	if len(parts) == 0 {
		return "no exit status and nothing on stderr"
	}
	return strings.Join(parts, "; ")
}

// Cause picks the lines of a child's stderr that say why it died: a Go
// runtime crash prints its reason first ("runtime: failed to create new OS
// thread ...", "fatal error: newosproc") and then every goroutine's stack,
// so the lines up to its first "fatal error:" or "panic:" line (at most
// three before it); otherwise the last two lines. Joined with " | ".
func Cause(stderr []byte) string {
	if c, ok := Crash(stderr); ok {
		return c
	}
	lines := nonEmpty(stderr)
	return join(lines[max(0, len(lines)-2):])
}

// Crash returns the reason a Go runtime crash printed on stderr (the lines
// up to its first "fatal error:" or "panic:" line, at most three before
// it), and whether there is one.
func Crash(stderr []byte) (string, bool) {
	lines := nonEmpty(stderr)
	for i, l := range lines {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") {
			return join(lines[max(0, i-3) : i+1]), true
		}
	}
	return "", false
}

func nonEmpty(b []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func join(lines []string) string {
	s := strings.Join(lines, " | ")
	if len(s) > maxCause {
		s = s[:maxCause] + "..."
	}
	return s
}

// eagainText is how a refused fork or thread creation shows in a Go
// program's stderr or an error: "errno=11" (the runtime's newosproc),
// "resource temporarily unavailable".
var eagainText = regexp.MustCompile(`errno=11\b|resource temporarily unavailable`)

// IsEAGAIN reports whether err or stderr shows a process or thread that
// could not be created (EAGAIN from fork, clone or the Go runtime).
func IsEAGAIN(err error, stderr []byte) bool {
	return errors.Is(err, unix.EAGAIN) || eagainText.Match(stderr) || (err != nil && eagainText.MatchString(err.Error()))
}

// PidsHint names the limits on processes and threads this process is under,
// for an EAGAIN: "EAGAIN: a process or thread could not be created: pids
// limit? (pids.current 40 of pids.max 40 in /sys/fs/cgroup/pids/ci;
// RLIMIT_NPROC unlimited)".
func PidsHint() string {
	var limits []string
	for _, f := range pidsFiles() {
		max := readTrim(filepath.Join(f, "pids.max"))
		cur := readTrim(filepath.Join(f, "pids.current"))
		if max == "" || max == "max" {
			continue
		}
		limits = append(limits, fmt.Sprintf("pids.current %s of pids.max %s in %s", orQ(cur), max, f))
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NPROC, &rl) == nil {
		if rl.Cur == unix.RLIM_INFINITY {
			limits = append(limits, "RLIMIT_NPROC unlimited")
		} else {
			limits = append(limits, fmt.Sprintf("RLIMIT_NPROC %d", rl.Cur))
		}
	}
	if tm := readTrim("/proc/sys/kernel/threads-max"); tm != "" {
		limits = append(limits, "kernel.threads-max "+tm)
	}
	return "EAGAIN: a process or thread could not be created: pids limit? (" + strings.Join(limits, "; ") + ")"
}

// Pids is a reading of the pids.events "max" counters of this process's
// pids cgroups: how many forks and thread creations their pids.max refused
// so far.
type Pids map[string]int64

// ReadPids reads the counters now.
func ReadPids() Pids {
	m := Pids{}
	for _, d := range pidsFiles() {
		for _, l := range strings.Split(readTrim(filepath.Join(d, "pids.events")), "\n") {
			if v, ok := strings.CutPrefix(l, "max "); ok {
				if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					m[d] = n
				}
			}
		}
	}
	return m
}

// RefusedSince says which pids.max refused a fork or a thread since
// before was read ("pids.max 16 of /sys/fs/cgroup/pids/ci refused 3 forks
// or new threads meanwhile (pids.events max 152 -> 155)"), "" when none
// did: the kernel's own count, not a guess from an errno.
func RefusedSince(before Pids) string {
	var out []string
	for d, n := range ReadPids() {
		if b, ok := before[d]; ok && n > b {
			out = append(out, fmt.Sprintf("pids.max %s of %s refused %d forks or new threads meanwhile (pids.events max %d -> %d)",
				orQ(readTrim(filepath.Join(d, "pids.max"))), d, n-b, b, n))
		}
	}
	return strings.Join(out, "; ")
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pidsFiles are the directories of this process's pids cgroup and its
// ancestors that hold a pids.max (cgroup v1 "pids" hierarchy, cgroup v2),
// nearest first, as mounted here.
func pidsFiles() []string {
	var out []string
	for _, controller := range []string{"pids", cgroupfs.V2} {
		dir, mnt, ok := cgroupfs.Dir(0, controller)
		if !ok {
			continue
		}
		for d := dir; strings.HasPrefix(d, mnt); d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "pids.max")); err == nil {
				out = append(out, d)
			}
			if d == mnt {
				break
			}
		}
	}
	return out
}
