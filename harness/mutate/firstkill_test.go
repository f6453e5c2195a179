package mutate

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/tap"
)

// firstKillBase is an unmutated run: bin_a's cases pass, bin_a.c.flaky
// already fails, bin_b.s skips, bin_b.d is a duplicate path whose last
// leaf fails (the judge keeps the last).
const firstKillBase = `TAP version 13
1..2
    # Subtest: bin_a
    1..3
        # Subtest: grp
        1..2
        ok 1 x.tmpfs
        ok 2 y
    ok 1 grp
    ok 2 lone
        # Subtest: c
        1..1
        not ok 1 flaky
    not ok 3 c
ok 1 bin_a
    # Subtest: bin_b
    1..3
    ok 1 s # SKIP no feature
    ok 2 d
    not ok 3 d
not ok 2 bin_b
`

func TestKillWatch(t *testing.T) {
	base := &runner.Results{Root: tap.ParseString(firstKillBase)}
	for _, tc := range []struct {
		name, stream, want string
	}{
		{"nested leaf fails", "    # Subtest: bin_a\n    1..3\n        # Subtest: grp\n        1..2\n        ok 1 x.tmpfs\n        not ok 2 y\n", "bin_a.grp.y"},
		{"dotted name", "    # Subtest: bin_a\n    1..3\n        # Subtest: grp\n        1..2\n        not ok 1 x.tmpfs # TIMEOUT 120 seconds\n", "bin_a.grp.x.tmpfs"},
		{"a skipped leaf now fails", "    # Subtest: bin_b\n    not ok 1 s\n", "bin_b.s"},
		{"after a sibling block", "    # Subtest: bin_a\n    1..3\n        # Subtest: grp\n        1..2\n        ok 1 x.tmpfs\n        ok 2 y\n    ok 1 grp\n    not ok 2 lone\n", "bin_a.lone"},
		{"a block without a header ends at its parent's result line", "    # Subtest: bin_a\n    1..3\n        # Subtest: grp\n        1..2\n        ok 1 x.tmpfs\n        ok 2 y\n    ok 1 grp\n    ok 2 lone\n        1..1\n        not ok 1 y\n", ""},
		{"a KTAP stream", "KTAP version 1\n1..2\n    KTAP version 1\n    # Subtest: bin_b\n    1..1\n    not ok 1 s\n", "bin_b.s"},
		{"already failing on the baseline", "    # Subtest: bin_a\n        # Subtest: c\n        not ok 1 flaky\n", ""},
		{"a parent's not ok is no leaf", "    # Subtest: bin_a\n        # Subtest: c\n        ok 1 flaky\n    not ok 3 c\n", ""},
		{"TODO is not a failure", "    # Subtest: bin_a\n    not ok 2 lone # TODO later\n", ""},
		{"a leaf skipped now", "    # Subtest: bin_a\n    not ok 2 lone # SKIP gone\n", ""},
		{"a duplicate path whose last leaf failed", "    # Subtest: bin_b\n    1..3\n    ok 1 s\n    not ok 2 d\n", ""},
		{"unknown path", "    # Subtest: bin_z\n    not ok 1 lone\n", ""},
		{"a comment", "    # not ok 2 lone\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stops := 0
			w := newKillWatch(base, func() { stops++ })
			// In chunks that split lines, as a pipe delivers them.
			for s := tc.stream; s != ""; {
				n := min(7, len(s))
				_, err := w.Write([]byte(s[:n]))
				assert.NilError(t, err)
				s = s[n:]
			}
			got := w.killed()
			if tc.want == "" {
				assert.Assert(t, got == nil, "stopped at %+v", got)
				assert.Equal(t, stops, 0)
				return
			}
			assert.Assert(t, got != nil, "not stopped; want %s", tc.want)
			assert.Equal(t, got.Path, tc.want)
			assert.Equal(t, got.After, "fail")
			assert.Equal(t, stops, 1)
			// Later failures do not stop it again.
			w.Write([]byte(strings.Repeat("    not ok 2 lone\n", 2)))
			assert.Equal(t, stops, 1)
		})
	}
}

// fakeHangSuite is fakeSuite whose killing mutant ("if (!x)") prints its
// failing leaf on stdout and then hangs, as a hung guest would, until a
// signal ends it (it logs the signal).
const fakeHangSuite = `#!/bin/sh
while [ $# -gt 0 ]; do
	case $1 in
	-kernel) kernel=$2; shift ;;
	-results) dir=$2; shift ;;
	esac
	shift
done
mkdir -p "$dir"
echo '{"suite":"fsnsuite","start":"2026-01-01T00:00:00Z"}' > "$dir/run.json"
if grep -q 'if (!x)' "$kernel"; then
	trap 'echo TERM >> "$FAKE_LOG"; exit 143' TERM
	printf 'TAP version 13\n1..1\n    # Subtest: b\n    1..1\n    not ok 1 a # TIMEOUT 120 seconds\n'
	i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
	echo "not stopped" >> "$FAKE_LOG"
	exit 1
fi
echo '{"version":"TAP version 13","status":"pass","plan":1,"children":[{"name":"b","number":1,"status":"pass","plan":1,"children":[{"name":"a","number":1,"status":"pass","plan":-1}]}]}' > "$dir/results.json"
`

// TestRunFirstKill: with FirstKill, a mutant whose run prints a killing
// leaf and hangs is stopped there (SIGTERM, not the 30 s it would hang),
// killed by that leaf alone; the others are judged as before.
func TestRunFirstKill(t *testing.T) {
	w := newFakeWorld(t, fakeHangSuite, body("\tif (x)", "\t\treturn -EINVAL;", "\treturn 0;"))
	t.Setenv("FAKE_NOWAIT", "1")
	ms := Generate(w.rel, w.orig, nil)
	cfg := w.config()
	cfg.FirstKill = true
	start := time.Now()
	_, rs, err := Run(context.Background(), cfg, ms, nil)
	assert.NilError(t, err)
	assert.Assert(t, time.Since(start) < 20*time.Second, "the hung run was not stopped: %s", time.Since(start))
	killed := 0
	for _, r := range rs {
		if !strings.Contains(r.New, "if (!x)") {
			assert.Equal(t, r.Outcome, Survived, "%s %s", r.Where(), r.New)
			continue
		}
		killed++
		assert.Equal(t, r.Outcome, Killed, "%s: %s", r.ID, r.Reason)
		assert.DeepEqual(t, r.KilledBy, []Leaf{{Path: "b.a", Before: "pass", After: "fail", Why: FirstKillWhy + ": TIMEOUT 120 seconds"}})
	}
	assert.Equal(t, killed, 1)
	log, err := os.ReadFile(w.log)
	assert.NilError(t, err)
	assert.Equal(t, string(log), "TERM\n", "the runner was not stopped by SIGTERM")
}
