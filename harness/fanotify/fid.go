package fanotify

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// FIDOf returns the FID record the kernel should report for path: the fsid that
// statfs(2) gives for it and the handle name_to_handle_at(2) gives
// (fanotify(7): "fsid ... the same value as f_fsid when calling statfs(2)";
// "handle ... the same as name_to_handle_at(2)").
func FIDOf(path string) (Info, error) {
	return fidRecord(unix.FAN_EVENT_INFO_TYPE_FID, path, "")
}

// DFIDOf is FIDOf for a directory reported in a DFID record.
func DFIDOf(dir string) (Info, error) {
	return fidRecord(unix.FAN_EVENT_INFO_TYPE_DFID, dir, "")
}

// DFIDNameOf returns the DFID_NAME record of entry name in directory dir.
func DFIDNameOf(dir, name string) (Info, error) {
	return fidRecord(unix.FAN_EVENT_INFO_TYPE_DFID_NAME, dir, name)
}

// WithType returns a copy of i with another record type (OLD_/NEW_DFID_NAME).
func (i Info) WithType(t uint8) Info { i.Type = t; return i }

// atHandleFID is AT_HANDLE_FID (include/uapi/linux/fcntl.h), which
// golang.org/x/sys/unix does not name.
const atHandleFID = 0x200

func fidRecord(typ uint8, path, name string) (Info, error) {
	var sfs unix.Statfs_t
	if err := unix.Statfs(path, &sfs); err != nil {
		return Info{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, path, 0)
	if errors.Is(err, unix.EOPNOTSUPP) {
		// A filesystem that cannot decode handles (overlayfs without
		// nfs_export) still encodes one for identification, which is what
		// fanotify reports (exportfs_encode_fid); name_to_handle_at(2) gives
		// the same with AT_HANDLE_FID (Linux 6.5).
		h, _, err = unix.NameToHandleAt(unix.AT_FDCWD, path, atHandleFID)
	}
	if err != nil {
		return Info{}, fmt.Errorf("name_to_handle_at %s: %w", path, err)
	}
	return Info{
		Type:       typ,
		Fsid:       [2]int32{sfs.Fsid.Val[0], sfs.Fsid.Val[1]},
		HandleType: h.Type(),
		Handle:     fmt.Sprintf("%x", h.Bytes()),
		Name:       name,
	}, nil
}

// MarkKind tells which object a mark is attached to.
type MarkKind string

// Mark kinds as /proc/<pid>/fdinfo reports them.
const (
	InodeMark      MarkKind = "inode"
	MountMark      MarkKind = "mount"
	FilesystemMark MarkKind = "filesystem"
)

// MarkState is one mark line of a fanotify fd's /proc/self/fdinfo entry
// (fs/notify/fdinfo.c: "fanotify ino:%lx sdev:%x mflags:%x mask:%x ignored_mask:%x",
// "fanotify mnt_id:%x mflags:%x mask:%x ignored_mask:%x",
// "fanotify sdev:%x mflags:%x mask:%x ignored_mask:%x").
type MarkState struct {
	Kind MarkKind
	Ino  uint64
	// Dev is the filesystem's device as stat(2) reports it (st_dev). fdinfo
	// prints the kernel's internal encoding (MKDEV: major<<20 | minor);
	// Marks converts it, so Dev compares with Stat_t.Dev.
	Dev         uint64
	MntID       uint64
	MFlags      uint64 // FAN_MARK_IGNORED_SURV_MODIFY, FAN_MARK_EVICTABLE, FAN_MARK_IGNORE: fdinfo prints the user-visible flag values
	Mask        Mask
	IgnoredMask Mask
}

// fdinfo mflags bits: fanotify_mark_user_flags() (fs/notify/fanotify/fanotify.h)
// translates the mark's internal flags back to the fanotify_mark(2) flag values.
const (
	FdinfoIgnoredSurvModify = unix.FAN_MARK_IGNORED_SURV_MODIFY
	FdinfoEvictable         = unix.FAN_MARK_EVICTABLE
	FdinfoIgnore            = unix.FAN_MARK_IGNORE
)

// Marks parses the group's marks from /proc/self/fdinfo.
func (g *Group) Marks() ([]MarkState, error) {
	data, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(g.fd))
	if err != nil {
		return nil, fmt.Errorf("read fanotify fdinfo: %w", err)
	}
	var out []MarkState
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "fanotify ")
		if !ok {
			continue
		}
		var m MarkState
		fields := map[string]string{}
		for _, f := range strings.Fields(rest) {
			k, v, ok := strings.Cut(f, ":")
			if ok {
				fields[k] = v
			}
		}
		// fanotify_show_fdinfo (fs/notify/fdinfo.c) also prints the group's own
		// line, "fanotify flags:%x event-flags:%x"; only mark lines have mflags.
		if _, ok := fields["mflags"]; !ok {
			continue
		}
		hex := func(k string) uint64 { v, _ := strconv.ParseUint(fields[k], 16, 64); return v }
		switch {
		case fields["ino"] != "":
			m.Kind = InodeMark
		case fields["mnt_id"] != "":
			m.Kind = MountMark
		default:
			m.Kind = FilesystemMark
		}
		sdev := hex("sdev")
		m.Ino, m.Dev, m.MntID = hex("ino"), unix.Mkdev(uint32(sdev>>20), uint32(sdev&(1<<20-1))), hex("mnt_id")
		m.MFlags, m.Mask, m.IgnoredMask = hex("mflags"), Mask(hex("mask")), Mask(hex("ignored_mask"))
		out = append(out, m)
	}
	return out, nil
}

// IsOn reports whether the mark is attached to path's object: its inode for an
// inode mark, its filesystem for a filesystem mark (a mount mark is never
// matched by path).
func (m MarkState) IsOn(path string) bool {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return false
	}
	switch m.Kind {
	case InodeMark:
		return m.Dev == st.Dev && m.Ino == st.Ino
	case FilesystemMark:
		return m.Dev == st.Dev
	}
	return false
}

// String renders the mark state for a failure report.
func (m MarkState) String() string {
	obj := fmt.Sprintf("dev=%d:%d", unix.Major(m.Dev), unix.Minor(m.Dev))
	switch m.Kind {
	case InodeMark:
		obj = fmt.Sprintf("ino=%d dev=%d:%d", m.Ino, unix.Major(m.Dev), unix.Minor(m.Dev))
	case MountMark:
		obj = fmt.Sprintf("mnt_id=%d", m.MntID)
	}
	return fmt.Sprintf("%s mark %s mflags=%#x mask=%s ignored_mask=%s", m.Kind, obj, m.MFlags, m.Mask, m.IgnoredMask)
}
