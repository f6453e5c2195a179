package main

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
)

// fdinfoUserFlags' decision on fake fdinfo contents, on a kernel before and
// after 5.19 (issue 35: a mask without the flags was reported as "rejected
// (ENOTSUP) … operation not supported" though no call failed).
func TestFdinfoFlagsOutcome(t *testing.T) {
	before, after := feature.Kernel{Release: "5.10.0"}, feature.Kernel{Release: "6.18.0"}
	full := inotify.WatchState{Wd: 1, Mask: unix.IN_ATTRIB | unix.IN_ONESHOT | unix.IN_EXCL_UNLINK}
	old := inotify.WatchState{Wd: 1, Mask: unix.IN_ATTRIB}
	for _, tc := range []struct {
		name string
		ws   []inotify.WatchState
		k    feature.Kernel
		skip bool
		ok   bool
		says string
	}{
		{"flags_shown", []inotify.WatchState{full}, after, false, true, ""},
		{"flags_missing_after_release", []inotify.WatchState{old}, after, false, false, "succeeded, but its mask is IN_ATTRIB, without IN_EXCL_UNLINK|IN_ONESHOT"},
		{"flags_missing_before_release", []inotify.WatchState{old}, before, true, false, "not supported (reading the fdinfo"},
		{"one_flag_missing_after_release", []inotify.WatchState{{Wd: 1, Mask: unix.IN_ATTRIB | unix.IN_ONESHOT}}, after, false, false, "without IN_EXCL_UNLINK"},
		{"two_watches", []inotify.WatchState{full, full}, after, false, false, "it lists 2 watches"},
		{"no_watch", nil, after, false, false, "it lists 0 watches"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := feature.Decide(fdinfoUserFlags, fdinfoFlagsOutcome(tc.ws), tc.k)
			if (got == nil) != tc.ok || feature.IsSkip(got) != tc.skip {
				t.Fatalf("Decide = %v (skip %v), want ok=%v skip=%v", got, feature.IsSkip(got), tc.ok, tc.skip)
			}
			if got != nil && (!strings.Contains(got.Error(), tc.says) || strings.Contains(got.Error(), "ENOTSUP") || strings.Contains(got.Error(), "rejected")) {
				t.Errorf("Decide = %q, want it to say %q and name no errno", got, tc.says)
			}
		})
	}
}
