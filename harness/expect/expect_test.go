package expect_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/ownproc"
)

// recorder is a TB that keeps what a helper reported.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// A deliberately wrong expectation fails with the setup, both whole lists with
// symbolic masks, and a diff.
func TestFanotifyMismatchIsReadable(t *testing.T) {
	got := []fanotify.Event{
		{Mask: unix.FAN_OPEN, Pid: 4123, Fd: 7, Path: "/mnt/dir/file"},
		{Mask: unix.FAN_CLOSE_NOWRITE | unix.FAN_ONDIR | 0x80000000, Pid: 4123, Fd: 8, Path: "/mnt/dir"},
	}
	want := expect.None
	var r recorder
	ok := expect.Fanotify(&r, "open /dir/file (pid 4123); mount mark /; ignore /dir ON_CHILD", got, want)
	assert.Assert(t, !ok)
	assert.Equal(t, len(r.errs), 1)
	msg := r.errs[0]
	for _, want := range []string{
		"events differ\n",
		"  did:  open /dir/file (pid 4123); mount mark /; ignore /dir ON_CHILD\n",
		"  want: no event\n",
		"  got:  [0] FAN_OPEN /mnt/dir/file pid=4123\n",
		"        [1] FAN_CLOSE_NOWRITE|FAN_ONDIR|0x80000000 /mnt/dir pid=4123\n",
		"diff (-want +got)",
		`s"FAN_OPEN /mnt/dir/file pid=4123"`,
	} {
		assert.Assert(t, is.Contains(msg, want))
	}
}

// Equal lists pass, fds are not compared, and Ino is compared only when wanted.
func TestFanotifyEqualIgnoresFdNumbers(t *testing.T) {
	got := []fanotify.Event{{Mask: unix.FAN_OPEN, Pid: 1, Fd: 9, Path: "/f", Ino: 12, Dev: 3}}
	assert.Equal(t, expect.FanotifyEqual(got, []fanotify.Event{{Mask: unix.FAN_OPEN, Pid: 1, Path: "/f"}}), "")
	assert.Equal(t, expect.FanotifyEqual(got, []fanotify.Event{{Mask: unix.FAN_OPEN, Pid: 1, Path: "/f", Ino: 12, Dev: 3}}), "")
	assert.Assert(t, expect.FanotifyEqual(got, []fanotify.Event{{Mask: unix.FAN_OPEN, Pid: 1, Path: "/f", Ino: 13, Dev: 3}}) != "")
	assert.Assert(t, expect.FanotifyEqual(got, []fanotify.Event{{Mask: unix.FAN_OPEN, Pid: 2, Path: "/f"}}) != "")
}

// A PIDFD record compares any descriptor as 0, never as a negative value:
// FAN_NOPIDFD (-1) and a descriptor whose process is gone (fdinfo Pid -1)
// differ.
func TestFanotifyEqualPidfd(t *testing.T) {
	pidfd := func(v, pid int32) []fanotify.Event {
		return []fanotify.Event{{Mask: unix.FAN_OPEN, Pid: 1, Info: []fanotify.Info{{Type: unix.FAN_EVENT_INFO_TYPE_PIDFD, Pidfd: v, PidfdPid: pid}}}}
	}
	got := pidfd(7, -1) // descriptor 7 of a reaped process
	assert.Equal(t, expect.FanotifyEqual(got, pidfd(0, -1)), "")
	assert.Equal(t, got[0].Info[0].Pidfd, int32(7), "the received record is not changed")
	assert.Assert(t, expect.FanotifyEqual(got, pidfd(unix.FAN_NOPIDFD, 0)) != "")
	assert.Assert(t, expect.FanotifyEqual(pidfd(unix.FAN_NOPIDFD, 0), pidfd(0, -1)) != "")
	assert.Assert(t, expect.FanotifyEqual(pidfd(-int32(unix.ESRCH), 0), pidfd(unix.FAN_NOPIDFD, 0)) != "")
}

// Order matters: the same events in another order differ.
func TestOrderMatters(t *testing.T) {
	a := fanotify.Event{Mask: unix.FAN_OPEN, Pid: 1}
	b := fanotify.Event{Mask: unix.FAN_CLOSE_WRITE, Pid: 1}
	assert.Assert(t, expect.FanotifyEqual([]fanotify.Event{a, b}, []fanotify.Event{b, a}) != "")
}

