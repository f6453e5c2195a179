package main

// specRules declares the man-page rules (harness/spec/rules.txt) each case
// checks: a kernel that broke one would fail the case.
var specRules = map[string][]string{
	"inode_mark_file": {
		"fanotify_mark.2/mask/open", "fanotify_mark.2/mask/modify", "fanotify_mark.2/mask/access",
		"fanotify_mark.2/mask/close-write", "fanotify_mark.2/mask/close-nowrite",
		"fanotify.7/read/pid-of-actor", "fanotify.7/read/fd-refers-to-object", "fanotify.7/queue/removed-on-read",
		"fanotify_init.2/description/returns-group-fd",
	},
	"inode_mark_dir/on_child":       {"fanotify_mark.2/mask/event-on-child"},
	"inode_mark_dir/no_flag":        {"fanotify_mark.2/mask/event-on-child", "fanotify_mark.2/mask/ondir"},
	"inode_mark_dir/ondir":          {"fanotify_mark.2/mask/ondir", "fanotify.7/read/ondir-only-in-fid-groups"},
	"inode_mark_dir/on_child_ondir": {"fanotify_mark.2/mask/ondir", "fanotify_mark.2/mask/event-on-child"},
	"mount_mark_scope":              {"fanotify_mark.2/flags/mount-mark-scope", "fanotify_mark.2/flags/mount-mark-not-other-mounts"},
	"filesystem_mark_scope":         {"fanotify_mark.2/flags/filesystem-mark-scope"},
	"fid_inode_mark": {
		"fanotify_init.2/flags/report-fid-record", "fanotify.7/read/fid-group-nofd", "fanotify.7/records/fid-fsid-statfs",
		"fanotify.7/records/fid-handle", "fanotify_mark.2/mask/attrib", "fanotify.7/read/event-len-records",
	},
	"fid_dirent": {
		"fanotify_mark.2/mask/create", "fanotify_mark.2/mask/delete", "fanotify_mark.2/mask/moved-from-to",
		"fanotify_mark.2/mask/ondir", "fanotify_init.2/flags/report-fid-dirent-dir-only", "fanotify.7/read/merge-same-object-same-pid",
		"fanotify.7/read/ondir-only-in-fid-groups",
	},
	"dfid_name_filesystem_mark": {"fanotify_init.2/flags/report-name-record", "fanotify.7/records/dfid-name-nul", "fanotify_mark.2/flags/filesystem-mark-scope"},
	"dfid_name_fid_records":     {"fanotify_init.2/flags/report-name-record", "fanotify_init.2/flags/dir-fid-and-fid-two-records"},
	"dirent_events_need_fid":    {"fanotify_mark.2/mask/fid-events-need-fid-group", "fanotify_mark.2/flags/mount-mark-no-fid-events"},
	"mark_onlydir":              {"fanotify_mark.2/flags/onlydir"},
	"mark_dont_follow":          {"fanotify_mark.2/flags/dont-follow"},
	"mark_flush":                {"fanotify_mark.2/flags/flush-by-type", "fanotify_mark.2/flags/flush-other-flags-einval"},
	"queue_overflow":            {"fanotify.7/read/overflow-event", "fanotify.7/proc/max-queued-events"},
	"unlimited_queue":           {"fanotify_init.2/flags/unlimited-queue"},
	// cases_spec.go
	"spec_delete_self":                 {"fanotify_mark.2/mask/delete-self", "fanotify.7/groups/marks-gone-on-delete"},
	"spec_event_on_child_mount_fs":     {"fanotify_mark.2/mask/event-on-child-mount-fs-no-effect"},
	"spec_not_recursive":               {"fanotify.7/caveats/not-recursive", "fanotify_mark.2/mask/event-on-child"},
	"spec_dir_not_told_of_children":    {"fanotify.7/caveats/dir-events-only-for-dir-itself"},
	"spec_mmap_no_events":              {"fanotify.7/caveats/no-mmap-events"},
	"spec_fallocate_modify":            {"fanotify.7/bugs/fallocate-modify"},
	"spec_exec_script_interpreter":     {"fanotify_mark.2/notes/exec-events-on-execve-only"},
	"spec_ignore_while_open_for_write": {"fanotify_mark.2/flags/ignore-while-open-for-write"},
	"spec_event_on_child_no_self":      {"fanotify_mark.2/mask/event-on-child-no-self", "fanotify_mark.2/mask/move-self", "fanotify_mark.2/mask/delete-self"},
	"spec_exec_dynamic_linker":         {"fanotify_mark.2/notes/exec-dynamic-linker"},
	"spec_readdir_access":              {"fanotify_mark.2/bugs/readdir-access"},
}
