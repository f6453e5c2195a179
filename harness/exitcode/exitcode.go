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
// crash): LTP's TBROK; kselftest has no such code, so a failure.
func (c Convention) Broken() int {
	if c == LTP {
		return LTPBroken
	}
	return Fail
}
