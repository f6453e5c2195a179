package patchcheck

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/statedir"
	"github.com/fsnsuite/fsnsuite/harness/vm"
)

// The base kernel's runs are cached: a patchcheck of another patch on the
// same base, with the same suite build and the same flags, reuses them
// instead of running the base again (177-244 s of correctness under TCG).
//
// The key covers everything a run's result depends on that this program
// can see: the step, the kernel image (sha256), the suite build (sha256 of
// every executable in the runner's directory), the runner's flags (a
// runtest file by its content, a -vm-file and the sharing profile's qemu
// plugin by their sha256), and the VM host (VMHost): the qemu binary (its
// version line and sha256), the accelerator (kvm, tcg, or tcg-icount for
// -vm-icount and -vm-sharing), and the host files the VM runner puts in the
// guest besides the suite (busybox, mke2fs, debugfs, mkfs.xfs, mkfs.btrfs
// and their libraries, by guest path and sha256). A -modules tree is in
// the key by its path only (patchcheck's kernels have no modules).
//
// The cache is BaseCacheDir below Config.Cache (the project's cache,
// scripts/coverage/cache-dir.sh). Config.Cache must be a real directory
// (checked with Lstat: not a symlink) of this user that no one else can
// write to, sticky or not; BaseCacheDir is opened as a statedir: made
// 0700, a directory of this user with no group or other access, every name
// in it opened relative to its fd with O_NOFOLLOW. It holds:
//
//	store.lock           flock'ed: shared while an entry is copied out,
//	                     exclusive while one is published (bounded waits;
//	                     a wait says who holds it)
//	KEY/entry.json       the entry: the key and all it covers, the run's
//	                     date, and the manifest of KEY/run (every file's
//	                     path, size and sha256)
//	KEY/run/             the run's results directory
//	.tmp-KEY-PID-RAND/   an entry being written: made with mkdirat (which
//	                     fails on a name that exists, so no two stores
//	                     share one), renamed to KEY once complete
//
// A reader uses an entry only when KEY is a directory of this user that no
// one else can write to, its entry.json covers exactly what is computed
// now, and the files copied out of KEY/run are exactly those of its
// manifest (no more, no fewer, same sizes and sha256): a torn, partial or
// edited entry is a miss (the base runs again), never a result. The path
// copied from is never taken from the entry. A store copies only a run
// directory, and files, of this user that no one else can write to.

// BaseCacheDir is the cache's directory name below Config.Cache.
const BaseCacheDir = "patchcheck-base-runs"

// Names in BaseCacheDir.
const (
	entryFile = "entry.json"
	entryRun  = "run"
	storeLock = "store.lock"
	tmpPrefix = ".tmp-"
)

// BaseCacheLockWait bounds a wait for the cache's lock (Config.CacheLockWait
// when 0). A store holds it exclusively only to rename an entry into place
// and remove the one it replaces; a reader holds it shared while it copies
// an entry out (seconds).
const BaseCacheLockWait = 5 * time.Minute

// maxEntry bounds what is read of an entry.json (a manifest of a few
// thousand files).
const maxEntry = 16 << 20

// staleTemp is how long a temporary entry of a writer that no longer exists
// is kept before a store removes it.
const staleTemp = time.Hour

// baseEntry is a cached base run.
type baseEntry struct {
	Key         string   `json:"key"`
	Step        string   `json:"step"`
	Release     string   `json:"release"`
	ImageSHA256 string   `json:"image_sha256"`
	SuiteSHA256 string   `json:"suite_sha256"`
	Flags       []string `json:"flags"`
	QEMUVersion string   `json:"qemu_version"`
	QEMUSHA256  string   `json:"qemu_sha256"`
	Accel       string   `json:"accel"`
	Userland    []string `json:"userland"`

	Date         time.Time `json:"date"`
	Seconds      float64   `json:"seconds"`
	OriginalPath string    `json:"original_path"`
	// Files is the manifest of the entry's run directory.
	Files []cachedFile `json:"files"`
}

