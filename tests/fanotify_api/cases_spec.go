package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/fdinfo"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/limits"
	"github.com/fsnsuite/fsnsuite/harness/queuelimit"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// specCases check rules of the man pages (and of the kernel source where it
// says more) that no earlier case checked; each names its rule ids in
// spec.go.
var specCases = []harness.Case{
	{
		Name:     "spec_mark_refusals",
		Doc:      "fanotify_mark flag and mask combinations fanotify_mark(2) and do_fanotify_mark refuse (or accept): empty remove mask, mount-namespace marks, pre-content and permission events where they cannot be, FLUSH and absolute paths with a bad dirfd, a relative path from the working directory",
		Subtests: []string{"remove_empty_mask", "mntns_not_nsfs", "mntns_without_report_mnt", "mnt_events_on_inode_mark", "pre_access_content_class", "pre_access_ondir", "perm_in_fid_group", "perm_on_proc", "flush_bad_dirfd", "absolute_path_bad_dirfd", "relative_path_cwd", "mnt_events_without_report_mnt", "report_mnt_group_other_events"},
		Run:      specMarkRefusals,
	},
	{
		Name:        "spec_report_mnt_no_fd_error",
		Doc:         "fanotify_init(FAN_REPORT_MNT|FAN_REPORT_FD_ERROR) is EINVAL, each alone is a group (fanotify_user.c fanotify_init)",
		Needs:       []*feature.Feature{feature.ReportMnt, feature.ReportFdError},
		Filesystems: []string{}, // no filesystem involved
		Run:         specReportMntNoFdError,
	},
	{
		Name:        "spec_pre_access_ondir_update",
		Doc:         "adding FAN_PRE_ACCESS to a directory mark with FAN_ONDIR, or FAN_ONDIR to a FAN_PRE_ACCESS mark, is EEXIST and leaves the mask as it was (fanotify_may_update_existing_mark)",
		Filesystems: []string{"ext4"},
		Needs:       []*feature.Feature{feature.PreContent},
		Run:         specPreAccessOndirUpdate,
	},
	{
		Name:  "spec_enable_audit_needs_cap",
		Doc:   "fanotify_init(FAN_ENABLE_AUDIT) by a thread without CAP_AUDIT_WRITE is EPERM, with it a group (fanotify_init(2) FAN_ENABLE_AUDIT; fanotify_user.c fanotify_init)",
		Needs: []*feature.Feature{feature.EnableAudit},
		Run:   specEnableAuditNeedsCap,
	},
	{
		Name:  "spec_report_tid_needs_cap",
		Doc:   "fanotify_init(FAN_REPORT_FID|FAN_REPORT_TID) by a thread without CAP_SYS_ADMIN is EPERM, though FAN_REPORT_FID alone is allowed it (fanotify_init(2) FAN_REPORT_TID: \"Use of this flag requires the CAP_SYS_ADMIN capability\")",
		Needs: []*feature.Feature{feature.ReportTID, feature.UnprivilegedFanotify},
		Run:   specReportTidNeedsCap,
	},
	{
		Name:  "spec_response_info_record",
		Doc:   "a FAN_INFO response must carry exactly one well-formed FAN_RESPONSE_INFO_AUDIT_RULE record: a wrong type, pad, length or size is EINVAL and leaves the event pending; a well-formed one answers it (fanotify(7); process_access_response_info)",
		Needs: []*feature.Feature{feature.FanotifyPerm},
		Run:   specResponseInfoRecord,
	},
	{
		Name:     "spec_event_layout",
		Doc:      "every event's metadata has vers FANOTIFY_METADATA_VERSION, reserved 0, metadata_len FAN_EVENT_METADATA_LEN; an fd group's event_len is that too; info records have pad 0 and lengths that add up to event_len (fanotify(7))",
		Subtests: []string{"fd_group", "records"},
		Run:      specEventLayout,
	},
	{
		Name: "spec_poll_readable",
		Doc:  "poll(2) reports a group readable exactly while an event is queued (fanotify(7) \"Monitoring an fanotify file descriptor for events\")",
		Run:  specPollReadable,
	},
	{
		Name:  "spec_fdinfo_lines",
		Doc:   "a group's fdinfo holds \"fanotify flags:%x event-flags:%x\" and one line per mark in fs/notify/fdinfo.c's format: inode (ino, sdev, mflags, masks, the handle name_to_handle_at gives), mount (mnt_id) and filesystem (sdev)",
		Needs: []*feature.Feature{feature.MarkFilesystem},
		Run:   specFdinfoLines,
	},
	{
		Name:  "spec_overflow_fd_error",
		Doc:   "with FAN_REPORT_FD_ERROR the overflow event's fd is -EBADF (fanotify(7) fd: \"in case of a queue overflow, the value will be -EBADF\")",
		Needs: []*feature.Feature{feature.ReportFdError, feature.ReportDFIDName},
		Run:   specOverflowFdError,
	},
	{
		Name:     "spec_read_emfile",
		Doc:      "a read(2) that cannot install the event fd under RLIMIT_NOFILE fails with EMFILE; with FAN_REPORT_FD_ERROR the event carries -EMFILE as its fd; a read that copied an event before the error returns that event (fanotify(7) ERRORS, BUGS; copy_event_to_user)",
		Subtests: []string{"without_fd_error", "with_fd_error", "after_an_event"},
		Run:      specReadEmfile,
	},
	{
		Name:        "spec_btrfs_subvolume_exdev",
		Doc:         "a FID group's mount or filesystem mark on a btrfs subvolume, or an inode mark there beside one on the top volume, is EXDEV; an inode mark there alone, or a fd group's mark, is not (fanotify_mark(2) EXDEV; fanotify_test_fsid, fanotify_set_mark_fsid)",
		Filesystems: []string{"btrfs"},
		Needs:       []*feature.Feature{feature.ReportFID, feature.MarkFilesystem},
		Run:         specBtrfsSubvolumeExdev,
	},
	{
		Name:        "spec_fid_mark_no_decode",
		Doc:         "a FID group's mount or filesystem mark on overlayfs without nfs_export, whose handles cannot be decoded, is EOPNOTSUPP; a fd group's is allowed (fanotify_mark(2) EOPNOTSUPP; fanotify_test_fid)",
		Filesystems: []string{"overlay"},
		Needs:       []*feature.Feature{feature.ReportFID, feature.MarkFilesystem},
		Run:         specFidMarkNoDecode,
	},
	{
		Name: "spec_read_etxtbsy",
		Doc:  "a group whose event fds are O_RDWR cannot open a file being executed: read(2) of its event fails with ETXTBSY (fanotify(7) ERRORS)",
		Run:  specReadEtxtbsy,
	},
}

