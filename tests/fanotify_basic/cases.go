package main

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/queuelimit"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// Every expectation below comes from fanotify(7), fanotify_init(2),
// fanotify_mark(2) or the kernel source named next to it. Each case prepares
// its files from the test process before any mark exists and then acts only
// through the actor (the overflow cases excepted, as they say). Events are
// drained after every step, so fanotify's merging of queued events for the
// same object and pid (fanotify(7): "consecutive events for the same
// filesystem object and originating from the same process may be merged")
// only happens where a case wants it.

var cases = []harness.Case{
	{
		Name: "inode_mark_file",
		Doc:  "an inode mark on a file reports open, modify, access and both closes with the actor's pid and an fd for the file; a sibling is not reported",
		Run:  inodeMarkFile,
	},
	{
		Name: "inode_mark_dir",
		Doc:  "a directory's inode mark reports its children only with FAN_EVENT_ON_CHILD and itself only with FAN_ONDIR (no FAN_ONDIR bit without FIDs)",
		Run:  inodeMarkDir,
		// Subtests: inodeMarkDir's table, so that a skip keeps these leaves.
		Subtests: []string{"on_child", "no_flag", "ondir", "on_child_ondir"},
	},
	{
		Name: "mount_mark_scope",
		Doc:  "a mount mark reports opens through its mount anywhere below it and not through a bind mount of the same directory",
		Run:  mountMarkScope,
	},
	{
		Name:  "filesystem_mark_scope",
		Doc:   "a filesystem mark reports opens through the mount and through a bind mount, with each one's path",
		Needs: []*feature.Feature{feature.MarkFilesystem},
		Run:   filesystemMarkScope,
	},
	{
		Name:  "fid_inode_mark",
		Doc:   "FAN_REPORT_FID: events on a marked file carry FAN_NOFD and one FID record equal to statfs f_fsid + name_to_handle_at",
		Needs: []*feature.Feature{feature.ReportFID},
		Run:   fidInodeMark,
	},
	{
		Name:  "fid_dirent",
		Doc:   "FAN_REPORT_FID: create/delete/move in a marked dir report the directory's FID, FAN_ONDIR for subdirs, and a rename merges into one event",
		Needs: []*feature.Feature{feature.ReportFID},
		Run:   fidDirent,
	},
	{
		Name:  "dfid_name_filesystem_mark",
		Doc:   "FAN_REPORT_DFID_NAME with a filesystem mark: parent FID + entry name for each event, \".\" for the directory itself",
		Needs: []*feature.Feature{feature.ReportDFIDName, feature.MarkFilesystem},
		Run:   dfidNameFilesystemMark,
	},
	{
		Name:  "dfid_name_fid_records",
		Doc:   "FAN_REPORT_DFID_NAME|FAN_REPORT_FID: a child's events carry DFID_NAME then the child's FID; dirent and directory events carry DFID_NAME only",
		Needs: []*feature.Feature{feature.ReportDFIDName},
		Run:   dfidNameFidRecords,
	},
	{
		Name:  "dirent_events_need_fid",
		Doc:   "dirent events are EINVAL for a group without FIDs and on a mount mark; accepted on an inode mark of a FID group",
		Needs: []*feature.Feature{feature.ReportFID},
		Run:   direntEventsNeedFid,
	},
	{
		Name: "mark_onlydir",
		Doc:  "FAN_MARK_ONLYDIR on a file fails with ENOTDIR and adds no mark; on a directory it marks",
		Run:  markOnlydir,
	},
	{
		Name: "mark_dont_follow",
		Doc:  "FAN_MARK_DONT_FOLLOW marks the symlink itself (opening through it reports nothing); without it the target is marked",
		Run:  markDontFollow,
		// Subtests: markDontFollow's table, so that a skip keeps these leaves.
		Subtests: []string{"dont_follow", "follow"},
	},
	{
		Name:  "mark_flush",
		Doc:   "FAN_MARK_FLUSH removes only filesystem, only mount, or only inode marks; other flags with it are EINVAL",
		Needs: []*feature.Feature{feature.MarkFilesystem},
		Run:   markFlush,
	},
	{
		Name:  "queue_overflow",
		Doc:   "past the queue limit the queue ends with one FAN_Q_OVERFLOW (FAN_NOFD, pid 0, no record), later events are dropped, and it accepts events again once read",
		Needs: []*feature.Feature{feature.ReportDFIDName},
		Run:   queueOverflow,
	},
	{
		Name:  "unlimited_queue",
		Doc:   "FAN_UNLIMITED_QUEUE keeps every event past the limit a plain group created with it overflows at, and never reports FAN_Q_OVERFLOW",
		Needs: []*feature.Feature{feature.ReportDFIDName},
		Run:   unlimitedQueue,
	},
}

