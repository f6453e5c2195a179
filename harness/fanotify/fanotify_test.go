package fanotify

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
)

// record builds one event as the kernel lays it out (include/uapi/linux/fanotify.h:
// struct fanotify_event_metadata, then info records each headed by
// struct fanotify_event_info_header), in host byte order.
func record(mask uint64, fd, pid int32, info ...[]byte) []byte {
	ne := binary.NativeEndian
	body := []byte{}
	for _, i := range info {
		body = append(body, i...)
	}
	b := make([]byte, unix.FAN_EVENT_METADATA_LEN)
	ne.PutUint32(b[0:], uint32(len(b)+len(body)))
	b[4] = unix.FANOTIFY_METADATA_VERSION
	ne.PutUint16(b[6:], uint16(unix.FAN_EVENT_METADATA_LEN))
	ne.PutUint64(b[8:], mask)
	ne.PutUint32(b[16:], uint32(fd))
	ne.PutUint32(b[20:], uint32(pid))
	return append(b, body...)
}

// fidInfo builds a FID-type record: header, fsid, struct file_handle, name, padding.
func fidInfo(typ uint8, fsid [2]int32, htype int32, handle []byte, name string) []byte {
	ne := binary.NativeEndian
	b := make([]byte, 4+8+8)
	b[0] = typ
	ne.PutUint32(b[4:], uint32(fsid[0]))
	ne.PutUint32(b[8:], uint32(fsid[1]))
	ne.PutUint32(b[12:], uint32(len(handle)))
	ne.PutUint32(b[16:], uint32(htype))
	b = append(b, handle...)
	if name != "" {
		b = append(b, append([]byte(name), 0)...)
	}
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	ne.PutUint16(b[2:], uint16(len(b)))
	return b
}

func rangeInfo(off, count uint64) []byte {
	ne := binary.NativeEndian
	b := make([]byte, 24)
	b[0] = unix.FAN_EVENT_INFO_TYPE_RANGE
	ne.PutUint16(b[2:], 24)
	ne.PutUint64(b[8:], off)
	ne.PutUint64(b[16:], count)
	return b
}

// mntInfo builds a MNT record as a 64-bit kernel lays it out: header, 4 bytes
// of alignment padding, the __u64 mount id (16 bytes).
func mntInfo(id uint64) []byte {
	ne := binary.NativeEndian
	b := make([]byte, 16)
	b[0] = unix.FAN_EVENT_INFO_TYPE_MNT
	ne.PutUint16(b[2:], 16)
	ne.PutUint64(b[8:], id)
	return b
}

func TestDecodeMntRecord(t *testing.T) {
	evs, err := Decode(record(unix.FAN_MNT_ATTACH, unix.FAN_NOFD, 9, mntInfo(0x80003f6f)))
	assert.NilError(t, err)
	assert.DeepEqual(t, evs, []Event{{Mask: unix.FAN_MNT_ATTACH, Pid: 9, Fd: unix.FAN_NOFD, Info: []Info{
		{Type: unix.FAN_EVENT_INFO_TYPE_MNT, MntID: 0x80003f6f},
	}}})
}

