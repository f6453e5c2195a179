package main

import (
	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// specCases check rules of the man pages no earlier case checked; each
// names its rule ids in spec.go.
var specCases = []harness.Case{{
	Name: "disconnected_dentry_dir_fid_only.fanotify",
	Doc: "a file reopened by handle after its dentry was dropped (no parent) is not reported to a FAN_REPORT_DIR_FID group " +
		"without FAN_REPORT_FID, and is once it is reached through its path (fanotify_init(2) FAN_REPORT_DIR_FID: \"Without the " +
		"FAN_REPORT_FID flag, no event will be reported\"); ext4 only: tmpfs pins every dentry",
	Filesystems: []string{"ext4"},
	Needs:       []*feature.Feature{feature.ReportDFIDName},
	Run:         disconnectedDirFidOnly,
}}

// disconnectedDirFidOnly: as disconnectedFanotify, with a group that reports
// the parent only (FAN_REPORT_DIR_FID): fanotify_alloc_event has no record
// to give an event on an object without a parent and drops it
// (fanotify_handle_event: "no parent fid to report"). Its mark is on the
// file itself; a FID group's mark on it shows the event happened.
func disconnectedDirFidOnly(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	h := e.handleOf(f)
	fid := e.fid(f)
	dfid, err := fanotify.DFIDOf(e.w)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	dirOnly := &fanL{e: e, g: t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DIR_FID, unix.O_RDONLY), name: "dir_fid"}
	self := e.fanotify("self")
	dirOnly.mark(0, unix.FAN_MODIFY, f)
	self.mark(0, unix.FAN_MODIFY, f)
	pid := e.disconnectedWrite(f, h, dirOnly, self)
	dirOnly.check()
	self.check(fanEventPid(unix.FAN_MODIFY, pid, fid))
	// Through the path the file has a parent again: the DIR_FID group
	// reports its parent's handle, in a record of type FID:
	// copy_info_records (fs/notify/fanotify/fanotify_user.c) gives the one
	// record of a non-directory's non-dirent event that type ("a single
	// info record has type FID for event on a non-directory"), where
	// fanotify_init(2) calls the parent's record DFID.
	fd := e.open(f, unix.O_WRONLY)
	e.write(fd)
	dirOnly.check(e.fev(unix.FAN_MODIFY, dfid.WithType(unix.FAN_EVENT_INFO_TYPE_FID)))
	self.check(e.fev(unix.FAN_MODIFY, e.child(e.w, "f", fid)...))
	if err := e.a.Close(fd); err != nil {
		t.Fatalf("%v", err)
	}
	e.quiet(dirOnly, self)
}
