package inotify

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// WatchState is one watch of an inotify instance as /proc/<pid>/fdinfo
// shows it. fs/notify/fdinfo.c inotify_fdinfo() prints
// "inotify wd:%x ino:%lx sdev:%x mask:%x ignored_mask:0" followed by the
// inode's file handle (show_mark_fhandle); the mask is
// inotify_mark_user_mask() (fs/notify/inotify/inotify.h): the watch's
// IN_ALL_EVENTS bits, plus IN_EXCL_UNLINK and IN_ONESHOT when the watch has
// them.
type WatchState struct {
	Wd  int32
	Ino uint64
	// Dev is the filesystem's device as stat(2) reports it (st_dev); fdinfo
	// prints the kernel's MKDEV encoding (major<<20 | minor), converted here.
	Dev  uint64
	Mask Mask
	// HandleType and Handle (hex) are the inode's file handle as fdinfo
	// prints it (show_mark_fhandle: "fhandle-bytes:%x fhandle-type:%x
	// f_handle:%02x..."), the same as name_to_handle_at(2) gives; zero when
	// the kernel printed none (no CONFIG_EXPORTFS, encoding failed, or on
	// 7.x another task held the filesystem's s_umount: harness/fdinfo).
	HandleType int32
	Handle     string
}

// Watches parses the instance's watches from /proc/self/fdinfo.
func (in *Instance) Watches() ([]WatchState, error) {
	return ReadWatches(os.Getpid(), in.fd)
}

// ReadWatches parses the watches of inotify fd of process pid from
// /proc/<pid>/fdinfo/<fd>.
func ReadWatches(pid, fd int) ([]WatchState, error) {
	path := fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read inotify fdinfo: %w", err)
	}
	return ParseWatches(string(data))
}

// ParseWatches parses the "inotify wd:..." lines of an fdinfo text.
func ParseWatches(text string) ([]WatchState, error) {
	var out []WatchState
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "inotify ")
		if !ok {
			continue
		}
		fields := map[string]string{}
		for _, f := range strings.Fields(rest) {
			if k, v, ok := strings.Cut(f, ":"); ok {
				fields[k] = v
			}
		}
		hex := func(k string) (uint64, error) {
			v, err := strconv.ParseUint(fields[k], 16, 64)
			if err != nil {
				return 0, fmt.Errorf("inotify fdinfo line %q: field %s: %w", line, k, err)
			}
			return v, nil
		}
		var vals [4]uint64
		for i, k := range []string{"wd", "ino", "sdev", "mask"} {
			v, err := hex(k)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		sdev := vals[2]
		w := WatchState{
			Wd:   int32(vals[0]),
			Ino:  vals[1],
			Dev:  unix.Mkdev(uint32(sdev>>20), uint32(sdev&(1<<20-1))),
			Mask: Mask(vals[3]),
		}
		if _, ok := fields["f_handle"]; ok {
			ht, err := hex("fhandle-type")
			if err != nil {
				return nil, err
			}
			w.HandleType, w.Handle = int32(ht), fields["f_handle"]
		}
		out = append(out, w)
	}
	return out, nil
}

// String renders the watch for a failure report.
func (w WatchState) String() string {
	return fmt.Sprintf("wd=%d ino=%d dev=%d:%d mask=%s", w.Wd, w.Ino, unix.Major(w.Dev), unix.Minor(w.Dev), w.Mask)
}
