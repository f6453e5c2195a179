package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// fakeBins writes executables that answer -list-rules with the given
// output (and exit status).
func fakeBins(t *testing.T, bins map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, script := range bins {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	}
	return dir
}

func TestSpecCoverage(t *testing.T) {
	dir := fakeBins(t, map[string]string{
		"a_bin": `echo "case.tmpfs inotify.7/read/blocks"; echo "case.ext4/sub inotify.7/notes/poll"`,
		"b_bin": `true`,
	})
	var out, errb bytes.Buffer
	code := run([]string{"spec-coverage", "-dir", dir}, &out, &errb)
	assert.Equal(t, code, 1, "stderr: %s", errb.String())
	first, _, _ := strings.Cut(out.String(), "\n")
	assert.Check(t, is.Contains(first, "2 checked by a case"), first)
	assert.Check(t, is.Contains(out.String(), "without a case ("))
	assert.Check(t, !strings.Contains(out.String(), "  inotify.7/read/blocks  "), "a claimed rule is listed as without a case")
	assert.Check(t, is.Contains(out.String(), "  inotify.7/read/nonblock  "))

	out.Reset()
	code = run([]string{"spec-coverage", "-dir", dir, "-v"}, &out, &errb)
	assert.Equal(t, code, 1)
	assert.Check(t, is.Contains(out.String(), "      a_bin case.ext4/sub\n"))
}

func TestSpecCoverageRefusals(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"refused declarations", `echo 'key "x" names no case' >&2; exit 2`, `names no case`},
		{"bad line", `echo "one-field-only"`, `want "leaf rule-id"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fakeBins(t, map[string]string{"bad_bin": tc.script})
			var out, errb bytes.Buffer
			assert.Equal(t, run([]string{"spec-coverage", "-dir", dir}, &out, &errb), 2)
			assert.Check(t, is.Contains(errb.String(), tc.want))
		})
	}
	var out, errb bytes.Buffer
	assert.Equal(t, run([]string{"spec-coverage", "-dir", t.TempDir()}, &out, &errb), 2)
	assert.Check(t, is.Contains(errb.String(), "no test binary"))
}
