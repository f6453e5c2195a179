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
		got := Decide(a, e, Running())
		if _, ok := got.(*Unsupported); ok == KernelAtLeast("5.13") {
			t.Errorf("Decide(FIDOn(tmpfs), %v) = %v on %s", e, got, KernelRelease())
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

// Decide tells the three ways a probe's call can end apart (issue 35, "a
// probe is not a verdict"): an errno that documentedly means the kernel
// lacks the feature is an absence (a skip below the release, a failure at or
// above it); a call that succeeded with a wrong result is *Misbehaved, a
// failure that says "succeeded, but" and never "not supported" (unless a
// kernel before the release gives that very result: OlderResult); any other
// errno is a failure naming it. Each row is a fake outcome on a fake kernel.
func TestDecideProbeOutcomes(t *testing.T) {
	old := Kernel{Release: "4.14.0-fake"}
	recent := Kernel{Release: "6.18.0-fake", Config: map[string]string{"CONFIG_FSNSUITE_SET": "y"}}
	noConfig := Kernel{Release: "6.18.0-fake"}
	release := func() *Feature {
		return &Feature{Name: "FAN_X", Kind: Release, MinKernel: "5.19", Privilege: "CAP_SYS_ADMIN"}
	}
	withOlder := func() *Feature {
		f := release()
		f.OlderResult = "a kernel before 5.19 ignores the bit"
		return f
	}
	withAbsent := func(e ...unix.Errno) *Feature { f := release(); f.Absent = e; return f }
	kconfig := func(opt string) *Feature {
		return &Feature{Name: "fanotify", Kind: Kconfig, Option: opt, Absent: []unix.Errno{unix.ENOSYS}}
	}
	wrong := Wrong("inotify_add_watch(IN_X) of a watched directory", "it returned wd %d; want EEXIST", 1)
	type verdict int
	const (
		supported verdict = iota
		skip
		fail
	)
	for _, tc := range []struct {
		name    string
		f       *Feature
		outcome error
		k       Kernel
		want    verdict
		says    []string // every one in the message
		notSays []string // none of these in it
	}{
		{"accepted", release(), nil, recent, supported, nil, nil},
		// (a) the documented errno of absence
		{"einval_below_release", release(), unix.EINVAL, old, skip, []string{"FAN_X not supported (EINVAL; needs >= 5.19)"}, nil},
		{"einval_at_release", release(), fmt.Errorf("fanotify_mark: %w", unix.EINVAL), recent, fail,
			[]string{"FAN_X rejected (EINVAL) on kernel 6.18.0-fake, which is >= 5.19 where it was merged"}, []string{"succeeded"}},
		{"declared_errno_below_release", withAbsent(unix.ENODEV), unix.ENODEV, old, skip, []string{"not supported (ENODEV"}, nil},
		{"einval_not_declared", withAbsent(unix.ENODEV), unix.EINVAL, old, fail, []string{"EINVAL", "only ENODEV does"}, []string{"not supported"}},
		{"missing_interface_below_release", release(), Lacks("no /proc/sys/fs/x"), old, skip, []string{"not supported (no /proc/sys/fs/x; needs >= 5.19)"}, nil},
		{"missing_interface_at_release", release(), Lacks("no /proc/sys/fs/x"), recent, fail, []string{"missing (no /proc/sys/fs/x) on kernel 6.18.0-fake"}, []string{"rejected"}},
		{"kconfig_unset", kconfig("CONFIG_FSNSUITE_UNSET"), unix.ENOSYS, recent, skip, []string{"CONFIG_FSNSUITE_UNSET is not set"}, nil},
		{"kconfig_unreadable", kconfig("CONFIG_FSNSUITE_SET"), unix.ENOSYS, noConfig, skip, []string{"config is not readable"}, nil},
		{"kconfig_set_seccomp", kconfig("CONFIG_FSNSUITE_SET"), unix.ENOSYS, recent, skip, []string{"seccomp filter refuses"}, nil},
		{"kconfig_set_einval", kconfig("CONFIG_FSNSUITE_SET"), unix.EINVAL, recent, fail, []string{"EINVAL", "only ENOSYS does"}, []string{"not supported"}},
		// (b) the call succeeded with a wrong result
		{"wrong_at_release", release(), wrong, recent, fail,
			[]string{"FAN_X: probe: inotify_add_watch(IN_X) of a watched directory succeeded, but it returned wd 1; want EEXIST", "a wrong result, not a missing feature"},
			[]string{"not supported", "rejected", "ENOTSUP", "EOPNOTSUPP"}},
		{"wrong_below_release_without_older_result", release(), wrong, old, fail, []string{"succeeded, but"}, []string{"not supported", "rejected"}},
		{"wrong_wrapped", release(), fmt.Errorf("probe: %w", wrong), recent, fail, []string{"succeeded, but"}, []string{"not supported"}},
		{"older_result_below_release", withOlder(), wrong, old, skip,
			[]string{"FAN_X not supported (", "succeeded, but it returned wd 1", "a kernel before 5.19 ignores the bit; needs >= 5.19"}, nil},
		{"older_result_at_release", withOlder(), wrong, recent, fail,
			[]string{"succeeded, but", "a kernel before 5.19 ignores the bit; this kernel 6.18.0-fake is >= 5.19"}, []string{"not supported", "rejected"}},
		// (c) another errno
		{"eopnotsupp_undeclared", release(), unix.EOPNOTSUPP, recent, fail, []string{"inconclusive", "EOPNOTSUPP", "only EINVAL does"}, []string{"not supported", "rejected"}},
		{"emfile", release(), unix.EMFILE, old, fail, []string{"EMFILE"}, []string{"not supported"}},
		{"not_an_errno", release(), errors.New("fdinfo unreadable"), recent, fail, []string{"inconclusive", "fdinfo unreadable"}, nil},
		{"eperm", release(), unix.EPERM, recent, skip, []string{"FAN_X: EPERM (needs CAP_SYS_ADMIN"}, nil},
		{"eperm_declared_absent", withAbsent(unix.EPERM), unix.EPERM, old, skip, []string{"not supported (EPERM; needs >= 5.19)"}, nil},
		{"requirement_answer_passes_through", release(), &Unsupported{Feature: kconfig("CONFIG_FANOTIFY"), Err: unix.ENOSYS, Why: "CONFIG_FANOTIFY is not set"}, recent, skip,
			[]string{"fanotify not supported (ENOSYS; CONFIG_FANOTIFY is not set)"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.f, tc.outcome, tc.k)
			var v verdict
			switch {
			case got == nil:
				v = supported
			case IsSkip(got):
				v = skip
			default:
				v = fail
			}
			if v != tc.want {
				t.Errorf("Decide(%v) = %v (verdict %d), want verdict %d", tc.outcome, got, v, tc.want)
			}
			for _, w := range tc.says {
				if got == nil || !strings.Contains(got.Error(), w) {
					t.Errorf("Decide(%v) = %v, want it to say %q", tc.outcome, got, w)
				}
			}
			for _, w := range tc.notSays {
				if got != nil && strings.Contains(got.Error(), w) {
					t.Errorf("Decide(%v) = %v, must not say %q", tc.outcome, got, w)
				}
			}
		})
	}
}

