// Package fanotify is a typed wrapper of fanotify(7): groups, marks, reads with
// a deadline, decoding of event metadata and every info record type, and
// responses to permission events. Every open group is registered so that the
// harness watchdog can close them all at once (which releases any process
// blocked on a permission event).
package fanotify

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/internal/fdpoll"
	"github.com/fsnsuite/fsnsuite/harness/limits"
)

// Group is one fanotify group (one fanotify_init file descriptor).
type Group struct {
	InitFlags   uint
	EventFFlags uint

	mu      sync.Mutex
	fd      int
	closed  bool
	heldFds map[int32]bool // event fds of permission events, closed with the group
}

var registry sync.Map // *Group -> struct{}

// Init calls fanotify_init(2). The error wraps the errno unchanged, so callers
// can tell EPERM (unprivileged) from EINVAL (unknown flag) with errors.Is.
func Init(flags, eventFFlags uint) (*Group, error) {
	fd, err := unix.FanotifyInit(flags|unix.FAN_CLOEXEC, eventFFlags)
	if err != nil {
		call := fmt.Sprintf("fanotify_init(%s, %#x)", InitFlagsString(flags), eventFFlags)
		return nil, limits.FanotifyInit(call, fmt.Errorf("%s: %w", call, err))
	}
	g := &Group{InitFlags: flags, EventFFlags: eventFFlags, fd: fd, heldFds: map[int32]bool{}}
	registry.Store(g, struct{}{})
	return g, nil
}

// Fd returns the group's file descriptor (for tests that need raw access).
func (g *Group) Fd() int { return g.fd }

// Close closes the group and any permission-event fds it still holds. Closing
// the group allows every pending permission event (fanotify(7)). Safe to call
// more than once and from another goroutine.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	registry.Delete(g)
	for fd := range g.heldFds {
		unix.Close(int(fd))
	}
	g.heldFds = nil
	if err := unix.Close(g.fd); err != nil {
		return fmt.Errorf("close fanotify group: %w", err)
	}
	return nil
}

// CloseAsync removes every mark of the group at once (FAN_MARK_FLUSH of inode,
// mount and filesystem marks: fsnotify_clear_marks_by_group detaches them and
// recomputes the objects' masks before the call returns) and then closes the
// fd in the background. Closing a group waits for the mark reaper
// (fsnotify_destroy_group -> fsnotify_wait_marks_destroyed, an SRCU grace
// period); for a markless group nothing is left to wait for but that. Where a
// flush fails (a kernel without filesystem marks) it closes synchronously.
func (g *Group) CloseAsync() error {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return nil
	}
	for _, typ := range []uint{0, unix.FAN_MARK_MOUNT, unix.FAN_MARK_FILESYSTEM} {
		if err := unix.FanotifyMark(g.fd, unix.FAN_MARK_FLUSH|typ, 0, unix.AT_FDCWD, ""); err != nil {
			return g.Close()
		}
	}
	select {
	case closeSlots <- struct{}{}:
		closing.Add(1)
		go func() {
			defer closing.Done()
			g.Close()
			<-closeSlots
		}()
		return nil
	default:
		// Enough closes in flight: each still counts against the user's
		// fs.fanotify.max_user_groups until it ends, so wait for this one.
		return g.Close()
	}
}

// CloseDetached is CloseAsync for a group whose close may have to wait for
// another group's answer: its marks are flushed at once and the close
// always runs in the background, never in the caller (no bound on closes in
// flight). A process waiting on a permission event of one group pins the
// current marks of the groups after it (fsnotify_prepare_user_wait raises
// their user_waits), and fsnotify_destroy_group waits for that: closing
// those groups one after another in one thread deadlocks when the waited-on
// group comes later.
func (g *Group) CloseDetached() {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return
	}
	for _, typ := range []uint{0, unix.FAN_MARK_MOUNT, unix.FAN_MARK_FILESYSTEM} {
		unix.FanotifyMark(g.fd, unix.FAN_MARK_FLUSH|typ, 0, unix.AT_FDCWD, "")
	}
	closing.Add(1)
	go func() {
		defer closing.Done()
		g.Close()
	}()
}

// maxClosing bounds the groups closing in the background: a group counts
// against fs.fanotify.max_user_groups (128 by default, shared with every
// other fanotify user of the same uid) until its close has finished.
const maxClosing = 8

var (
	closeSlots = make(chan struct{}, maxClosing)
	closing    sync.WaitGroup
)

// WaitClosing waits until every background close (CloseAsync) has finished,
// so the groups they held no longer count against the limit.
func WaitClosing() { closing.Wait() }

