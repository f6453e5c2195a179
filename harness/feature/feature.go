// Package feature probes the running kernel for fsnotify features and decides
// what an errno means for a case: every errno-to-skip decision goes through
// it. A probe's call ends in one of three ways, and each has its own answer:
//
//   - it failed with an errno that documentedly means "this kernel lacks the
//     feature" (the feature's Absent list, cited where it is declared; EINVAL
//     for a flag or event bit the kernel does not know): *Unsupported (a
//     skip naming the feature and the errno), or the feature is missing
//     where it must be present (a failure). Which refusals are
//     missing-where-present depends on the feature's Kind: a Release feature
//     refused at or above its release; a Kconfig feature refused although
//     the kernel's config sets its option.
//   - it succeeded, but the result is not what the feature promises (the
//     probe returns a *WrongResult, made with Wrong): *Misbehaved, a
//     failure that says "succeeded, but …" and never "not supported".
//     Only where a kernel before the feature's release gives that very
//     result (Feature.OlderResult) is it an absence below that release.
//   - it failed with another errno: EPERM or EACCES is *Unprivileged (a
//     skip naming the privilege), a per-user limit *LimitReached (a skip),
//     anything else *Inconclusive (retried, never cached, a failure naming
//     the errno).
//
// Decide (a pure function of the feature, the probe's outcome and the
// kernel's release and config) makes that classification; Check runs the
// probe and caches conclusive answers per process. A Behaviour feature is
// no capability but a documented change of what the kernel does: its answer
// says which rule this kernel follows (Rule), and a case expects that rule.
package feature

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/limits"
	"golang.org/x/sys/unix"
)

// Kind says what a feature's presence depends on, which decides what its
// absence means.
type Kind int

const (
	// Release: every kernel from MinKernel on has it. Absent on an older
	// kernel: a skip; absent at or above MinKernel: a failure (a regression
	// a skip would hide).
	Release Kind = iota
	// Kconfig: the kernel has it when built with Option (and, when MinKernel
	// is set, from that release on). Absent: a skip naming the option; a
	// failure only when the kernel's own config (/proc/config.gz or
	// /boot/config-<release>) says the option is set.
	Kconfig
	// Behaviour: a change mainline made on purpose in MinKernel (a
	// different pid, errno or record for the same call). Its probe (Decide)
	// says which rule this kernel follows; only when the probe cannot tell
	// does the release decide, and the answer says so. Neither answer is a
	// failure or a skip of its own: a case expects the rule it is told,
	// and fails on anything that rule does not allow.
	Behaviour
)

// Feature is one probe-able kernel capability.
type Feature struct {
	// Name is what a skip reason calls it, e.g. "FAN_MARK_IGNORE".
	Name string
	// Kind says whether the release or a config option decides presence.
	Kind Kind
	// MinKernel is the first mainline release that has it ("6.0"); "" for
	// a Kconfig feature as old as the suite's oldest kernel.
	MinKernel string
	// Option is the config option of a Kconfig feature ("CONFIG_FANOTIFY").
	Option string
	// Privilege is what the kernel checks before it answers (for a skip
	// reason on EPERM); "" when no capability is needed, so an EPERM comes
	// from a seccomp filter or an LSM.
	Privilege string
	// Requires are features this one cannot be had without; they are
	// checked first, and a missing one is this feature's answer (so no
	// order of a Needs list matters).
	Requires []*Feature
	// Absent are the errnos that mean "the kernel (or the filesystem)
	// lacks it" for this feature, each cited where the feature is
	// declared: ENOSYS from fanotify_init on a kernel without
	// CONFIG_FANOTIFY (fanotify_init(2)), ENODEV from a FID mark on a
	// filesystem without an fsid (fanotify_mark(2)), EPERM from an
	// unprivileged fanotify_init on a kernel that requires CAP_SYS_ADMIN.
	// Empty means EINVAL alone (DefaultAbsent): fanotify_init(2),
	// fanotify_mark(2) and inotify_add_watch(2) answer EINVAL for a flag
	// or an event bit the kernel does not know. Any errno not listed is
	// no evidence of absence: an EPERM or EACCES is a lack of privilege,
	// anything else inconclusive (a failure naming the errno).
	Absent []unix.Errno
	// OlderResult, when set, says that a kernel before MinKernel gives
	// the very result a probe calls wrong (a *WrongResult): "a kernel
	// before 4.19 ignores a mask bit it does not know". Below MinKernel
	// such a result is then an absence (a skip that says what the call
	// did); at or above it, and for every feature without OlderResult, a
	// wrong result is a failure (*Misbehaved).
	OlderResult string
	// Explain, when set, says what an absence means in the skip reason
	// ("tmpfs has no f_fsid on this kernel").
	Explain func(err error) string
	// Probe returns nil when supported, or the errno-wrapping error of the
	// call that proves otherwise. Nil for a feature only classified (a case
	// meets the errno in its own call and hands it to Classify).
	Probe func() error
	// Decide is a Behaviour feature's probe: newer reports whether the
	// kernel follows the rule of MinKernel on, basis what showed it
	// ("fserror_report in /proc/kallsyms"); an error means the probe
	// cannot tell here (no /proc/kallsyms), and the release decides.
	Decide func() (newer bool, basis string, err error)

	mu     sync.Mutex
	cached bool
	err    error
	newer  bool
	basis  string
}

