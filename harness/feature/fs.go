package feature

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/internal/caps"
	"github.com/fsnsuite/fsnsuite/harness/limits"
)

// fidSince is the release from which a filesystem type can report file
// handles to fanotify; a refusal at or above it is a regression (a failure),
// below it a skip. A backport shows in the probe, never in this table: the
// table only decides what an absence means.
//   - ext4, xfs, btrfs: since FAN_REPORT_FID itself (5.1).
//   - tmpfs: 59cda49ecf6c ("shmem: allow reporting fanotify events with file
//     handles on tmpfs", 5.13) gave it an f_fsid; before, fanotify_test_fsid
//     answers ENODEV for its zero fsid.
//   - overlay: 6.6 (16aac5ad1fa9, "ovl: support encoding non-decodable file
//     handles"); before, EOPNOTSUPP (or ENODEV) without nfs_export.
var fidSince = map[string]string{"ext4": "5.1", "xfs": "5.1", "btrfs": "5.1", "tmpfs": "5.13", "overlay": "6.6"}

// FIDOn is "a FAN_REPORT_FID group can mark filesystem typ, mounted at dir"
// (the filesystem under test: the answer differs per filesystem, and a probe
// on /tmp says nothing about ext4 or overlay). fanotify_mark(2) refuses a
// filesystem that cannot identify objects by file handle: ENODEV when it has
// no fsid (fanotify_test_fsid: "a filesystem with zero fsid"), EXDEV when
// the marked object's fsid is not its superblock root's (a btrfs
// subvolume), EOPNOTSUPP when it cannot encode file handles
// (fanotify_test_fid). The probe places an inode mark on dir: it answers
// for inode marks (since 6.8 a weak fsid is enough for an inode mark, and
// handles must decode only for filesystem and mount marks, which a case
// judges by its own call). Cached per (type, dir): a binary mounts each
// type once.
func FIDOn(typ, dir string) *Feature {
	fidOnMu.Lock()
	defer fidOnMu.Unlock()
	key := typ + "\x00" + dir
	if f, ok := fidOn[key]; ok {
		return f
	}
	f := &Feature{
		Name: "FID reporting on " + typ + " (fsid and file handles)", Kind: Release, MinKernel: fidSince[typ],
		Privilege: capSysAdmin, Requires: []*Feature{ReportFID},
		// fanotify_mark(2): ENODEV "not associated with a filesystem that
		// supports fsid", EOPNOTSUPP "does not support the encoding of
		// file handles", EXDEV "resides within a filesystem subvolume".
		Absent: []unix.Errno{unix.ENODEV, unix.EXDEV, unix.EOPNOTSUPP},
		Explain: func(err error) string {
			switch {
			case errors.Is(err, unix.ENODEV):
				return typ + " reports no f_fsid on this kernel (fanotify_test_fsid)"
			case errors.Is(err, unix.EXDEV):
				return "the marked " + typ + " directory's fsid is not its filesystem's (fanotify_test_fsid)"
			}
			return typ + " cannot encode file handles for fanotify on this kernel (fanotify_test_fid)"
		},
		Probe: func() error {
			return withGroup(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, func(fd int) error {
				if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_OPEN, unix.AT_FDCWD, dir); err != nil {
					return limits.FanotifyMark("fanotify_mark", fmt.Errorf("fanotify_mark(FAN_REPORT_FID group, %s): %w", dir, err))
				}
				return nil
			})
		},
	}
	fidOn[key] = f
	return f
}

var (
	fidOnMu sync.Mutex
	fidOn   = map[string]*Feature{}
)

// UnprivilegedFanotify is fanotify_init(2)'s "Since Linux 5.13, users may
// call fanotify_init() without the CAP_SYS_ADMIN capability to create and
// initialize an fanotify group with limited functionality" (7cea2a3c505e,
// "fanotify: support limited functionality for unprivileged users"; stable
// trees carry it too: Debian's 5.10.262 has it). The probe asks the kernel:
// fanotify_init(FAN_CLASS_NOTIF|FAN_REPORT_FID) on a thread without
// CAP_SYS_ADMIN. EPERM there means the kernel still requires the capability
// (absent: a skip below 5.13, a failure at or above it).
var UnprivilegedFanotify = func() *Feature {
	f := New("unprivileged fanotify (FAN_REPORT_FID without CAP_SYS_ADMIN)", "5.13", func() error {
		return caps.Without([]uintptr{unix.CAP_SYS_ADMIN}, func() error {
			return withGroup(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, nil)
		})
	}).needing(ReportFID)
	f.Absent = []unix.Errno{unix.EPERM}
	f.Explain = func(error) string { return "fanotify_init without CAP_SYS_ADMIN is EPERM on this kernel" }
	return f
}()
