package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestUsageListsEverySubcommand: fsnsuite -h names each subcommand run()
// dispatches (issue 34: diff was missing).
func TestUsageListsEverySubcommand(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, run([]string{"-h"}, &out, &errb), 0)
	for _, sub := range []string{"export", "report", "diff", "mutants", "patchcheck"} {
		assert.Check(t, is.Contains(errb.String(), "\n       fsnsuite "+sub+" "), "usage does not list %s", sub)
	}
}

// TestExportFlagsAfterDir: export takes its flags after the results
// directory too, as report does (`export -kcidb DIR -o F`), with the same
// output as with them before it.
func TestExportFlagsAfterDir(t *testing.T) {
	dir := binDir(t, map[string]string{"a": pass})
	res := filepath.Join(t.TempDir(), "res")
	var out, errb bytes.Buffer
	assert.Equal(t, run([]string{"-dir", dir, "-results", res}, &out, &errb), 0, errb.String())
	before, after := filepath.Join(t.TempDir(), "before.json"), filepath.Join(t.TempDir(), "after.json")
	errb.Reset()
	assert.Equal(t, run([]string{"export", "-kcidb", "-o", before, res}, &out, &errb), 0, errb.String())
	assert.Equal(t, run([]string{"export", "-kcidb", res, "-o", after}, &out, &errb), 0, errb.String())
	a, err := os.ReadFile(before)
	assert.NilError(t, err)
	b, err := os.ReadFile(after)
	assert.NilError(t, err)
	assert.Check(t, len(a) > 0)
	assert.Check(t, is.Equal(string(a), string(b)))
	// Two directories are still refused.
	errb.Reset()
	assert.Equal(t, run([]string{"export", "-kcidb", res, res}, &out, &errb), 2)
	assert.Check(t, is.Contains(errb.String(), "want -kcidb and one results directory"))
}