var registry []*Feature

// New declares a release-dependent feature (merged in minKernel).
func New(name, minKernel string, probe func() error) *Feature {
	return register(&Feature{Name: name, Kind: Release, MinKernel: minKernel, Probe: probe, Privilege: capSysAdmin})
}

// NewKconfig declares a feature that depends on a config option (and on
// minKernel, when not "").
func NewKconfig(name, option, minKernel string, probe func() error) *Feature {
	return register(&Feature{Name: name, Kind: Kconfig, Option: option, MinKernel: minKernel, Probe: probe, Privilege: capSysAdmin})
}

const capSysAdmin = "CAP_SYS_ADMIN in the initial user namespace"

func register(f *Feature) *Feature {
	registry = append(registry, f)
	return f
}

// All returns every feature declared with New or NewKconfig, in order.
func All() []*Feature { return append([]*Feature(nil), registry...) }

// NewBehaviour declares a documented change of behaviour that mainline made
// in release; decide probes which rule the running kernel follows (see
// Feature.Decide).
func NewBehaviour(name, release string, decide func() (bool, string, error)) *Feature {
	return register(&Feature{Name: name, Kind: Behaviour, MinKernel: release, Decide: decide})
}

// needing returns f with requirements (for the declarations below).
func (f *Feature) needing(fs ...*Feature) *Feature {
	f.Requires = fs
	return f
}

// Describe says what f depends on: "since 5.15", "CONFIG_FANOTIFY".
func (f *Feature) Describe() string {
	var p []string
	if f.Option != "" {
		p = append(p, f.Option)
	}
	if f.Kind == Behaviour {
		return "behaviour changed in " + f.MinKernel
	}
	if f.MinKernel != "" {
		p = append(p, "since "+f.MinKernel)
	}
	return strings.Join(p, ", ")
}

// Unsupported means the kernel does not have the feature.
type Unsupported struct {
	Feature *Feature
	Err     error
	// Why names what is missing: the release or the config option.
	Why string
}

func (e *Unsupported) Error() string {
	if e.Feature.Kind == Behaviour {
		return fmt.Sprintf("%s: the older rule (%s)", e.Feature.Name, e.Why)
	}
	return fmt.Sprintf("%s not supported (%s; %s)", e.Feature.Name, errnoName(e.Err), e.Why)
}

func (e *Unsupported) Unwrap() error { return e.Err }

// Unprivileged means the kernel (or a seccomp filter, an LSM) refused the
// probe for lack of privilege.
type Unprivileged struct {
	Feature *Feature
	Err     error
}

func (e *Unprivileged) Error() string {
	if e.Feature.Privilege == "" {
		return fmt.Sprintf("%s: %s (refused by a seccomp filter or an LSM: it needs no capability)", e.Feature.Name, errnoName(e.Err))
	}
	if strings.Contains(e.Feature.Privilege, "initial user namespace") && InUserNamespace() {
		return fmt.Sprintf("%s: %s (needs %s; this process is in a user namespace, whose capabilities do not count for it)", e.Feature.Name, errnoName(e.Err), e.Feature.Privilege)
	}
	return fmt.Sprintf("%s: %s (needs %s; run as real root, or a seccomp filter or an LSM refuses it)", e.Feature.Name, errnoName(e.Err), e.Feature.Privilege)
}

func (e *Unprivileged) Unwrap() error { return e.Err }