// specMarkRefusals: each row is one fanotify_mark call and the errno the
// man page or do_fanotify_mark (fs/notify/fanotify/fanotify_user.c) gives
// it; after a refusal the group has no mark (fdinfo).
func specMarkRefusals(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	closed := setup.ClosedFd(t, 0)
	type row struct {
		name      string
		needs     []*feature.Feature
		initFlags uint
		flags     uint
		mask      uint64
		dirfd     int
		path      string
		want      unix.Errno
		after     string // the mark kinds fdinfo shows afterwards
		src       string
		cwd       string // the working directory during the call
	}
	rows := []row{
		{name: "remove_empty_mask", flags: unix.FAN_MARK_REMOVE, mask: 0, path: f, want: unix.EINVAL, after: "inode",
			src: "fanotify_mark(2) FAN_MARK_REMOVE: mask must be nonempty"},
		{name: "mntns_not_nsfs", needs: []*feature.Feature{feature.ReportMnt}, initFlags: unix.FAN_REPORT_MNT, flags: unix.FAN_MARK_MNTNS,
			mask: unix.FAN_MNT_ATTACH, path: t.Dir(), want: unix.EINVAL, after: "none",
			src: "fanotify_mark(2) FAN_MARK_MNTNS: a path that is no mount namespace is EINVAL"},
		{name: "mntns_without_report_mnt", needs: []*feature.Feature{feature.ReportMnt}, flags: unix.FAN_MARK_MNTNS, mask: unix.FAN_OPEN, path: "/proc/self/ns/mnt", want: unix.EINVAL, after: "none",
			src: "fanotify_mark(2) FAN_MARK_MNTNS: a FAN_REPORT_MNT group is required"},
		{name: "mnt_events_on_inode_mark", needs: []*feature.Feature{feature.ReportMnt}, initFlags: unix.FAN_REPORT_MNT,
			mask: unix.FAN_MNT_ATTACH, path: "/proc/self/ns/mnt", want: unix.EINVAL, after: "none",
			src: "fanotify_mark(2) FAN_MNT_ATTACH: on an inode, mount or filesystem mark EINVAL"},
		{name: "pre_access_content_class", needs: []*feature.Feature{feature.PreContent}, initFlags: unix.FAN_CLASS_CONTENT,
			mask: unix.FAN_PRE_ACCESS, path: f, want: unix.EINVAL, after: "none",
			src: "do_fanotify_mark: pre-content events are not allowed for FAN_CLASS_CONTENT"},
		{name: "pre_access_ondir", needs: []*feature.Feature{feature.PreContent}, initFlags: unix.FAN_CLASS_PRE_CONTENT,
			mask: unix.FAN_PRE_ACCESS | unix.FAN_ONDIR, path: t.Dir(), want: unix.EINVAL, after: "none",
			src: "do_fanotify_mark: pre-content events are not generated for directories (checked before the filesystem's opt-in, so tmpfs too)"},
		{name: "perm_in_fid_group", needs: []*feature.Feature{feature.FanotifyPerm, feature.ReportFID}, initFlags: unix.FAN_REPORT_FID,
			mask: unix.FAN_OPEN_PERM, path: f, want: unix.EINVAL, after: "none",
			src: "fanotify_mark(2) EINVAL: the group identifies objects by file handles and mask has a permission event"},
		{name: "perm_on_proc", needs: []*feature.Feature{feature.FanotifyPerm}, initFlags: unix.FAN_CLASS_CONTENT,
			mask: unix.FAN_OPEN_PERM, path: "/proc/self/status", want: unix.EINVAL, after: "none",
			src: "fanotify_events_supported: procfs is FS_DISALLOW_NOTIFY_PERM"},
		{name: "flush_bad_dirfd", flags: unix.FAN_MARK_FLUSH, dirfd: closed, path: "", want: 0, after: "none",
			src: "fanotify_mark(2) BUGS: since 3.16 FAN_MARK_FLUSH needs no valid dirfd/path (do_fanotify_mark flushes before the lookup)"},
		{name: "absolute_path_bad_dirfd", flags: unix.FAN_MARK_ADD, mask: unix.FAN_OPEN, dirfd: closed, path: f, want: 0, after: "inode",
			src: "fanotify_mark(2): an absolute path is used and dirfd ignored"},
		{name: "mnt_events_without_report_mnt", needs: []*feature.Feature{feature.ReportMnt}, flags: unix.FAN_MARK_MNTNS,
			mask: unix.FAN_MNT_ATTACH, path: "/proc/self/ns/mnt", want: unix.EINVAL, after: "none",
			src: "do_fanotify_mark: mount events only in a FAN_REPORT_MNT group"},
		{name: "report_mnt_group_other_events", needs: []*feature.Feature{feature.ReportMnt}, initFlags: unix.FAN_REPORT_MNT, flags: unix.FAN_MARK_MNTNS,
			mask: unix.FAN_MNT_ATTACH | unix.FAN_OPEN, path: "/proc/self/ns/mnt", want: unix.EINVAL, after: "none",
			src: "do_fanotify_mark: a FAN_REPORT_MNT group takes mount events only"},
		{name: "relative_path_cwd", flags: unix.FAN_MARK_ADD, mask: unix.FAN_OPEN, path: "f", cwd: t.Dir(), want: 0, after: "inode",
			src: "fanotify_mark(2): a relative path with AT_FDCWD is resolved from the current working directory"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *harness.T) {
			t.Require(r.needs...)
			g := t.Fanotify(r.initFlags, unix.O_RDONLY)
			if r.name == "remove_empty_mask" || r.name == "flush_bad_dirfd" {
				// Something to keep (or to flush).
				if err := g.Add(0, unix.FAN_OPEN, f); err != nil {
					t.Fatalf("setup: %v", err)
				}
			}
			dirfd := r.dirfd
			if dirfd == 0 {
				dirfd = unix.AT_FDCWD
			}
			var err error
			if r.cwd != "" {
				err = inDir(t, r.cwd, func() error { return g.Mark(r.flags|markCmd(r.flags), r.mask, dirfd, r.path) })
			} else {
				err = g.Mark(r.flags|markCmd(r.flags), r.mask, dirfd, r.path)
			}
			what := fmt.Sprintf("fanotify_mark(%s, %s, dirfd %d, %q) in a %s group (%s)",
				fanotify.MarkFlagsString(r.flags|markCmd(r.flags)), fanotify.Mask(r.mask), dirfd, r.path, fanotify.InitFlagsString(r.initFlags), r.src)
			expect.Errno(t, what, err, r.want)
			expect.MarkKinds(t, "after "+r.name, g, r.after)
			if r.name == "absolute_path_bad_dirfd" || r.name == "relative_path_cwd" {
				ms, err := g.Marks()
				if err != nil {
					t.Fatalf("%v", err)
				}
				if len(ms) != 1 || !ms[0].IsOn(f) {
					t.Errorf("after %s: marks %v, want one inode mark on %s", what, ms, f)
				}
			}
		})
	}
}

