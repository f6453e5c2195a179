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

// fakeMake stands in for make in build-kernels.sh: olddefconfig does
// nothing; bzImage "compiles" the tree's fs/notify/x.c a second after it
// starts (so that a build that overlaps another's patch or restore would
// pick up the other's source) into bzImage, and writes the release from
// the build's .config.
const fakeMake = `#!/bin/sh
src= out= target=
for a; do
	case $a in
	-C) ;;
	O=*) out=${a#O=} ;;
	-s|-j*) ;;
	*) [ -d "$a" ] && src=$a || target=$a ;;
	esac
done
case $target in
bzImage)
	sleep 1
	mkdir -p "$out/arch/x86/boot" "$out/include/config"
	cat "$src/fs/notify/x.c" >"$out/arch/x86/boot/bzImage"
	lv=$(sed -n 's/^CONFIG_LOCALVERSION="\(.*\)"$/\1/p' "$out/.config")
	echo "7.3.4$lv" >"$out/include/config/kernel.release" ;;
esac
`

// fakeBuildKernel stands in for scripts/vm/build-kernel.sh SRC BUILD -f
// FRAG -f LOCALVERSION: the base's .config is the LOCALVERSION fragment.
const fakeBuildKernel = `#!/bin/sh
mkdir -p "$2"
cp "$6" "$2/.config"
make -s -C "$1" O="$2" bzImage
`

// fakeConfig stands in for a tree's scripts/config --file F --set-str
// LOCALVERSION V -d LOCALVERSION_AUTO.
const fakeConfig = `#!/bin/sh
printf 'CONFIG_LOCALVERSION="%s"\n' "$5" >"$2"
`

// Two patchchecks started together on one base build their kernels in
// turn (the build lock, naming its holder), never each other's source:
// each patched kernel is its own patch's tree and names its own patch; the
// base and the source copy are the base's after both. A fake make, a fake
// tree: no kernel is built.
func TestConcurrentBuildsDoNotMix(t *testing.T) {
	root, err := filepath.Abs("../..")
	assert.NilError(t, err)
	tmp := t.TempDir()
	write := func(p, body string, mode os.FileMode) string {
		p = filepath.Join(tmp, p)
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(body), mode))
		return p
	}
	write("ksrc/Makefile", "VERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 4\nEXTRAVERSION =\n", 0o644)
	write("ksrc/fs/notify/x.c", "base\n", 0o644)
	write("ksrc/scripts/config", fakeConfig, 0o755)
	write("bin/make", fakeMake, 0o755)
	bk := write("build-kernel.sh", fakeBuildKernel, 0o755)
	patch := func(name, to string) string {
		return write(name, "--- a/fs/notify/x.c\n+++ b/fs/notify/x.c\n@@ -1 +1 @@\n-base\n+"+to+"\n", 0o644)
	}
	pa, pb := patch("fix-a.patch", "A"), patch("fix-b.patch", "B")
	env := append(os.Environ(), "PATH="+filepath.Join(tmp, "bin")+":"+os.Getenv("PATH"),
		"FSNSUITE_CACHE="+filepath.Join(tmp, "cache"), "PC_BUILD_KERNEL="+bk, "NICE=0")
	type result struct {
		out, errOut string
		err         error
	}
	run := func(p string, ch chan<- result) {
		cmd := exec.Command("sh", filepath.Join(root, "scripts/patchcheck/build-kernels.sh"), filepath.Join(tmp, "ksrc"), p)
		cmd.Env = env
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		ch <- result{o.String(), e.String(), err}
	}
	ca, cb := make(chan result, 1), make(chan result, 1)
	go run(pa, ca)
	go run(pb, cb)
	ra, rb := <-ca, <-cb
	assert.NilError(t, ra.err, "%s", ra.errOut)
	assert.NilError(t, rb.err, "%s", rb.errOut)
	line := func(out, key string) string {
		for _, l := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(l, key+" "); ok {
				return v
			}
		}
		t.Fatalf("no %q line in %q", key, out)
		return ""
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		assert.NilError(t, err)
		return string(b)
	}
	for _, tc := range []struct {
		r            result
		name, source string
	}{{ra, "fix-a", "A\n"}, {rb, "fix-b", "B\n"}} {
		dir := line(tc.r.out, "patched")
		assert.Equal(t, read(filepath.Join(dir, "bzImage")), tc.source, "%s built from another tree:\n%s", tc.name, tc.r.errOut)
		assert.Assert(t, is.Regexp(`^7\.3\.4-fsnp-`+tc.name+`-[0-9a-f]{8}\n$`, read(filepath.Join(dir, "release"))))
		assert.Equal(t, read(filepath.Join(line(tc.r.out, "base"), "bzImage")), "base\n")
	}
	assert.Assert(t, line(ra.out, "patched") != line(rb.out, "patched"))
	// One waited for the other, and said for whom.
	waits := ra.errOut + rb.errOut
	assert.Assert(t, is.Regexp(`waiting for the build lock .*build\.lock, held by pid \d+ \(patchcheck build of fix-[ab]\.patch\), since 20`, waits))
	assert.Assert(t, line(ra.out, "build_lock_wait") != "0" || line(rb.out, "build_lock_wait") != "0", "%s", waits)
	// The shared copy and the tree are the base's again.
	base := filepath.Dir(line(ra.out, "base"))
	assert.Equal(t, read(filepath.Join(base, "src/fs/notify/x.c")), "base\n")
	assert.Equal(t, read(filepath.Join(tmp, "ksrc/fs/notify/x.c")), "base\n")
}
