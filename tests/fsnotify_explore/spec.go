package main

// specRules declares the man-page rules (harness/spec/rules.txt) each
// regression row checks: each row is the shrunk witness of a model fault
// that breaks the rule, so a kernel that broke it would fail the row.
var specRules = map[string][]string{
	"witness_ignore_flag_as_legacy":                {"fanotify_mark.2/flags/ignore-on-child"},
	"witness_legacy_ignore_not_on_dir":             {"fanotify_mark.2/flags/ignored-mask-event-flags-no-effect"},
	"witness_ignore_only_same_mark_type":           {"fanotify_mark.2/flags/ignored-mask-suppresses"},
	"witness_modify_clears_surviving_ignore":       {"fanotify_mark.2/flags/surv-modify-kept"},
	"witness_modify_never_clears_ignore":           {"fanotify_mark.2/flags/surv-modify-cleared-by-modify"},
	"witness_dir_event_without_ondir":              {"fanotify_mark.2/mask/ondir"},
	"witness_fid_group_drops_ondir":                {"fanotify.7/read/ondir-only-in-fid-groups"},
	"witness_evictable_on_mount_allowed":           {"fanotify_mark.2/flags/evictable-mount-fs-einval"},
	"witness_inode_events_allowed_on_fd_group":     {"fanotify_mark.2/mask/fid-events-need-fid-group"},
	"witness_inotify_mask_add_replaces":            {"inotify.7/flags/mask-add"},
	"witness_inotify_oneshot_stays":                {"inotify.7/flags/oneshot"},
	"witness_remove_keeps_empty_mark":              {"fanotify_mark.2/flags/remove-clears-bits", "fanotify_mark.2/errors/ENOENT-remove-unmarked"},
	"witness_rename_without_move_self":             {"inotify.7/events/move-self"},
	"witness_perm_events_skip_parent":              {"fanotify_mark.2/mask/access-perm", "fanotify_mark.2/mask/event-on-child"},
	"witness_excl_unlink_ignored":                  {"inotify.7/flags/excl-unlink"},
	"witness_unlinked_child_not_to_parent":         {"inotify.7/flags/excl-unlink"},
	"witness_inotify_no_coalesce":                  {"inotify.7/notes/coalesce"},
	"witness_inotify_coalesce_not_successive":      {"inotify.7/notes/coalesce"},
	"witness_link_without_attrib":                  {"inotify.7/examples/link"},
	"witness_perm_class_order_reversed":            {"fanotify_init.2/classes/order-between-classes"},
	"witness_parent_mark_reports_without_on_child": {"fanotify_mark.2/mask/event-on-child"},
}