// Cookies are compared by pairing, not by value.
func TestInotifyCookiesByPairing(t *testing.T) {
	got := []inotify.Event{
		{Wd: 1, Mask: unix.IN_MOVED_FROM, Cookie: 991, Name: "a"},
		{Wd: 1, Mask: unix.IN_MOVED_TO, Cookie: 991, Name: "b"},
		{Wd: 1, Mask: unix.IN_MOVED_FROM, Cookie: 17, Name: "c"},
	}
	want := []inotify.Event{
		{Wd: 1, Mask: unix.IN_MOVED_FROM, Cookie: 1, Name: "a"},
		{Wd: 1, Mask: unix.IN_MOVED_TO, Cookie: 1, Name: "b"},
		{Wd: 1, Mask: unix.IN_MOVED_FROM, Cookie: 2, Name: "c"},
	}
	assert.Equal(t, expect.InotifyEqual(got, want), "")
	want[1].Cookie = 2
	report := expect.InotifyEqual(got, want)
	assert.Assert(t, is.Contains(report, `[1] wd=1 IN_MOVED_TO "b" cookie=1`), report)
	assert.Assert(t, strings.Contains(report, "want:"))
}

// Long lists (queue overflow cases) are reported around the first difference.
func TestLongListsShowTheFirstDifference(t *testing.T) {
	var got, want []inotify.Event
	for i := 0; i < 1000; i++ {
		e := inotify.Event{Wd: 1, Mask: unix.IN_MODIFY}
		got, want = append(got, e), append(want, e)
	}
	got = append(got, inotify.Event{Wd: -1, Mask: unix.IN_Q_OVERFLOW})
	want = append(want, inotify.Event{Wd: -1, Mask: unix.IN_Q_OVERFLOW})
	assert.Equal(t, expect.InotifyEqual(got, want), "")
	got[1000].Wd = 1
	r := expect.InotifyEqual(got, want)
	assert.Assert(t, is.Contains(r, "want 1001 events, got 1001; first difference at index 1000\n"), r)
	assert.Assert(t, is.Contains(r, "[1000] wd=1 IN_Q_OVERFLOW"), r)
	assert.Assert(t, strings.Count(r, "\n") < 20, "report too long:\n%s", r)
	r = expect.InotifyEqual(got[:999], want)
	assert.Assert(t, is.Contains(r, "want 1001 events, got 999; first difference at index 999\n"), r)
}

// The quiet check reports an event that arrives within its window, and passes
// on an idle queue.
func TestInotifyQuiet(t *testing.T) {
	in, err := inotify.Init(0)
	assert.NilError(t, err)
	defer in.Close()
	dir := t.TempDir()
	_, err = in.AddWatch(dir, unix.IN_CREATE)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(dir+"/late", nil, 0o644))
	var r recorder
	assert.Assert(t, !expect.InotifyQuiet(&r, "watch dir IN_CREATE", in, 10*time.Millisecond))
	assert.Equal(t, len(r.errs), 1)
	assert.Assert(t, is.Contains(r.errs[0], "then nothing more within 10ms"))
	assert.Assert(t, is.Contains(r.errs[0], `[0] wd=1 IN_CREATE "late"`))
	r = recorder{}
	assert.Assert(t, expect.InotifyQuiet(&r, "idle", in, 10*time.Millisecond))
	assert.Equal(t, len(r.errs), 0)
}

// fatalRecorder is a recorder that also takes Fatalf (and does not stop).
type fatalRecorder struct{ recorder }

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.errs = append(r.errs, "FATAL "+fmt.Sprintf(format, args...))
}

// Steps pass when each step queues exactly its events, and a wrong
// expectation fails naming the setup and the step.
func TestInotifySteps(t *testing.T) {
	in, err := inotify.Init(0)
	assert.NilError(t, err)
	defer in.Close()
	dir := t.TempDir()
	wd, err := in.AddWatch(dir, unix.IN_CREATE)
	assert.NilError(t, err)
	touch := func(name string) func() error {
		return func() error { return os.WriteFile(dir+"/"+name, nil, 0o644) }
	}
	var r fatalRecorder
	expect.InotifySteps(&r, in, "watch dir IN_CREATE", []expect.Step[inotify.Event]{
		{Did: "create a", Do: touch("a"), Want: []inotify.Event{{Wd: wd, Mask: unix.IN_CREATE, Name: "a"}}},
	})
	assert.Equal(t, len(r.errs), 0, r.errs)

	r = fatalRecorder{}
	expect.InotifySteps(&r, in, "watch dir IN_CREATE", []expect.Step[inotify.Event]{
		{Did: "create b", Do: touch("b"), Want: nil},
	})
	assert.Equal(t, len(r.errs), 1, r.errs)
	assert.Assert(t, is.Contains(r.errs[0], "did:  watch dir IN_CREATE; create b\n"))
	assert.Assert(t, is.Contains(r.errs[0], `got:  [0] wd=1 IN_CREATE "b"`))

	r = fatalRecorder{}
	expect.InotifySteps(&r, in, "setup", []expect.Step[inotify.Event]{
		{Did: "fail", Do: func() error { return errors.New("boom") }},
	})
	assert.Assert(t, is.Contains(r.errs[0], "FATAL setup: fail: boom"))
}

