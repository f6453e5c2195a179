package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestInterruptNotRun: binaries an interrupt kept from starting are "not
// run (interrupted)", counted apart, not failures; the first failure named
// is a real one, the interrupted binary's last.
func TestInterruptNotRun(t *testing.T) {
	dir := t.TempDir()
	bins := []Binary{fake(t, dir, "bad", failBody), fake(t, dir, "hanger", hangBody), fake(t, dir, "never_a", passBody), fake(t, dir, "never_b", passBody)}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(800*time.Millisecond, cancel)
	rep, err := Run(ctx, bins, Options{KillGrace: 200 * time.Millisecond, ResultsDir: filepath.Join(dir, "res"),
		Lister: fakeList(ListedCase{Name: "hang_case"})})
	assert.NilError(t, err)
	assert.Assert(t, rep.Interrupted)
	var b bytes.Buffer
	rep.WriteSummaryTo(&b, SummaryTerm{Cols: 80, Rows: 22})
	text := b.String()
	assert.Check(t, is.Contains(text, "  not run 2 binaries (interrupted before they started): never_a, never_b\n"))
	assert.Check(t, is.Regexp(`\nfsnsuite: 4 binaries: 0 passed, 2 failed, 0 skipped, 2 not run \(interrupted\) in \S+: INTERRUPTED, the run did not finish\n$`, text))
	assert.Check(t, !strings.Contains(text, "FAIL    never_a"), "a binary that never started reads as a failure:\n%s", text)
	assert.Check(t, is.Contains(text, "  FAIL    hanger "))
	assert.Check(t, is.Contains(text, "s  interrupted\n"), "the interrupted binary says so:\n%s", text)
	assert.Check(t, is.Contains(text, "first failure: "+filepath.Join(dir, "bad")+" -run '^create$' -v\n"))
	i, j := strings.Index(text, "(bad/create)"), strings.Index(text, "(hanger/hang_case)")
	assert.Check(t, i > 0 && j > i, "the interrupt's failure before the real one:\n%s", text)
	// The stream and its files keep their shape: the binaries that did not
	// run are not ok there, as before.
	tapFile, err := os.ReadFile(filepath.Join(dir, "res", "results.tap"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(tapFile), "\nnot ok 3 never_a\n"))
}

// TestInterruptStopsTheBinaryFirst: on an interrupt the binary alone gets
// SIGTERM first, so that our harness reports its case stopped before the
// case's actors die (signalled at once, an actor's death could be reported
// first: "actor process is gone"); its children get nothing until it ended.
func TestInterruptStopsTheBinaryFirst(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	body := fmt.Sprintf(`trap 'echo binary >> %[1]s; sleep 0.3; exit 143' TERM
sh -c 'trap "echo child >> %[1]s; exit 143" TERM; while :; do sleep 0.05; done' >/dev/null 2>&1 &
echo 'TAP version 13'
echo 1..1
while :; do sleep 0.05; done
`, log)
	b := fake(t, dir, "parent", body)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	rep, err := Run(ctx, []Binary{b}, Options{KillGrace: 4 * time.Second, Lister: fakeList()})
	assert.NilError(t, err)
	assert.Assert(t, rep.Outcomes[0].Interrupted)
	got, err := os.ReadFile(log)
	assert.NilError(t, err)
	assert.Equal(t, string(got), "binary\n", "who got SIGTERM")
}
