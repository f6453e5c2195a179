// Package setup makes a case's files and mounts from the test process, before
// any mark or watch exists (so making them raises no event a case checks).
// Every helper fails the case on error, with "setup:" in the message.
package setup

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// Prefix begins the diagnostic of every failure of these helpers: the case
// could not be set up, so its code under test was never judged (KCIDB's
// ERROR, not FAIL; harness/runner reads it).
const Prefix = "setup: "

// TB is the part of harness.T the helpers need.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}

// Mknod makes a special file (mknod(2): mode with its S_IF* type, dev for a
// device). A device node the kernel refuses for lack of privilege (EPERM: no
// CAP_MKNOD in the initial user namespace, as in a user namespace) skips the
// case saying so; any other error fails it.
func Mknod(t TB, path string, mode uint32, dev int) {
	t.Helper()
	err := unix.Mknod(path, mode, dev)
	if err == nil {
		return
	}
	if typ := mode & unix.S_IFMT; typ == unix.S_IFCHR || typ == unix.S_IFBLK {
		if r, ok := feature.Refusal(err, "CAP_MKNOD in the initial user namespace"); ok {
			t.Skipf("setup: mknod %s (device %d:%d): %s", path, unix.Major(uint64(dev)), unix.Minor(uint64(dev)), r)
		}
	}
	t.Fatalf("setup: mknod %s: %v", path, err)
}

// WriteFile creates (or truncates) path with data, mode 0644.
func WriteFile(t TB, path, data string) {
	t.Helper()
	WriteFileMode(t, path, []byte(data), 0o644)
}

// WriteFileMode creates (or truncates) path with data and the given mode.
func WriteFileMode(t TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatalf(Prefix+"%v", err)
	}
}

// programDirs are where Program looks for a program, in order: /usr/bin
// first (a merged-/usr system links /bin to it), then /bin (the VM guests'
// busybox applets live there).
var programDirs = []string{"/usr/bin", "/bin"}

// Program returns the path of the host's program name (sleep, true, sh) for a
// case to execute or copy: the first of /usr/bin/name and /bin/name that is
// an executable regular file (after symlinks: a busybox applet counts). A
// machine without it skips the case naming both paths; the program is a tool
// of the case, not the kernel under test.
func Program(t TB, name string) string {
	t.Helper()
	p, tried := findProgram(name, programDirs)
	if p == "" {
		t.Skipf("no %s(1) to execute (%s)", name, strings.Join(tried, ", "))
	}
	return p
}

// findProgram returns the first dir/name of dirs that is an executable
// regular file ("" when none is), and the paths it tried.
func findProgram(name string, dirs []string) (string, []string) {
	var tried []string
	for _, d := range dirs {
		p := filepath.Join(d, name)
		tried = append(tried, p)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, tried
		}
	}
	return "", tried
}

// Mkdir makes each directory of paths, in order, mode 0755.
func Mkdir(t TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatalf(Prefix+"%v", err)
		}
	}
}

// Touch creates each file of paths empty (or truncates it), mode 0644.
func Touch(t TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		WriteFileMode(t, p, nil, 0o644)
	}
}

// Open opens path with flags|O_CLOEXEC and closes the descriptor at cleanup.
func Open(t TB, path string, flags int) int {
	t.Helper()
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf(Prefix+"open %s: %v", path, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// ClosedFd returns a descriptor number that was open a moment ago and is
// closed now, for EBADF expectations. It is a high number (dup3 of fd onto
// the highest free number at or below closedFdMax and under RLIMIT_NOFILE,
// then close), so that no open elsewhere in the process takes it before the
// case uses it: open(2) and dup(2) return "the lowest-numbered file
// descriptor not currently open", which stays below it unless closedFdMax
// descriptors are open at once. The slot stays in the fd table
// (expand_files grew it), so the kernel meets a closed descriptor, not an
// out-of-range number.
func ClosedFd(t TB, fd int) int {
	t.Helper()
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatalf(Prefix+"getrlimit(RLIMIT_NOFILE): %v", err)
	}
	high := closedFdMax
	if rl.Cur-1 < uint64(high) {
		high = int(rl.Cur - 1)
	}
	// The highest number not open now: dup3 would close an open one.
	for ; high > fd; high-- {
		if _, err := unix.FcntlInt(uintptr(high), unix.F_GETFD, 0); err == unix.EBADF {
			break
		}
	}
	if high <= fd {
		t.Fatalf(Prefix+"no free descriptor number above %d under %d", fd, closedFdMax)
	}
	if err := unix.Dup3(fd, high, unix.O_CLOEXEC); err != nil {
		t.Fatalf(Prefix+"dup3(%d, %d): %v", fd, high, err)
	}
	if err := unix.Close(high); err != nil {
		t.Fatalf(Prefix+"close: %v", err)
	}
	return high
}

// closedFdMax bounds ClosedFd's number (the fd table grows to hold it).
const closedFdMax = 4095

// Stat stats path; the lookup also leaves its dentry in the dcache.
func Stat(t TB, path string) unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatalf(Prefix+"stat %s: %v", path, err)
	}
	return st
}

// BindMount bind-mounts dir on a fresh directory of the workspace and returns
// it; the mount is detached at cleanup. It gives a second vfsmount of the same
// filesystem, which a mount mark on the original mount does not cover.
func BindMount(t TB, dir string) string {
	t.Helper()
	dst := t.TempDir()
	if err := unix.Mount(dir, dst, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf(Prefix+"bind mount %s on %s: %v", dir, dst, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dst, unix.MNT_DETACH); err != nil {
			t.Errorf("cleanup: unmount %s: %v", dst, err)
		}
	})
	return dst
}
