package perf

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/inotify"
)

func TestInotifyListenerCounts(t *testing.T) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify_init1: %v", err)
	}
	defer unix.Close(fd)
	dir := t.TempDir()
	wd, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	var l *InotifyListener
	stop, err := InotifyHelper(fd, &l)(cpus[0])
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	for i := 0; i < n; i++ {
		f, err := os.Create(filepath.Join(dir, "f"+string(rune('a'+i%26))+string(rune('a'+i/26))))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if _, err := unix.InotifyRmWatch(fd, uint32(wd)); err != nil {
		t.Fatal(err)
	}
	// Every event was queued before its syscall returned: Stop's last drain reads them.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if l.Count(unix.IN_CREATE) != n || l.Count(unix.IN_IGNORED) != 1 || l.Others(unix.IN_CREATE, unix.IN_IGNORED) != 0 {
		t.Errorf("listener read %s, want IN_CREATE %d, IN_IGNORED 1", l, n)
	}
}

func TestInotifyListenerHook(t *testing.T) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify_init1: %v", err)
	}
	defer unix.Close(fd)
	dir := t.TempDir()
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	l, err := StartInotifyListenerFunc(fd, cpus[0], func(_ int32, _ inotify.Mask, name []byte) {
		seen = append(seen, strings.TrimRight(string(name), "\x00"))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if err := l.Stop(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []string{"a", "b"}) || l.Count(unix.IN_CREATE) != 2 {
		t.Errorf("hook saw %q, counts %s; want a, b and IN_CREATE 2", seen, l)
	}
}
