// Package leftover undoes what a killed fsnsuite binary left on the
// machine: the sysctls its case process changed (restored to the original
// the shared state recorded, harness/fixture RestoreDead) and the memory
// cgroups fsnotify_limits made (memcg.SweepStale). A binary cleans up after
// itself when it ends normally; one killed by a signal cannot, so the runner
// calls Clear as soon as it sees a binary end by a signal and at its own
// exit, and every binary calls it at its start (for a binary run alone after
// one that was killed).
package leftover

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/internal/cgroupfs"
	"github.com/fsnsuite/fsnsuite/harness/memcg"
)

// groupGoneWait bounds each wait for a killed binary's process group to be
// gone: its case process dies by its parent-death signal or the runner's
// SIGKILL of the group, in milliseconds unless a freezer holds it.
const groupGoneWait = 2 * time.Second

// Clear waits (at most groupGoneWait) until no live process is left in the
// process group pgid (0: no wait), so that a holder of a change is seen
// dead, then restores the sysctls whose every holder died and removes the
// memory cgroups of dead processes. When a group the suite made exists, it
// first waits (again at most groupGoneWait) for the group's zombies to be
// reaped too: a zombie still sits in its memory cgroup (rmdir is EBUSY) and
// its pid still answers kill(pid, 0), so memcg.SweepStale would keep the
// group (measured: a SIGKILLed fsnotify_limits case's group was left). It
// writes one line per thing it undid to log (nil: none). It does nothing
// without root.
func Clear(pgid int, log io.Writer) {
	if os.Geteuid() != 0 {
		return
	}
	var dirs []string
	if d := cgroupfs.RootMount(cgroupfs.V2); d != "" {
		dirs = append(dirs, d)
	}
	if d, _, ok := cgroupfs.Dir(0, "memory"); ok {
		dirs = append(dirs, d)
	}
	if pgid > 0 {
		waitFor(func() bool { return !groupExists(pgid, false) })
		if suiteMemcgs(dirs) {
			waitFor(func() bool { return !groupExists(pgid, true) })
		}
	}
	say := func(format string, args ...any) {
		if log != nil {
			fmt.Fprintf(log, "fsnsuite: "+format+"\n", args...)
		}
	}
	notes, err := fixture.RestoreDead()
	for _, n := range notes {
		say("%s", n)
	}
	if err != nil {
		say("restoring the sysctls of a killed binary: %v", err)
	}
	for _, d := range dirs {
		for _, g := range memcg.SweepStale(d) {
			say("removed the memory cgroup %s (its process died without removing it)", g)
		}
	}
}

// waitFor polls done for at most groupGoneWait.
func waitFor(done func() bool) {
	for end := time.Now().Add(groupGoneWait); !done() && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
}

// suiteMemcgs reports whether a memory cgroup the suite names
// (memcg.StalePrefix) exists under one of dirs.
func suiteMemcgs(dirs []string) bool {
	for _, d := range dirs {
		if m, _ := filepath.Glob(filepath.Join(d, memcg.StalePrefix+"*")); len(m) > 0 {
			return true
		}
	}
	return false
}

// groupExists reports whether a process of group pgid exists; zombies count
// only when zombies is set.
func groupExists(pgid int, zombies bool) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) >= 3 && (zombies || f[0] != "Z") && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// AfterExit calls Clear for a binary (the leader of process group pgid)
// that ended as ps says, when a signal ended it; a binary that exited
// restored what it changed itself.
func AfterExit(ps *os.ProcessState, pgid int, log io.Writer) {
	if ps == nil {
		return
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		Clear(pgid, log)
	}
}
