package main

// specRules declares the man-page rules (harness/spec/rules.txt) each case
// checks: a kernel that broke one would fail the case.
var specRules = map[string][]string{
	"ext4_error_records/corrupted_inode_lookup": {"fanotify_mark.2/mask/fs-error", "fanotify.7/records/error-record"},
	// The subtest before it read its event: the count starts anew.
	"ext4_error_records/errors_merge_into_count": {"fanotify.7/fs_error/one-per-filesystem", "fanotify.7/fs_error/count-reset-on-read"},
	"ext4_error_records/abort":                   {"fanotify.7/fs_error/invalid-handle-for-sb", "fanotify.7/records/error-record"},
	// FAN_FS_ERROR on an inode mark is EINVAL, and an inode mark on the
	// root of an aborted ext4 without a filesystem mark reads nothing.
	"ext4_error_unwatched": {"fanotify_mark.2/mask/fs-error-filesystem-mark-only"},
}
