package expect_test

import (
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