// CloseAll closes every group that is still open in this process. The harness
// watchdog calls it first on a timeout.
//
// The groups close concurrently and CloseAll waits for every close: a
// process waiting on a permission event of one group pins the marks of the
// groups after it (fsnotify_prepare_user_wait), and their close waits for
// it (fsnotify_destroy_group), so closing them one by one stops at such a
// group until the one waited on, later in the list, is closed: forever,
// once the process holding them has been killed (seen with the explorer's
// old close order: a SIGKILLed case process stayed a zombie with two
// threads in fsnotify_destroy_group, and another program's open waited,
// for 90 minutes, until that program was killed).
func CloseAll() {
	var wg sync.WaitGroup
	registry.Range(func(k, _ any) bool {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k.(*Group).Close()
		}()
		return true
	})
	wg.Wait()
}

// Mark calls fanotify_mark(2). dirfd is usually unix.AT_FDCWD.
func (g *Group) Mark(flags uint, mask uint64, dirfd int, path string) error {
	if err := unix.FanotifyMark(g.fd, flags, mask, dirfd, path); err != nil {
		call := fmt.Sprintf("fanotify_mark(%s, %s, %q)", MarkFlagsString(flags), Mask(mask), path)
		return limits.FanotifyMark(call, fmt.Errorf("%s: %w", call, err))
	}
	return nil
}

// Add adds mask to the mark of the given kind (0 for an inode, FAN_MARK_MOUNT,
// FAN_MARK_FILESYSTEM, plus any other flags) on path.
func (g *Group) Add(flags uint, mask uint64, path string) error {
	return g.Mark(unix.FAN_MARK_ADD|flags, mask, unix.AT_FDCWD, path)
}

// Remove removes mask from the mark on path.
func (g *Group) Remove(flags uint, mask uint64, path string) error {
	return g.Mark(unix.FAN_MARK_REMOVE|flags, mask, unix.AT_FDCWD, path)
}

// Event is one decoded fanotify event.
type Event struct {
	Mask Mask
	// Pid is the metadata's pid field (a tid with FAN_REPORT_TID).
	Pid int32
	// Fd is the event's file descriptor as read (FAN_NOFD when the group reports
	// FIDs). For notification events it has been closed after decoding; for
	// permission events it stays open until Respond's caller or Group.Close.
	Fd int32
	// Path is readlink(/proc/self/fd/Fd) taken at decode time, "" without an fd.
	Path string
	// Dev and Ino identify the object behind Fd (0 without an fd).
	Dev, Ino uint64
	// Info are the info records in the order the kernel wrote them.
	Info []Info
}

// Info is one decoded info record. Only the fields of its Type are set.
type Info struct {
	Type uint8
	// FID, DFID, DFID_NAME, OLD_DFID_NAME, NEW_DFID_NAME.
	Fsid       [2]int32
	HandleType int32
	Handle     string // hex of f_handle
	Name       string
	// PIDFD. Pidfd is the record's pidfd field as the kernel wrote it: a
	// descriptor (>= 0), or the negative value it put in place of one
	// (FAN_NOPIDFD, FAN_EPIDFD; -errno with FAN_REPORT_FD_ERROR). Which
	// descriptor is arbitrary: expect.FanotifyEqual compares every
	// descriptor as 0, so a wanted record says "a descriptor" with Pidfd 0
	// and never matches a negative value. Only for a descriptor: PidfdPid
	// is the "Pid:" line of its fdinfo (pidfs.c pidfd_show_fdinfo: -1 once
	// the process is gone, 0 outside this pid namespace) and PidfdThread
	// whether it is a thread pidfd (PIDFD_THREAD, which is O_EXCL, in its
	// F_GETFL flags). A descriptor whose fdinfo has no "Pid:" line is no
	// pidfd: a decoding error. Decode closes the descriptor after reading
	// it; DecodeKeepPidfds leaves it open.
	Pidfd       int32
	PidfdPid    int32
	PidfdThread bool
	// ERROR.
	Error      int32
	ErrorCount uint32
	// RANGE.
	Offset, Count uint64
	// MNT.
	MntID uint64
}