// inDir runs fn with the case process's working directory set to dir, and
// puts the old one back (every other path in the case is absolute).
func inDir(t *harness.T, dir string, fn func() error) error {
	t.Helper()
	// The way back is a descriptor of the old directory, not its path:
	// the binary's starting directory may be out of reach by name in its
	// mount namespace (getcwd's "(unreachable)": ENOENT, seen under the
	// hostile condition two_suites_parallel), yet it is still there.
	old, err := unix.Open(".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("setup: open the working directory: %v", err)
	}
	defer unix.Close(old)
	if err := unix.Chdir(dir); err != nil {
		t.Fatalf("setup: chdir %s: %v", dir, err)
	}
	defer func() {
		if err := unix.Fchdir(old); err != nil {
			t.Fatalf("fchdir back to the old working directory: %v", err)
		}
	}()
	return fn()
}

// markCmd adds FAN_MARK_ADD to flags that name no command.
func markCmd(flags uint) uint {
	if flags&(unix.FAN_MARK_ADD|unix.FAN_MARK_REMOVE|unix.FAN_MARK_FLUSH) != 0 {
		return 0
	}
	return unix.FAN_MARK_ADD
}

// specEnableAuditNeedsCap: fanotify_init(2) FAN_ENABLE_AUDIT "Use of this
// flag requires the CAP_AUDIT_WRITE capability"; fanotify_user.c
// fanotify_init answers EPERM without it (the EnableAudit probe has shown
// the flag known, so EINVAL is not the kernel's answer here).
func specEnableAuditNeedsCap(t *harness.T) {
	err := fixture.WithoutCaps([]uintptr{unix.CAP_AUDIT_WRITE}, func() error {
		fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_ENABLE_AUDIT|unix.FAN_CLOEXEC, unix.O_RDONLY)
		if err == nil {
			unix.Close(fd)
		}
		return err
	})
	expect.Errno(t, "fanotify_init(FAN_ENABLE_AUDIT) without CAP_AUDIT_WRITE", err, unix.EPERM)
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_ENABLE_AUDIT|unix.FAN_CLOEXEC, unix.O_RDONLY)
	expect.Errno(t, "fanotify_init(FAN_ENABLE_AUDIT) with CAP_AUDIT_WRITE", err, 0)
	if err == nil {
		unix.Close(fd)
	}
}

// specReportTidNeedsCap: fanotify_init(2) FAN_REPORT_TID "Use of this flag
// requires the CAP_SYS_ADMIN capability"; fanotify_user.c fanotify_init
// refuses FANOTIFY_ADMIN_INIT_FLAGS (FAN_REPORT_TID among them) with EPERM
// to a caller without it.
func specReportTidNeedsCap(t *harness.T) {
	try := func(flags uint) error {
		return fixture.WithoutCaps([]uintptr{unix.CAP_SYS_ADMIN}, func() error {
			fd, err := unix.FanotifyInit(flags|unix.FAN_CLOEXEC, unix.O_RDONLY)
			if err == nil {
				unix.Close(fd)
			}
			return err
		})
	}
	expect.Errno(t, "fanotify_init(FAN_REPORT_FID) without CAP_SYS_ADMIN", try(unix.FAN_REPORT_FID), 0)
	expect.Errno(t, "fanotify_init(FAN_REPORT_FID|FAN_REPORT_TID) without CAP_SYS_ADMIN", try(unix.FAN_REPORT_FID|unix.FAN_REPORT_TID), unix.EPERM)
}

// Values of include/uapi/linux/fanotify.h that golang.org/x/sys/unix does
// not name.
const (
	fanInfo                  = 0x20 // FAN_INFO
	fanResponseInfoAuditRule = 1    // FAN_RESPONSE_INFO_AUDIT_RULE
	auditRuleLen             = 16   // sizeof(struct fanotify_response_info_audit_rule)
)

// responseWithInfo is struct fanotify_response followed by info bytes.
func responseWithInfo(fd int32, response uint32, info []byte) []byte {
	b := make([]byte, 8, 8+len(info))
	binary.NativeEndian.PutUint32(b, uint32(fd))
	binary.NativeEndian.PutUint32(b[4:], response)
	return append(b, info...)
}

// auditRule is a struct fanotify_response_info_audit_rule with the given
// header fields.
func auditRule(typ, pad uint8, length uint16) []byte {
	b := make([]byte, auditRuleLen)
	b[0], b[1] = typ, pad
	binary.NativeEndian.PutUint16(b[2:], length)
	binary.NativeEndian.PutUint32(b[4:], 7) // rule_number
	return b
}

// responseInfo is FAN_INFO: a response record after struct
// fanotify_response, of type FAN_RESPONSE_INFO_AUDIT_RULE, merged for 6.3 by
// 70529a199574 ("fanotify: define struct members to hold response decision
// context"; fanotify(7) cites it under "Since Linux 6.3"), with the audit
// side in 032bffd494e3 ("fanotify,audit: Allow audit to use the full
// permission event response"). The probe is the one that commit gives
// applications for it: process_access_response
// (fs/notify/fanotify/fanotify_user.c) validates the record of a FAN_INFO
// response and, when its fd is FAN_NOFD, returns the record's size without
// looking for an event, so a group with no event pending learns whether the
// kernel takes the record. Before 6.3 (6.1's process_access_response) the
// response has to be FAN_ALLOW or FAN_DENY, optionally with FAN_AUDIT:
// FAN_INFO is an unknown bit, EINVAL, the feature's absence. The probe
// touches no event, so it does not depend on what spec_response_info_record
// checks: that a malformed record is refused and leaves the event pending,
// and that a well-formed one answers the event.
var responseInfo = func() *feature.Feature {
	f := feature.New("FAN_INFO response records (FAN_RESPONSE_INFO_AUDIT_RULE)", "6.3", func() error {
		fd, err := unix.FanotifyInit(unix.FAN_CLASS_CONTENT|unix.FAN_CLOEXEC, unix.O_RDONLY)
		if err != nil {
			return limits.FanotifyInit("fanotify_init", fmt.Errorf("fanotify_init(FAN_CLASS_CONTENT): %w", err))
		}
		defer unix.Close(fd)
		b := responseWithInfo(unix.FAN_NOFD, unix.FAN_ALLOW|fanInfo, auditRule(fanResponseInfoAuditRule, 0, auditRuleLen))
		n, err := unix.Write(fd, b)
		return responseInfoOutcome(n, len(b), err)
	})
	// fanotify_write is EINVAL for every response without
	// CONFIG_FANOTIFY_ACCESS_PERMISSIONS: that absence is the option's.
	f.Requires = []*feature.Feature{feature.FanotifyPerm}
	return f
}()

