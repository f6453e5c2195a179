package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// fsError is FAN_FS_ERROR; the mark call itself is the probe (a kernel
// without it rejects the mask with EINVAL).
var fsError = feature.New("FAN_FS_ERROR", "5.16", nil)

// Values the error records carry. EFSCORRUPTED is ext4's name for EUCLEAN
// (fs/ext4/ext4.h); FILEID_INVALID (include/linux/exportfs.h) is the handle
// type of an error not tied to an inode ("Errors that are not related to an
// inode are reported with an empty file handle of type FILEID_INVALID",
// Documentation/admin-guide/filesystem-monitoring.rst).
const (
	efscorrupted  = unix.EUCLEAN
	fileidInvalid = 0xff
)

var cases = []harness.Case{{
	Name: "ext4_error_records",
	// Subtests: the names its t.Run calls use, so that a skip keeps these leaves.
	Subtests: []string{"corrupted_inode_lookup", "errors_merge_into_count", "abort"},
	Doc: "a corrupted inode's lookup reports FAN_FS_ERROR with EFSCORRUPTED and its FID, repeated errors merge into error_count, " +
		"an abort reports ESHUTDOWN with an empty FILEID_INVALID handle; the event's pid is the failing process's, or since 7.0 " +
		"(fs/fserror.c fserror_worker, commit 21945e6cb516) a kworker's, as /proc/kallsyms says which",
	Run: ext4ErrorRecords,
}, {
	Name: "ext4_error_unwatched",
	Doc: "FAN_FS_ERROR on an inode mark is EINVAL, and an ext4 abort on a filesystem without a filesystem mark queues nothing, " +
		"not even for a group with an inode mark on its root (FS_ERROR reaches fsnotify with no inode: only filesystem marks are looked at)",
	Run: ext4ErrorUnwatched,
}}

// ext4ErrorUnwatched: fanotify_mark(2) allows FAN_FS_ERROR on filesystem
// marks only (EINVAL on an inode or mount mark: checked first, on this
// filesystem's root), so an error on a filesystem that has none reaches no
// group. FS_ERROR reaches fsnotify() with no inode on every version (6.1
// fsnotify_sb_error: the inode travels in the error report only; 7.x
// fserror_worker), so fsnotify looks at filesystem marks only. The abort
// (ESHUTDOWN, "Errors that are not related to an inode",
// filesystem-monitoring.rst) on a filesystem without one: a group with an
// inode mark on its root, for every event it can have there, reads
// nothing. (Mutant 103eda8296 of fsnotify()'s no-marks shortcut reads the
// missing inode's marks and oopses here.) A kernel without FAN_FS_ERROR
// (before 5.16) reports no filesystem error at all: skipped.
func ext4ErrorUnwatched(t *harness.T) {
	fs := t.FS()
	probe := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
	if err := probe.Add(unix.FAN_MARK_FILESYSTEM, unix.FAN_FS_ERROR, fs.Root); err != nil {
		if c := fsError.ClassifyErr(errors.Unwrap(err)); feature.IsSkip(c) {
			t.Skipf("%v", c)
		}
		t.Fatalf("%v", err)
	}
	// The probe's filesystem mark goes with its group: the filesystem
	// has no mark when the error comes.
	if err := probe.Close(); err != nil {
		t.Fatalf("setup: %v", err)
	}
	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
	err := g.Add(unix.FAN_MARK_INODE, unix.FAN_FS_ERROR, fs.Root)
	expect.Errno(t, "fanotify_mark(FAN_MARK_INODE, FAN_FS_ERROR) on the root", err, unix.EINVAL)
	mask := uint64(unix.FAN_ACCESS | unix.FAN_MODIFY | unix.FAN_OPEN | unix.FAN_CLOSE | unix.FAN_ONDIR | unix.FAN_EVENT_ON_CHILD)
	if err := g.Add(unix.FAN_MARK_INODE, mask, fs.Root); err != nil {
		t.Fatalf("fanotify_mark(FAN_MARK_INODE, %#x) on %s: %v", mask, fs.Root, err)
	}
	if err := unix.Mount(fs.Device, fs.Root, "ext4", unix.MS_REMOUNT|unix.MS_RDONLY, "abort"); err != nil {
		t.Fatalf("remount %s abort: %v", fs.Root, err)
	}
	// Since 7.0 the error reaches fsnotify from a work item (fs/fserror.c):
	// listen as long as the records case waits for one.
	wait := 500 * time.Millisecond
	if worker, _ := feature.FSErrorWorker.Rule(); worker {
		wait = workerWait
	}
	expect.FanotifyQuiet(t, "inode mark on the root of an ext4 without a filesystem mark; this process remounts it ro,abort", g, wait)
}

