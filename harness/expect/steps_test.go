package expect_test

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
)

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
	start := time.Now()
	ok := expect.QuietAll(&r, "idle", 50*time.Millisecond,
		expect.OnInotify("a", ins[0]), expect.OnInotify("b", ins[1]), expect.OnInotify("c", ins[2]))
	took := time.Since(start)
	assert.Assert(t, ok)
	assert.Assert(t, took < 140*time.Millisecond, "three queues took %v, want one 50ms window", took)
	assert.NilError(t, os.WriteFile(dir+"/x", nil, 0o644))
	assert.Assert(t, !expect.QuietAll(&r, "created x", 10*time.Millisecond, expect.OnInotify("a", ins[0]), expect.OnInotify("b", ins[1])))
	assert.Equal(t, len(r.errs), 2)
	assert.Assert(t, is.Contains(r.errs[0], "did:  created x; a; then nothing more within 10ms"))
	assert.Assert(t, is.Contains(r.errs[1], "did:  created x; b; then nothing more within 10ms"))
}