// inodeMarkFile: fanotify(7) event bits FAN_OPEN, FAN_MODIFY, FAN_ACCESS,
// FAN_CLOSE_WRITE, FAN_CLOSE_NOWRITE; "pid ... the PID of the process that
// caused the event"; fd "an open file descriptor for the object being accessed".
func inodeMarkFile(t *harness.T) {
	f, g := t.Path("f"), t.Path("g")
	setup.WriteFile(t, f, "")
	setup.WriteFile(t, g, "")
	a := t.Actor()
	pid := a.Pid()
	grp := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	mark(t, grp, 0, unix.FAN_OPEN|unix.FAN_ACCESS|unix.FAN_MODIFY|unix.FAN_CLOSE, f)
	var fd int
	expect.FanotifySteps(t, grp, fdGroup, "inode mark on f OPEN|ACCESS|MODIFY|CLOSE", []step{
		{Did: "open f O_RDWR", Do: func() (err error) { fd, err = a.Open(f, unix.O_RDWR, 0); return }, Want: []fanotify.Event{fev(unix.FAN_OPEN, pid, f)}},
		{Did: "write 1 byte", Do: func() error { _, err := a.Write(fd, []byte("x")); return err }, Want: []fanotify.Event{fev(unix.FAN_MODIFY, pid, f)}},
		{Did: "pread 1 byte at 0", Do: func() error {
			r, err := a.Do(actor.Op{Kind: "pread", Fd: fd, N: 1, Off: 0})
			if err == nil {
				err = r.Err()
			}
			if err == nil && r.N != 1 {
				err = fmt.Errorf("pread returned %d bytes, want 1", r.N)
			}
			return err
		}, Want: []fanotify.Event{fev(unix.FAN_ACCESS, pid, f)}},
		{Did: "close", Do: func() error { return a.Close(fd) }, Want: []fanotify.Event{fev(unix.FAN_CLOSE_WRITE, pid, f)}},
		{Did: "open f O_RDONLY", Do: func() (err error) { fd, err = a.Open(f, unix.O_RDONLY, 0); return }, Want: []fanotify.Event{fev(unix.FAN_OPEN, pid, f)}},
		{Did: "close", Do: func() error { return a.Close(fd) }, Want: []fanotify.Event{fev(unix.FAN_CLOSE_NOWRITE, pid, f)}},
		{Did: "open sibling g O_RDWR; write; close", Do: func() error { return a.WriteFile(g, []byte("x")) }, Want: nil},
	})
}

// inodeMarkDir: fanotify_mark(2) FAN_EVENT_ON_CHILD "Events for the immediate
// children of marked directories shall be created"; FAN_ONDIR "Without this
// flag, events are created only for files"; fanotify(7) "The FAN_ONDIR flag is
// reported in an event mask only if the fanotify group identifies filesystem
// objects by file handles" (fs/notify/fanotify/fanotify.c
// fanotify_group_event_mask strips the event flags for fd groups).
func inodeMarkDir(t *harness.T) {
	for _, v := range []struct {
		name      string
		flags     uint64
		wantChild bool
		wantDir   bool
	}{
		{"on_child", unix.FAN_EVENT_ON_CHILD, true, false},
		{"no_flag", 0, false, false},
		{"ondir", unix.FAN_ONDIR, false, true},
		{"on_child_ondir", unix.FAN_EVENT_ON_CHILD | unix.FAN_ONDIR, true, true},
	} {
		t.Run(v.name, func(t *harness.T) {
			dir := t.Path(v.name)
			setup.Mkdir(t, dir)
			child := filepath.Join(dir, "c")
			setup.WriteFile(t, child, "")
			a := t.Actor()
			pid := a.Pid()
			grp := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
			mask := unix.FAN_OPEN | v.flags
			mark(t, grp, 0, mask, dir)
			var onChild, onDir []fanotify.Event
			if v.wantChild {
				onChild = []fanotify.Event{fev(unix.FAN_OPEN, pid, child)}
			}
			if v.wantDir {
				onDir = []fanotify.Event{fev(unix.FAN_OPEN, pid, dir)}
			}
			expect.FanotifySteps(t, grp, fdGroup, "inode mark on dir "+fanotify.Mask(mask).String(), []step{
				{Did: "open dir/c; close", Do: func() error { return openClose(a, child, unix.O_RDONLY) }, Want: onChild},
				{Did: "open dir O_DIRECTORY; close", Do: func() error { return openClose(a, dir, unix.O_RDONLY|unix.O_DIRECTORY) }, Want: onDir},
			})
		})
	}
}

