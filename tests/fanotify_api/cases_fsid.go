package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

var fsidCases = []harness.Case{{
	Name: "merge_fsid_hash_collision",
	Doc: "FID group: FAN_MODIFY of two files with the same handle on two ext4 filesystems whose fsids share one half and " +
		"have the same merge hash stay two events (an event's object is its fsid and handle, both halves of the fsid compared)",
	Needs:       []*feature.Feature{feature.ReportFID},
	Filesystems: []string{},
	Run:         mergeFsidHashCollision,
}}

// goldenRatio32 is include/linux/hash.h's GOLDEN_RATIO_32: hash_32(val,
// bits) is (val * GOLDEN_RATIO_32) >> (32 - bits) where the architecture has
// no hash of its own (x86_64, arm64).
const goldenRatio32 = 0x61C88647

// fsidHalfShared is the fsid half both filesystems have (val[1]).
const fsidHalfShared = 0x736e7366

// collidingFsidHalves returns two first fsid halves (val[0]) whose
// hash_32(val, 29) agree: val * GOLDEN_RATIO_32 is 8 for the first and 9
// for the second (mod 2^32), which agree once shifted right by 3.
func collidingFsidHalves() (uint32, uint32) {
	inv := uint32(goldenRatio32) // the inverse mod 2^32, by Newton's iteration
	for i := 0; i < 5; i++ {
		inv *= 2 - goldenRatio32*inv
	}
	return 8 * inv, 9 * inv
}

// fsidHash29 is fs/notify/fanotify/fanotify.c's fanotify_hash_fsid with
// FANOTIFY_EVENT_HASH_BITS 29: hash_32 of each half, XORed.
func fsidHash29(val0, val1 uint32) uint32 {
	h := func(v uint32) uint32 { return (v * goldenRatio32) >> 3 }
	return h(val0) ^ h(val1)
}

// ext4UUIDForFsid returns the UUID that makes ext4 report the fsid (val0,
// val1): ext4_statfs sets f_fsid = uuid_to_fsid(s_uuid), the little-endian
// first 8 bytes XOR the last 8 (include/linux/statfs.h), split by
// u64_to_fsid into the low (val[0]) and high (val[1]) 32 bits. The last 8
// bytes are zero.
func ext4UUIDForFsid(val0, val1 uint32) string {
	var b [16]byte
	binary.LittleEndian.PutUint32(b[0:], val0)
	binary.LittleEndian.PutUint32(b[4:], val1)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// fsIocSetversion is FS_IOC_SETVERSION (_IOW('v', 2, long)), which ext4
// takes as EXT4_IOC_SETVERSION_OLD (the same handler as
// EXT4_IOC_SETVERSION, reading an int): it sets the inode's generation, part
// of its file handle (ext4 encodes ino and generation, FILEID_INO32_GEN).
const fsIocSetversion = 0x40087602

// sharedGeneration is the generation both files are given.
const sharedGeneration = 0x66736e73

// mergeFsidHashCollision: fanotify_should_merge (fs/notify/fanotify/
// fanotify.c) compares the queued event's hash, type and pid first, then, for
// a FID event, fanotify_fid_event_equal: the fsid (both halves,
// fanotify_fsid_equal) and the handle. The case makes the first test pass
// for events of two different objects, so that only the fsid comparison
// keeps them apart: two ext4 filesystems made alike (so a file created first
// in each root gets the same inode number), each file given the same
// generation, so their handles are equal, and UUIDs chosen so that the
// fsids share val[1] and their val[0]s hash alike under fanotify_hash_fsid
// (6.1's; TestCollidingFsids). fanotify(7): a FID event identifies its
// object by fsid and handle, and only events "for the same filesystem
// object" merge; these are two objects, so two events.
func mergeFsidHashCollision(t *harness.T) {
	a0, b0 := collidingFsidHalves()
	var files []string
	for i, v0 := range []uint32{a0, b0} {
		uuid := ext4UUIDForFsid(v0, fsidHalfShared)
		// No metadata_csum: ext4 refuses EXT4_IOC_SETVERSION with it.
		fs, err := fixture.MountImage(fmt.Sprintf("fsid%d", i), "ext4", 32<<20, "-O", "^metadata_csum", "-U", uuid)
		var un *fixture.Unavailable
		if errors.As(err, &un) {
			t.Skipf("%s", un.Reason)
		}
		if err != nil {
			t.Fatalf("setup: ext4 with UUID %s: %v", uuid, err)
		}
		t.Cleanup(func() {
			if err := fs.Unmount(); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
		f := filepath.Join(fs.Root, "f")
		setup.Touch(t, f)
		files = append(files, f)
	}
	// The collision needs equal handles and the chosen fsids; without them
	// the two events would be two whatever the fsid comparison did, so the
	// case is undecided.
	arranged := true
	for _, f := range files {
		fd, err := unix.Open(f, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("setup: %v", err)
		}
		gen := uint32(sharedGeneration)
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocSetversion, uintptr(unsafe.Pointer(&gen)))
		unix.Close(fd)
		if e != 0 {
			t.Logf("FS_IOC_SETVERSION on %s: %v: the handles may differ", f, e)
			arranged = false
		}
	}
	fids := make([]fanotify.Info, len(files))
	for i, f := range files {
		fids[i] = expect.FID(t, f)
	}
	if fids[0].Handle != fids[1].Handle || fids[0].HandleType != fids[1].HandleType {
		t.Logf("handles differ (%s, %s): the merge's fsid comparison is not reached", fids[0].Handle, fids[1].Handle)
		arranged = false
	}
	if uint32(fids[0].Fsid[1]) != fsidHalfShared || uint32(fids[1].Fsid[1]) != fsidHalfShared ||
		fsidHash29(uint32(fids[0].Fsid[0]), uint32(fids[0].Fsid[1])) != fsidHash29(uint32(fids[1].Fsid[0]), uint32(fids[1].Fsid[1])) {
		t.Logf("fsids %x and %x are not the chosen ones: the merge's fsid comparison may not be reached", fids[0].Fsid, fids[1].Fsid)
		arranged = false
	}
	if !arranged {
		t.Skipf("undecided: the two files' fsids and handles could not be made to collide here (see the log), so the fsid comparison of the merge would not be reached")
	}
	t.Logf("fsids %x and %x (one half shared, the same 29-bit hash), handle %s on both", fids[0].Fsid, fids[1].Fsid, fids[0].Handle)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
	for _, f := range files {
		t.JudgeFIDMark(g.Add(0, unix.FAN_MODIFY, f))
	}
	do(t, a.WriteFile(files[0], []byte("x")), a.WriteFile(files[1], []byte("x")))
	expect.FanotifyDrained(t, g, "FID group, FAN_MODIFY on f of two ext4 filesystems (the same handle, fsids sharing a half and a hash); actor writes both", []fanotify.Event{
		fev(unix.FAN_MODIFY, a.Pid(), "", fids[0]),
		fev(unix.FAN_MODIFY, a.Pid(), "", fids[1]),
	})
}
