// Package actor runs file operations in another process, so that the events
// they cause carry a pid other than the test's own and so that an operation
// blocked on a permission event does not block the listener. An actor is this
// same test binary re-executed in the reexec role "actor": the harness's init
// hands such a process to Serve before the binary builds its case table.
package actor

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/internal/permhold"
	"github.com/fsnsuite/fsnsuite/harness/internal/procfail"
	"github.com/fsnsuite/fsnsuite/harness/ownproc"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
	"golang.org/x/sys/unix"
)

// Role is the reexec role of an actor process (harness registers it, with
// Serve as its main).
const Role = "actor"

// IsActor reports whether this process was started as an actor.
func IsActor() bool { return reexec.Is(Role) }

// Op is one request to an actor.
type Op struct {
	Kind  string   // see the methods of Actor for the kinds
	Path  string   `json:",omitempty"`
	Path2 string   `json:",omitempty"`
	Flags int      `json:",omitempty"`
	Mode  uint32   `json:",omitempty"`
	Fd    int      `json:",omitempty"`
	N     int      `json:",omitempty"`
	Off   int64    `json:",omitempty"`
	Data  []byte   `json:",omitempty"`
	Args  []string `json:",omitempty"`
}

// Result is an actor's answer.
type Result struct {
	// Errno is the errno of the failed call, 0 on success.
	Errno unix.Errno
	// Fd is the descriptor an open returned; N a count (bytes, exit status).
	Fd   int
	N    int
	Data []byte `json:",omitempty"`
	// Pid is the process an "exec" started (0 when execve(2) failed: the
	// child never became the program).
	Pid int `json:",omitempty"`
}

// Err returns the errno as an error, or nil.
func (r Result) Err() error {
	if r.Errno == 0 {
		return nil
	}
	return r.Errno
}

type hello struct{ Pid, Tid int }

// Actor is a running actor process.
type Actor struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	pid  int
	tid  int
	mu   sync.Mutex // serialises requests
	resp chan Result
	dead chan struct{}
	once sync.Once
}

var (
	live    sync.Map // *Actor -> struct{}
	ErrDead = errors.New("actor process is gone")
)

// Start starts an actor process. An actor that cannot start, or dies
// before its hello, is an error saying why: its exit status, the cause its
// stderr gives (a Go runtime that could not make a thread) and, for EAGAIN,
// the pids limit that likely refused it (procfail).
func Start() (*Actor, error) {
	pids := procfail.ReadPids()
	cmd := reexec.Command(Role, "")
	// Its stderr still reaches the binary's; the start of it is kept for
	// the error a failed start returns.
	head := &headBuffer{}
	cmd.Stderr = io.MultiWriter(os.Stderr, head)
	cmd.WaitDelay = time.Second // an exec op's child may hold the pipe
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("actor stdin: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("actor stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		if r := procfail.RefusedSince(pids); r != "" {
			return nil, fmt.Errorf("start actor: %w (%s)", err, r)
		}
		if procfail.IsEAGAIN(err, nil) {
			return nil, fmt.Errorf("start actor: %w (%s)", err, procfail.PidsHint())
		}
		return nil, fmt.Errorf("start actor: %w", err)
	}
	ownproc.Started(cmd.Process.Pid)
	a := &Actor{cmd: cmd, in: in, pid: cmd.Process.Pid, resp: make(chan Result, 16), dead: make(chan struct{})}
	live.Store(a, struct{}{})
	dec := json.NewDecoder(bufio.NewReader(out))
	var h hello
	if err := dec.Decode(&h); err != nil {
		a.Kill() // reaps it (and waits for its stderr)
		why := "killed after a bad hello"
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && !(ws.Signaled() && ws.Signal() == syscall.SIGKILL) {
			why = "exited before its hello"
		}
		return nil, fmt.Errorf("actor hello: %w: the actor (pid %d) %s: %s", err, a.pid, why, procfail.DescribeSince(errors.New(cmd.ProcessState.String()), head.bytes(), pids))
	}
	a.tid = h.Tid
	go func() {
		defer close(a.dead)
		for {
			var r Result
			if err := dec.Decode(&r); err != nil {
				return
			}
			a.resp <- r
		}
	}()
	return a, nil
}

// headBuffer keeps the first headMax bytes written to it (a Go crash
// prints its reason first).
type headBuffer struct {
	mu sync.Mutex
	b  []byte
}

const headMax = 16 << 10

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := headMax - len(h.b); n > 0 {
		h.b = append(h.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

func (h *headBuffer) bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]byte(nil), h.b...)
}

// Pid is the actor's process id (what fanotify reports without FAN_REPORT_TID).
func (a *Actor) Pid() int { return a.pid }

// Tid is the id of the actor thread that performs every operation.
func (a *Actor) Tid() int { return a.tid }

// Kill ends the actor and reaps it. Safe to call more than once.
func (a *Actor) Kill() {
	a.once.Do(func() {
		live.Delete(a)
		syscall.Kill(-a.pid, syscall.SIGKILL)
		a.cmd.Process.Kill()
		a.in.Close()
		a.cmd.Wait()
	})
}

// KillAll kills every live actor of this process (the watchdog's second step).
func KillAll() {
	live.Range(func(k, _ any) bool {
		k.(*Actor).Kill()
		return true
	})
}

// Pending is an operation sent but not yet answered.
type Pending struct {
	a  *Actor
	op Op
}