// ext4ErrorRecords: fanotify(7) FAN_FS_ERROR "Create an event when a
// filesystem error is detected", with a FAN_EVENT_INFO_TYPE_ERROR record
// ("error ... errno values", "error_count ... the number of errors that
// occurred ... since the last notification") and a FID record "that
// identifies the inode"; fanotify_mark(2): FAN_FS_ERROR needs a filesystem
// mark of a FID group. ext4 reports the corrupted inode from
// __ext4_error_inode ("iget: bad i_mode", EFSCORRUPTED) and the abort
// ("abort" mount option, ESHUTDOWN). The error event is merged while queued
// (fanotify_merge: an FS_ERROR event of the same filesystem and pid only
// counts up err_count and keeps the first error). The corruption is the one
// LTP's fanotify22 makes: debugfs "sif <dir> mode 0xff" on the unmounted
// device.
//
// Who reports, and so the event's pid, changed in 7.0 (feature.FSErrorWorker):
//   - the older rule: ext4 calls fsnotify_sb_error in the task that met the
//     error, so the event carries that process's pid and is queued before
//     its call returns (drained at once, compared exactly);
//   - the newer rule (fs/fserror.c, 21945e6cb516 "fs: report filesystem and
//     file I/O errors to fsnotify", ext4 by 81d2e13a57c9 "ext4: convert to
//     new fserror helpers"): fserror_report queues a work item
//     (schedule_work) and fserror_worker calls fsnotify(FS_ERROR) from a
//     kworker, so the pid is a kernel thread's (PF_KTHREAD in
//     /proc/PID/stat) and the event may come after the call returned: the
//     case reads until the events' error counts add up to the errors made.
//     Errors handled by different kworkers (the actor may change CPUs
//     between opens) have different pids and do not merge, so
//     errors_merge_into_count accepts several events whose counts add up
//     over every read(2) to the errors made, provided no two events of one
//     read share a pid (those were queued together and
//     fanotify_should_merge would have merged them): judgeErrorReads.
//
// errors_merge_into_count makes three errors, reads, then two more and
// reads again: merging must go on after a read, into a new event
// (get_one_event unhashes the event it reads).
//
// Anything else fails: another pid, a missing or extra error, a count that
// does not add up, another errno or FID.
func ext4ErrorRecords(t *harness.T) {
	debugfs := lookTool("debugfs")
	if debugfs == "" {
		t.Skipf("debugfs not found (e2fsprogs)")
	}
	fs := t.FS()
	bad := t.Path("bad")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatalf("setup: %v", err)
	}
	badFID, err := fanotify.FIDOf(bad)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	rel := "/" + strings.TrimPrefix(bad, fs.Root+"/")
	corruptAndRemount(t, debugfs, fs.Device, fs.Root, rel)

	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
	if err := g.Add(unix.FAN_MARK_FILESYSTEM, unix.FAN_FS_ERROR, fs.Root); err != nil {
		if c := fsError.ClassifyErr(errors.Unwrap(err)); feature.IsSkip(c) {
			t.Skipf("%v", c)
		}
		t.Fatalf("%v", err)
	}
	rootFID, err := fanotify.FIDOf(fs.Root)
	if err != nil {
		t.Fatalf("%v", err)
	}
	invalid := fanotify.Info{Type: unix.FAN_EVENT_INFO_TYPE_FID, Fsid: rootFID.Fsid, HandleType: fileidInvalid}
	r := reporting{g: g}
	r.worker, r.basis = feature.FSErrorWorker.Rule()
	if r.worker {
		t.Notef("FAN_FS_ERROR events come from a kworker (fs/fserror.c): %s", r.basis)
	} else {
		t.Notef("FAN_FS_ERROR events come from the failing task: %s", r.basis)
	}

	t.Run("corrupted_inode_lookup", func(t *harness.T) {
		a := t.Actor()
		_, err := a.Open(bad, unix.O_RDONLY, 0)
		expect.Errno(t, "open of the corrupted directory", err, efscorrupted)
		r.check(t, "filesystem mark FAN_FS_ERROR; actor opens the dir whose mode debugfs set to 0xff", a.Pid(), efscorrupted, 1, badFID)
	})
	t.Run("errors_merge_into_count", func(t *harness.T) {
		// fanotify_merge (fs/notify/fanotify/fanotify.c): an FS_ERROR
		// event still queued absorbs the next one of the same filesystem
		// and pid (fanotify_should_merge, fanotify_error_event_equal:
		// same fsid) and its err_count grows; reading it unhashes it
		// (fanotify_user.c get_one_event: fanotify_unhash_event), so the
		// next error starts a new event (fanotify_alloc_error_event:
		// err_count = 1), which merges the errors after it again. Two
		// rounds, each read to the end: three errors, then two more.
		a := t.Actor()
		opens := 0
		for round, n := range []uint32{3, 2} {
			for i := uint32(0); i < n; i++ {
				opens++
				_, err := a.Open(bad, unix.O_RDONLY, 0)
				expect.Errno(t, fmt.Sprintf("open %d of the corrupted directory", opens), err, efscorrupted)
			}
			did := fmt.Sprintf("filesystem mark FAN_FS_ERROR; actor opens the corrupted dir %d times; then read", n)
			if round > 0 {
				did = fmt.Sprintf("filesystem mark FAN_FS_ERROR; after the first %d errors were read, actor opens the corrupted dir %d more times; then read", opens-int(n), n)
			}
			r.check(t, did, a.Pid(), efscorrupted, n, badFID)
		}
	})
	t.Run("abort", func(t *harness.T) {
		if err := unix.Mount(fs.Device, fs.Root, "ext4", unix.MS_REMOUNT|unix.MS_RDONLY, "abort"); err != nil {
			t.Fatalf("remount %s abort: %v", fs.Root, err)
		}
		r.check(t, "filesystem mark FAN_FS_ERROR; this process remounts ro,abort", os.Getpid(), unix.ESHUTDOWN, 1, invalid)
		expect.FanotifyQuiet(t, "after the abort", g, expect.Quiet)
	})
}

