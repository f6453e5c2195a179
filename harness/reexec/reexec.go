// Package reexec is the one way an fsnsuite binary starts another copy of
// itself for a job: the case process in a private mount namespace (harness),
// actors (harness/actor), and helpers a binary declares (fsnotify_parent's
// by-handle opener). The convention is a single environment variable,
// FSNSUITE_ROLE=<role>[:<state>], read before anything else; the argv after
// argv[0] is the role's own; argv[0] is "<binary>:<role>" so ps shows who is
// who. A role's main function is registered with Register and run by
// Dispatch; the harness registers its own role (the actor) and calls Dispatch
// from its init, so an actor starts before the main package builds its case
// tables, and harness.Main registers a binary's roles (Suite.Roles) and calls
// Dispatch again.
package reexec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnsuite/fsnsuite/harness/internal/procfail"
)

// EnvRole carries the role (and its optional state) of a re-executed process.
const EnvRole = "FSNSUITE_ROLE"

var (
	mu    sync.Mutex
	roles = map[string]func(args []string) int{}
)

// Register declares a role: a process started by Command(role, ...) runs fn
// with its arguments and exits with fn's status; call it before Dispatch
// (harness.Main does, for Suite.Roles). Registering a role twice panics (a programming error).
func Register(role string, fn func(args []string) int) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := roles[role]; dup || role == "" || strings.Contains(role, ":") {
		panic("reexec: bad or duplicate role " + role)
	}
	roles[role] = fn
}

// Current returns this process's role and state ("" and "" for a process
// started by a user).
func Current() (role, state string) {
	role, state, _ = strings.Cut(os.Getenv(EnvRole), ":")
	return role, state
}

// Is reports whether this process was started in role.
func Is(role string) bool {
	r, _ := Current()
	return r == role
}

// Dispatch runs the registered main function of this process's role and
// exits; it returns when the process has no role or one not registered (yet).
func Dispatch() {
	role, _ := Current()
	if role == "" {
		return
	}
	mu.Lock()
	fn := roles[role]
	mu.Unlock()
	if fn != nil {
		os.Exit(fn(os.Args[1:]))
	}
}

// Command returns a command that runs this binary again in role, with state
// (may be "") and args. Its environment is this process's without any
// inherited role, plus the new one; callers set SysProcAttr, stdio and extra
// environment as the job needs.
func Command(role, state string, args ...string) *exec.Cmd {
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Args[0] = filepath.Base(os.Args[0]) + ":" + role
	v := role
	if state != "" {
		v += ":" + state
	}
	env := []string{EnvRole + "=" + v}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, EnvRole+"=") {
			env = append(env, e)
		}
	}
	cmd.Env = env
	return cmd
}

// Failure says in one line why a helper started with Command failed: err
// (from its Start, or its Wait: the exit status or signal), the lines of
// its stderr that name the cause (a Go runtime crash's reason, not its
// stacks) and, where a process or thread could not be created (EAGAIN),
// the pids limit that likely refused it.
func Failure(err error, stderr []byte) string { return procfail.Describe(err, stderr) }

// RunReport runs cmd (made by Command) to its end and decodes the one JSON
// document the helper printed on stdout into report. Its error says which
// went wrong: the run (Failure's line) or the report (with the helper's
// stderr). cmd's Stdout and Stderr are its own.
func RunReport(cmd *exec.Cmd, report any) error {
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return errors.New(Failure(err, errOut.Bytes()))
	}
	if err := json.Unmarshal(out.Bytes(), report); err != nil {
		return fmt.Errorf("its report %q: %w; stderr: %s", out.String(), err, errOut.String())
	}
	return nil
}
