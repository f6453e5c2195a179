package patchcheck

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/statedir"
)

// The base kernel's runs are cached: a patchcheck of another patch on the
// same base, with the same suite build and the same flags, reuses them
// instead of running the base again (177-244 s of correctness under TCG).
//
// The cache is BaseCacheDir below Config.Cache (the project's cache,
// scripts/coverage/cache-dir.sh), opened as a statedir: a directory owned
// by this user with no group or other write, in a parent no one else can
// write to (a world-writable one refused). It holds per key an entry
// KEY.json and the run's results directory KEY/. Read back, an entry is
// used only when its key, kernel image hash, suite build hash and flags
// are the ones computed now, and its directory is a real directory owned
// by this user that no one else can write to; the path is never taken
// from the entry.

// BaseCacheDir is the cache's directory name below Config.Cache.
const BaseCacheDir = "patchcheck-base-runs"

// baseEntry is a cached base run.
type baseEntry struct {
	Key          string    `json:"key"`
	Step         string    `json:"step"`
	Release      string    `json:"release"`
	ImageSHA256  string    `json:"image_sha256"`
	SuiteSHA256  string    `json:"suite_sha256"`
	Flags        []string  `json:"flags"`
	Date         time.Time `json:"date"`
	Seconds      float64   `json:"seconds"`
	OriginalPath string    `json:"original_path"`
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
// runtest file of -f by its content, a -vm-file by its content's hash and
// guest path; -kernel and -results (paths of this patchcheck) are not in
// args.
func canonicalFlags(args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-f" && i+1 < len(args):
			b, err := os.ReadFile(args[i+1])
			if err != nil {
				return nil, err
			}
			out = append(out, "-f", "runtest:"+strings.TrimSpace(string(b)))
			i++
		case a == "-vm-file" && i+1 < len(args):
			host, guest, _ := strings.Cut(args[i+1], "=")
			s, err := fileSum(host)
			if err != nil {
				return nil, err
			}
			out = append(out, "-vm-file", "sha256:"+s+"="+guest)
			i++
		default:
			out = append(out, a)
		}
	}
	return out, nil
}

// baseKey is the cache key of a base run of step name with args, and the
// entry it would have.
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
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", name, e.ImageSHA256, e.SuiteSHA256, strings.Join(e.Flags, "\x00"))
	e.Key = name + "-" + hex.EncodeToString(h.Sum(nil))[:24]
	return e, nil
}

// sameEntry reports whether a cached entry is the one wanted.
func sameEntry(got, want baseEntry) bool {
	return got.Key == want.Key && got.Step == want.Step && got.ImageSHA256 == want.ImageSHA256 &&
		got.SuiteSHA256 == want.SuiteSHA256 && strings.Join(got.Flags, "\x00") == strings.Join(want.Flags, "\x00")
}

// openBaseCache opens the cache's state directory ("" and nil when no
// cache is configured).
func (c *Config) openBaseCache() (*statedir.Dir, error) {
	if c.Cache == "" {
		return nil, nil
	}
	d, err := statedir.OpenAt(c.Cache, BaseCacheDir, os.Geteuid())
	if err != nil {
		return nil, fmt.Errorf("patchcheck: the base runs' cache: %w", err)
	}
	return d, nil
}

// checkOwnDir checks that path is a real directory (not a symlink) owned
// by this user that no one else can write to.
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

// cachedBase looks up a base run: the entry and its directory in the cache
// when there is a valid one (ok), copied into dir.
func (c *Config) cachedBase(want baseEntry, dir string) (e baseEntry, from string, ok bool, err error) {
	d, err := c.openBaseCache()
	if d == nil || err != nil {
		return e, "", false, err
	}
	defer d.Close()
	b, err := d.ReadFile(want.Key + ".json")
	if errors.Is(err, os.ErrNotExist) {
		return e, "", false, nil
	}
	if err != nil {
		return e, "", false, err
	}
	if json.Unmarshal(b, &e) != nil || !sameEntry(e, want) {
		c.logf("base cache: %s does not match this run (another key, kernel, suite build or flags): not used", d.File(want.Key+".json"))
		return e, "", false, nil
	}
	from = d.File(want.Key)
	if err := checkOwnDir(from); err != nil {
		c.logf("base cache: %v: not used", err)
		return e, "", false, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return e, "", false, err
	}
	if err := copyTree(from, dir); err != nil {
		return e, "", false, fmt.Errorf("copying the cached base run %s: %w", from, err)
	}
	return e, from, true, nil
}

// storeBase keeps a base run's results directory in the cache.
func (c *Config) storeBase(e baseEntry, dir string) error {
	d, err := c.openBaseCache()
	if d == nil || err != nil {
		return err
	}
	defer d.Close()
	tmp := d.File(e.Key + ".tmp." + strconv.Itoa(os.Getpid()))
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := copyTree(dir, tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	final := d.File(e.Key)
	if err := os.RemoveAll(final); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	return d.WriteFile(e.Key+".json", b)
}

// copyTree copies the directories and regular files below src into dst
// (made 0755); a symlink or any other kind of file is refused.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case de.IsDir():
			return os.MkdirAll(to, 0o755)
		case de.Type().IsRegular():
			return copyFile(p, to)
		}
		return fmt.Errorf("%s: not a regular file or directory: refusing to copy it", p)
	})
}

func copyFile(from, to string) error {
	fd, err := unix.Open(from, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	in := os.NewFile(uintptr(fd), from)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", to, err)
	}
	return out.Close()
}
