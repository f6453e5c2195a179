package coverage

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Two objects as gcov --json-format prints them (format_version 1, gcc 12):
// mark.c compiled in /b with a relative source path, fanotify.c with an
// absolute one; both include the same header, whose inline function ran in
// one object only, and one names a file outside the tree.
const twoDocs = `{"format_version": "1", "gcc_version": "12.2.0", "current_working_directory": "/b", "data_file": "fs/notify/mark.gcda",
 "files": [
  {"file": "../src/fs/notify/mark.c",
   "functions": [{"name": "add", "start_line": 10, "end_line": 14, "execution_count": 3, "blocks": 2, "blocks_executed": 2},
                 {"name": "remove", "start_line": 20, "end_line": 22, "execution_count": 0, "blocks": 1, "blocks_executed": 0}],
   "lines": [{"line_number": 10, "count": 3, "function_name": "add", "unexecuted_block": false, "branches": []},
             {"line_number": 12, "count": 3, "function_name": "add", "unexecuted_block": false, "branches": []},
             {"line_number": 13, "count": 0, "function_name": "add", "unexecuted_block": true, "branches": []},
             {"line_number": 20, "count": 0, "function_name": "remove", "unexecuted_block": true, "branches": []},
             {"line_number": 21, "count": 0, "function_name": "remove", "unexecuted_block": true, "branches": []}]},
  {"file": "/src/include/linux/fsnotify_backend.h",
   "functions": [{"name": "inl", "start_line": 5, "end_line": 6, "execution_count": 0}],
   "lines": [{"line_number": 5, "count": 0, "function_name": "inl"}, {"line_number": 6, "count": 0, "function_name": "inl"}]}
 ]}
{"format_version": "1", "gcc_version": "12.2.0", "current_working_directory": "/b", "data_file": "fs/notify/fanotify/fanotify.gcda",
 "files": [
  {"file": "/src/fs/notify/fanotify/fanotify.c",
   "functions": [{"name": "handle", "start_line": 1, "end_line": 3, "execution_count": 1}],
   "lines": [{"line_number": 1, "count": 1, "function_name": "handle"}, {"line_number": 2, "count": 1, "function_name": "handle"}]},
  {"file": "/src/include/linux/fsnotify_backend.h",
   "functions": [{"name": "inl", "start_line": 5, "end_line": 6, "execution_count": 2}],
   "lines": [{"line_number": 5, "count": 2, "function_name": "inl"}, {"line_number": 6, "count": 0, "function_name": "inl"}]},
  {"file": "/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h", "functions": [], "lines": [{"line_number": 1, "count": 9}]},
  {"file": "/src/include/linux/list.h", "functions": [], "lines": [{"line_number": 1, "count": 9}, {"line_number": 2, "count": 0}]}
 ]}
{"format_version": "1", "current_working_directory": "/b", "data_file": "fs/notify/dnotify/dnotify.gcda",
 "files": [{"file": "/src/fs/notify/dnotify/dnotify.c",
   "functions": [{"name": "dn", "start_line": 1, "end_line": 2, "execution_count": 0}],
   "lines": [{"line_number": 1, "count": 0, "function_name": "dn"}]}]}
`

