package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/envfault"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/limits"
	"github.com/fsnsuite/fsnsuite/harness/ownproc"
	"github.com/fsnsuite/fsnsuite/harness/setup"
	"golang.org/x/sys/unix"
)

// T is the handle a case gets. It mirrors testing.T (Run, Errorf, Fatalf,
// Skipf, Cleanup, TempDir, Deadline, Helper) and satisfies gotest.tools/v3's
// assert.TestingT and poll.TestingT, so cases can use assert and poll.
type T struct {
	name     string
	doc      string
	fix      *Fix
	fsType   string
	deadline time.Time
	parent   *T
	declared []string // Case.Subtests, on a top-level T
	// onSub, on a top-level T in a case process, is told when a subtest
	// starts (done false) and when it has ended (done true), so the
	// supervisor can keep the finished leaves of a case whose process dies.
	onSub func(c *T, done bool)

	mu         sync.Mutex
	failed     bool
	skipped    bool
	skipReason string
	logs       []string
	notes      []string
	cleanups   []func()
	subs       []*T
	finished   bool
	frozen     bool   // stopped by the watchdog or a signal: its log is closed
	noHint     string // why a failure prints no kernel HINT (a per-user limit, a void measurement)
	envFault   string // the first environment fault an Error or Errorf met (with envfault.Marker)
	lacks      *Fix   // the fix whose absence the case saw (KernelLacks): its HINT is printed
	undecided  string // the other programs whose events alone made a comparison differ (Interfered)

	fs  *fixture.FS
	dir string
}

// Name returns the case's full name (with its filesystem suffix).
func (t *T) Name() string { return t.name }

// Deadline returns the time by which the case must end.
func (t *T) Deadline() time.Time { return t.deadline }

// Strict reports whether skips count as failures in this run.
func (t *T) Strict() bool { return Opts.Strict }

// Helper marks the calling function as a helper; present for gotest.tools.
func (t *T) Helper() {}

// Log records a diagnostic, printed when the case fails or with -v.
func (t *T) Log(args ...any) { t.addLog(fmt.Sprintln(args...)) }

// Logf records a formatted diagnostic.
func (t *T) Logf(format string, args ...any) { t.addLog(fmt.Sprintf(format, args...)) }

// Note records a diagnostic that is always printed (perf figures, facts a
// reader of a passing run wants to see).
func (t *T) Note(args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notes = append(t.notes, strings.TrimRight(fmt.Sprintln(args...), "\n"))
}

// Notef is Note with formatting.
func (t *T) Notef(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notes = append(t.notes, strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
}

func (t *T) addLog(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.frozen {
		return
	}
	t.logs = append(t.logs, strings.TrimRight(s, "\n"))
}

// freeze closes the case's log (later lines are dropped: they would describe
// the harness stopping the case, not the kernel) and returns it.
func (t *T) freeze() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.frozen = true
	return append([]string(nil), t.logs...)
}

// Fail marks the case failed and lets it go on.
func (t *T) Fail() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
}

// Failed reports whether the case has failed.
func (t *T) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

// FailNow marks the case failed and stops it (runtime.Goexit, as testing does).
func (t *T) FailNow() {
	t.Fail()
	runtime.Goexit()
}

// Error logs and fails. An argument that is an environment fault (see
// Fatal) does not fail the case: it is noted, the case goes on, and if
// nothing else fails it the case ends as a skip naming the fault; if
// something does, it fails with no kernel HINT (the fault may be why).
func (t *T) Error(args ...any) {
	t.Log(args...)
	if !t.noteEnv(envArgs("", args)) {
		t.Fail()
	}
}

// Errorf logs and fails (an environment fault among args is noted instead,
// as Error does).
func (t *T) Errorf(format string, args ...any) {
	t.Logf(format, args...)
	if !t.noteEnv(envArgs(format, args)) {
		t.Fail()
	}
}

