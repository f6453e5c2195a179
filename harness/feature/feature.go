// Package feature probes the running kernel for fsnotify features, once per
// process. A probe's answer is one of: supported (nil), *Unsupported (the
// kernel rejects the flag or call: EINVAL, ENOSYS, EOPNOTSUPP), *Unprivileged
// (EPERM, EACCES: container, lockdown, LSM, missing capability), or any other
// error (the probe broke: a failure, never a skip). A feature reported
// unsupported on a kernel at or above its minimum version is also an error:
// the kernel should have it, so a skip would hide a regression.
package feature

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Feature is one probe-able kernel capability.
type Feature struct {
	// Name is what a skip reason calls it, e.g. "FAN_MARK_IGNORE".
	Name string
	// MinKernel is the first mainline release that has it ("6.0"), or "" when
	// availability depends on configuration rather than version.
	MinKernel string
	// Probe returns nil when supported, or the errno-wrapping error of the
	// call that proves otherwise.
	Probe func() error

	once sync.Once
	err  error
}

// New declares a feature; tests may declare their own besides the ones here.
func New(name, minKernel string, probe func() error) *Feature {
	return &Feature{Name: name, MinKernel: minKernel, Probe: probe}
}

// Unsupported means the kernel does not have the feature.
type Unsupported struct {
	Feature *Feature
	Err     error
}

func (e *Unsupported) Error() string {
	s := fmt.Sprintf("%s not supported (%s", e.Feature.Name, errnoName(e.Err))
	if e.Feature.MinKernel != "" {
		s += "; needs >= " + e.Feature.MinKernel
	}
	return s + ")"
}

func (e *Unsupported) Unwrap() error { return e.Err }

// Unprivileged means the kernel refused the probe for lack of privilege.
type Unprivileged struct {
	Feature *Feature
	Err     error
}

func (e *Unprivileged) Error() string {
	return fmt.Sprintf("%s: %s (needs CAP_SYS_ADMIN in the initial user namespace; run as real root)", e.Feature.Name, errnoName(e.Err))
}

func (e *Unprivileged) Unwrap() error { return e.Err }

// IsSkip reports whether err is an answer that should turn into a skip.
func IsSkip(err error) bool {
	var u *Unsupported
	var p *Unprivileged
	return errors.As(err, &u) || errors.As(err, &p)
}

// Check runs the probe the first time and returns its cached classification.
func (f *Feature) Check() error {
	f.once.Do(func() { f.err = f.classify(f.Probe()) })
	return f.err
}

func (f *Feature) classify(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		if f.MinKernel != "" && KernelAtLeast(f.MinKernel) {
			return fmt.Errorf("%s rejected (%s) on kernel %s, which is >= %s where it was merged: %w",
				f.Name, errnoName(err), KernelRelease(), f.MinKernel, err)
		}
		return &Unsupported{Feature: f, Err: err}
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return &Unprivileged{Feature: f, Err: err}
	}
	return fmt.Errorf("probe of %s failed: %w", f.Name, err)
}

// ClassifyErr applies a feature's rules to an error met outside its probe (for
// example an EPERM from the real fanotify_init of a test).
func (f *Feature) ClassifyErr(err error) error { return f.classify(err) }

func errnoName(err error) string {
	var e unix.Errno
	if errors.As(err, &e) {
		if n := unix.ErrnoName(e); n != "" {
			return n
		}
		return fmt.Sprintf("errno %d", int(e))
	}
	return err.Error()
}

// ErrnoName returns the symbolic name of err's errno ("EPERM"), or err's text.
func ErrnoName(err error) string { return errnoName(err) }

var (
	releaseOnce sync.Once
	release     string
	version     [3]int
)

// KernelRelease returns uname -r.
func KernelRelease() string {
	loadRelease()
	return release
}

func loadRelease() {
	releaseOnce.Do(func() {
		var u unix.Utsname
		if unix.Uname(&u) == nil {
			release = unix.ByteSliceToString(u.Release[:])
		}
		version = parseVersion(release)
	})
}

func parseVersion(s string) [3]int {
	var v [3]int
	s, _, _ = strings.Cut(s, "-")
	for i, p := range strings.SplitN(s, ".", 3) {
		n := 0
		for _, c := range p {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		v[i] = n
	}
	return v
}

// KernelAtLeast reports whether the running kernel's version is >= min ("5.19").
func KernelAtLeast(min string) bool {
	loadRelease()
	want := parseVersion(min)
	for i := range version {
		if version[i] != want[i] {
			return version[i] > want[i]
		}
	}
	return true
}

// probeDir is where probes place marks: the private workspace when the harness
// has set one up (FSNSUITE_WORKSPACE), else the temp directory.
func probeDir() string {
	if d := os.Getenv("FSNSUITE_WORKSPACE"); d != "" {
		return d
	}
	return os.TempDir()
}

func withGroup(flags uint, fn func(fd int) error) error {
	fd, err := unix.FanotifyInit(flags|unix.FAN_CLOEXEC, unix.O_RDONLY)
	if err != nil {
		return fmt.Errorf("fanotify_init: %w", err)
	}
	defer unix.Close(fd)
	if fn == nil {
		return nil
	}
	return fn(fd)
}

func markProbe(initFlags, markFlags uint, mask uint64) func() error {
	return func() error {
		return withGroup(initFlags, func(fd int) error {
			if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD|markFlags, mask, unix.AT_FDCWD, probeDir()); err != nil {
				return fmt.Errorf("fanotify_mark: %w", err)
			}
			return nil
		})
	}
}