// String renders the record compactly for failure reports.
func (i Info) String() string {
	t := InfoTypeString(i.Type)
	switch i.Type {
	case unix.FAN_EVENT_INFO_TYPE_FID, unix.FAN_EVENT_INFO_TYPE_DFID:
		return fmt.Sprintf("%s{fsid=%x.%x handle=%d:%s}", t, uint32(i.Fsid[0]), uint32(i.Fsid[1]), i.HandleType, i.Handle)
	case unix.FAN_EVENT_INFO_TYPE_DFID_NAME, unix.FAN_EVENT_INFO_TYPE_OLD_DFID_NAME, unix.FAN_EVENT_INFO_TYPE_NEW_DFID_NAME:
		return fmt.Sprintf("%s{fsid=%x.%x handle=%d:%s name=%q}", t, uint32(i.Fsid[0]), uint32(i.Fsid[1]), i.HandleType, i.Handle, i.Name)
	case unix.FAN_EVENT_INFO_TYPE_PIDFD:
		if i.Pidfd < 0 {
			return fmt.Sprintf("%s{pidfd=%d %s}", t, i.Pidfd, pidfdValueName(i.Pidfd))
		}
		thread := ""
		if i.PidfdThread {
			thread = " PIDFD_THREAD"
		}
		return fmt.Sprintf("%s{descriptor, fdinfo Pid=%d%s}", t, i.PidfdPid, thread)
	case unix.FAN_EVENT_INFO_TYPE_ERROR:
		return fmt.Sprintf("%s{error=%d count=%d}", t, i.Error, i.ErrorCount)
	case unix.FAN_EVENT_INFO_TYPE_RANGE:
		return fmt.Sprintf("%s{offset=%d count=%d}", t, i.Offset, i.Count)
	case unix.FAN_EVENT_INFO_TYPE_MNT:
		return fmt.Sprintf("%s{mnt_id=%d}", t, i.MntID)
	}
	return t
}

// String renders the event on one line: mask, path, pid, info records.
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(e.Mask.String())
	if e.Path != "" {
		b.WriteString(" " + e.Path)
	}
	fmt.Fprintf(&b, " pid=%d", e.Pid)
	for _, i := range e.Info {
		b.WriteString(" " + i.String())
	}
	return b.String()
}

// pidfdValueName names a negative pidfd field: FAN_NOPIDFD and FAN_EPIDFD
// (include/uapi/linux/fanotify.h), or -errno from a FAN_REPORT_FD_ERROR
// group, where -1 is -EPERM and -2 -ENOENT.
func pidfdValueName(v int32) string {
	e := unix.ErrnoName(unix.Errno(-v))
	switch v {
	case unix.FAN_NOPIDFD:
		return "FAN_NOPIDFD or -" + e
	case unix.FAN_EPIDFD:
		return "FAN_EPIDFD or -" + e
	}
	if e == "" {
		return "?"
	}
	return "-" + e
}

// IsPermission reports whether the event waits for a response.
func (e Event) IsPermission() bool { return uint64(e.Mask)&PermissionEvents != 0 }

// ErrTimeout is returned by Read when the deadline passes with nothing to read.
var ErrTimeout = errors.New("no fanotify event before the deadline")

const readBufSize = 64 << 10

// Read waits until events are readable or the deadline passes, then returns the
// events of one read(2). It returns ErrTimeout when nothing arrived in time.
func (g *Group) Read(deadline time.Time) ([]Event, error) {
	return fdpoll.Read(g.fd, deadline, g.readOnce, ErrTimeout)
}

// Drain reads without blocking until the queue is empty (EAGAIN or nothing to
// poll) and returns everything read. Since fsnotify queues an event before the
// syscall that caused it returns, draining after the triggering call returned
// sees every event that call produced.
func (g *Group) Drain() ([]Event, error) {
	return fdpoll.Drain(g.fd, g.readOnce, unix.EAGAIN)
}

// Collect reads until the deadline passes and returns everything that arrived,
// for "nothing else arrives within d" checks.
func (g *Group) Collect(d time.Duration) ([]Event, error) {
	return fdpoll.Collect(d, g.Read, ErrTimeout)
}

// ReadN reads until n events have arrived or the deadline passes.
func (g *Group) ReadN(n int, deadline time.Time) ([]Event, error) {
	var all []Event
	for len(all) < n {
		evs, err := g.Read(deadline)
		if errors.Is(err, ErrTimeout) {
			return all, fmt.Errorf("got %d of %d events: %w", len(all), n, err)
		}
		all = append(all, evs...)
		if err != nil {
			return all, err
		}
	}
	return all, nil
}

func (g *Group) readOnce() ([]Event, error) {
	buf := make([]byte, readBufSize)
	n, err := unix.Read(g.fd, buf)
	if err != nil {
		return nil, fmt.Errorf("read fanotify group: %w", err)
	}
	evs, err := Decode(buf[:n])
	// Notification events' fds are ours to close; permission events' fds are
	// kept until the group closes so Respond can name them.
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range evs {
		e := &evs[i]
		if e.Fd < 0 {
			continue
		}
		if e.IsPermission() && !g.closed {
			g.heldFds[e.Fd] = true
			continue
		}
		unix.Close(int(e.Fd))
	}
	return evs, err
}

