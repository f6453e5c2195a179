package main

// specRules declares the man-page rules (harness/spec/rules.txt) each case
// checks: a kernel that broke one would fail the case.
var specRules = map[string][]string{
	"create_in_dir": {"inotify.7/events/create", "inotify.7/read/name-only-for-children", "inotify_add_watch.2/description/wd-in-events"},
	"dir_child_lifecycle": {
		"inotify.7/events/create", "inotify.7/events/open", "inotify.7/events/modify", "inotify.7/events/close-write",
		"inotify.7/events/attrib", "inotify.7/events/access", "inotify.7/events/close-nowrite", "inotify.7/events/delete",
		"inotify.7/read/name-only-for-children", "inotify.7/read/cookie-zero", "inotify.7/notes/ordered",
	},
	"dir_subdir_isdir": {"inotify.7/flags/isdir", "inotify.7/examples/mkdir-rmdir"},
	"file_self_unlink": {
		"inotify.7/events/delete-self", "inotify.7/flags/ignored", "inotify.7/read/name-only-for-children",
		"inotify.7/events/open", "inotify.7/events/modify", "inotify.7/events/close-write", "inotify.7/events/attrib",
		"inotify.7/examples/unlink-other-link",
	},
	"rmdir_watched_dir":         {"inotify.7/events/delete-self", "inotify.7/flags/ignored", "inotify.7/examples/mkdir-rmdir"},
	"rm_watch_ignored":          {"inotify.7/flags/ignored"},
	"rename_cookie_in_dir":      {"inotify.7/events/moved-from-to", "inotify.7/events/move-self", "inotify.7/read/cookie-zero"},
	"rename_cookie_across_dirs": {"inotify.7/events/moved-from-to", "inotify.7/examples/rename", "inotify.7/notes/ordered"},
	"oneshot":                   {"inotify.7/flags/oneshot"},
	"excl_unlink":               {"inotify.7/flags/excl-unlink"},
	"mask_add":                  {"inotify.7/flags/mask-add", "inotify_add_watch.2/description/same-inode-same-wd"},
	"mask_create_eexist": {
		"inotify.7/flags/mask-create", "inotify.7/flags/mask-add-and-create-einval",
		"inotify_add_watch.2/errors/EEXIST", "inotify_add_watch.2/errors/EINVAL-add-and-create", "inotify_add_watch.2/description/new-wd",
	},
	"onlydir":            {"inotify.7/flags/onlydir", "inotify_add_watch.2/errors/ENOTDIR", "inotify.7/events/dir-star-events-both"},
	"dont_follow":        {"inotify.7/flags/dont-follow", "inotify_add_watch.2/description/same-inode-same-wd"},
	"coalesce_identical": {"inotify.7/notes/coalesce"},
	"queue_overflow":     {"inotify.7/flags/q-overflow", "inotify.7/limits/max-queued-events"},
	// cases_spec.go
	"spec_inode_based":      {"inotify.7/events/inode-based"},
	"spec_not_recursive":    {"inotify.7/caveats/not-recursive"},
	"spec_mount_over":       {"inotify.7/caveats/mount-over"},
	"spec_mmap_no_events":   {"inotify.7/caveats/no-mmap-events"},
	"spec_fallocate_modify": {"inotify.7/bugs/fallocate-modify"},
	"spec_pending_after_rm": {"inotify.7/bugs/pending-after-rm", "inotify.7/flags/ignored"},
	"spec_wd_cycles":        {"inotify.7/bugs/wd-cycles", "inotify_add_watch.2/description/new-wd"},
	"spec_pseudo_fs":        {"inotify.7/caveats/pseudo-fs"},
	"spec_create_kinds":     {"inotify.7/events/create-kinds"},
	"spec_execve_access":    {"inotify.7/events/access-execve", "inotify.7/events/open", "inotify.7/events/close-nowrite"},
	"spec_dir_own_events":   {"inotify.7/events/dir-access-on-readdir", "inotify.7/events/dir-plus-events-children-only"},
}
