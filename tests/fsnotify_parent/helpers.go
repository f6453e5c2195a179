package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// pair builds the .inotify and .fanotify variants of one case.
func pair(name, inDoc string, inRun func(*harness.T), fanDoc string, fanRun func(*harness.T)) []harness.Case {
	return []harness.Case{
		{Name: name + ".inotify", Doc: inDoc, Run: inRun},
		{Name: name + ".fanotify", Doc: fanDoc, Needs: []*feature.Feature{feature.ReportDFIDName}, Run: fanRun},
	}
}

// env is one case's world: the watched directory w and the unwatched
// directory u under the case directory, an actor that performs every
// operation meant to produce events, and the history of what was done (printed
// with a mismatch).
type env struct {
	t    *harness.T
	a    *actor.Actor
	root string
	w, u string
	hist []string
	// notFixed: some step got other than what the fixed kernel gives;
	// notPreFix: other than what a kernel without the case's fix gives
	// (checkPre; a step checked with check expects the same of both).
	notFixed, notPreFix bool
}

// step records one step's comparisons (see env.notFixed).
func (e *env) step(fixedOK, preFixOK bool) {
	e.notFixed = e.notFixed || !fixedOK
	e.notPreFix = e.notPreFix || !preFixOK
}

// confirmPreFix tells the harness that the kernel may lack fix when every
// step got what a kernel without it gives (checkPre) and some step differs
// from what the fixed kernel gives. Call it at the end of the case.
func (e *env) confirmPreFix(fix *harness.Fix) {
	if e.notFixed && !e.notPreFix {
		e.t.KernelLacks(fix)
	}
}

func newEnv(t *harness.T) *env {
	e := &env{t: t, root: t.Dir(), w: t.Path("w"), u: t.Path("u")}
	for _, d := range []string{e.w, e.u} {
		setup.Mkdir(t, d)
	}
	e.a = t.Actor()
	return e
}

