package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// parent makes a directory owned by this process's uid with mode, to stand
// for /run.
func parent(t *testing.T, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func modeOf(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode()
}

// A missing state directory is made 0700; an existing one of ours that
// others could read or search (an older fsnsuite's 0755) is made 0700.
func TestOpenMakesPrivateDir(t *testing.T) {
	for _, pre := range []os.FileMode{0, 0o755, 0o700} {
		t.Run(fmt.Sprintf("existing_%o", pre), func(t *testing.T) {
			p := parent(t, 0o755)
			if pre != 0 {
				if err := os.Mkdir(filepath.Join(p, "fsnsuite"), pre); err != nil {
					t.Fatal(err)
				}
				os.Chmod(filepath.Join(p, "fsnsuite"), pre)
			}
			d, err := OpenAt(p, "fsnsuite", os.Geteuid())
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if m := modeOf(t, d.Path()); m != os.ModeDir|0o700 {
				t.Errorf("%s has mode %v, want drwx------", d.Path(), m)
			}
		})
	}
}

// Refused: a symlink in its place, a directory others may write to, one
// owned by another uid, a parent others may write to without the sticky
// bit. Each message names the path and its owner or what it is.
func TestOpenRefuses(t *testing.T) {
	uid := os.Geteuid()
	victim := t.TempDir()
	victimMode := modeOf(t, victim)
	cases := []struct {
		name  string
		setup func(p string) // p: the parent
		uid   int
		want  string
	}{
		{"symlink", func(p string) { os.Symlink(victim, filepath.Join(p, "fsnsuite")) }, uid, "is not a directory"},
		{"file", func(p string) { os.WriteFile(filepath.Join(p, "fsnsuite"), nil, 0o600) }, uid, "is not a directory"},
		{"group_writable", func(p string) {
			os.Mkdir(filepath.Join(p, "fsnsuite"), 0o770)
			os.Chmod(filepath.Join(p, "fsnsuite"), 0o770)
		}, uid, "owned by uid " + strconv.Itoa(uid) + " with mode drwxrwx---"},
		{"world_writable_sticky", func(p string) {
			os.Mkdir(filepath.Join(p, "fsnsuite"), 0o700)
			os.Chmod(filepath.Join(p, "fsnsuite"), 0o777|os.ModeSticky)
		}, uid, "with mode dtrwxrwxrwx"},
		{"parent_world_writable", func(p string) { os.Chmod(p, 0o777) }, uid, "refusing to keep state below it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := parent(t, 0o755)
			tc.setup(p)
			d, err := OpenAt(p, "fsnsuite", tc.uid)
			if err == nil {
				d.Close()
				t.Fatalf("OpenAt accepted it")
			}
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Errorf("error %q: want ErrUnsafe naming %s and saying %q", err, p, tc.want)
			}
			if m := modeOf(t, victim); m != victimMode {
				t.Errorf("the symlink's target was changed: mode %v, was %v", m, victimMode)
			}
		})
	}
	// A parent that others may write to but that is sticky (Debian's
	// /run/lock) is accepted: the directory's own check refuses what a
	// user made there.
	p := parent(t, 0o777|os.ModeSticky)
	d, err := OpenAt(p, "fsnsuite", uid)
	if err != nil {
		t.Fatalf("sticky parent: %v", err)
	}
	d.Close()
}

// A directory owned by another uid is refused, naming that uid (checkDir
// is what OpenAt applies after opening it; another owner needs no root here:
// the directory is checked against a uid that is not its owner).
func TestCheckDirOwner(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	other := os.Geteuid() + 1
	err = checkDir(fd, dir, other)
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), fmt.Sprintf("owned by uid %d", os.Geteuid())) {
		t.Errorf("checkDir against uid %d: %v, want a refusal naming the owner uid %d", other, err, os.Geteuid())
	}
	if err := checkDir(fd, dir, os.Geteuid()); err != nil {
		t.Errorf("checkDir of its owner: %v", err)
	}
}

