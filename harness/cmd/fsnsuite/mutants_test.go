package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// fsnsuite mutants -list names every mutant of fs/notify but dnotify, draws
// the sample -n/-seed give without the listed equivalents, and prints a
// chosen mutant's diff; a run without -dir is a usage error.
func TestMutantsList(t *testing.T) {
	ksrc := t.TempDir()
	for _, f := range []string{"fs/notify/a.c", "fs/notify/dnotify/dnotify.c"} {
		assert.NilError(t, os.MkdirAll(filepath.Join(ksrc, filepath.Dir(f)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(ksrc, f), []byte("int f(int x)\n{\n\tif (x)\n\t\treturn -EINVAL;\n\treturn 0;\n}\n"), 0o644))
	}
	run1 := func(args ...string) (int, string, string) {
		var out, errb strings.Builder
		code := run(append([]string{"mutants", "-ksrc", ksrc}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, _ := run1("-list")
	assert.Equal(t, code, 0)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Equal(t, len(lines), 3, out) // negate, two returns
	for _, l := range lines {
		assert.Assert(t, strings.Contains(l, "fs/notify/a.c:"), l)
	}
	first := strings.Fields(lines[0])[0]
	eq := filepath.Join(t.TempDir(), "eq.txt")
	assert.NilError(t, os.WriteFile(eq, []byte(first+" test reason\n"), 0o644))
	code, out, _ = run1("-list", "-n", "5", "-equivalent", eq)
	assert.Equal(t, code, 0)
	assert.Assert(t, !strings.Contains(out, first), "equivalent %s in the sample:\n%s", first, out)
	assert.Equal(t, len(strings.Split(strings.TrimSpace(out), "\n")), 2, out)
	code, out, _ = run1("-list", "-id", first)
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.Contains(out, "-\tif (x)\n+\tif (!x)\n"), out)
	code, _, errs := run1("-list", "-id", "0000000000")
	assert.Equal(t, code, 2)
	assert.Assert(t, strings.Contains(errs, "no mutant 0000000000"), errs)
	code, _, errs = run1()
	assert.Equal(t, code, 2)
	assert.Assert(t, strings.Contains(errs, "-dir is required"), errs)
}

// TestParseExpect: one outcome for all, or one per mutant id.
func TestParseExpect(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		bad  bool
	}{
		{in: "killed", want: map[string]string{"": "killed"}},
		{in: "9339abacbc:killed,f5c3ccd6c2:survived", want: map[string]string{"9339abacbc": "killed", "f5c3ccd6c2": "survived"}},
		{in: "9339abacbc:", bad: true},
		{in: "a:killed,a:survived", bad: true},
		{in: "a:kiled", bad: true},
		{in: "", want: map[string]string{}},
	} {
		got, err := parseExpect(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("parseExpect(%q): error %v, want error %t", tc.in, err, tc.bad)
			continue
		}
		if !tc.bad && !maps.Equal(got, tc.want) {
			t.Errorf("parseExpect(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// mutantsFakeMake builds a "kernel" that is the source's text; the fake
// suite fails its one leaf on a kernel that says "if (!x)".
const mutantsFakeMake = `#!/bin/sh
while [ $# -gt 0 ]; do
	case $1 in
	-C) src=$2; shift ;;
	O=*) build=${1#O=} ;;
	esac
	shift
done
mkdir -p "$build/fs/notify" "$build/arch/x86/boot"
cat "$src"/fs/notify/*.c > "$build/fs/notify/a.o"
cp "$build/fs/notify/a.o" "$build/arch/x86/boot/bzImage"
echo CONFIG_FANOTIFY=y > "$build/.config"
`

const mutantsFakeSuite = `#!/bin/sh
while [ $# -gt 0 ]; do
	case $1 in
	-kernel) kernel=$2; shift ;;
	-results) dir=$2; shift ;;
	esac
	shift
done
mkdir -p "$dir"
st=pass; rc=0
if grep -q 'if (!x)' "$kernel"; then st=fail; rc=1; fi
echo '{"suite":"fsnsuite","start":"2026-01-01T00:00:00Z"}' > "$dir/run.json"
echo '{"version":"TAP version 13","status":"'$st'","plan":1,"children":[{"name":"b","number":1,"status":"'$st'","plan":1,"children":[{"name":"a","number":1,"status":"'$st'","plan":-1}]}]}' > "$dir/results.json"
exit $rc
`

// TestMutantsResume: a run's report can be resumed (its verdicts kept, no
// mutant run again); a resume whose baseline differs is refused and leaves
// the interrupted run's mutants.json as it was; a report of another run
// (other inputs) is refused unless -resume-force.
func TestMutantsResume(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	assert.NilError(t, os.MkdirAll(bin, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "make"), []byte(mutantsFakeMake), 0o755))
	suite := filepath.Join(bin, "fsnsuite")
	assert.NilError(t, os.WriteFile(suite, []byte(mutantsFakeSuite), 0o755))
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	ksrc, dir := filepath.Join(root, "ksrc"), filepath.Join(root, "dir")
	src := "int f(int x)\n{\n\tif (x)\n\t\treturn -EINVAL;\n\treturn 0;\n}\n"
	for _, d := range []string{ksrc, filepath.Join(dir, "src")} {
		assert.NilError(t, os.MkdirAll(filepath.Join(d, "fs/notify"), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(d, "fs/notify/a.c"), []byte(src), 0o644))
	}
	// As scripts/mutants/build-kernel.sh leaves it: configured.
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "build"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "build", ".config"), []byte("CONFIG_FANOTIFY=y\n"), 0o644))
	results := filepath.Join(root, "results")
	run1 := func(args ...string) (int, string) {
		var out, errb strings.Builder
		code := run(append([]string{"mutants", "-ksrc", ksrc, "-dir", dir, "-suite", suite, "-results", results, "-n", "0", "-no-stages"}, args...), &out, &errb)
		return code, errb.String()
	}
	code, errs := run1()
	assert.Equal(t, code, 0, errs)
	report := filepath.Join(results, "mutants.json")
	full, err := os.ReadFile(report)
	assert.NilError(t, err)
	var rep struct {
		Mutants []struct{ ID, Outcome string }
		Inputs  map[string]string
	}
	assert.NilError(t, json.Unmarshal(full, &rep))
	assert.Equal(t, len(rep.Mutants), 3)
	assert.Equal(t, rep.Inputs["vm_cpus"], "2")

	// Resumed: every verdict kept, none run again.
	code, errs = run1("-resume")
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, strings.Contains(errs, "keeping the 3 mutants"), errs)
	for _, m := range rep.Mutants {
		_, err := os.Stat(filepath.Join(results, m.ID, "run"))
		assert.NilError(t, err)
	}

	// A baseline that differs from the report's: refused, report untouched.
	var doc map[string]any
	assert.NilError(t, json.Unmarshal(full, &doc))
	doc["baseline"].(map[string]any)["leaves"] = 99.0
	doctored, err := json.Marshal(doc)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(report, doctored, 0o644))
	code, errs = run1("-resume")
	assert.Equal(t, code, 2, errs)
	assert.Assert(t, strings.Contains(errs, "cannot resume"), errs)
	after, err := os.ReadFile(report)
	assert.NilError(t, err)
	assert.Equal(t, string(after), string(doctored), "a refused resume rewrote the interrupted run's report")

	// Other inputs (VM memory): refused, then kept with -resume-force.
	assert.NilError(t, os.WriteFile(report, full, 0o644))
	code, errs = run1("-resume", "-vm-mem", "4096")
	assert.Equal(t, code, 2, errs)
	assert.Assert(t, strings.Contains(errs, "input vm_mem"), errs)
	code, errs = run1("-resume", "-resume-force", "-vm-mem", "4096")
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, strings.Contains(errs, "kept although input vm_mem"), errs)
}
