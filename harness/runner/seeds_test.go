package runner

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// TestSummarySeedsCovered: a binary whose cases say which seeds they
// covered (the explorer, stopped by its time cap on one filesystem) has
// them on its verdict line, per filesystem, in the summary and in
// summary.txt.
func TestSummarySeedsCovered(t *testing.T) {
	dir := t.TempDir()
	body := `echo "TAP version 13"
echo "1..2"
echo "# seeds covered: tmpfs 1..363 of 1..1000 (time cap 25s)"
echo "# rules reached 44/44"
echo "ok 1 scenarios.tmpfs"
echo "# seeds covered: ext4 1..1000 of 1..1000"
echo "ok 2 scenarios.ext4"
`
	rep, err := Run(context.Background(), []Binary{fake(t, dir, "fsnotify_explore", body), fake(t, dir, "good", passBody)}, Options{})
	assert.NilError(t, err)
	want := "  seeds tmpfs 1..363 of 1..1000 (time cap 25s), ext4 1..1000 of 1..1000\n"
	var b bytes.Buffer
	rep.WriteSummary(&b)
	assert.Assert(t, strings.Contains(b.String(), want), "summary:\n%s", b.String())
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, " good ") {
			assert.Assert(t, !strings.Contains(l, "seeds"), "a binary without the note: %s", l)
		}
	}
	b.Reset()
	rep.WriteSummaryFile(&b)
	assert.Assert(t, strings.Contains(b.String(), want), "summary.txt:\n%s", b.String())
}
