package inotify

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseWatches(t *testing.T) {
	// The shape fs/notify/fdinfo.c inotify_fdinfo() prints (values made up).
	text := "pos:\t0\nflags:\t00\nmnt_id:\t15\nino:\t1057\n" +
		"inotify wd:3 ino:1a2b sdev:800001 mask:4000002 ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:2b1a000000000000\n" +
		"inotify wd:1 ino:2 sdev:2d mask:fff ignored_mask:0 fhandle-bytes:8 fhandle-type:1 f_handle:0200000000000000\n"
	got, err := ParseWatches(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []WatchState{
		{Wd: 3, Ino: 0x1a2b, Dev: unix.Mkdev(8, 1), Mask: Mask(unix.IN_MODIFY | unix.IN_EXCL_UNLINK), HandleType: 1, Handle: "2b1a000000000000"},
		{Wd: 1, Ino: 2, Dev: unix.Mkdev(0, 0x2d), Mask: 0xfff, HandleType: 1, Handle: "0200000000000000"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("[%d] got %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := ParseWatches("inotify wd:zz ino:1 sdev:1 mask:1\n"); err == nil {
		t.Error("a malformed wd parsed without error")
	}
}