// cachedFile is a file of a cached run: its path below the run directory,
// size and sha256.
type cachedFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// keyText is everything the key covers, one component a line.
func (e baseEntry) keyText() string {
	return strings.Join([]string{
		"step " + e.Step,
		"image sha256:" + e.ImageSHA256,
		"suite sha256:" + e.SuiteSHA256,
		"flags " + strings.Join(e.Flags, "\x00"),
		"qemu " + e.QEMUVersion + " sha256:" + e.QEMUSHA256,
		"accel " + e.Accel,
		"userland " + strings.Join(e.Userland, "\x00"),
	}, "\n")
}

// VMHost is what a VM run's result depends on besides the kernel image,
// the suite build and the runner's flags; the base runs' cache key covers
// it.
type VMHost struct {
	// QEMUVersion is the first line of `qemu -version`, QEMUSHA256 the
	// sha256 of the executable.
	QEMUVersion, QEMUSHA256 string
	// Accel is the accelerator the VM runner picks for a run without
	// -vm-icount: "kvm" or "tcg" ($FSNSUITE_VM_ACCEL, else KVM when
	// usable: vm.UsesKVM).
	Accel string
	// Userland is "GUESTPATH sha256:HEX" for each host file the VM runner
	// puts in the guest besides the suite (vm.Config.HostInputs), sorted.
	Userland []string
}

// HostOf is this machine's VMHost as the runner, started by patchcheck with
// the same environment (PATH, $FSNSUITE_VM_ACCEL), will see it. It runs
// `qemu -version` (no guest).
func HostOf(ctx context.Context) (VMHost, error) {
	var h VMHost
	qemu, files, err := vm.Config{}.HostInputs()
	if err != nil {
		return h, err
	}
	if h.QEMUSHA256, err = fileSum(qemu); err != nil {
		return h, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, qemu, "-version").Output()
	if err != nil {
		return h, fmt.Errorf("%s -version: %w", qemu, err)
	}
	h.QEMUVersion, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	if h.QEMUVersion == "" {
		return h, fmt.Errorf("%s -version printed nothing", qemu)
	}
	h.Accel = "tcg"
	if vm.UsesKVM() {
		h.Accel = "kvm"
	}
	for _, f := range files {
		s, err := fileSum(f.Host)
		if err != nil {
			return h, err
		}
		h.Userland = append(h.Userland, f.Guest+" sha256:"+s)
	}
	sort.Strings(h.Userland)
	return h, nil
}

// fileSum is the sha256 of a file's content, in hex.
func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// suiteSum is the hash of the suite build: every executable regular file
// of the runner's directory (bin/: the runner and the test binaries), by
// name and content.
func suiteSum(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	h := sha256.New()
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err != nil || fi.Mode()&0o111 == 0 {
			continue
		}
		s, err := fileSum(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", e.Name(), s)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// canonicalFlags is a base run's flags as they bear on its result: the
// runtest file of -f by its content, a -vm-file and the -vm-sharing plugin
// by their content's hash (and a -vm-file's guest path), in any of the
// flag package's spellings (-f X, --f=X); -kernel and -results (paths of
// this patchcheck) are not in args.
func canonicalFlags(args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, inline := "", "", false
		if len(a) > 1 && a[0] == '-' && a != "--" {
			name, val, inline = strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		}
		switch name {
		case "f", "vm-file", "vm-sharing":
		default:
			out = append(out, a)
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				out = append(out, a)
				continue
			}
			i++
			val = args[i]
		}
		switch name {
		case "f":
			b, err := os.ReadFile(val)
			if err != nil {
				return nil, err
			}
			out = append(out, "-f", "runtest:"+strings.TrimSpace(string(b)))
		case "vm-file":
			host, guest, _ := strings.Cut(val, "=")
			s, err := fileSum(host)
			if err != nil {
				return nil, err
			}
			out = append(out, "-vm-file", "sha256:"+s+"="+guest)
		case "vm-sharing":
			s, err := fileSum(val)
			if err != nil {
				return nil, fmt.Errorf("the sharing profile's qemu plugin: %w", err)
			}
			out = append(out, "-vm-sharing", "sha256:"+s)
		}
	}
	return out, nil
}

