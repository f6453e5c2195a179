package main

import (
	"testing"

	"golang.org/x/sys/unix"
)

// inotify pads a name with NULs (inotify(7): len counts them).
func ev(i int) []byte { return append([]byte(name('w', i)), 0, 0, 0) }

func TestTracker(t *testing.T) {
	k := tracker{ring: 4096}
	k.event(1, unix.IN_IGNORED, nil)
	// A close released late by another task, from before watch 7 existed.
	k.event(7, unix.IN_CLOSE_NOWRITE, ev(4094))
	// Watch 7: opens of 4095, 0, 1; the close of 4095 comes after the open of 0.
	k.event(7, unix.IN_OPEN, ev(4095))
	k.event(7, unix.IN_OPEN, ev(0))
	k.event(7, unix.IN_CLOSE_NOWRITE, ev(4095))
	k.event(7, unix.IN_CLOSE_NOWRITE, ev(0))
	k.event(7, unix.IN_OPEN, ev(1))
	k.event(7, unix.IN_CLOSE_NOWRITE, ev(1))
	// A close of a name not opened under watch 7.
	k.event(7, unix.IN_CLOSE_NOWRITE, ev(5))
	if got := [5]int64{k.opens.Load(), k.closes.Load(), k.delayed.Load(), k.late.Load(), k.misorder.Load()}; got != [5]int64{3, 3, 1, 2, 0} {
		t.Errorf("opens, closes, delayed, late, misorder = %v, want [3 3 1 2 0]", got)
	}
	// Watch 8: an open skipped (a lost IN_OPEN) is out of order.
	k.event(8, unix.IN_OPEN, ev(10))
	k.event(8, unix.IN_OPEN, ev(12))
	k.event(8, unix.IN_OPEN, []byte("n0013\x00"))
	if got := k.misorder.Load(); got != 2 {
		t.Errorf("misorder = %d, want 2 (a skipped name, a foreign name)", got)
	}
}

func TestNameIndex(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{{"w0000", 0, true}, {"w4095\x00\x00", 4095, true}, {"w4096", 0, false}, {"w00001", 0, false}, {"n0001", 0, false}, {"w01", 0, false}} {
		if got, ok := nameIndex([]byte(c.in), 'w', 4096); ok != c.ok || (ok && got != c.want) {
			t.Errorf("nameIndex(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
