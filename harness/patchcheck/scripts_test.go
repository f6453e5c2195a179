package patchcheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// lib runs a shell snippet with scripts/patchcheck/pc-lib.sh sourced.
func lib(t *testing.T, script string, args ...string) string {
	t.Helper()
	libPath, err := filepath.Abs("../../scripts/patchcheck/pc-lib.sh")
	assert.NilError(t, err)
	out, err := exec.Command("sh", append([]string{"-c", ". " + libPath + "; " + script, "sh"}, args...)...).CombinedOutput()
	assert.NilError(t, err, "%s", out)
	return strings.TrimSpace(string(out))
}

// Each patched kernel's release names its patch and its hash, within the
// kernel's 64-character UTS release; two patches of one name differ.
func TestPatchLocalversion(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	a := write("seed004-7.3.patch", "a\n")
	b := write("other/seed004-7.3.patch", "b\n")
	long := write("fanotify: fix the merge of öpen events with a name much longer than any release could hold.patch", "c\n")
	la := lib(t, `patch_localversion 7.3.4 "$1"`, a)
	assert.Assert(t, is.Regexp(`^-fsnp-seed004-7\.3-[0-9a-f]{8}$`, la))
	lb := lib(t, `patch_localversion 7.3.4 "$1"`, b)
	assert.Assert(t, la != lb, "two patches of one name: %s", la)
	ll := lib(t, `patch_localversion 7.3.4-rc1 "$1"`, long)
	assert.Assert(t, is.Regexp(`^-fsnp-fanotify__fix_the_merge_of__+pen[A-Za-z0-9._-]*-[0-9a-f]{8}$`, ll))
	// The release with setlocalversion's possible "+" fits __NEW_UTS_LEN.
	assert.Assert(t, len("7.3.4-rc1"+ll+"+") <= 64, "%d: %s", len("7.3.4-rc1"+ll+"+"), ll)
	assert.Equal(t, len("7.3.4-rc1"+ll+"+"), 64)

	mk := write("Makefile", "# SPDX-License-Identifier: GPL-2.0\nVERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\nEXTRAVERSION = -rc1\nNAME = x\n")
	assert.Equal(t, lib(t, `kernel_version "$1"`, mk), "7.3.4-rc1")
}

// make patchcheck passes patchcheck.sh's status on as its recipe's status
// and says what it means: make itself can only exit 0 or 2 (GNU make's
// manual, "Exit Status of make"), so "behaviour changed" is make's "Error
// 1" and the message, and 2 both times; 0 stays 0.
func TestMakePatchcheckStatus(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	root, err := filepath.Abs("../..")
	assert.NilError(t, err)
	for _, tc := range []struct {
		status, makeStatus int
		says               string
	}{
		{0, 0, ""},
		{1, 2, "make patchcheck: BEHAVIOUR CHANGED (patchcheck.sh exit 1)"},
		{2, 2, "make patchcheck: BROKEN (patchcheck.sh exit 2)"},
	} {
		fake := filepath.Join(t.TempDir(), "patchcheck.sh")
		assert.NilError(t, os.WriteFile(fake, []byte(fmt.Sprintf("echo \"fake $*\"\nexit %d\n", tc.status)), 0o755))
		cmd := exec.Command("make", "-s", "-C", root, "-o", "build", "patchcheck", "KSRC=k", "PATCH=p", "PATCHCHECK_SH="+fake)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			assert.NilError(t, err)
		}
		assert.Equal(t, code, tc.makeStatus, "%s", out)
		assert.Assert(t, is.Contains(string(out), "fake k p --"))
		if tc.says != "" {
			assert.Assert(t, is.Contains(string(out), tc.says))
			assert.Assert(t, is.Contains(string(out), fmt.Sprintf("Error %d", tc.status)))
		}
	}
}

// STEPS: one variable for what runs. steps_of splits it into the coverage
// step and fsnsuite patchcheck's -steps; make passes it on as PC_STEPS;
// patchcheck.sh refuses an unknown step before anything else runs.
func TestSteps(t *testing.T) {
	for in, want := range map[string]string{
		"correctness":                       "0 correctness",
		"correctness,explore":               "0 correctness,explore",
		"cost":                              "0 cost",
		"coverage,correctness,explore,cost": "1 correctness,explore,cost",
	} {
		assert.Equal(t, lib(t, `steps_of "$1"`, in), want, in)
	}
	for _, bad := range []string{"corectness", "coverage"} {
		out, err := exec.Command("sh", "-c", ". ../../scripts/patchcheck/pc-lib.sh; steps_of "+bad).CombinedOutput()
		assert.Assert(t, err != nil, "%s: %s", bad, out)
		assert.Assert(t, is.Contains(string(out), "STEPS="+bad), bad)
	}

	root, err := filepath.Abs("../..")
	assert.NilError(t, err)
	fake := filepath.Join(t.TempDir(), "patchcheck.sh")
	assert.NilError(t, os.WriteFile(fake, []byte("echo \"PC_STEPS=$PC_STEPS PC_COVERAGE=$PC_COVERAGE args=$*\"\n"), 0o755))
	out, err := exec.Command("make", "-s", "-C", root, "-o", "build", "patchcheck", "KSRC=k", "PATCH=p", "STEPS=correctness,explore", "PATCHCHECK_SH="+fake).CombinedOutput()
	assert.NilError(t, err, "%s", out)
	assert.Assert(t, is.Contains(string(out), "PC_STEPS=correctness,explore PC_COVERAGE= args=k p --"), "%s", out)

	cmd := exec.Command("sh", filepath.Join(root, "scripts/patchcheck/patchcheck.sh"), "k", "p")
	cmd.Env = append(os.Environ(), "PC_STEPS=correctness,bogus")
	out, err = cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	assert.Assert(t, ok && ee.ExitCode() == 2, "%v: %s", err, out)
	assert.Equal(t, strings.TrimSpace(string(out)), "STEPS=correctness,bogus: unknown step 'bogus' (want coverage, correctness, explore, cost, comma-separated)")
}
