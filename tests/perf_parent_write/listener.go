package main

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// listener drains an inotify instance on its own pinned thread, as the seed
// benchmark's drain_events does, and counts what it reads. It blocks in ppoll on
// the instance and an eventfd that stop signals, then reads until EAGAIN.
type listener struct {
	ifd, efd int
	modify   atomic.Int64
	ignored  atomic.Int64
	overflow atomic.Int64
	unknown  atomic.Int64
	err      atomic.Pointer[error]
	done     chan struct{}
	buf      []byte
}

// startListener starts draining ifd (a non-blocking inotify descriptor) on cpu.
func startListener(ifd, cpu int) (*listener, error) {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	l := &listener{ifd: ifd, efd: efd, done: make(chan struct{}), buf: make([]byte, 64<<10)}
	started := make(chan error, 1)
	go l.loop(cpu, started)
	if err := <-started; err != nil {
		unix.Close(efd)
		return nil, err
	}
	return l, nil
}

func (l *listener) fail(err error) {
	l.err.CompareAndSwap(nil, &err)
}

func (l *listener) loop(cpu int, started chan<- error) {
	defer close(l.done)
	runtime.LockOSThread() // never unlocked: the pinned thread exits with the goroutine
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		started <- fmt.Errorf("listener: sched_setaffinity(cpu %d): %w", cpu, err)
		return
	}
	started <- nil
	fds := []unix.PollFd{{Fd: int32(l.ifd), Events: unix.POLLIN}, {Fd: int32(l.efd), Events: unix.POLLIN}}
	for {
		_, err := unix.Ppoll(fds, nil, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			l.fail(fmt.Errorf("ppoll: %w", err))
			return
		}
		if err := l.drain(); err != nil {
			l.fail(err)
			return
		}
		if fds[1].Revents&unix.POLLIN != 0 {
			// Stop: every event of the last run was queued before its write
			// returned, so this drain (above, after the stop signal) got them all.
			return
		}
	}
}

// drain reads the instance until EAGAIN and counts the events by type.
func (l *listener) drain() error {
	for {
		n, err := unix.Read(l.ifd, l.buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read inotify: %w", err)
		}
		for off := 0; off < n; {
			if n-off < unix.SizeofInotifyEvent {
				return fmt.Errorf("read inotify: %d trailing bytes", n-off)
			}
			mask := binary.NativeEndian.Uint32(l.buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(l.buf[off+12:]))
			switch {
			case mask&unix.IN_Q_OVERFLOW != 0:
				l.overflow.Add(1)
			case mask == unix.IN_MODIFY:
				l.modify.Add(1)
			case mask == unix.IN_IGNORED:
				l.ignored.Add(1)
			default:
				l.unknown.Add(1)
			}
			off += unix.SizeofInotifyEvent + nameLen
			if off > n {
				return fmt.Errorf("read inotify: event overruns the buffer")
			}
		}
	}
}

// stop signals the listener, waits for its last drain and closes the eventfd.
func (l *listener) stop() error {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	if _, err := unix.Write(l.efd, one[:]); err != nil {
		return fmt.Errorf("stop listener: write eventfd: %w", err)
	}
	<-l.done
	unix.Close(l.efd)
	if p := l.err.Load(); p != nil {
		return *p
	}
	return nil
}
