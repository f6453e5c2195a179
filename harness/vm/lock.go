package vm

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive flock on path (created if needed), so that VM
// runs of several tools on one machine take turns ($FSNSUITE_VM_LOCK). It
// calls waiting first when another holder has it. The returned func
// releases it. An empty path locks nothing.
func Lock(path string, waiting func()) (unlock func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("vm: lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if waiting != nil {
			waiting()
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("vm: lock %s: %w", path, err)
		}
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
