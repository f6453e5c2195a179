// Package limits names the sysctl behind an errno that means "a per-user
// limit was reached" rather than anything about fsnotify's semantics, so a
// message says which limit, its value, and what the call needed:
//
//	fanotify_init   EMFILE  fs.fanotify.max_user_groups    (fanotify_init(2))
//	fanotify_mark   ENOSPC  fs.fanotify.max_user_marks     (fanotify_mark(2))
//	inotify_init1   EMFILE  fs.inotify.max_user_instances  (inotify_init(2))
//	inotify_add_watch ENOSPC fs.inotify.max_user_watches   (inotify_add_watch(2))
//	queue overflow          fs.{fanotify,inotify}.max_queued_events
//
// The harness turns a case stopped by such an error into a skip carrying this
// message (the machine's configuration or another suite's use refused the
// case, not the kernel's fsnotify code): see harness/README.md, "Limits".
package limits

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Error is a call refused because a per-user limit was reached.
type Error struct {
	Call   string // "fanotify_init(FAN_CLASS_NOTIF, 0x0)"
	Sysctl string // dotted name
	Value  string // its value when the call failed
	Need   string // what the call needed: "one more group"
	Err    error  // the errno-wrapping error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s: limit %s=%s reached; this case needed %s (raise it, or run fewer suites at once)",
		e.Call, unix.ErrnoName(errnoOf(e.Err)), e.Sysctl, e.Value, e.Need)
}

func (e *Error) Unwrap() error { return e.Err }

func errnoOf(err error) unix.Errno {
	var n unix.Errno
	errors.As(err, &n)
	return n
}

// Value reads a sysctl by its dotted name ("?" when unreadable).
func Value(name string) string {
	b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

func wrap(call string, err error, errno unix.Errno, sysctl, need string) error {
	if err == nil || !errors.Is(err, errno) {
		return err
	}
	return &Error{Call: call, Sysctl: sysctl, Value: Value(sysctl), Need: need, Err: err}
}

// FanotifyInit names max_user_groups behind fanotify_init's EMFILE.
func FanotifyInit(call string, err error) error {
	return confirmed(call, err, unix.EMFILE, "fs.fanotify.max_user_groups", "one more fanotify group (EMFILE can also be RLIMIT_NOFILE)", "fanotify group")
}

// FanotifyMark names max_user_marks behind fanotify_mark's ENOSPC.
func FanotifyMark(call string, err error) error {
	return confirmed(call, err, unix.ENOSPC, "fs.fanotify.max_user_marks", "one more mark", "fanotify mark")
}

// InotifyInit names max_user_instances behind inotify_init1's EMFILE.
func InotifyInit(call string, err error) error {
	return confirmed(call, err, unix.EMFILE, "fs.inotify.max_user_instances", "one more inotify instance (EMFILE can also be RLIMIT_NOFILE)", "inotify instance")
}

// InotifyWatch names max_user_watches behind inotify_add_watch's ENOSPC.
func InotifyWatch(call string, err error) error {
	return confirmed(call, err, unix.ENOSPC, "fs.inotify.max_user_watches", "one more watch", "inotify watch")
}

// confirmed is wrap for an errno that a kernel bug could also return: the
// limit is named only when a fresh object of the same kind is refused the
// same way now (probe reports the errno it met). When the probe succeeds,
// the limit was not reached and the errno is the kernel's answer to the
// call itself: it is returned bare, so a case expecting another errno
// fails on it instead of skipping for a limit. A probe that cannot tell
// (another errno) keeps the limit's reading.
func confirmed(call string, err error, errno unix.Errno, sysctl, need, kind string) error {
	if err == nil || !errors.Is(err, errno) {
		return err
	}
	if got := probe(kind); got == 0 {
		return fmt.Errorf("%w (not a per-user limit: a fresh %s was made at once; %s=%s)", err, kind, sysctl, Value(sysctl))
	}
	return wrap(call, err, errno, sysctl, need)
}

// probe makes one object of kind and returns the errno that refused it (0:
// made, and released again). Tests replace it.
var probe = func(kind string) unix.Errno {
	switch kind {
	case "fanotify group":
		return probeFanotifyInit()
	case "fanotify mark":
		return probeFanotifyMark()
	case "inotify instance":
		return probeInotifyInit()
	default:
		return probeInotifyWatch()
	}
}

// errnoOrZero is the errno of err, 0 for nil, EIO for an error without one.
func errnoOrZero(err error) unix.Errno {
	if err == nil {
		return 0
	}
	if n := errnoOf(err); n != 0 {
		return n
	}
	return unix.EIO
}

func probeInotifyInit() unix.Errno {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err == nil {
		unix.Close(fd)
	}
	return errnoOrZero(err)
}

func probeInotifyWatch() unix.Errno {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return errnoOrZero(err)
	}
	defer unix.Close(fd)
	_, err = unix.InotifyAddWatch(fd, "/", unix.IN_DELETE_SELF)
	return errnoOrZero(err)
}

func probeFanotifyInit() unix.Errno {
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
	if err == nil {
		unix.Close(fd)
	}
	return errnoOrZero(err)
}

func probeFanotifyMark() unix.Errno {
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
	if err != nil {
		return errnoOrZero(err)
	}
	defer unix.Close(fd)
	return errnoOrZero(unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_CLOSE_WRITE, unix.AT_FDCWD, "/"))
}

// Overflow is the sentence for a queue overflow event (FAN_Q_OVERFLOW,
// IN_Q_OVERFLOW) a case did not provoke: api is "fanotify" or "inotify".
func Overflow(api string, read int) string {
	name := "fs." + api + ".max_queued_events"
	return fmt.Sprintf("the event queue overflowed: limit %s=%s reached (%d events read)", name, Value(name), read)
}

// As returns the limit behind err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
