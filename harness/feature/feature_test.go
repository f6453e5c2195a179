package feature

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// An errno a feature declares Absent is an absence, judged by the release
// like EINVAL: a skip (with the feature's explanation) below the release, a
// failure at or above it; without the declaration it is inconclusive. 5.10's
// tmpfs answers a FID mark with ENODEV: that must skip, not fail.
func TestAbsentErrnos(t *testing.T) {
	explain := func(error) string { return "tmpfs reports no f_fsid on this kernel" }
	for _, tc := range []struct {
		name string
		f    *Feature
		skip bool
		want string
	}{
		{"enodev_below_release", &Feature{Name: "FID on tmpfs", MinKernel: "99.0", Absent: []unix.Errno{unix.ENODEV}, Explain: explain, Probe: errno(unix.ENODEV)},
			true, "tmpfs reports no f_fsid on this kernel; needs >= 99.0"},
		{"enodev_at_release", &Feature{Name: "FID on tmpfs", MinKernel: "2.6", Absent: []unix.Errno{unix.ENODEV}, Explain: explain, Probe: errno(unix.ENODEV)},
			false, ">= 2.6 where it was merged"},
		{"enodev_undeclared", &Feature{Name: "FID on tmpfs", MinKernel: "99.0", Probe: errno(unix.ENODEV)}, false, "inconclusive"},
		{"eperm_declared_absent", &Feature{Name: "unprivileged", MinKernel: "99.0", Privilege: "CAP_SYS_ADMIN", Absent: []unix.Errno{unix.EPERM}, Probe: errno(unix.EPERM)},
			true, "not supported (EPERM; needs >= 99.0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.f.Check()
			if err == nil || IsSkip(err) != tc.skip || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check() = %v (skip %v), want skip=%v containing %q", err, IsSkip(err), tc.skip, tc.want)
			}
		})
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

// FIDOn is one feature per filesystem: a probe of one filesystem is never
// the answer for another.
func TestFIDOnPerFilesystem(t *testing.T) {
	a, b := FIDOn("tmpfs", "/a"), FIDOn("ext4", "/b")
	if a == b || FIDOn("tmpfs", "/a") != a {
		t.Fatalf("FIDOn: want one cached feature per (type, dir)")
	}
	if a.MinKernel != "5.13" || b.MinKernel != "5.1" {
		t.Errorf("FIDOn release rules: tmpfs %q ext4 %q, want 5.13 and 5.1", a.MinKernel, b.MinKernel)
	}
	for _, e := range []unix.Errno{unix.ENODEV, unix.EXDEV, unix.EOPNOTSUPP} {
		if _, ok := a.absent(e).(*Unsupported); ok == KernelAtLeast("5.13") {
			t.Errorf("FIDOn(tmpfs).absent(%v) = %v on %s", e, a.absent(e), KernelRelease())
		}
	}
}

// maskProbe answers from mask validation alone: FAN_RENAME is accepted for a
// DFID_NAME group (ENOENT: the missing path was looked up) and refused for
// an fd group (EINVAL before any lookup), on any filesystem.
func TestMaskProbe(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (fanotify_init)")
	}
	t.Setenv("FSNSUITE_WORKSPACE", t.TempDir())
	if err := initProbe(unix.FAN_REPORT_DFID_NAME)(); err != nil {
		t.Skipf("no FAN_REPORT_DFID_NAME here: %v", err)
	}
	if err := maskProbe(unix.FAN_REPORT_DFID_NAME, 0, unix.FAN_RENAME)(); err != nil && !errors.Is(err, unix.EINVAL) {
		t.Errorf("FAN_RENAME in a DFID_NAME group: %v, want accepted or EINVAL (a kernel without it)", err)
	}
	if err := maskProbe(unix.FAN_CLASS_NOTIF, 0, unix.FAN_RENAME)(); !errors.Is(err, unix.EINVAL) {
		t.Errorf("FAN_RENAME in an fd group: %v, want EINVAL", err)
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

// A setup step refused for lack of privilege is a skip naming the privilege
// (issue 22 item 4: mknod's EPERM in a user namespace failed its case with a
// kernel HINT); another errno is not a refusal.
func TestRefusal(t *testing.T) {
	refused := []error{unix.EPERM, fmt.Errorf("mknod x: %w", unix.EPERM)}
	if InUserNamespace() {
		refused = append(refused, fmt.Errorf("mknod x: %w", unix.EACCES))
	} else if r, ok := Refusal(unix.EACCES, "CAP_MKNOD"); ok {
		t.Errorf("Refusal(EACCES) as real root = %q, a refusal (it is a setup defect there)", r)
	}
	for _, err := range refused {
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

// Probes look only in the private workspace: without one, or with one that
// others may write to or that is a symlink, a probe is an error (not an
// answer, not a skip), and a name planted in the shared temporary directory
// does not change its answer (issue 33: probeDir fell back to os.TempDir()).
func TestProbeOnlyInPrivateWorkspace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (fanotify_init)")
	}
	if err := initProbe(unix.FAN_REPORT_DFID_NAME)(); err != nil {
		t.Skipf("no FAN_REPORT_DFID_NAME here: %v", err)
	}
	shared := t.TempDir()
	// The name maskProbe looks up to see the mask accepted (ENOENT),
	// planted where the old fallback looked.
	if err := os.WriteFile(filepath.Join(shared, ".fsnsuite-probe-no-such-file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", shared)
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777|os.ModeSticky)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, ws, want string }{
		{"unset", "", "no private workspace"},
		{"world_writable", open, "refusing to probe there"},
		{"symlink", link, "refusing to probe there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FSNSUITE_WORKSPACE", tc.ws)
			err := maskProbe(unix.FAN_REPORT_DFID_NAME, 0, unix.FAN_RENAME)()
			var errno unix.Errno
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &errno) {
				t.Errorf("maskProbe with FSNSUITE_WORKSPACE=%q: %v, want an error saying %q (not an errno)", tc.ws, err, tc.want)
			}
		})
	}
}
