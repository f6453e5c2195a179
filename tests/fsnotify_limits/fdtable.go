package main

import (
	"encoding/json"
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	userlimits "github.com/fsnsuite/fsnsuite/harness/limits"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
)

// roleFdTable is the reexec role of the fd_table_full child.
const roleFdTable = "limits_fdtable"

// fdTableReport is what the fd_table_full child prints (JSON).
type fdTableReport struct {
	Setup  string // non-empty: the child could not set up, and why
	Lowest int    // the lowest free descriptor, made the RLIMIT_NOFILE soft limit
	// ControlInotify, ControlFanotify: inotify_init1's and fanotify_init's
	// errno names ("" success) just before the limit is lowered, each
	// closed at once: a group could be made then, so an EMFILE at the limit
	// is not max_user_instances/max_user_groups.
	ControlInotify  string
	ControlFanotify string
	Inotify         string // inotify_init1's errno name at the limit ("" success)
	Fanotify        string // fanotify_init's errno name at the limit ("" success)
	After           string // inotify_init1 and fanotify_init once the limit is restored
}

// errnoName names err's errno, or its text; "" for nil.
func errnoName(err error) string {
	var e unix.Errno
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return unix.ErrnoName(e)
	}
	return err.Error()
}

// runFdTableChild lowers its own RLIMIT_NOFILE soft limit to its lowest free
// descriptor, so that no descriptor can be allocated, tries both inits, and
// restores the limit. It runs in a child because the limit is per process.
func runFdTableChild() int {
	var rep fdTableReport
	func() {
		var old unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
			rep.Setup = "getrlimit: " + err.Error()
			return
		}
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			rep.Setup = "open /dev/null: " + err.Error()
			return
		}
		unix.Close(fd)
		rep.Lowest = fd
		cifd, cierr := unix.InotifyInit1(unix.IN_CLOEXEC)
		cffd, cferr := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
		for _, fd := range []int{cifd, cffd} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
		rep.ControlInotify, rep.ControlFanotify = errnoName(cierr), errnoName(cferr)
		if cierr != nil || cferr != nil {
			return
		}
		low := unix.Rlimit{Cur: uint64(fd), Max: old.Max}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
			rep.Setup = "setrlimit: " + err.Error()
			return
		}
		ifd, ierr := unix.InotifyInit1(unix.IN_CLOEXEC)
		ffd, ferr := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
			rep.Setup = "restoring RLIMIT_NOFILE: " + err.Error()
			return
		}
		for _, fd := range []int{ifd, ffd} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
		rep.Inotify, rep.Fanotify = errnoName(ierr), errnoName(ferr)
		ifd, ierr = unix.InotifyInit1(unix.IN_CLOEXEC)
		ffd, ferr = unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
		if ierr != nil || ferr != nil {
			rep.After = "inotify_init1: " + errnoName(ierr) + ", fanotify_init: " + errnoName(ferr)
		}
		unix.Close(ifd)
		unix.Close(ffd)
	}()
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}

// fdTableFull: getrlimit(2) RLIMIT_NOFILE "a value one greater than the
// maximum file descriptor number that can be opened by this process.
// Attempts ... to exceed this limit yield the error EMFILE"; inotify_init(2)
// and fanotify_init(2) EMFILE "The per-process limit on the number of open
// file descriptors has been reached". Both make their group first and only
// then ask for the descriptor (anon_inode_getfd in do_inotify_init,
// fs/notify/inotify/inotify_user.c, and in fanotify_init,
// fs/notify/fanotify/fanotify_user.c), destroying the group when that fails;
// once the limit is back, both succeed again.
func fdTableFull(t *harness.T) {
	cmd := reexec.Command(roleFdTable, "")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var rep fdTableReport
	if err := reexec.RunReport(cmd, &rep); err != nil {
		t.Fatalf("child: %v", err)
	}
	if rep.Setup != "" {
		t.Fatalf("child: %s", rep.Setup)
	}
	// The control: both inits worked just before the limit was lowered, so
	// the per-user limits (inc_ucount, also EMFILE) had room then. A limit
	// reached by other suites is a skip naming it (harness/limits).
	for _, c := range []struct {
		call, errno string
		wrap        func(string, error) error
	}{
		{"inotify_init1(IN_CLOEXEC)", rep.ControlInotify, userlimits.InotifyInit},
		{"fanotify_init(FAN_CLASS_NOTIF)", rep.ControlFanotify, userlimits.FanotifyInit},
	} {
		if c.errno == "" {
			continue
		}
		if c.errno == "EMFILE" {
			t.Skipf("%v", c.wrap("control "+c.call+" before lowering RLIMIT_NOFILE", unix.EMFILE))
		}
		t.Fatalf("child: control %s before lowering RLIMIT_NOFILE: %s, want success", c.call, c.errno)
	}
	did := "child with RLIMIT_NOFILE lowered to its lowest free descriptor, right after a control inotify_init1 and fanotify_init succeeded"
	if rep.Inotify != "EMFILE" {
		t.Errorf("%s (%d): inotify_init1: %q, want EMFILE", did, rep.Lowest, rep.Inotify)
	}
	if rep.Fanotify != "EMFILE" {
		t.Errorf("%s (%d): fanotify_init: %q, want EMFILE", did, rep.Lowest, rep.Fanotify)
	}
	if rep.After != "" {
		t.Errorf("%s, then restored: %s, want both to succeed", did, rep.After)
	}
}