// responseInfoOutcome is responseInfo's decision on the probe's write of
// want bytes (struct fanotify_response and an audit rule record): all of
// them written is the feature (fanotify_write returns the response's size
// plus what process_access_response returned); fewer a wrong result; an
// errno the kernel's answer, for feature.Decide (EINVAL: FAN_INFO unknown).
func responseInfoOutcome(n, want int, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("write(2) of a FAN_ALLOW|FAN_INFO response with fd FAN_NOFD and an audit rule record: %w", err)
	case n != want:
		return feature.Wrong("write(2) of a FAN_ALLOW|FAN_INFO response with fd FAN_NOFD and an audit rule record",
			"it returned %d; want %d (the response and its record)", n, want)
	}
	return nil
}

// specResponseInfoRecord: fanotify(7) "the FAN_INFO flag ... indicates that
// an extra variable-length response record follows"; the record is
// FAN_RESPONSE_INFO_AUDIT_RULE. process_access_response_info
// (fs/notify/fanotify/fanotify_user.c) refuses with EINVAL a record whose
// size is not sizeof(struct fanotify_response_info_audit_rule), whose type is
// another, whose pad is not 0 or whose len is not its size; the refused
// response leaves the event pending. Where the probe (responseInfo) finds no
// FAN_INFO, below 6.3, the bit is unknown: every FAN_INFO response is
// EINVAL, the well-formed one too, and the event is then denied without it.
// At or above 6.3 a probe that finds none fails the case (feature.Decide).
func specResponseInfoRecord(t *harness.T) {
	info := responseInfo.Check()
	var absent *feature.Unsupported
	if info != nil && !errors.As(info, &absent) {
		// A failure or a skip for any other answer (a wrong result
		// fails and runs on, as supported, so the case's own check of
		// the well-formed response names the behaviour too).
		t.Require(responseInfo)
		info = nil
	}
	_, _, g, p := blockedOpen(t, "f")
	evs, err := g.Drain()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if len(evs) != 1 || evs[0].Mask != unix.FAN_OPEN_PERM {
		fanotify.CloseEventFds(evs)
		t.Fatalf("events of the blocked open: %v, want one FAN_OPEN_PERM", evs)
	}
	fd := evs[0].Fd
	defer g.ReleaseFd(fd)
	bad := []struct {
		what string
		info []byte
	}{
		{"no record", nil},
		{"a record of another type (2)", auditRule(2, 0, auditRuleLen)},
		{"pad 1", auditRule(fanResponseInfoAuditRule, 1, auditRuleLen)},
		{"len 12", auditRule(fanResponseInfoAuditRule, 0, 12)},
		{"4 bytes more than the record", append(auditRule(fanResponseInfoAuditRule, 0, auditRuleLen), 0, 0, 0, 0)},
	}
	for _, b := range bad {
		err := g.WriteRaw(responseWithInfo(fd, unix.FAN_ALLOW|fanInfo, b.info))
		expect.Errno(t, "response FAN_ALLOW|FAN_INFO with "+b.what, err, unix.EINVAL)
	}
	if _, err := p.Wait(expect.Quiet); !errors.Is(err, actor.ErrStillBlocked) {
		t.Fatalf("the open returned after the refused responses (%v): they must leave the event pending", err)
	}
	err = g.WriteRaw(responseWithInfo(fd, unix.FAN_DENY|fanInfo, auditRule(fanResponseInfoAuditRule, 0, auditRuleLen)))
	if info != nil {
		t.Notef("%v: the well-formed FAN_INFO response must be EINVAL too; the event is then denied without FAN_INFO", info)
		expect.Errno(t, "response FAN_DENY|FAN_INFO with a well-formed audit rule record, on a kernel without FAN_INFO", err, unix.EINVAL)
		err = g.Respond(fd, unix.FAN_DENY)
		expect.Errno(t, "response FAN_DENY", err, 0)
	} else {
		expect.Errno(t, "response FAN_DENY|FAN_INFO with a well-formed audit rule record", err, 0)
	}
	r, err := p.Wait(10 * time.Second)
	if err != nil {
		t.Fatalf("the blocked open: %v", err)
	}
	expect.Errno(t, "the actor's open after FAN_DENY|FAN_INFO", r.Err(), unix.EPERM)
}

// metadataLen is FAN_EVENT_METADATA_LEN.
const metadataLen = 24

// specEventLayout: fanotify(7) "Reading fanotify events": vers "must be
// compared to FANOTIFY_METADATA_VERSION", reserved "is not used" (the kernel
// writes 0: copy_event_to_user), metadata_len "is the size of the
// structure", event_len "Unless the group identifies filesystem objects by
// file handles, ... always FAN_EVENT_METADATA_LEN"; info records: pad "is
// set to zero", len "the size of the information record object, including
// the fanotify_event_info_header", and the records fill the rest of
// event_len.
func specEventLayout(t *harness.T) {
	t.Run("fd_group", func(t *harness.T) {
		f, h := t.Path("f"), t.Path("h")
		setup.Touch(t, f, h)
		a := t.Actor()
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_NONBLOCK, unix.O_RDONLY)
		for _, p := range []string{f, h} {
			if err := g.Add(0, unix.FAN_OPEN, p); err != nil {
				t.Fatalf("%v", err)
			}
		}
		openClose(t, a, f, unix.O_RDONLY)
		openClose(t, a, h, unix.O_RDONLY)
		// One read with room for both returns both (fanotify(7): "the read
		// buffer contains one or more of the following structures").
		buf := make([]byte, 4096)
		n, err := unix.Read(g.Fd(), buf)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		events := splitEvents(t, buf[:n])
		if len(events) != 2 {
			t.Errorf("one read(2) of 4096 bytes after opening two marked files: %d events (%d bytes), want 2 FAN_OPEN", len(events), n)
		}
		for i, e := range events {
			checkMetadata(t, i, e)
			if len(e) != metadataLen {
				t.Errorf("event [%d]: event_len %d in a group without FIDs, want FAN_EVENT_METADATA_LEN %d", i, len(e), metadataLen)
			}
		}
	})
	t.Run("records", func(t *harness.T) {
		dir := t.Path("d")
		setup.Mkdir(t, dir)
		// FID records need the filesystem under test to give handles (tmpfs
		// only since 5.13: feature.FIDOn), probed there, not on /tmp.
		t.Require(feature.ReportDFIDName, feature.ReportPidfd, feature.FIDOn(t.FS().Type, dir))
		a := t.Actor()
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_NONBLOCK|unix.FAN_REPORT_DFID_NAME|unix.FAN_REPORT_FID|unix.FAN_REPORT_PIDFD, unix.O_RDONLY)
		if err := g.Add(0, unix.FAN_CREATE|unix.FAN_CLOSE_WRITE|unix.FAN_EVENT_ON_CHILD, dir); err != nil {
			t.Fatalf("%v", err)
		}
		if err := a.Touch(dir + "/a_longer_name_than_eight"); err != nil {
			t.Fatalf("%v", err)
		}
		events := readRaw(t, g)
		if len(events) != 2 {
			t.Errorf("events of one create: %d, want 2 (FAN_CREATE, FAN_CLOSE_WRITE)", len(events))
		}
		for i, e := range events {
			checkMetadata(t, i, e)
			var types []string
			for rest := e[metadataLen:]; len(rest) > 0; {
				if len(rest) < 4 {
					t.Errorf("event [%d]: %d bytes after the last record, too few for a header", i, len(rest))
					break
				}
				typ, pad, ln := rest[0], rest[1], int(binary.NativeEndian.Uint16(rest[2:]))
				types = append(types, fanotify.InfoTypeString(typ))
				if pad != 0 {
					t.Errorf("event [%d]: %s record pad %d, want 0", i, fanotify.InfoTypeString(typ), pad)
				}
				if ln < 4 || ln > len(rest) {
					t.Errorf("event [%d]: %s record len %d, %d bytes left in event_len", i, fanotify.InfoTypeString(typ), ln, len(rest))
					break
				}
				if typ == unix.FAN_EVENT_INFO_TYPE_PIDFD && ln >= 8 {
					if pidfd := int32(binary.NativeEndian.Uint32(rest[4:])); pidfd >= 0 {
						unix.Close(int(pidfd))
					}
				}
				rest = rest[ln:]
			}
			// The child's events carry DFID_NAME, FID and PIDFD
			// (fanotify_init(2) FAN_REPORT_DFID_NAME|FAN_REPORT_FID,
			// FAN_REPORT_PIDFD); FAN_CREATE has no FID without
			// FAN_REPORT_TARGET_FID.
			if len(types) < 2 {
				t.Errorf("event [%d]: records %v, want at least DFID_NAME and PIDFD", i, types)
			}
		}
	})
}