func profile(t *testing.T) *Profile {
	t.Helper()
	p := NewProfile()
	if err := p.Add(strings.NewReader(twoDocs), TreeRel("/src")); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProfileMerge(t *testing.T) {
	p := profile(t)
	if diff := cmp.Diff([]string{
		"fs/notify/dnotify/dnotify.c", "fs/notify/fanotify/fanotify.c", "fs/notify/mark.c", "include/linux/fsnotify_backend.h", "include/linux/list.h",
	}, p.Paths(nil)); diff != "" {
		t.Errorf("paths (-want +got; the relative source path is joined with the compile directory, stddef.h is outside /src):\n%s", diff)
	}
	mark := p.Files["fs/notify/mark.c"]
	// 5 instrumented lines, lines 10 and 12 ran; add entered, remove not.
	if got, want := mark.LineCounts(), (Counts{Hit: 2, Total: 5}); got != want {
		t.Errorf("mark.c lines: got %v, want %v", got, want)
	}
	if got, want := mark.FuncCounts(), (Counts{Hit: 1, Total: 2}); got != want {
		t.Errorf("mark.c functions: got %v, want %v", got, want)
	}
	if got, want := mark.FuncLines("add"), (Counts{Hit: 2, Total: 3}); got != want {
		t.Errorf("mark.c add() lines: got %v, want %v", got, want)
	}
	// The header's inline function: counts add up over both objects.
	h := p.Files["include/linux/fsnotify_backend.h"]
	if got := h.Funcs["inl"].Count; got != 2 {
		t.Errorf("inl entered %d times over both objects, want 2", got)
	}
	if got, want := h.LineCounts(), (Counts{Hit: 1, Total: 2}); got != want {
		t.Errorf("header lines: got %v, want %v", got, want)
	}
	// Without dnotify: mark.c (2/5) + fanotify.c (2/2); functions 1/2 + 1/1.
	lines, funcs := p.Total(InNotify)
	if lines != (Counts{Hit: 4, Total: 7}) || funcs != (Counts{Hit: 2, Total: 3}) {
		t.Errorf("fs/notify without dnotify: lines %v, functions %v; want 4/7 and 2/3", lines, funcs)
	}
}

func TestProfileAddRejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":     "",
		"not_gcov":  `{"files": []}`,
		"truncated": `{"format_version": "1", "files": [`,
	} {
		if err := NewProfile().Add(strings.NewReader(in), TreeRel("/src")); err == nil {
			t.Errorf("%s: Add accepted %q", name, in)
		}
	}
}

func TestReport(t *testing.T) {
	p := profile(t)
	var sum strings.Builder
	if err := p.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"fs/notify/mark.c 2/5 40.0 % 1/2 50.0 %",
		"fs/notify without dnotify 4/7 57.1 % 2/3 66.7 %",
		"fs/notify/dnotify/dnotify.c (apart) 0/1 0.0 % 0/1 0.0 %",
		"include/linux/fsnotify_backend.h (inlined, apart) 1/2 50.0 % 1/1 100.0 %",
		"1 other headers (inlined, apart) 1/2 50.0 % 0/0 0.0 %",
	} {
		if !strings.Contains(squeeze(sum.String()), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
	var un strings.Builder
	n, err := p.WriteUnexecuted(&un, InNotify)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || un.String() != "  fs/notify/mark.c: remove (20-22)\n" {
		t.Errorf("never executed: %d, %q; want remove() of mark.c only (dnotify is apart)", n, un.String())
	}
	var fns strings.Builder
	if err := p.WriteFunctions(&fns, InNotify); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"add 10-14 2/3 66.7 % entered 3", "remove 20-22 0/2 0.0 % entered 0 never executed"} {
		if !strings.Contains(squeeze(fns.String()), want) {
			t.Errorf("functions lack %q:\n%s", want, fns.String())
		}
	}
}

