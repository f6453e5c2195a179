package mutate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// A mutant is written to the source copy as a new file: KSRC's file, hard
// linked into the copy, keeps its content; restoring gives the original
// content back with a new mtime (so make rebuilds the object).
func TestApplyRestoreHardLinks(t *testing.T) {
	root := t.TempDir()
	ksrc, src := filepath.Join(root, "ksrc"), filepath.Join(root, "src")
	rel := "fs/notify/t.c"
	orig := body("\tif (x)", "\t\treturn -EINVAL;", "\treturn 0;")
	assert.NilError(t, os.MkdirAll(filepath.Join(ksrc, "fs/notify"), 0o755))
	assert.NilError(t, os.MkdirAll(filepath.Join(src, "fs/notify"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(ksrc, rel), []byte(orig), 0o644))
	old := time.Now().Add(-time.Hour)
	assert.NilError(t, os.Chtimes(filepath.Join(ksrc, rel), old, old))
	assert.NilError(t, os.Link(filepath.Join(ksrc, rel), filepath.Join(src, rel)))

	ms := Generate(rel, orig, nil)
	assert.Assert(t, len(ms) > 0)
	c := &Config{KSRC: ksrc, Src: src}
	assert.NilError(t, c.apply(&ms[0]))
	b, err := os.ReadFile(filepath.Join(ksrc, rel))
	assert.NilError(t, err)
	assert.Equal(t, string(b), orig, "KSRC was written through the hard link")
	b, err = os.ReadFile(filepath.Join(src, rel))
	assert.NilError(t, err)
	assert.Assert(t, string(b) != orig, "the copy is not mutated")

	assert.NilError(t, c.restore(rel, true))
	b, err = os.ReadFile(filepath.Join(src, rel))
	assert.NilError(t, err)
	assert.Equal(t, string(b), orig)
	st, err := os.Stat(filepath.Join(src, rel))
	assert.NilError(t, err)
	assert.Assert(t, st.ModTime().After(old.Add(time.Minute)), "restored file keeps the old mtime %v: make would not rebuild", st.ModTime())

	// A mutant whose line no longer reads as it did is refused.
	m := ms[0]
	m.Orig = "something else"
	assert.ErrorContains(t, c.apply(&m), "is not the line mutant")
}

// Trivial compiler equivalence: a mutant whose build leaves every object of
// fs/notify as the unmutated build made it is equivalent; one changed, added
// or missing object is not.
func TestSameObjects(t *testing.T) {
	build := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(build, rel)
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("fs/notify/mark.o", "mark")
	write("fs/notify/fanotify/fanotify.o", "fanotify")
	write("fs/notify/built-in.a", "archive")
	write("fs/ext4/inode.o", "ext4")

	src := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(src, "fs/notify"), 0o755))
	mutated := "fs/notify/mark.c"
	assert.NilError(t, os.WriteFile(filepath.Join(src, mutated), []byte("mutated"), 0o644))
	// The mutated source was written before the build: objects are newer.
	old := time.Now().Add(-time.Hour)
	assert.NilError(t, os.Chtimes(filepath.Join(src, mutated), old, old))
	c := &Config{Build: build, Src: src}
	base, err := ObjectSums(build)
	assert.NilError(t, err)
	assert.Equal(t, len(base), 2, "only fs/notify's *.o: %v", base)
	c.baseObjects = base
	same, err := c.sameObjects(mutated)
	assert.NilError(t, err)
	assert.Assert(t, same, "nothing rebuilt differently")

	// make rewrote no object since the mutant was written (a stale build):
	// not equivalent, whatever the sums say.
	future := time.Now().Add(time.Hour)
	assert.NilError(t, os.Chtimes(filepath.Join(src, mutated), future, future))
	same, err = c.sameObjects(mutated)
	assert.NilError(t, err)
	assert.Assert(t, !same, "a build that rewrote nothing since the mutant")
	assert.NilError(t, os.Chtimes(filepath.Join(src, mutated), old, old))

	// Outside fs/notify or not an object: still the same.
	write("fs/ext4/inode.o", "ext4 rebuilt")
	write("fs/notify/built-in.a", "archive relinked")
	same, err = c.sameObjects(mutated)
	assert.NilError(t, err)
	assert.Assert(t, same)

	write("fs/notify/fanotify/fanotify.o", "fanotify mutated")
	same, err = c.sameObjects(mutated)
	assert.NilError(t, err)
	assert.Assert(t, !same, "a changed object")

	write("fs/notify/fanotify/fanotify.o", "fanotify")
	write("fs/notify/extra.o", "new")
	same, err = c.sameObjects(mutated)
	assert.NilError(t, err)
	assert.Assert(t, !same, "an object more")

	// No base recorded (nothing to compare with): never equivalent.
	c.baseObjects = nil
	same, err = c.sameObjects(mutated)
	assert.NilError(t, err)
	assert.Assert(t, !same)

	_, err = ObjectSums(t.TempDir())
	assert.ErrorContains(t, err, "objects of fs/notify")
	empty := t.TempDir()
	assert.NilError(t, os.MkdirAll(filepath.Join(empty, "fs/notify"), 0o755))
	_, err = ObjectSums(empty)
	assert.ErrorContains(t, err, "no object file")
}

