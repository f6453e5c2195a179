package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// resultsDir is an open results directory. The runner runs as root on
// machines other users share, and a results directory may sit in /tmp: it
// is used only if it is the caller's (a real directory, owned by the
// runner's effective uid, not writable by group or others), and every file
// in it is made relative to the directory's fd without following a
// symlink: a file written whole goes to a new temp file (O_EXCL) renamed
// over its name, a file written as the run goes is unlinked and made anew
// (O_EXCL), logs/ is opened O_NOFOLLOW. A symlink found where a file of ours
// goes is replaced, never followed.
type resultsDir struct {
	path string
	dir  *os.File // the directory itself
	logs *os.File // its logs/
}

// openResultsDir creates path (and its parents) if it does not exist, or
// checks the directory that does, opens it and its logs/ (made if missing),
// and removes the logs of an earlier run (make check's results/latest is
// reused: it must not keep the logs of binaries this run does not run).
func openResultsDir(path string) (*resultsDir, error) {
	if err := checkResultsPath(path); err != nil {
		return nil, err
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening results directory: %w", err)
	}
	d := &resultsDir{path: path, dir: os.NewFile(uintptr(fd), path)}
	if err := callersDir(fd, path); err != nil {
		d.close()
		return nil, err
	}
	if d.logs, err = d.subdir("logs"); err != nil {
		d.close()
		return nil, err
	}
	if err := d.clearLogs(); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// CheckResultsDir creates the results directory path if it does not exist
// and refuses one that exists and is not the caller's, as a run does, for a
// caller that writes it by other means (the VM mode). The error says why, in
// one line.
func CheckResultsDir(path string) error {
	d, err := openResultsDir(path)
	if err != nil {
		return err
	}
	d.close()
	return nil
}

// checkResultsPath makes path if it does not exist (its parents too), and
// refuses a symlink in its place: the runner does not follow a link it did
// not make to a directory it would then fill (a user's /tmp/results ->
// /etc would have root write there). A real directory is checked once open.
func checkResultsPath(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("creating results directory: %w", err)
		}
		if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating results directory: %w", err)
		}
		st, err = os.Lstat(path)
	}
	if err != nil {
		return err // "lstat PATH: not a directory", ...
	}
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		to, _ := os.Readlink(path)
		return fmt.Errorf("refused: it is a symbolic link (to %s), and the runner writes only into a directory it can check (give the directory itself)", to)
	case !st.IsDir():
		return fmt.Errorf("refused: it is not a directory (%s)", fileType(st.Mode()))
	}
	return nil
}

// callersDir checks the directory open at fd: owned by the runner's
// effective uid and not writable by group or others. Another user's
// directory, or one others may write, could hold anything by the time root
// writes into it.
func callersDir(fd int, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	me := os.Geteuid()
	if int(st.Uid) != me {
		return fmt.Errorf("refused: it is owned by %s, not by the user running fsnsuite (%s): a results directory must be the caller's (remove it, or give -results a new path)",
			userName(st.Uid), userName(uint32(me)))
	}
	if st.Mode&0o022 != 0 {
		return fmt.Errorf("refused: it is writable by group or others (mode %04o): a results directory must be the caller's alone (chmod go-w, or give -results a new path)", st.Mode&0o7777)
	}
	return nil
}

func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return fmt.Sprintf("uid %s (%s)", id, u.Username)
	}
	return "uid " + id
}

func fileType(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeNamedPipe != 0:
		return "a fifo"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

// subdir opens the directory name in d, never through a symlink: a symlink
// or a file in its place is removed (the entry, not what it points to) and
// a directory made; an existing directory must be the caller's, as d is.
func (d *resultsDir) subdir(name string) (*os.File, error) {
	dfd := int(d.dir.Fd())
	open := func() (int, error) {
		return unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	fd, err := open()
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		if err := unix.Unlinkat(dfd, name, 0); err != nil {
			return nil, fmt.Errorf("replacing %s: %w", filepath.Join(d.path, name), err)
		}
		err = unix.ENOENT
	}
	if errors.Is(err, unix.ENOENT) {
		if err := unix.Mkdirat(dfd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("creating %s: %w", filepath.Join(d.path, name), err)
		}
		fd, err = open()
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", filepath.Join(d.path, name), err)
	}
	if err := callersDir(fd, filepath.Join(d.path, name)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", filepath.Join(d.path, name), err)
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}

// clearLogs unlinks the *.stdout and *.stderr entries of logs/ (a symlink
// among them goes as a link: nothing it points to is touched).
func (d *resultsDir) clearLogs() error {
	dup, err := unix.Dup(int(d.logs.Fd()))
	if err != nil {
		return fmt.Errorf("clearing old logs: %w", err)
	}
	ld := os.NewFile(uintptr(dup), d.logs.Name())
	defer ld.Close()
	names, err := ld.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("clearing old logs: %w", err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".stdout") || strings.HasSuffix(n, ".stderr") {
			if err := unix.Unlinkat(int(d.logs.Fd()), n, 0); err != nil && !errors.Is(err, unix.ENOENT) {
				return fmt.Errorf("clearing old logs: %s: %w", filepath.Join(d.logs.Name(), n), err)
			}
		}
	}
	return nil
}

// create makes the file name anew in dir (an open directory of d) for
// writing as the run goes: whatever was there (an earlier run's file, a
// symlink) is unlinked first, and the file is made with O_EXCL|O_NOFOLLOW.
func create(dir *os.File, name string) (*os.File, error) {
	dfd := int(dir.Fd())
	path := filepath.Join(dir.Name(), name)
	if err := unix.Unlinkat(dfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return nil, fmt.Errorf("replacing %s: %w", path, err)
	}
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// replace writes the file name of dir whole, or not at all: write fills a
// new temp file (O_EXCL|O_NOFOLLOW) that is synced and renamed over name.
// On any error the temp file is removed and name keeps what it had; a
// symlink at name is replaced by the file, its target untouched.
func replace(dir *os.File, name string, write func(io.Writer) error) error {
	dfd := int(dir.Fd())
	path := filepath.Join(dir.Name(), name)
	var (
		tmp string
		fd  int
		err error
	)
	for i := 0; ; i++ {
		tmp = fmt.Sprintf(".%s.tmp-%d-%d", name, os.Getpid(), i)
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if !errors.Is(err, unix.EEXIST) || i == 100 {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, name)
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func (d *resultsDir) close() {
	if d.logs != nil {
		d.logs.Close()
	}
	if d.dir != nil {
		d.dir.Close()
	}
}
