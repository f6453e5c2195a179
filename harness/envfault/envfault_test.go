package envfault

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// A setup call's machine errno becomes a fault naming the resource, the call
// and the errno; any other errno passes through unchanged.
func TestSetup(t *testing.T) {
	for _, tc := range []struct {
		err   error
		call  string
		fault bool
		want  string
	}{
		{&os.PathError{Op: "mkdir", Path: "/w/d", Err: unix.ENOSPC}, "", true, "no space left on the filesystem (mkdir /w/d: ENOSPC)"},
		{&os.PathError{Op: "open", Path: "/w/f", Err: unix.EROFS}, "", true, "read-only filesystem (open /w/f: EROFS)"},
		{fmt.Errorf("mount x: %w", unix.EDQUOT), "", true, "disk quota exhausted (mount x: EDQUOT)"},
		{fmt.Errorf("pipe: %w", unix.EMFILE), "pipe2", true, "per-process open file limit (RLIMIT_NOFILE) reached (pipe2: EMFILE)"},
		{unix.ENFILE, "open", true, "system-wide open file limit (fs.file-max) reached (open: ENFILE)"},
		{unix.ENOMEM, "mmap", true, "out of memory (mmap: ENOMEM)"},
		{&os.PathError{Op: "mkdir", Path: "/w/d", Err: unix.EEXIST}, "", false, "mkdir /w/d: file exists"},
		{unix.EINVAL, "x", false, "invalid argument"},
		{errors.New("no errno"), "x", false, "no errno"},
	} {
		err := Setup(tc.call, tc.err)
		e, ok := As(err)
		if ok != tc.fault || err.Error() != tc.want {
			t.Errorf("Setup(%q, %v) = %v (fault %v), want %q (fault %v)", tc.call, tc.err, err, ok, tc.want, tc.fault)
		}
		if ok && !errors.Is(err, tc.err) {
			t.Errorf("%v: the cause is not kept", err)
		}
		if ok && Setup("again", e) != error(e) {
			t.Errorf("%v: wrapped twice", err)
		}
	}
	if Setup("x", nil) != nil {
		t.Error("Setup(nil) is not nil")
	}
}

func TestIsReason(t *testing.T) {
	r := Marker + New("no free loop device", "LOOP_CTL_GET_FREE", unix.ENOSPC).Error()
	if r != "environment: no free loop device (LOOP_CTL_GET_FREE: ENOSPC)" || !IsReason(r) {
		t.Errorf("reason %q", r)
	}
	if IsReason("FAN_MARK_EVICTABLE not supported (EINVAL; needs >= 5.19)") {
		t.Error("a feature's skip read as an environment fault")
	}
}
