package main

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// withoutCaps runs fn on an OS thread whose effective capability set lacks
// caps, then gives the thread its capabilities back. Capabilities are per
// thread (capabilities(7): "the kernel performs permission checks based on
// the credentials of the thread"; only the effective set is cleared, so the
// permitted set allows restoring it). The thread is never ended: a thread
// that forked an actor sends that actor PR_SET_PDEATHSIG when it exits. If
// restoring fails the goroutine ends locked, so the runtime discards the
// thread rather than reuse it without its capabilities.
func withoutCaps(caps []uintptr, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var saved, data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &saved[0]); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("capget: %w", err)
			return
		}
		data = saved
		for _, c := range caps {
			data[c/32].Effective &^= 1 << (c % 32)
		}
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("capset: %w", err)
			return
		}
		err := fn()
		if rerr := unix.Capset(&hdr, &saved[0]); rerr != nil {
			done <- fmt.Errorf("restoring capabilities: %w", rerr)
			return // still locked: the thread is discarded
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	return <-done
}