// baseKey is the cache key of a base run of step name with args, and the
// entry it would have. The VM host is Config.Host, computed once (HostOf)
// when nil.
func (c *Config) baseKey(name string, args []string) (baseEntry, error) {
	e := baseEntry{Step: name, Release: c.Base.Release}
	var err error
	if e.ImageSHA256, err = fileSum(c.Base.Image); err != nil {
		return e, err
	}
	if c.suiteSHA == "" {
		if c.suiteSHA, err = suiteSum(filepath.Dir(c.Suite)); err != nil {
			return e, err
		}
	}
	e.SuiteSHA256 = c.suiteSHA
	if e.Flags, err = canonicalFlags(args); err != nil {
		return e, err
	}
	if c.Host == nil {
		h, err := HostOf(context.Background())
		if err != nil {
			return e, fmt.Errorf("the VM host (qemu, accelerator, guest userland): %w", err)
		}
		c.Host = &h
	}
	e.QEMUVersion, e.QEMUSHA256, e.Accel = c.Host.QEMUVersion, c.Host.QEMUSHA256, c.Host.Accel
	e.Userland = append([]string(nil), c.Host.Userland...)
	if countedRun(args) {
		e.Accel = "tcg-icount" // the VM runner forces TCG for -vm-icount and -vm-sharing
	}
	sum := sha256.Sum256([]byte(e.keyText()))
	e.Key = name + "-" + hex.EncodeToString(sum[:])[:24]
	return e, nil
}

// sameEntry reports whether a cached entry is the one wanted.
func sameEntry(got, want baseEntry) bool {
	return got.Key == want.Key && got.keyText() == want.keyText()
}

// openBaseCache opens the cache's state directory (nil and nil when no
// cache is configured), refusing a Config.Cache that is a symlink, not
// this user's, or writable by others.
func (c *Config) openBaseCache() (*statedir.Dir, error) {
	if c.Cache == "" {
		return nil, nil
	}
	if err := checkOwnDir(c.Cache); err != nil {
		return nil, fmt.Errorf("patchcheck: the base runs' cache: %w", err)
	}
	d, err := statedir.OpenAt(c.Cache, BaseCacheDir, os.Geteuid())
	if err != nil {
		return nil, fmt.Errorf("patchcheck: the base runs' cache: %w", err)
	}
	return d, nil
}

// checkOwnDir checks with Lstat that path is a real directory (not a
// symlink) owned by this user that no one else can write to (sticky or
// not).
func checkOwnDir(path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return fmt.Errorf("%s is not a directory of uid %d that only it can write (mode %#o, uid %d): refusing it", path, os.Geteuid(), st.Mode, st.Uid)
	}
	return nil
}

// checkFd checks that fd (named name) is a directory, or a regular file,
// of this user that no one else can write to.
func checkFd(fd int, name string, dir bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("fstat %s: %w", name, err)
	}
	want, what := uint32(unix.S_IFREG), "regular file"
	if dir {
		want, what = unix.S_IFDIR, "directory"
	}
	if st.Mode&unix.S_IFMT != want || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return fmt.Errorf("%s is not a %s of uid %d that only it can write (mode %#o, uid %d)", name, what, os.Geteuid(), st.Mode, st.Uid)
	}
	return nil
}

// openAt opens name relative to the directory dirfd without following a
// symlink or blocking on a FIFO, and checks it (checkFd).
func openAt(dirfd int, name, shown string, dir bool) (*os.File, error) {
	flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	if dir {
		flags |= unix.O_DIRECTORY
	}
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if err != nil {
		var st unix.Stat_t
		if (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR)) &&
			unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return nil, fmt.Errorf("%s is a symlink (%w)", shown, err)
		}
		return nil, fmt.Errorf("open %s: %w", shown, err)
	}
	if err := checkFd(fd, shown, dir); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", shown, err)
	}
	return os.NewFile(uintptr(fd), shown), nil
}

// lockCache takes the cache's lock (unix.LOCK_SH or LOCK_EX), waiting at
// most Config.CacheLockWait (BaseCacheLockWait when 0); a wait is logged
// with the lock's holders, and one that runs out is a *statedir.BusyError
// naming them. Closing the returned file releases the lock.
func (c *Config) lockCache(d *statedir.Dir, how int) (*os.File, error) {
	f, err := d.OpenLock(storeLock)
	if err != nil {
		return nil, err
	}
	err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
		f.Close()
		return nil, fmt.Errorf("flock %s: %w", f.Name(), err)
	}
	wait := c.CacheLockWait
	if wait <= 0 {
		wait = BaseCacheLockWait
	}
	who := "a process not visible here"
	if hs := statedir.Holders(f); len(hs) > 0 {
		var s []string
		for _, h := range hs {
			s = append(s, h.String())
		}
		who = strings.Join(s, ", ")
	}
	c.logf("base cache: waiting up to %v for the lock %s, held by %s", wait, f.Name(), who)
	if err := statedir.Flock(f, how, wait); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// cachedBase looks up a base run: the entry and its directory in the cache
