package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
)

// RLIMIT_NOFILE is per process: lowering it in the case process would let
// any other descriptor that process opens meanwhile fail with EMFILE (the
// case's own goroutines, the harness's watchdog and output, an actor's
// pipes, a probe), a false failure, and a path that forgot to restore it
// would leak the limit into the cases after. So the read at the limit
// happens in a child made for it (roleReadAtFdLimit): it inherits the
// group's descriptor, lowers its own limit, reads once, and exits; the case
// process's limit never changes. In the child nothing else runs that opens
// a descriptor: it is a fresh copy of the binary whose only work is this
// function, on one locked thread, and the limit is back before it decodes
// or writes its report.

// roleReadAtFdLimit is the reexec role of that child.
const roleReadAtFdLimit = "api_read_at_fd_limit"

// fdLimitGroupFd is where the child finds the fanotify group (the first of
// exec.Cmd.ExtraFiles).
const fdLimitGroupFd = 3

// fdLimitReport is what the child prints (JSON).
type fdLimitReport struct {
	Setup  string // non-empty: the child could not set up, and why
	Lowest int    // its lowest free descriptor; the limit was Lowest+extra
	// Errno is read(2)'s errno (0 when it returned events).
	Errno unix.Errno
	// Events are what the read returned, decoded in the child (Path is
	// its /proc/self/fd view, the same mount namespace as the case's);
	// their descriptors were the child's and are closed.
	Events []fanotify.Event
	Decode string // a decoding error ("" none)
}

// readAtFdLimitChild is the child's main: args are extra, the number of
// descriptors left free under the limit.
func readAtFdLimitChild(args []string) int {
	var rep fdLimitReport
	extra, err := strconv.Atoi(first(args))
	if err != nil || len(args) != 1 {
		rep.Setup = fmt.Sprintf("bad arguments %q", args)
	} else {
		rep = readAtFdLimitHere(fdLimitGroupFd, extra)
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}

// readAtFdLimitHere reads fd once with this process's RLIMIT_NOFILE soft
// limit lowered to its lowest free descriptor plus extra, then restores the
// limit and decodes what was read.
func readAtFdLimitHere(fd, extra int) fdLimitReport {
	var rep fdLimitReport
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		rep.Setup = "getrlimit: " + err.Error()
		return rep
	}
	lowest, err := unix.Dup(fd)
	if err != nil {
		rep.Setup = "dup: " + err.Error()
		return rep
	}
	unix.Close(lowest)
	rep.Lowest = lowest
	buf := make([]byte, 4096)
	runtime.LockOSThread()
	low := unix.Rlimit{Cur: uint64(lowest + extra), Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		runtime.UnlockOSThread()
		rep.Setup = "setrlimit: " + err.Error()
		return rep
	}
	n, _, e := unix.Syscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	rerr := unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
	runtime.UnlockOSThread()
	if rerr != nil {
		rep.Setup = "restoring RLIMIT_NOFILE: " + rerr.Error()
		return rep
	}
	if e != 0 {
		rep.Errno = e
		return rep
	}
	evs, derr := fanotify.Decode(buf[:n])
	fanotify.CloseEventFds(evs)
	if derr != nil {
		rep.Decode = derr.Error()
	}
	rep.Events = evs
	return rep
}

// readAtFdLimit has the child read g once with no descriptor free under
// its RLIMIT_NOFILE (extra 0), or room for extra; it returns the events the
// read returned, or its errno (nil when it returned events). A child that
// cannot run or set up fails the case with "setup:" (an errno of the
// machine, such as EMFILE from the dup here, makes it an environment skip).
func readAtFdLimit(t *harness.T, g *fanotify.Group, extra int) ([]fanotify.Event, error) {
	t.Helper()
	// A duplicate, so that the *os.File ExtraFiles needs (closed after
	// the child started) never owns the group's own descriptor.
	d, err := unix.FcntlInt(uintptr(g.Fd()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("setup: dup of the group's descriptor: %v", err)
	}
	f := os.NewFile(uintptr(d), "fanotify group")
	defer f.Close()
	cmd := reexec.Command(roleReadAtFdLimit, "", strconv.Itoa(extra))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.ExtraFiles = []*os.File{f}
	var rep fdLimitReport
	if err := reexec.RunReport(cmd, &rep); err != nil {
		t.Fatalf("setup: read-at-limit child: %v", err)
	}
	if rep.Setup != "" {
		t.Fatalf("setup: read-at-limit child: %s", rep.Setup)
	}
	t.Logf("read-at-limit child (pid %d): RLIMIT_NOFILE soft limit %d (lowest free descriptor %d + %d) for one read(2)", cmd.Process.Pid, rep.Lowest+extra, rep.Lowest, extra)
	if rep.Errno != 0 {
		return nil, rep.Errno
	}
	if rep.Decode != "" {
		t.Fatalf("decoding what the read at the limit returned: %s (events %v)", rep.Decode, rep.Events)
	}
	return rep.Events, nil
}
