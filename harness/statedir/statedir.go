// Package statedir is fsnsuite's one machine-wide state directory, where
// concurrent fsnsuite processes coordinate (the sysctl changes of
// harness/fixture/shared.go and their locks). It runs as root on machines
// other users share, so it trusts nothing a user could have made:
//
//   - the directory is /run/fsnsuite (Path), made 0700 by root; it is opened
//     as a directory fd with O_NOFOLLOW and checked with fstat: a directory
//     owned by root with no group or other write, else it is refused with an
//     error naming its owner and mode (a root-owned one readable by others,
//     left by an older fsnsuite, is made 0700);
//   - /run is made root-owned 0755 when it does not exist (a minimal VM
//     initramfs), and must itself be a real directory that no one else can
//     write to unless it is sticky;
//   - every file in it is opened relative to that fd with O_NOFOLLOW (a
//     symlink fails with ELOOP) and checked to be a regular file; temporary
//     files are created with O_EXCL and renamed into place;
//   - a lock wait is bounded (Flock): when it runs out the error names the
//     lock file and the pids holding it, from /proc/locks.
//
// A world-writable directory (/tmp, /run/lock, /dev/shm, /var/tmp) is never
// used: a user who made the directory first would own the files root reads
// back, could hold their locks, and could plant symlinks that root follows.
package statedir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Path is the state directory.
const Path = "/run/fsnsuite"

// parent and name split Path for openat.
const (
	parentDir = "/run"
	dirName   = "fsnsuite"
)

// ErrUnsafe is wrapped by the error for a directory or file the package
// refuses (wrong owner, writable by others, a symlink, not a regular file).
var ErrUnsafe = errors.New("unsafe state directory")

// Dir is an open state directory.
type Dir struct {
	fd   int
	path string
	uid  int // the owner every file must have
}

// Open opens the state directory, making it (and /run) when missing, and
// checks it. It must run as root.
func Open() (*Dir, error) { return open("/", parentDir, dirName, 0) }

// OpenAt opens name below the directory parent as a state directory owned
// by uid, with the same checks as Open (for tests and tools that keep state
// elsewhere; parent itself is checked as Open checks /run).
func OpenAt(parent, name string, uid int) (*Dir, error) {
	return open("", parent, name, uid)
}

// open opens grand/parent (made 0755 when grand is not "" and it is
// missing), then parent/name (made 0700 when missing), checking both.
func open(grand, parent, name string, uid int) (*Dir, error) {
	if grand != "" {
		// Only /run is made: a missing parent elsewhere is the caller's error.
		if err := unix.Mkdir(parent, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("statedir: mkdir %s: %w", parent, err)
		}
	}
	pfd, err := unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("statedir: open %s: %w", parent, err)
	}
	defer unix.Close(pfd)
	if err := checkParent(pfd, parent, uid); err != nil {
		return nil, err
	}
	path := parent + "/" + name
	if err := unix.Mkdirat(pfd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("statedir: mkdir %s: %w", path, err)
	}
	fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return nil, fmt.Errorf("statedir: %s is not a directory (%w): refusing it; remove it (%w)", path, err, ErrUnsafe)
		}
		return nil, fmt.Errorf("statedir: open %s: %w", path, err)
	}
	if err := checkDir(fd, path, uid); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Dir{fd: fd, path: path, uid: uid}, nil
}

// describe is "owned by uid U with mode drwx..." for an error.
func describe(st *unix.Stat_t) string {
	return fmt.Sprintf("owned by uid %d with mode %v", st.Uid, fileMode(st.Mode))
}

func fileMode(m uint32) os.FileMode {
	fm := os.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		fm |= os.ModeDir
	case unix.S_IFLNK:
		fm |= os.ModeSymlink
	case unix.S_IFIFO:
		fm |= os.ModeNamedPipe
	case unix.S_IFSOCK:
		fm |= os.ModeSocket
	case unix.S_IFCHR:
		fm |= os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		fm |= os.ModeDevice
	}
	if m&unix.S_ISVTX != 0 {
		fm |= os.ModeSticky
	}
	return fm
}

// checkParent: /run must be a directory of root's (or uid's) that others
// cannot write to, unless it is sticky (then nobody can rename our
// directory away; the directory's own check refuses one a user made).
func checkParent(fd int, path string, uid int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("statedir: fstat %s: %w", path, err)
	}
	if int(st.Uid) != uid || (st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0) {
		return fmt.Errorf("statedir: %s is %s: refusing to keep state below it (it must be owned by uid %d and not writable by others unless sticky) (%w)", path, describe(&st), uid, ErrUnsafe)
	}
	return nil
}