// mountMarkScope: fanotify_mark(2) FAN_MARK_MOUNT "Mark the mount specified by
// pathname ... All directories, subdirectories, and the contained files of the
// mount will be monitored"; a bind mount is another mount.
func mountMarkScope(t *harness.T) {
	sub := t.Path("sub")
	setup.Mkdir(t, sub)
	f := filepath.Join(sub, "f")
	setup.WriteFile(t, f, "")
	bind := setup.BindMount(t, t.Dir())
	a := t.Actor()
	pid := a.Pid()
	grp := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	mark(t, grp, unix.FAN_MARK_MOUNT, unix.FAN_OPEN, t.FS().Root)
	expect.FanotifySteps(t, grp, fdGroup, "mount mark on the fs root FAN_OPEN; "+t.Dir()+" bind-mounted on "+bind, []step{
		{Did: "open sub/f; close", Do: func() error { return openClose(a, f, unix.O_RDONLY) }, Want: []fanotify.Event{fev(unix.FAN_OPEN, pid, f)}},
		{Did: "open sub/f through the bind mount; close", Do: func() error { return openClose(a, filepath.Join(bind, "sub", "f"), unix.O_RDONLY) }, Want: nil},
	})
}

// filesystemMarkScope: fanotify_mark(2) FAN_MARK_FILESYSTEM "Mark the
// filesystem specified by pathname. The filesystem containing pathname will be
// marked. All the contained files and directories of the filesystem from any
// mount point will be monitored."
func filesystemMarkScope(t *harness.T) {
	sub := t.Path("sub")
	setup.Mkdir(t, sub)
	f := filepath.Join(sub, "f")
	setup.WriteFile(t, f, "")
	bind := setup.BindMount(t, t.Dir())
	bf := filepath.Join(bind, "sub", "f")
	a := t.Actor()
	pid := a.Pid()
	grp := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	mark(t, grp, unix.FAN_MARK_FILESYSTEM, unix.FAN_OPEN, t.FS().Root)
	expect.FanotifySteps(t, grp, fdGroup, "filesystem mark FAN_OPEN; "+t.Dir()+" bind-mounted on "+bind, []step{
		{Did: "open sub/f; close", Do: func() error { return openClose(a, f, unix.O_RDONLY) }, Want: []fanotify.Event{fev(unix.FAN_OPEN, pid, f)}},
		{Did: "open sub/f through the bind mount; close", Do: func() error { return openClose(a, bf, unix.O_RDONLY) }, Want: []fanotify.Event{fev(unix.FAN_OPEN, pid, bf)}},
	})
}

// fidInodeMark: fanotify_init(2) FAN_REPORT_FID "An additional record of type
// FAN_EVENT_INFO_TYPE_FID encapsulates the information about the object";
// fanotify(7) fsid "the same value as f_fsid when calling statfs(2)",
// file_handle "as returned by name_to_handle_at(2)".
func fidInodeMark(t *harness.T) {
	f := t.Path("f")
	setup.WriteFile(t, f, "")
	fid := expect.FID(t, f)
	a := t.Actor()
	pid := a.Pid()
	grp := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
	mark(t, grp, 0, unix.FAN_OPEN|unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE|unix.FAN_ATTRIB, f)
	var fd int
	expect.FanotifySteps(t, grp, fidGroup, "FAN_REPORT_FID; inode mark on f OPEN|MODIFY|CLOSE_WRITE|ATTRIB", []step{
		{Did: "open f O_WRONLY", Do: func() (err error) { fd, err = a.Open(f, unix.O_WRONLY, 0); return }, Want: []fanotify.Event{fev(unix.FAN_OPEN, pid, "", fid)}},
		{Did: "write 1 byte", Do: func() error { _, err := a.Write(fd, []byte("x")); return err }, Want: []fanotify.Event{fev(unix.FAN_MODIFY, pid, "", fid)}},
		{Did: "close", Do: func() error { return a.Close(fd) }, Want: []fanotify.Event{fev(unix.FAN_CLOSE_WRITE, pid, "", fid)}},
		{Did: "chmod f 0600", Do: func() error { return a.Chmod(f, 0o600) }, Want: []fanotify.Event{fev(unix.FAN_ATTRIB, pid, "", fid)}},
	})
}

