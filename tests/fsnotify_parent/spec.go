package main

// specRules declares the man-page rules (harness/spec/rules.txt) each case
// checks: a kernel that broke one would fail the case.
var specRules = map[string][]string{
	"child_cached_before_watch.inotify":    {"inotify.7/read/name-only-for-children"},
	"child_cached_before_watch.fanotify":   {"fanotify_mark.2/mask/event-on-child", "fanotify_init.2/flags/dir-fid-and-fid-two-records"},
	"child_created_after_watch.inotify":    {"inotify.7/events/create", "inotify.7/events/dir-plus-events-children-only"},
	"child_created_after_watch.fanotify":   {"fanotify_mark.2/mask/event-on-child", "fanotify_mark.2/mask/create"},
	"hardlink_two_parents.inotify":         {"inotify.7/events/dir-watch-only-via-dir"},
	"hardlink_two_parents.fanotify":        {"fanotify_mark.2/mask/event-on-child"},
	"parent_and_child_one_group.inotify":   {"inotify.7/examples/open-file-and-dir"},
	"parent_and_child_one_group.fanotify":  {"fanotify_mark.2/mask/event-on-child"},
	"parent_and_child_two_groups.inotify":  {"inotify.7/examples/open-file-and-dir"},
	"parent_and_child_two_groups.fanotify": {"fanotify_init.2/description/many-groups-same-file"},
	"rename_into_watched.inotify":          {"inotify.7/events/moved-from-to"},
	"rename_into_watched.fanotify":         {"fanotify_mark.2/mask/moved-from-to"},
	"rename_out_of_watched.inotify":        {"inotify.7/events/moved-from-to"},
	"rename_out_of_watched.fanotify":       {"fanotify_mark.2/mask/moved-from-to", "fanotify_mark.2/mask/event-on-child"},
	"rename_within_watched.inotify":        {"inotify.7/events/moved-from-to"},
	"rename_watched_dir.inotify":           {"inotify.7/events/move-self"},
	"rename_watched_dir.fanotify":          {"fanotify_mark.2/mask/move-self", "fanotify.7/groups/marks-by-inode", "fanotify_init.2/flags/report-name-record"},
	"watch_removed.inotify":                {"inotify.7/flags/ignored"},
	"watch_removed.fanotify":               {"fanotify_mark.2/flags/remove-clears-bits"},
	"mask_child_events_toggle.inotify":     {"inotify.7/flags/mask-add"},
	"mask_child_events_toggle.fanotify":    {"fanotify_mark.2/mask/event-on-child", "fanotify_mark.2/flags/add-ors-mask", "fanotify_mark.2/flags/remove-clears-bits"},
	"subdir_child.inotify":                 {"inotify.7/flags/isdir"},
	"subdir_child.fanotify":                {"fanotify_mark.2/mask/ondir"},
	"subdir_sb_mount_marks":                {"fanotify_init.2/flags/report-name-record"},
	"unlinked_child.inotify":               {"inotify.7/flags/excl-unlink"},
	"unlinked_child_excl_unlink.inotify":   {"inotify.7/flags/excl-unlink"},
	"open_perm_via_parent":                 {"fanotify_mark.2/mask/open-perm", "fanotify_mark.2/mask/event-on-child"},
}
