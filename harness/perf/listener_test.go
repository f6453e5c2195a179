package perf

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
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