// fidDirent: fanotify_init(2) FAN_REPORT_FID "without the flag
// FAN_REPORT_TARGET_FID, for the directory entry modification events, there
// is an information record that identifies the modified directory";
// fanotify_mark(2) FAN_ONDIR is required for mkdir/rmdir; fanotify.c
// fanotify_group_event_mask reports FAN_ONDIR in FID mode. A rename within the
// directory queues FAN_MOVED_FROM then FAN_MOVED_TO for the same directory FID
// and pid, which fanotify_merge/fanotify_should_merge fold into one event.
func fidDirent(t *harness.T) {
	dir := t.Path("d")
	setup.Mkdir(t, dir)
	fid := expect.FID(t, dir)
	a := t.Actor()
	pid := a.Pid()
	grp := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
	mark(t, grp, 0, unix.FAN_CREATE|unix.FAN_DELETE|unix.FAN_MOVE|unix.FAN_ONDIR, dir)
	f, g, sub := filepath.Join(dir, "f"), filepath.Join(dir, "g"), filepath.Join(dir, "sub")
	expect.FanotifySteps(t, grp, fidGroup, "FAN_REPORT_FID; inode mark on d CREATE|DELETE|MOVE|ONDIR", []step{
		{Did: "create d/f", Do: func() error { return a.Touch(f) }, Want: []fanotify.Event{fev(unix.FAN_CREATE, pid, "", fid)}},
		{Did: "mkdir d/sub", Do: func() error { return a.Mkdir(sub, 0o755) }, Want: []fanotify.Event{fev(unix.FAN_CREATE|unix.FAN_ONDIR, pid, "", fid)}},
		{Did: "rename d/f d/g", Do: func() error { return a.Rename(f, g) }, Want: []fanotify.Event{fev(unix.FAN_MOVED_FROM|unix.FAN_MOVED_TO, pid, "", fid)}},
		{Did: "unlink d/g", Do: func() error { return a.Unlink(g) }, Want: []fanotify.Event{fev(unix.FAN_DELETE, pid, "", fid)}},
		{Did: "rmdir d/sub", Do: func() error { return a.Rmdir(sub) }, Want: []fanotify.Event{fev(unix.FAN_DELETE|unix.FAN_ONDIR, pid, "", fid)}},
	})
}

// dfidNameFilesystemMark: fanotify(7) DFID_NAME "the file handle is followed by
// a null terminated string that identifies the name of a directory entry in
// that directory, or '.' to identify the directory object itself"; moves are
// reported as MOVED_FROM on the old parent then MOVED_TO on the new one
// (include/linux/fsnotify.h fsnotify_move); different names do not merge.
func dfidNameFilesystemMark(t *harness.T) {
	dir := t.Dir()
	a := t.Actor()
	pid := a.Pid()
	f, sub := t.Path("f"), t.Path("sub")
	g := filepath.Join(sub, "g")
	grp := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME, unix.O_RDONLY)
	mark(t, grp, unix.FAN_MARK_FILESYSTEM,
		unix.FAN_CREATE|unix.FAN_DELETE|unix.FAN_MOVE|unix.FAN_CLOSE|unix.FAN_ONDIR, t.FS().Root)
	// The handles are taken from the test process (statfs and
	// name_to_handle_at queue no event); sub's once the actor made it.
	dirF, dirSub, dirDot := expect.DFIDName(t, dir, "f"), expect.DFIDName(t, dir, "sub"), expect.DFIDName(t, dir, ".")
	setup := "FAN_REPORT_DFID_NAME; filesystem mark CREATE|DELETE|MOVE|CLOSE|ONDIR"
	var fd int
	expect.FanotifySteps(t, grp, fidGroup, setup, []step{
		{Did: "open f O_CREAT|O_WRONLY", Do: func() (err error) { fd, err = a.Open(f, unix.O_CREAT|unix.O_WRONLY, 0o644); return }, Want: []fanotify.Event{fev(unix.FAN_CREATE, pid, "", dirF)}},
		{Did: "close", Do: func() error { return a.Close(fd) }, Want: []fanotify.Event{fev(unix.FAN_CLOSE_WRITE, pid, "", dirF)}},
		{Did: "open the case dir O_DIRECTORY; close", Do: func() error { return openClose(a, dir, unix.O_RDONLY|unix.O_DIRECTORY) }, Want: []fanotify.Event{fev(unix.FAN_CLOSE_NOWRITE|unix.FAN_ONDIR, pid, "", dirDot)}},
		{Did: "mkdir sub", Do: func() error { return a.Mkdir(sub, 0o755) }, Want: []fanotify.Event{fev(unix.FAN_CREATE|unix.FAN_ONDIR, pid, "", dirSub)}},
	})
	subG := expect.DFIDName(t, sub, "g")
	expect.FanotifySteps(t, grp, fidGroup, setup+"; f and sub made", []step{
		{Did: "rename f sub/g", Do: func() error { return a.Rename(f, g) }, Want: []fanotify.Event{fev(unix.FAN_MOVED_FROM, pid, "", dirF), fev(unix.FAN_MOVED_TO, pid, "", subG)}},
		{Did: "unlink sub/g", Do: func() error { return a.Unlink(g) }, Want: []fanotify.Event{fev(unix.FAN_DELETE, pid, "", subG)}},
		{Did: "rmdir sub", Do: func() error { return a.Rmdir(sub) }, Want: []fanotify.Event{fev(unix.FAN_DELETE|unix.FAN_ONDIR, pid, "", dirSub)}},
	})
}