// checkMetadata checks the fixed fields of one raw event.
func checkMetadata(t *harness.T, i int, e []byte) {
	t.Helper()
	vers, reserved, mlen := e[4], e[5], binary.NativeEndian.Uint16(e[6:])
	if vers != unix.FANOTIFY_METADATA_VERSION || reserved != 0 || mlen != metadataLen {
		t.Errorf("event [%d]: vers %d reserved %d metadata_len %d, want %d 0 %d", i, vers, reserved, mlen, unix.FANOTIFY_METADATA_VERSION, metadataLen)
	}
	if fd := int32(binary.NativeEndian.Uint32(e[16:])); fd >= 0 {
		unix.Close(int(fd))
	}
}

// readRaw reads the group's queued events as bytes, split at each
// event_len (which must stay inside what read returned).
func readRaw(t *harness.T, g *fanotify.Group) [][]byte {
	t.Helper()
	var out [][]byte
	buf := make([]byte, 65536)
	for {
		n, err := unix.Read(g.Fd(), buf)
		if errors.Is(err, unix.EAGAIN) {
			return out
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		out = append(out, splitEvents(t, buf[:n])...)
	}
}

// splitEvents splits what one read returned at each event_len (which must
// stay inside it).
func splitEvents(t *harness.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		if len(b) < metadataLen {
			t.Fatalf("read returned %d bytes after the last whole event", len(b))
		}
		l := int(binary.NativeEndian.Uint32(b))
		if l < metadataLen || l > len(b) {
			t.Fatalf("event_len %d with %d bytes left of the read", l, len(b))
		}
		out = append(out, append([]byte(nil), b[:l]...))
		b = b[l:]
	}
	return out
}

// specPollReadable: fanotify(7) "When an fanotify event occurs, the
// fanotify file descriptor indicates as readable when passed to epoll(7),
// poll(2), or select(2)"; fanotify_poll (fanotify_user.c) says POLLIN
// while the notification list is not empty.
func specPollReadable(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_NONBLOCK, unix.O_RDONLY)
	if err := g.Add(0, unix.FAN_OPEN, f); err != nil {
		t.Fatalf("%v", err)
	}
	readable := func() bool {
		fds := []unix.PollFd{{Fd: int32(g.Fd()), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		return n == 1 && fds[0].Revents&unix.POLLIN != 0
	}
	if readable() {
		t.Errorf("poll: an empty group is readable")
	}
	openClose(t, a, f, unix.O_RDONLY)
	if !readable() {
		t.Errorf("poll: a group with a queued FAN_OPEN is not readable")
	}
	evs, err := g.Drain()
	fanotify.CloseEventFds(evs)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if readable() {
		t.Errorf("poll: the group is readable after its only event was read")
	}
}

// oLargefile is the kernel's O_LARGEFILE, which fanotify_init adds to
// event_f_flags on 64-bit (force_o_largefile): include/uapi/asm-generic/fcntl.h
// (x86) and arch/arm64/include/uapi/asm/fcntl.h. golang.org/x/sys/unix has
// 0 for it on amd64.
func oLargefile() (uint64, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return 0o100000, true
	case "arm64":
		return 0o400000, true
	}
	return 0, false
}

// kernelDev is the kernel's internal dev_t (MKDEV: major<<20 | minor),
// which fdinfo prints as sdev.
func kernelDev(dev uint64) uint64 { return uint64(unix.Major(dev))<<20 | uint64(unix.Minor(dev)) }