// InUserNamespace reports whether this process runs in a user namespace
// other than the initial one (its uid_map is not the identity of every
// uid): root there holds capabilities that do not count for what only the
// initial namespace may do (a privileged fanotify group, mounting a block
// filesystem, making a device node).
func InUserNamespace() bool {
	userNSOnce.Do(func() {
		b, err := os.ReadFile("/proc/self/uid_map")
		if err != nil {
			return // no user namespaces at all
		}
		f := strings.Fields(string(b))
		inUserNS = !(len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295")
	})
	return inUserNS
}

var (
	userNSOnce sync.Once
	inUserNS   bool
)

// Refusal is the skip reason of a setup step (not a feature probe) that the
// kernel refused with EPERM or EACCES: the errno and the privilege the step
// needs, and why this process lacks it when a user namespace is the cause.
// ok is false for any other error (a failure). A step refused for lack of
// privilege says nothing about fsnotify: it is a skip, never a failure
// with a kernel HINT.
func Refusal(err error, privilege string) (reason string, ok bool) {
	userns := InUserNamespace()
	// EACCES is a refusal only in a user namespace (an LSM or a mount's
	// rules against its root); as real root it rather means a setup
	// defect, a read-only device or a directory's mode: a failure.
	if !errors.Is(err, unix.EPERM) && !(userns && errors.Is(err, unix.EACCES)) {
		return "", false
	}
	if userns {
		return fmt.Sprintf("%s (needs %s; this process is in a user namespace, whose capabilities do not count for it)", errnoName(err), privilege), true
	}
	return fmt.Sprintf("%s (needs %s; run as real root, or a seccomp filter or an LSM refuses it)", errnoName(err), privilege), true
}

// Inconclusive is a probe that neither proved nor disproved the feature (an
// errno that says nothing about it, such as EMFILE, ENOMEM or an EOPNOTSUPP
// where the documented refusal is EINVAL). It is never cached, and it is a
// failure, not a skip; its message names the errno.
type Inconclusive struct {
	Feature *Feature
	Err     error
}

func (e *Inconclusive) Error() string {
	var en unix.Errno
	if errors.As(e.Err, &en) {
		// The errno by name, not by its text: "operation not supported"
		// would read as the feature's absence.
		text := strings.Replace(e.Err.Error(), en.Error(), errnoName(en), 1)
		return fmt.Sprintf("probe of %s inconclusive after %d tries: %s (an errno that does not say the kernel lacks it: only %s does)",
			e.Feature.Name, probeTries, text, e.Feature.absentNames())
	}
	return fmt.Sprintf("probe of %s inconclusive after %d tries: %v", e.Feature.Name, probeTries, e.Err)
}

// WrongResult is what a probe returns when its call succeeded but the result
// is not what the feature promises (a second IN_MASK_CREATE watch that did
// not fail with EEXIST, an fdinfo mask without the flags the watch was added
// with). It is no errno and never reads as one: Decide makes it a
// *Misbehaved (a failure), or, where the feature's OlderResult says a kernel
// before its release gives that result, an absence below that release.
type WrongResult struct {
	// Call is the call that succeeded ("inotify_add_watch(IN_MASK_CREATE)
	// of a watched directory").
	Call string
	// What is what was wrong with its result ("it returned wd 1; want
	// EEXIST (inotify_add_watch(2))").
	What string
}

// Wrong returns a probe's *WrongResult: call succeeded, but what.
func Wrong(call, what string, args ...any) *WrongResult {
	return &WrongResult{Call: call, What: fmt.Sprintf(what, args...)}
}

func (e *WrongResult) Error() string { return e.Call + " succeeded, but " + e.What }

// Missing is evidence of absence other than an errno that a probe returns
// when the kernel's documented interface for the feature is not there (no
// /proc/sys/fs/fanotify/max_user_marks: fanotify(7) "since Linux 5.13").
// Decide treats it like an errno of the feature's Absent list.
type Missing struct{ What string }

// Lacks returns a probe's *Missing.
func Lacks(what string, args ...any) *Missing { return &Missing{What: fmt.Sprintf(what, args...)} }

func (e *Missing) Error() string { return e.What }

// Misbehaved is a feature whose probe's call succeeded with a wrong result on
// a kernel that must have it: a failure (the kernel has the feature and it
// did the wrong thing), conclusive and cached. It never says "not supported".
type Misbehaved struct {
	Feature *Feature
	Result  *WrongResult
	// Release is the running kernel's, for the message.
	Release string
}

func (e *Misbehaved) Error() string {
	why := "a wrong result, not a missing feature"
	switch {
	case e.Feature.OlderResult != "":
		why += fmt.Sprintf(" (%s; this kernel %s is >= %s)", e.Feature.OlderResult, e.Release, e.Feature.MinKernel)
	case e.Feature.MinKernel != "":
		why += fmt.Sprintf(" (no kernel without it answers so; merged in %s)", e.Feature.MinKernel)
	}
	return fmt.Sprintf("%s: probe: %v: %s", e.Feature.Name, e.Result, why)
}

func (e *Misbehaved) Unwrap() error { return e.Result }

func (e *Inconclusive) Unwrap() error { return e.Err }

// LimitReached is a probe stopped by a per-user limit (harness/limits): no
// answer about the feature, so never cached; a skip naming the limit.
type LimitReached struct {
	Feature *Feature
	Limit   *limits.Error
}

func (e *LimitReached) Error() string {
	return fmt.Sprintf("probe of %s: %v", e.Feature.Name, e.Limit)
}

func (e *LimitReached) Unwrap() error { return e.Limit }

// IsSkip reports whether err is an answer that should turn into a skip: the
// feature is absent here for a reason that is not a bug, or a per-user limit
// (harness/limits) stopped the call.
func IsSkip(err error) bool {
	var u *Unsupported
	var p *Unprivileged
	_, limited := limits.As(err)
	return errors.As(err, &u) || errors.As(err, &p) || limited
}

// probeTries bounds how often an inconclusive probe is tried in one Check.
const probeTries = 3

// Check returns the feature's answer: nil (supported), *Unsupported or
// *Unprivileged (skips), or another error (a failure: the feature is missing
// where it must be present, or the probe is inconclusive). Conclusive answers
// are cached; an inconclusive probe is tried again (a few times, and again
// on the next Check).
func (f *Feature) Check() error {
	if f.Kind == Behaviour {
		newer, basis := f.Rule()
		if newer {
			return nil
		}
		return &Unsupported{Feature: f, Err: errOlderRule, Why: basis}
	}
	for _, r := range f.Requires {
		if err := r.Check(); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cached {
		return f.err
	}
	if f.Probe == nil {
		return nil // a classify-only feature is present until a case proves otherwise
	}
	var err error
	for try := 0; try < probeTries; try++ {
		if try > 0 {
			time.Sleep(time.Duration(try) * 50 * time.Millisecond)
		}
		err = f.classify(f.Probe())
		var inc *Inconclusive
		var lim *LimitReached
		if !errors.As(err, &inc) && !errors.As(err, &lim) {
			f.cached, f.err = true, err
			return err
		}
	}
	return err
}

// errOlderRule is the Err of a Behaviour feature's *Unsupported: the kernel
// follows the rule from before the change.
var errOlderRule = errors.New("the older rule")

// Rule answers a Behaviour feature: whether this kernel follows the rule of
// MinKernel on (newer), and what decided it: the probe's evidence, or, where
// the probe could not tell, the release (the basis then says why and that
// the release decided). The answer is cached.
func (f *Feature) Rule() (newer bool, basis string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cached {
		return f.newer, f.basis
	}
	newer, basis, err := f.Decide()
	if err != nil {
		newer = KernelAtLeast(f.MinKernel)
		cmp := "<"
		if newer {
			cmp = ">="
		}
		basis = fmt.Sprintf("undecided by the probe (%v), so by release: %s %s %s", err, KernelRelease(), cmp, f.MinKernel)
	}
	f.cached, f.newer, f.basis = true, newer, basis
	return newer, basis
}

// Classify applies f's rules to an error a case met in its own call (an
// EOPNOTSUPP from a mark that f covers): requirements first, then the errno.
func (f *Feature) Classify(err error) error {
	for _, r := range f.Requires {
		if rerr := r.Check(); rerr != nil {
			return rerr
		}
	}
	return f.classify(err)
}

// ClassifyErr is Classify (kept for callers of the earlier name).
func (f *Feature) ClassifyErr(err error) error { return f.Classify(err) }

func (f *Feature) classify(err error) error { return Decide(f, err, Running()) }

// DefaultAbsent is the Absent list of a feature that declares none: EINVAL,
// the answer of fanotify_init(2) ("an invalid value was passed in flags"),
// fanotify_mark(2) ("an invalid value was passed in flags or mask") and
// inotify_add_watch(2) to a flag or event bit the kernel does not know
// (fanotify_user.c: flags & ~FANOTIFY_INIT_FLAGS, mask & ~valid_mask;
// inotify_user.c: mask & ~ALL_INOTIFY_BITS).
var DefaultAbsent = []unix.Errno{unix.EINVAL}

func (f *Feature) absentErrnos() []unix.Errno {
	if len(f.Absent) == 0 {
		return DefaultAbsent
	}
	return f.Absent
}

func (f *Feature) absentNames() string {
	var n []string
	for _, e := range f.absentErrnos() {
		n = append(n, errnoName(e))
	}
	return strings.Join(n, " or ")
}

// Kernel is what a verdict depends on besides the probe's outcome: the
// release (uname -r) and the config, nil when no config is readable.
type Kernel struct {
	Release string
	Config  map[string]string
}

// Running returns the running kernel's release and config.
func Running() Kernel {
	kconfigOnce.Do(func() { kconfig = readKconfig() })
	return Kernel{Release: KernelRelease(), Config: kconfig}
}

func (k Kernel) atLeast(min string) bool { return releaseAtLeast(parseVersion(k.Release), min) }

func (k Kernel) option(name string) (string, bool) {
	if k.Config == nil {
		return "", false
	}
	return k.Config[name], true
}

// Decide classifies a probe's outcome for f on kernel k; it calls nothing
// (requirements are Check's and Classify's). outcome nil: supported. An
// errno of f's Absent list (or DefaultAbsent) or a *Missing: absent, judged
// by f's kind (a skip, or a failure where the kernel must have it). A
// *WrongResult: *Misbehaved (a failure), or an absence below f's release
// when f.OlderResult says an older kernel gives that result. EPERM and
// EACCES: *Unprivileged. A per-user limit: *LimitReached. Anything else:
// *Inconclusive, naming the errno.
func Decide(f *Feature, outcome error, k Kernel) error {
	if outcome == nil {
		return nil
	}
	if isVerdict(outcome) {
		return outcome // another feature's answer (a probe that Checks a requirement)
	}
	var wrong *WrongResult
	if errors.As(outcome, &wrong) {
		if f.OlderResult != "" && f.MinKernel != "" && !k.atLeast(f.MinKernel) {
			return &Unsupported{Feature: f, Err: outcome, Why: f.OlderResult + "; needs >= " + f.MinKernel}
		}
		return &Misbehaved{Feature: f, Result: wrong, Release: k.Release}
	}
	var missing *Missing
	if errors.As(outcome, &missing) {
		return f.absent(outcome, k)
	}
	for _, e := range f.absentErrnos() {
		if errors.Is(outcome, e) {
			return f.absent(outcome, k)
		}
	}
	if errors.Is(outcome, unix.EPERM) || errors.Is(outcome, unix.EACCES) {
		return &Unprivileged{Feature: f, Err: outcome}
	}
	if l, ok := limits.As(outcome); ok {
		// Not an answer about f, and not cached: the probe ran into a
		// per-user limit (another suite may hold the groups).
		return &LimitReached{Feature: f, Limit: l}
	}
	return &Inconclusive{Feature: f, Err: outcome}
}

// isVerdict reports whether err is already a feature's answer.
func isVerdict(err error) bool {
	var (
		u *Unsupported
		p *Unprivileged
		m *Misbehaved
		l *LimitReached
		i *Inconclusive
	)
	return errors.As(err, &u) || errors.As(err, &p) || errors.As(err, &m) || errors.As(err, &l) || errors.As(err, &i)
}

// absent decides what the kernel's refusal of f means, by f's kind.
func (f *Feature) absent(err error, k Kernel) error {
	why := func(s string) string {
		if f.Explain != nil {
			return f.Explain(err) + "; " + s
		}
		return s
	}
	tooOld := f.MinKernel != "" && !k.atLeast(f.MinKernel)
	if tooOld {
		return &Unsupported{Feature: f, Err: err, Why: why("needs >= " + f.MinKernel)}
	}
	if f.Kind == Kconfig {
		state, known := k.option(f.Option)
		switch {
		case !known:
			return &Unsupported{Feature: f, Err: err, Why: "needs " + f.Option + "; this kernel's config is not readable"}
		case state != "y" && state != "m":
			return &Unsupported{Feature: f, Err: err, Why: f.Option + " is not set"}
		}
		if errors.Is(err, unix.ENOSYS) {
			// The kernel has the call; only a seccomp filter (a container
			// runtime's profile) answers ENOSYS for it then.
			return &Unsupported{Feature: f, Err: err, Why: fmt.Sprintf("the config sets %s=%s, so a seccomp filter refuses the call", f.Option, state)}
		}
		return fmt.Errorf("%s %s on kernel %s although its config sets %s=%s: %w",
			f.Name, refused(err), k.Release, f.Option, state, err)
	}
	if f.MinKernel == "" {
		return &Unsupported{Feature: f, Err: err, Why: why("not in this kernel")}
	}
	return fmt.Errorf("%s %s on kernel %s, which is >= %s where it was merged: %w",
		f.Name, refused(err), k.Release, f.MinKernel, err)
}

// refused says how the kernel showed an absence: "rejected (EINVAL)", or
// "missing (no /proc/sys/fs/fanotify/max_user_marks)".
func refused(err error) string {
	var m *Missing
	if errors.As(err, &m) {
		return "missing (" + m.What + ")"
	}
	return "rejected (" + errnoName(err) + ")"
}

var (
	kconfigOnce sync.Once
	kconfig     map[string]string
)

// KconfigValue returns a config option's value in the running kernel's
// config ("y", "m", "" when unset) and whether a config could be read
// (/proc/config.gz, then /boot/config-<release>).
func KconfigValue(option string) (string, bool) { return Running().option(option) }

func readKconfig() map[string]string {
	var r io.Reader
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		if z, err := gzip.NewReader(f); err == nil {
			r = z
		}
	}
	if r == nil {
		f, err := os.Open("/boot/config-" + KernelRelease())
		if err != nil {
			return nil
		}
		defer f.Close()
		r = f
	}
	m := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && strings.HasPrefix(k, "CONFIG_") {
			m[k] = v
		}
	}
	if sc.Err() != nil {
		return nil
	}
	return m
}