// metadata mirrors struct fanotify_event_metadata.
type metadata = unix.FanotifyEventMetadata

// Decode parses a buffer returned by read(2) on a fanotify fd. It fills Path,
// Dev and Ino from each event fd but does not close the fds; it reads and
// closes each pidfd of a PIDFD record.
func Decode(buf []byte) ([]Event, error) { return decode(buf, false) }

// DecodeKeepPidfds is Decode leaving every pidfd of a PIDFD record open
// (Info.Pidfd >= 0) for the caller, who must close it (and the event fds).
func DecodeKeepPidfds(buf []byte) ([]Event, error) { return decode(buf, true) }

func decode(buf []byte, keepPidfds bool) ([]Event, error) {
	var evs []Event
	for len(buf) > 0 {
		if len(buf) < int(unix.FAN_EVENT_METADATA_LEN) {
			return evs, fmt.Errorf("short fanotify event: %d bytes left", len(buf))
		}
		m := (*metadata)(unsafe.Pointer(&buf[0]))
		if m.Vers != unix.FANOTIFY_METADATA_VERSION {
			return evs, fmt.Errorf("fanotify metadata version %d, want %d", m.Vers, unix.FANOTIFY_METADATA_VERSION)
		}
		if int(m.Event_len) > len(buf) || m.Event_len < uint32(m.Metadata_len) {
			return evs, fmt.Errorf("bad fanotify event_len %d (buffer %d, metadata_len %d)", m.Event_len, len(buf), m.Metadata_len)
		}
		e := Event{Mask: Mask(m.Mask), Pid: m.Pid, Fd: m.Fd}
		if m.Fd >= 0 {
			e.Path, _ = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(m.Fd)))
			var st unix.Stat_t
			if unix.Fstat(int(m.Fd), &st) == nil {
				e.Dev, e.Ino = st.Dev, st.Ino
			}
		}
		info, err := decodeInfo(buf[m.Metadata_len:m.Event_len], keepPidfds)
		e.Info = info
		evs = append(evs, e)
		if err != nil {
			return evs, err
		}
		buf = buf[m.Event_len:]
	}
	return evs, nil
}

func decodeInfo(b []byte, keepPidfds bool) ([]Info, error) {
	var out []Info
	for len(b) > 0 {
		if len(b) < 4 {
			return out, fmt.Errorf("short info header: %d bytes", len(b))
		}
		typ, ln := b[0], int(ne16(b[2:]))
		if ln < 4 || ln > len(b) {
			return out, fmt.Errorf("bad info record length %d (type %s, %d left)", ln, InfoTypeString(typ), len(b))
		}
		rec, body := Info{Type: typ}, b[4:ln]
		switch typ {
		case unix.FAN_EVENT_INFO_TYPE_FID, unix.FAN_EVENT_INFO_TYPE_DFID, unix.FAN_EVENT_INFO_TYPE_DFID_NAME,
			unix.FAN_EVENT_INFO_TYPE_OLD_DFID_NAME, unix.FAN_EVENT_INFO_TYPE_NEW_DFID_NAME:
			if len(body) < 16 {
				return out, fmt.Errorf("short %s record", InfoTypeString(typ))
			}
			rec.Fsid = [2]int32{int32(ne32(body)), int32(ne32(body[4:]))}
			hb := int(ne32(body[8:]))
			rec.HandleType = int32(ne32(body[12:]))
			if 16+hb > len(body) {
				return out, fmt.Errorf("%s handle_bytes %d overruns record", InfoTypeString(typ), hb)
			}
			rec.Handle = fmt.Sprintf("%x", body[16:16+hb])
			if typ != unix.FAN_EVENT_INFO_TYPE_FID && typ != unix.FAN_EVENT_INFO_TYPE_DFID {
				name := body[16+hb:]
				if i := bytes.IndexByte(name, 0); i >= 0 {
					name = name[:i]
				}
				rec.Name = string(name)
			}
		case unix.FAN_EVENT_INFO_TYPE_PIDFD:
			if len(body) < 4 {
				return out, errors.New("short PIDFD record")
			}
			rec.Pidfd = int32(ne32(body))
			if rec.Pidfd >= 0 {
				var err error
				rec.PidfdPid, rec.PidfdThread, err = pidfdState(int(rec.Pidfd))
				if !keepPidfds || err != nil {
					unix.Close(int(rec.Pidfd))
				}
				if err != nil {
					return out, fmt.Errorf("PIDFD record: descriptor %d: %w", rec.Pidfd, err)
				}
			}
		case unix.FAN_EVENT_INFO_TYPE_ERROR:
			if len(body) < 8 {
				return out, errors.New("short ERROR record")
			}
			rec.Error, rec.ErrorCount = int32(ne32(body)), ne32(body[4:])
		case unix.FAN_EVENT_INFO_TYPE_RANGE:
			if len(body) < 20 {
				return out, errors.New("short RANGE record")
			}
			rec.Offset, rec.Count = ne64(body[4:]), ne64(body[12:])
		case unix.FAN_EVENT_INFO_TYPE_MNT:
			// struct fanotify_event_info_mnt is the 4-byte header then a
			// __u64, which the C ABI aligns: 4 bytes of padding on 64-bit
			// (a 16-byte record), none where __u64 is 4-aligned (12 bytes).
			// The id is the record's last 8 bytes either way.
			if len(body) < 8 {
				return out, errors.New("short MNT record")
			}
			rec.MntID = ne64(body[len(body)-8:])
		}
		out = append(out, rec)
		b = b[ln:]
	}
	return out, nil
}