func openDir(t *testing.T) *Dir {
	t.Helper()
	d, err := OpenAt(parent(t, 0o755), "fsnsuite", os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Files are never reached through a symlink (O_NOFOLLOW), never opened
// when not regular files (a FIFO would block a reader: O_NONBLOCK), and a
// planted temp-file symlink does not redirect a write.
func TestFilesNoFollow(t *testing.T) {
	d := openDir(t)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("victim"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"lower.lock", "sysctl.json", "sysctl.json.tmp." + strconv.Itoa(os.Getpid())} {
		if err := os.Symlink(victim, d.File(name)); err != nil {
			t.Fatal(err)
		}
	}
	if f, err := d.OpenLock("lower.lock"); err == nil || !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "symlink") {
		if f != nil {
			f.Close()
		}
		t.Errorf("OpenLock through a symlink: %v, want a refusal", err)
	}
	if _, err := d.ReadFile("sysctl.json"); err == nil || !errors.Is(err, ErrUnsafe) {
		t.Errorf("ReadFile through a symlink: %v, want a refusal", err)
	}
	// The planted temp name is removed, not followed; the state file
	// symlink is replaced by the rename.
	if err := d.WriteFile("sysctl.json", []byte("{}")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim" {
		t.Errorf("the symlinks' target now holds %q", b)
	}
	if b, err := d.ReadFile("sysctl.json"); err != nil || string(b) != "{}" {
		t.Errorf("ReadFile after WriteFile: %q, %v", b, err)
	}
	if m := modeOf(t, d.File("sysctl.json")); m != 0o600 {
		t.Errorf("sysctl.json has mode %v, want -rw-------", m)
	}
	if err := syscall.Mkfifo(d.File("fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := d.ReadFile("fifo"); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrUnsafe) {
			t.Errorf("ReadFile of a FIFO: %v, want a refusal", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFile of a FIFO blocked")
	}
	if _, err := d.ReadFile("missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v, want os.ErrNotExist", err)
	}
	for _, bad := range []string{"", ".", "..", "a/b", "../x"} {
		if _, err := d.OpenLock(bad); err == nil {
			t.Errorf("OpenLock(%q) accepted", bad)
		}
	}
}

// A lock held past the wait gives a BusyError naming the file and the
// holder's pid and comm, after about the wait (not at once, not forever).
func TestFlockBounded(t *testing.T) {
	d := openDir(t)
	holder, err := d.OpenLock("lower.lock")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := Flock(holder, unix.LOCK_EX, time.Second); err != nil {
		t.Fatal(err)
	}
	waiter, err := d.OpenLock("lower.lock")
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	const wait = 300 * time.Millisecond
	t0 := time.Now()
	err = Flock(waiter, unix.LOCK_SH, wait)
	took := time.Since(t0)
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("Flock of a held lock: %v, want a *BusyError", err)
	}
	if took < wait || took > wait+2*time.Second {
		t.Errorf("gave up after %v, want about %v", took, wait)
	}
	comm, _ := os.ReadFile("/proc/self/comm")
	want := fmt.Sprintf("lock %s held by pid %d comm %s", d.File("lower.lock"), os.Getpid(), strings.TrimSpace(string(comm)))
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want it to say %q", err, want)
	}
	// Released meanwhile: taken.
	go func() { time.Sleep(100 * time.Millisecond); unix.Flock(int(holder.Fd()), unix.LOCK_UN) }()
	if err := Flock(waiter, unix.LOCK_SH, 5*time.Second); err != nil {
		t.Errorf("Flock after the holder let go: %v", err)
	}
}

func TestLockPids(t *testing.T) {
	const locks = `1: FLOCK  ADVISORY  WRITE 4242 00:1a:77 0 EOF
1: -> FLOCK  ADVISORY  WRITE 5151 00:1a:77 0 EOF
2: FLOCK  ADVISORY  READ 4343 00:1a:77 0 EOF
3: FLOCK  ADVISORY  READ 4444 00:1a:78 0 EOF
4: POSIX  ADVISORY  WRITE 4545 103:02:77 0 EOF
5: OFDLCK ADVISORY  WRITE -1 00:1a:77 0 EOF
6: FLOCK  ADVISORY  READ 4242 00:1a:77 0 EOF
`
	cases := []struct {
		maj, min uint32
		ino      uint64
		want     []int
	}{
		{0, 0x1a, 77, []int{4242, 4343}},
		{0, 0x1a, 78, []int{4444}},
		{0x103, 2, 77, []int{4545}},
		{0, 0x1a, 79, nil},
	}
	for _, tc := range cases {
		got := LockPids(locks, tc.maj, tc.min, tc.ino)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("LockPids(%x:%x:%d) = %v, want %v", tc.maj, tc.min, tc.ino, got, tc.want)
		}
	}
}
