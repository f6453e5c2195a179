// Package envfault names a setup failure that is the machine's, not the
// kernel's: no free loop device, a per-user limit (harness/limits), a full
// or read-only workspace, a descriptor or memory shortage, a lock another
// program holds. Such a fault says nothing about the fsnotify code under
// test, so it never fails a case: the case is skipped with a reason that
// begins with Marker and names the resource and the errno (kselftest), its
// binary exits 2 with -exit ltp (LTP's TBROK: the test could not run) when
// no case failed, and the KCIDB export reports it SKIP, never FAIL. -strict
// counts it as a failure, as it counts every skip.
//
// The TAP line stays a plain skip every TAP consumer reads:
//
//	ok 3 mount_mark_scope.ext4 # SKIP environment: no free loop device (LOOP_CTL_GET_FREE: ENOSPC)
//
// and the runner tells it from other skips by the Marker (IsReason).
//
// What is not an environment fault: a feature or filesystem the kernel or
// the machine is not configured for (no mkfs, an unknown filesystem type,
// EPERM in a container) is a plain skip (LTP's TCONF); an errno that is the
// behaviour under test is the kernel's answer, judged by the case.
package envfault

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Marker begins the skip reason of a case an environment fault stopped
// (after the TAP "# SKIP "). It is part of the output contract: the runner
// (harness/runner) and anything reading the stream key on it.
const Marker = "environment: "

// StrictSkip begins the diagnostic a binary run with -strict prints for a
// skip it counts as a failure, followed by the skip's reason: for an
// environment fault "strict: skip counted as failure: environment: ...",
// which the runner's KCIDB export reports ERROR (the case did not run), not
// FAIL.
const StrictSkip = "strict: skip counted as failure: "

// IsStrictDiag reports whether a diagnostic says -strict counted an
// environment fault's skip as a failure.
func IsStrictDiag(diag string) bool {
	r, ok := strings.CutPrefix(diag, StrictSkip)
	return ok && IsReason(r)
}

// IsReason reports whether a skip reason is an environment fault's.
func IsReason(reason string) bool { return strings.HasPrefix(reason, Marker) }

// Error is a call refused for want of a resource of the machine.
type Error struct {
	// Resource says what was missing, in words: "no free loop device".
	Resource string
	// Call is what was refused: "LOOP_CTL_GET_FREE", "mkdir /tmp/x".
	Call string
	// Err is the call's error (wrapping its errno).
	Err error
}

// Error reads "RESOURCE (CALL: ERRNO)", e.g. "no free loop device
// (LOOP_CTL_GET_FREE: ENOSPC)"; an error without an errno is quoted whole.
func (e *Error) Error() string {
	var n unix.Errno
	if errors.As(e.Err, &n) && n != 0 {
		return fmt.Sprintf("%s (%s: %s)", e.Resource, e.Call, unix.ErrnoName(n))
	}
	return fmt.Sprintf("%s (%s: %v)", e.Resource, e.Call, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// New is an environment fault: resource ran out when call failed with err.
func New(resource, call string, err error) *Error {
	return &Error{Resource: resource, Call: call, Err: err}
}

// As returns the environment fault behind err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// machine maps the errnos that, from a setup call (making a file or a
// directory, a mount, an image, a descriptor, a process), are the machine's
// to the resource they say ran out (errno(3), open(2), mkdir(2), mount(2)).
var machine = map[unix.Errno]string{
	unix.ENOSPC: "no space left on the filesystem",
	unix.EDQUOT: "disk quota exhausted",
	unix.EROFS:  "read-only filesystem",
	unix.EMFILE: "per-process open file limit (RLIMIT_NOFILE) reached",
	unix.ENFILE: "system-wide open file limit (fs.file-max) reached",
	unix.ENOMEM: "out of memory",
}

// Setup judges err, the error of a setup call (one made before the
// behaviour under test: a file, a directory, a mount, an image): when its
// errno says a resource of the machine ran out (ENOSPC, EDQUOT, EROFS,
// EMFILE, ENFILE, ENOMEM) it returns an *Error naming the resource, else err
// unchanged (nil stays nil). call names the call; "" takes it from err (an
// *os.PathError's operation and path, or err's text less the errno's). Never
// use it on the call a case tests: there the errno is the kernel's answer.
func Setup(call string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := As(err); ok {
		return err
	}
	var n unix.Errno
	if !errors.As(err, &n) {
		return err
	}
	r, ok := machine[n]
	if !ok {
		return err
	}
	if call == "" {
		call = callOf(err, n)
	}
	return New(r, call, err)
}

// callOf names the call err came from.
func callOf(err error, n unix.Errno) string {
	var pe *os.PathError
	var le *os.LinkError
	var se *os.SyscallError
	switch {
	case errors.As(err, &pe):
		return pe.Op + " " + pe.Path
	case errors.As(err, &le):
		return le.Op + " " + le.Old + " " + le.New
	case errors.As(err, &se):
		return se.Syscall
	}
	return strings.TrimSuffix(err.Error(), ": "+n.Error())
}
