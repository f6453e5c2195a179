package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// roleChild is the reexec role of the child process; its arguments are the
// limit's name (a key of limits), a directory with enough files to mark, and
// the limit to set in the child namespace.
const roleChild = "limits_child"

// limit is one per-user limit: the child namespace's sysctl and how to make
// one more object that counts against it.
type limit struct {
	sysctl string // under /proc/sys/user/
	errno  unix.Errno
	// open returns a maker of the i-th object and a way to release the
	// first one; it sets up what every object shares (an instance, a
	// group).
	open func(dir string) (make func(i int) error, releaseFirst func() error, err error)
	// extendFirst, where set, adds to the first object without making a new
	// one (more events on an existing watch or mark), which must succeed at
	// the limit.
	extendFirst func(dir string) error
}

var limits = map[string]limit{
	// inotify_new_group (fs/notify/inotify/inotify_user.c): inc_ucount
	// UCOUNT_INOTIFY_INSTANCES fails -> -EMFILE; inotify_init1(2) EMFILE
	// "The user limit on the total number of inotify instances has been
	// reached".
	"inotify_instances": {sysctl: "max_inotify_instances", errno: unix.EMFILE, open: func(string) (func(int) error, func() error, error) {
		var fds []int
		mk := func(int) error {
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err == nil {
				fds = append(fds, fd)
			}
			return err
		}
		return mk, func() error { return unix.Close(fds[0]) }, nil
	}},
	// inotify_new_watch: inc_inotify_watches fails -> -ENOSPC;
	// inotify_add_watch(2) ENOSPC "The user limit on the total number of
	// inotify watches was reached".
	"inotify_watches": {sysctl: "max_inotify_watches", errno: unix.ENOSPC, open: func(dir string) (func(int) error, func() error, error) {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			return nil, nil, fmt.Errorf("inotify_init1: %w", err)
		}
		childFd = fd
		var first int
		mk := func(i int) error {
			wd, err := unix.InotifyAddWatch(fd, filepath.Join(dir, strconv.Itoa(i)), unix.IN_OPEN)
			if i == 0 {
				first = wd
			}
			return err
		}
		return mk, func() error { _, err := unix.InotifyRmWatch(fd, uint32(first)); return err }, nil
	},
		// inotify_add_watch(2) IN_MASK_ADD on a watched inode updates that
		// watch (inotify_update_existing_watch): no new watch is counted.
		extendFirst: func(dir string) error {
			_, err := unix.InotifyAddWatch(childFd, filepath.Join(dir, "0"), unix.IN_ATTRIB|unix.IN_MASK_ADD)
			return err
		}},
	// The watch limit again, each watch in its own instance, released by
	// closing that instance: inotify(7) "When all file descriptors referring
	// to an inotify instance have been closed ... all associated watches are
	// automatically freed" (inotify_release -> fsnotify_destroy_group ->
	// dec_inotify_watches for each).
	"inotify_watches_close": {sysctl: "max_inotify_watches", errno: unix.ENOSPC, open: func(dir string) (func(int) error, func() error, error) {
		var fds []int
		mk := func(i int) error {
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err != nil {
				return fmt.Errorf("inotify_init1: %w", err)
			}
			if _, err := unix.InotifyAddWatch(fd, filepath.Join(dir, strconv.Itoa(i)), unix.IN_OPEN); err != nil {
				unix.Close(fd)
				return err
			}
			fds = append(fds, fd)
			return nil
		}
		return mk, func() error { return unix.Close(fds[0]) }, nil
	}},
	// fanotify_init: inc_ucount UCOUNT_FANOTIFY_GROUPS fails -> -EMFILE;
	// fanotify_init(2) EMFILE "The number of fanotify groups for this user
	// exceeds the limit". Without CAP_SYS_ADMIN in the initial namespace a
	// group must report FIDs (fanotify_init(2), since 5.13).
	"fanotify_groups": {sysctl: "max_fanotify_groups", errno: unix.EMFILE, open: func(string) (func(int) error, func() error, error) {
		var fds []int
		mk := func(int) error {
			fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID|unix.FAN_CLOEXEC, unix.O_RDONLY)
			if err == nil {
				fds = append(fds, fd)
			}
			return err
		}
		return mk, func() error { return unix.Close(fds[0]) }, nil
	}},
	// fanotify_add_new_mark: inc_ucount UCOUNT_FANOTIFY_MARKS fails ->
	// -ENOSPC; fanotify_mark(2) ENOSPC "The number of marks for this user
	// exceeds the limit".
	"fanotify_marks": {sysctl: "max_fanotify_marks", errno: unix.ENOSPC, open: func(dir string) (func(int) error, func() error, error) {
		fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID|unix.FAN_CLOEXEC, unix.O_RDONLY)
		if err != nil {
			return nil, nil, fmt.Errorf("fanotify_init(FAN_REPORT_FID): %w", err)
		}
		childFd = fd
		mk := func(i int) error {
			return unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_OPEN, unix.AT_FDCWD, filepath.Join(dir, strconv.Itoa(i)))
		}
		return mk, func() error {
			return unix.FanotifyMark(fd, unix.FAN_MARK_REMOVE, unix.FAN_OPEN|unix.FAN_CLOSE_NOWRITE, unix.AT_FDCWD, filepath.Join(dir, "0"))
		}, nil
	},
		// FAN_MARK_ADD on an object the group already marks adds to that
		// mark's mask (fanotify_add_mark finds it; only
		// fanotify_add_new_mark counts a mark).
		extendFirst: func(dir string) error {
			return unix.FanotifyMark(childFd, unix.FAN_MARK_ADD, unix.FAN_CLOSE_NOWRITE, unix.AT_FDCWD, filepath.Join(dir, "0"))
		}},
}

