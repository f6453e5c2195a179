package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestDist builds `make dist`, unpacks the tarball somewhere else and checks
// the trees CI systems read from it: the kselftest collection (what
// run_kselftest.sh -c fsnsuite reads: kselftest-list.txt lines
// "collection:test", each test executable in the collection directory, and
// its settings timeout), the LTP tree for kirk (runtest/fsnsuite commands
// found in testcases/bin) and the runner, all working after relocation.
func TestDist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every binary (-short)")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	top, err := filepath.Abs("../../..")
	assert.NilError(t, err)
	dist := t.TempDir()
	out, err := exec.Command("make", "-C", top, "--no-print-directory", "dist", "DIST="+dist, "BIN="+t.TempDir()).CombinedOutput()
	assert.NilError(t, err, "%s", out)
	where := filepath.Join(t.TempDir(), "somewhere", "else")
	assert.NilError(t, os.MkdirAll(where, 0o755))
	out, err = exec.Command("tar", "-C", where, "-xzf", filepath.Join(dist, "fsnsuite.tar.gz")).CombinedOutput()
	assert.NilError(t, err, "%s", out)
	root := filepath.Join(where, "fsnsuite")

	// Nothing in the tree points outside it.
	assert.NilError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return err
		}
		dst, err := os.Readlink(p)
		assert.NilError(t, err)
		assert.Check(t, !filepath.IsAbs(dst), "%s -> %s is absolute", p, dst)
		real, err := filepath.EvalSymlinks(p)
		assert.Check(t, err, "%s dangles", p)
		assert.Check(t, strings.HasPrefix(real, root+"/"), "%s leaves the tree", p)
		return nil
	}))

	// kselftest.
	ksft := filepath.Join(root, "libexec", "fsnsuite", "kselftest")
	list := readLines(t, filepath.Join(ksft, "kselftest-list.txt"))
	assert.Assert(t, len(list) > 5, "kselftest-list.txt: %q", list)
	for _, l := range list {
		coll, test, ok := strings.Cut(l, ":")
		assert.Check(t, ok && coll == "fsnsuite", "line %q", l)
		fi, err := os.Stat(filepath.Join(ksft, coll, test))
		assert.Check(t, err == nil && fi.Mode()&0o111 != 0, "%s is not an executable in the collection", test)
	}
	assert.DeepEqual(t, readLines(t, filepath.Join(ksft, "fsnsuite", "settings")), []string{"timeout=300"})
	// A collection binary runs through its link (run_kselftest.sh runs ./name in the collection).
	cmd := exec.Command("./inotify_basic", "-list")
	cmd.Dir = filepath.Join(ksft, "fsnsuite")
	out, err = cmd.Output()
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(out), "create_in_dir"))

	// LTP: every runtest command is found in testcases/bin, as kirk looks.
	ltp := filepath.Join(root, "libexec", "fsnsuite", "ltp")
	n := 0
	for _, l := range readLines(t, filepath.Join(ltp, "runtest", "fsnsuite")) {
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.Fields(l)
		fi, err := os.Stat(filepath.Join(ltp, "testcases", "bin", f[1]))
		assert.Check(t, err == nil && fi.Mode()&0o111 != 0, "runtest %q: %s not in testcases/bin", f[0], f[1])
		n++
	}
	assert.Equal(t, n, len(list), "the runtest file and the kselftest list name the same binaries")

	// The runner, relocated, finds its binaries.
	out, err = exec.Command(filepath.Join(root, "bin", "fsnsuite"), "-list", "-no-perf").Output()
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(out), filepath.Join(root, "libexec", "fsnsuite", "inotify_basic")))
}

func readLines(t *testing.T, p string) []string {
	t.Helper()
	f, err := os.Open(p)
	assert.NilError(t, err)
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}
