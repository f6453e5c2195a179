package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// Every expectation below comes from fanotify(7), fanotify_init(2) or the
// kernel function named beside it. Records are computed independently of the
// event: the fsid from statfs(2), the handle from name_to_handle_at(2)
// (fanotify(7): "the same value as f_fsid when calling statfs(2)", "the same
// as name_to_handle_at(2)"). Files are prepared from the test process before
// any mark exists; the operations under test run in an actor.

var cases = []harness.Case{
	{
		Name: "rename_old_new_records",
		// Subtests: the names its t.Run calls use, so that a skip keeps these leaves.
		Subtests: []string{"both_dirs", "old_dir_only", "new_dir_only", "filesystem_mark", "same_dir", "subdir_ondir", "subdir_no_ondir"},
		Doc:      "FAN_RENAME reports one event whose OLD_DFID_NAME/NEW_DFID_NAME records name the watched side(s) of the move",
		Needs:    []*feature.Feature{feature.RenameEvent},
		Run:      renameOldNewRecords,
	},
	{
		Name:  "rename_target_fid",
		Doc:   "FAN_REPORT_TARGET_FID adds the child's FID after the dir records: FAN_CREATE carries DFID_NAME+FID, FAN_RENAME OLD+NEW+FID",
		Needs: []*feature.Feature{feature.RenameEvent, feature.ReportTargetFID},
		Run:   renameTargetFid,
	},
	{
		Name: "pidfd_record",
		// Subtests: the names its t.Run calls use, so that a skip keeps these leaves.
		Subtests: []string{"with_fid_records", "with_fd", "process_reaped_fd_error", "process_reaped"},
		Doc: "FAN_REPORT_PIDFD appends a pidfd of the acting process after the FID records; once that process is reaped, FAN_NOPIDFD " +
			"(-ESRCH with FAN_REPORT_FD_ERROR), or on 7.3 (not 6.18) a pidfd whose fdinfo says Pid -1 (fanotify_alloc_event registers the pid in pidfs, copy_event_to_user passes PIDFD_STALE)",
		Needs: []*feature.Feature{feature.ReportPidfd, feature.ReportDFIDName},
		Run:   pidfdRecord,
	},
	{
		Name: "report_tid",
		// Subtests: the names its t.Run calls use, so that a skip keeps these leaves.
		Subtests: []string{"with_report_tid", "without"},
		Doc:      "FAN_REPORT_TID puts the acting thread's id in the pid field; without it the field is the thread group id",
		Needs:    []*feature.Feature{feature.ReportTID},
		Run:      reportTid,
	},
	{
		Name: "dir_fid_records",
		// Subtests: the names its t.Run calls use, so that a skip keeps these leaves.
		Subtests: []string{"dir_fid", "dir_fid_and_fid"},
		Doc:      "FAN_REPORT_DIR_FID without FAN_REPORT_NAME: a dirent event carries one DFID record of the directory; with FAN_REPORT_FID added, an event on a child also carries the child's FID after it",
		Needs:    []*feature.Feature{feature.ReportDFIDName},
		Run:      dirFidRecords,
	},
	{
		Name:  "fid_handle_length",
		Doc:   "DFID_NAME and FID records equal statfs+name_to_handle_at on each filesystem, including handles longer than fanotify's 12 inline bytes (btrfs, overlayfs)",
		Needs: []*feature.Feature{feature.ReportDFIDName},
		Run:   fidHandleLength,
	},
}

