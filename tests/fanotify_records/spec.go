package main

// specRules declares the man-page rules (harness/spec/rules.txt) each case
// checks: a kernel that broke one would fail the case.
var specRules = map[string][]string{
	"rename_old_new_records":                 {"fanotify_mark.2/mask/rename", "fanotify_init.2/flags/report-name-rename-two-records", "fanotify.7/read/records-info-type"},
	"rename_old_new_records/subdir_no_ondir": {"fanotify_mark.2/mask/ondir"},
	"rename_target_fid":                      {"fanotify_init.2/flags/target-fid-record"},
	"pidfd_record/with_fid_records":          {"fanotify_init.2/flags/report-pidfd-record", "fanotify.7/records/pidfd-is-pidfd", "fanotify.7/read/event-len-records"},
	"pidfd_record/with_fd":                   {"fanotify_init.2/flags/report-pidfd-record", "fanotify.7/records/pidfd-is-pidfd"},
	"pidfd_record/process_reaped":            {"fanotify.7/records/pidfd-nopidfd-exited"},
	"pidfd_record/process_reaped_fd_error":   {"fanotify.7/records/pidfd-nopidfd-exited", "fanotify_init.2/flags/fd-error"},
	"report_tid/with_report_tid":             {"fanotify_init.2/flags/report-tid"},
	"report_tid/without":                     {"fanotify_init.2/flags/report-tid"},
	"dir_fid_records/dir_fid":                {"fanotify_init.2/flags/report-dir-fid-record"},
	"dir_fid_records/dir_fid_and_fid":        {"fanotify_init.2/flags/dir-fid-and-fid-two-records", "fanotify_init.2/flags/report-dir-fid-record"},
	"fid_handle_length":                      {"fanotify.7/records/fid-handle", "fanotify.7/records/fid-fsid-statfs"},
	"mount_events_mnt_record":                {"fanotify_mark.2/mask/mnt-attach-detach", "fanotify_init.2/flags/report-mnt-record", "fanotify.7/records/mnt-id"},
}