// rel names a path relative to the case directory, for reports.
func (e *env) rel(p string) string {
	if r, err := filepath.Rel(e.root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

func (e *env) did(format string, args ...any) { e.hist = append(e.hist, fmt.Sprintf(format, args...)) }

// history is what was done, the last histLen steps of it.
func (e *env) history() string {
	h := e.hist
	if len(h) > histLen {
		h = append([]string{fmt.Sprintf("(%d earlier steps)", len(h)-histLen)}, h[len(h)-histLen:]...)
	}
	return strings.Join(h, "; ")
}

const histLen = 16

// file makes dir/name with content in setup (by the test process, before any
// mark) and stats it so that its dentry is in the dcache.
func (e *env) file(dir, name, content string) string {
	p := filepath.Join(dir, name)
	setup.WriteFile(e.t, p, content)
	e.cache(p)
	return p
}

// cache stats p so that its dentry is cached (setup only).
func (e *env) cache(p string) { setup.Stat(e.t, p) }

// negative looks p up in setup expecting ENOENT, which leaves a negative
// dentry in the dcache: the children walk skips those (no inode), so a file
// later created on it depends on d_instantiate -> fsnotify_update_flags.
func (e *env) negative(p string) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != unix.ENOENT {
		e.t.Fatalf("setup: stat %s: got %v, want ENOENT", p, err)
	}
}

// Actor operations: each one records itself in the history and fails the case
// on an unexpected error.

func (e *env) open(p string, flags int) int {
	fd, err := e.a.Open(p, flags, 0o644)
	if err != nil {
		e.t.Fatalf("actor open %s (%#x): %v [after: %s]", e.rel(p), flags, err, e.history())
	}
	e.did("actor open %s %s = fd %d", e.rel(p), openFlags(flags), fd)
	return fd
}

func (e *env) write(fd int) {
	if n, err := e.a.Write(fd, []byte("x")); err != nil || n != 1 {
		e.t.Fatalf("actor write fd %d: n=%d err=%v [after: %s]", fd, n, err, e.history())
	}
	e.did("actor write 1 byte to fd %d", fd)
}

func (e *env) read(fd int) {
	data, err := e.a.Read(fd, 1)
	if err != nil || len(data) != 1 {
		e.t.Fatalf("actor read fd %d: %d bytes, err=%v [after: %s]", fd, len(data), err, e.history())
	}
	e.did("actor read 1 byte from fd %d", fd)
}

func (e *env) close(fd int) {
	if err := e.a.Close(fd); err != nil {
		e.t.Fatalf("actor close fd %d: %v [after: %s]", fd, err, e.history())
	}
	e.did("actor close fd %d", fd)
}

func (e *env) rename(from, to string) {
	if err := e.a.Rename(from, to); err != nil {
		e.t.Fatalf("actor rename %s %s: %v [after: %s]", e.rel(from), e.rel(to), err, e.history())
	}
	e.did("actor rename %s -> %s", e.rel(from), e.rel(to))
}

func (e *env) unlink(p string) {
	if err := e.a.Unlink(p); err != nil {
		e.t.Fatalf("actor unlink %s: %v [after: %s]", e.rel(p), err, e.history())
	}
	e.did("actor unlink %s", e.rel(p))
}

func (e *env) mkdir(p string) {
	if err := e.a.Mkdir(p, 0o755); err != nil {
		e.t.Fatalf("actor mkdir %s: %v [after: %s]", e.rel(p), err, e.history())
	}
	e.did("actor mkdir %s", e.rel(p))
}

func (e *env) chmod(p string, mode uint32) {
	if err := e.a.Chmod(p, mode); err != nil {
		e.t.Fatalf("actor chmod %s: %v [after: %s]", e.rel(p), err, e.history())
	}
	e.did("actor chmod %s %o", e.rel(p), mode)
}

// openFlags renders open(2) flags for the history.
func openFlags(f int) string {
	var parts []string
	switch f & unix.O_ACCMODE {
	case unix.O_RDONLY:
		parts = append(parts, "O_RDONLY")
	case unix.O_WRONLY:
		parts = append(parts, "O_WRONLY")
	case unix.O_RDWR:
		parts = append(parts, "O_RDWR")
	}
	if f&unix.O_CREAT != 0 {
		parts = append(parts, "O_CREAT")
	}
	if f&unix.O_DIRECTORY != 0 {
		parts = append(parts, "O_DIRECTORY")
	}
	return strings.Join(parts, "|")
}

// ---- inotify ----

// inL is an inotify instance whose events are checked step by step.
type inL struct {
	e  *env
	in *inotify.Instance
}

func (e *env) inotify() *inL { return &inL{e: e, in: e.t.Inotify(0)} }

func (l *inL) watch(p string, mask uint32) int32 {
	wd, err := l.in.AddWatch(p, mask)
	if err != nil {
		l.e.t.Fatalf("%v [after: %s]", err, l.e.history())
	}
	l.e.did("inotify_add_watch %s %s = wd %d", l.e.rel(p), inotify.Mask(mask), wd)
	return wd
}

func (l *inL) rm(wd int32) {
	if err := l.in.RmWatch(wd); err != nil {
		l.e.t.Fatalf("%v [after: %s]", err, l.e.history())
	}
	l.e.did("inotify_rm_watch wd %d", wd)
}

// check drains what the last operation queued and compares it, in order,
// with want.
func (l *inL) check(want ...inotify.Event) { l.checkPre(want, want...) }

// checkPre is check for a step where a kernel without the case's fix queues
// pre instead (env.confirmPreFix).
func (l *inL) checkPre(pre []inotify.Event, want ...inotify.Event) {
	got, err := l.in.Drain()
	if err != nil {
		l.e.t.Fatalf("inotify drain: %v [after: %s]", err, l.e.history())
	}
	l.e.step(expect.Inotify(l.e.t, l.e.history(), got, want), expect.InotifyEqual(got, pre) == "")
}

// quiet checks that nothing at all arrives in the final window.
func (l *inL) quiet() { l.e.quiet(l) }

func (l *inL) listener() expect.Listener { return expect.OnInotify("inotify", l.in) }

// listener is an inotify instance or a fanotify group of the case.
type listener interface{ listener() expect.Listener }

// discarder is a listener whose queued events can be read and dropped
// unjudged: those of an attempt that did not meet the case's precondition
// (disconnectedWrite).
type discarder interface {
	// discard drains the queue and returns how many events it dropped.
	discard() (int, error)
}

func (l *inL) discard() (int, error) {
	evs, err := l.in.Drain()
	return len(evs), err
}

func (l *fanL) discard() (int, error) {
	evs, err := l.g.Drain()
	return len(evs), err
}

// quiet is the case's final check: steps only drain (every event checked here
// is queued before the syscall that caused it returns), then nothing at all
// may arrive on any of ls within one expect.Quiet window (on any kernel).
func (e *env) quiet(ls ...listener) {
	var qs []expect.Listener
	for _, l := range ls {
		qs = append(qs, l.listener())
	}
	ok := expect.QuietAll(e.t, e.history(), expect.Quiet, qs...)
	e.step(ok, ok)
}

func iev(wd int32, mask uint32, name string) inotify.Event {
	return inotify.Event{Wd: wd, Mask: inotify.Mask(mask), Name: name}
}

// ievc is iev with a rename cookie written as its pairing number (see
// expect.NormalizeCookies).
func ievc(wd int32, mask uint32, name string, cookie uint32) inotify.Event {
	return inotify.Event{Wd: wd, Mask: inotify.Mask(mask), Name: name, Cookie: cookie}
}

// ---- fanotify ----

// fanFlags is the reporting mode of the fanotify groups here: FAN_REPORT_FID |
// FAN_REPORT_DFID_NAME, so that every child event carries the parent's
// handle and the child's name (the subject of this binary) plus the child's
// own FID (fanotify_init(2) FAN_REPORT_NAME, FAN_REPORT_DIR_FID).
const fanFlags = unix.FAN_CLASS_NOTIF | unix.FAN_REPORT_FID | unix.FAN_REPORT_DFID_NAME

// fanL is a fanotify group whose events are checked step by step.
type fanL struct {
	e    *env
	g    *fanotify.Group
	name string
}

func (e *env) fanotify(name string) *fanL {
	// Every group here reports FIDs: a filesystem that cannot report file
	// handles on this kernel (5.10's tmpfs has no f_fsid) skips the case,
	// by its own probe (feature.FIDOn).
	e.t.RequireFID()
	return &fanL{e: e, g: e.t.Fanotify(fanFlags, unix.O_RDONLY), name: name}
}

func (l *fanL) mark(flags uint, mask uint64, p string) {
	if err := l.g.Add(flags, mask, p); err != nil {
		// A filesystem that cannot report file handles here (5.10's
		// tmpfs has no f_fsid: ENODEV) skips, where its own probe agrees.
		l.e.t.JudgeFIDMark(fmt.Errorf("group %s: %w [after: %s]", l.name, err, l.e.history()))
	}
	l.e.did("group %s: mark add %s %s %s", l.name, markKind(flags), l.e.rel(p), fanotify.Mask(mask))
}

func (l *fanL) unmark(flags uint, mask uint64, p string) {
	if err := l.g.Remove(flags, mask, p); err != nil {
		l.e.t.Fatalf("group %s: %v [after: %s]", l.name, err, l.e.history())
	}
	l.e.did("group %s: mark remove %s %s %s", l.name, markKind(flags), l.e.rel(p), fanotify.Mask(mask))
}

func markKind(flags uint) string {
	switch {
	case flags&unix.FAN_MARK_FILESYSTEM == unix.FAN_MARK_FILESYSTEM:
		return "filesystem"
	case flags&unix.FAN_MARK_MOUNT != 0:
		return "mount"
	}
	return "inode"
}

func (l *fanL) check(want ...fanotify.Event) { l.checkPre(want, want...) }

// checkPre is check for a step where a kernel without the case's fix queues
// pre instead (env.confirmPreFix).
func (l *fanL) checkPre(pre []fanotify.Event, want ...fanotify.Event) {
	got, err := l.g.Drain()
	if err != nil {
		l.e.t.Fatalf("group %s drain: %v [after: %s]", l.name, err, l.e.history())
	}
	l.e.step(expect.Fanotify(l.e.t, l.e.history()+"; checked group "+l.name, got, want), expect.FanotifyEqual(got, pre) == "")
}

func (l *fanL) quiet() { l.e.quiet(l) }

func (l *fanL) listener() expect.Listener { return expect.OnFanotify("group "+l.name, l.g) }

// fev is an event the actor caused, with the given info records.
func (e *env) fev(mask uint64, info ...fanotify.Info) fanotify.Event {
	return fanotify.Event{Mask: fanotify.Mask(mask), Pid: int32(e.a.Pid()), Info: info}
}

// dname is the DFID_NAME record of entry name in directory dir.
func (e *env) dname(dir, name string) fanotify.Info { return expect.DFIDName(e.t, dir, name) }

// fid is the FID record of p (computed in setup or after the events, never
// between marking and the operations under test when it could change the
// dcache state the case is about).
func (e *env) fid(p string) fanotify.Info { return expect.FID(e.t, p) }

// child is the pair of records a FAN_REPORT_FID|FAN_REPORT_DFID_NAME group
// gets for an event on a non-directory with a parent: DFID_NAME(parent, name)
// then FID(object) (fanotify_init(2) FAN_REPORT_NAME; fanotify(7) "info
// records order": fs/notify/fanotify/fanotify_user.c copy_info_records).
func (e *env) child(dir, name string, fid fanotify.Info) []fanotify.Info {
	return []fanotify.Info{e.dname(dir, name), fid}
}

// fanEventPid is an event caused by process pid.
func fanEventPid(mask uint64, pid int, info ...fanotify.Info) fanotify.Event {
	return fanotify.Event{Mask: fanotify.Mask(mask), Pid: int32(pid), Info: info}
}
