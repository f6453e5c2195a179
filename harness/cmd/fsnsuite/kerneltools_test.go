package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/tap"
)

// kernelTools fetches (once, into .cache) the kernel's own test tools from
// Debian's linux-source-6.12 with scripts/fetch-kernel-tools.sh, or skips
// saying why it cannot.
func kernelTools(t *testing.T, top string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("fetches linux-source-6.12 and builds every binary (-short)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the test binaries need root")
	}
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(top, "scripts", "fetch-kernel-tools.sh"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("cannot fetch Debian's linux-source-6.12 (kunit.py, run_kselftest.sh): %v: %s", err, lastLine(stderr.String()))
	}
	return strings.TrimSpace(string(out))
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

// The kernel's own consumers read our output: kunit.py parse takes the
// runner's KTAP stream, also when the runner killed a binary midway (every
// case named, none "missing expected subtest", nothing "crashed"), and
// run_kselftest.sh -c fsnsuite runs the installed kselftest collection.
func TestKernelTools(t *testing.T) {
	top, err := filepath.Abs("../../..")
	assert.NilError(t, err)
	tools := kernelTools(t, top)
	dest := t.TempDir()
	out, err := exec.Command("make", "-C", top, "--no-print-directory", "install", "DESTDIR="+dest, "BIN="+t.TempDir()).CombinedOutput()
	assert.NilError(t, err, "%s", out)
	libexec := filepath.Join(dest, "usr", "local", "libexec", "fsnsuite")
	py := "python3"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		py = "/usr/bin/python3"
	}
	kunit := filepath.Join(tools, "tools", "testing", "kunit", "kunit.py")

	for _, tc := range []struct {
		name string
		args []string
		ok   bool
	}{
		{"whole_run", nil, true},
		{"killed_midway", []string{"-timeout", "1s"}, false},
	} {
		t.Run("kunit_"+tc.name, func(t *testing.T) {
			stream := filepath.Join(t.TempDir(), "run.ktap")
			f, err := os.Create(stream)
			assert.NilError(t, err)
			cmd := exec.Command(filepath.Join(libexec, "fsnsuite"), append([]string{"-run", "^inotify_basic$", "-format", "ktap", "-results", t.TempDir()}, tc.args...)...)
			cmd.Stdout = f
			_ = cmd.Run()
			assert.NilError(t, f.Close())
			if !tc.ok {
				raw, err := os.ReadFile(stream)
				assert.NilError(t, err)
				assert.Assert(t, bytes.Contains(raw, []byte("inotify_basic: killed after 1 seconds")), "the runner did not kill it midway:\n%s", raw)
			}
			parsed, err := exec.Command(py, kunit, "parse", stream).CombinedOutput()
			text := string(parsed)
			if tc.ok {
				assert.NilError(t, err, "%s", text)
				assert.Check(t, is.Contains(text, "Testing complete."))
			}
			for _, bad := range []string{"missing expected subtest", "crashed", "[ERROR]"} {
				assert.Check(t, !strings.Contains(text, bad), "kunit: %q in:\n%s", bad, text)
			}
		})
	}

	// What the README says of kunit: a standalone stream with no case at
	// all (a -run matching nothing) is an error to it.
	t.Run("kunit_no_case", func(t *testing.T) {
		stream := filepath.Join(t.TempDir(), "none.ktap")
		out, _ := exec.Command(filepath.Join(libexec, "inotify_basic"), "-format", "ktap", "-run", "^no_such_case$").Output()
		assert.Check(t, is.Contains(string(out), "1..0 # SKIP no case matches"))
		assert.NilError(t, os.WriteFile(stream, out, 0o644))
		parsed, err := exec.Command(py, kunit, "parse", stream).CombinedOutput()
		assert.Check(t, err != nil && strings.Contains(string(parsed), "0 tests run!"), "kunit now reads an empty stream (update harness/runner/README.md): %v\n%s", err, parsed)
	})

	t.Run("run_kselftest", func(t *testing.T) {
		ksft := filepath.Join(libexec, "kselftest")
		for _, f := range []string{"run_kselftest.sh", "kselftest"} {
			out, err := exec.Command("cp", "-r", filepath.Join(tools, "tools", "testing", "selftests", f), ksft).CombinedOutput()
			assert.NilError(t, err, "%s", out)
		}
		// The whole collection includes the perf binaries (minutes): keep
		// one quick binary on the list run_kselftest.sh reads.
		assert.NilError(t, os.WriteFile(filepath.Join(ksft, "kselftest-list.txt"), []byte("fsnsuite:inotify_basic\n"), 0o644))
		cmd := exec.Command("./run_kselftest.sh", "-c", "fsnsuite")
		cmd.Dir = ksft
		out, err := cmd.CombinedOutput()
		assert.NilError(t, err, "%s", out)
		root := tap.ParseString(string(out))
		assert.Equal(t, len(root.Children), 1, "%s", out)
		bin := root.Children[0]
		assert.Check(t, is.Equal(bin.Status, tap.StatusPass), "%s", out)
		assert.Check(t, len(bin.Children) > 10, "the binary's own cases, read through kselftest's wrapping: %d", len(bin.Children))
		assert.Check(t, is.Len(bin.Problems, 0))
	})
}