// when there is a valid one (ok), copied into dir. A missing, torn, edited
// or unsafe entry, or a lock held too long, is a miss, logged.
func (c *Config) cachedBase(want baseEntry, dir string) (e baseEntry, from string, ok bool, err error) {
	d, err := c.openBaseCache()
	if d == nil || err != nil {
		return e, "", false, err
	}
	defer d.Close()
	from = d.File(want.Key)
	lock, err := c.lockCache(d, unix.LOCK_SH)
	if err != nil {
		c.logf("base cache: %v: not looking in it", err)
		return e, "", false, nil
	}
	defer lock.Close()
	kd, err := openAt(d.Fd(), want.Key, from, true)
	if errors.Is(err, unix.ENOENT) {
		return e, "", false, nil
	}
	if err != nil {
		c.logf("base cache: %v: not used", err)
		return e, "", false, nil
	}
	defer kd.Close()
	b, err := readAt(int(kd.Fd()), entryFile, from+"/"+entryFile)
	if err != nil {
		c.logf("base cache: %v: not used (an entry without its manifest is not complete)", err)
		return e, "", false, nil
	}
	if json.Unmarshal(b, &e) != nil || !sameEntry(e, want) || len(e.Files) == 0 {
		c.logf("base cache: %s does not match this run (another key, kernel, suite build, flags, qemu, accelerator or guest userland, or no manifest): not used", from+"/"+entryFile)
		return e, "", false, nil
	}
	rd, err := openAt(int(kd.Fd()), entryRun, from+"/"+entryRun, true)
	if err != nil {
		c.logf("base cache: %v: not used", err)
		return e, "", false, nil
	}
	defer rd.Close()
	if err := os.RemoveAll(dir); err != nil {
		return e, "", false, err
	}
	got, err := copyOut(rd, dir)
	if err == nil {
		err = sameFiles(got, e.Files)
	}
	if err != nil {
		c.logf("base cache: %s: %v: not used", from, err)
		if rerr := os.RemoveAll(dir); rerr != nil {
			return e, "", false, rerr
		}
		return e, "", false, nil
	}
	return e, from, true, nil
}

// readAt reads the regular file name in the directory dirfd (shown as
// shown), at most maxEntry bytes.
func readAt(dirfd int, name, shown string) ([]byte, error) {
	f, err := openAt(dirfd, name, shown, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEntry+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", shown, err)
	}
	if len(b) > maxEntry {
		return nil, fmt.Errorf("%s is larger than %d bytes", shown, maxEntry)
	}
	return b, nil
}

// sameFiles compares the files copied out of an entry with its manifest.
func sameFiles(got, want []cachedFile) error {
	sort.Slice(got, func(i, j int) bool { return got[i].Path < got[j].Path })
	w := append([]cachedFile(nil), want...)
	sort.Slice(w, func(i, j int) bool { return w[i].Path < w[j].Path })
	for i := 0; i < len(got) || i < len(w); i++ {
		switch {
		case i >= len(got):
			return fmt.Errorf("%s is missing (the manifest lists %d files, the entry has %d)", w[i].Path, len(w), len(got))
		case i >= len(w) || got[i].Path != w[i].Path:
			return fmt.Errorf("%s is not in the manifest", got[i].Path)
		case got[i] != w[i]:
			return fmt.Errorf("%s is %d bytes sha256:%s, the manifest says %d bytes sha256:%s", got[i].Path, got[i].Size, got[i].SHA256, w[i].Size, w[i].SHA256)
		}
	}
	return nil
}

