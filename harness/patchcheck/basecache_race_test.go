package patchcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/tap"
)

// raceFiles are the files of a run TestConcurrentStoreAndLoad stores, each
// holding its writer's tag: big.bin long enough that a copy takes a while.
var raceFiles = map[string]int{"results.json": 1, "run.json": 1, "sub/leaf.tap": 1, "big.bin": 1 << 15}

// writeRaceRun writes a run directory whose every file repeats tag.
func writeRaceRun(dir, tag string) error {
	for name, n := range raceFiles {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, bytes.Repeat([]byte(tag+"\n"), n), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// checkRaceRun says what is wrong with a run copied out of the cache: a
// missing, extra, short or mixed file ("" when it is one writer's whole
// run).
func checkRaceRun(dir string) string {
	var names []string
	tags := map[string]bool{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		names = append(names, filepath.ToSlash(rel))
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if n, ok := raceFiles[filepath.ToSlash(rel)]; ok && len(lines) != n {
			return fmt.Errorf("%s has %d lines, want %d", rel, len(lines), n)
		}
		for _, l := range lines {
			tags[l] = true
		}
		return nil
	})
	if err != nil {
		return err.Error()
	}
	sort.Strings(names)
	if len(names) != len(raceFiles) {
		return fmt.Sprintf("files %v, want the %d of one run", names, len(raceFiles))
	}
	if len(tags) != 1 {
		return fmt.Sprintf("files of %d different stores mixed in one copy", len(tags))
	}
	return ""
}

// raceHelperEnv makes the test binary a store helper process
// (TestBaseCacheStoreHelper): the cache, the entry and the writer's tag.
const raceHelperEnv = "FSNSUITE_TEST_BASECACHE_HELPER"

// Stores of one key from several goroutines and processes at once, while
// others read it: every read is a miss or one whole run, never part of one
// or a mix of two, and no store or read fails (review of issue 35's base
// cache, C3: stores shared a temporary name per pid and readers copied an
// entry while it was replaced).
func TestConcurrentStoreAndLoad(t *testing.T) {
	cfg := setup(t, map[string]tap.Status{"a": tap.StatusPass}, map[string]tap.Status{"a": tap.StatusPass})
	assert.NilError(t, os.WriteFile(cfg.Base.Image, []byte("base kernel"), 0o644))
	cfg.Cache = t.TempDir()
	e, err := cfg.baseKey("correctness", []string{"-no-perf"})
	assert.NilError(t, err)
	e.Date = time.Now().UTC()
	entry, err := json.Marshal(e)
	assert.NilError(t, err)
	runs := t.TempDir()

	const writers, procs, stores, readers = 4, 2, 6, 4
	var mu sync.Mutex
	var problems []string
	problem := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	var wg, rg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := 0; s < stores; s++ {
				tag := fmt.Sprintf("goroutine %d store %d", w, s)
				dir := filepath.Join(runs, fmt.Sprintf("w%d-%d", w, s))
				if err := writeRaceRun(dir, tag); err != nil {
					problem("%s: %v", tag, err)
					return
				}
				if err := cfg.storeBase(e, dir); err != nil {
					problem("%s: storeBase: %v", tag, err)
				}
			}
		}()
	}
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBaseCacheStoreHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), raceHelperEnv+"=1", "CACHE="+cfg.Cache, "ENTRY="+string(entry),
				"RUNS="+filepath.Join(runs, "p"+strconv.Itoa(p)), "TAG=process "+strconv.Itoa(p), "STORES="+strconv.Itoa(stores))
			if out, err := cmd.CombinedOutput(); err != nil {
				problem("store process %d: %v\n%s", p, err, out)
			}
		}()
	}
	stop := make(chan struct{})
	hits := make([]int, readers)
	for r := 0; r < readers; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				dst := filepath.Join(runs, fmt.Sprintf("r%d-%d", r, i))
				_, _, ok, err := cfg.cachedBase(e, dst)
				if err != nil {
					problem("reader %d: cachedBase: %v", r, err)
					continue
				}
				if !ok {
					continue
				}
				hits[r]++
				if p := checkRaceRun(dst); p != "" {
					problem("reader %d, read %d: %s", r, i, p)
				}
				os.RemoveAll(dst)
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	// The last store is in place, whole.
	dst := filepath.Join(runs, "final")
	_, _, ok, err := cfg.cachedBase(e, dst)
	assert.NilError(t, err)
	assert.Assert(t, ok, "no entry after %d stores", writers*stores+procs*stores)
	if p := checkRaceRun(dst); p != "" {
		problem("final read: %s", p)
	}
	// Nothing is left behind but the entry (and the lock).
	left, err := filepath.Glob(filepath.Join(cfg.Cache, BaseCacheDir, ".tmp*"))
	assert.NilError(t, err)
	if len(left) > 0 {
		problem("temporary entries left: %v", left)
	}
	t.Logf("%d stores (%d goroutines, %d processes), reads that hit per reader: %v", (writers+procs)*stores, writers, procs, hits)
	for _, p := range problems {
		t.Error(p)
	}
}

