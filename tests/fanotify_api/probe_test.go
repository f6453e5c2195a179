package main

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// responseInfo's decision on fake outcomes of its probe write (a FAN_INFO
// response with fd FAN_NOFD and a 16-byte audit rule record: 24 bytes), on
// a kernel before and after 6.3 (review W1: the FAN_INFO gate is a probe).
func TestResponseInfoOutcome(t *testing.T) {
	before, after := feature.Kernel{Release: "6.1.0"}, feature.Kernel{Release: "6.18.0"}
	for _, tc := range []struct {
		name       string
		n          int
		err        error
		k          feature.Kernel
		ok, absent bool
		says       string
	}{
		{"written", 24, nil, after, true, false, ""},
		{"written_before_release", 24, nil, before, true, false, ""}, // a backport: the probe, not the release, decides
		{"einval_before_release", -1, unix.EINVAL, before, false, true, "FAN_INFO response records (FAN_RESPONSE_INFO_AUDIT_RULE) not supported (EINVAL; needs >= 6.3)"},
		{"einval_after_release", -1, unix.EINVAL, after, false, false, "rejected (EINVAL) on kernel 6.18.0, which is >= 6.3"},
		{"short_write", 8, nil, after, false, false, "succeeded, but it returned 8; want 24"},
		{"enoent", -1, unix.ENOENT, after, false, false, "ENOENT"}, // an event looked for: FAN_NOFD not special-cased
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := feature.Decide(responseInfo, responseInfoOutcome(tc.n, 24, tc.err), tc.k)
			var u *feature.Unsupported
			if (got == nil) != tc.ok || errors.As(got, &u) != tc.absent {
				t.Fatalf("Decide = %v, want ok=%v absent=%v", got, tc.ok, tc.absent)
			}
			if got != nil && !strings.Contains(got.Error(), tc.says) {
				t.Errorf("Decide = %q, want it to say %q", got, tc.says)
			}
		})
	}
}
