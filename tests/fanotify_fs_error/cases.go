package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

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
	Doc:      "a corrupted inode's lookup reports FAN_FS_ERROR with EFSCORRUPTED and its FID, repeated errors merge into error_count, an abort reports ESHUTDOWN with an empty FILEID_INVALID handle",
	Run:      ext4ErrorRecords,
}}

// ext4ErrorRecords: fanotify(7) FAN_FS_ERROR "Create an event when a
// filesystem error is detected", with a FAN_EVENT_INFO_TYPE_ERROR record
// ("error ... errno values", "error_count ... the number of errors that
// occurred ... since the last notification") and a FID record "that
// identifies the inode"; fanotify_mark(2): FAN_FS_ERROR needs a filesystem
// mark of a FID group. ext4 reports through fsnotify_sb_error from
// __ext4_error_inode (the corrupted inode: "iget: bad i_mode", EFSCORRUPTED)
// and from ext4_handle_error on "abort" (ESHUTDOWN). The error event is
// merged while queued (fanotify_merge: an FS_ERROR event of the same
// filesystem and pid only counts up err_count and keeps the first error).
// The corruption is the one LTP's fanotify22 makes: debugfs "sif <dir> mode
// 0xff" on the unmounted device.
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
	errRec := func(errno unix.Errno, count uint32) fanotify.Info {
		return fanotify.Info{Type: unix.FAN_EVENT_INFO_TYPE_ERROR, Error: int32(errno), ErrorCount: count}
	}
	// "The order of records is not guaranteed"
	// (filesystem-monitoring.rst): drain sorts each event's records by type
	// (FID before ERROR) before comparing.
	fsErr := func(pid int, errno unix.Errno, count uint32, fid fanotify.Info) []fanotify.Event {
		return []fanotify.Event{{Mask: unix.FAN_FS_ERROR, Pid: int32(pid), Info: []fanotify.Info{fid, errRec(errno, count)}}}
	}

	t.Run("corrupted_inode_lookup", func(t *harness.T) {
		a := t.Actor()
		_, err := a.Open(bad, unix.O_RDONLY, 0)
		expect.Errno(t, "open of the corrupted directory", err, efscorrupted)
		got := drain(t, g)
		expect.Fanotify(t, "filesystem mark FAN_FS_ERROR; actor opens the dir whose mode debugfs set to 0xff", got,
			fsErr(a.Pid(), efscorrupted, 1, badFID))
	})
	t.Run("errors_merge_into_count", func(t *harness.T) {
		a := t.Actor()
		for i := 0; i < 3; i++ {
			_, err := a.Open(bad, unix.O_RDONLY, 0)
			expect.Errno(t, fmt.Sprintf("open %d of the corrupted directory", i+1), err, efscorrupted)
		}
		got := drain(t, g)
		expect.Fanotify(t, "filesystem mark FAN_FS_ERROR; actor opens the corrupted dir three times; then read", got,
			fsErr(a.Pid(), efscorrupted, 3, badFID))
	})
	t.Run("abort", func(t *harness.T) {
		if err := unix.Mount(fs.Device, fs.Root, "ext4", unix.MS_REMOUNT|unix.MS_RDONLY, "abort"); err != nil {
			t.Fatalf("remount %s abort: %v", fs.Root, err)
		}
		got := drain(t, g)
		expect.Fanotify(t, "filesystem mark FAN_FS_ERROR; this process remounts ro,abort", got,
			fsErr(os.Getpid(), unix.ESHUTDOWN, 1, invalid))
		expect.FanotifyQuiet(t, "after the abort", g, expect.Quiet)
	})
}

// drain reads every queued event and orders each one's info records by type.
func drain(t *harness.T, g *fanotify.Group) []fanotify.Event {
	t.Helper()
	got, err := g.Drain()
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, e := range got {
		sort.SliceStable(e.Info, func(i, j int) bool { return e.Info[i].Type < e.Info[j].Type })
	}
	return got
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