// renameOldNewRecords: fanotify(7) FAN_RENAME "This event contains the
// information records FAN_EVENT_INFO_TYPE_OLD_DFID_NAME and
// FAN_EVENT_INFO_TYPE_NEW_DFID_NAME"; which of the two is reported follows
// fanotify_alloc_event (fs/notify/fanotify/fanotify.c): the old parent+name
// when the old directory's mark (FSNOTIFY_ITER_TYPE_INODE) or a filesystem
// mark matched, the new parent+name when the new directory's mark
// (FSNOTIFY_ITER_TYPE_INODE2) or a filesystem mark matched. fanotify_mark(2)
// FAN_ONDIR: without it "events are created only for files".
func renameOldNewRecords(t *harness.T) {
	for _, v := range []struct {
		name             string
		markOld, markNew bool
		filesystem       bool
		sameDir          bool
		dir              bool // rename a directory
		ondir            bool
		wantOld, wantNew bool
	}{
		{name: "both_dirs", markOld: true, markNew: true, wantOld: true, wantNew: true},
		{name: "old_dir_only", markOld: true, wantOld: true},
		{name: "new_dir_only", markNew: true, wantNew: true},
		{name: "filesystem_mark", filesystem: true, wantOld: true, wantNew: true},
		{name: "same_dir", markOld: true, sameDir: true, wantOld: true, wantNew: true},
		{name: "subdir_ondir", markOld: true, markNew: true, dir: true, ondir: true, wantOld: true, wantNew: true},
		{name: "subdir_no_ondir", markOld: true, markNew: true, dir: true},
	} {
		t.Run(v.name, func(t *harness.T) {
			src, dst := t.Path(v.name+"_src"), t.Path(v.name+"_dst")
			setup.Mkdir(t, src, dst)
			if v.sameDir {
				dst = src
			}
			from, to := filepath.Join(src, "a"), filepath.Join(dst, "b")
			if v.dir {
				setup.Mkdir(t, from)
			} else {
				setup.Touch(t, from)
			}
			a := t.Actor()
			g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME, unix.O_RDONLY)
			mask := uint64(unix.FAN_RENAME)
			if v.ondir {
				mask |= unix.FAN_ONDIR
			}
			setup := fmt.Sprintf("DFID_NAME group, %s", fanotify.Mask(mask))
			if v.filesystem && t.FS().Type == "overlay" {
				// fanotify_test_fid (fs/notify/fanotify/fanotify_user.c): a
				// filesystem or mount mark of a FID group needs handles the
				// filesystem can decode; overlayfs without nfs_export
				// cannot (exportfs_can_decode_fh), so EOPNOTSUPP. The
				// fixture mounts it with nfs_export=off explicitly
				// (harness/fixture/morefs.go), whatever the defaults.
				// On a kernel where overlayfs reports no fsid at all (5.10:
				// the filesystem's own probe, feature.FIDOn, says ENODEV),
				// fanotify_test_fsid answers ENODEV before fanotify_test_fid
				// is asked (do_fanotify_mark calls them in that order).
				want := unix.EOPNOTSUPP
				if errors.Is(t.FID().Check(), unix.ENODEV) {
					want = unix.ENODEV
				}
				err := g.Add(unix.FAN_MARK_FILESYSTEM, mask, t.Dir())
				if !errors.Is(err, want) {
					t.Errorf("filesystem mark on overlayfs (no nfs_export) in a FID group: %v, want %s", err, unix.ErrnoName(want))
				}
				return
			}
			if v.filesystem {
				mark(t, g, unix.FAN_MARK_FILESYSTEM, mask, t.Dir())
				setup += " filesystem mark"
			}
			if v.markOld {
				mark(t, g, 0, mask, src)
				setup += " on src"
			}
			if v.markNew && !v.sameDir {
				mark(t, g, 0, mask, dst)
				setup += " on dst"
			}
			var recs []fanotify.Info
			if v.wantOld {
				recs = append(recs, expect.DFIDName(t, src, "a").WithType(unix.FAN_EVENT_INFO_TYPE_OLD_DFID_NAME))
			}
			if v.wantNew {
				recs = append(recs, expect.DFIDName(t, dst, "b").WithType(unix.FAN_EVENT_INFO_TYPE_NEW_DFID_NAME))
			}
			var want []fanotify.Event
			if len(recs) > 0 {
				want = []fanotify.Event{fev(mask, a.Pid(), recs...)}
			}
			if err := a.Rename(from, to); err != nil {
				t.Fatalf("rename %s %s: %v", from, to, err)
			}
			expect.FanotifyDrained(t, g, setup+"; actor renames src/a to dst/b", want)
		})
	}
}

