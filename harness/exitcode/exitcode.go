// Package exitcode is the one table of exit statuses every fsnsuite program
// uses: the test binaries (harness) and the runner (harness/runner). Two
// conventions exist: kselftest's (tools/testing/selftests/kselftest.h:
// KSFT_PASS 0, KSFT_FAIL 1, KSFT_SKIP 4) and LTP's (include/tst_res_flags.h:
// TPASS 0, TFAIL 1, TBROK 2, TCONF 32), which kirk reads.
package exitcode

import "fmt"

// The statuses. Usage (a bad flag or argument) is 2 in both conventions: it
// is what Go's flag package and most Unix tools use, and LTP's TBROK.
const (
	Pass          = 0
	Fail          = 1
	LTPBroken     = 2
	Usage         = 2
	KselftestSkip = 4
	LTPSkip       = 32
)

// Convention selects the kselftest or the LTP statuses.
type Convention int

const (
	// Kselftest is the default: 0 pass, 1 fail, 4 everything skipped.
	Kselftest Convention = iota
	// LTP is kirk's: 0 pass, 1 fail, 2 broken, 32 everything skipped.
	LTP
)

// Parse reads a convention's name as given to -exit.
func Parse(s string) (Convention, error) {
	switch s {
	case "kselftest":
		return Kselftest, nil
	case "ltp":
		return LTP, nil
	}
	return Kselftest, fmt.Errorf("unknown exit convention %q (want kselftest or ltp)", s)
}

// String is the name Parse reads.
func (c Convention) String() string {
	if c == LTP {
		return "ltp"
	}
	return "kselftest"
}

// Skip is the status of a run in which everything was skipped.
func (c Convention) Skip() int {
	if c == LTP {
		return LTPSkip
	}
	return KselftestSkip
}

// Broken is the status of a run that could not test (a broken probe, a
// crash): LTP's TBROK; kselftest has no such code, so a failure. A case an
// environment fault skipped (harness/envfault: no free loop device, a
// per-user limit) makes a binary with no failed case exit LTP's TBROK too,
// but kselftest's skip (4, or 0 beside passes): the kernel was not judged.
func (c Convention) Broken() int {
	if c == LTP {
		return LTPBroken
	}
	return Fail
}

// OutputLost is a test binary's status when a write of its TAP stream to
// stdout failed (a full disk, /dev/full, EIO): whatever its cases did, the
// results did not reach the reader, which is never a pass. It is Broken:
// kselftest's runner has no "broken" status and reads anything but 0 and 4
// as a failure, so 1; LTP's TBROK (2), which kirk reports as broken, not
// as a kernel failure. (The runner's own unwritable stdout or results
// directory is an environment error, RunnerOutputLost.)
func OutputLost(c Convention) int { return c.Broken() }

// RunnerOutputLost is the runner's status when its merged stream on stdout
// or a file of its results directory could not be written whole: 2 in both
// conventions, as for its other environment errors (a bad flag or runtest
// file, a results directory that cannot be created).
const RunnerOutputLost = 2
