package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

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