// renameTargetFid: fanotify_init(2) FAN_REPORT_TARGET_FID "Events for
// fanotify groups initialized with this flag will contain additional
// information about the child correlated with directory entry modification
// events"; the record order is copy_info_records_to_user's
// (fs/notify/fanotify/fanotify_user.c): dir fid+name, new dir fid+name, then
// the child's fid.
func renameTargetFid(t *harness.T) {
	src, dst := t.Path("src"), t.Path("dst")
	setup.Mkdir(t, src, dst)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME_TARGET, unix.O_RDONLY)
	mask := uint64(unix.FAN_CREATE | unix.FAN_RENAME)
	mark(t, g, 0, mask, src)
	mark(t, g, 0, mask, dst)
	setup := "DFID_NAME_TARGET group, FAN_CREATE|FAN_RENAME on src and dst"
	from, to := filepath.Join(src, "a"), filepath.Join(dst, "b")
	if err := a.Touch(from); err != nil {
		t.Fatalf("create %s: %v", from, err)
	}
	child := expect.FID(t, from)
	expect.FanotifyDrained(t, g, setup+"; actor creates src/a", []fanotify.Event{
		fev(unix.FAN_CREATE, a.Pid(), expect.DFIDName(t, src, "a").WithType(unix.FAN_EVENT_INFO_TYPE_DFID_NAME), child),
	})
	if err := a.Rename(from, to); err != nil {
		t.Fatalf("rename: %v", err)
	}
	expect.FanotifyDrained(t, g, setup+"; actor renames src/a to dst/b", []fanotify.Event{
		fev(unix.FAN_RENAME, a.Pid(),
			expect.DFIDName(t, src, "a").WithType(unix.FAN_EVENT_INFO_TYPE_OLD_DFID_NAME),
			expect.DFIDName(t, dst, "b").WithType(unix.FAN_EVENT_INFO_TYPE_NEW_DFID_NAME),
			child),
	})
}

