package main

import (
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