// An fd group's events carry an fd, a FID group's and an overflow FAN_NOFD.
func TestFanotifyFds(t *testing.T) {
	open := fanotify.Event{Mask: unix.FAN_OPEN, Fd: 5}
	nofd := fanotify.Event{Mask: unix.FAN_OPEN, Fd: unix.FAN_NOFD}
	overflow := fanotify.Event{Mask: unix.FAN_Q_OVERFLOW, Fd: unix.FAN_NOFD}
	var r recorder
	assert.Assert(t, expect.FanotifyFds(&r, "fd group", []fanotify.Event{open, overflow}, false))
	assert.Assert(t, expect.FanotifyFds(&r, "fid group", []fanotify.Event{nofd, overflow}, true))
	assert.Equal(t, len(r.errs), 0)
	assert.Assert(t, !expect.FanotifyFds(&r, "fid group", []fanotify.Event{open}, true))
	assert.Assert(t, !expect.FanotifyFds(&r, "fd group", []fanotify.Event{nofd}, false))
	assert.Equal(t, len(r.errs), 2)
	assert.Assert(t, is.Contains(r.errs[0], "fd 5, want FAN_NOFD"))
	assert.Assert(t, is.Contains(r.errs[1], "want an open file descriptor"))
}

func TestErrno(t *testing.T) {
	var r recorder
	assert.Assert(t, expect.Errno(&r, "call", fmt.Errorf("wrapped: %w", unix.EEXIST), unix.EEXIST))
	assert.Assert(t, expect.Errno(&r, "call", nil, 0))
	assert.Equal(t, len(r.errs), 0)
	assert.Assert(t, !expect.Errno(&r, "call", nil, unix.EINVAL))
	assert.Assert(t, !expect.Errno(&r, "call", unix.EPERM, unix.EINVAL))
	assert.Assert(t, !expect.Errno(&r, "call", unix.EPERM, 0))
	assert.DeepEqual(t, r.errs, []string{
		"call: succeeded, want EINVAL",
		"call: operation not permitted, want EINVAL",
		"call: operation not permitted, want success",
	})
	assert.Equal(t, expect.ErrnoText(0), "success")
	assert.Equal(t, expect.ErrnoText(unix.EXDEV), "EXDEV")
}

// QuietAll listens on all its queues in one window and reports each queue
// that got something, by name.
func TestQuietAllOneWindow(t *testing.T) {
	var ins []*inotify.Instance
	dir := t.TempDir()
	for i := 0; i < 3; i++ {
		in, err := inotify.Init(0)
		assert.NilError(t, err)
		defer in.Close()
		_, err = in.AddWatch(dir, unix.IN_CREATE)
		assert.NilError(t, err)
		ins = append(ins, in)
	}
	var r recorder
	// One queue after the other cannot take less than three windows (each
	// Collect polls until its deadline, internal/fdpoll), 150ms; one window
	// for all takes 50ms plus scheduling delay, which a loaded machine can
	// stretch past 100ms. So a slow try says nothing: the check passes on
	// the first try under 140ms (3 windows less rounding), and a serial
	// QuietAll fails every try.
	var tries []time.Duration
	for len(tries) < 5 {
		start := time.Now()
		ok := expect.QuietAll(&r, "idle", 50*time.Millisecond,
			expect.OnInotify("a", ins[0]), expect.OnInotify("b", ins[1]), expect.OnInotify("c", ins[2]))
		tries = append(tries, time.Since(start))
		assert.Assert(t, ok)
		if tries[len(tries)-1] < 140*time.Millisecond {
			break
		}
	}
	assert.Assert(t, tries[len(tries)-1] < 140*time.Millisecond, "three queues took %v in each try, want one 50ms window", tries)
	assert.NilError(t, os.WriteFile(dir+"/x", nil, 0o644))
	assert.Assert(t, !expect.QuietAll(&r, "created x", 10*time.Millisecond, expect.OnInotify("a", ins[0]), expect.OnInotify("b", ins[1])))
	assert.Equal(t, len(r.errs), 2)
	assert.Assert(t, is.Contains(r.errs[0], "did:  created x; a; then nothing more within 10ms"))
	assert.Assert(t, is.Contains(r.errs[1], "did:  created x; b; then nothing more within 10ms"))
}