// TestBaseCacheStoreHelper is TestConcurrentStoreAndLoad's store process
// (run by it; skipped otherwise).
func TestBaseCacheStoreHelper(t *testing.T) {
	if os.Getenv(raceHelperEnv) == "" {
		t.Skip("a helper process of TestConcurrentStoreAndLoad")
	}
	var e baseEntry
	assert.NilError(t, json.Unmarshal([]byte(os.Getenv("ENTRY")), &e))
	cfg := &Config{Cache: os.Getenv("CACHE")}
	n, err := strconv.Atoi(os.Getenv("STORES"))
	assert.NilError(t, err)
	for s := 0; s < n; s++ {
		tag := fmt.Sprintf("%s store %d", os.Getenv("TAG"), s)
		dir := filepath.Join(os.Getenv("RUNS"), strconv.Itoa(s))
		assert.NilError(t, writeRaceRun(dir, tag))
		if err := cfg.storeBase(e, dir); err != nil {
			t.Errorf("%s: storeBase: %v", tag, err)
		}
	}
}

// A cache directory that is a symlink, or that another user owns or may
// write to (even sticky, like /tmp), is refused with an error naming it;
// BaseCacheDir is made root-only (review of issue 35's base cache, C3).
func TestBaseCacheDirRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		// make prepares the cache directory in root and returns the
		// Config.Cache to use and the path the error must name ("": none).
		make func(t *testing.T, root string) (cache, bad string)
	}{
		{"fine", func(t *testing.T, root string) (string, string) { return root, "" }},
		{"base_dir_readable_by_others_made_private", func(t *testing.T, root string) (string, string) {
			assert.NilError(t, os.Mkdir(filepath.Join(root, BaseCacheDir), 0o755))
			return root, ""
		}},
		{"cache_symlink", func(t *testing.T, root string) (string, string) {
			l := filepath.Join(t.TempDir(), "cache")
			assert.NilError(t, os.Symlink(root, l))
			return l, l
		}},
		{"cache_world_writable", func(t *testing.T, root string) (string, string) {
			assert.NilError(t, os.Chmod(root, 0o777))
			return root, root
		}},
		{"cache_world_writable_sticky", func(t *testing.T, root string) (string, string) {
			assert.NilError(t, os.Chmod(root, os.ModeSticky|0o777))
			return root, root
		}},
		{"cache_group_writable", func(t *testing.T, root string) (string, string) {
			assert.NilError(t, os.Chmod(root, 0o770))
			return root, root
		}},
		{"cache_other_owner", func(t *testing.T, root string) (string, string) {
			assert.NilError(t, os.Chown(root, 65534, 65534))
			return root, root
		}},
		{"base_dir_symlink", func(t *testing.T, root string) (string, string) {
			assert.NilError(t, os.Symlink(t.TempDir(), filepath.Join(root, BaseCacheDir)))
			return root, filepath.Join(root, BaseCacheDir)
		}},
		{"base_dir_world_writable", func(t *testing.T, root string) (string, string) {
			assert.NilError(t, os.Mkdir(filepath.Join(root, BaseCacheDir), 0o700))
			assert.NilError(t, os.Chmod(filepath.Join(root, BaseCacheDir), 0o777))
			return root, filepath.Join(root, BaseCacheDir)
		}},
		{"base_dir_other_owner", func(t *testing.T, root string) (string, string) {
			assert.NilError(t, os.Mkdir(filepath.Join(root, BaseCacheDir), 0o700))
			assert.NilError(t, os.Chown(filepath.Join(root, BaseCacheDir), 65534, 65534))
			return root, filepath.Join(root, BaseCacheDir)
		}},
		{"base_dir_regular_file", func(t *testing.T, root string) (string, string) {
			assert.NilError(t, os.WriteFile(filepath.Join(root, BaseCacheDir), nil, 0o600))
			return root, filepath.Join(root, BaseCacheDir)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if os.Geteuid() != 0 && strings.Contains(tc.name, "other_owner") {
				t.Skip("chown needs root")
			}
			root := t.TempDir()
			cache, bad := tc.make(t, root)
			cfg := &Config{Cache: cache}
			d, err := cfg.openBaseCache()
			if bad == "" {
				assert.NilError(t, err)
				d.Close()
				fi, err := os.Lstat(filepath.Join(root, BaseCacheDir))
				assert.NilError(t, err)
				assert.Equal(t, fi.Mode(), os.ModeDir|0o700)
				return
			}
			assert.Assert(t, err != nil, "%s accepted", bad)
			assert.ErrorContains(t, err, bad+" ")
			assert.ErrorContains(t, err, "refusing")
		})
	}
}

