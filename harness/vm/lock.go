package vm

import (
	"fmt"
	"os"
	"regexp"
	"strings"

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

// runBroken is the runner's line when a VM run itself broke (Error:
// panic, timeout, boot, qemu, protocol).
var runBroken = regexp.MustCompile(`(?m)^fsnsuite: (vm: .*)$`)

// BrokenRun says why a VM run of the runner (`fsnsuite -kernel`) is not a
// complete run, from its stderr and exit status: the VM's error line, or
// an exit status other than pass (0), fail (1) and all skipped (4); ""
// when it is complete.
func BrokenRun(stderr string, exitCode int) string {
	if m := runBroken.FindStringSubmatch(stderr); m != nil {
		return m[1]
	}
	switch exitCode {
	case 0, 1, 4:
		return ""
	}
	last := ""
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.TrimSpace(l) != "" {
			last = strings.TrimSpace(l)
		}
	}
	return fmt.Sprintf("runner exit status %d: %s", exitCode, last)
}