// Send sends op without waiting for its answer; Wait collects it. Operations
// are answered in the order they were sent.
func (a *Actor) Send(op Op) (*Pending, error) {
	b, err := json.Marshal(op)
	if err != nil {
		return nil, fmt.Errorf("encode actor op: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.in.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("send %s to actor: %w", op.Kind, err)
	}
	return &Pending{a: a, op: op}, nil
}

// ErrStillBlocked is returned by Wait when the operation has not finished.
var ErrStillBlocked = errors.New("actor operation still blocked")

// Wait waits up to d for the answer.
func (p *Pending) Wait(d time.Duration) (Result, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case r := <-p.a.resp:
		return r, nil
	case <-p.a.dead:
		select {
		case r := <-p.a.resp:
			return r, nil
		default:
		}
		return Result{}, ErrDead
	case <-t.C:
		path := p.op.Path
		if path == "" && p.op.Fd > 0 {
			path = fmt.Sprintf("/proc/%d/fd/%d", p.a.pid, p.op.Fd) // stat follows it to the file
		}
		return Result{}, &blockedError{d: d, path: path}
	}
}

// blockedError is Wait's ErrStillBlocked. Its message names any other
// program's fanotify group with permission marks on the operation's
// filesystem (permhold), computed only when the message is asked for: cases
// that expect the block check errors.Is and never pay for the /proc scan.
type blockedError struct {
	d    time.Duration
	path string
	once sync.Once
	msg  string
}

func (e *blockedError) Error() string {
	e.once.Do(func() {
		e.msg = fmt.Sprintf("after %v: %v", e.d, ErrStillBlocked)
		if e.path != "" {
			if h := permhold.Describe(e.path); h != "" {
				e.msg += " (" + h + ")"
			}
		}
	})
	return e.msg
}

func (e *blockedError) Unwrap() error { return ErrStillBlocked }

// DefaultWait bounds the synchronous helpers.
var DefaultWait = 10 * time.Second

// Do sends op and waits for its answer. The error reports only transport
// problems; the operation's own errno is in the Result.
func (a *Actor) Do(op Op) (Result, error) {
	p, err := a.Send(op)
	if err != nil {
		return Result{}, err
	}
	return p.Wait(DefaultWait)
}

func (a *Actor) do(op Op) (Result, error) {
	r, err := a.Do(op)
	if err != nil {
		return r, err
	}
	return r, r.Err()
}

// Open opens path in the actor and returns the actor's fd.
func (a *Actor) Open(path string, flags int, mode uint32) (int, error) {
	r, err := a.do(Op{Kind: "open", Path: path, Flags: flags, Mode: mode})
	return r.Fd, err
}

// Close closes an actor fd.
func (a *Actor) Close(fd int) error { _, err := a.do(Op{Kind: "close", Fd: fd}); return err }

// Read reads up to n bytes from an actor fd.
func (a *Actor) Read(fd, n int) ([]byte, error) {
	r, err := a.do(Op{Kind: "read", Fd: fd, N: n})
	return r.Data, err
}

// Write writes data to an actor fd.
func (a *Actor) Write(fd int, data []byte) (int, error) {
	r, err := a.do(Op{Kind: "write", Fd: fd, Data: data})
	return r.N, err
}

// Pwrite writes data at off.
func (a *Actor) Pwrite(fd int, data []byte, off int64) (int, error) {
	r, err := a.do(Op{Kind: "pwrite", Fd: fd, Data: data, Off: off})
	return r.N, err
}

// Rename renames from to to.
func (a *Actor) Rename(from, to string) error {
	_, err := a.do(Op{Kind: "rename", Path: from, Path2: to})
	return err
}

// Link makes a hard link to at new.
func (a *Actor) Link(old, new string) error {
	_, err := a.do(Op{Kind: "link", Path: old, Path2: new})
	return err
}

// Unlink removes a file.
func (a *Actor) Unlink(path string) error { _, err := a.do(Op{Kind: "unlink", Path: path}); return err }

// Mkdir makes a directory.
func (a *Actor) Mkdir(path string, mode uint32) error {
	_, err := a.do(Op{Kind: "mkdir", Path: path, Mode: mode})
	return err
}

// Rmdir removes a directory.
func (a *Actor) Rmdir(path string) error { _, err := a.do(Op{Kind: "rmdir", Path: path}); return err }

// Chmod changes a file's mode (an attribute change).
func (a *Actor) Chmod(path string, mode uint32) error {
	_, err := a.do(Op{Kind: "chmod", Path: path, Mode: mode})
	return err
}

// Truncate sets a file's size by path.
func (a *Actor) Truncate(path string, size int64) error {
	_, err := a.do(Op{Kind: "truncate", Path: path, Off: size})
	return err
}

// Exec runs path with args in a child of the actor and returns its exit
// status; the error is execve's errno when it failed.
func (a *Actor) Exec(path string, args ...string) (int, error) {
	pids := procfail.ReadPids()
	r, err := a.do(Op{Kind: "exec", Path: path, Args: args})
	if errors.Is(err, unix.EAGAIN) {
		// The actor's fork was refused: say by what.
		why := procfail.RefusedSince(pids)
		if why == "" {
			why = procfail.PidsHint()
		}
		err = fmt.Errorf("%w (%s)", err, why)
	}
	return r.N, err
}

// Touch opens path with O_CREAT|O_WRONLY and closes it.
func (a *Actor) Touch(path string) error {
	fd, err := a.Open(path, unix.O_CREAT|unix.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return a.Close(fd)
}

// WriteFile opens path for writing (creating it), writes data, and closes it.
func (a *Actor) WriteFile(path string, data []byte) error {
	fd, err := a.Open(path, unix.O_CREAT|unix.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := a.Write(fd, data); err != nil {
		a.Close(fd)
		return err
	}
	return a.Close(fd)
}

// ReadFile opens path read-only, reads up to n bytes, and closes it.
func (a *Actor) ReadFile(path string, n int) ([]byte, error) {
	fd, err := a.Open(path, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	data, err := a.Read(fd, n)
	if cerr := a.Close(fd); err == nil {
		err = cerr
	}
	return data, err
}