// storeBase keeps a base run's results directory in the cache: written
// into a temporary entry of its own, then published under the lock
// (publish).
func (c *Config) storeBase(e baseEntry, dir string) error {
	d, err := c.openBaseCache()
	if d == nil || err != nil {
		return err
	}
	defer d.Close()
	tmp, td, err := makeTemp(d, e.Key)
	if err != nil {
		return err
	}
	published := false
	defer func() {
		td.Close()
		if !published {
			os.RemoveAll(d.File(tmp))
		}
	}()
	if err := unix.Mkdirat(int(td.Fd()), entryRun, 0o700); err != nil {
		return fmt.Errorf("mkdir %s: %w", d.File(tmp+"/"+entryRun), err)
	}
	rd, err := openAt(int(td.Fd()), entryRun, d.File(tmp+"/"+entryRun), true)
	if err != nil {
		return err
	}
	e.Files, err = copyIn(dir, rd)
	rd.Close()
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAt(int(td.Fd()), entryFile, d.File(tmp+"/"+entryFile), b); err != nil {
		return err
	}
	lock, err := c.lockCache(d, unix.LOCK_EX)
	if err != nil {
		return err
	}
	defer lock.Close()
	c.removeStaleTemps(d)
	published, err = c.publish(d, tmp, e.Key)
	return err
}

// makeTemp makes a temporary entry directory (0700) for key under a name
// no other store has (mkdirat fails on an existing name), and opens it.
func makeTemp(d *statedir.Dir, key string) (string, *os.File, error) {
	for try := 0; ; try++ {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return "", nil, err
		}
		name := tmpPrefix + key + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(r[:])
		err := unix.Mkdirat(d.Fd(), name, 0o700)
		if errors.Is(err, unix.EEXIST) && try < 10 {
			continue
		}
		if err != nil {
			return "", nil, fmt.Errorf("mkdir %s: %w", d.File(name), err)
		}
		f, err := openAt(d.Fd(), name, d.File(name), true)
		if err != nil {
			os.RemoveAll(d.File(name))
			return "", nil, err
		}
		return name, f, nil
	}
}

// writeAt creates the file name in the directory dirfd (O_EXCL, 0600, not
// following a symlink) with data.
func writeAt(dirfd int, name, shown string, data []byte) error {
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", shown, err)
	}
	f := os.NewFile(uintptr(fd), shown)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", shown, err)
	}
	return nil
}

// publish renames the complete temporary entry tmp to key, under the
// exclusive lock; published reports whether the new entry is in place.
//
// A second store of a key replaces the first, atomically: renameat2's
// RENAME_EXCHANGE swaps the two entries in one step, so a reader sees the
// old entry or the new one, whole, and the old one, now under the
// temporary name, is removed (readers hold the lock shared while they copy
// an entry out, so none is inside it). The newest run wins, as
// -no-base-cache promises. On a filesystem without renameat2's flags
// (EINVAL) the old entry is removed first: a reader in between finds no
// entry (a miss), never part of one.
func (c *Config) publish(d *statedir.Dir, tmp, key string) (published bool, err error) {
	fd := d.Fd()
	err = unix.Renameat2(fd, tmp, fd, key, unix.RENAME_NOREPLACE)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, unix.EEXIST) {
		if err = unix.Renameat2(fd, tmp, fd, key, unix.RENAME_EXCHANGE); err == nil {
			// tmp is the replaced entry now; a leftover is a stale temporary.
			if rerr := os.RemoveAll(d.File(tmp)); rerr != nil {
				c.logf("base cache: removing the replaced entry %s: %v", d.File(tmp), rerr)
			}
			return true, nil
		}
	}
	if !errors.Is(err, unix.EINVAL) {
		return false, fmt.Errorf("rename %s to %s: %w", d.File(tmp), d.File(key), err)
	}
	if err := os.RemoveAll(d.File(key)); err != nil {
		return false, err
	}
	if err := unix.Renameat(fd, tmp, fd, key); err != nil {
		return false, fmt.Errorf("rename %s to %s: %w", d.File(tmp), d.File(key), err)
	}
	return true, nil
}