// dfidNameFidRecords: fanotify(7) "When an fanotify file descriptor is
// created using the combination of FAN_REPORT_FID and FAN_REPORT_DIR_FID,
// there may be two information records ... DFID ... and ... FID, identifying a
// child object. Note that for the directory entry modification events
// FAN_CREATE, FAN_DELETE, FAN_MOVE, and FAN_RENAME, an information record
// identifying the created/deleted/moved child object is reported only if ...
// FAN_REPORT_TARGET_FID"; fs/notify/fanotify/fanotify.c
// fanotify_report_child_fid (no child FID for FAN_ONDIR events either) and
// fanotify_user.c copy_info_records (the parent record comes first).
func dfidNameFidRecords(t *harness.T) {
	dir := t.Path("d")
	setup.Mkdir(t, dir)
	f := filepath.Join(dir, "f")
	dirF, dirDot := expect.DFIDName(t, dir, "f"), expect.DFIDName(t, dir, ".")
	a := t.Actor()
	pid := a.Pid()
	grp := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME|unix.FAN_REPORT_FID, unix.O_RDONLY)
	mask := uint64(unix.FAN_CREATE | unix.FAN_CLOSE_WRITE | unix.FAN_ATTRIB | unix.FAN_EVENT_ON_CHILD | unix.FAN_ONDIR)
	mark(t, grp, 0, mask, dir)
	setup := "FAN_REPORT_DFID_NAME|FAN_REPORT_FID; inode mark on d " + fanotify.Mask(mask).String()
	var fd int
	expect.FanotifySteps(t, grp, fidGroup, setup, []step{
		{Did: "open d/f O_CREAT|O_WRONLY", Do: func() (err error) { fd, err = a.Open(f, unix.O_CREAT|unix.O_WRONLY, 0o644); return }, Want: []fanotify.Event{fev(unix.FAN_CREATE, pid, "", dirF)}},
		{Did: "chmod d 0700", Do: func() error { return a.Chmod(dir, 0o700) }, Want: []fanotify.Event{fev(unix.FAN_ATTRIB|unix.FAN_ONDIR, pid, "", dirDot)}},
	})
	// f's handle once the actor has made it (name_to_handle_at queues nothing).
	fidF := expect.FID(t, f)
	expect.FanotifySteps(t, grp, fidGroup, setup+"; d/f made and open in the actor", []step{
		{Did: "close d/f", Do: func() error { return a.Close(fd) }, Want: []fanotify.Event{fev(unix.FAN_CLOSE_WRITE, pid, "", dirF, fidF)}},
		{Did: "chmod d/f 0600", Do: func() error { return a.Chmod(f, 0o600) }, Want: []fanotify.Event{fev(unix.FAN_ATTRIB, pid, "", dirF, fidF)}},
	})
}