// pidfdRecord: fanotify_init(2) FAN_REPORT_PIDFD "an additional information
// record of type FAN_EVENT_INFO_TYPE_PIDFD"; the pidfd record follows the
// FID records (copy_info_records_to_user). For a process reaped before the
// event is read there are two rules (checkReapedPidfd):
//   - the older one, fanotify(7) "pidfd ... FAN_NOPIDFD ... if the process
//     that generated the event has terminated": copy_event_to_user finds no
//     task (pid_has_task(PIDTYPE_TGID), or pidfd_prepare's -ESRCH) and
//     writes FAN_NOPIDFD, or -ESRCH for a group with FAN_REPORT_FD_ERROR
//     ("Depending on flag FAN_REPORT_FD_ERROR, report either -ESRCH or
//     FAN_NOPIDFD");
//   - 7.3's (6.18 follows the older one): fanotify_alloc_event
//     (fs/notify/fanotify/fanotify.c) registers the event's pid in pidfs
//     when the group has FAN_REPORT_PIDFD (pidfs_register_pid_gfp), and
//     copy_event_to_user
//     (fs/notify/fanotify/fanotify_user.c) creates the pidfd with
//     PIDFD_STALE, which pidfd_prepare (kernel/fork.c) lets through for a
//     reaped task: a real pidfd whose fdinfo reads "Pid: -1"
//     (fs/pidfs.c pidfd_show_fdinfo) and to which pidfd_send_signal(2)
//     answers ESRCH.
//
// Which rule the kernel followed is the record's pidfd field itself: a
// descriptor (>= 0) or a negative value; FAN_NOPIDFD is -1, the same number
// as a stale pidfd's fdinfo Pid, so the field is read as the record gives it.
func pidfdRecord(t *harness.T) {
	t.Run("with_fid_records", func(t *harness.T) {
		dir := t.Path("fid")
		setup.Mkdir(t, dir)
		f := filepath.Join(dir, "f")
		setup.Touch(t, f)
		a := t.Actor()
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME|unix.FAN_REPORT_FID|unix.FAN_REPORT_PIDFD, unix.O_RDONLY)
		mark(t, g, 0, unix.FAN_CLOSE_WRITE|unix.FAN_EVENT_ON_CHILD, dir)
		if err := a.WriteFile(f, []byte("x")); err != nil {
			t.Fatalf("write %s: %v", f, err)
		}
		expect.FanotifyDrained(t, g, "DFID_NAME|FID|PIDFD group, FAN_CLOSE_WRITE|FAN_EVENT_ON_CHILD on dir; actor writes dir/f", []fanotify.Event{
			fev(unix.FAN_CLOSE_WRITE, a.Pid(),
				expect.DFIDName(t, dir, "f").WithType(unix.FAN_EVENT_INFO_TYPE_DFID_NAME),
				expect.FID(t, f),
				livePidfd(a.Pid())),
		})
	})
	t.Run("with_fd", func(t *harness.T) {
		f := t.Path("fd_f")
		setup.Touch(t, f)
		a := t.Actor()
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_PIDFD, unix.O_RDONLY)
		mark(t, g, 0, unix.FAN_CLOSE_WRITE, f)
		if err := a.WriteFile(f, []byte("x")); err != nil {
			t.Fatalf("write %s: %v", f, err)
		}
		want := fev(unix.FAN_CLOSE_WRITE, a.Pid(), livePidfd(a.Pid()))
		want.Path = f
		expect.FanotifyDrained(t, g, "PIDFD group (event fds), FAN_CLOSE_WRITE on f; actor writes f", []fanotify.Event{want})
	})
	t.Run("process_reaped_fd_error", func(t *harness.T) {
		t.Require(feature.ReportFdError)
		f := t.Path("gone_fd_error_f")
		setup.Touch(t, f)
		a := t.Actor()
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FD_ERROR|unix.FAN_REPORT_PIDFD, unix.O_RDONLY)
		mark(t, g, 0, unix.FAN_CLOSE_WRITE, f)
		if err := a.WriteFile(f, []byte("x")); err != nil {
			t.Fatalf("write %s: %v", f, err)
		}
		pid := a.Pid()
		a.Kill() // kills and reaps: the event's pid has no task left
		checkReapedPidfd(t, g, "FD_ERROR|PIDFD group, FAN_CLOSE_WRITE on f; actor writes f, is killed and reaped; then read",
			-int32(unix.ESRCH), func(pidfd fanotify.Info) fanotify.Event {
				want := fev(unix.FAN_CLOSE_WRITE, pid, pidfd)
				want.Path = f
				return want
			})
	})
	t.Run("process_reaped", func(t *harness.T) {
		f := t.Path("gone_f")
		setup.Touch(t, f)
		a := t.Actor()
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID|unix.FAN_REPORT_PIDFD, unix.O_RDONLY)
		mark(t, g, 0, unix.FAN_CLOSE_WRITE, f)
		if err := a.WriteFile(f, []byte("x")); err != nil {
			t.Fatalf("write %s: %v", f, err)
		}
		pid := a.Pid()
		a.Kill() // kills and reaps: the event's pid has no task left
		fid := expect.FID(t, f)
		checkReapedPidfd(t, g, "FID|PIDFD group, FAN_CLOSE_WRITE on f; actor writes f, is killed and reaped; then read",
			unix.FAN_NOPIDFD, func(pidfd fanotify.Info) fanotify.Event {
				return fev(unix.FAN_CLOSE_WRITE, pid, fid, pidfd)
			})
	})
}

// livePidfd is the PIDFD record of a process that is alive when the event
// is read: a descriptor (any number) whose fdinfo names pid.
func livePidfd(pid int) fanotify.Info {
	return fanotify.Info{Type: unix.FAN_EVENT_INFO_TYPE_PIDFD, PidfdPid: int32(pid)}
}

