package actor

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// Serve is the actor's main loop: it answers operations read from stdin, one
// JSON object a line, on one locked OS thread, until stdin closes. It returns
// the process exit code.
func Serve() int {
	runtime.LockOSThread()
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(hello{Pid: os.Getpid(), Tid: unix.Gettid()}); err != nil {
		return 1
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	for in.Scan() {
		var op Op
		var r Result
		if err := json.Unmarshal(in.Bytes(), &op); err != nil {
			r.Errno = unix.EBADMSG
		} else {
			r = perform(op)
		}
		if err := out.Encode(r); err != nil {
			return 1
		}
	}
	return 0
}

func errnoOf(err error) unix.Errno {
	if err == nil {
		return 0
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EIO
}

func perform(op Op) Result {
	var r Result
	var err error
	switch op.Kind {
	case "open":
		r.Fd, err = unix.Open(op.Path, op.Flags|unix.O_CLOEXEC, op.Mode)
	case "close":
		err = unix.Close(op.Fd)
	case "read":
		buf := make([]byte, op.N)
		var n int
		n, err = unix.Read(op.Fd, buf)
		if n > 0 {
			r.N, r.Data = n, buf[:n]
		}
	case "pread":
		buf := make([]byte, op.N)
		var n int
		n, err = unix.Pread(op.Fd, buf, op.Off)
		if n > 0 {
			r.N, r.Data = n, buf[:n]
		}
	case "write":
		r.N, err = unix.Write(op.Fd, op.Data)
	case "pwrite":
		r.N, err = unix.Pwrite(op.Fd, op.Data, op.Off)
	case "rename":
		err = unix.Rename(op.Path, op.Path2)
	case "link":
		err = unix.Link(op.Path, op.Path2)
	case "symlink":
		err = unix.Symlink(op.Path, op.Path2)
	case "unlink":
		err = unix.Unlink(op.Path)
	case "mkdir":
		err = unix.Mkdir(op.Path, op.Mode)
	case "rmdir":
		err = unix.Rmdir(op.Path)
	case "mknod":
		err = unix.Mknod(op.Path, op.Mode, op.N)
	case "chmod":
		err = unix.Chmod(op.Path, op.Mode)
	case "truncate":
		err = unix.Truncate(op.Path, op.Off)
	case "ftruncate":
		err = unix.Ftruncate(op.Fd, op.Off)
	case "stat":
		var st unix.Stat_t
		err = unix.Stat(op.Path, &st)
		r.N = int(st.Ino)
	case "exec":
		cmd := exec.Command(op.Path, op.Args...)
		err = cmd.Run()
		if cmd.Process != nil {
			r.Pid = cmd.Process.Pid // the pid events of its execve(2) carry
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.N, err = ee.ExitCode(), nil
		}
	case "kill_self":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	default:
		err = unix.ENOSYS
	}
	r.Errno = errnoOf(err)
	return r
}
