package procfail

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A Go runtime that could not make a thread prints its reason first and
// every goroutine's stack after it: the reason is the cause, and EAGAIN
// (errno=11) gets the pids hint.
func TestDescribeGoThreadFailure(t *testing.T) {
	stderr := []byte("runtime: failed to create new OS thread (have 5 already; errno=11)\n" +
		"runtime: may need to increase max user processes (ulimit -u)\n" +
		"fatal error: newosproc\n\n" +
		"runtime stack:\nruntime.throw({0x5a1b2c?, 0x0?})\n\truntime/panic.go:1101 +0x48\n" +
		"goroutine 1 [running]:\nmain.main()\n")
	got := Describe(errors.New("exit status 2"), stderr)
	for _, want := range []string{
		"exit status 2; its stderr: ",
		`runtime: failed to create new OS thread (have 5 already; errno=11) | runtime: may need to increase max user processes (ulimit -u) | fatal error: newosproc"`,
		"; EAGAIN: a process or thread could not be created: pids limit? (",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Describe = %q\nwant it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "goroutine 1") {
		t.Errorf("Describe quotes the stacks: %q", got)
	}
}

// Without a Go crash the last two lines are the cause; an EAGAIN start
// error gets the hint, another errno does not.
func TestDescribeOther(t *testing.T) {
	got := Describe(errors.New("exit status 1"), []byte("one\ntwo\nthree\n\n"))
	if got != `exit status 1; its stderr: "two | three"` {
		t.Errorf("Describe = %q", got)
	}
	if got := Describe(&exec.Error{Name: "x", Err: unix.EAGAIN}, nil); !strings.Contains(got, "pids limit?") {
		t.Errorf("Describe(EAGAIN) = %q, want the pids hint", got)
	}
	if got := Describe(unix.ENOENT, nil); strings.Contains(got, "pids") {
		t.Errorf("Describe(ENOENT) = %q, want no pids hint", got)
	}
}
