package main

import (
	"strings"

	"github.com/fsnsuite/fsnsuite/harness"
)

// specRules declares the man-page rules (harness/spec/rules.txt) each case
// checks: a kernel that broke one would fail the case.
func specRules(cs []harness.Case) map[string][]string {
	rules := map[string][]string{
		"evictable_ignore_evicted":           {"fanotify_mark.2/flags/evictable-not-pinned"},
		"evictable_upgrade_downgrade":        {"fanotify_mark.2/flags/evictable-upgrade", "fanotify_mark.2/flags/evictable-downgrade-eexist"},
		"evictable_mount_einval":             {"fanotify_mark.2/flags/evictable-mount-fs-einval"},
		"ignore_dir_no_surv_eisdir":          {"fanotify_mark.2/flags/ignore-needs-surv-dir"},
		"ignore_mount_fs_no_surv_einval":     {"fanotify_mark.2/flags/ignore-needs-surv-mount-fs"},
		"ignore_event_flags_on_file_enotdir": {"fanotify_mark.2/errors/ENOTDIR-strict-dir-events"},
		"legacy_event_flags_dropped":         {"fanotify_mark.2/flags/ignored-mask-event-flags-no-effect"},
		"legacy_after_ignore_eexist":         {"fanotify_mark.2/flags/ignored-mask-after-ignore-eexist"},
		"both_flavours_einval":               {"fanotify_mark.2/flags/ignore-and-ignored-mask-einval"},
	}
	for _, c := range cs {
		n := c.Name
		switch {
		case strings.HasPrefix(n, "exec_open_partly_ignored_"):
			rules[n] = []string{"fanotify_mark.2/mask/open-exec", "fanotify_mark.2/flags/ignored-mask-suppresses"}
		case strings.HasPrefix(n, "bz215676_"):
			rules[n] = []string{"fanotify_mark.2/flags/ignore-ondir", "fanotify_mark.2/flags/ignore-on-child"}
		case strings.Contains(n, "_ev_") && strings.Contains(n, "_ig_"):
			// The matrix (matrix.go, perm.go): an event mark and an
			// ignore mark, every kind and flavour.
			r := []string{"fanotify_mark.2/flags/ignored-mask-suppresses"}
			ig := n[strings.Index(n, "_ig_"):]
			if strings.Contains(n, "_dir_") && strings.Contains(ig, "_ignore") {
				r = append(r, "fanotify_mark.2/flags/ignore-ondir")
			}
			if strings.HasPrefix(ig, "_ig_parent_ignore") && !strings.Contains(n, "_dir_") {
				r = append(r, "fanotify_mark.2/flags/ignore-on-child")
			}
			rules[n] = r
		}
	}
	return rules
}
