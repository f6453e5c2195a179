// Package fdpoll waits for a file descriptor to become readable, with a
// deadline, for the fanotify and inotify readers.
package fdpoll

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Readable waits for POLLIN on fd until deadline and reports whether it came.
// A zero deadline polls once without waiting. EINTR is retried; a closed fd
// (POLLNVAL) is an error.
func Readable(fd int, deadline time.Time) (bool, error) {
	for {
		ms := 0
		if !deadline.IsZero() {
			if d := time.Until(deadline); d > 0 {
				ms = int((d + time.Millisecond - 1) / time.Millisecond)
			}
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("poll: %w", err)
		}
		if fds[0].Revents&unix.POLLNVAL != 0 {
			return false, fmt.Errorf("poll: fd %d is closed", fd)
		}
		if n > 0 {
			return true, nil
		}
		if deadline.IsZero() || !time.Now().Before(deadline) {
			return false, nil
		}
	}
}

// Collect calls read with a deadline d from now until it returns timeout (a
// wait that ended with nothing to read) and returns every event read, for
// "nothing else arrives within d" checks of the fanotify and inotify readers.
func Collect[E any](d time.Duration, read func(deadline time.Time) ([]E, error), timeout error) ([]E, error) {
	deadline := time.Now().Add(d)
	var all []E
	for {
		evs, err := read(deadline)
		if errors.Is(err, timeout) {
			return all, nil
		}
		all = append(all, evs...)
		if err != nil {
			return all, err
		}
	}
}
