// Command seccompexec runs a program under a seccomp filter that makes the
// named system calls fail with an errno, as a container runtime's profile
// would (make hostile uses it for the fanotify and inotify calls):
//
//	seccompexec -errno ENOSYS -calls fanotify_init,fanotify_mark -- PROG ARGS...
//
// Every thread gets the filter (SECCOMP_FILTER_FLAG_TSYNC) and it survives
// execve(2), so PROG and everything it starts run under it.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

var calls = map[string]uint32{
	"fanotify_init":     unix.SYS_FANOTIFY_INIT,
	"fanotify_mark":     unix.SYS_FANOTIFY_MARK,
	"inotify_init1":     unix.SYS_INOTIFY_INIT1,
	"inotify_add_watch": unix.SYS_INOTIFY_ADD_WATCH,
}

// Classic BPF opcodes (linux/filter.h) and seccomp return values
// (linux/seccomp.h).
const (
	ldAbsW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeqK    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	retK    = unix.BPF_RET | unix.BPF_K
	retAll  = 0x7fff0000 // SECCOMP_RET_ALLOW
	retErr  = 0x00050000 // SECCOMP_RET_ERRNO
	nrOff   = 0          // offsetof(struct seccomp_data, nr)
	setMode = 1          // SECCOMP_SET_MODE_FILTER
	tsync   = 1          // SECCOMP_FILTER_FLAG_TSYNC
)

func main() {
	errName := flag.String("errno", "ENOSYS", "errno the calls fail with")
	list := flag.String("calls", "", "comma-separated system calls: "+strings.Join(names(), ","))
	flag.Parse()
	if flag.NArg() == 0 || *list == "" {
		fmt.Fprintln(os.Stderr, "seccompexec: usage: seccompexec -errno E -calls a,b -- PROG ARGS (see -h)")
		os.Exit(2)
	}
	errno, ok := map[string]unix.Errno{"ENOSYS": unix.ENOSYS, "EPERM": unix.EPERM, "EACCES": unix.EACCES, "EINVAL": unix.EINVAL}[*errName]
	if !ok {
		fmt.Fprintf(os.Stderr, "seccompexec: unknown errno %q\n", *errName)
		os.Exit(2)
	}
	var nrs []uint32
	for _, c := range strings.Split(*list, ",") {
		nr, ok := calls[c]
		if !ok {
			fmt.Fprintf(os.Stderr, "seccompexec: unknown call %q\n", c)
			os.Exit(2)
		}
		nrs = append(nrs, nr)
	}
	prog := []unix.SockFilter{{Code: ldAbsW, K: nrOff}}
	for i, nr := range nrs {
		// Equal: jump to the errno return after the remaining checks and ALLOW.
		prog = append(prog, unix.SockFilter{Code: jeqK, K: nr, Jt: uint8(len(nrs) - i)})
	}
	prog = append(prog,
		unix.SockFilter{Code: retK, K: retAll},
		unix.SockFilter{Code: retK, K: retErr | uint32(errno)})
	path, err := exec.LookPath(flag.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "seccompexec: %v\n", err)
		os.Exit(2)
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "seccompexec: PR_SET_NO_NEW_PRIVS: %v\n", err)
		os.Exit(1)
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, setMode, tsync, uintptr(unsafe.Pointer(&fp))); e != 0 {
		fmt.Fprintf(os.Stderr, "seccompexec: seccomp(SECCOMP_SET_MODE_FILTER): %v\n", e)
		os.Exit(1)
	}
	err = unix.Exec(path, flag.Args(), os.Environ())
	fmt.Fprintf(os.Stderr, "seccompexec: exec %s: %v\n", path, err)
	os.Exit(1)
}

func names() []string {
	var n []string
	for k := range calls {
		n = append(n, k)
	}
	return n
}
