// Package caps runs a call on a thread that lacks some effective
// capabilities, for probes and cases that ask what an unprivileged caller
// gets (harness/feature, harness/fixture).
package caps

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Without runs fn on a locked OS thread whose effective set lacks caps
// (CAP_* numbers), then restores the thread's set. The other threads of the
// process keep theirs: capabilities are per thread (capabilities(7)). A
// thread whose set could not be restored is left locked, so the Go runtime
// discards it when the goroutine ends.
func Without(caps []uintptr, fn func() error) error {
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
