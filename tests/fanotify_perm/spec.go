package main

import "strings"

// specRules declares the man-page rules (harness/spec/rules.txt) each case
// checks: a kernel that broke one would fail the case.
func specRules() map[string][]string {
	rules := map[string][]string{
		"deny_errno_allowed":                     {"fanotify.7/response/deny-errno-pre-content", "fanotify_init.2/classes/pre-content-perm"},
		"deny_errno_rejected_values":             {"fanotify.7/response/deny-errno-other-values-einval"},
		"deny_errno_content_class_rejected":      {"fanotify.7/response/deny-errno-other-values-einval"},
		"audit_needs_enable_audit":               {"fanotify.7/response/audit-needs-enable-audit"},
		"audit_enabled":                          {"fanotify.7/response/audit-logs"},
		"response_unknown_fd":                    {"fanotify.7/errors/write-ENOENT-fd"},
		"response_twice":                         {"fanotify.7/errors/write-ENOENT-fd"},
		"response_size":                          {"fanotify.7/errors/write-EINVAL-response"},
		"response_other_group":                   {"fanotify.7/errors/write-other-group-ENOENT"},
		"groups_order_allow":                     {"fanotify_init.2/classes/order-between-classes", "fanotify_init.2/description/many-groups-same-file"},
		"groups_pre_content_deny_wins":           {"fanotify_init.2/classes/deny-stops-later-classes"},
		"groups_content_deny_wins":               {"fanotify_init.2/classes/deny-stops-later-classes"},
		"ignore_inode":                           {"fanotify_mark.2/flags/ignored-mask-suppresses"},
		"ignore_parent_on_child":                 {"fanotify_mark.2/flags/ignore-on-child"},
		"ignore_parent_not_on_child":             {"fanotify_mark.2/flags/ignore-on-child"},
		"pre_access_range":                       {"fanotify_mark.2/mask/pre-access", "fanotify.7/records/range-record", "fanotify.7/response/deny-errno-pre-content"},
		"close_releases_pending":                 {"fanotify.7/close/pending-perm-allowed", "fanotify.7/queue/perm-kept-until-answer"},
		"listener_killed_releases":               {"fanotify.7/close/pending-perm-allowed"},
		"nonblock_slow_answer":                   {"fanotify_init.2/flags/nonblock", "fanotify.7/queue/perm-kept-until-answer"},
		"spec_perm_events_not_merged":            {"fanotify.7/read/perm-never-merge", "fanotify.7/queue/perm-kept-until-answer"},
		"listener_event_fd_no_event":             {"fanotify.7/read/fd-nonotify"},
		"execve_groups_exec_perm_then_open_perm": {"fanotify_mark.2/notes/exec-then-open-perm"},
	}
	// The verdict table (cases_verdict.go): each kind and mark, allowed and
	// denied.
	kindRule := map[string]string{
		"open_perm":      "fanotify_mark.2/mask/open-perm",
		"access_perm":    "fanotify_mark.2/mask/access-perm",
		"open_exec_perm": "fanotify_mark.2/mask/open-exec-perm",
	}
	for _, c := range verdictCases() {
		for kind, rule := range kindRule {
			if !strings.HasPrefix(c.Name, kind+"_allow_") && !strings.HasPrefix(c.Name, kind+"_deny_") {
				continue
			}
			r := []string{rule, "fanotify_init.2/classes/content-perm", "fanotify.7/read/pid-of-actor", "fanotify.7/read/fd-refers-to-object"}
			if strings.Contains(c.Name, "_allow_") {
				r = append(r, "fanotify.7/response/allow")
			} else {
				r = append(r, "fanotify.7/response/deny-eperm")
			}
			rules[c.Name] = r
		}
	}
	// The execve table (cases_exec.go): every combination of the four
	// exec/open bits.
	for _, c := range execMaskCases() {
		tokens := strings.TrimPrefix(c.Name, "execve_mask_")
		var r []string
		if strings.Contains(tokens, "exec_perm") {
			r = append(r, "fanotify_mark.2/mask/open-exec-perm")
		}
		if strings.Contains(tokens, "open_perm") {
			r = append(r, "fanotify_mark.2/mask/open-perm")
		}
		if strings.Contains(tokens, "exec_perm") && strings.Contains(tokens, "open_perm") {
			r = append(r, "fanotify_mark.2/notes/exec-then-open-perm")
		}
		if strings.Contains(strings.ReplaceAll(tokens, "exec_perm", ""), "exec") {
			r = append(r, "fanotify_mark.2/mask/open-exec")
		}
		if len(r) > 0 {
			rules[c.Name] = r
		}
	}
	return rules
}