// direntEventsNeedFid: fanotify_mark(2) EINVAL "The group was initialized
// without FAN_REPORT_FID but one or more event types specified in the mask
// require it"; FAN_MARK_MOUNT: "events which require that filesystem objects
// are identified by file handles, such as FAN_CREATE ... cannot be provided as
// a mask when flags contains FAN_MARK_MOUNT ... EINVAL".
func direntEventsNeedFid(t *harness.T) {
	dir := t.Dir()
	legacy := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	expect.Errno(t, "fd group: inode mark FAN_CREATE", legacy.Add(0, unix.FAN_CREATE, dir), unix.EINVAL)
	expect.MarkKinds(t, "fd group after the rejected mark", legacy, "none")
	fid := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
	expect.Errno(t, "FID group: mount mark FAN_CREATE", fid.Add(unix.FAN_MARK_MOUNT, unix.FAN_CREATE, t.FS().Root), unix.EINVAL)
	expect.MarkKinds(t, "FID group after the rejected mount mark", fid, "none")
	mark(t, fid, 0, unix.FAN_CREATE, dir)
	expect.MarkKinds(t, "FID group after an inode mark FAN_CREATE", fid, "inode")
}

// markOnlydir: fanotify_mark(2) ENOTDIR "flags contains FAN_MARK_ONLYDIR, and
// dirfd and pathname do not specify a directory".
func markOnlydir(t *harness.T) {
	f, d := t.Path("f"), t.Path("d")
	setup.WriteFile(t, f, "")
	setup.Mkdir(t, d)
	a := t.Actor()
	pid := a.Pid()
	grp := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	expect.Errno(t, "FAN_MARK_ONLYDIR on a file", grp.Add(unix.FAN_MARK_ONLYDIR, unix.FAN_OPEN, f), unix.ENOTDIR)
	expect.MarkKinds(t, "after the rejected mark", grp, "none")
	mark(t, grp, unix.FAN_MARK_ONLYDIR, unix.FAN_OPEN|unix.FAN_ONDIR, d)
	expect.MarkKinds(t, "after FAN_MARK_ONLYDIR on a directory", grp, "inode")
	expect.FanotifySteps(t, grp, fdGroup, "FAN_MARK_ONLYDIR rejected on f; inode mark on d OPEN|ONDIR", []step{
		{Did: "open f; close", Do: func() error { return openClose(a, f, unix.O_RDONLY) }, Want: nil},
		{Did: "open d O_DIRECTORY; close", Do: func() error { return openClose(a, d, unix.O_RDONLY|unix.O_DIRECTORY) }, Want: []fanotify.Event{fev(unix.FAN_OPEN, pid, d)}},
	})
}

// markDontFollow: fanotify_mark(2) FAN_MARK_DONT_FOLLOW "If pathname is a
// symbolic link, mark the link itself, rather than the file to which it
// refers (By default, fanotify_mark() dereferences pathname)". Which inode
// carries the mark is read back from fdinfo (fs/notify/fdinfo.c prints ino).
func markDontFollow(t *harness.T) {
	f, l := t.Path("f"), t.Path("l")
	setup.WriteFile(t, f, "")
	if err := os.Symlink("f", l); err != nil {
		t.Fatalf("setup: %v", err)
	}
	var stF, stL unix.Stat_t
	if err := unix.Stat(f, &stF); err != nil {
		t.Fatalf("setup: stat: %v", err)
	}
	if err := unix.Lstat(l, &stL); err != nil {
		t.Fatalf("setup: lstat: %v", err)
	}
	a := t.Actor()
	pid := a.Pid()
	for _, v := range []struct {
		name   string
		flags  uint
		ino    uint64
		events []fanotify.Event
	}{
		{"dont_follow", unix.FAN_MARK_DONT_FOLLOW, stL.Ino, nil},
		{"follow", 0, stF.Ino, []fanotify.Event{fev(unix.FAN_OPEN, pid, f)}},
	} {
		t.Run(v.name, func(t *harness.T) {
			grp := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
			mark(t, grp, v.flags, unix.FAN_OPEN, l)
			ms, err := grp.Marks()
			if err != nil {
				t.Fatalf("%v", err)
			}
			if len(ms) != 1 || ms[0].Kind != fanotify.InodeMark || ms[0].Ino != v.ino {
				t.Errorf("marks after fanotify_mark(%s, l): %v, want one inode mark on ino %d (f is %d, l is %d)",
					fanotify.MarkFlagsString(unix.FAN_MARK_ADD|v.flags), ms, v.ino, stF.Ino, stL.Ino)
			}
			expect.FanotifySteps(t, grp, fdGroup, fmt.Sprintf("inode mark FAN_OPEN on symlink l->f with %s", fanotify.MarkFlagsString(unix.FAN_MARK_ADD|v.flags)), []step{
				{Did: "open l (follows to f); close", Do: func() error { return openClose(a, l, unix.O_RDONLY) }, Want: v.events},
			})
		})
	}
}

