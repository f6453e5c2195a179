package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/tap"
)

// The runner's pass-through flags are for our binaries: a runtest line
// naming another program (sh -c '...') gets its own arguments only (issue 33
// item 9: under the VM runner, whose TCG flags give every binary
// -timeout 120s, `sh -timeout 120s -c ...` failed).
func TestRuntestForeignLineVerbatim(t *testing.T) {
	dir := t.TempDir()
	// The test binary itself is a Go program of this module: one of ours.
	self, err := os.Executable()
	assert.NilError(t, err)
	assert.NilError(t, os.Symlink(self, filepath.Join(dir, "ours")))
	rt := "ours ours -x\n" +
		`shline sh -c "echo 'TAP version 13'; echo 1..1; echo \"ok 1 args_\$#\""` + "\n"
	bins, err := ReadRuntest(strings.NewReader(rt), []string{dir})
	assert.NilError(t, err)
	assert.Equal(t, len(bins), 2)
	assert.Check(t, !bins[0].Verbatim, "a program of ours takes the runner's flags")
	assert.Check(t, bins[1].Verbatim, "sh is not ours")

	opt := Options{PassArgs: []string{"-timeout", "120s", "-strict"}, PerfArgs: []string{"-profile", "quick"}}
	assert.DeepEqual(t, opt.args(bins[0]), []string{"-timeout", "120s", "-strict", "-x"})
	assert.DeepEqual(t, opt.args(bins[1]), bins[1].Args)

	var out bytes.Buffer
	opt.Out = &out
	rep, err := Run(context.Background(), bins[1:], opt)
	assert.NilError(t, err)
	o := rep.Outcomes[0]
	assert.Equal(t, o.Node.Status, tap.StatusPass, "notes %q, stderr %q", o.Notes, o.Stderr)
	// sh ran its script with no positional parameter: nothing was put
	// before -c.
	assert.Check(t, is.Contains(out.String(), "ok 1 args_0\n"))
}

// A runtest line naming a binary known to be absent (a perf binary the VM
// runner left out of the guest) is a skip with the reason, in a merged
// stream that parses whole; the other lines run as before.
func TestRuntestSkippedCommand(t *testing.T) {
	dir := t.TempDir()
	fake(t, dir, "inotify_basic", passBody)
	bins, err := ReadRuntest(strings.NewReader("inotify_basic inotify_basic\nperf_tag perf_watch_add -exit ltp\nother /opt/x/perf_open_path\n"), []string{dir})
	assert.NilError(t, err)
	const why = "perf binaries are not in the guest"
	marked := SkipCommands(bins, []string{"perf_watch_add", "perf_open_path"}, why)
	assert.Equal(t, bins[1].Skip, "", "the input is not changed")
	assert.DeepEqual(t, []string{marked[0].Skip, marked[1].Skip, marked[2].Skip}, []string{"", why, why})

	var out bytes.Buffer
	rep, err := Run(context.Background(), marked, Options{Out: &out})
	assert.NilError(t, err)
	for _, o := range rep.Outcomes {
		want := tap.StatusSkip
		if o.Binary.Name == "inotify_basic" {
			want = tap.StatusPass
		}
		assert.Equal(t, o.Node.Status, want, "%s: notes %q", o.Binary.Name, o.Notes)
		if want == tap.StatusSkip {
			assert.Equal(t, o.Node.Reason, why)
			assert.Check(t, o.StartErr == nil && len(o.Notes) == 0, "%s was started: %v %q", o.Binary.Name, o.StartErr, o.Notes)
		}
	}
	st := tap.ParseString(out.String())
	assert.Check(t, is.Len(st.Problems, 0), "%s", out.String())
	// perf_* tags run last: other is second.
	assert.Check(t, is.Contains(out.String(), "ok 2 other # SKIP "+why+"\n"))
	assert.Check(t, is.Contains(out.String(), "ok 3 perf_tag # SKIP "+why+"\n"))
	assert.Equal(t, rep.ExitCode(false), 0)
}
