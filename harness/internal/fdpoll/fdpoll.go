// Package fdpoll waits for a file descriptor to become readable, with a
// deadline, and holds the read loops (Read, Drain, Collect) the fanotify and
// inotify readers share: each passes its own one-read-and-decode function.
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

// Read waits until fd is readable or deadline passes, then returns what one
// readOnce (one read(2) and its decoding) returns; timeout when nothing
// arrived in time.
func Read[E any](fd int, deadline time.Time, readOnce func() ([]E, error), timeout error) ([]E, error) {
	ready, err := Readable(fd, deadline)
	if err != nil {
		return nil, err
	}
	if !ready {
		return nil, timeout
	}
	return readOnce()
}

// Drain calls readOnce while fd polls readable without waiting and returns
// everything read. An error that is end (when end is not nil) ends the drain
// as an empty queue would: fanotify passes EAGAIN, which a non-blocking group
// answers when another reader took the events between poll and read.
func Drain[E any](fd int, readOnce func() ([]E, error), end error) ([]E, error) {
	var all []E
	for {
		ready, err := Readable(fd, time.Time{})
		if err != nil || !ready {
			return all, err
		}
		evs, err := readOnce()
		if end != nil && errors.Is(err, end) {
			return all, nil
		}
		all = append(all, evs...)
		if err != nil {
			return all, err
		}
	}
}