// interferer is a recorder that can also leave a comparison undecided.
type interferer struct {
	recorder
	undecided []string
}

func (r *interferer) Interfered(report, procs string) { r.undecided = append(r.undecided, procs) }

// An event of another program (pid 1 is no descendant of the test) that is
// the whole difference leaves the comparison undecided, naming the process;
// a difference that remains without it stays a failure, still naming it; a
// TB that cannot record undecided comparisons fails as before.
func TestForeignPidEventsAreUndecided(t *testing.T) {
	own := fanotify.Event{Mask: unix.FAN_OPEN, Pid: int32(os.Getpid()), Path: "/mnt/file"}
	foreign := fanotify.Event{Mask: unix.FAN_OPEN | unix.FAN_ONDIR, Pid: 1, Path: "/mnt"}
	comm, err := os.ReadFile("/proc/1/comm")
	assert.NilError(t, err)
	name := "pid 1 comm " + strings.TrimSpace(string(comm))

	var r interferer
	assert.Assert(t, expect.Fanotify(&r, "open /file", []fanotify.Event{foreign, own}, []fanotify.Event{own}))
	assert.DeepEqual(t, r.undecided, []string{name})
	assert.Equal(t, len(r.errs), 0)

	r = interferer{}
	missing := fanotify.Event{Mask: unix.FAN_CLOSE_NOWRITE, Pid: own.Pid, Path: "/mnt/file"}
	assert.Assert(t, !expect.Fanotify(&r, "open /file", []fanotify.Event{foreign, own}, []fanotify.Event{own, missing}))
	assert.Equal(t, len(r.undecided), 0)
	assert.Equal(t, len(r.errs), 1)
	assert.Assert(t, is.Contains(r.errs[0], "events from another process: "+name))

	var plain recorder
	assert.Assert(t, !expect.Fanotify(&plain, "open /file", []fanotify.Event{foreign, own}, []fanotify.Event{own}))
	assert.Equal(t, len(plain.errs), 1)

	// pid 0 (outside the listener's pid namespace) cannot be told: a failure.
	r = interferer{}
	zero := foreign
	zero.Pid = 0
	assert.Assert(t, !expect.Fanotify(&r, "open /file", []fanotify.Event{zero, own}, []fanotify.Event{own}))
	assert.Equal(t, len(r.undecided), 0)
}

// watcher is an interferer that also says which other programs used the
// filesystem (FSWatcher), as harness.T does with a filesystem mark.
type watcher struct {
	interferer
	others []ownproc.Process
	asked  int
}

func (w *watcher) OthersOnFS() ([]ownproc.Process, error) { w.asked++; return w.others, nil }

// An inotify difference (inotify events carry no pid) is undecided when
// another program is seen using the filesystem just after, and a failure
// when none is, or when t cannot watch; an equal comparison does not watch.
func TestInotifyDifferenceWithOthersOnFSIsUndecided(t *testing.T) {
	want := []inotify.Event{{Wd: 1, Mask: unix.IN_OPEN, Name: "f"}}
	extra := append([]inotify.Event{{Wd: 1, Mask: unix.IN_OPEN | unix.IN_ISDIR}}, want...)
	walker := ownproc.Process{Pid: 4123, Comm: "walker"}

	w := &watcher{others: []ownproc.Process{walker}}
	assert.Assert(t, expect.Inotify(w, "open f", extra, want))
	assert.DeepEqual(t, w.undecided, []string{"pid 4123 comm walker"})
	assert.Equal(t, len(w.errs), 0)

	w = &watcher{}
	assert.Assert(t, !expect.Inotify(w, "open f", extra, want))
	assert.Equal(t, len(w.undecided), 0)
	assert.Equal(t, len(w.errs), 1)

	w = &watcher{others: []ownproc.Process{walker}}
	assert.Assert(t, expect.Inotify(w, "open f", want, want))
	assert.Equal(t, w.asked, 0)

	var plain recorder
	assert.Assert(t, !expect.Inotify(&plain, "open f", extra, want))
	assert.Equal(t, len(plain.errs), 1)

	// A missing event, or an added one another program's reads cannot
	// cause (a create), stays a failure whoever else is there.
	for _, got := range [][]inotify.Event{
		{{Wd: 1, Mask: unix.IN_OPEN | unix.IN_ISDIR}},
		{{Wd: 1, Mask: unix.IN_CREATE, Name: "g"}, want[0]},
	} {
		w = &watcher{others: []ownproc.Process{walker}}
		assert.Assert(t, !expect.Inotify(w, "open f", got, want))
		assert.Equal(t, len(w.undecided), 0)
		assert.Equal(t, len(w.errs), 1)
	}
}