// specFdinfoLines: fs/notify/fdinfo.c fanotify_show_fdinfo prints
// "fanotify flags:%x event-flags:%x" (the init flags within
// FANOTIFY_INIT_FLAGS and the event_f_flags the group keeps), then
// fanotify_fdinfo one line per mark: "fanotify ino:%llx sdev:%x mflags:%x
// mask:%x ignored_mask:%x " and show_mark_fhandle's "fhandle-bytes:%x
// fhandle-type:%x f_handle:" with the handle in hex; "fanotify mnt_id:%x
// mflags:%x mask:%x ignored_mask:%x"; "fanotify sdev:%x mflags:%x mask:%x
// ignored_mask:%x". fanotify(7) /proc interfaces points there.
func specFdinfoLines(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	fid := expect.FID(t, f)
	st := setup.Stat(t, f)
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, t.Dir(), 0, unix.STATX_MNT_ID, &stx); err != nil {
		t.Fatalf("setup: statx: %v", err)
	}
	if stx.Mask&unix.STATX_MNT_ID == 0 {
		t.Skipf("statx gives no STATX_MNT_ID (needs >= 5.8)")
	}
	const initFlags = unix.FAN_CLASS_NOTIF | unix.FAN_CLOEXEC | unix.FAN_NONBLOCK | unix.FAN_UNLIMITED_QUEUE
	const eventFlags = unix.O_RDONLY | unix.O_NOATIME
	g := t.Fanotify(initFlags, eventFlags)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%v", err)
		}
	}
	must(g.Add(0, unix.FAN_OPEN, f))
	must(g.Add(unix.FAN_MARK_IGNORED_MASK|unix.FAN_MARK_IGNORED_SURV_MODIFY, unix.FAN_CLOSE_WRITE, f))
	must(g.Add(unix.FAN_MARK_MOUNT, unix.FAN_CLOSE_NOWRITE, t.Dir()))
	must(g.Add(unix.FAN_MARK_FILESYSTEM, unix.FAN_MODIFY|unix.FAN_ONDIR, t.Dir()))
	// The group's own line; the mark lines in the order the kernel keeps
	// them (per object kind, not specified), so they are compared as a set.
	wantGroup := fmt.Sprintf("fanotify flags:%x event-flags:", initFlags)
	wantEv := uint64(eventFlags)
	if lf, ok := oLargefile(); ok {
		wantEv |= lf
		wantGroup += fmt.Sprintf("%x", wantEv)
	}
	handleBytes := len(fid.Handle) / 2
	want := map[string]bool{
		fmt.Sprintf("fanotify ino:%x sdev:%x mflags:%x mask:%x ignored_mask:%x fhandle-bytes:%x fhandle-type:%x f_handle:%s",
			st.Ino, kernelDev(st.Dev), unix.FAN_MARK_IGNORED_SURV_MODIFY, unix.FAN_OPEN, unix.FAN_CLOSE_WRITE, handleBytes, fid.HandleType, fid.Handle): true,
		fmt.Sprintf("fanotify mnt_id:%x mflags:0 mask:%x ignored_mask:0", stx.Mnt_id, unix.FAN_CLOSE_NOWRITE):              true,
		fmt.Sprintf("fanotify sdev:%x mflags:0 mask:%x ignored_mask:0", kernelDev(st.Dev), unix.FAN_MODIFY|unix.FAN_ONDIR): true,
	}
	// A mark line that lacks only its handle is read again (harness/fdinfo:
	// on 7.x show_mark_fhandle leaves it out while another task holds the
	// filesystem's s_umount).
	type fdinfoText struct {
		data  string
		lines []string
	}
	read := func() (fdinfoText, error) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", g.Fd()))
		var x fdinfoText
		x.data = string(data)
		for _, l := range strings.Split(x.data, "\n") {
			if strings.HasPrefix(l, "fanotify ") {
				x.lines = append(x.lines, strings.TrimSpace(l))
			}
		}
		return x, err
	}
	// handleless: the wanted lines the text has only without their handle.
	handleless := func(x fdinfoText) []string {
		var out []string
		for l := range want {
			if bare, had := fdinfo.WithoutHandle(l); had && !slices.Contains(x.lines, l) && slices.Contains(x.lines, bare) {
				out = append(out, l)
			}
		}
		return out
	}
	x, reads, err := fdinfo.ReadUntil(read, func(x fdinfoText) bool { return len(handleless(x)) > 0 })
	if err != nil {
		t.Fatalf("%v", err)
	}
	data, lines := x.data, x.lines
	got := map[string]bool{}
	for _, l := range lines[min(1, len(lines)):] {
		got[l] = true
	}
	for _, l := range handleless(x) {
		bare, _ := fdinfo.WithoutHandle(l)
		t.Errorf("fdinfo has the line %q without its file handle, want %q: %s", bare, l, fdinfo.MissingNote(reads))
		delete(want, l)
		delete(got, bare)
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], wantGroup) || (len(wantGroup) > len("fanotify flags:0 event-flags:") && lines[0] != wantGroup) {
		t.Errorf("fdinfo group line: %q, want %q", first(lines), wantGroup)
	}
	for l := range want {
		if !got[l] {
			t.Errorf("fdinfo lacks the line %q", l)
		}
	}
	for l := range got {
		if !want[l] {
			t.Errorf("fdinfo has the line %q, not one of the three marks' lines", l)
		}
	}
	if t.Failed() {
		t.Logf("fdinfo:\n%s", data)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// specOverflowFdError: fanotify(7) fd "When an fanotify group is
// initialized using FAN_REPORT_FD_ERROR, ... in case of a queue overflow,
// the value will be -EBADF" (copy_event_to_user starts fd at -EBADF and the
// overflow event has no path). The events before it are FAN_CREATE of a FID
// group, which have no path either.
func specOverflowFdError(t *harness.T) {
	dir := t.Path("q")
	setup.Mkdir(t, dir)
	var g *fanotify.Group
	limit := queuelimit.Fanotify.Open(t, func() {
		g = t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME|unix.FAN_REPORT_FD_ERROR, unix.O_RDONLY)
	})
	if err := g.Add(0, unix.FAN_CREATE, dir); err != nil {
		t.Fatalf("%v", err)
	}
	for i := 0; i < limit+2; i++ {
		if err := unix.Mknod(fmt.Sprintf("%s/n%d", dir, i), unix.S_IFREG|0o644, 0); err != nil {
			t.Fatalf("mknod n%d: %v", i, err)
		}
	}
	evs, err := g.Drain()
	if err != nil {
		t.Fatalf("reading events: %v", err)
	}
	if len(evs) != limit+1 {
		t.Errorf("queue limit %d, %d creates: %d events, want %d (the limit, then FAN_Q_OVERFLOW)", limit, limit+2, len(evs), limit+1)
	}
	if len(evs) == 0 {
		return
	}
	last := evs[len(evs)-1]
	if uint64(last.Mask) != unix.FAN_Q_OVERFLOW || last.Fd != -int32(unix.EBADF) {
		t.Errorf("last event %s fd %d, want FAN_Q_OVERFLOW with fd -EBADF (%d)", last, last.Fd, -int32(unix.EBADF))
	}
}

// specReadEmfile: fanotify(7) ERRORS EMFILE "The per-process limit on the
// number of open files has been reached" for read(2): copy_event_to_user's
// create_fd fails and, without FAN_REPORT_FD_ERROR, the read returns that
// error; with it the event carries it as fd (fanotify_init(2)
// FAN_REPORT_FD_ERROR). The read happens in a child whose RLIMIT_NOFILE is
// its lowest free descriptor (readAtFdLimit, fdlimit.go: the case process's
// own limit never changes).
func specReadEmfile(t *harness.T) {
	for _, v := range []struct {
		name  string
		flags uint
	}{{"without_fd_error", 0}, {"with_fd_error", unix.FAN_REPORT_FD_ERROR}} {
		t.Run(v.name, func(t *harness.T) {
			if v.flags != 0 {
				t.Require(feature.ReportFdError)
			}
			f := t.Path(v.name)
			setup.Touch(t, f)
			a := t.Actor()
			g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_NONBLOCK|v.flags, unix.O_RDONLY)
			if err := g.Add(0, unix.FAN_OPEN, f); err != nil {
				t.Fatalf("%v", err)
			}
			openClose(t, a, f, unix.O_RDONLY)
			evs, err := readAtFdLimit(t, g, 0)
			if v.flags == 0 {
				expect.Errno(t, "read(2) of a FAN_OPEN with no descriptor left", err, unix.EMFILE)
				return
			}
			if err != nil {
				t.Fatalf("read(2) with FAN_REPORT_FD_ERROR and no descriptor left: %v, want the event", err)
			}
			if len(evs) != 1 || uint64(evs[0].Mask) != unix.FAN_OPEN || evs[0].Fd != -int32(unix.EMFILE) {
				t.Errorf("events with no descriptor left: %v, want one FAN_OPEN with fd -EMFILE (%d)", evs, -int32(unix.EMFILE))
			}
		})
	}
	t.Run("after_an_event", specReadAfterAnEvent)
}