func errnoName(err error) string {
	var e unix.Errno
	if errors.As(err, &e) {
		if e == unix.EOPNOTSUPP {
			return "EOPNOTSUPP" // = ENOTSUP on Linux; the name the man pages use
		}
		if n := unix.ErrnoName(e); n != "" {
			return n
		}
		return fmt.Sprintf("errno %d", int(e))
	}
	return err.Error()
}

// ErrnoName returns the symbolic name of err's errno ("EPERM"), or err's text.
func ErrnoName(err error) string { return errnoName(err) }

var (
	releaseOnce sync.Once
	release     string
	version     [3]int
)

// KernelRelease returns uname -r.
func KernelRelease() string {
	loadRelease()
	return release
}

func loadRelease() {
	releaseOnce.Do(func() {
		var u unix.Utsname
		if unix.Uname(&u) == nil {
			release = unix.ByteSliceToString(u.Release[:])
		}
		version = parseVersion(release)
	})
}

func parseVersion(s string) [3]int {
	var v [3]int
	s, _, _ = strings.Cut(s, "-")
	for i, p := range strings.SplitN(s, ".", 3) {
		n := 0
		for _, c := range p {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		v[i] = n
	}
	return v
}

// KernelAtLeast reports whether the running kernel's version is >= min ("5.19").
func KernelAtLeast(min string) bool {
	loadRelease()
	return releaseAtLeast(version, min)
}

func releaseAtLeast(version [3]int, min string) bool {
	want := parseVersion(min)
	for i := range version {
		if version[i] != want[i] {
			return version[i] > want[i]
		}
	}
	return true
}

// probeDir is where probes place marks and look up a missing name: the case
// process's private workspace (FSNSUITE_WORKSPACE, a tmpfs in its own mount
// namespace: harness/fixture Workspace). There is no fallback to the
// temporary directory: it is shared, and a name a user made there (the
// missing name maskProbe looks up) would change a probe's answer. The
// error is an *Inconclusive's cause (never an errno: it must not read as a
// refusal by the kernel).
func probeDir() (string, error) {
	d := os.Getenv("FSNSUITE_WORKSPACE")
	if d == "" {
		return "", errors.New("feature probe: no private workspace (FSNSUITE_WORKSPACE is unset: probes run in a case process, after the harness made its workspace)")
	}
	var st unix.Stat_t
	if err := unix.Lstat(d, &st); err != nil {
		return "", fmt.Errorf("feature probe: workspace %s: %v", d, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return "", fmt.Errorf("feature probe: workspace %s is not a directory of uid %d that only it may write (uid %d, mode %#o): refusing to probe there", d, os.Geteuid(), st.Uid, st.Mode)
	}
	return d, nil
}

func withGroup(flags uint, fn func(fd int) error) error {
	fd, err := unix.FanotifyInit(flags|unix.FAN_CLOEXEC, unix.O_RDONLY)
	if err != nil {
		return limits.FanotifyInit("fanotify_init", fmt.Errorf("fanotify_init: %w", err))
	}
	defer unix.Close(fd)
	if fn == nil {
		return nil
	}
	return fn(fd)
}

// WithInotifyWatch is the frame of an inotify probe: a new instance (closed
// afterwards) with one watch of mask on the workspace directory
// (FSNSUITE_WORKSPACE; none is an error); fn gets the instance's
// descriptor and the watched directory.
func WithInotifyWatch(mask uint32, fn func(fd int, dir string) error) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return limits.InotifyInit("inotify_init1", fmt.Errorf("inotify_init1: %w", err))
	}
	defer unix.Close(fd)
	dir, err := probeDir()
	if err != nil {
		return err
	}
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		return limits.InotifyWatch("inotify_add_watch", fmt.Errorf("inotify_add_watch(%#x): %w", mask, err))
	}
	return fn(fd, dir)
}