// A wrong result is conclusive: cached like an answer, not retried.
func TestMisbehavedCached(t *testing.T) {
	calls := 0
	f := &Feature{Name: "X", Kind: Release, MinKernel: "2.6", Probe: func() error { calls++; return Wrong("call", "wrong") }}
	var m *Misbehaved
	if err := f.Check(); !errors.As(err, &m) || IsSkip(err) {
		t.Fatalf("Check() = %v, want *Misbehaved (a failure)", err)
	}
	f.Check()
	if calls != 1 {
		t.Errorf("probe ran %d times, want 1 (a wrong result is conclusive)", calls)
	}
}

// The decisions of the probes declared here, on fake outcomes of their
// calls: success where the call must fail is a wrong result, the documented
// errno goes to Decide unchanged.
func TestProbeOutcomeFunctions(t *testing.T) {
	var w *WrongResult
	if err := maskOutcome(nil, "/ws/missing"); !errors.As(err, &w) || !strings.Contains(err.Error(), "succeeded, but") {
		t.Errorf("maskOutcome(success) = %v, want a wrong result", err)
	}
	if err := maskOutcome(unix.ENOENT, "/ws/missing"); err != nil {
		t.Errorf("maskOutcome(ENOENT) = %v, want accepted", err)
	}
	if err := maskOutcome(unix.EINVAL, "/ws/missing"); !errors.Is(err, unix.EINVAL) || errors.As(err, &w) {
		t.Errorf("maskOutcome(EINVAL) = %v, want the EINVAL", err)
	}
	if err := preContentOutcome(nil); !errors.As(err, &w) {
		t.Errorf("preContentOutcome(success) = %v, want a wrong result", err)
	}
	if err := preContentOutcome(unix.ENOENT); err != nil {
		t.Errorf("preContentOutcome(ENOENT) = %v, want accepted", err)
	}
	if err := preContentOutcome(unix.EINVAL); !errors.Is(err, unix.EINVAL) {
		t.Errorf("preContentOutcome(EINVAL) = %v, want the EINVAL", err)
	}
}