// squeeze collapses runs of blanks, so tabwriter's padding does not matter.
func squeeze(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

// A diff as `git diff -U0 BASE` prints it: a one-line change, an added block,
// a pure deletion, a new file, a deleted file, and a header.
const patch = `diff --git a/fs/notify/mark.c b/fs/notify/mark.c
index 1111111..2222222 100644
--- a/fs/notify/mark.c
+++ b/fs/notify/mark.c
@@ -12 +12 @@ static void add(void)
-	old();
+	new();
@@ -30,0 +31,2 @@ static void other(void)
+	one();
+	two();
@@ -40,3 +41,0 @@ static void other(void)
-	gone();
-	gone();
-	gone();
diff --git a/fs/notify/new.c b/fs/notify/new.c
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/fs/notify/new.c
@@ -0,0 +1,2 @@
+int x;
+int y;
\ No newline at end of file
diff --git a/fs/notify/old.c b/fs/notify/old.c
deleted file mode 100644
--- a/fs/notify/old.c
+++ /dev/null
@@ -1,2 +0,0 @@
-int a;
-int b;
diff --git a/include/linux/fsnotify_backend.h b/include/linux/fsnotify_backend.h
--- a/include/linux/fsnotify_backend.h
+++ b/include/linux/fsnotify_backend.h
@@ -4,4 +4,4 @@
 context4
-	old5
+	new5
 context6
 context7
`

func TestParseDiff(t *testing.T) {
	changes, removals, err := ParseDiff(strings.NewReader(patch))
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{"fs/notify/mark.c", 12, "\tnew();"},
		{"fs/notify/mark.c", 31, "\tone();"},
		{"fs/notify/mark.c", 32, "\ttwo();"},
		{"fs/notify/new.c", 1, "int x;"},
		{"fs/notify/new.c", 2, "int y;"},
		{"include/linux/fsnotify_backend.h", 5, "\tnew5"},
	}
	if diff := cmp.Diff(want, changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	wantRm := []Removal{{Path: "fs/notify/mark.c", After: 41, Lines: 3}}
	if diff := cmp.Diff(wantRm, removals); diff != "" {
		t.Errorf("removals (-want +got; the deleted file has no new lines):\n%s", diff)
	}
	for name, bad := range map[string]string{
		"header":    "+++ b/x.c\n@@ -1 +1 @ x\n",
		"cut_short": "+++ b/x.c\n@@ -1,3 +1,3 @@\n a\n",
		"garbage":   "+++ b/x.c\n@@ -1,2 +1,2 @@\n a\n?b\n",
	} {
		if _, _, err := ParseDiff(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: ParseDiff accepted %q", name, bad)
		}
	}
}

func TestCheck(t *testing.T) {
	p := profile(t)
	got := p.Check([]Change{
		{"fs/notify/mark.c", 12, "ran"},
		{"fs/notify/mark.c", 13, "did not run"},
		{"fs/notify/mark.c", 11, "a comment"},
		{"fs/notify/new.c", 1, "no data"},
		{"include/linux/fsnotify_backend.h", 6, "inline, never ran"},
	})
	var st []Status
	for _, c := range got {
		st = append(st, c.Status)
	}
	if diff := cmp.Diff([]Status{Executed, NotExecuted, NoCode, NotInstrumented, NotExecuted}, st); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := WriteChanges(&b, got, []Removal{{"fs/notify/mark.c", 41, 3}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"fs/notify/mark.c:12: executed (3 times, in add): ran",
		"fs/notify/mark.c:13: NOT EXECUTED (in add): did not run",
		"fs/notify/new.c:1: not instrumented: no data",
		"fs/notify/mark.c: 3 line(s) removed after line 41",
		"verdict: 1 of the 3 changed lines with code ran (33.3 %); 2 not executed; 1 no code; 1 not instrumented",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// TestGcovEndToEnd builds a tiny program the way the kernel builds
// fs/notify (source tree and build directory apart, --coverage), runs it,
// moves its .gcda under a guest-like path, and reads it back through
// FindObjects, RunGcov and Add: the lines and functions the program runs are
// known from its source.
func TestGcovEndToEnd(t *testing.T) {
	for _, tool := range []string{"gcc", "gcov"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (scripts/coverage/deps.sh installs it)", tool)
		}
	}
	root := t.TempDir()
	src, build, guest := filepath.Join(root, "src"), filepath.Join(root, "build"), filepath.Join(root, "guest")
	for _, d := range []string{filepath.Join(src, "fs/notify"), filepath.Join(build, "fs/notify")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	prog := `int called(int x)
{
	if (x > 100)
		return -1;
	return x + 1;
}

int never(void)
{
	return 7;
}

int main(void)
{
	return called(1) == 2 ? 0 : 1;
}
`
	if err := os.WriteFile(filepath.Join(src, "fs/notify/mark.c"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	run(build, "gcc", "-O0", "--coverage", "-c", filepath.Join(src, "fs/notify/mark.c"), "-o", "fs/notify/mark.o")
	run(build, "gcc", "--coverage", "fs/notify/mark.o", "-o", "prog")
	run(build, "./prog")
	// The guest names the data by the build directory's absolute path.
	gdir := filepath.Join(guest, strings.TrimPrefix(build, "/"), "fs/notify")
	if err := os.MkdirAll(gdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(build, "fs/notify/mark.gcda"), filepath.Join(gdir, "mark.gcda")); err != nil {
		t.Fatal(err)
	}
	objs, err := FindObjects(build, guest)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Rel != "fs/notify/mark" {
		t.Fatalf("objects %+v, want fs/notify/mark", objs)
	}
	out, err := RunGcov("", objs)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProfile()
	if err := p.Add(strings.NewReader(string(out)), TreeRel(src)); err != nil {
		t.Fatal(err)
	}
	f := p.Files["fs/notify/mark.c"]
	if f == nil {
		t.Fatalf("no fs/notify/mark.c in %v", p.Paths(nil))
	}
	// main calls called(1) once: lines 3 and 5 run, 4 (x > 100) does not;
	// never() is never entered.
	for line, ran := range map[int]bool{3: true, 4: false, 5: true, 10: false, 15: true} {
		l := f.Lines[line]
		if l == nil || (l.Count > 0) != ran {
			t.Errorf("line %d: got %+v, want ran=%v", line, l, ran)
		}
	}
	if fn := f.Funcs["never"]; fn == nil || fn.Count != 0 || fn.StartLine != 8 {
		t.Errorf("never(): got %+v, want never entered, starting at line 8", fn)
	}
	if fn := f.Funcs["called"]; fn == nil || fn.Count != 1 {
		t.Errorf("called(): got %+v, want entered once", fn)
	}
	// A .gcda from another build is refused, not silently dropped.
	stray := filepath.Join(guest, "other/fs/notify/group.gcda")
	if err := os.MkdirAll(filepath.Dir(stray), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stray, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FindObjects(build, guest); err == nil || !strings.Contains(err.Error(), "another build") {
		t.Errorf("stray .gcda: got %v, want an error", err)
	}
}

func TestSince(t *testing.T) {
	end := profile(t)
	// The baseline: mark.c's add() had been entered twice (line 10 twice,
	// line 12 three times) before the suite started; nothing else had run.
	base := NewProfile()
	if err := base.Add(strings.NewReader(`{"format_version": "1", "current_working_directory": "/b", "files": [
	  {"file": "/src/fs/notify/mark.c",
	   "functions": [{"name": "add", "start_line": 10, "end_line": 14, "execution_count": 2}, {"name": "remove", "start_line": 20, "end_line": 22, "execution_count": 0}],
	   "lines": [{"line_number": 10, "count": 2}, {"line_number": 12, "count": 3}, {"line_number": 20, "count": 0}]}]}`), TreeRel("/src")); err != nil {
		t.Fatal(err)
	}
	p, err := end.Since(base)
	if err != nil {
		t.Fatal(err)
	}
	mark := p.Files["fs/notify/mark.c"]
	// Line 10: 3 at the end - 2 at the start = 1; line 12: 3 - 3 = 0.
	if l := mark.Lines[10]; l.Count != 1 || l.Boot != 2 {
		t.Errorf("line 10: got %+v, want Count 1 Boot 2", *l)
	}
	if l := mark.Lines[12]; l.Count != 0 || l.Boot != 3 {
		t.Errorf("line 12: got %+v, want Count 0 Boot 3", *l)
	}
	if got, want := mark.LineCounts(), (Counts{Hit: 1, Total: 5}); got != want {
		t.Errorf("mark.c lines the suite ran: got %v, want %v", got, want)
	}
	if got, want := p.WithBoot().Files["fs/notify/mark.c"].LineCounts(), (Counts{Hit: 2, Total: 5}); got != want {
		t.Errorf("mark.c lines with boot: got %v, want %v", got, want)
	}
	var un strings.Builder
	if _, err := p.WriteUnexecuted(&un, InNotify); err != nil {
		t.Fatal(err)
	}
	// add() was entered 3-2 = 1 time by the suite; remove() never.
	if un.String() != "  fs/notify/mark.c: remove (20-22)\n" {
		t.Errorf("never executed by the suite: got %q, want remove() only", un.String())
	}
	checked := p.Check([]Change{{"fs/notify/mark.c", 12, "boot only"}})
	var b strings.Builder
	if err := WriteChanges(&b, checked, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "fs/notify/mark.c:12: NOT EXECUTED (in add, ran 3 times at boot only): boot only") {
		t.Errorf("a line run at boot only must say so:\n%s", b.String())
	}
}

func TestSinceRejectsOtherRuns(t *testing.T) {
	// A baseline with more runs than the end: the snapshots are not of one
	// kernel run (or not in that order).
	base := NewProfile()
	if err := base.Add(strings.NewReader(`{"format_version": "1", "files": [
	  {"file": "/src/fs/notify/mark.c", "functions": [], "lines": [{"line_number": 10, "count": 4}]}]}`), TreeRel("/src")); err != nil {
		t.Fatal(err)
	}
	if _, err := profile(t).Since(base); err == nil || !strings.Contains(err.Error(), "not of one run") {
		t.Errorf("got %v, want an error naming the line", err)
	}
}

func TestByString(t *testing.T) {
	by := map[string]int64{"a": 1, "b": 30, "c": 2, "d": 2, "e": 5, "f": 9, "g": 4}
	if got, want := ByString(by), "b 30, f 9, e 5, g 4, c 2, and 2 more"; got != want {
		t.Errorf("ByString = %q, want %q", got, want)
	}
	if got := ByString(map[string]int64{"x": 3}); got != "x 3" {
		t.Errorf("ByString one = %q", got)
	}
}

// A file missing from one per-binary snapshot is counted from the last one
// that has it; positions sort by number.
func TestAttributeBinariesMissingFile(t *testing.T) {
	prof := func(count int64) *Profile {
		return &Profile{Files: map[string]*File{"fs/notify/mark.c": {Path: "fs/notify/mark.c", Lines: map[int]*Line{10: {Count: count}}}}}
	}
	p := prof(9)
	boot := prof(1)
	missing := &Profile{Files: map[string]*File{}}
	p.AttributeBinaries(boot, []*Profile{prof(4), missing, prof(9)}, []string{"a", "b", "c"})
	by := p.Files["fs/notify/mark.c"].Lines[10].By
	if len(by) != 2 || by["a"] != 3 || by["c"] != 5 {
		t.Errorf("By = %v, want a 3, c 5", by)
	}
	dir := t.TempDir()
	for _, d := range []string{"99-x", "100-y", "07-z"} {
		if err := os.MkdirAll(filepath.Join(dir, BinSnapshots, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	snaps, err := BinarySnapshots(dir)
	if err != nil || len(snaps) != 3 || snaps[0].Binary != "z" || snaps[1].Binary != "x" || snaps[2].Binary != "y" {
		t.Errorf("BinarySnapshots = %+v, %v; want z, x, y", snaps, err)
	}
}

func TestBinarySnapshotsFailed(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, BinSnapshots, "00-a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, BinSnapshots, SnapshotFailed), []byte("after a: EIO\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snaps, err := BinarySnapshots(dir)
	if !errors.Is(err, ErrSnapshotsIncomplete) || snaps != nil || !strings.Contains(err.Error(), "after a: EIO") {
		t.Errorf("BinarySnapshots = %v, %v; want ErrSnapshotsIncomplete naming the failure", snaps, err)
	}
}
