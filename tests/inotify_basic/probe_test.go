package main

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// maskCreate's decision on fake outcomes of its second
// inotify_add_watch(IN_MASK_CREATE), on a kernel before and after 4.19
// (issue 35: a second watch that succeeded was reported as "rejected
// (ENOTSUP) … operation not supported" though no call returned ENOTSUP).
func TestMaskCreateOutcome(t *testing.T) {
	before, after := feature.Kernel{Release: "4.18.0"}, feature.Kernel{Release: "6.18.0"}
	for _, tc := range []struct {
		name    string
		wd      int
		err     error
		k       feature.Kernel
		skip    bool
		ok      bool
		says    string
		notSays string
	}{
		{"eexist", -1, unix.EEXIST, after, false, true, "", ""},
		{"succeeded_after_release", 1, nil, after, false, false, "succeeded, but it returned wd 1; want EEXIST", "not supported"},
		{"succeeded_before_release", 1, nil, before, true, false, "IN_MASK_CREATE not supported (a second inotify_add_watch(IN_ATTRIB|IN_MASK_CREATE) of a watched directory succeeded, but it returned wd 1", "rejected"},
		{"einval_before_release", -1, unix.EINVAL, before, true, false, "IN_MASK_CREATE not supported (EINVAL; needs >= 4.19)", "succeeded"},
		{"einval_after_release", -1, unix.EINVAL, after, false, false, "IN_MASK_CREATE rejected (EINVAL) on kernel 6.18.0, which is >= 4.19", "succeeded"},
		{"enospc", -1, unix.ENOSPC, after, false, false, "ENOSPC", "not supported"},
		{"eopnotsupp", -1, unix.EOPNOTSUPP, after, false, false, "EOPNOTSUPP (an errno that does not say the kernel lacks it", "rejected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := feature.Decide(maskCreate, maskCreateOutcome(tc.wd, tc.err), tc.k)
			if (got == nil) != tc.ok || feature.IsSkip(got) != tc.skip {
				t.Fatalf("Decide = %v (skip %v), want ok=%v skip=%v", got, feature.IsSkip(got), tc.ok, tc.skip)
			}
			if got == nil {
				return
			}
			if !strings.Contains(got.Error(), tc.says) || (tc.notSays != "" && strings.Contains(got.Error(), tc.notSays)) {
				t.Errorf("Decide = %q, want it to say %q and not %q", got, tc.says, tc.notSays)
			}
			var m *feature.Misbehaved
			if errors.As(got, &m) != (tc.err == nil && tc.k.Release == after.Release) {
				t.Errorf("Decide = %v: a wrong result at or above 4.19 is *feature.Misbehaved, nothing else is", got)
			}
		})
	}
}