// checkDir: the directory must be owned by uid with no group or other
// write. One that others may read or search (an older fsnsuite's 0755) is
// made 0700: a lock file they could open is a lock they could hold.
func checkDir(fd int, path string, uid int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("statedir: fstat %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != uid || st.Mode&0o022 != 0 {
		return fmt.Errorf("statedir: %s is %s: refusing it (it must be a directory owned by uid %d with no group or other write; remove it) (%w)", path, describe(&st), uid, ErrUnsafe)
	}
	if st.Mode&0o077 != 0 {
		if err := unix.Fchmod(fd, 0o700); err != nil {
			return fmt.Errorf("statedir: chmod 0700 %s: %w", path, err)
		}
	}
	return nil
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// Fd is the directory's fd, for the *at calls of a caller that keeps more
// than files in it (valid until Close).
func (d *Dir) Fd() int { return d.fd }

// Close closes the directory fd.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// File is the path of name in the directory (for messages).
func (d *Dir) File(name string) string { return d.path + "/" + name }

// openFile opens name relative to the directory, never following a
// symlink, never blocking on a FIFO, and checks it is a regular file owned
// by the directory's owner.
func (d *Dir) openFile(name string, flags int, perm uint32) (*os.File, error) {
	if name == "" || name == "." || name == ".." || containsSlash(name) {
		return nil, fmt.Errorf("statedir: bad file name %q", name)
	}
	fd, err := unix.Openat(d.fd, name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("statedir: %s is a symlink: refusing it (%w)", d.File(name), ErrUnsafe)
		}
		return nil, fmt.Errorf("statedir: open %s: %w", d.File(name), err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("statedir: fstat %s: %w", d.File(name), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != d.uid {
		unix.Close(fd)
		return nil, fmt.Errorf("statedir: %s is %s: refusing it (want a regular file owned by uid %d) (%w)", d.File(name), describe(&st), d.uid, ErrUnsafe)
	}
	// Back to blocking reads and writes (a regular file never blocks).
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("statedir: %s: %w", d.File(name), err)
	}
	return os.NewFile(uintptr(fd), d.File(name)), nil
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

// OpenLock opens (creating it 0600) the lock file name.
func (d *Dir) OpenLock(name string) (*os.File, error) {
	return d.openFile(name, unix.O_RDWR|unix.O_CREAT, 0o600)
}

// maxFile bounds what ReadFile reads: the state is a few hundred bytes.
const maxFile = 1 << 20

// ReadFile reads name; a missing file is an error wrapping os.ErrNotExist.
func (d *Dir) ReadFile(name string) ([]byte, error) {
	f, err := d.openFile(name, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("statedir: read %s: %w", d.File(name), err)
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("statedir: %s is larger than %d bytes (%w)", d.File(name), maxFile, ErrUnsafe)
	}
	return b, nil
}

// WriteFile replaces name with data: written to name.tmp.PID (created with
// O_EXCL, mode 0600; a stale one of a dead process with this pid is removed
// first) and renamed over name.
func (d *Dir) WriteFile(name string, data []byte) error {
	tmp := name + ".tmp." + strconv.Itoa(os.Getpid())
	f, err := d.openFile(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	if errors.Is(err, unix.EEXIST) {
		if err := unix.Unlinkat(d.fd, tmp, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("statedir: removing stale %s: %w", d.File(tmp), err)
		}
		f, err = d.openFile(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	}
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(d.fd, tmp, d.fd, name)
	}
	if werr != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return fmt.Errorf("statedir: writing %s: %w", d.File(name), werr)
	}
	return nil
}

// Exists reports whether name exists in the directory (not following a
// symlink).
func (d *Dir) Exists(name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// pollMax is the longest sleep between two tries of a busy lock.
const pollMax = 50 * time.Millisecond

// Flock takes flock(2) lock how (unix.LOCK_SH or LOCK_EX) on f, waiting at
// most wait. flock has no timeout of its own, so a busy lock is tried again
// with LOCK_NB, the pause doubling from 1 ms to 50 ms. When the wait runs
// out the error is a *BusyError naming the file and its holders.
func Flock(f *os.File, how int, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("statedir: flock %s: %w", f.Name(), err)
		}
		if !time.Now().Before(deadline) {
			return &BusyError{Path: f.Name(), Waited: wait, Holders: Holders(f)}
		}
		time.Sleep(min(pause, time.Until(deadline)+time.Millisecond))
		pause = min(2*pause, pollMax)
	}
}
