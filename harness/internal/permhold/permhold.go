// Package permhold names other programs' fanotify groups that hold
// permission marks on a filesystem, for the report of an operation that
// stayed blocked: an antivirus-like listener that does not answer (or
// answers slowly) holds the suite's operation as surely as a kernel bug.
package permhold

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/ownproc"
)

// permBits are the events that wait for a listener's answer: FAN_OPEN_PERM,
// FAN_ACCESS_PERM, FAN_OPEN_EXEC_PERM (include/uapi/linux/fanotify.h) and
// the pre-content bit FAN_PRE_ACCESS (0x00100000, since 6.14;
// include/linux/fanotify.h FANOTIFY_PERM_EVENTS).
const permBits = 0x00010000 | 0x00020000 | 0x00040000 | 0x00100000

// Holder is one process whose fanotify group has permission marks on the
// filesystem.
type Holder struct {
	Pid  int
	Comm string
	Fd   int
	Mark string // the fdinfo line of the first such mark
}

// Describe returns, for the filesystem path is on (path itself, or the
// nearest existing parent), "held by another fanotify listener? pid N
// (comm) has permission marks on this filesystem" for each holder outside
// the suite, joined by "; ", or "" when there is none or it cannot tell.
func Describe(path string) string {
	hs, err := Find(path)
	if err != nil || len(hs) == 0 {
		return ""
	}
	var parts []string
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("held by another fanotify listener? pid %d (%s) has permission marks on this filesystem (fd %d: %s)", h.Pid, h.Comm, h.Fd, h.Mark))
	}
	return strings.Join(parts, "; ")
}

// Find scans /proc/*/fdinfo/* for fanotify groups (a "fanotify flags:"
// line, fs/notify/fdinfo.c fanotify_show_fdinfo) of processes outside the
// suite (ownproc) with a mark whose mask has a permission bit on path's
// filesystem: an inode or filesystem mark whose sdev (the superblock's
// s_dev, MAJOR<<20|MINOR) is the filesystem's, or a mount mark whose mnt_id
// is one of this mount namespace's mounts of it (/proc/self/mountinfo).
func Find(path string) ([]Holder, error) {
	dev, err := devOf(path)
	if err != nil {
		return nil, err
	}
	sdev := fmt.Sprintf("%x", unix.Major(dev)<<20|unix.Minor(dev))
	mnts, err := mountIDs(dev)
	if err != nil {
		return nil, err
	}
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, fmt.Errorf("permhold: %w", err)
	}
	var out []Holder
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || ownproc.Own(pid) {
			continue
		}
		fds, _ := os.ReadDir(p + "/fdinfo")
		for _, fd := range fds {
			b, err := os.ReadFile(p + "/fdinfo/" + fd.Name())
			if err != nil || !strings.Contains(string(b), "fanotify flags:") {
				continue
			}
			if line := permMark(string(b), sdev, mnts); line != "" {
				n, _ := strconv.Atoi(fd.Name())
				comm, _ := os.ReadFile(p + "/comm")
				out = append(out, Holder{Pid: pid, Comm: strings.TrimSpace(string(comm)), Fd: n, Mark: line})
				break
			}
		}
	}
	return out, nil
}

// permMark returns the first mark line of a fanotify fdinfo that has a
// permission bit in its mask and is on the filesystem (sdev in hex as
// fdinfo prints it, or one of the mount ids mnts), else "".
func permMark(fdinfo, sdev string, mnts map[string]bool) string {
	for _, line := range strings.Split(fdinfo, "\n") {
		if !strings.HasPrefix(line, "fanotify ") || strings.HasPrefix(line, "fanotify flags:") {
			continue
		}
		f := fields(line)
		mask, err := strconv.ParseUint(f["mask"], 16, 64)
		if err != nil || mask&permBits == 0 {
			continue
		}
		if (f["sdev"] != "" && f["sdev"] == sdev) || (f["mnt_id"] != "" && mnts[f["mnt_id"]]) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// fields splits "fanotify ino:1a sdev:800001 mflags:0 mask:10000 ..." into
// its key:value pairs.
func fields(line string) map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(line) {
		if k, v, ok := strings.Cut(w, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// devOf returns st_dev of path or of its nearest existing parent.
func devOf(path string) (uint64, error) {
	for p := path; ; p = filepath.Dir(p) {
		var st unix.Stat_t
		err := unix.Lstat(p, &st)
		if err == nil {
			return st.Dev, nil
		}
		if p == "/" || p == "." || p == "" {
			return 0, fmt.Errorf("permhold: stat %s: %w", path, err)
		}
	}
}

// mountIDs returns the ids (hex, as fdinfo prints mnt_id) of this mount
// namespace's mounts whose device is dev (/proc/self/mountinfo: field 1 the
// mount id in decimal, field 3 major:minor).
func mountIDs(dev uint64) (map[string]bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("permhold: %w", err)
	}
	defer f.Close()
	want := fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev))
	ids := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) < 3 || w[2] != want {
			continue
		}
		if id, err := strconv.Atoi(w[0]); err == nil {
			ids[strconv.FormatInt(int64(id), 16)] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("permhold: reading mountinfo: %w", err)
	}
	return ids, nil
}