// noteEnv remembers reason, an environment fault an Error or Errorf met
// (settle turns the case into its skip unless something else failed it),
// and reports whether there was one.
func (t *T) noteEnv(reason string) bool {
	if reason == "" {
		return false
	}
	t.NoKernelHint("the machine, not the kernel, stopped part of this case: " + strings.TrimPrefix(reason, envfault.Marker))
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.envFault == "" {
		t.envFault = reason
	}
	return true
}

// envArgs returns the skip reason (with envfault.Marker) of the first
// argument that is an environment fault, "" when none is: a per-user limit
// (harness/limits), an *envfault.Error, or, in a message declared a setup
// failure (format, or the first of args, begins with setup.Prefix), an
// error whose errno is the machine's on a setup call (envfault.Setup:
// ENOSPC, EDQUOT, EROFS, EMFILE, ENFILE, ENOMEM).
func envArgs(format string, args []any) string {
	declared := strings.HasPrefix(format, setup.Prefix)
	if format == "" && len(args) > 0 {
		if s, ok := args[0].(string); ok {
			declared = strings.HasPrefix(s, setup.Prefix)
		}
	}
	for _, a := range args {
		err, ok := a.(error)
		if !ok {
			continue
		}
		if r, ok := envReason(err); ok {
			return r
		}
		if declared {
			if r, ok := envReason(envfault.Setup("", err)); ok {
				return r
			}
		}
	}
	return ""
}

// envReason is the skip reason of err when it is an environment fault: a
// per-user limit (harness/limits) or an *envfault.Error.
func envReason(err error) (string, bool) {
	if l, ok := limits.As(err); ok {
		return envfault.Marker + l.Error(), true
	}
	if e, ok := envfault.As(err); ok {
		return envfault.Marker + e.Error(), true
	}
	return "", false
}

// KernelLacks says that what the kernel did is what a kernel without fix
// does (the case compared the observed behaviour with that kernel's, e.g.
// the model run with the fix turned off). A failing case prints
// "HINT: kernel may lack <fix>" only then: a Case.Fix alone documents what
// the expectation depends on and prints no HINT, since a failure for any
// other reason says nothing about the fix.
func (t *T) KernelLacks(fix *Fix) {
	if fix == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lacks == nil {
		t.lacks = fix
	}
}

// CaseFix returns the case's Case.Fix (nil when it has none), for a case
// that confirms it with KernelLacks.
func (t *T) CaseFix() *Fix { return t.root().fix }

// NoKernelHint says that the case's failures are no evidence about its
// kernel fix (Case.Fix): the failure prints "no kernel HINT: why" instead of
// the HINT line. For a failure a per-user limit caused (the harness calls it
// itself), or a perf measurement whose own setup check failed.
func (t *T) NoKernelHint(why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.noHint == "" {
		t.noHint = why
	}
}

// Fatal logs, fails and stops the case. When an argument is an environment
// fault — an error that reached a per-user limit (harness/limits), an
// *envfault.Error (no free loop device, a full workspace), or, in a message
// that begins with setup.Prefix ("setup: "), an error whose errno is the
// machine's on a setup call (envfault.Setup) — the case is skipped instead,
// the reason beginning with envfault.Marker and naming the resource and the
// errno: the machine refused it, not the kernel (README "Reading results").
func (t *T) Fatal(args ...any) {
	t.Log(args...)
	if r := envArgs("", args); r != "" {
		t.skip(r)
	}
	t.FailNow()
}

// Fatalf logs, fails and stops the case (a skip for an environment fault,
// as Fatal).
func (t *T) Fatalf(format string, args ...any) {
	t.Logf(format, args...)
	if r := envArgs(format, args); r != "" {
		t.skip(r)
	}
	t.FailNow()
}

// Skip stops the case as skipped; the arguments are the reason, which is
// mandatory.
func (t *T) Skip(args ...any) { t.skip(strings.TrimSpace(fmt.Sprintln(args...))) }

// Skipf stops the case as skipped with a formatted reason.
func (t *T) Skipf(format string, args ...any) { t.skip(fmt.Sprintf(format, args...)) }

