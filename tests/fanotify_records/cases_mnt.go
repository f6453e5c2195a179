package main

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

var mntCases = []harness.Case{{
	Name:        "mount_events_mnt_record",
	Doc:         "FAN_MARK_MNTNS with FAN_REPORT_MNT reports FAN_MNT_ATTACH on mount, both bits on a move, FAN_MNT_DETACH on unmount, each with the mount's unique id",
	Needs:       []*feature.Feature{feature.ReportMnt},
	Filesystems: []string{},
	Run:         mountEventsMntRecord,
}}

// mountEventsMntRecord: fanotify(7) FAN_MNT_ATTACH/FAN_MNT_DETACH (Linux
// 6.14, commit "fanotify: notify on mount attach and detach": "If a mount is
// moved, then the event is reported with (FAN_MNT_ATTACH | FAN_MNT_DETACH).
// These events add an info record of type FAN_EVENT_INFO_TYPE_MNT containing
// ... mnt_id - the ID of the mount (see statmount(2))", "Marks are added with
// FAN_MARK_MNTNS, which records the mount namespace from an nsfs file").
// statx(2) STATX_MNT_ID_UNIQUE gives the same 64-bit id. The events are
// queued by namespace_unlock in the mount(2)/umount(2) caller, this process.
// The binary runs in its own mount namespace, where nothing else mounts
// during the case.
func mountEventsMntRecord(t *harness.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_MNT, unix.O_RDONLY)
	if err := g.Add(unix.FAN_MARK_MNTNS, unix.FAN_MNT_ATTACH|unix.FAN_MNT_DETACH, "/proc/self/ns/mnt"); err != nil {
		t.Fatalf("%v", err)
	}
	if err := unix.Mount("fsnsuite-mnt-events", a, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount tmpfs on %s: %v", a, err)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			unix.Unmount(b, unix.MNT_DETACH)
			unix.Unmount(a, unix.MNT_DETACH)
		}
	})
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, a, 0, unix.STATX_MNT_ID_UNIQUE, &stx); err != nil {
		t.Fatalf("statx %s: %v", a, err)
	}
	if stx.Mask&unix.STATX_MNT_ID_UNIQUE == 0 {
		t.Fatalf("statx %s: no STATX_MNT_ID_UNIQUE in the answer (mask %#x)", a, stx.Mask)
	}
	rec := fanotify.Info{Type: unix.FAN_EVENT_INFO_TYPE_MNT, MntID: stx.Mnt_id}
	ev := func(mask uint64) []fanotify.Event {
		return []fanotify.Event{{Mask: fanotify.Mask(mask), Pid: int32(os.Getpid()), Info: []fanotify.Info{rec}}}
	}
	expect.FanotifyDrained(t, g, "FAN_MARK_MNTNS on this mount namespace; mount a tmpfs on a", ev(unix.FAN_MNT_ATTACH))
	if err := unix.Mount(a, b, "", unix.MS_MOVE, ""); err != nil {
		t.Fatalf("move mount %s to %s: %v", a, b, err)
	}
	expect.FanotifyDrained(t, g, "then move it from a to b", ev(unix.FAN_MNT_ATTACH|unix.FAN_MNT_DETACH))
	if err := unix.Unmount(b, 0); err != nil {
		t.Fatalf("unmount %s: %v", b, err)
	}
	mounted = false
	expect.FanotifyDrained(t, g, "then unmount it", ev(unix.FAN_MNT_DETACH))
}
