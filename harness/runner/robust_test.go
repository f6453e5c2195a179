package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/tap"
)

// A full results directory must not kill the tests (issue 14 item 1): the
// stream on stdout stays complete, the binary is not SIGPIPEd, and the
// write error is reported once.
func TestFullResultsDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	res := filepath.Join(dir, "full")
	assert.NilError(t, os.Mkdir(res, 0o755))
	assert.NilError(t, unix.Mount("tmpfs", res, "tmpfs", 0, "size=16k,mode=0755"))
	t.Cleanup(func() { _ = unix.Unmount(res, unix.MNT_DETACH) })
	const n = 3000 // about 40 KB of TAP: more than the disk takes
	b := fake(t, dir, "chatty", fmt.Sprintf("echo 'TAP version 13'\necho 1..%d\ni=1\nwhile [ $i -le %d ]; do echo \"ok $i case_number_$i\"; i=$((i+1)); done\n", n, n))
	var out, log bytes.Buffer
	rep, err := Run(context.Background(), []Binary{b}, Options{ResultsDir: res, Out: &out, Log: &log})
	assert.NilError(t, err)
	o := rep.Outcomes[0]
	assert.Equal(t, o.Signal, "", "the binary was killed: notes %q", o.Notes)
	assert.Equal(t, o.Node.Status, tap.StatusPass, "notes %q", o.Notes)
	back := tap.ParseString(out.String())
	assert.Equal(t, len(back.Children[0].Children), n)
	assert.Check(t, is.Len(back.Problems, 0))
	assert.Assert(t, rep.WriteErr != nil)
	assert.Check(t, is.Contains(rep.WriteErr.Error(), "no space left on device"))
	assert.Equal(t, strings.Count(log.String(), "fsnsuite:"), 1, "reported once: %q", log.String())
}

// "1..0" without a reason is not a pass, and a -run filter that matches no
// case of a binary is a skip that says so, not a failure (issue 14 items 3, 4).
func TestEmptyPlan(t *testing.T) {
	tests := []struct {
		name, body string
		args       []string
		reason     string
	}{
		{"exit_0", "echo 1..0\nexit 0\n", nil, "ran no test (plan 1..0 without a reason)"},
		{"filter_matches_nothing", "echo 'TAP version 13'\necho 1..0\nexit 4\n", []string{"-run", "queue_overflow"}, "no case matches -run queue_overflow"},
		{"filter_matches_nothing_ltp", "echo 1..0\nexit 32\n", []string{"-run=x"}, "no case matches -run x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := fake(t, t.TempDir(), tc.name, tc.body)
			rep, err := Run(context.Background(), []Binary{b}, Options{PassArgs: tc.args})
			assert.NilError(t, err)
			o := rep.Outcomes[0]
			assert.Equal(t, o.Node.Status, tap.StatusSkip, "notes %q", o.Notes)
			assert.Equal(t, o.Node.Reason, tc.reason)
		})
	}
}

// A binary that ignores SIGTERM, and a grandchild that left the process group
// holding the stdout pipe, are SIGKILLed on time (issue 14 item 7: "killed
// after 2 seconds" took 14 s).
func TestKillOnTime(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	tests := []struct{ name, body string }{
		{"ignores_sigterm", "trap '' TERM\necho 1..1\nsleep 60 &\nwait\nwait\n"},
		{"grandchild_own_group", fmt.Sprintf("trap '' TERM\necho 1..1\nsetsid sleep 60 &\necho $! > %s\nwhile :; do wait; done\n", pidFile)},
	}
	const timeout, grace = 500 * time.Millisecond, 500 * time.Millisecond
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := fake(t, dir, tc.name, tc.body)
			start := time.Now()
			rep, err := Run(context.Background(), []Binary{b}, Options{Timeout: timeout, KillGrace: grace})
			assert.NilError(t, err)
			took := time.Since(start)
			assert.Equal(t, rep.Outcomes[0].Node.Status, tap.StatusTimeout)
			assert.Assert(t, took < timeout+grace+time.Second, "took %v", took)
			if raw, err := os.ReadFile(pidFile); err == nil && tc.name == "grandchild_own_group" {
				pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
				assert.Assert(t, !alive(pid), "grandchild %d survived", pid)
			}
		})
	}
}
