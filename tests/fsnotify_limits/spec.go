package main

// specRules declares the man-page rules (harness/spec/rules.txt) each case
// checks: a kernel that broke one would fail the case.
var specRules = map[string][]string{
	"inotify_instances":        {"inotify.7/limits/max-user-instances"},
	"inotify_watches":          {"inotify.7/limits/max-user-watches", "inotify_add_watch.2/errors/ENOSPC"},
	"fanotify_groups":          {"fanotify.7/proc/max-user-groups", "fanotify_init.2/errors/EMFILE-groups", "fanotify.7/close/frees-group"},
	"fd_table_full":            {"fanotify_init.2/errors/EMFILE-fds"},
	"fanotify_marks":           {"fanotify.7/proc/max-user-marks", "fanotify_mark.2/errors/ENOSPC-marks"},
	"spec_close_frees_watches": {"inotify.7/description/close-frees-watches"},
}
