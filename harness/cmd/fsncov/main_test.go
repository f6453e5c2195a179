package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fsnsuite/fsnsuite/harness/coverage"
)

// gcovProg builds the test program and returns the tree, the build
// directory, the gcda directory, a shell runner in the build directory and
// a snapshot taker (the counters so far, as the guest copies them, under
// gcda/NAME).
func gcovProg(t *testing.T) (root, src, build, gcda string, sh func(string), snap func(string)) {
	t.Helper()
	for _, tool := range []string{"gcc", "gcov"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (scripts/coverage/deps.sh installs it)", tool)
		}
	}
	root = t.TempDir()
	src, build, gcda = filepath.Join(root, "src"), filepath.Join(root, "build"), filepath.Join(root, "gcda")
	prog := "int a(void) { return 1; }\n" +
		"int b(void) { return 2; }\n" +
		"int main(int argc, char **argv)\n" +
		"{\n" +
		"\tif (argc > 1)\n" +
		"\t\treturn b() - 2;\n" +
		"\treturn a() - 1;\n" +
		"}\n"
	for _, d := range []string{filepath.Join(src, "fs/notify"), filepath.Join(build, "fs/notify")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, "fs/notify/group.c"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	sh = func(script string) {
		t.Helper()
		cmd := exec.Command("sh", "-ec", script)
		cmd.Dir = build
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
	sh("gcc -O0 --coverage -c " + filepath.Join(src, "fs/notify/group.c") + " -o fs/notify/group.o && gcc --coverage fs/notify/group.o -o prog")
	snap = func(name string) {
		t.Helper()
		d := filepath.Join(gcda, name, strings.TrimPrefix(build, "/"), "fs/notify")
		sh("mkdir -p " + d + " && cp fs/notify/group.gcda " + d + "/")
	}
	return root, src, build, gcda, sh, snap
}

// report runs fsncov on the snapshots with a patch that changes both of
// the program's functions, and returns the report and the lines.json path.
func report(t *testing.T, root, src, build, gcda string, functions bool) (*strings.Builder, string) {
	t.Helper()
	patch := filepath.Join(root, "patch.diff")
	if err := os.WriteFile(patch, []byte("--- a/fs/notify/group.c\n+++ b/fs/notify/group.c\n@@ -1,2 +1,2 @@\n-x\n-y\n+int a(void) { return 1; }\n+int b(void) { return 2; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &strings.Builder{}
	lines := filepath.Join(root, "lines.json")
	if err := run(out, build, src, gcda, patch, "gcov", lines, functions); err != nil {
		t.Fatal(err)
	}
	return out, lines
}

// TestRunSnapshots drives fsncov as make coverage does, on a tiny program
// built like fs/notify (source tree and build directory apart, --coverage):
// run once (the "boot" snapshot), run again on the other path (the "suite"
// snapshot: gcov adds to the .gcda), then report with a patch touching both
// functions. From the program's source: the suite ran b() only; a() ran at
// boot only.
func TestRunSnapshots(t *testing.T) {
	root, src, build, gcda, sh, snap := gcovProg(t)
	sh("./prog")
	snap("boot")
	sh("./prog suite")
	snap("suite")
	out, lines := report(t, root, src, build, gcda, true)
	f, err := os.Open(lines)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ld, err := coverage.ReadLines(f)
	if err != nil {
		t.Fatal(err)
	}
	g := ld.Files["fs/notify/group.c"]
	if g.SHA256 == "" || !reflect.DeepEqual(g.Lines[1], coverage.LineCount{Suite: 0, Boot: 1}) || !reflect.DeepEqual(g.Lines[2], coverage.LineCount{Suite: 1, Boot: 0}) {
		t.Errorf("lines.json for group.c: %+v, want line 1 at boot only, line 2 once in the suite", g)
	}
	t.Logf("report:\n%s", out.String())
	for _, want := range []string{
		"fs/notify/group.c:1: NOT EXECUTED (in a, ran 1 times at boot only)",
		"fs/notify/group.c:2: executed (1 times, in b)",
		"a (1-1, ran at boot only)",
		"verdict: 1 of the 2 changed lines with code ran (50.0 %)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestRunBinarySnapshots: with a snapshot after each binary (the runner's
// FSNSUITE_GCOV_SNAPSHOTS), each changed line names the binaries during
// which it ran: b() ran during "alpha", a() during "beta" (and at boot).
func TestRunBinarySnapshots(t *testing.T) {
	root, src, build, gcda, sh, snap := gcovProg(t)
	sh("./prog")
	snap("boot")
	sh("./prog suite")
	snap("bin/00-alpha")
	sh("./prog")
	snap("bin/01-beta")
	snap("suite")
	out, lines := report(t, root, src, build, gcda, false)
	for _, want := range []string{
		"fs/notify/group.c:1: executed (1 times, in a; by beta 1)",
		"fs/notify/group.c:2: executed (1 times, in b; by alpha 1)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	f, err := os.Open(lines)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ld, err := coverage.ReadLines(f)
	if err != nil {
		t.Fatal(err)
	}
	if by := ld.Files["fs/notify/group.c"].Lines[2].By; len(by) != 1 || by["alpha"] != 1 {
		t.Errorf("lines.json line 2 by %v, want alpha 1", by)
	}
}