// pidfdState reads what a pidfd refers to: the "Pid:" line of its fdinfo
// (-1 if the process is gone) and whether F_GETFL shows PIDFD_THREAD.
func pidfdState(fd int) (pid int32, thread bool, err error) {
	data, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0, false, err
	}
	found := false
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "Pid:"); ok {
			p, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return 0, false, fmt.Errorf("fdinfo Pid line %q: %w", l, err)
			}
			pid, found = int32(p), true
			break
		}
	}
	if !found {
		return 0, false, fmt.Errorf("not a pidfd: its fdinfo has no Pid: line: %q", data)
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return 0, false, fmt.Errorf("F_GETFL: %w", err)
	}
	// include/uapi/linux/pidfd.h: PIDFD_THREAD is O_EXCL; pidfs_dentry_open
	// keeps it in f_flags, which F_GETFL returns.
	return pid, fl&unix.O_EXCL != 0, nil
}

// Response values for Respond.
const (
	Allow = unix.FAN_ALLOW
	Deny  = unix.FAN_DENY
)

// DenyErrno builds a FAN_DENY response carrying errno (FAN_DENY_ERRNO, Linux 6.14).
func DenyErrno(errno unix.Errno) uint32 {
	return unix.FAN_DENY | uint32(errno)<<unix.FAN_ERRNO_SHIFT
}

// Respond writes a struct fanotify_response for the permission event whose fd is fd.
func (g *Group) Respond(fd int32, response uint32) error {
	r := unix.FanotifyResponse{Fd: fd, Response: response}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&r)), unsafe.Sizeof(r))
	return g.WriteRaw(b)
}

// WriteRaw writes b to the group fd as is, for response-validation tests.
func (g *Group) WriteRaw(b []byte) error {
	n, err := unix.Write(g.fd, b)
	if err != nil {
		return fmt.Errorf("write fanotify response: %w", err)
	}
	if n != len(b) {
		return fmt.Errorf("write fanotify response: wrote %d of %d bytes", n, len(b))
	}
	return nil
}

// CloseEventFds closes the event fds of events read by hand (read(2) and
// Decode, not through a Group, which keeps track of its own); a pidfd that
// Decode left in a record is Decode's to close, not this.
func CloseEventFds(evs []Event) {
	for _, e := range evs {
		if e.Fd >= 0 {
			unix.Close(int(e.Fd))
		}
	}
}

// ReleaseFd closes a permission event's fd held by the group (after answering it).
func (g *Group) ReleaseFd(fd int32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.heldFds[fd] {
		delete(g.heldFds, fd)
		unix.Close(int(fd))
	}
}

// Answer responds with response to every permission event in evs and closes
// its fd; other events are left alone. It answers them all even when one
// response fails, and returns the first error.
func (g *Group) Answer(evs []Event, response uint32) error {
	var first error
	for _, e := range evs {
		if !e.IsPermission() {
			continue
		}
		if err := g.Respond(e.Fd, response); err != nil && first == nil {
			first = fmt.Errorf("answer %s: %w", e, err)
		}
		g.ReleaseFd(e.Fd)
	}
	return first
}

// ne16, ne32 and ne64 read integers in the host's byte order, which is how
// the kernel writes fanotify records.
func ne16(b []byte) uint16 { return binary.NativeEndian.Uint16(b) }
func ne32(b []byte) uint32 { return binary.NativeEndian.Uint32(b) }
func ne64(b []byte) uint64 { return binary.NativeEndian.Uint64(b) }