func markProbe(initFlags, markFlags uint, mask uint64) func() error {
	return func() error {
		return withGroup(initFlags, func(fd int) error {
			dir, err := probeDir()
			if err != nil {
				return err
			}
			if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD|markFlags, mask, unix.AT_FDCWD, dir); err != nil {
				return limits.FanotifyMark("fanotify_mark", fmt.Errorf("fanotify_mark: %w", err))
			}
			return nil
		})
	}
}

func initProbe(flags uint) func() error { return func() error { return withGroup(flags, nil) } }

// maskProbe asks whether fanotify_mark accepts mask and markFlags for a
// group made with initFlags, whatever filesystem the probe runs on: the mark
// names a path that does not exist, and do_fanotify_mark validates flags and
// mask (EINVAL) before fanotify_find_path looks the path up (ENOENT), so
// ENOENT is the answer "accepted".
func maskProbe(initFlags, markFlags uint, mask uint64) func() error {
	return func() error {
		return withGroup(initFlags, func(fd int) error {
			dir, err := probeDir()
			if err != nil {
				return err
			}
			missing := dir + "/.fsnsuite-probe-no-such-file"
			return maskOutcome(unix.FanotifyMark(fd, unix.FAN_MARK_ADD|markFlags, mask, unix.AT_FDCWD, missing), missing)
		})
	}
}

