package fdinfo

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWithoutHandle(t *testing.T) {
	for _, c := range []struct {
		line, want string
		had        bool
	}{
		{"fanotify ino:c sdev:800001 mflags:0 mask:20 ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:0c00000001020304",
			"fanotify ino:c sdev:800001 mflags:0 mask:20 ignored_mask:0", true},
		{"inotify wd:1 ino:c sdev:800001 mask:2 ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:0c00000001020304",
			"inotify wd:1 ino:c sdev:800001 mask:2 ignored_mask:0", true},
		// What the kernel prints without a handle: the same line, unchanged.
		{"fanotify ino:c sdev:800001 mflags:0 mask:20 ignored_mask:0", "fanotify ino:c sdev:800001 mflags:0 mask:20 ignored_mask:0", false},
		{"fanotify mnt_id:1c mflags:0 mask:10 ignored_mask:0", "fanotify mnt_id:1c mflags:0 mask:10 ignored_mask:0", false},
	} {
		got, had := WithoutHandle(c.line)
		if got != c.want || had != c.had {
			t.Errorf("WithoutHandle(%q) = %q, %v; want %q, %v", c.line, got, had, c.want, c.had)
		}
	}
}

func TestReadUntil(t *testing.T) {
	var slept []time.Duration
	sleep = func(d time.Duration) { slept = append(slept, d) }
	defer func() { sleep = time.Sleep }()
	// The handle appears on the 3rd read (an s_umount holder let go).
	reads := 0
	got, n, err := ReadUntil(func() (string, error) {
		reads++
		if reads < 3 {
			return "ignored_mask:0", nil
		}
		return "ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:00", nil
	}, func(s string) bool { _, had := WithoutHandle(s); return !had })
	if err != nil || n != 3 || !strings.Contains(got, "f_handle:") || len(slept) != 2 || slept[0] != Gap {
		t.Errorf("handle on the 3rd read: %q after %d reads (err %v), slept %v; want the handle after 3 reads, 2 gaps of %v", got, n, err, slept, Gap)
	}
	// Never: Reads reads, Reads-1 gaps, the last result returned.
	slept = nil
	reads = 0
	got, n, err = ReadUntil(func() (string, error) { reads++; return "ignored_mask:0", nil }, func(string) bool { return true })
	if err != nil || n != Reads || reads != Reads || len(slept) != Reads-1 || got != "ignored_mask:0" {
		t.Errorf("never a handle: %d reads (%d calls), %d gaps, %q; want %d reads, %d gaps", n, reads, len(slept), got, Reads, Reads-1)
	}
	// A read error ends it at once.
	slept = nil
	boom := errors.New("boom")
	_, n, err = ReadUntil(func() (string, error) { return "", boom }, func(string) bool { return true })
	if !errors.Is(err, boom) || n != 1 || len(slept) != 0 {
		t.Errorf("read error: n %d err %v slept %v; want 1 read, the error, no gap", n, err, slept)
	}
	if s := MissingNote(Reads); !strings.Contains(s, "absent on all 20 reads") || !strings.Contains(s, "super_trylock_shared") {
		t.Errorf("MissingNote(%d) = %q: want the count and the trylock named", Reads, s)
	}
}