// stalePidfdSince is the release from which every kernel reports a reaped
// process's event with a PIDFD_STALE descriptor: Debian's linux-source-7.2
// and 7.3 register the event's pid in pidfs when the event is allocated
// (fanotify.c fanotify_alloc_event: pidfs_register_pid_gfp) and create the
// pidfd PIDFD_STALE (fanotify_user.c copy_event_to_user); 6.18 does not.
// The merge release lies in 7.0..7.2 and was not verified: below 7.2 both
// rules pass, from it on the older one fails.
const stalePidfdSince = "7.2"

// checkReapedPidfd reads the one event queued by a process reaped since,
// keeping its pidfd open, and compares it with event(record), the record
// being the one of the rule the pidfd field shows (pidfdRecord): a
// descriptor must be a pidfd whose fdinfo Pid is -1 and to which
// pidfd_send_signal(fd, 0) answers ESRCH (the stale pidfd of 7.3); a
// negative field must be exactly older, the value the older rule writes
// (FAN_NOPIDFD, or -ESRCH with FAN_REPORT_FD_ERROR). Every descriptor the
// event carries is closed; then nothing else may arrive.
func checkReapedPidfd(t *harness.T, g *fanotify.Group, did string, older int32, event func(pidfd fanotify.Info) fanotify.Event) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(g.Fd()), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 5000); err != nil || n == 0 {
		t.Fatalf("%s: no event queued within 5s (poll: %d, %v)", did, n, err)
	}
	buf := make([]byte, 64<<10)
	n, err := unix.Read(g.Fd(), buf)
	if err != nil {
		t.Fatalf("%s: read: %v", did, err)
	}
	got, err := fanotify.DecodeKeepPidfds(buf[:n])
	defer func() {
		for _, e := range got {
			if e.Fd >= 0 {
				unix.Close(int(e.Fd))
			}
			for _, r := range e.Info {
				if r.Type == unix.FAN_EVENT_INFO_TYPE_PIDFD && r.Pidfd >= 0 {
					unix.Close(int(r.Pidfd))
				}
			}
		}
	}()
	if err != nil {
		t.Fatalf("%s: %v", did, err)
	}
	// The older rule's record, unless the event carries a descriptor.
	want := fanotify.Info{Type: unix.FAN_EVENT_INFO_TYPE_PIDFD, Pidfd: older}
	rule := fmt.Sprintf("pidfd field negative: the older rule, want exactly -%s (%d)", unix.ErrnoName(unix.Errno(-older)), older)
	if older == unix.FAN_NOPIDFD {
		rule = "pidfd field negative: the older rule, want exactly FAN_NOPIDFD (-1)"
	}
	if len(got) == 1 && feature.KernelAtLeast(stalePidfdSince) {
		for _, r := range got[0].Info {
			if r.Type == unix.FAN_EVENT_INFO_TYPE_PIDFD && r.Pidfd < 0 {
				t.Errorf("%s: pidfd field %d on %s: since %s a reaped process's event carries a PIDFD_STALE descriptor (fanotify.c fanotify_alloc_event registers the pid in pidfs; fanotify_user.c copy_event_to_user)",
					did, r.Pidfd, feature.KernelRelease(), stalePidfdSince)
			}
		}
	}
	if len(got) == 1 {
		for _, r := range got[0].Info {
			if r.Type != unix.FAN_EVENT_INFO_TYPE_PIDFD || r.Pidfd < 0 {
				continue
			}
			rule = fmt.Sprintf("pidfd field a descriptor (%d): 7.3's PIDFD_STALE pidfd, want its fdinfo Pid -1", r.Pidfd)
			want = fanotify.Info{Type: unix.FAN_EVENT_INFO_TYPE_PIDFD, PidfdPid: -1}
			// pidfd_send_signal(2) ESRCH "The target process does not
			// exist (i.e., it has terminated and been waited on)";
			// signal 0 checks without sending (kill(2)).
			err := unix.PidfdSendSignal(int(r.Pidfd), 0, nil, 0)
			if !errors.Is(err, unix.ESRCH) {
				t.Errorf("%s: pidfd_send_signal(pidfd %d of the reaped actor, 0): %v, want ESRCH", did, r.Pidfd, err)
			}
		}
	}
	t.Logf("%s", rule)
	expect.Fanotify(t, did+" ("+rule+")", got, []fanotify.Event{event(want)})
	expect.FanotifyQuiet(t, did, g, expect.Quiet)
}

