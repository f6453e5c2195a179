package harness_test

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// A case that declares its subtests reports the same leaves whether it ran
// them or skipped first (issue 15: CI history keys on leaf names), and
// -list -subtests prints them for the runner.
func TestDeclaredSubtestsKeepLeaves(t *testing.T) {
	requireRoot(t)
	r := runBin(t, nil, "-run", "^subtests")
	want := `    # Subtest: subtests_skipped_early
    1..2
    ok 1 one # SKIP FAN_TEST not supported (EINVAL)
    ok 2 two # SKIP FAN_TEST not supported (EINVAL)
ok 1 subtests_skipped_early # SKIP FAN_TEST not supported (EINVAL)
`
	assert.Check(t, is.Contains(r.stdout, want))
	assert.Check(t, is.Contains(r.stdout, "    ok 1 one\n    ok 2 two # SKIP reason two\n"))

	l := runBin(t, nil, "-list", "-subtests", "-run", "^subtests")
	assert.Equal(t, l.stdout, "subtests_skipped_early\n    one\n    two\nsubtests\n    one\n    two\n")
	l = runBin(t, nil, "-list", "-run", "^subtests")
	assert.Equal(t, strings.Count(l.stdout, "\n"), 2, l.stdout)
}

// -exit ltp ends the output with the counts kirk reads.
func TestLTPSummary(t *testing.T) {
	requireRoot(t)
	r := runBin(t, nil, "-run", "^(pass|skip|fail|subtests)$", "-exit", "ltp")
	assert.Check(t, is.Contains(r.stdout, "\nSummary:\npassed   2\nfailed   1\nbroken   0\nskipped  1\nwarnings 0\n"), r.stdout)
}