// reporting checks FAN_FS_ERROR events by the rule this kernel follows.
type reporting struct {
	g      *fanotify.Group
	worker bool   // feature.FSErrorWorker: reported from a kworker
	basis  string // what decided it
}

// workerWait bounds how long the newer rule's events may take to arrive
// after the failing call returned (a work item on system_wq; TCG is slow).
const workerWait = 10 * time.Second

// check compares the FAN_FS_ERROR events of made errors of errno on the
// object fid, made by process pid, with what the kernel's rule allows, and
// their error_count over every read(2) (judgeErrorReads). The count's
// verdict comes before the event diff and after the kworker log lines, so
// that it is the first line stating what was wanted (the statement
// runner.Statement takes), never a log line.
func (r reporting) check(t *harness.T, did string, pid int, errno unix.Errno, made uint32, fid fanotify.Info) {
	t.Helper()
	errRec := func(count uint32) fanotify.Info {
		return fanotify.Info{Type: unix.FAN_EVENT_INFO_TYPE_ERROR, Error: int32(errno), ErrorCount: count}
	}
	// "The order of records is not guaranteed"
	// (filesystem-monitoring.rst): events' records are sorted by type (FID
	// before ERROR) before comparing.
	if !r.worker {
		// Every error was reported before its call returned, by one
		// task, before this read: one event holding them all.
		// The count's verdict first (the statement a summary takes is
		// the first line saying what was wanted), then the whole events.
		got := drain(t, r.g)
		did += " (expected from the failing task: " + r.basis + ")"
		for _, p := range judgeErrorReads([][]fanotify.Event{got}, made, false) {
			t.Errorf("%s: %s", p, did)
		}
		expect.Fanotify(t, did, got,
			[]fanotify.Event{{Mask: unix.FAN_FS_ERROR, Pid: int32(pid), Info: []fanotify.Info{fid, errRec(made)}}})
		return
	}
	did += " (expected from a kworker: " + r.basis + ")"
	var got, want []fanotify.Event
	var batches [][]fanotify.Event
	var sum uint32
	deadline := time.Now().Add(workerWait)
	for sum < made {
		batch, err := r.g.Read(deadline)
		if errors.Is(err, fanotify.ErrTimeout) {
			break
		}
		if err != nil {
			t.Fatalf("%s: reading events: %v", did, err)
		}
		sortRecords(batch)
		batches = append(batches, batch)
		for _, e := range batch {
			// The pid and count are the kernel's to choose (judged
			// below); the rest is compared.
			w := fanotify.Event{Mask: unix.FAN_FS_ERROR, Pid: e.Pid, Info: []fanotify.Info{fid, errRec(1)}}
			if c, ok := errorCount(e); ok {
				sum += c
				w.Info[1].ErrorCount = c
			}
			want = append(want, w)
		}
		got = append(got, batch...)
	}
	var gone []string
	for _, e := range got {
		if e.Pid == 0 && !inInitialPidNamespace() {
			// copy_event_to_user: metadata.pid = pid_vnr(event->pid), 0
			// for a task this pid namespace cannot see, as a kworker is
			// to a container (a nested pid namespace). In the initial one
			// every task is visible, so 0 there stays a failure below.
			t.Logf("event pid 0: the reporting task is outside this (nested) pid namespace, as a kworker is")
			continue
		}
		k, err := kthread(int(e.Pid))
		switch {
		case errors.Is(err, os.ErrNotExist):
			gone = append(gone, fmt.Sprint(e.Pid))
		case err != nil:
			t.Errorf("%s: event pid %d: %v", did, e.Pid, err)
		case !k.kernel:
			t.Errorf("%s: event pid %d (%s, ppid %d, flags %#x) is not a kernel thread (no PF_KTHREAD %#x); the failing process was %d",
				did, e.Pid, k.comm, k.ppid, k.flags, pfKthread, pid)
		default:
			t.Logf("event pid %d: %s, ppid %d, a kernel thread", e.Pid, k.comm, k.ppid)
		}
	}
	for _, p := range judgeErrorReads(batches, made, true) {
		t.Errorf("%s: %s (read until they added up, or %v after the last failing call)", p, did, workerWait)
	}
	expect.Fanotify(t, did, got, want)
	if sum >= made {
		// More than made would be an error reported twice; a late one
		// comes from the workqueue too.
		expect.FanotifyQuiet(t, did, r.g, expect.Quiet)
	}
	if len(gone) > 0 && !t.Failed() {
		// A kworker can exit (an idle worker is reaped) between the event
		// and this look; then nothing says what it was.
		t.Skipf("%s: event pid %s exited before /proc/PID/stat was read: whether it was a kernel thread is undecided (all else matched)", did, strings.Join(gone, ", "))
	}
}