// reportTid: fanotify_init(2) FAN_REPORT_TID "Report thread ID (TID) instead
// of process ID (PID) in the pid field of the struct fanotify_event_metadata";
// fanotify(7) pid "the PID of the process that caused the event" (the thread
// group id, pid_vnr(event->pid) of a PIDTYPE_TGID pid in
// fanotify_alloc_event). The operation runs on a thread of this process that
// is not its leader, so tid and tgid differ.
func reportTid(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	for _, v := range []struct {
		name string
		flag uint
	}{{"with_report_tid", unix.FAN_REPORT_TID}, {"without", 0}} {
		t.Run(v.name, func(t *harness.T) {
			g := t.Fanotify(unix.FAN_CLASS_NOTIF|v.flag, unix.O_RDONLY)
			mark(t, g, 0, unix.FAN_OPEN, f)
			tid, err := openOnSideThread(f)
			if err != nil {
				t.Fatalf("%v", err)
			}
			want := fev(unix.FAN_OPEN, os.Getpid())
			if v.flag != 0 {
				want.Pid = int32(tid)
			}
			want.Path = f
			expect.FanotifyDrained(t, g, fmt.Sprintf("group %s, FAN_OPEN on f; thread %d of pid %d opens f", fanotify.InitFlagsString(v.flag), tid, os.Getpid()),
				[]fanotify.Event{want})
		})
	}
}

// openOnSideThread opens and closes path on an OS thread of this process
// that is not the thread group leader and returns that thread's id.
func openOnSideThread(path string) (int, error) {
	tid, err := fixture.OnOtherThread(func() error {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	})
	if err != nil {
		return tid, fmt.Errorf("open %s on thread %d: %w", path, tid, err)
	}
	return tid, nil
}

// inlineHandleBytes is FANOTIFY_INLINE_FH_LEN (fs/notify/fanotify/fanotify.h):
// handles up to this size are kept in the event, longer ones in an external
// buffer (fanotify_encode_fh -> fanotify_fh_ext_buf).
const inlineHandleBytes = 12

// fidHandleLength: fanotify(7) DFID_NAME and FID records as in
// renameTargetFid. btrfs encodes 20-byte handles without a parent
// (BTRFS_FID_SIZE_NON_CONNECTABLE, fs/btrfs/export.h) and overlayfs wraps the
// upper handle in a struct ovl_fb (fs/overlayfs/export.c), both longer than
// the inline bytes: there the case fails if the handle is not long, since it
// would not test what it says.
func fidHandleLength(t *harness.T) {
	dir := t.Path("d")
	setup.Mkdir(t, dir)
	f := filepath.Join(dir, "f")
	setup.Touch(t, f)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME|unix.FAN_REPORT_FID, unix.O_RDONLY)
	mark(t, g, 0, unix.FAN_OPEN|unix.FAN_EVENT_ON_CHILD, dir)
	dn, child := expect.DFIDName(t, dir, "f").WithType(unix.FAN_EVENT_INFO_TYPE_DFID_NAME), expect.FID(t, f)
	if fs := t.FS().Type; fs == "btrfs" || fs == "overlay" {
		for _, r := range []fanotify.Info{dn, child} {
			if n := len(r.Handle) / 2; n <= inlineHandleBytes {
				t.Errorf("%s: name_to_handle_at gave a %d-byte handle, want more than %d (the case would not reach the external handle buffer)", fs, n, inlineHandleBytes)
			}
		}
	}
	t.Logf("handle bytes: dir %d, file %d", len(dn.Handle)/2, len(child.Handle)/2)
	fd, err := a.Open(f, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("open %s: %v", f, err)
	}
	if err := a.Close(fd); err != nil {
		t.Fatalf("close: %v", err)
	}
	expect.FanotifyDrained(t, g, "DFID_NAME|FID group, FAN_OPEN|FAN_EVENT_ON_CHILD on dir; actor opens dir/f", []fanotify.Event{
		fev(unix.FAN_OPEN, a.Pid(), dn, child),
	})
}

