// Package oom is what fsnsuite does about the OOM killer: it orders who dies
// first under memory pressure (the runner last, then a binary's supervisor,
// then its case process and actors: /proc/PID/oom_score_adj), and it tells a
// SIGKILL from the OOM killer from any other (the oom_kill counter of the
// process's memory cgroup rose while it ran: cgroup v2 memory.events, cgroup
// v1 memory.oom_control).
package oom

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/internal/cgroupfs"
)

// The oom_score_adj steps (proc(5): -1000 never, +1000 first). The runner
// lowers itself by RunnerStep where it may (CAP_SYS_RESOURCE) and starts
// each binary BinaryStep above its own starting value; a binary's
// supervisor starts its case process CaseStep above itself.
const (
	RunnerStep = 100
	BinaryStep = 500
	CaseStep   = 100
)

// EnvAdj tells a binary the oom_score_adj its runner gave it, so that it
// sets it on itself before it forks anything (the runner's own write to
// /proc/PID/oom_score_adj comes just after the fork, and a child forked in
// between would inherit the runner's lower value).
const EnvAdj = "FSNSUITE_OOM_SCORE_ADJ"

// Adj reads pid's oom_score_adj (0 for this process: pid 0 means self).
func Adj(pid int) (int, error) {
	b, err := os.ReadFile(adjPath(pid))
	if err != nil {
		return 0, fmt.Errorf("oom_score_adj: %w", err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("oom_score_adj: %w", err)
	}
	return v, nil
}

// SetAdj sets pid's oom_score_adj to v, clamped to [-1000, 1000]. Raising it
// needs no privilege; lowering it below what the process was given needs
// CAP_SYS_RESOURCE.
func SetAdj(pid, v int) error {
	v = min(max(v, -1000), 1000)
	if err := os.WriteFile(adjPath(pid), []byte(strconv.Itoa(v)), 0); err != nil {
		return fmt.Errorf("oom_score_adj %d: %w", v, err)
	}
	return nil
}

// Raise sets pid's oom_score_adj to v when that is higher than its own.
func Raise(pid, v int) error {
	cur, err := Adj(pid)
	if err != nil {
		return err
	}
	if v <= cur {
		return nil
	}
	return SetAdj(pid, v)
}

func adjPath(pid int) string {
	if pid == 0 {
		return "/proc/self/oom_score_adj"
	}
	return fmt.Sprintf("/proc/%d/oom_score_adj", pid)
}

// Kills is the OOM killer's count of kills in pid's memory cgroup (0: this
// process) and the file it was read from; ok is false where no memory
// cgroup with such a counter is mounted here.
func Kills(pid int) (n int64, file string, ok bool) {
	// cgroup v2 memory.events, then v1's memory.oom_control: both count
	// "oom_kill" (Documentation/admin-guide/cgroup-v2.rst, cgroup-v1/memory.rst).
	for _, h := range []struct{ controller, name string }{{cgroupfs.V2, "memory.events"}, {"memory", "memory.oom_control"}} {
		dir, _, found := cgroupfs.Dir(pid, h.controller)
		if !found {
			continue
		}
		file := filepath.Join(dir, h.name)
		if v, found := counter(file, "oom_kill"); found {
			return v, file, true
		}
	}
	return 0, "", false
}

func counter(file, key string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+" "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Watch is a reading of a process's OOM kill counter, to tell later whether
// a SIGKILL it died of was the OOM killer's.
type Watch struct {
	n    int64
	file string
	ok   bool
}

// WatchKills reads pid's counter now (0: this process).
func WatchKills(pid int) Watch {
	n, f, ok := Kills(pid)
	return Watch{n, f, ok}
}

// Killed says, for a process that died of SIGKILL, whether the OOM killer
// killed something in the cgroup since w was read: "killed by the OOM killer
// (oom_kill 3 -> 4 in /sys/fs/cgroup/x/memory.events)", or "".
func (w Watch) Killed() string {
	if !w.ok {
		return ""
	}
	n, ok := counter(w.file, "oom_kill")
	if !ok || n <= w.n {
		return ""
	}
	return fmt.Sprintf("killed by the OOM killer (oom_kill %d -> %d in %s)", w.n, n, w.file)
}

// WatchFile is WatchKills of a counter file given by path (a memory.events
// or memory.oom_control), for tests that stand in for the kernel.
func WatchFile(file string) Watch {
	n, ok := counter(file, "oom_kill")
	return Watch{n, file, ok}
}