// maskOutcome is maskProbe's decision on its call's error: ENOENT (the
// lookup of the missing path, after validation) is "accepted"; success is a
// wrong result (a mark on a path that does not exist); any other errno is
// the kernel's answer about the flags and mask, for Decide.
func maskOutcome(err error, missing string) error {
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err == nil:
		return Wrong("fanotify_mark(FAN_MARK_ADD) of "+missing, "that path does not exist; want ENOENT (fanotify_mark(2): \"the filesystem object indicated by dirfd and pathname does not exist\")")
	}
	return limits.FanotifyMark("fanotify_mark", fmt.Errorf("fanotify_mark: %w", err))
}

// kallsymsControl is a symbol every kernel this suite can run on lists in
// /proc/kallsyms (fs/notify/fsnotify.c fsnotify, built in whenever fsnotify
// is): a listing without it is not a listing of this kernel's functions.
const kallsymsControl = "fsnotify"

// KallsymsHas reports whether /proc/kallsyms lists a symbol named name. Its
// names are readable without privilege (kptr_restrict hides only the
// addresses), and a function of the kernel or of a loaded module is listed
// whenever CONFIG_KALLSYMS is set. err: the file is missing (CONFIG_KALLSYMS
// unset) or unreadable, or it lacks kallsymsControl, so absence proves
// nothing.
func KallsymsHas(name string) (bool, error) {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return false, err
	}
	defer f.Close()
	found, control := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() && !(found && control) {
		// "ffffffff81234560 T fserror_report", "... t name\t[module]"
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 {
			continue
		}
		found = found || fs[2] == name
		control = control || fs[2] == kallsymsControl
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("reading /proc/kallsyms: %w", err)
	}
	if !control {
		return false, fmt.Errorf("/proc/kallsyms does not list %s", kallsymsControl)
	}
	return found, nil
}

// fserrorProbe decides FSErrorWorker: fs/fserror.c is built in (obj-y) and
// exports fserror_report (EXPORT_SYMBOL_GPL), so the function is in
// /proc/kallsyms exactly when the kernel has it.
func fserrorProbe() (bool, string, error) {
	has, err := KallsymsHas("fserror_report")
	switch {
	case err != nil:
		return false, "", err
	case has:
		return true, "fserror_report in /proc/kallsyms", nil
	}
	return false, "no fserror_report in /proc/kallsyms", nil
}

