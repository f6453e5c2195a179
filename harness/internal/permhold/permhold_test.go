package permhold

import "testing"

// permMark picks the first mark with a permission bit on the filesystem
// (by sdev for inode and filesystem marks, by mnt_id for mount marks) and
// nothing else (fdinfo lines as fs/notify/fdinfo.c prints them).
func TestPermMark(t *testing.T) {
	mnts := map[string]bool{"2a": true}
	for _, c := range []struct {
		fdinfo, want string
	}{
		{"fanotify flags:4 event-flags:8000\nfanotify sdev:28 mflags:0 mask:10000 ignored_mask:0\n", "fanotify sdev:28 mflags:0 mask:10000 ignored_mask:0"},
		{"fanotify flags:4 event-flags:8000\nfanotify sdev:29 mflags:0 mask:10000 ignored_mask:0\n", ""},
		{"fanotify flags:0 event-flags:8000\nfanotify sdev:28 mflags:0 mask:20 ignored_mask:10000\n", ""},
		{"fanotify flags:8 event-flags:0\nfanotify ino:c sdev:28 mflags:0 mask:100000 ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:0c00000000000000\n", "fanotify ino:c sdev:28 mflags:0 mask:100000 ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:0c00000000000000"},
		{"fanotify flags:4 event-flags:0\nfanotify mnt_id:2a mflags:0 mask:40000 ignored_mask:0\n", "fanotify mnt_id:2a mflags:0 mask:40000 ignored_mask:0"},
		{"fanotify flags:4 event-flags:0\nfanotify mnt_id:2b mflags:0 mask:40000 ignored_mask:0\n", ""},
	} {
		if got := permMark(c.fdinfo, "28", mnts); got != c.want {
			t.Errorf("permMark(%q) = %q, want %q", c.fdinfo, got, c.want)
		}
	}
}