// SkipEnvironment stops the case as skipped for an environment fault the
// case found itself (a per-user limit other programs hold most of, a
// resource in use): the reason, which names the resource and the errno,
// gets envfault.Marker, so that the case counts as one (LTP's broken with
// -exit ltp; SKIP in KCIDB). An error the case holds goes to Fatal instead,
// which tells a fault from a failure itself.
func (t *T) SkipEnvironment(format string, args ...any) {
	t.skip(envfault.Marker + fmt.Sprintf(format, args...))
}

// SkipNow is not offered without a reason; it exists for interface parity and
// records "no reason given", which reviewers should treat as a defect.
func (t *T) SkipNow() { t.skip("no reason given") }

func (t *T) skip(reason string) {
	if reason == "" {
		reason = "no reason given"
	}
	t.mu.Lock()
	t.skipped = true
	t.skipReason = reason
	t.mu.Unlock()
	runtime.Goexit()
}

// Skipped reports whether the case was skipped.
func (t *T) Skipped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.skipped
}

// Cleanup registers fn to run when the case ends, last registered first.
func (t *T) Cleanup(fn func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, fn)
}

var tempSeq struct {
	sync.Mutex
	n int
}

// TempDir returns a new directory in the private workspace, removed at cleanup.
func (t *T) TempDir() string {
	t.Helper()
	ws, err := fixture.Workspace()
	if err != nil {
		t.Fatalf("TempDir: %v", err)
	}
	tempSeq.Lock()
	tempSeq.n++
	n := tempSeq.n
	tempSeq.Unlock()
	d := filepath.Join(ws, fmt.Sprintf("tmp-%s-%d", sanitize(t.name), n))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatalf("TempDir: %v", envfault.Setup("", err))
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func sanitize(s string) string { return strings.NewReplacer("/", "_", ".", "_").Replace(s) }

// FS returns the filesystem this case runs on, mounting it on first use. A
// filesystem that cannot be had here skips the case with the reason (an
// environment fault's, such as no free loop device, marked as one).
func (t *T) FS() *fixture.FS {
	root := t.root()
	root.mu.Lock()
	fs := root.fs
	root.mu.Unlock()
	if fs != nil {
		return fs
	}
	fs, err := fixture.Mount(root.fsType)
	var un *fixture.Unavailable
	if errors.As(err, &un) {
		t.Skipf("%s", un.Reason)
	}
	if err != nil {
		t.Fatalf("filesystem %s: %v", root.fsType, err) // an environment fault skips
	}
	root.mu.Lock()
	root.fs = fs
	root.mu.Unlock()
	return fs
}

// Dir returns this case's own fresh directory on its filesystem (made on
// first use, removed at the end of the case).
func (t *T) Dir() string {
	root := t.root()
	root.mu.Lock()
	d := root.dir
	root.mu.Unlock()
	if d != "" {
		return d
	}
	fs := t.FS()
	base := root.name
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	d, err := fs.NewDir(base)
	if err != nil {
		t.Fatalf("%v", err)
	}
	root.mu.Lock()
	root.dir = d
	root.mu.Unlock()
	root.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// Path joins elements under the case directory.
func (t *T) Path(elem ...string) string {
	return filepath.Join(append([]string{t.Dir()}, elem...)...)
}

func (t *T) root() *T {
	for t.parent != nil {
		t = t.parent
	}
	return t
}

// Require skips the case when f is unsupported or unprivileged here, and fails
// it when the probe itself broke (or the kernel should have had f). Where the
// probe's call succeeded with a wrong result (*feature.Misbehaved: the kernel
// has f and did the wrong thing), the case fails with the probe's "succeeded,
// but …" and runs on, so its own checks name the behaviour too.
func (t *T) Require(fs ...*feature.Feature) {
	t.Helper()
	for _, f := range fs {
		err := f.Check()
		if err == nil {
			continue
		}
		var wrong *feature.Misbehaved
		if errors.As(err, &wrong) {
			t.Errorf("%v", err)
			continue
		}
		t.fatalOrSkip(err)
	}
}

// Interfered records that a comparison differed only by events of other
// programs' processes (procs names them: "pid 4123 comm updatedb"), after
// logging report. The case goes on; if nothing else fails it, it ends as a
// skip "undecided: events from another process (procs) interfered" (with
// -strict a failure, with no kernel HINT): what the kernel did for the
// case's own operations was as wanted, and another program's use of the
// same files is no verdict on fsnotify. expect's comparisons call it.
func (t *T) Interfered(report, procs string) {
	t.Helper()
	t.Log(strings.TrimRight(report, "\n"))
	t.mu.Lock()
	if t.undecided == "" {
		t.undecided = procs
	}
	t.mu.Unlock()
	if Opts.Strict {
		t.NoKernelHint("another program's events interfered; strict mode counts the undecided comparison as a failure")
	}
}

// othersWatch is how long OthersOnFS watches the case's filesystem.
const othersWatch = 500 * time.Millisecond

// OthersOnFS watches this case's filesystem for half a second
// (ownproc.WatchFS) and names the running processes outside the suite that
// used files on it meanwhile; nil when the case has no filesystem mounted.
// expect's inotify comparisons call it on a difference (an inotify event
// names no process), so that another program's use of the same files makes
// the comparison undecided (Interfered), not failed.
func (t *T) OthersOnFS() ([]ownproc.Process, error) {
	root := t.root()
	root.mu.Lock()
	fs := root.fs
	root.mu.Unlock()
	if fs == nil {
		return nil, nil
	}
	procs, err := ownproc.WatchFS(fs.Root, othersWatch)
	othersMu.Lock()
	defer othersMu.Unlock()
	seen := othersSeen[fs.Root]
	switch {
	case err != nil:
	case len(procs) > 0:
		othersSeen[fs.Root] = othersSighting{procs, time.Now()}
	case time.Since(seen.at) < othersRecent:
		// Seen on this filesystem moments ago, by an earlier
		// comparison's watch: a program that stopped just now may still
		// be what made this one differ.
		procs = seen.procs
	}
	return procs, err
}

// othersRecent: other programs a watch saw this long ago still count.
const othersRecent = 5 * time.Second

// othersSighting is what the last watch of a filesystem that saw other
// programs saw, and when.
type othersSighting struct {
	procs []ownproc.Process
	at    time.Time
}

var (
	othersMu   sync.Mutex
	othersSeen = map[string]othersSighting{} // by filesystem root
)

// LeaveOut records that part of the case (a group class, a variant) is left
// out because a feature is missing here: a note naming it on every run, and
// with -strict a failure, as a skip would be. The rest of the case runs.
func (t *T) LeaveOut(format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	t.Notef("left out: %s", msg)
	if Opts.Strict {
		t.Errorf("strict: a part left out counts as a failure: %s", msg)
		t.NoKernelHint("a feature missing here left part of the case out; strict mode counts that as a failure")
	}
}

// FID is the feature "a FAN_REPORT_FID group can mark the filesystem under
// test" (feature.FIDOn, probed on this case's filesystem and cached per
// filesystem). A case that meets ENODEV, EXDEV or EOPNOTSUPP from a mark of
// a FID-reporting group calls RequireFID: a skip naming the filesystem and
// the errno where the filesystem cannot, a failure where it can (the errno
// then came from something else) or should (at or above the release that
// gave the filesystem file handles).
func (t *T) FID() *feature.Feature {
	fs := t.FS()
	return feature.FIDOn(fs.Type, fs.Root)
}

// RequireFID is Require(t.FID()).
func (t *T) RequireFID() {
	t.Helper()
	t.Require(t.FID())
}

// JudgeFIDMark stops the case on err, the error of a FID-reporting group's
// fanotify_mark on this case's filesystem: a skip when err is an errno the
// kernel gives a filesystem that cannot report file handles (ENODEV, EXDEV,
// EOPNOTSUPP) and the filesystem's own probe agrees, else a failure with err.
func (t *T) JudgeFIDMark(err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, unix.ENODEV) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EOPNOTSUPP) {
		if ferr := t.FID().Check(); ferr != nil && feature.IsSkip(ferr) {
			t.Skipf("%v (%v)", err, ferr)
		} else if ferr != nil {
			t.Fatalf("%v (%v)", err, ferr)
		}
	}
	t.Fatalf("%v", err)
}

