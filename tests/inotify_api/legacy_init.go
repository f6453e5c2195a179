//go:build 386 || amd64 || arm || mips || mipsle || mips64 || mips64le || ppc || ppc64 || ppc64le || s390x || sparc64

package main

import "golang.org/x/sys/unix"

// legacyInotifyInit calls the inotify_init(2) system call, which exists on
// this architecture (it has SYS_INOTIFY_INIT).
func legacyInotifyInit() (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_INOTIFY_INIT, 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}
