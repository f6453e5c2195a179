package feature

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func errno(e unix.Errno) func() error { return func() error { return e } }

// What a refusal means depends on the feature's kind, never on the order in
// which features are checked.
func TestClassifyByKind(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    *Feature
		skip bool
		want string
	}{
		{"release_too_old", &Feature{Name: "X", Kind: Release, MinKernel: "99.0", Probe: errno(unix.EINVAL)}, true, "needs >= 99.0"},
		{"release_missing_on_new_kernel", &Feature{Name: "X", Kind: Release, MinKernel: "2.6", Probe: errno(unix.EINVAL)}, false, ">= 2.6 where it was merged"},
		{"kconfig_option_unset", &Feature{Name: "X", Kind: Kconfig, Option: "CONFIG_FSNSUITE_NOT_AN_OPTION", Probe: errno(unix.EINVAL)}, true, "CONFIG_FSNSUITE_NOT_AN_OPTION"},
		{"eperm_with_capability", &Feature{Name: "X", Privilege: "CAP_SYS_ADMIN", Probe: errno(unix.EPERM)}, true, "needs CAP_SYS_ADMIN"},
		{"eperm_without_capability", &Feature{Name: "X", Probe: errno(unix.EPERM)}, true, "it needs no capability"},
		{"inconclusive", &Feature{Name: "X", Probe: errno(unix.EMFILE)}, false, "inconclusive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.f.Check()
			if err == nil || IsSkip(err) != tc.skip || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check() = %v (skip %v), want skip=%v containing %q", err, IsSkip(err), tc.skip, tc.want)
			}
		})
	}
}

// A requirement's absence is the answer, whatever the order of a Needs list.
func TestRequiresFirst(t *testing.T) {
	base := &Feature{Name: "base", Kind: Kconfig, Option: "CONFIG_FSNSUITE_NOT_AN_OPTION", Probe: errno(unix.EINVAL)}
	dep := (&Feature{Name: "dep", Kind: Release, MinKernel: "2.6", Probe: errno(unix.EINVAL)}).needing(base)
	if err := dep.Check(); !IsSkip(err) || !strings.Contains(err.Error(), "base") {
		t.Errorf("dep.Check() = %v, want base's skip", err)
	}
}

// Only conclusive answers are cached: an inconclusive probe runs again.
func TestInconclusiveNotCached(t *testing.T) {
	calls := 0
	var answer error = unix.EMFILE
	f := &Feature{Name: "X", Probe: func() error { calls++; return answer }}
	var inc *Inconclusive
	if err := f.Check(); !errors.As(err, &inc) {
		t.Fatalf("first Check() = %v, want inconclusive", err)
	}
	if calls != probeTries {
		t.Errorf("probe ran %d times, want %d", calls, probeTries)
	}
	answer = nil
	if err := f.Check(); err != nil {
		t.Errorf("second Check() = %v, want supported once the probe answers", err)
	}
	answer = unix.EINVAL
	if err := f.Check(); err != nil {
		t.Errorf("third Check() = %v, want the cached supported", err)
	}
}

// A setup step refused for lack of privilege is a skip naming the privilege
// (issue 22 item 4: mknod's EPERM in a user namespace failed its case with a
// kernel HINT); another errno is not a refusal.
func TestRefusal(t *testing.T) {
	for _, err := range []error{unix.EPERM, fmt.Errorf("mknod x: %w", unix.EACCES)} {
		r, ok := Refusal(err, "CAP_MKNOD in the initial user namespace")
		if !ok || !strings.Contains(r, "needs CAP_MKNOD in the initial user namespace; ") || !strings.HasPrefix(r, ErrnoName(err)+" (") {
			t.Errorf("Refusal(%v) = %q, %v", err, r, ok)
		}
		if InUserNamespace() != strings.Contains(r, "this process is in a user namespace") {
			t.Errorf("Refusal(%v) = %q in a user namespace: %v", err, r, InUserNamespace())
		}
	}
	for _, err := range []error{unix.EINVAL, unix.ENOSPC, nil} {
		if r, ok := Refusal(err, "CAP_MKNOD"); ok {
			t.Errorf("Refusal(%v) = %q, a refusal", err, r)
		}
	}
}
