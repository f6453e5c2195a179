package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/internal/cgroupfs"
)

// What the supervisor reads of a case process it is about to kill: its
// scheduler state (/proc/PID/stat), where it sleeps (/proc/PID/wchan), and
// whether a cgroup freezer holds it. A SIGSTOPped process is in state T; a
// member of a frozen cgroup v2 sleeps in the signal code (state S, wchan
// get_signal: do_freezer_trap) and SIGKILL ends it at once; a member of a
// frozen cgroup v1 freezer sits in the refrigerator (state D) and a SIGKILL
// stays pending until it is thawed (measured on 6.18: the kill took effect
// only once the task was thawed or moved to a cgroup that is not frozen).

// procState is one process's state letter and what it means.
type procState struct {
	letter byte   // 'R', 'S', 'D', 'T', 't', 'Z', ... (0: unreadable)
	wchan  string // "" when unknown or not sleeping
	// frozenV1 is the freezer.state file of the frozen cgroup v1 freezer
	// the process is in, "" when none; frozenV2 the cgroup.events file of
	// the frozen cgroup v2.
	frozenV1, frozenV2 string
}

func readProcState(pid int) procState {
	var s procState
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// The command is in parentheses and may contain anything.
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
			s.letter = b[i+2]
		}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid)); err == nil {
		if w := strings.TrimSpace(string(b)); w != "" && w != "0" {
			s.wchan = w
		}
	}
	if f := cgroupFile(pid, "freezer", "freezer.state"); f != "" {
		if b, err := os.ReadFile(f); err == nil {
			if st := strings.TrimSpace(string(b)); st == "FROZEN" || st == "FREEZING" {
				s.frozenV1 = f
			}
		}
	}
	if f := cgroupFile(pid, "", "cgroup.events"); f != "" {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "\nfrozen 1") {
			s.frozenV2 = f
		}
	}
	return s
}

// String says what the process is doing, for a diagnostic:
// "case process stopped (state T)".
func (s procState) String() string {
	where := ""
	if s.wchan != "" {
		where = ", in " + s.wchan
	}
	switch {
	case s.letter == 0:
		return "case process state unreadable (gone?)"
	case s.frozenV2 != "":
		return fmt.Sprintf("case process frozen by the cgroup v2 freezer (%s: frozen 1; state %c%s)", filepath.Dir(s.frozenV2), s.letter, where)
	case s.frozenV1 != "":
		return fmt.Sprintf("case process frozen by the cgroup v1 freezer (%s; state %c)", filepath.Dir(s.frozenV1), s.letter)
	}
	switch s.letter {
	case 'T':
		return "case process stopped (state T)"
	case 't':
		return "case process stopped by a tracer (state t)"
	case 'R':
		return "case process running (state R)"
	case 'S':
		return fmt.Sprintf("case process sleeping (state S%s)", where)
	case 'D':
		return fmt.Sprintf("case process in uninterruptible sleep (state D%s)", where)
	case 'Z':
		return "case process a zombie (state Z)"
	}
	return fmt.Sprintf("case process in state %c%s", s.letter, where)
}

// cgroupFile returns the path of file in the cgroup of pid: of the cgroup v1
// hierarchy with controller, or of the cgroup v2 hierarchy when controller
// is "". "" when the hierarchy is not mounted here or pid is gone.
func cgroupFile(pid int, controller, file string) string {
	dir, _, ok := cgroupfs.Dir(pid, controller)
	if !ok {
		return ""
	}
	return filepath.Join(dir, file)
}

// thawForKill moves pid, SIGKILLed while a cgroup v1 freezer held it, into
// this process's own freezer cgroup (which runs: this process runs in it);
// the freezer thaws a task that joins a cgroup that is not frozen
// (freezer_attach), and the pending SIGKILL then takes effect. Only that
// process leaves the frozen cgroup; nothing else in it is thawed.
func thawForKill(pid int) error {
	own := cgroupFile(os.Getpid(), "freezer", "cgroup.procs")
	if own == "" {
		return fmt.Errorf("no cgroup v1 freezer of this process to move pid %d into", pid)
	}
	if err := os.WriteFile(own, []byte(fmt.Sprintf("%d\n", pid)), 0); err != nil {
		return fmt.Errorf("moving pid %d into %s: %w", pid, own, err)
	}
	return nil
}
