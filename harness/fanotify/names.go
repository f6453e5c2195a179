package fanotify

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// Mask is a fanotify event mask; it prints symbolically (FAN_OPEN|FAN_ONDIR),
// with any bits it does not know in hex.
type Mask uint64

type bitName struct {
	bit  uint64
	name string
}

// Order matters only for printing: events first, then flags.
var eventBits = []bitName{
	{unix.FAN_ACCESS, "FAN_ACCESS"},
	{unix.FAN_MODIFY, "FAN_MODIFY"},
	{unix.FAN_ATTRIB, "FAN_ATTRIB"},
	{unix.FAN_CLOSE_WRITE, "FAN_CLOSE_WRITE"},
	{unix.FAN_CLOSE_NOWRITE, "FAN_CLOSE_NOWRITE"},
	{unix.FAN_OPEN, "FAN_OPEN"},
	{unix.FAN_MOVED_FROM, "FAN_MOVED_FROM"},
	{unix.FAN_MOVED_TO, "FAN_MOVED_TO"},
	{unix.FAN_CREATE, "FAN_CREATE"},
	{unix.FAN_DELETE, "FAN_DELETE"},
	{unix.FAN_DELETE_SELF, "FAN_DELETE_SELF"},
	{unix.FAN_MOVE_SELF, "FAN_MOVE_SELF"},
	{unix.FAN_OPEN_EXEC, "FAN_OPEN_EXEC"},
	{unix.FAN_Q_OVERFLOW, "FAN_Q_OVERFLOW"},
	{unix.FAN_FS_ERROR, "FAN_FS_ERROR"},
	{unix.FAN_OPEN_PERM, "FAN_OPEN_PERM"},
	{unix.FAN_ACCESS_PERM, "FAN_ACCESS_PERM"},
	{unix.FAN_OPEN_EXEC_PERM, "FAN_OPEN_EXEC_PERM"},
	{unix.FAN_PRE_ACCESS, "FAN_PRE_ACCESS"},
	{unix.FAN_MNT_ATTACH, "FAN_MNT_ATTACH"},
	{unix.FAN_MNT_DETACH, "FAN_MNT_DETACH"},
	{unix.FAN_RENAME, "FAN_RENAME"},
	{unix.FAN_ONDIR, "FAN_ONDIR"},
	{unix.FAN_EVENT_ON_CHILD, "FAN_EVENT_ON_CHILD"},
}

// String renders m as FAN_X|FAN_Y|0x…, or "0".
func (m Mask) String() string { return formatBits(uint64(m), eventBits) }

// PermissionEvents are the events that wait for a response (FAN_ALL_PERM_EVENTS
// plus the pre-content event FAN_PRE_ACCESS).
const PermissionEvents = unix.FAN_OPEN_PERM | unix.FAN_ACCESS_PERM | unix.FAN_OPEN_EXEC_PERM | unix.FAN_PRE_ACCESS

var markFlagBits = []bitName{
	{unix.FAN_MARK_ADD, "FAN_MARK_ADD"},
	{unix.FAN_MARK_REMOVE, "FAN_MARK_REMOVE"},
	{unix.FAN_MARK_DONT_FOLLOW, "FAN_MARK_DONT_FOLLOW"},
	{unix.FAN_MARK_ONLYDIR, "FAN_MARK_ONLYDIR"},
	{unix.FAN_MARK_MOUNT, "FAN_MARK_MOUNT"},
	{unix.FAN_MARK_IGNORED_MASK, "FAN_MARK_IGNORED_MASK"},
	{unix.FAN_MARK_IGNORED_SURV_MODIFY, "FAN_MARK_IGNORED_SURV_MODIFY"},
	{unix.FAN_MARK_FLUSH, "FAN_MARK_FLUSH"},
	{unix.FAN_MARK_FILESYSTEM &^ unix.FAN_MARK_MOUNT, "FAN_MARK_FILESYSTEM"},
	{unix.FAN_MARK_EVICTABLE, "FAN_MARK_EVICTABLE"},
	{unix.FAN_MARK_IGNORE, "FAN_MARK_IGNORE"},
}

