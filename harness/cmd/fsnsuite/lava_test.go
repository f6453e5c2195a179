package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/internal/execfile"
)

// The LAVA test definition's last step (scripts/lava/lava-results.sh) turns
// a run's lava.txt into one lava-test-case call per line, with the
// measurement and units where there are some; checked with a stand-in
// lava-test-case that records its arguments.
func TestLAVADefinition(t *testing.T) {
	top, err := filepath.Abs("../../..")
	assert.NilError(t, err)
	def, err := os.ReadFile(filepath.Join(top, "scripts", "lava", "fsnsuite.yaml"))
	assert.NilError(t, err)
	for _, want := range []string{"format: Lava-Test Test Definition 1.0", "name: fsnsuite", "./scripts/lava/lava-results.sh \"${RESULTS}\"", "-results \"${RESULTS}\""} {
		assert.Check(t, is.Contains(string(def), want))
	}

	// A real run of fake binaries, then the script on its results.
	dir := binDir(t, map[string]string{"a": pass, "b": skipAll,
		"perf_x": "echo 1..1; echo '# measurement: ratio 1.005 ratio [0.998,1.012]'; echo 'ok 1 write.tmpfs'\n"})
	res := filepath.Join(t.TempDir(), "res")
	var out, errb strings.Builder
	run([]string{"-dir", dir, "-results", res}, &out, &errb)

	fakeBin := t.TempDir()
	calls := filepath.Join(fakeBin, "calls")
	assert.NilError(t, execfile.Write(filepath.Join(fakeBin, "lava-test-case"), []byte("#!/bin/sh\necho \"$*\" >> "+calls+"\n"), 0o755))
	cmd := exec.Command(filepath.Join(top, "scripts", "lava", "lava-results.sh"), res)
	cmd.Env = append(os.Environ(), "PATH="+fakeBin+":"+os.Getenv("PATH"))
	o, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", o)
	got, err := os.ReadFile(calls)
	assert.NilError(t, err)
	assert.Equal(t, string(got), `a.a --result pass
b --result skip
perf_x.write.tmpfs --result pass
perf_x.write.tmpfs.ratio --result pass --measurement 1.005 --units ratio
`)

	// No results at all: one failed case says so.
	assert.NilError(t, os.Remove(calls))
	cmd = exec.Command(filepath.Join(top, "scripts", "lava", "lava-results.sh"), t.TempDir())
	cmd.Env = append(os.Environ(), "PATH="+fakeBin+":"+os.Getenv("PATH"))
	_, err = cmd.CombinedOutput()
	assert.NilError(t, err)
	got, err = os.ReadFile(calls)
	assert.NilError(t, err)
	assert.Equal(t, string(got), "fsnsuite.runner --result fail\n")
}

// fsnsuite export -kcidb on a results directory.
func TestExportKCIDB(t *testing.T) {
	dir := binDir(t, map[string]string{"a": pass, "b": fail})
	res := filepath.Join(t.TempDir(), "res")
	var out, errb strings.Builder
	run([]string{"-dir", dir, "-results", res}, &out, &errb)
	var js, e2 strings.Builder
	assert.Equal(t, run([]string{"export", "-kcidb", "-origin", "mylab", res}, &js, &e2), 0, e2.String())
	assert.Check(t, is.Contains(js.String(), `"path": "fsnsuite.b.a"`))
	assert.Check(t, is.Contains(js.String(), `"status": "FAIL"`))
	assert.Check(t, is.Contains(js.String(), `"build_id": "mylab:`))
	assert.Equal(t, run([]string{"export", res}, &js, &e2), 2)
	assert.Equal(t, run([]string{"export", "-kcidb", t.TempDir()}, &js, &e2), 2)
}
