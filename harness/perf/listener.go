package perf

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/inotify"
)

// InotifyListener drains an inotify instance on its own pinned thread while an
// experiment runs (the seed benchmarks' drain_events) and counts what it reads by
// exact mask. It blocks in ppoll on the instance and an eventfd that Stop
// signals, then reads until EAGAIN; decoding goes through inotify.Walk, so the
// listener allocates nothing per event.
type InotifyListener struct {
	ifd, efd int
	counts   map[inotify.Mask]int64 // written by the listener thread, read after Stop
	err      error
	done     chan struct{}
	buf      []byte
	count    func(wd int32, mask inotify.Mask, cookie uint32, name []byte)
}

// InotifyHelper returns an Experiment.Helper that starts a listener on ifd (a
// non-blocking inotify descriptor) and stores it in *l, for Verify to read its
// counts once the engine has stopped it.
func InotifyHelper(ifd int, l **InotifyListener) func(cpu int) (func() error, error) {
	return InotifyHelperFunc(ifd, l, nil)
}

// InotifyHelperFunc is InotifyHelper with fn (if not nil) called on the
// listener's thread for every event it reads, before the event is counted: for
// experiments whose Verify needs more than counts by mask (perf_open_path tells
// the closes of its watched opens from late closes by their names). fn must not
// block; what it shares with the measuring thread must be atomic.
func InotifyHelperFunc(ifd int, l **InotifyListener, fn func(wd int32, mask inotify.Mask, name []byte)) func(cpu int) (func() error, error) {
	return func(cpu int) (func() error, error) {
		lis, err := StartInotifyListenerFunc(ifd, cpu, fn)
		if err != nil {
			return nil, err
		}
		*l = lis
		return lis.Stop, nil
	}
}

// StartInotifyListener starts draining ifd on cpu.
func StartInotifyListener(ifd, cpu int) (*InotifyListener, error) {
	return StartInotifyListenerFunc(ifd, cpu, nil)
}

// StartInotifyListenerFunc starts draining ifd on cpu, calling fn (if not nil)
// for every event read (see InotifyHelperFunc).
func StartInotifyListenerFunc(ifd, cpu int, fn func(wd int32, mask inotify.Mask, name []byte)) (*InotifyListener, error) {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	l := &InotifyListener{ifd: ifd, efd: efd, done: make(chan struct{}), buf: make([]byte, 64<<10),
		counts: make(map[inotify.Mask]int64, 8)}
	l.count = func(wd int32, mask inotify.Mask, _ uint32, name []byte) {
		if fn != nil {
			fn(wd, mask, name)
		}
		l.counts[mask]++
	}
	started := make(chan error, 1)
	go l.loop(cpu, started)
	if err := <-started; err != nil {
		unix.Close(efd)
		return nil, err
	}
	return l, nil
}

func (l *InotifyListener) loop(cpu int, started chan<- error) {
	defer close(l.done)
	if err := PinForever(cpu); err != nil {
		started <- fmt.Errorf("listener: %w", err)
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
			l.err = fmt.Errorf("listener: ppoll: %w", err)
			return
		}
		if err := l.drain(); err != nil {
			l.err = err
			return
		}
		if fds[1].Revents&unix.POLLIN != 0 {
			// Stop: every event of the last run was queued before its syscall
			// returned, so this drain (after the stop signal) got them all.
			return
		}
	}
}

func (l *InotifyListener) drain() error {
	for {
		n, err := unix.Read(l.ifd, l.buf)
		switch err {
		case nil:
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return nil
		default:
			return fmt.Errorf("listener: read inotify: %w", err)
		}
		if err := inotify.Walk(l.buf[:n], l.count); err != nil {
			return fmt.Errorf("listener: %w", err)
		}
	}
}

// Stop signals the listener, waits for its last drain and closes the eventfd. It
// returns the listener's read error, if any.
func (l *InotifyListener) Stop() error {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	if _, err := unix.Write(l.efd, one[:]); err != nil {
		return fmt.Errorf("stop listener: write eventfd: %w", err)
	}
	<-l.done
	unix.Close(l.efd)
	return l.err
}

// Count returns how many events with exactly mask the listener read (after Stop).
func (l *InotifyListener) Count(mask inotify.Mask) int64 { return l.counts[mask] }

// Others returns how many events read had a mask not in masks (after Stop).
func (l *InotifyListener) Others(masks ...inotify.Mask) int64 {
	var n int64
	for m, c := range l.counts {
		if !slices.Contains(masks, m) {
			n += c
		}
	}
	return n
}

// String lists the counts by mask ("IN_MODIFY 812, IN_IGNORED 24"), after Stop.
func (l *InotifyListener) String() string {
	if len(l.counts) == 0 {
		return "no events"
	}
	var parts []string
	for m, c := range l.counts {
		parts = append(parts, fmt.Sprintf("%s %d", m, c))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