func TestDecodeInfoRecords(t *testing.T) {
	buf := append(
		record(unix.FAN_CREATE|unix.FAN_ONDIR, unix.FAN_NOFD, 42,
			fidInfo(unix.FAN_EVENT_INFO_TYPE_DFID_NAME, [2]int32{1, -2}, 1, []byte{0xde, 0xad, 0xbe, 0xef}, "sub"),
			fidInfo(unix.FAN_EVENT_INFO_TYPE_FID, [2]int32{1, -2}, 1, []byte{1, 2, 3, 4, 5, 6, 7, 8}, "")),
		record(unix.FAN_PRE_ACCESS, unix.FAN_NOFD, 7, rangeInfo(4096, 8192))...)
	evs, err := Decode(buf)
	assert.NilError(t, err)
	assert.DeepEqual(t, evs, []Event{
		{Mask: unix.FAN_CREATE | unix.FAN_ONDIR, Pid: 42, Fd: unix.FAN_NOFD, Info: []Info{
			{Type: unix.FAN_EVENT_INFO_TYPE_DFID_NAME, Fsid: [2]int32{1, -2}, HandleType: 1, Handle: "deadbeef", Name: "sub"},
			{Type: unix.FAN_EVENT_INFO_TYPE_FID, Fsid: [2]int32{1, -2}, HandleType: 1, Handle: "0102030405060708"},
		}},
		{Mask: unix.FAN_PRE_ACCESS, Pid: 7, Fd: unix.FAN_NOFD, Info: []Info{
			{Type: unix.FAN_EVENT_INFO_TYPE_RANGE, Offset: 4096, Count: 8192},
		}},
	})
	assert.Equal(t, evs[0].String(), `FAN_CREATE|FAN_ONDIR pid=42 DFID_NAME{fsid=1.fffffffe handle=1:deadbeef name="sub"} FID{fsid=1.fffffffe handle=1:0102030405060708}`)
}

func TestDecodeRejectsTruncated(t *testing.T) {
	buf := record(unix.FAN_OPEN, unix.FAN_NOFD, 1, fidInfo(unix.FAN_EVENT_INFO_TYPE_FID, [2]int32{}, 1, []byte{1, 2, 3, 4}, ""))
	_, err := Decode(buf[:len(buf)-4])
	assert.ErrorContains(t, err, "event_len")
	bad := record(unix.FAN_OPEN, unix.FAN_NOFD, 1)
	bad[4] = 99
	_, err = Decode(bad)
	assert.ErrorContains(t, err, "metadata version 99")
}

func TestMaskString(t *testing.T) {
	assert.Equal(t, Mask(unix.FAN_OPEN|unix.FAN_CLOSE_WRITE|unix.FAN_ONDIR|1<<62).String(),
		"FAN_CLOSE_WRITE|FAN_OPEN|FAN_ONDIR|0x4000000000000000")
	assert.Equal(t, Mask(0).String(), "0")
	assert.Equal(t, MarkFlagsString(unix.FAN_MARK_ADD|unix.FAN_MARK_FILESYSTEM|unix.FAN_MARK_IGNORE),
		"FAN_MARK_ADD|FAN_MARK_FILESYSTEM|FAN_MARK_IGNORE")
	assert.Equal(t, InitFlagsString(unix.FAN_REPORT_FID), "FAN_CLASS_NOTIF|FAN_REPORT_FID")
}

// Marks reads back what fanotify_mark(2) set, from /proc/self/fdinfo.
func TestMarksFromFdinfo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("fanotify_init needs CAP_SYS_ADMIN: run as root")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	assert.NilError(t, os.WriteFile(f, nil, 0o644))
	g, err := Init(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	assert.NilError(t, err)
	defer g.Close()
	assert.NilError(t, g.Add(0, unix.FAN_OPEN, f))
	assert.NilError(t, g.Add(unix.FAN_MARK_IGNORED_MASK|unix.FAN_MARK_IGNORED_SURV_MODIFY, unix.FAN_ACCESS, f))
	ms, err := g.Marks()
	assert.NilError(t, err)
	assert.Equal(t, len(ms), 1, "%v", ms)
	m := ms[0]
	assert.Assert(t, m.Kind == InodeMark && m.IsOn(f) && !m.IsOn(dir), "%v", m)
	assert.Equal(t, m.Mask, Mask(unix.FAN_OPEN))
	assert.Equal(t, m.IgnoredMask, Mask(unix.FAN_ACCESS))
	assert.Equal(t, m.MFlags, uint64(FdinfoIgnoredSurvModify))
}

func pidfdInfo(v int32) []byte {
	ne := binary.NativeEndian
	b := make([]byte, 8)
	b[0] = unix.FAN_EVENT_INFO_TYPE_PIDFD
	ne.PutUint16(b[2:], 8)
	ne.PutUint32(b[4:], uint32(v))
	return b
}