// markFlush: fanotify_mark(2) FAN_MARK_FLUSH "If flags contains
// FAN_MARK_MOUNT, all marks for mounts are removed from the group. If flags
// contains FAN_MARK_FILESYSTEM, all marks for filesystems are removed from the
// group. Otherwise, all marks for directories and files are removed. No flag
// other than, and at most one of, the flags FAN_MARK_MOUNT or
// FAN_MARK_FILESYSTEM can be used in conjunction with FAN_MARK_FLUSH. mask is
// ignored." A group gets one event per operation however many of its marks
// match (fs/notify/fsnotify.c send_to_group is called once per group).
func markFlush(t *harness.T) {
	f, g, h := t.Path("f"), t.Path("g"), t.Path("h")
	for _, p := range []string{f, g, h} {
		setup.WriteFile(t, p, "")
	}
	a := t.Actor()
	pid := a.Pid()
	grp := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	mark(t, grp, 0, unix.FAN_OPEN, f)
	mark(t, grp, 0, unix.FAN_OPEN, g)
	mark(t, grp, unix.FAN_MARK_MOUNT, unix.FAN_OPEN, t.FS().Root)
	mark(t, grp, unix.FAN_MARK_FILESYSTEM, unix.FAN_OPEN, t.FS().Root)
	expect.MarkKinds(t, "after marking", grp, "filesystem,inode,inode,mount")
	expect.Errno(t, "FAN_MARK_FLUSH|FAN_MARK_ONLYDIR",
		grp.Mark(unix.FAN_MARK_FLUSH|unix.FAN_MARK_ONLYDIR, 0, unix.AT_FDCWD, ""), unix.EINVAL)
	expect.MarkKinds(t, "after the rejected flush", grp, "filesystem,inode,inode,mount")
	flush := func(kind uint) func() error {
		return func() error { return grp.Mark(unix.FAN_MARK_FLUSH|kind, 0, unix.AT_FDCWD, "") }
	}
	open := func(p string) func() error { return func() error { return openClose(a, p, unix.O_RDONLY) } }
	setup := "inode marks on f and g, mount and filesystem marks, all FAN_OPEN"
	expect.FanotifySteps(t, grp, fdGroup, setup, []step{
		{Did: "FAN_MARK_FLUSH|FAN_MARK_FILESYSTEM", Do: flush(unix.FAN_MARK_FILESYSTEM), Want: nil},
		{Did: "open h; close (mount mark left)", Do: open(h), Want: []fanotify.Event{fev(unix.FAN_OPEN, pid, h)}},
		{Did: "FAN_MARK_FLUSH|FAN_MARK_MOUNT", Do: flush(unix.FAN_MARK_MOUNT), Want: nil},
		{Did: "open h; close (no mark left on h)", Do: open(h), Want: nil},
		{Did: "open f; close (inode mark left)", Do: open(f), Want: []fanotify.Event{fev(unix.FAN_OPEN, pid, f)}},
	})
	expect.MarkKinds(t, "after flushing filesystem and mount marks", grp, "inode,inode")
	expect.FanotifySteps(t, grp, fdGroup, setup+"; filesystem and mount marks flushed", []step{
		{Did: "FAN_MARK_FLUSH", Do: flush(0), Want: nil},
		{Did: "open f; close", Do: open(f), Want: nil},
		{Did: "open g; close", Do: open(g), Want: nil},
	})
	expect.MarkKinds(t, "after flushing inode marks", grp, "none")
}

// createNames makes n empty files named n0, n1, ... in dir from the test
// process with mknod(2) (one syscall, one FAN_CREATE each).
func createNames(t *harness.T, dir string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := unix.Mknod(filepath.Join(dir, fmt.Sprintf("n%d", i)), unix.S_IFREG|0o644, 0); err != nil {
			t.Fatalf("mknod n%d: %v", i, err)
		}
	}
}

// createEvents is the expected FAN_CREATE of each of the first n names, with
// a DFID_NAME record each (distinct names, so no two merge:
// fanotify.c fanotify_should_merge compares the name).
func createEvents(dfid fanotify.Info, pid, n int) []fanotify.Event {
	evs := make([]fanotify.Event, 0, n+1)
	for i := 0; i < n; i++ {
		r := dfid
		r.Name = fmt.Sprintf("n%d", i)
		evs = append(evs, fev(unix.FAN_CREATE, pid, "", r))
	}
	return evs
}

