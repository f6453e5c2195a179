//go:build !(386 || amd64 || arm || mips || mipsle || mips64 || mips64le || ppc || ppc64 || ppc64le || s390x || sparc64)

package main

import "golang.org/x/sys/unix"

// legacyInotifyInit reports ENOSYS: architectures that came after
// inotify_init1 (arm64, riscv64, loong64) have no inotify_init(2) syscall.
func legacyInotifyInit() (int, error) { return -1, unix.ENOSYS }
