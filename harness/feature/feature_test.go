package feature

import (
	"errors"
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

// A behaviour feature's probe decides the rule; where it cannot tell, the
// release does and the basis says so. Neither answer is a failure.
func TestBehaviourRule(t *testing.T) {
	for _, tc := range []struct {
		name      string
		release   string
		decide    func() (bool, string, error)
		newer     bool
		basis     string
		checkSkip bool
	}{
		{"probe_newer_on_old_release", "99.0", func() (bool, string, error) { return true, "symbol listed", nil }, true, "symbol listed", false},
		{"probe_older_on_new_release", "2.6", func() (bool, string, error) { return false, "symbol not listed", nil }, false, "symbol not listed", true},
		{"undecided_new_release", "2.6", func() (bool, string, error) { return false, "", unix.ENOENT }, true, "so by release", false},
		{"undecided_old_release", "99.0", func() (bool, string, error) { return true, "", unix.ENOENT }, false, "so by release", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Feature{Name: "X", Kind: Behaviour, MinKernel: tc.release, Decide: tc.decide}
			newer, basis := f.Rule()
			if newer != tc.newer || !strings.Contains(basis, tc.basis) {
				t.Errorf("Rule() = %v, %q; want %v and a basis containing %q", newer, basis, tc.newer, tc.basis)
			}
			err := f.Check()
			if (err != nil) != tc.checkSkip || (err != nil && (!IsSkip(err) || !strings.Contains(err.Error(), "the older rule"))) {
				t.Errorf("Check() = %v, want the older rule (a skip for a Require) = %v", err, tc.checkSkip)
			}
		})
	}
}

// /proc/kallsyms lists fsnotify on every kernel the suite runs on, and
// never a name no kernel has.
func TestKallsymsHas(t *testing.T) {
	has, err := KallsymsHas(kallsymsControl)
	if err != nil {
		t.Skipf("no usable /proc/kallsyms here: %v", err)
	}
	if !has {
		t.Errorf("KallsymsHas(%q) = false", kallsymsControl)
	}
	if has, err := KallsymsHas("fsnsuite_not_a_kernel_symbol"); has || err != nil {
		t.Errorf("KallsymsHas(not a symbol) = %v, %v; want false, nil", has, err)
	}
}