// A kernel bug report on a mutant's console that the baseline did not show
// makes it crashed: the same report reads the same in two runs (timestamp,
// CPU, PID and addresses taken out), one the baseline shows too does not
// count, and the timing watchdogs' reports (hung task, soft lockup) are no
// bug reports.
func TestKernelReports(t *testing.T) {
	console := "[    1.000000] fsnsuite: booting\n" +
		"[   12.345678] WARNING: CPU: 0 PID: 94 at include/linux/fsnotify_backend.h:280 0xffffffff8111a7bc\n" +
		"[   12.345679] CPU: 0 PID: 94 Comm: exe Tainted: G               X   6.1.192 #14\n" +
		"[   13.000000] BUG: kernel NULL pointer dereference, address: 0000000000000008\n" +
		"[   14.000000] INFO: task fanotify_perm:312 blocked for more than 120 seconds.\n" +
		"[   15.000000] watchdog: BUG: soft lockup - CPU#1 stuck for 23s! [exe:97]\n" +
		"[   16.000000] UBSAN: shift-out-of-bounds in fs/notify/mark.c:120:9\n"
	got := KernelReports(console)
	want := []string{
		"WARNING: at include/linux/fsnotify_backend.h:280",
		"BUG: kernel NULL pointer dereference, address:",
		"UBSAN: shift-out-of-bounds in fs/notify/mark.c:120:9",
	}
	assert.DeepEqual(t, got, want)
	other := strings.ReplaceAll(strings.ReplaceAll(console, "PID: 94", "PID: 1207"), "0xffffffff8111a7bc", "0xffffffff8222b8cd")
	assert.DeepEqual(t, KernelReports(other), want)
	// 7.3's WARN format puts the CPU and the task after the place.
	assert.DeepEqual(t, KernelReports("WARNING: fs/notify/mark.c:120 at fsnotify_put_mark+0x1a/0x40, CPU#1: exe/312\n"),
		[]string{"WARNING: fs/notify/mark.c:120 at fsnotify_put_mark"})
	rest, line := splitVMAppend([]string{"-run", "x", "-vm-append", "clocksource=jiffies", "--vm-append=a=b", "-j=2"})
	assert.DeepEqual(t, rest, []string{"-run", "x", "-j=2"})
	assert.Equal(t, line, "clocksource=jiffies a=b")

	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "vm-console.log"), []byte(console), 0o644))
	c := &Config{baseReports: map[string]bool{want[0]: true, want[1]: true}}
	assert.Equal(t, c.newReport(dir), want[2])
	c.baseReports[want[2]] = true
	assert.Equal(t, c.newReport(dir), "")
	assert.Equal(t, c.newReport(t.TempDir()), "", "a run without a console log")
}