// specReadAfterAnEvent: fanotify(7) BUGS "If a call to read(2) processes
// multiple events from the fanotify queue and an error occurs, the return
// value will be the total size of the events successfully copied to the
// user-space buffer before the error occurred" (fanotify_read returns the
// bytes copied when it has any). Room for one descriptor: the first event's
// fd installs, the second's fails.
func specReadAfterAnEvent(t *harness.T) {
	f, h := t.Path("after_f"), t.Path("after_h")
	setup.Touch(t, f, h)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_NONBLOCK, unix.O_RDONLY)
	for _, p := range []string{f, h} {
		if err := g.Add(0, unix.FAN_OPEN, p); err != nil {
			t.Fatalf("%v", err)
		}
	}
	openClose(t, a, f, unix.O_RDONLY)
	openClose(t, a, h, unix.O_RDONLY)
	evs, err := readAtFdLimit(t, g, 1)
	if err != nil {
		t.Fatalf("read(2) of two FAN_OPEN events with room for one descriptor: %v, want the first event", err)
	}
	expect.Fanotify(t, "marks FAN_OPEN on f and h; actor opens f then h; read with room for one descriptor", evs, []fanotify.Event{fev(unix.FAN_OPEN, a.Pid(), f)})
}

// specReadEtxtbsy: fanotify(7) ERRORS ETXTBSY "returned by read(2) if
// O_RDWR or O_WRONLY was specified in the event_f_flags argument ... and an
// event occurred for a monitored file that is currently being executed": the
// event fd's open meets the executable's denied write access. The program is
// a copy of sleep(1) the actor runs; the read happens once it runs. The copy
// is named "sleep": in the VM guests sleep(1) is busybox, which picks its
// applet from argv[0] (as "prog" it exits 127 at once).
func specReadEtxtbsy(t *harness.T) {
	src := setup.Program(t, "sleep")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	prog := t.Path("sleep")
	setup.WriteFileMode(t, prog, data, 0o755)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_NONBLOCK, unix.O_RDWR)
	if err := g.Add(0, unix.FAN_OPEN, prog); err != nil {
		t.Fatalf("%v", err)
	}
	p, err := a.Send(actor.Op{Kind: "exec", Path: prog, Args: []string{"30"}})
	if err != nil {
		t.Fatalf("%v", err)
	}
	pid := waitRunning(t, prog, 10*time.Second)
	defer func() {
		unix.Kill(pid, unix.SIGKILL)
		p.Wait(10 * time.Second)
	}()
	_, err = unix.Read(g.Fd(), make([]byte, 4096))
	expect.Errno(t, "read(2) of the FAN_OPEN of a running program with O_RDWR event fds", err, unix.ETXTBSY)
}

// waitRunning returns the pid of the process executing prog, once there is
// one (its /proc/PID/exe names prog), or fails after d.
func waitRunning(t *harness.T, prog string, d time.Duration) int {
	t.Helper()
	want, err := os.Stat(prog)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			var pid int
			if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
				continue
			}
			// The same path is not the same program: another suite's
			// binary in its own mount namespace runs its copy under
			// the same name (the hostile condition two_suites_parallel
			// found this case reading before its own exec had begun).
			// /proc/PID/exe resolves to the executable's own inode.
			if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == prog {
				if st, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && os.SameFile(st, want) {
					return pid
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("setup: %s did not start running within %v", prog, d)
	return 0
}

// btrfsSubvolCreate is BTRFS_IOC_SUBVOL_CREATE, _IOW(0x94, 14, struct
// btrfs_ioctl_vol_args) (include/uapi/linux/btrfs.h): the struct is an
// __s64 fd and a 4088-byte name, 4096 bytes.
const btrfsSubvolCreate = 1<<30 | 4096<<16 | 0x94<<8 | 14

// makeSubvolume creates subvolume name in the btrfs directory dir.
func makeSubvolume(t *harness.T, dir, name string) string {
	t.Helper()
	var args [4096]byte
	copy(args[8:], name)
	fd := setup.Open(t, dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), btrfsSubvolCreate, uintptr(unsafe.Pointer(&args[0]))); e != 0 {
		t.Fatalf("setup: BTRFS_IOC_SUBVOL_CREATE %s in %s: %v", name, dir, e)
	}
	return dir + "/" + name
}

// specBtrfsSubvolumeExdev: fanotify_mark(2) EXDEV "The filesystem object
// indicated by path resides within a filesystem subvolume (e.g., btrfs(5))
// which uses a different fsid than its root superblock. This error can be
// returned only with an fanotify group that identifies filesystem objects by
// file handles. Since Linux 6.8, this error will be returned when trying to
// add a mount or filesystem mark on a subvolume, when trying to add inode
// marks in different subvolumes, or when trying to add inode marks in a
// btrfs(5) subvolume and in another filesystem." fanotify_test_fsid refuses
// mount and filesystem marks on a subvolume (the fsid is "weak"),
// fanotify_set_mark_fsid a group's mix of weak and strong fsids. An inode
// mark in a subvolume alone is allowed, and a group reporting fds has no
// fsid to check.
func specBtrfsSubvolumeExdev(t *harness.T) {
	sub := makeSubvolume(t, t.Dir(), "sub")
	top, inSub := t.Path("top"), sub+"/f"
	setup.Touch(t, top, inSub)
	var stTop, stSub unix.Statfs_t
	if unix.Statfs(top, &stTop) != nil || unix.Statfs(inSub, &stSub) != nil || stTop.Fsid == stSub.Fsid {
		t.Fatalf("setup: the subvolume's statfs f_fsid %v is not other than the top volume's %v", stSub.Fsid, stTop.Fsid)
	}
	fid := func() *fanotify.Group { return t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY) }
	for _, k := range []struct {
		name  string
		flags uint
	}{{"FAN_MARK_FILESYSTEM", unix.FAN_MARK_FILESYSTEM}, {"FAN_MARK_MOUNT", unix.FAN_MARK_MOUNT}} {
		g := fid()
		expect.Errno(t, "FID group: "+k.name+" FAN_CLOSE_WRITE on a file in a subvolume", g.Add(k.flags, unix.FAN_CLOSE_WRITE, inSub), unix.EXDEV)
		expect.MarkKinds(t, "after the refused "+k.name, g, "none")
	}
	// Before 6.8 every FID mark on an object whose fsid is not its
	// superblock root's is EXDEV (fanotify_test_fid in 6.1's
	// fs/notify/fanotify/fanotify_user.c: "Make sure dentry is not of a
	// filesystem subvolume"); since 6.8 an inode mark may use that weak
	// fsid while the group watches that one filesystem (fanotify_mark(2)
	// EXDEV, "Since Linux 6.8").
	weak := feature.KernelAtLeast("6.8")
	var wantAlone unix.Errno
	if !weak {
		wantAlone = unix.EXDEV
	}
	alone := fid()
	expect.Errno(t, "FID group: inode mark on a file in a subvolume, the group's only mark", alone.Add(0, unix.FAN_CLOSE_WRITE, inSub), wantAlone)
	fdGroup := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	expect.Errno(t, "fd group: filesystem mark on a file in a subvolume", fdGroup.Add(unix.FAN_MARK_FILESYSTEM, unix.FAN_CLOSE_WRITE, inSub), 0)
	mixed := fid()
	expect.Errno(t, "FID group: inode mark on a file of the top volume", mixed.Add(0, unix.FAN_CLOSE_WRITE, top), 0)
	expect.Errno(t, "FID group with a mark on the top volume: inode mark on a file in a subvolume", mixed.Add(0, unix.FAN_CLOSE_WRITE, inSub), unix.EXDEV)
	expect.MarkKinds(t, "after the refused mixed mark", mixed, "inode")
}