// The features the suite uses. Versions are the mainline releases that merged
// them; options the config symbols they depend on (fs/notify/*/Kconfig).
var (
	Inotify = func() *Feature {
		f := NewKconfig("inotify", "CONFIG_INOTIFY_USER", "", func() error {
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err != nil {
				return limits.InotifyInit("inotify_init1", fmt.Errorf("inotify_init1: %w", err))
			}
			return unix.Close(fd)
		})
		f.Privilege = "" // inotify_init1(2) checks no capability
		// Without CONFIG_INOTIFY_USER the syscall is kernel/sys_ni.c's
		// COND_SYSCALL(inotify_init1) stub: ENOSYS.
		f.Absent = []unix.Errno{unix.ENOSYS}
		return f
	}()
	// Fanotify: fanotify_init(2) "ENOSYS This kernel does not implement
	// fanotify_init(). The fanotify API is available only if the kernel
	// was configured with CONFIG_FANOTIFY."
	Fanotify = func() *Feature {
		f := NewKconfig("fanotify", "CONFIG_FANOTIFY", "", initProbe(unix.FAN_CLASS_NOTIF))
		f.Absent = []unix.Errno{unix.ENOSYS}
		return f
	}()
	// FanotifyPerm and every feature below without an Absent list: EINVAL
	// (DefaultAbsent). Without CONFIG_FANOTIFY_ACCESS_PERMISSIONS
	// fanotify_mark leaves FANOTIFY_PERM_EVENTS out of valid_mask (EINVAL,
	// fanotify_user.c do_fanotify_mark); an init flag, mark flag or event
	// a kernel does not know is EINVAL (fanotify_init(2), fanotify_mark(2)).
	FanotifyPerm = NewKconfig("fanotify permission events (FAN_CLASS_CONTENT, FAN_OPEN_PERM)", "CONFIG_FANOTIFY_ACCESS_PERMISSIONS", "",
		markProbe(unix.FAN_CLASS_CONTENT, 0, unix.FAN_OPEN_PERM)).needing(Fanotify)
	OpenExec        = New("FAN_OPEN_EXEC", "5.0", markProbe(unix.FAN_CLASS_NOTIF, 0, unix.FAN_OPEN_EXEC)).needing(Fanotify)
	OpenExecPerm    = New("FAN_OPEN_EXEC_PERM", "5.0", markProbe(unix.FAN_CLASS_CONTENT, 0, unix.FAN_OPEN_EXEC_PERM)).needing(FanotifyPerm)
	MarkFilesystem  = New("FAN_MARK_FILESYSTEM", "4.20", markProbe(unix.FAN_CLASS_NOTIF, unix.FAN_MARK_FILESYSTEM, unix.FAN_OPEN)).needing(Fanotify)
	ReportFID       = New("FAN_REPORT_FID", "5.1", initProbe(unix.FAN_REPORT_FID)).needing(Fanotify)
	ReportDFIDName  = New("FAN_REPORT_DFID_NAME", "5.9", initProbe(unix.FAN_REPORT_DFID_NAME)).needing(Fanotify)
	ReportTargetFID = New("FAN_REPORT_TARGET_FID", "5.17", initProbe(unix.FAN_REPORT_DFID_NAME_TARGET)).needing(Fanotify)
	ReportPidfd     = New("FAN_REPORT_PIDFD", "5.15", initProbe(unix.FAN_REPORT_PIDFD)).needing(Fanotify)
	ReportMnt       = New("FAN_REPORT_MNT", "6.14", initProbe(unix.FAN_REPORT_MNT)).needing(Fanotify)
	ReportTID       = New("FAN_REPORT_TID", "4.20", initProbe(unix.FAN_REPORT_TID)).needing(Fanotify)
	ReportFdError   = New("FAN_REPORT_FD_ERROR", "6.13", initProbe(unix.FAN_REPORT_FD_ERROR)).needing(Fanotify)
	// RenameEvent is probed by mask validation alone, so that the answer
	// does not depend on the filesystem: do_fanotify_mark (fanotify_user.c,
	// 5.10 to 7.3) checks the mask against the events the kernel knows
	// (EINVAL) and FAN_RENAME against the group's FAN_REPORT_NAME before it
	// looks the path up, and only then tests the filesystem's fsid
	// (fanotify_test_fsid: ENODEV on a tmpfs without one). A mark on a path
	// that does not exist is therefore ENOENT exactly when FAN_RENAME is
	// accepted. (A mark on a real path of the workspace asked "can this
	// tmpfs report FIDs", and on 5.10 answered ENODEV: inconclusive.)
	RenameEvent   = New("FAN_RENAME", "5.17", maskProbe(unix.FAN_REPORT_DFID_NAME, 0, unix.FAN_RENAME)).needing(Fanotify)
	MarkEvictable = New("FAN_MARK_EVICTABLE", "5.19", markProbe(unix.FAN_CLASS_NOTIF, unix.FAN_MARK_EVICTABLE, unix.FAN_OPEN)).needing(Fanotify)
	// FAN_MARK_IGNORE on a directory needs FAN_MARK_IGNORED_SURV_MODIFY, or EISDIR.
	MarkIgnore = New("FAN_MARK_IGNORE", "6.0",
		markProbe(unix.FAN_CLASS_NOTIF, unix.FAN_MARK_IGNORE|unix.FAN_MARK_IGNORED_SURV_MODIFY, unix.FAN_OPEN)).needing(Fanotify)
	// FSErrorWorker: filesystem errors reach fsnotify from a workqueue.
	// Since 7.0 (commit 21945e6cb516, "fs: report filesystem and file I/O
	// errors to fsnotify"; ext4 converted by 81d2e13a57c9, "ext4: convert
	// to new fserror helpers") ext4's __ext4_error, __ext4_error_inode,
	// __ext4_std_error and ext4_force_shutdown call fserror_report
	// (fs/fserror.c), which queues the report with schedule_work;
	// fserror_worker calls fsnotify(FS_ERROR) from a kworker, so a
	// FAN_FS_ERROR event's pid is that kernel thread's (fanotify_alloc_event:
	// task_tgid(current)) and it is queued after the failing call returned.
	// Before, fsnotify_sb_error ran in the task that met the error, before
	// its call returned. Decided by /proc/kallsyms (fserrorProbe); a kernel
	// without kallsyms is decided by the release.
	FSErrorWorker = NewBehaviour("filesystem errors reported to fsnotify from a workqueue (fs/fserror.c fserror_report)", "7.0", fserrorProbe)
	// EnableAudit: FAN_ENABLE_AUDIT (4.15) is refused with EINVAL by a
	// kernel built without CONFIG_AUDITSYSCALL (fanotify_user.c
	// fanotify_init), and with EPERM without CAP_AUDIT_WRITE.
	EnableAudit = func() *Feature {
		f := NewKconfig("FAN_ENABLE_AUDIT", "CONFIG_AUDITSYSCALL", "4.15", initProbe(unix.FAN_CLASS_NOTIF|unix.FAN_ENABLE_AUDIT)).needing(Fanotify)
		f.Privilege = "CAP_AUDIT_WRITE"
		return f
	}()
	// PreContent: the pre-content events (FAN_PRE_ACCESS) and FAN_DENY_ERRNO
	// responses, both 6.14, built under CONFIG_FANOTIFY_ACCESS_PERMISSIONS.
	// Removing a FAN_PRE_ACCESS mark that does not exist answers ENOENT from
	// a kernel that knows the event and EINVAL from one that does not,
	// whatever the filesystem: whether a filesystem allows pre-content marks
	// (SB_I_ALLOW_HSM) is PreContentOn's question.
	PreContent = New("pre-content events and FAN_DENY_ERRNO (FAN_PRE_ACCESS)", "6.14", func() error {
		return withGroup(unix.FAN_CLASS_PRE_CONTENT, func(fd int) error {
			return preContentOutcome(unix.FanotifyMark(fd, unix.FAN_MARK_REMOVE, unix.FAN_PRE_ACCESS, unix.AT_FDCWD, "/"))
		})
	}).needing(FanotifyPerm)
)