// childFd is the instance or group the child's watches or marks belong to.
var childFd int

// childReport is what the child prints as JSON on stdout.
type childReport struct {
	// Made is how many objects were made before the first failure.
	Made int
	// Errno names the failure's errno ("" if none within Limit+1 tries).
	Errno string
	// Extended is "" when the first object could be extended at the limit
	// (or the limit has no such step), else the error.
	Extended string
	// Reused is "" when one more object could be made after releasing the
	// first, else the error.
	Reused string
	// Setup is a setup error; the other fields are then meaningless.
	Setup string
	// SysctlDenied: Setup is the limit's write refused (EACCES or EPERM:
	// the child lacks CAP_SYS_RESOURCE in its namespace, kernel/ucount.c
	// set_permissions), as under an LSM that strips the capabilities of a
	// namespace an unprivileged user created.
	SysctlDenied bool `json:",omitempty"`
}

// runChild runs in the new user namespace: it sets the namespace's limit,
// makes objects until one fails, releases the first and makes one more, and
// prints a childReport.
func runChild(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "limits child: want limit, directory, count")
		return 2
	}
	rep := childRun(args[0], args[1], args[2])
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}

func childRun(kind, dir, limit string) (rep childReport) {
	l, ok := limits[kind]
	if !ok {
		rep.Setup = "unknown limit " + kind
		return rep
	}
	n, err := strconv.Atoi(limit)
	if err != nil {
		rep.Setup = "bad limit " + limit
		return rep
	}
	path := "/proc/sys/user/" + l.sysctl
	if err := os.WriteFile(path, []byte(strconv.Itoa(n)), 0o644); err != nil {
		rep.Setup = fmt.Sprintf("write %s in the child user namespace: %v", path, err)
		rep.SysctlDenied = errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
		return rep
	}
	if b, err := os.ReadFile(path); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(n) {
		rep.Setup = fmt.Sprintf("%s reads back %q (%v), want %d", path, b, err, n)
		return rep
	}
	mk, releaseFirst, err := l.open(dir)
	if err != nil {
		rep.Setup = err.Error()
		return rep
	}
	for i := 0; i <= n; i++ {
		err := mk(i)
		if err != nil {
			rep.Errno = errnoName(err)
			break
		}
		rep.Made++
	}
	if rep.Errno == "" {
		return rep
	}
	if l.extendFirst != nil {
		if err := l.extendFirst(dir); err != nil {
			rep.Extended = err.Error()
		}
	}
	if err := releaseFirst(); err != nil {
		rep.Reused = "releasing the first: " + err.Error()
		return rep
	}
	if err := mk(n + 1); err != nil {
		rep.Reused = err.Error()
	}
	return rep
}
