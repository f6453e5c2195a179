// Package inotify is a typed wrapper of inotify(7): instances, watches, reads
// with a deadline, and decoding of events with their names and cookies.
package inotify

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/internal/fdpoll"
	"github.com/fsnsuite/fsnsuite/harness/limits"
)

// Mask is an inotify event mask that prints symbolically (IN_CREATE|IN_ISDIR).
type Mask uint32

var bits = []struct {
	bit  uint32
	name string
}{
	{unix.IN_ACCESS, "IN_ACCESS"},
	{unix.IN_MODIFY, "IN_MODIFY"},
	{unix.IN_ATTRIB, "IN_ATTRIB"},
	{unix.IN_CLOSE_WRITE, "IN_CLOSE_WRITE"},
	{unix.IN_CLOSE_NOWRITE, "IN_CLOSE_NOWRITE"},
	{unix.IN_OPEN, "IN_OPEN"},
	{unix.IN_MOVED_FROM, "IN_MOVED_FROM"},
	{unix.IN_MOVED_TO, "IN_MOVED_TO"},
	{unix.IN_CREATE, "IN_CREATE"},
	{unix.IN_DELETE, "IN_DELETE"},
	{unix.IN_DELETE_SELF, "IN_DELETE_SELF"},
	{unix.IN_MOVE_SELF, "IN_MOVE_SELF"},
	{unix.IN_UNMOUNT, "IN_UNMOUNT"},
	{unix.IN_Q_OVERFLOW, "IN_Q_OVERFLOW"},
	{unix.IN_IGNORED, "IN_IGNORED"},
	{unix.IN_ONLYDIR, "IN_ONLYDIR"},
	{unix.IN_DONT_FOLLOW, "IN_DONT_FOLLOW"},
	{unix.IN_EXCL_UNLINK, "IN_EXCL_UNLINK"},
	{unix.IN_MASK_CREATE, "IN_MASK_CREATE"},
	{unix.IN_MASK_ADD, "IN_MASK_ADD"},
	{unix.IN_ISDIR, "IN_ISDIR"},
	{unix.IN_ONESHOT, "IN_ONESHOT"},
}

// String renders m as IN_X|IN_Y|0x…, or "0".
func (m Mask) String() string {
	v := uint32(m)
	if v == 0 {
		return "0"
	}
	var parts []string
	for _, b := range bits {
		if v&b.bit == b.bit {
			parts = append(parts, b.name)
			v &^= b.bit
		}
	}
	if v != 0 {
		parts = append(parts, fmt.Sprintf("%#x", v))
	}
	return strings.Join(parts, "|")
}

// Event is one decoded struct inotify_event.
type Event struct {
	Wd     int32
	Mask   Mask
	Cookie uint32
	Name   string
}

// String renders the event on one line.
func (e Event) String() string {
	s := fmt.Sprintf("wd=%d %s", e.Wd, e.Mask)
	if e.Name != "" {
		s += fmt.Sprintf(" %q", e.Name)
	}
	if e.Cookie != 0 {
		s += fmt.Sprintf(" cookie=%d", e.Cookie)
	}
	return s
}

// Instance is one inotify instance.
type Instance struct {
	fd     int
	closed bool
}

// Init calls inotify_init1(2) (IN_CLOEXEC is always added).
func Init(flags int) (*Instance, error) {
	fd, err := unix.InotifyInit1(flags | unix.IN_CLOEXEC)
	if err != nil {
		call := fmt.Sprintf("inotify_init1(%#x)", flags)
		return nil, limits.InotifyInit(call, fmt.Errorf("%s: %w", call, err))
	}
	return &Instance{fd: fd}, nil
}

// Fd returns the instance's file descriptor.
func (in *Instance) Fd() int { return in.fd }

// Close closes the instance; calling it again does nothing.
func (in *Instance) Close() error {
	if in.closed {
		return nil
	}
	in.closed = true
	if err := unix.Close(in.fd); err != nil {
		return fmt.Errorf("close inotify: %w", err)
	}
	return nil
}

// AddWatch calls inotify_add_watch(2) and returns the watch descriptor.
func (in *Instance) AddWatch(path string, mask uint32) (int32, error) {
	wd, err := unix.InotifyAddWatch(in.fd, path, mask)
	if err != nil {
		call := fmt.Sprintf("inotify_add_watch(%q, %s)", path, Mask(mask))
		return -1, limits.InotifyWatch(call, fmt.Errorf("%s: %w", call, err))
	}
	return int32(wd), nil
}

// RmWatch calls inotify_rm_watch(2).
func (in *Instance) RmWatch(wd int32) error {
	if _, err := unix.InotifyRmWatch(in.fd, uint32(wd)); err != nil {
		return fmt.Errorf("inotify_rm_watch(%d): %w", wd, err)
	}
	return nil
}

// ErrTimeout is returned by Read when the deadline passes with nothing to read.
var ErrTimeout = errors.New("no inotify event before the deadline")

// Read waits until events are readable or the deadline passes and returns the
// events of one read(2).
func (in *Instance) Read(deadline time.Time) ([]Event, error) {
	return fdpoll.Read(in.fd, deadline, in.readOnce, ErrTimeout)
}

// Drain reads without blocking until nothing is left and returns all events.
// inotify queues an event before the syscall that caused it returns, so a
// drain after that call sees everything it produced.
func (in *Instance) Drain() ([]Event, error) {
	return fdpoll.Drain(in.fd, in.readOnce, nil)
}

// Collect reads until d has passed and returns everything that arrived.
func (in *Instance) Collect(d time.Duration) ([]Event, error) {
	return fdpoll.Collect(d, in.Read, ErrTimeout)
}

func (in *Instance) readOnce() ([]Event, error) {
	buf := make([]byte, 64<<10)
	n, err := unix.Read(in.fd, buf)
	if err != nil {
		return nil, fmt.Errorf("read inotify: %w", err)
	}
	return Decode(buf[:n])
}

// Decode parses a buffer returned by read(2) on an inotify fd.
func Decode(buf []byte) ([]Event, error) {
	var evs []Event
	err := Walk(buf, func(wd int32, mask Mask, cookie uint32, name []byte) {
		evs = append(evs, Event{Wd: wd, Mask: mask, Cookie: cookie, Name: string(name)})
	})
	return evs, err
}

// Walk calls fn for each event record of buf (a read(2) result) in order, without
// allocating: name is a sub-slice of buf with its NUL padding removed. Perf
// listeners count events with it while a measurement runs.
func Walk(buf []byte, fn func(wd int32, mask Mask, cookie uint32, name []byte)) error {
	const hdr = unix.SizeofInotifyEvent
	for len(buf) > 0 {
		if len(buf) < hdr {
			return fmt.Errorf("short inotify event: %d bytes", len(buf))
		}
		raw := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
		end := hdr + int(raw.Len)
		if end > len(buf) {
			return fmt.Errorf("inotify event len %d overruns buffer", raw.Len)
		}
		name := buf[hdr:end]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		fn(raw.Wd, Mask(raw.Mask), raw.Cookie, name)
		buf = buf[end:]
	}
	return nil
}
