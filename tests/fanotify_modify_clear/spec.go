package main

// specRules declares the man-page rules (harness/spec/rules.txt) each case
// checks: a kernel that broke one would fail the case.
var specRules = map[string][]string{
	"inode_legacy_cleared":            {"fanotify_mark.2/flags/surv-modify-cleared-by-modify"},
	"inode_legacy_surv_kept":          {"fanotify_mark.2/flags/surv-modify-kept"},
	"inode_legacy_other_write_kept":   {"fanotify_mark.2/flags/surv-modify-cleared-by-modify"},
	"mount_legacy_cleared":            {"fanotify_mark.2/flags/surv-modify-cleared-by-modify"},
	"mount_legacy_surv_kept":          {"fanotify_mark.2/flags/surv-modify-kept"},
	"fs_legacy_cleared":               {"fanotify_mark.2/flags/surv-modify-cleared-by-modify"},
	"fs_legacy_surv_kept":             {"fanotify_mark.2/flags/surv-modify-kept"},
	"dir_children_legacy_cleared":     {"fanotify_mark.2/flags/surv-modify-cleared-by-modify"},
	"dir_children_legacy_surv_kept":   {"fanotify_mark.2/flags/surv-modify-kept"},
	"ignore_file_no_surv_cleared":     {"fanotify_mark.2/flags/surv-modify-cleared-by-modify"},
	"ignore_surv_no_downgrade_eexist": {"fanotify_mark.2/flags/surv-modify-sticky"},
	"legacy_surv_downgrade_accepted":  {"fanotify_mark.2/flags/surv-modify-sticky"},
	"mixed_mount_cleared_inode_kept":  {"fanotify_mark.2/flags/surv-modify-cleared-by-modify", "fanotify_mark.2/flags/surv-modify-kept"},
}