// specFidMarkNoDecode: fanotify_mark(2) EOPNOTSUPP "The object indicated by
// path is associated with a filesystem that does not support the encoding of
// file handles. This error can be returned only with an fanotify group that
// identifies filesystem objects by file handles"; fanotify_test_fid
// (fs/notify/fanotify/fanotify_user.c) also asks a mount or filesystem mark
// for handles that can be decoded ("so user has a way to map back the
// reported fids"). overlayfs with nfs_export=off (the fixture's) encodes
// handles for identification only: name_to_handle_at without AT_HANDLE_FID
// is EOPNOTSUPP there, and so are such marks. A fd group needs no handles.
func specFidMarkNoDecode(t *harness.T) {
	root := t.FS().Root
	// fanotify_test_fsid refuses a zero f_fsid with ENODEV before
	// fanotify_test_fid asks for handles: an overlay whose statfs gives
	// none (over an upper tmpfs before 5.13 gave tmpfs one) cannot show
	// the EOPNOTSUPP checked here.
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		t.Fatalf("setup: statfs %s: %v", root, err)
	}
	if st.Fsid == (unix.Fsid{}) {
		t.Skipf("overlayfs at %s reports a zero f_fsid on this kernel: fanotify_mark(2) refuses it with ENODEV (fanotify_test_fsid) before the handle check", root)
	}
	if _, _, err := unix.NameToHandleAt(unix.AT_FDCWD, root, 0); !errors.Is(err, unix.EOPNOTSUPP) {
		t.Fatalf("setup: name_to_handle_at(%s) without AT_HANDLE_FID: %v, want EOPNOTSUPP (overlayfs with nfs_export=off cannot decode handles)", root, err)
	}
	for _, k := range []struct {
		name  string
		flags uint
	}{{"FAN_MARK_FILESYSTEM", unix.FAN_MARK_FILESYSTEM}, {"FAN_MARK_MOUNT", unix.FAN_MARK_MOUNT}} {
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
		expect.Errno(t, "FID group: "+k.name+" FAN_CLOSE_WRITE on overlayfs (nfs_export=off)", g.Add(k.flags, unix.FAN_CLOSE_WRITE, root), unix.EOPNOTSUPP)
		expect.MarkKinds(t, "after the refused "+k.name, g, "none")
	}
	fd := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	expect.Errno(t, "fd group: FAN_MARK_FILESYSTEM on overlayfs", fd.Add(unix.FAN_MARK_FILESYSTEM, unix.FAN_CLOSE_WRITE, root), 0)
}

// specReportMntNoFdError: fanotify_init (fs/notify/fanotify/fanotify_user.c)
// "Don't allow mixing mnt events with inode events for now": with
// FAN_REPORT_MNT, FAN_REPORT_FD_ERROR (as the FID flags) is EINVAL.
func specReportMntNoFdError(t *harness.T) {
	for _, r := range []struct {
		flags uint
		want  unix.Errno
	}{
		{unix.FAN_REPORT_MNT, 0},
		{unix.FAN_REPORT_FD_ERROR, 0},
		{unix.FAN_REPORT_MNT | unix.FAN_REPORT_FD_ERROR, unix.EINVAL},
	} {
		fd, err := unix.FanotifyInit(r.flags|unix.FAN_CLOEXEC, unix.O_RDONLY)
		if err == nil {
			unix.Close(fd)
		}
		expect.Errno(t, "fanotify_init("+fanotify.InitFlagsString(r.flags)+")", err, r.want)
	}
}

// specPreAccessOndirUpdate: fanotify_may_update_existing_mark
// (fs/notify/fanotify/fanotify_user.c) "For now pre-content events are not
// generated for directories": the mask an update would give a mark may not
// hold both FAN_PRE_ACCESS and FAN_ONDIR (EEXIST); one call with both is
// EINVAL (do_fanotify_mark, spec_mark_refusals/pre_access_ondir). ext4 takes
// pre-content marks (SB_I_ALLOW_HSM).
func specPreAccessOndirUpdate(t *harness.T) {
	t.Require(feature.PreContentOn(t.FS().Type))
	d := t.Path("d")
	setup.Mkdir(t, d)
	for _, v := range []struct {
		name         string
		first, later uint64
	}{
		{"FAN_OPEN|FAN_ONDIR, then FAN_PRE_ACCESS", unix.FAN_OPEN | unix.FAN_ONDIR, unix.FAN_PRE_ACCESS},
		{"FAN_PRE_ACCESS, then FAN_ONDIR", unix.FAN_PRE_ACCESS, unix.FAN_OPEN | unix.FAN_ONDIR},
	} {
		g := t.Fanotify(unix.FAN_CLASS_PRE_CONTENT, unix.O_RDONLY)
		if err := g.Add(0, v.first, d); err != nil {
			t.Fatalf("%s: first mark: %v", v.name, err)
		}
		expect.Errno(t, "directory mark "+v.name, g.Add(0, v.later, d), unix.EEXIST)
		ms, err := g.Marks()
		if err != nil {
			t.Fatalf("%v", err)
		}
		if len(ms) != 1 || uint64(ms[0].Mask) != v.first {
			t.Errorf("%s: fdinfo after the refused update %v, want one mark with mask %s", v.name, ms, fanotify.Mask(v.first))
		}
	}
}