// dirFidRecords: fanotify_init(2) FAN_REPORT_DIR_FID (since Linux 5.9, the
// release of FAN_REPORT_DFID_NAME): "an additional record of type
// FAN_EVENT_INFO_TYPE_DFID encapsulates the information about the directory
// object"; with FAN_REPORT_FID as well, "the child fid is also reported with
// another info record that follows the first" (commit 7e8283af6ede,
// "fanotify: report parent fid + name + child fid"). In the source:
// fanotify_alloc_event (fs/notify/fanotify/fanotify.c) reports the directory
// (dirid) and, for a non-dirent event on a non-directory in a group with
// FAN_REPORT_FID (fanotify_report_child_fid), the child too; without
// FAN_REPORT_NAME no name is recorded. copy_info_records_to_user
// (fs/notify/fanotify/fanotify_user.c) writes the directory record first
// (type DFID when no name) and the child's second ("Second info record type
// is always FID"); a lone record of a dirent event is DFID. fanotify_mark(2)
// FAN_ONDIR: without it a subdirectory's creation makes no event.
func dirFidRecords(t *harness.T) {
	t.Run("dir_fid", func(t *harness.T) {
		dir := t.Path("d")
		setup.Mkdir(t, dir)
		a := t.Actor()
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DIR_FID, unix.O_RDONLY)
		mark(t, g, 0, unix.FAN_CREATE, dir)
		setup := "DIR_FID group, FAN_CREATE on d"
		dfid := expect.FID(t, dir).WithType(unix.FAN_EVENT_INFO_TYPE_DFID)
		if err := a.Touch(filepath.Join(dir, "a")); err != nil {
			t.Fatalf("create d/a: %v", err)
		}
		expect.FanotifyDrained(t, g, setup+"; actor creates d/a", []fanotify.Event{
			fev(unix.FAN_CREATE, a.Pid(), dfid),
		})
		if err := a.Mkdir(filepath.Join(dir, "s"), 0o755); err != nil {
			t.Fatalf("mkdir d/s: %v", err)
		}
		expect.FanotifyDrained(t, g, setup+" (no FAN_ONDIR); actor makes directory d/s", nil)
	})
	t.Run("dir_fid_and_fid", func(t *harness.T) {
		dir := t.Path("d2")
		setup.Mkdir(t, dir)
		f := filepath.Join(dir, "f")
		setup.Touch(t, f)
		a := t.Actor()
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DIR_FID|unix.FAN_REPORT_FID, unix.O_RDONLY)
		mark(t, g, 0, unix.FAN_CREATE|unix.FAN_CLOSE_WRITE|unix.FAN_EVENT_ON_CHILD, dir)
		setup := "DIR_FID|FID group, FAN_CREATE|FAN_CLOSE_WRITE|FAN_EVENT_ON_CHILD on d"
		dfid := expect.FID(t, dir).WithType(unix.FAN_EVENT_INFO_TYPE_DFID)
		if err := a.WriteFile(f, []byte("x")); err != nil {
			t.Fatalf("write d/f: %v", err)
		}
		expect.FanotifyDrained(t, g, setup+"; actor writes d/f", []fanotify.Event{
			fev(unix.FAN_CLOSE_WRITE, a.Pid(), dfid, expect.FID(t, f)),
		})
		n := filepath.Join(dir, "n")
		if err := a.Touch(n); err != nil {
			t.Fatalf("create d/n: %v", err)
		}
		expect.FanotifyDrained(t, g, setup+"; actor creates d/n (open O_CREAT|O_WRONLY, close)", []fanotify.Event{
			fev(unix.FAN_CREATE, a.Pid(), dfid),
			fev(unix.FAN_CLOSE_WRITE, a.Pid(), dfid, expect.FID(t, n)),
		})
	})
}
