// Package fdinfo helps a case that compares the file handle an fsnotify
// mark's line of /proc/<pid>/fdinfo/<fd> shows ("fhandle-bytes:%x
// fhandle-type:%x f_handle:%02x..."): the kernel may leave the handle out
// of one read for a reason that is no bug, so a line that lacks only its
// handle is read again (ReadUntil) before the case fails.
//
// Why: fs/notify/fdinfo.c show_mark_fhandle prints those fields after the
// inode mark's line (inotify_fdinfo, fanotify_fdinfo). On Linux 7.x it first
// takes the inode's superblock's s_umount with super_trylock_shared and
// prints nothing when that fails: while another task holds s_umount
// exclusively or waits for it (a remount, a freeze or thaw, an umount,
// sync_filesystem under it), or while the superblock is dying. That
// can happen under any other program's activity on the filesystem, and it
// passes. Older kernels do not take the lock (6.1's show_mark_fhandle calls
// exportfs_encode_inode_fh directly): there the handle is left out only when
// it cannot be encoded (FILEID_INVALID or an error) or without
// CONFIG_EXPORTFS, which no re-read changes. Either way a handle absent on
// every one of Reads reads, Gap apart, is reported as such, naming the count.
package fdinfo

import (
	"fmt"
	"strings"
	"time"
)

// Reads and Gap bound ReadUntil: at most Reads reads, Gap apart (about 0.2 s).
const (
	Reads = 20
	Gap   = 10 * time.Millisecond
)

// sleep is time.Sleep (a test replaces it).
var sleep = time.Sleep

// ReadUntil calls read until handleMissing says its result lacks no file
// handle, at most Reads times with Gap between reads, and returns the last
// result and the number of reads made. An error of read ends it at once
// (returned with that read's result). The caller decides what a result that
// still lacks a handle after Reads reads means, and says how many reads it
// saw that in.
func ReadUntil[T any](read func() (T, error), handleMissing func(T) bool) (T, int, error) {
	var (
		v   T
		err error
	)
	for n := 1; ; n++ {
		v, err = read()
		if err != nil || !handleMissing(v) || n == Reads {
			return v, n, err
		}
		sleep(Gap)
	}
}

// handleFields are the fields show_mark_fhandle prints, in its order.
var handleFields = []string{"fhandle-bytes:", "fhandle-type:", "f_handle:"}

// WithoutHandle returns line with the file-handle fields removed (and the
// space before them), and whether it had any: "fanotify ino:1 ... ignored_mask:0
// fhandle-bytes:8 fhandle-type:1 f_handle:0102" becomes "fanotify ino:1 ...
// ignored_mask:0". A line that has them is what the kernel prints when it
// could encode the handle; WithoutHandle of it is the same line when it
// could not.
func WithoutHandle(line string) (string, bool) {
	fields := strings.Fields(line)
	kept := fields[:0:0]
	had := false
	for _, f := range fields {
		handle := false
		for _, h := range handleFields {
			if strings.HasPrefix(f, h) {
				handle = true
			}
		}
		if handle {
			had = true
			continue
		}
		kept = append(kept, f)
	}
	if !had {
		return line, false
	}
	return strings.Join(kept, " "), true
}

// MissingNote is the sentence a failure adds when a handle was absent on
// every read: why the kernel may leave it out, so the reader can tell a
// filesystem held by another task from a kernel that lost the handle.
func MissingNote(reads int) string {
	return fmt.Sprintf("the file handle was absent on all %d reads of fdinfo, %v apart "+
		"(fs/notify/fdinfo.c show_mark_fhandle prints none when it cannot encode the handle, without CONFIG_EXPORTFS, "+
		"and on 7.x when super_trylock_shared of the inode's superblock fails: another task holding or waiting for its s_umount "+
		"exclusively the whole time, as a remount, freeze, umount or sync_filesystem does)", reads, Gap)
}