// A held cache lock is waited for a bounded time, the wait logged with the
// holder's pid; then a store gives up with an error naming the lock and
// its holder, and a read is a miss (the base runs again). A lock file that
// is a symlink is refused (review of issue 35's base cache, C3).
func TestBaseCacheLock(t *testing.T) {
	cfg := setup(t, map[string]tap.Status{"a": tap.StatusPass}, map[string]tap.Status{"a": tap.StatusPass})
	assert.NilError(t, os.WriteFile(cfg.Base.Image, []byte("base kernel"), 0o644))
	cfg.Cache = t.TempDir()
	var log strings.Builder
	cfg.Log = &log
	cfg.CacheLockWait = 300 * time.Millisecond
	e, err := cfg.baseKey("correctness", []string{"-no-perf"})
	assert.NilError(t, err)
	run := t.TempDir()
	assert.NilError(t, writeRaceRun(run, "first"))
	assert.NilError(t, cfg.storeBase(e, run))

	lock := filepath.Join(cfg.Cache, BaseCacheDir, storeLock)
	held, err := os.OpenFile(lock, os.O_RDWR, 0)
	assert.NilError(t, err)
	assert.NilError(t, unix.Flock(int(held.Fd()), unix.LOCK_EX))
	holder := fmt.Sprintf("held by pid %d", os.Getpid())
	start := time.Now()
	err = cfg.storeBase(e, run)
	assert.ErrorContains(t, err, lock+" "+holder)
	assert.Assert(t, time.Since(start) < 5*time.Second, "waited %v", time.Since(start))
	assert.Assert(t, is.Contains(log.String(), "waiting up to 300ms for the lock "+lock+", "+holder))
	dst := filepath.Join(t.TempDir(), "dst")
	_, _, ok, err := cfg.cachedBase(e, dst)
	assert.NilError(t, err)
	assert.Assert(t, !ok, "read while a store held the lock")
	assert.Assert(t, is.Contains(log.String(), "not looking in it"))
	held.Close()
	_, _, ok, err = cfg.cachedBase(e, dst)
	assert.NilError(t, err)
	assert.Assert(t, ok)
	assert.Equal(t, checkRaceRun(dst), "")

	// A symlink as the lock file: refused, its target untouched.
	target := filepath.Join(t.TempDir(), "target")
	assert.NilError(t, os.WriteFile(target, []byte("x"), 0o644))
	assert.NilError(t, os.Remove(lock))
	assert.NilError(t, os.Symlink(target, lock))
	assert.ErrorContains(t, cfg.storeBase(e, run), lock+" is a symlink")
	b, err := os.ReadFile(target)
	assert.NilError(t, err)
	assert.Equal(t, string(b), "x")
}

