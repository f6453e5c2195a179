package main

// specRules declares the man-page rules (harness/spec/rules.txt) each case
// checks: a kernel that broke one would fail the case.
var specRules = map[string][]string{
	"fdinfo_watches":                     {"inotify.7/fdinfo/watch-line"},
	"ioctl_setnextwd":                    {"inotify.7/notes/setnextwd"},
	"fionread":                           {"inotify.7/notes/fionread", "inotify.7/read/event-fields"},
	"sigio":                              {"inotify.7/notes/sigio"},
	"read_short_buffer":                  {"inotify.7/read/EINVAL-small-buffer", "inotify.7/read/nonblock"},
	"read_blocks_until_event":            {"inotify.7/read/blocks"},
	"unmount_watched_fs":                 {"inotify.7/flags/unmount", "inotify.7/flags/ignored"},
	"api_errors/add_mask_zero":           {"inotify_add_watch.2/errors/EINVAL-no-event"},
	"api_errors/add_mask_no_known_bit":   {"inotify_add_watch.2/errors/EINVAL-no-event"},
	"api_errors/add_mask_add_and_create": {"inotify_add_watch.2/errors/EINVAL-add-and-create", "inotify.7/flags/mask-add-and-create-einval"},
	"api_errors/add_fd_closed":           {"inotify_add_watch.2/errors/EBADF"},
	"api_errors/add_fd_not_inotify":      {"inotify_add_watch.2/errors/EINVAL-not-inotify"},
	"api_errors/add_no_read_permission":  {"inotify_add_watch.2/errors/EACCES"},
	"api_errors/add_missing_path":        {"inotify_add_watch.2/errors/ENOENT"},
	// cases_spec.go
	"spec_poll_readable":                            {"inotify.7/notes/poll"},
	"spec_add_watch_path_errors/efault":             {"inotify_add_watch.2/errors/EFAULT"},
	"spec_add_watch_path_errors/path_too_long":      {"inotify_add_watch.2/errors/ENAMETOOLONG"},
	"spec_add_watch_path_errors/component_too_long": {"inotify_add_watch.2/errors/ENAMETOOLONG"},
	"spec_add_watch_path_errors/dangling_symlink":   {"inotify_add_watch.2/errors/ENOENT-dangling"},
}