// MarkFlagsString renders fanotify_mark(2) flags symbolically.
func MarkFlagsString(flags uint) string {
	f := uint64(flags)
	var parts []string
	// FAN_MARK_FILESYSTEM (0x100) shares no bit with FAN_MARK_MOUNT (0x10) but
	// FAN_MARK_MNTNS is both together; print that one whole.
	if f&(unix.FAN_MARK_MNTNS) == unix.FAN_MARK_MNTNS {
		parts = append(parts, "FAN_MARK_MNTNS")
		f &^= unix.FAN_MARK_MNTNS
	}
	s := formatBits(f, markFlagBits)
	if s != "0" || len(parts) == 0 {
		parts = append(parts, s)
	}
	return strings.Join(parts, "|")
}

var initFlagBits = []bitName{
	{unix.FAN_CLOEXEC, "FAN_CLOEXEC"},
	{unix.FAN_NONBLOCK, "FAN_NONBLOCK"},
	{unix.FAN_CLASS_CONTENT, "FAN_CLASS_CONTENT"},
	{unix.FAN_CLASS_PRE_CONTENT, "FAN_CLASS_PRE_CONTENT"},
	{unix.FAN_UNLIMITED_QUEUE, "FAN_UNLIMITED_QUEUE"},
	{unix.FAN_UNLIMITED_MARKS, "FAN_UNLIMITED_MARKS"},
	{unix.FAN_ENABLE_AUDIT, "FAN_ENABLE_AUDIT"},
	{unix.FAN_REPORT_PIDFD, "FAN_REPORT_PIDFD"},
	{unix.FAN_REPORT_TID, "FAN_REPORT_TID"},
	{unix.FAN_REPORT_FID, "FAN_REPORT_FID"},
	{unix.FAN_REPORT_DIR_FID, "FAN_REPORT_DIR_FID"},
	{unix.FAN_REPORT_NAME, "FAN_REPORT_NAME"},
	{unix.FAN_REPORT_TARGET_FID, "FAN_REPORT_TARGET_FID"},
	{unix.FAN_REPORT_FD_ERROR, "FAN_REPORT_FD_ERROR"},
	{unix.FAN_REPORT_MNT, "FAN_REPORT_MNT"},
}

// InitFlagsString renders fanotify_init(2) flags symbolically (FAN_CLASS_NOTIF is 0).
func InitFlagsString(flags uint) string {
	s := formatBits(uint64(flags), initFlagBits)
	if flags&(unix.FAN_CLASS_CONTENT|unix.FAN_CLASS_PRE_CONTENT) == 0 {
		if s == "0" {
			return "FAN_CLASS_NOTIF"
		}
		return "FAN_CLASS_NOTIF|" + s
	}
	return s
}

var infoTypeNames = map[uint8]string{
	unix.FAN_EVENT_INFO_TYPE_FID:           "FID",
	unix.FAN_EVENT_INFO_TYPE_DFID_NAME:     "DFID_NAME",
	unix.FAN_EVENT_INFO_TYPE_DFID:          "DFID",
	unix.FAN_EVENT_INFO_TYPE_PIDFD:         "PIDFD",
	unix.FAN_EVENT_INFO_TYPE_ERROR:         "ERROR",
	unix.FAN_EVENT_INFO_TYPE_RANGE:         "RANGE",
	unix.FAN_EVENT_INFO_TYPE_MNT:           "MNT",
	unix.FAN_EVENT_INFO_TYPE_OLD_DFID_NAME: "OLD_DFID_NAME",
	unix.FAN_EVENT_INFO_TYPE_NEW_DFID_NAME: "NEW_DFID_NAME",
}

// InfoTypeString names an info record type.
func InfoTypeString(t uint8) string {
	if n, ok := infoTypeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("INFO_TYPE_%d", t)
}

func formatBits(v uint64, table []bitName) string {
	if v == 0 {
		return "0"
	}
	var parts []string
	for _, b := range table {
		if b.bit != 0 && v&b.bit == b.bit {
			parts = append(parts, b.name)
			v &^= b.bit
		}
	}
	if v != 0 {
		parts = append(parts, fmt.Sprintf("%#x", v))
	}
	return strings.Join(parts, "|")
}
