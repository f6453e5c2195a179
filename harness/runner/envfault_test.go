package runner

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/tap"
)

// envSkip is a leaf an environment fault skipped (harness/envfault).
const envSkip = "ok 2 b # SKIP environment: ext4: no free loop device (LOOP_CTL_GET_FREE: ENOSPC)"

// A binary whose cases an environment fault skipped is judged by its leaves
// (a skip, or a pass beside one), also when -exit ltp made it exit 2 (TBROK),
// and counted broken by the LTP exit status only; with a failure, or a
// truncated stream, exit 2 stays broken. A case that failed before running
// its subtests (each skipped "not run") is a failed case.
func TestJudgeEnvironmentFaults(t *testing.T) {
	for _, tc := range []struct {
		name       string
		body       string
		status     tap.Status
		reason     string
		broken     bool
		noteMatch  string
		kself, ltp int // Report.ExitCode by convention
	}{
		{name: "env_beside_pass_kselftest", body: "echo 1..2\necho 'ok 1 a'\necho '" + envSkip + "'\nexit 0\n",
			status: tap.StatusPass, noteMatch: `1 case\(s\) skipped for an environment fault .*first: ext4: no free loop device`, kself: 0, ltp: 2},
		{name: "env_beside_pass_ltp", body: "echo 1..2\necho 'ok 1 a'\necho '" + envSkip + "'\nexit 2\n",
			status: tap.StatusPass, noteMatch: `skipped for an environment fault`, kself: 0, ltp: 2},
		{name: "env_only_ltp", body: "echo 1..1\necho '" + strings.Replace(envSkip, "ok 2", "ok 1", 1) + "'\nexit 2\n",
			status: tap.StatusSkip, reason: "environment: ext4: no free loop device (LOOP_CTL_GET_FREE: ENOSPC)", noteMatch: `skipped for an environment fault`, kself: 4, ltp: 2},
		{name: "env_only_kselftest", body: "echo 1..1\necho '" + strings.Replace(envSkip, "ok 2", "ok 1", 1) + "'\nexit 4\n",
			status: tap.StatusSkip, reason: "environment: ext4: no free loop device (LOOP_CTL_GET_FREE: ENOSPC)", noteMatch: `skipped for an environment fault`, kself: 4, ltp: 2},
		{name: "env_with_failure_exit_2", body: "echo 1..2\necho 'not ok 1 a'\necho '" + envSkip + "'\nexit 2\n",
			status: tap.StatusFail, broken: true, noteMatch: `exit status 2 \(broken\)`, kself: 1, ltp: 2},
		{name: "plain_skip_exit_2", body: "echo 1..2\necho 'ok 1 a'\necho 'ok 2 b # SKIP no ext4'\nexit 2\n",
			status: tap.StatusFail, broken: true, noteMatch: `exit status 2 \(broken\)`, kself: 1, ltp: 2},
		{name: "failed_before_subtests", body: "echo 1..1\necho '    # Subtest: c'\necho '    1..1'\necho '    ok 1 s # SKIP not run: c ended before it'\necho 'not ok 1 c'\nexit 1\n",
			status: tap.StatusFail, kself: 1, ltp: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := fake(t, t.TempDir(), tc.name, tc.body)
			rep, err := Run(context.Background(), []Binary{b}, Options{Timeout: 5 * time.Second, KillGrace: 200 * time.Millisecond})
			assert.NilError(t, err)
			o := rep.Outcomes[0]
			assert.Equal(t, o.Node.Status, tc.status, "notes: %q", o.Notes)
			assert.Equal(t, o.Node.Reason, tc.reason)
			assert.Equal(t, o.Broken, tc.broken, "notes: %q", o.Notes)
			for _, n := range o.Notes {
				assert.Check(t, !strings.Contains(n, "although no case failed"), "note %q", n)
			}
			if tc.noteMatch == "" {
				assert.Check(t, is.Len(o.Notes, 0))
			} else {
				re := regexp.MustCompile(tc.noteMatch)
				found := false
				for _, n := range o.Notes {
					found = found || re.MatchString(n)
				}
				assert.Check(t, found, "no note matches %q in %q", tc.noteMatch, o.Notes)
			}
			assert.Check(t, is.Equal(rep.ExitCode(false), tc.kself), "kselftest")
			assert.Check(t, is.Equal(rep.ExitCode(true), tc.ltp), "ltp")
		})
	}
}

// KCIDB never reports an environment fault FAIL: SKIP, or ERROR where
// -strict counted its skip as a failure; a strict failure of another skip
// stays FAIL.
func TestKCIDBStatusEnvironmentFault(t *testing.T) {
	for _, tc := range []struct {
		n    *tap.Node
		want string
	}{
		{&tap.Node{Status: tap.StatusSkip, Reason: "environment: ext4: no free loop device (LOOP_CTL_GET_FREE: ENOSPC)"}, "SKIP"},
		{&tap.Node{Status: tap.StatusFail, Diagnostics: []string{"strict: skip counted as failure: environment: ext4: no free loop device (LOOP_CTL_GET_FREE: ENOSPC)"}}, "ERROR"},
		{&tap.Node{Status: tap.StatusFail, Diagnostics: []string{"strict: skip counted as failure: FAN_TEST not supported (EINVAL)"}}, "FAIL"},
		{&tap.Node{Status: tap.StatusFail, Diagnostics: []string{"want 1, got 2"}}, "FAIL"},
	} {
		assert.Check(t, is.Equal(kcidbStatus(tc.n), tc.want), "%+v", tc.n)
	}
}
