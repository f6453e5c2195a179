package vm

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/statedir"
)

// LockWait bounds Lock's wait for another VM run: longer than the longest
// run that shares the lock (a coverage run of the whole suite, about 15
// min; a mutant batch's VM run, under an hour), short enough that a lock
// held by a stuck or hostile process ends the run with its name instead of
// blocking CI until its own timeout.
const LockWait = 3 * time.Hour

// Lock takes an exclusive flock on path (created 0600 if needed), so that
// VM runs of several tools on one machine take turns ($FSNSUITE_VM_LOCK). It
// calls waiting first when another holder has it, and waits at most
// LockWait; then the error (a *statedir.BusyError) names the lock and the
// pids holding it. The returned func releases it. An empty path locks
// nothing.
//
// The path may be in a world-writable directory: it is opened with
// O_NOFOLLOW (a planted symlink is refused, not followed) and O_NONBLOCK (a
// planted FIFO does not block), and must be a regular file owned by this
// user; one that others may read is made 0600, so that only its owner can
// take the lock (flock needs only read access).
func Lock(path string, waiting func()) (unlock func(), err error) {
	return lockFor(path, waiting, LockWait)
}

func lockFor(path string, waiting func(), wait time.Duration) (unlock func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("vm: lock %s is a symlink: refusing to follow it", path)
	}
	if err != nil {
		return nil, fmt.Errorf("vm: lock %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("vm: lock %s: %w", path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		f.Close()
		return nil, fmt.Errorf("vm: lock %s is not a regular file (mode %#o): refusing it", path, st.Mode)
	case st.Nlink != 1:
		f.Close()
		return nil, fmt.Errorf("vm: lock %s has %d hard links: refusing a file that may be another one's name", path, st.Nlink)
	case int(st.Uid) != os.Geteuid():
		f.Close()
		return nil, fmt.Errorf("vm: lock %s is owned by uid %d, not %d: refusing a lock another user controls", path, st.Uid, os.Geteuid())
	case st.Mode&0o077 != 0:
		if err := unix.Fchmod(fd, 0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("vm: lock %s: making it 0600: %w", path, err)
		}
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if waiting != nil {
			waiting()
		}
		if err := statedir.Flock(f, unix.LOCK_EX, wait); err != nil {
			f.Close()
			return nil, fmt.Errorf("vm: %w", err)
		}
	}
	return func() {
		unix.Flock(fd, unix.LOCK_UN)
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