// queueOverflow: fanotify(7) /proc/sys/fs/fanotify/max_queued_events "Events
// in excess of this limit are dropped, but an FAN_Q_OVERFLOW event is always
// generated"; fd "FAN_NOFD if a queue overflow occurred". The overflow event
// is the group's own (fanotify_user.c fanotify_alloc_overflow_event: type
// FANOTIFY_EVENT_TYPE_OVERFLOW, no pid, so pid_vnr gives 0, and no object, so
// no fd and no info record);
// fs/notify/notification.c fsnotify_insert_event queues it once at q_len >=
// max_events and drops events while it is queued.
//
// The limit is 16384 by default, too many for one actor round trip each, so
// the test process itself makes the files with mknod(2); the events carry its
// own pid.
func queueOverflow(t *harness.T) {
	dir := t.Path("q")
	setup.Mkdir(t, dir)
	dfid := expect.DFIDName(t, dir, "")
	a := t.Actor()
	var grp *fanotify.Group
	limit := queuelimit.Fanotify.Open(t, func() {
		grp = t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME, unix.O_RDONLY)
	})
	mark(t, grp, 0, unix.FAN_CREATE, dir)
	n := limit + 2
	createNames(t, dir, n)
	want := append(createEvents(dfid, os.Getpid(), limit), fev(unix.FAN_Q_OVERFLOW, 0, ""))
	got, err := grp.Drain()
	if err != nil {
		t.Fatalf("reading events: %v", err)
	}
	did := fmt.Sprintf("queue limit %d; FAN_REPORT_DFID_NAME; inode mark on q FAN_CREATE; mknod %d files", limit, n)
	expect.FanotifyFds(t, did, got, fidGroup)
	expect.Fanotify(t, did, got, want)
	after := filepath.Join(dir, "after")
	expect.FanotifySteps(t, grp, fidGroup, "after reading the overflowed queue", []step{
		{Did: "actor creates q/after", Do: func() error { return a.Touch(after) }, Want: []fanotify.Event{fev(unix.FAN_CREATE, a.Pid(), "", expect.DFIDName(t, dir, "after"))}},
	})
}

// unlimitedQueue: fanotify_init(2) FAN_UNLIMITED_QUEUE "Remove the limit on
// the number of events in the event queue" (fanotify_user.c: max_events =
// UINT_MAX). A plain group and an unlimited one are opened together, so both
// are created under the same system limit (queuelimit lowers a limit too large
// to fill to 16384 around the two fanotify_init calls only); limit+2 events
// then overflow the plain group, which shows the limit really applied, and
// all reach the unlimited group.
func unlimitedQueue(t *harness.T) {
	dir := t.Path("q")
	setup.Mkdir(t, dir)
	dfid := expect.DFIDName(t, dir, "")
	const flags = unix.FAN_CLASS_NOTIF | unix.FAN_REPORT_DFID_NAME
	var plain, unlimited *fanotify.Group
	limit := queuelimit.Fanotify.Open(t, func() {
		plain = t.Fanotify(flags, unix.O_RDONLY)
		unlimited = t.Fanotify(flags|unix.FAN_UNLIMITED_QUEUE, unix.O_RDONLY)
	})
	mark(t, plain, 0, unix.FAN_CREATE, dir)
	mark(t, unlimited, 0, unix.FAN_CREATE, dir)
	n := limit + 2
	createNames(t, dir, n)
	all := createEvents(dfid, os.Getpid(), n)
	did := fmt.Sprintf("queue limit %d; FAN_REPORT_DFID_NAME; inode mark on q FAN_CREATE; mknod %d files", limit, n)
	groups := []struct {
		name string
		g    *fanotify.Group
		want []fanotify.Event
	}{
		{"plain group (the limit applies)", plain, append(all[:limit:limit], fev(unix.FAN_Q_OVERFLOW, 0, ""))},
		{"FAN_UNLIMITED_QUEUE group", unlimited, all},
	}
	for _, c := range groups {
		got, err := c.g.Drain()
		if err != nil {
			t.Fatalf("%s: reading events: %v", c.name, err)
		}
		expect.FanotifyFds(t, did+"; "+c.name, got, fidGroup)
		expect.Fanotify(t, did+"; "+c.name, got, c.want)
	}
	expect.FanotifyQuiet(t, did+"; FAN_UNLIMITED_QUEUE group", unlimited, expect.Quiet)
}

// openClose opens path in the actor with flags and closes it.
func openClose(a *actor.Actor, path string, flags int) error {
	fd, err := a.Open(path, flags, 0)
	if err != nil {
		return err
	}
	return a.Close(fd)
}