// An entry is used only whole and as stored: one without its manifest,
// with a file changed, added, removed or replaced by a symlink, or whose
// manifest names other inputs, is a miss that leaves nothing in the
// destination (review of issue 35's base cache, C3: readers must only
// ever see a complete entry).
func TestBaseCacheEntryValidated(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, entry string) // the entry's directory
		hit   bool
	}{
		{name: "intact", spoil: func(*testing.T, string) {}, hit: true},
		{name: "no_manifest", spoil: func(t *testing.T, entry string) {
			assert.NilError(t, os.Remove(filepath.Join(entry, entryFile)))
		}},
		{name: "manifest_symlink", spoil: func(t *testing.T, entry string) {
			m := filepath.Join(entry, entryFile)
			assert.NilError(t, os.Rename(m, m+".real"))
			assert.NilError(t, os.Symlink(m+".real", m))
		}},
		{name: "other_inputs", spoil: func(t *testing.T, entry string) {
			m := filepath.Join(entry, entryFile)
			b, err := os.ReadFile(m)
			assert.NilError(t, err)
			assert.NilError(t, os.WriteFile(m, []byte(strings.Replace(string(b), testHost.QEMUVersion, "QEMU emulator version 1.0", 1)), 0o600))
		}},
		{name: "file_truncated", spoil: func(t *testing.T, entry string) {
			assert.NilError(t, os.Truncate(filepath.Join(entry, entryRun, "big.bin"), 100))
		}},
		{name: "file_changed_same_size", spoil: func(t *testing.T, entry string) {
			assert.NilError(t, os.WriteFile(filepath.Join(entry, entryRun, "run.json"), []byte("tsrif\n"), 0o600))
		}},
		{name: "file_removed", spoil: func(t *testing.T, entry string) {
			assert.NilError(t, os.Remove(filepath.Join(entry, entryRun, "sub", "leaf.tap")))
		}},
		{name: "file_added", spoil: func(t *testing.T, entry string) {
			assert.NilError(t, os.WriteFile(filepath.Join(entry, entryRun, "extra"), []byte("first\n"), 0o600))
		}},
		{name: "file_symlink", spoil: func(t *testing.T, entry string) {
			p := filepath.Join(entry, entryRun, "run.json")
			assert.NilError(t, os.Rename(p, p+".real"))
			assert.NilError(t, os.Symlink(p+".real", p))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := setup(t, map[string]tap.Status{"a": tap.StatusPass}, map[string]tap.Status{"a": tap.StatusPass})
			assert.NilError(t, os.WriteFile(cfg.Base.Image, []byte("base kernel"), 0o644))
			cfg.Cache = t.TempDir()
			var log strings.Builder
			cfg.Log = &log
			e, err := cfg.baseKey("correctness", []string{"-no-perf"})
			assert.NilError(t, err)
			run := t.TempDir()
			assert.NilError(t, writeRaceRun(run, "first"))
			assert.NilError(t, cfg.storeBase(e, run))
			tc.spoil(t, filepath.Join(cfg.Cache, BaseCacheDir, e.Key))
			dst := filepath.Join(t.TempDir(), "dst")
			_, _, ok, err := cfg.cachedBase(e, dst)
			assert.NilError(t, err)
			if tc.hit {
				assert.Assert(t, ok)
				assert.Equal(t, checkRaceRun(dst), "")
				return
			}
			assert.Assert(t, !ok, "a spoilt entry was used: %s", checkRaceRun(dst))
			assert.Assert(t, is.Contains(log.String(), "not used"))
			_, err = os.Lstat(dst)
			assert.Assert(t, os.IsNotExist(err), "the destination was left behind (%v)", err)
		})
	}
}