// Actor starts an actor process, killed when the case ends.
func (t *T) Actor() *actor.Actor {
	t.Helper()
	a, err := actor.Start()
	if err != nil {
		t.Fatalf("%v", envfault.Setup("start an actor", err))
	}
	t.Cleanup(a.Kill)
	return a
}

// Fanotify opens a fanotify group that is closed when the case ends (or by the
// watchdog). The feature layer judges a refusal: EPERM and ENOSYS skip the
// case with the errno and the reason; a reached max_user_groups skips naming
// it; any other error fails it (an EINVAL for an unknown flag should have
// been caught by Require of the feature).
func (t *T) Fanotify(initFlags, eventFFlags uint) *fanotify.Group {
	t.Helper()
	var g *fanotify.Group
	var err error
	create := func() {
		if lerr := fixture.Steady(func() { g, err = fanotify.Init(initFlags, eventFFlags) }); lerr != nil {
			t.machineSkip(lerr)
		}
	}
	create()
	// At fs.fanotify.max_user_groups: our own background closes, or another
	// suite's groups, may free some soon. Wait for ours, then retry a while.
	for wait := 10 * time.Millisecond; err != nil && wait < 2*time.Second; wait *= 2 {
		if _, ok := limits.As(err); !ok {
			break
		}
		fanotify.WaitClosing()
		time.Sleep(wait)
		create()
	}
	if err != nil {
		if _, ok := limits.As(err); !ok && (errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS)) {
			err = feature.Fanotify.Classify(err)
		}
		t.fatalOrSkip(err)
	}
	// Marks go at once; the fd's close (an SRCU grace period) finishes in
	// the background, so hundreds of small cases do not each wait for it.
	t.Cleanup(func() {
		if err := g.CloseAsync(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return g
}

// Inotify opens an inotify instance closed when the case ends. A refusal is
// judged as Fanotify's (max_user_instances for EMFILE).
func (t *T) Inotify(flags int) *inotify.Instance {
	t.Helper()
	var in *inotify.Instance
	var err error
	if lerr := fixture.Steady(func() { in, err = inotify.Init(flags) }); lerr != nil {
		t.machineSkip(lerr)
	}
	if err != nil {
		if _, ok := limits.As(err); !ok && (errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS)) {
			err = feature.Inotify.Classify(err)
		}
		t.fatalOrSkip(err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

// Judge hands the feature layer an error the case met in its own call to
// what f covers (an EOPNOTSUPP from a pre-content mark, an EINVAL from
// FAN_ENABLE_AUDIT): the case skips when f is absent here for a reason that
// is not a bug (an older release, an unset config option, a missing
// privilege), and fails otherwise. A nil err does nothing.
func (t *T) Judge(f *feature.Feature, err error) {
	t.Helper()
	if err != nil {
		t.fatalOrSkip(f.Classify(err))
	}
}

// fatalOrSkip stops the case: a skip for an answer the feature layer calls a
// skip or an environment fault (a reached limit), else a failure.
func (t *T) fatalOrSkip(err error) {
	if r, ok := envReason(err); ok {
		t.skip(r)
	}
	if feature.IsSkip(err) {
		t.Skipf("%v", err)
	}
	t.Fatalf("%v", err)
}

// machineSkip stops the case with a skip for a coordination lock another
// process held too long (fixture.LockWait) or a refused state directory:
// the machine left this case undecided, the kernel did nothing wrong.
func (t *T) machineSkip(err error) {
	t.Helper()
	t.SkipEnvironment("%v (a condition of this machine, not of the kernel)", err)
}

// SetSysctl sets a sysctl (dotted name) for the rest of the case, notes the
// change, and restores the old value when the case ends (or when the watchdog
// or a signal stops the case). The returned function restores it sooner (later
// calls do nothing). A sysctl that cannot be read or written is an error for
// the caller to judge (some cases can size down).
func (t *T) SetSysctl(name, value string) (restore func(), err error) {
	// Shared with every other fsnsuite process on the machine: the last
	// one to let go restores the original (fixture.ChangeSysctl).
	old, undo, err := fixture.ChangeSysctl(name, value)
	if fixture.IsLockBusy(err) {
		t.machineSkip(err)
	}
	if err != nil {
		return func() {}, err
	}
	t.Notef("sysctl %s changed from %s to %s for this case; restored afterwards", name, old, value)
	var once sync.Once
	key := new(int)
	restore = func() {
		once.Do(func() {
			pendingSysctls.Delete(key)
			if err := undo(); err != nil {
				t.Errorf("restore: %v", err)
			}
		})
	}
	pendingSysctls.Store(key, restore)
	t.Cleanup(restore)
	return restore, nil
}

// pendingSysctls holds the restore function of every sysctl a running case
// changed, for the watchdog and the signal handler.
var pendingSysctls sync.Map

// restoreSysctls restores every sysctl a running case changed.
func restoreSysctls() {
	pendingSysctls.Range(func(_, v any) bool {
		v.(func())()
		return true
	})
}

var subName = regexp.MustCompile(`^[a-z0-9_]+$`)

// Run runs f as a subtest named name and reports whether it passed (or was
// skipped). Subtests are printed as a nested TAP block.
func (t *T) Run(name string, f func(t *T)) bool {
	if !subName.MatchString(name) {
		t.Errorf("bad subtest name %q (want [a-z0-9_]+)", name)
		return false
	}
	// Every subtest of a case is declared (Case.Subtests): a case that
	// skips or ends before its t.Run calls still reports these leaves.
	if t.parent == nil && !slices.Contains(t.declared, name) {
		t.Errorf("subtest %q is not in the case's Subtests %q: declare it, so that a skip keeps its leaf", name, t.declared)
		return false
	}
	c := &T{name: name, fsType: t.fsType, deadline: t.deadline, parent: t}
	t.mu.Lock()
	t.subs = append(t.subs, c)
	t.mu.Unlock()
	if t.onSub != nil {
		t.onSub(c, false)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.runBody(f)
	}()
	<-done
	if t.onSub != nil {
		t.onSub(c, true)
	}
	if c.Failed() || (c.Skipped() && Opts.Strict) {
		t.Fail()
		return false
	}
	return true
}

func (t *T) isFinished() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.finished
}

// unrunSubtests returns a skipped T for each declared subtest that did not
// run, so the case reports the same leaves whether it ran or ended early: the
// case's own skip reason, or "not run" when it failed (or timed out) first.
// The caller holds t.mu.
func (t *T) unrunSubtests() []*T {
	var out []*T
	for _, name := range t.declared {
		ran := slices.ContainsFunc(t.subs, func(c *T) bool { return c.name == name })
		if ran {
			continue
		}
		reason := t.skipReason
		if !t.skipped {
			reason = fmt.Sprintf("not run: %s ended before it", t.name)
		}
		out = append(out, &T{name: name, parent: t, skipped: true, skipReason: reason})
	}
	return out
}

// runBody runs f then the cleanups, turning a panic into a failure.
func (t *T) runBody(f func(t *T)) {
	defer t.runCleanups()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	f(t)
}

func (t *T) runCleanups() {
	for {
		t.mu.Lock()
		n := len(t.cleanups)
		if n == 0 {
			t.finished = true
			t.mu.Unlock()
			return
		}
		fn := t.cleanups[n-1]
		t.cleanups = t.cleanups[:n-1]
		t.mu.Unlock()
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("panic in cleanup: %v", r)
				}
			}()
			fn()
		}()
	}
}
