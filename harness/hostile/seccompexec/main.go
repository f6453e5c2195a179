// Command seccompexec runs a program under a seccomp filter that makes the
// named system calls fail with an errno, as a container runtime's profile
// would (make hostile uses it for the fanotify and inotify calls):
//
//	seccompexec -errno ENOSYS -calls fanotify_init,fanotify_mark -- PROG ARGS...
//
// or, with -ioctls, that makes ioctl(2) fail for the named requests only (the
// loop pool exhausted: LOOP_CTL_GET_FREE with ENOSPC, LOOP_CONFIGURE and
// LOOP_SET_FD with EBUSY, as another program holding every device would):
//
//	seccompexec -errno ENOSPC -ioctls LOOP_CTL_GET_FREE -- PROG ARGS...
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
	"sort"
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

// ioctls are the requests -ioctls names (linux/loop.h).
var ioctls = map[string]uint32{
	"LOOP_CTL_GET_FREE": unix.LOOP_CTL_GET_FREE,
	"LOOP_CONFIGURE":    unix.LOOP_CONFIGURE,
	"LOOP_SET_FD":       unix.LOOP_SET_FD,
}

// errnos are the errnos -errno names.
var errnos = map[string]unix.Errno{
	"ENOSYS": unix.ENOSYS, "EPERM": unix.EPERM, "EACCES": unix.EACCES, "EINVAL": unix.EINVAL,
	"ENOSPC": unix.ENOSPC, "EBUSY": unix.EBUSY, "ENXIO": unix.ENXIO,
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
	argOff  = 16         // offsetof(struct seccomp_data, args)
	setMode = 1          // SECCOMP_SET_MODE_FILTER
	tsync   = 1          // SECCOMP_FILTER_FLAG_TSYNC
)

func main() {
	errName := flag.String("errno", "ENOSYS", "errno the calls fail with")
	list := flag.String("calls", "", "comma-separated system calls: "+strings.Join(keys(calls), ","))
	reqs := flag.String("ioctls", "", "comma-separated ioctl(2) requests: "+strings.Join(keys(ioctls), ","))
	flag.Parse()
	if flag.NArg() == 0 || (*list == "" && *reqs == "") {
		fmt.Fprintln(os.Stderr, "seccompexec: usage: seccompexec -errno E [-calls a,b] [-ioctls R,S] -- PROG ARGS (see -h)")
		os.Exit(2)
	}
	errno, ok := errnos[*errName]
	if !ok {
		fmt.Fprintf(os.Stderr, "seccompexec: unknown errno %q\n", *errName)
		os.Exit(2)
	}
	nrs, err := lookup(calls, *list)
	if err != nil {
		fmt.Fprintf(os.Stderr, "seccompexec: unknown call %v\n", err)
		os.Exit(2)
	}
	rqs, err := lookup(ioctls, *reqs)
	if err != nil {
		fmt.Fprintf(os.Stderr, "seccompexec: unknown ioctl %v\n", err)
		os.Exit(2)
	}
	prog := filter(nrs, rqs, errno)
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

// filter is the program: ioctl(2) with one of rqs as its request (the low
// 32 bits of its second argument) and any call of nrs fail with errno;
// everything else is allowed.
func filter(nrs, rqs []uint32, errno unix.Errno) []unix.SockFilter {
	// Jumps go to the last instruction, the errno return: a jump's offset
	// counts the instructions after it.
	type ins struct {
		f     unix.SockFilter
		toErr bool
	}
	var p []ins
	p = append(p, ins{f: unix.SockFilter{Code: ldAbsW, K: nrOff}})
	if len(rqs) > 0 {
		// Not ioctl: skip the request checks (the load, the checks, the allow).
		p = append(p, ins{f: unix.SockFilter{Code: jeqK, K: unix.SYS_IOCTL, Jf: uint8(len(rqs) + 2)}})
		p = append(p, ins{f: unix.SockFilter{Code: ldAbsW, K: argOff + 8*1 + lowWord}})
		for _, r := range rqs {
			p = append(p, ins{f: unix.SockFilter{Code: jeqK, K: r}, toErr: true})
		}
		p = append(p, ins{f: unix.SockFilter{Code: retK, K: retAll}})
	}
	for _, nr := range nrs {
		p = append(p, ins{f: unix.SockFilter{Code: jeqK, K: nr}, toErr: true})
	}
	p = append(p, ins{f: unix.SockFilter{Code: retK, K: retAll}})
	p = append(p, ins{f: unix.SockFilter{Code: retK, K: retErr | uint32(errno)}})
	out := make([]unix.SockFilter, len(p))
	for i, in := range p {
		if in.toErr {
			in.f.Jt = uint8(len(p) - 1 - i - 1)
		}
		out[i] = in.f
	}
	return out
}

// lowWord is the offset of a 64-bit argument's low 32 bits.
var lowWord = func() uint32 {
	x := uint16(1)
	if *(*byte)(unsafe.Pointer(&x)) == 1 {
		return 0 // little-endian
	}
	return 4
}()

// lookup maps a comma-separated list of names through m.
func lookup(m map[string]uint32, list string) ([]uint32, error) {
	var out []uint32
	if list == "" {
		return nil, nil
	}
	for _, c := range strings.Split(list, ",") {
		v, ok := m[c]
		if !ok {
			return nil, fmt.Errorf("%q", c)
		}
		out = append(out, v)
	}
	return out, nil
}

func keys[V any](m map[string]V) []string {
	var n []string
	for k := range m {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