// judgeErrorReads judges the FAN_FS_ERROR events of made errors of one
// filesystem, as read: batches[k] is what the k-th read(2) returned. The
// kernel merges an error into the FS_ERROR event still queued for the same
// filesystem and pid (fanotify.c fanotify_merge, fanotify_should_merge:
// same hash, type and pid; fanotify_error_event_equal: same fsid) with
// err_count++, and starts a new event (err_count 1) once that one has been
// read (get_one_event unhashes it). So:
//   - over every read, the events' error_count add up to made: an error
//     neither lost nor counted twice, whether the events came in one read
//     or several;
//   - two events of one pid in one read were queued together, so the
//     second must have been merged into the first;
//   - from one task (worker false: every error reported in the failing
//     task before its call returned, all before the first read) there is
//     exactly one event.
//
// Each problem opens with the value that changed ("error_count 1, want
// 3"), the count first.
func judgeErrorReads(batches [][]fanotify.Event, made uint32, worker bool) []string {
	var out []string
	var sum uint32
	var per []string
	events := 0
	for k, b := range batches {
		var cs []string
		for _, e := range b {
			c, ok := errorCount(e)
			if !ok {
				cs = append(cs, fmt.Sprintf("pid %d without an error record", e.Pid))
				continue
			}
			sum += c
			cs = append(cs, fmt.Sprintf("pid %d error_count %d", e.Pid, c))
		}
		events += len(b)
		per = append(per, fmt.Sprintf("read %d: %s", k+1, strings.Join(cs, ", ")))
	}
	if len(per) == 0 {
		per = append(per, "no event read")
	}
	if sum != made {
		out = append(out, fmt.Sprintf("error_count %d, want %d: the FAN_FS_ERROR events' error_count over every read(2) add up to %d for %d errors (%s)",
			sum, made, sum, made, strings.Join(per, "; ")))
	}
	if !worker && events != 1 {
		out = append(out, fmt.Sprintf("FAN_FS_ERROR events %d, want 1: errors of one task queued before a read merge into one event (fanotify_merge) (%s)",
			events, strings.Join(per, "; ")))
	}
	for k, b := range batches {
		n := map[int32]int{}
		for _, e := range b {
			n[e.Pid]++
		}
		pids := make([]int, 0, len(n))
		for p := range n {
			pids = append(pids, int(p))
		}
		sort.Ints(pids)
		for _, p := range pids {
			if c := n[int32(p)]; c > 1 && worker {
				out = append(out, fmt.Sprintf("FAN_FS_ERROR events of pid %d in read %d: %d, want 1: queued together, fanotify_merge merges them into one (%s)",
					p, k+1, c, per[k]))
			}
		}
	}
	return out
}