// A PIDFD record keeps the pidfd field as the kernel wrote it: FAN_NOPIDFD
// (-1) stays -1 with no fdinfo pid, and a descriptor of a reaped process
// (fdinfo Pid -1, what 7.3 hands out with PIDFD_STALE) is a descriptor with
// PidfdPid -1: the two never decode alike.
func TestDecodePidfdRecord(t *testing.T) {
	evs, err := Decode(record(unix.FAN_OPEN, unix.FAN_NOFD, 1, pidfdInfo(unix.FAN_NOPIDFD)))
	assert.NilError(t, err)
	assert.DeepEqual(t, evs[0].Info, []Info{{Type: unix.FAN_EVENT_INFO_TYPE_PIDFD, Pidfd: -1}})
	assert.Equal(t, evs[0].Info[0].String(), "PIDFD{pidfd=-1 FAN_NOPIDFD or -EPERM}")

	live, err := unix.PidfdOpen(os.Getpid(), 0)
	if errors.Is(err, unix.ENOSYS) {
		t.Skipf("pidfd_open: %v", err)
	}
	assert.NilError(t, err)
	evs, err = Decode(record(unix.FAN_OPEN, unix.FAN_NOFD, 1, pidfdInfo(int32(live))))
	assert.NilError(t, err)
	assert.DeepEqual(t, evs[0].Info, []Info{{Type: unix.FAN_EVENT_INFO_TYPE_PIDFD, Pidfd: int32(live), PidfdPid: int32(os.Getpid())}})
	_, err = unix.FcntlInt(uintptr(live), unix.F_GETFD, 0)
	assert.ErrorIs(t, err, unix.EBADF, "Decode closes the pidfd")

	child := exec.Command("/bin/true")
	assert.NilError(t, child.Start())
	stale, err := unix.PidfdOpen(child.Process.Pid, 0)
	assert.NilError(t, err)
	assert.NilError(t, child.Wait()) // reaped: the pidfd's fdinfo says Pid -1
	evs, err = DecodeKeepPidfds(record(unix.FAN_OPEN, unix.FAN_NOFD, 1, pidfdInfo(int32(stale))))
	assert.NilError(t, err)
	assert.DeepEqual(t, evs[0].Info, []Info{{Type: unix.FAN_EVENT_INFO_TYPE_PIDFD, Pidfd: int32(stale), PidfdPid: -1}})
	assert.NilError(t, unix.Close(stale), "DecodeKeepPidfds leaves the pidfd open")

	notPidfd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	assert.NilError(t, err)
	_, err = Decode(record(unix.FAN_OPEN, unix.FAN_NOFD, 1, pidfdInfo(int32(notPidfd))))
	assert.ErrorContains(t, err, "not a pidfd")
}

// A thread pidfd (PIDFD_THREAD, 6.9) decodes with PidfdThread and the
// thread's id.
func TestDecodeThreadPidfd(t *testing.T) {
	type res struct {
		tid, fd int
		err     error
	}
	c, done := make(chan res), make(chan struct{})
	defer close(done)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		tid := unix.Gettid()
		fd, err := unix.PidfdOpen(tid, unix.O_EXCL) // PIDFD_THREAD
		c <- res{tid, fd, err}
		<-done
	}()
	r := <-c
	if errors.Is(r.err, unix.EINVAL) || errors.Is(r.err, unix.ENOSYS) {
		t.Skipf("pidfd_open(PIDFD_THREAD): %v (needs >= 6.9)", r.err)
	}
	assert.NilError(t, r.err)
	evs, err := Decode(record(unix.FAN_OPEN, unix.FAN_NOFD, 1, pidfdInfo(int32(r.fd))))
	assert.NilError(t, err)
	assert.DeepEqual(t, evs[0].Info, []Info{{Type: unix.FAN_EVENT_INFO_TYPE_PIDFD, Pidfd: int32(r.fd), PidfdPid: int32(r.tid), PidfdThread: true}})
}