func initProbe(flags uint) func() error { return func() error { return withGroup(flags, nil) } }

// The features the suite uses. Versions are the mainline releases that merged them.
var (
	Inotify = New("inotify", "", func() error {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			return fmt.Errorf("inotify_init1: %w", err)
		}
		return unix.Close(fd)
	})
	Fanotify     = New("fanotify", "", initProbe(unix.FAN_CLASS_NOTIF))
	FanotifyPerm = New("fanotify permission events (FAN_CLASS_CONTENT, FAN_OPEN_PERM)", "",
		markProbe(unix.FAN_CLASS_CONTENT, 0, unix.FAN_OPEN_PERM))
	OpenExec        = New("FAN_OPEN_EXEC", "5.0", markProbe(unix.FAN_CLASS_NOTIF, 0, unix.FAN_OPEN_EXEC))
	OpenExecPerm    = New("FAN_OPEN_EXEC_PERM", "5.0", markProbe(unix.FAN_CLASS_CONTENT, 0, unix.FAN_OPEN_EXEC_PERM))
	MarkFilesystem  = New("FAN_MARK_FILESYSTEM", "4.20", markProbe(unix.FAN_CLASS_NOTIF, unix.FAN_MARK_FILESYSTEM, unix.FAN_OPEN))
	ReportFID       = New("FAN_REPORT_FID", "5.1", initProbe(unix.FAN_REPORT_FID))
	ReportDFIDName  = New("FAN_REPORT_DFID_NAME", "5.9", initProbe(unix.FAN_REPORT_DFID_NAME))
	ReportTargetFID = New("FAN_REPORT_TARGET_FID", "5.17", initProbe(unix.FAN_REPORT_DFID_NAME_TARGET))
	ReportPidfd     = New("FAN_REPORT_PIDFD", "5.15", initProbe(unix.FAN_REPORT_PIDFD))
	ReportMnt       = New("FAN_REPORT_MNT", "6.14", initProbe(unix.FAN_REPORT_MNT))
	RenameEvent     = New("FAN_RENAME", "5.17", markProbe(unix.FAN_REPORT_DFID_NAME, 0, unix.FAN_RENAME))
	MarkEvictable   = New("FAN_MARK_EVICTABLE", "5.19", markProbe(unix.FAN_CLASS_NOTIF, unix.FAN_MARK_EVICTABLE, unix.FAN_OPEN))
	// FAN_MARK_IGNORE on a directory needs FAN_MARK_IGNORED_SURV_MODIFY, or EISDIR.
	MarkIgnore = New("FAN_MARK_IGNORE", "6.0",
		markProbe(unix.FAN_CLASS_NOTIF, unix.FAN_MARK_IGNORE|unix.FAN_MARK_IGNORED_SURV_MODIFY, unix.FAN_OPEN))
	EnableAudit = New("FAN_ENABLE_AUDIT", "4.15", initProbe(unix.FAN_CLASS_CONTENT|unix.FAN_ENABLE_AUDIT))
	// PreContent: the pre-content events (FAN_PRE_ACCESS) and FAN_DENY_ERRNO
	// responses, both 6.14. Removing a FAN_PRE_ACCESS mark that does not exist
	// answers ENOENT from a kernel that knows the event and EINVAL from one
	// that does not, whatever the filesystem: whether a filesystem allows
	// pre-content marks (SB_I_ALLOW_HSM) is a separate question.
	PreContent = New("pre-content events and FAN_DENY_ERRNO (FAN_PRE_ACCESS)", "6.14", func() error {
		return withGroup(unix.FAN_CLASS_PRE_CONTENT, func(fd int) error {
			err := unix.FanotifyMark(fd, unix.FAN_MARK_REMOVE, unix.FAN_PRE_ACCESS, unix.AT_FDCWD, "/")
			switch {
			case errors.Is(err, unix.ENOENT):
				return nil
			case err == nil:
				return errors.New("fanotify_mark(FAN_MARK_REMOVE, FAN_PRE_ACCESS) of a mark that does not exist succeeded")
			}
			return fmt.Errorf("fanotify_mark(FAN_MARK_REMOVE, FAN_PRE_ACCESS): %w", err)
		})
	})
)