// errorCount returns the event's ERROR record's error_count.
func errorCount(e fanotify.Event) (uint32, bool) {
	for _, i := range e.Info {
		if i.Type == unix.FAN_EVENT_INFO_TYPE_ERROR {
			return i.ErrorCount, true
		}
	}
	return 0, false
}

// inInitialPidNamespace reports whether this process is in the initial pid
// namespace, whose nsfs inode number is fixed (include/uapi/linux/nsfs.h
// PID_NS_INIT_INO, 6.1 proc_ns.h PROC_PID_INIT_INO: 0xEFFFFFFC).
func inInitialPidNamespace() bool {
	var st unix.Stat_t
	return unix.Stat("/proc/self/ns/pid", &st) == nil && st.Ino == 0xEFFFFFFC
}

// pfKthread is PF_KTHREAD (include/linux/sched.h): "I am a kernel thread".
const pfKthread = 0x00200000

type threadInfo struct {
	kernel bool
	comm   string
	ppid   int
	flags  uint64
}

// kthread reads /proc/PID/stat (proc(5): (2) comm, (4) ppid, (9) flags, the
// task's PF_* flags). The error wraps os.ErrNotExist when pid has no
// process (any more); pid 0 is no process's.
func kthread(pid int) (threadInfo, error) {
	if pid <= 0 {
		return threadInfo{}, fmt.Errorf("pid %d is no process's (outside this pid namespace?)", pid)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			err = fmt.Errorf("%w: %v", os.ErrNotExist, err)
		}
		return threadInfo{}, err
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return threadInfo{}, fmt.Errorf("/proc/%d/stat: unparsable %q", pid, s)
	}
	f := strings.Fields(s[end+1:]) // f[0] is field (3), state
	if len(f) < 7 {
		return threadInfo{}, fmt.Errorf("/proc/%d/stat: too few fields in %q", pid, s)
	}
	var k threadInfo
	k.comm = s[open+1 : end]
	k.ppid, _ = strconv.Atoi(f[1])
	if k.flags, err = strconv.ParseUint(f[6], 10, 64); err != nil {
		return threadInfo{}, fmt.Errorf("/proc/%d/stat flags %q: %v", pid, f[6], err)
	}
	k.kernel = k.flags&pfKthread != 0
	return k, nil
}

// drain reads every queued event and orders each one's info records by type.
func drain(t *harness.T, g *fanotify.Group) []fanotify.Event {
	t.Helper()
	got, err := g.Drain()
	if err != nil {
		t.Fatalf("%v", err)
	}
	sortRecords(got)
	return got
}

// sortRecords orders each event's info records by type.
func sortRecords(evs []fanotify.Event) {
	for _, e := range evs {
		sort.SliceStable(e.Info, func(i, j int) bool { return e.Info[i].Type < e.Info[j].Type })
	}
}

// corruptAndRemount unmounts the filesystem on dev (holding the loop device
// open so that its autoclear does not detach it), sets the mode of path (from
// the filesystem root) to 0xff with debugfs, and mounts it again with
// errors=continue.
func corruptAndRemount(t *harness.T, debugfs, dev, root, path string) {
	t.Helper()
	hold, err := unix.Open(dev, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("setup: open %s: %v", dev, err)
	}
	defer unix.Close(hold)
	unix.Sync()
	if err := unix.Unmount(root, 0); err != nil {
		t.Fatalf("setup: unmount %s: %v", root, err)
	}
	// open(2): O_EXCL without O_CREAT on a block device "fails with the
	// error EBUSY" while the device "is in use by the system (e.g.,
	// mounted)". Proof that no superblock (another mount of dev, in any
	// mount namespace) still uses it before debugfs writes to it.
	excl, err := unix.Open(dev, unix.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("setup: %s still in use after unmounting %s (open O_EXCL: %v); not running debugfs -w on a device that may be mounted", dev, root, err)
	}
	unix.Close(excl)
	out, err := exec.Command(debugfs, "-w", "-R", "sif "+path+" mode 0xff", dev).CombinedOutput()
	if err != nil {
		t.Fatalf("setup: debugfs -w -R 'sif %s mode 0xff' %s: %v: %s", path, dev, err, out)
	}
	if err := unix.Mount(dev, root, "ext4", 0, "errors=continue"); err != nil {
		t.Fatalf("setup: mount %s on %s: %v", dev, root, err)
	}
}

// lookTool finds an e2fsprogs tool on PATH or in the sbin directories.
func lookTool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/sbin", "/usr/sbin"} {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			return filepath.Join(d, name)
		}
	}
	return ""
}