// A store removes the temporary entries of stores that died more than an
// hour ago, and no other: not a live writer's, not a recent one's.
func TestStaleTempsRemoved(t *testing.T) {
	cfg := setup(t, map[string]tap.Status{"a": tap.StatusPass}, map[string]tap.Status{"a": tap.StatusPass})
	assert.NilError(t, os.WriteFile(cfg.Base.Image, []byte("base kernel"), 0o644))
	cfg.Cache = t.TempDir()
	e, err := cfg.baseKey("correctness", []string{"-no-perf"})
	assert.NilError(t, err)
	run := t.TempDir()
	assert.NilError(t, writeRaceRun(run, "first"))
	assert.NilError(t, cfg.storeBase(e, run))
	gone := exec.Command("true")
	assert.NilError(t, gone.Run())
	dead := gone.Process.Pid
	old := time.Now().Add(-2 * staleTemp)
	dir := filepath.Join(cfg.Cache, BaseCacheDir)
	for _, tc := range []struct {
		pid   int
		mtime time.Time
		kept  bool
	}{
		{dead, old, false},
		{dead, time.Now(), true},
		{os.Getppid(), old, true},
	} {
		p := filepath.Join(dir, fmt.Sprintf("%s%s-%d-%s", tmpPrefix, e.Key, tc.pid, "0123456789abcdef"))
		if tc.mtime.After(old) {
			p += "0"
		}
		assert.NilError(t, os.MkdirAll(filepath.Join(p, entryRun), 0o700))
		assert.NilError(t, os.Chtimes(p, tc.mtime, tc.mtime))
		defer func() {
			_, err := os.Stat(p)
			if tc.kept {
				assert.NilError(t, err, "%s removed", p)
			} else {
				assert.Assert(t, os.IsNotExist(err), "%s kept (%v)", p, err)
			}
		}()
	}
	assert.NilError(t, cfg.storeBase(e, run))
}

// A run directory that another user could have changed (writable by
// others, a file of another user's, a symlink in it) is not cached: the
// cache must hold only what the run wrote.
func TestStoreRefusesForeignRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, run string) (bad string)
	}{
		{"run_dir_world_writable", func(t *testing.T, run string) string {
			assert.NilError(t, os.Chmod(run, 0o777))
			return run
		}},
		{"file_other_owner", func(t *testing.T, run string) string {
			p := filepath.Join(run, "run.json")
			assert.NilError(t, os.Chown(p, 65534, 65534))
			return p
		}},
		{"symlink_in_run", func(t *testing.T, run string) string {
			p := filepath.Join(run, "sub", "leaf.tap")
			assert.NilError(t, os.Remove(p))
			assert.NilError(t, os.Symlink("/etc/hostname", p))
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if os.Geteuid() != 0 && strings.Contains(tc.name, "other_owner") {
				t.Skip("chown needs root")
			}
			cfg := setup(t, map[string]tap.Status{"a": tap.StatusPass}, map[string]tap.Status{"a": tap.StatusPass})
			assert.NilError(t, os.WriteFile(cfg.Base.Image, []byte("base kernel"), 0o644))
			cfg.Cache = t.TempDir()
			e, err := cfg.baseKey("correctness", []string{"-no-perf"})
			assert.NilError(t, err)
			run := filepath.Join(t.TempDir(), "run")
			assert.NilError(t, writeRaceRun(run, "first"))
			bad := tc.spoil(t, run)
			assert.ErrorContains(t, cfg.storeBase(e, run), bad)
			_, _, ok, err := cfg.cachedBase(e, filepath.Join(t.TempDir(), "dst"))
			assert.NilError(t, err)
			assert.Assert(t, !ok, "a run another user could change was cached")
			left, err := filepath.Glob(filepath.Join(cfg.Cache, BaseCacheDir, "*"))
			assert.NilError(t, err)
			for _, l := range left {
				assert.Assert(t, filepath.Base(l) == storeLock, "left in the cache: %s", l)
			}
		})
	}
}
