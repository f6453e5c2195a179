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
	return wrap(call, err, unix.EMFILE, "fs.fanotify.max_user_groups", "one more fanotify group (EMFILE can also be RLIMIT_NOFILE)")
}

// FanotifyMark names max_user_marks behind fanotify_mark's ENOSPC.
func FanotifyMark(call string, err error) error {
	return wrap(call, err, unix.ENOSPC, "fs.fanotify.max_user_marks", "one more mark")
}

// InotifyInit names max_user_instances behind inotify_init1's EMFILE.
func InotifyInit(call string, err error) error {
	return wrap(call, err, unix.EMFILE, "fs.inotify.max_user_instances", "one more inotify instance (EMFILE can also be RLIMIT_NOFILE)")
}

// InotifyWatch names max_user_watches behind inotify_add_watch's ENOSPC.
func InotifyWatch(call string, err error) error {
	return wrap(call, err, unix.ENOSPC, "fs.inotify.max_user_watches", "one more watch")
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