// removeStaleTemps removes the temporary entries of stores that died (a
// crash, a kill): those whose writer pid does not exist (here) and that
// have not changed for staleTemp. Called under the exclusive lock; a
// failure only leaves the directory there.
func (c *Config) removeStaleTemps(d *statedir.Dir) {
	ents, err := os.ReadDir(d.Path())
	if err != nil {
		return
	}
	for _, ent := range ents {
		name := ent.Name()
		if !strings.HasPrefix(name, tmpPrefix) || !ent.IsDir() {
			continue
		}
		f := strings.Split(name, "-")
		if len(f) < 3 {
			continue
		}
		pid, err := strconv.Atoi(f[len(f)-2])
		if err != nil || pid <= 0 || pid == os.Getpid() || !errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(d.Fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || time.Since(time.Unix(st.Mtim.Unix())) < staleTemp {
			continue
		}
		// os.RemoveAll does not follow symlinks below the name it is given.
		if err := os.RemoveAll(d.File(name)); err == nil {
			c.logf("base cache: removed %s (a store of pid %d, which no longer exists)", d.File(name), pid)
		}
	}
}

// walkAt calls dir for every directory and file for every regular file
// below the directory src (opened by openAt), by path relative to it, in
// order: each name opened relative to its directory's fd without following
// a symlink and checked (checkFd: this user's, no one else may write it).
// Anything else is refused.
func walkAt(src *os.File, rel string, dir func(rel string) error, file func(rel string, f *os.File) error) error {
	// A fresh descriptor of the directory, to read it from its start.
	list, err := openAt(int(src.Fd()), ".", src.Name(), true)
	if err != nil {
		return err
	}
	ents, err := list.ReadDir(-1)
	list.Close()
	if err != nil {
		return fmt.Errorf("reading %s: %w", src.Name(), err)
	}
	for _, de := range ents {
		r, shown := path.Join(rel, de.Name()), src.Name()+"/"+de.Name()
		switch {
		case de.IsDir():
			sub, err := openAt(int(src.Fd()), de.Name(), shown, true)
			if err != nil {
				return err
			}
			err = dir(r)
			if err == nil {
				err = walkAt(sub, r, dir, file)
			}
			sub.Close()
			if err != nil {
				return err
			}
		case de.Type().IsRegular():
			f, err := openAt(int(src.Fd()), de.Name(), shown, false)
			if err != nil {
				return err
			}
			err = file(r, f)
			f.Close()
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: not a regular file or directory", shown)
		}
	}
	return nil
}

// copyIn copies the run directory src into the directory dst (a
// temporary entry's: 0700 in the root-only cache, so no one else can put a
// name in it), directories 0700 and files 0600 created with O_EXCL, and
// returns its manifest. src is opened as a directory of this user that no
// one else can write to, and so is everything below it (walkAt): a run
// directory another user could change is not cached.
func copyIn(src string, dst *os.File) ([]cachedFile, error) {
	sd, err := openAt(unix.AT_FDCWD, src, src, true)
	if err != nil {
		return nil, err
	}
	defer sd.Close()
	var files []cachedFile
	err = walkAt(sd, "",
		func(rel string) error {
			if err := unix.Mkdirat(int(dst.Fd()), rel, 0o700); err != nil {
				return fmt.Errorf("mkdir %s/%s: %w", dst.Name(), rel, err)
			}
			return nil
		},
		func(rel string, in *os.File) error {
			shown := dst.Name() + "/" + rel
			fd, err := unix.Openat(int(dst.Fd()), rel, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
			if err != nil {
				return fmt.Errorf("create %s: %w", shown, err)
			}
			out := os.NewFile(uintptr(fd), shown)
			f, err := copyHashed(out, in, rel)
			if cerr := out.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("%s: %w", shown, cerr)
			}
			files = append(files, f)
			return err
		})
	return files, err
}

// copyOut copies the entry's run directory src (opened by openAt) into dst
// (made 0755, files 0644), and returns what it copied (walkAt: a name
// that is not a directory or regular file of this user is refused).
func copyOut(src *os.File, dst string) ([]cachedFile, error) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	var files []cachedFile
	err := walkAt(src, "",
		func(rel string) error { return os.Mkdir(filepath.Join(dst, filepath.FromSlash(rel)), 0o755) },
		func(rel string, in *os.File) error {
			out, err := os.OpenFile(filepath.Join(dst, filepath.FromSlash(rel)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			f, err := copyHashed(out, in, rel)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			files = append(files, f)
			return err
		})
	return files, err
}

// copyHashed copies in to out and returns the manifest line of rel.
func copyHashed(out io.Writer, in *os.File, rel string) (cachedFile, error) {
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err != nil {
		return cachedFile{}, fmt.Errorf("copying %s: %w", in.Name(), err)
	}
	return cachedFile{Path: rel, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