// preContentOutcome is PreContent's decision on its call's error: ENOENT
// (fanotify_mark(2): "the mark to be removed does not exist") is
// "accepted"; success is a wrong result; any other errno is the kernel's
// answer about FAN_PRE_ACCESS, for Decide (EINVAL: an unknown event).
func preContentOutcome(err error) error {
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err == nil:
		return Wrong("fanotify_mark(FAN_MARK_REMOVE, FAN_PRE_ACCESS) of a mark that does not exist", "want ENOENT (fanotify_mark(2))")
	}
	return fmt.Errorf("fanotify_mark(FAN_MARK_REMOVE, FAN_PRE_ACCESS): %w", err)
}

// preContentFS are the filesystems that allow pre-content marks, with the
// release that made them do so: "fs: enable pre-content events on supported
// file systems" (6.14) sets SB_I_ALLOW_HSM for ext4, xfs and btrfs;
// fanotify_user.c fanotify_events_supported() answers EOPNOTSUPP for any
// other superblock (tmpfs by design).
var preContentFS = map[string]string{"ext4": "6.14", "xfs": "6.14", "btrfs": "6.14"}

// PreContentOn is "a pre-content mark on filesystem typ is accepted", for a
// case to Classify the errno of its own FAN_PRE_ACCESS mark with: on a
// filesystem that has allowed them since a release, an EOPNOTSUPP at or
// above it is a failure; elsewhere it is a skip.
func PreContentOn(typ string) *Feature {
	preContentOnMu.Lock()
	defer preContentOnMu.Unlock()
	if f, ok := preContentOn[typ]; ok {
		return f
	}
	// EOPNOTSUPP: fanotify_events_supported answers it for a pre-content
	// event on a superblock without SB_I_ALLOW_HSM (fanotify_user.c).
	f := &Feature{Name: "pre-content marks on " + typ + " (SB_I_ALLOW_HSM)", Kind: Release, MinKernel: preContentFS[typ],
		Privilege: capSysAdmin, Requires: []*Feature{PreContent}, Absent: []unix.Errno{unix.EOPNOTSUPP}}
	preContentOn[typ] = f
	return f
}

var (
	preContentOnMu sync.Mutex
	preContentOn   = map[string]*Feature{}
)
