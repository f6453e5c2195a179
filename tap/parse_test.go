package tap

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"
)

// dump renders a tree one node per line, indented by depth, for goldens that
// a reviewer can check by eye.
func dump(n *Node) string {
	var b strings.Builder
	var rec func(n *Node, depth int)
	rec = func(n *Node, depth int) {
		ind := strings.Repeat("  ", depth)
		if depth == 0 {
			fmt.Fprintf(&b, "root")
		} else {
			fmt.Fprintf(&b, "%s%d %s %q", ind, n.Number, n.Status, n.Name)
		}
		if n.Directive != "" {
			fmt.Fprintf(&b, " directive=%s", n.Directive)
		}
		if n.Reason != "" {
			fmt.Fprintf(&b, " reason=%q", n.Reason)
		}
		if n.Version != "" {
			fmt.Fprintf(&b, " version=%q", n.Version)
		}
		if n.Plan >= 0 {
			fmt.Fprintf(&b, " plan=%d", n.Plan)
		}
		if n.SkipAll != "" {
			fmt.Fprintf(&b, " skip_all=%q", n.SkipAll)
		}
		if n.BailOut != "" {
			fmt.Fprintf(&b, " bail_out=%q", n.BailOut)
		}
		if n.Failed() {
			b.WriteString(" FAILED")
		}
		b.WriteString("\n")
		for _, d := range n.Diagnostics {
			fmt.Fprintf(&b, "%s  # %s\n", ind, d)
		}
		for _, y := range n.YAML {
			fmt.Fprintf(&b, "%s  yaml: %s\n", ind, y)
		}
		for _, p := range n.Problems {
			fmt.Fprintf(&b, "%s  problem: %s\n", ind, p)
		}
		for _, c := range n.Children {
			rec(c, depth+1)
		}
	}
	rec(n, 0)
	return b.String()
}

func parseFile(t *testing.T, name string) *Node {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	assert.NilError(t, err)
	defer f.Close()
	root, err := Parse(f)
	assert.NilError(t, err)
	return root
}

func TestParseDialects(t *testing.T) {
	tests := []struct {
		input  string
		failed bool
	}{
		{input: "tap13_nested.tap", failed: true},
		{input: "ktap_nested.ktap", failed: true},
		{input: "kselftest_wrapped.tap", failed: true},
		{input: "truncated.tap", failed: true},
		{input: "bailout.tap", failed: true},
		{input: "noplan.tap", failed: true},
		{input: "all_pass.tap", failed: false},
		{input: "skip_all.tap", failed: false},
		{input: "nodetap_style.tap", failed: false},
	}
	for _, tc := range tests {
		t.Run(tc.input, func(t *testing.T) {
			root := parseFile(t, tc.input)
			golden.Assert(t, dump(root), tc.input+".parse.golden")
			assert.Equal(t, root.Failed(), tc.failed)
		})
	}
}

func TestParseResultLines(t *testing.T) {
	tests := []struct {
		line      string
		status    Status
		name      string
		directive Directive
		reason    string
	}{
		{"ok 1 a", StatusPass, "a", "", ""},
		{"not ok 1 - a", StatusFail, "a", "", ""},
		{"ok 1 a # SKIP why not", StatusSkip, "a", Skip, "why not"},
		{"ok 1 a # skip", StatusSkip, "a", Skip, ""},
		{"ok 1 a # Skipped: no tmpfs", StatusSkip, "a", Skip, "no tmpfs"},
		{"not ok 1 a # TODO later", StatusTodo, "a", Todo, "later"},
		{"not ok 1 a # TIMEOUT 30 seconds", StatusTimeout, "a", Timeout, "30 seconds"},
		{"ok 1 a # XFAIL known bug", StatusXFail, "a", XFail, "known bug"},
		{"not ok 1 a # ERROR probe broke", StatusError, "a", Error, "probe broke"},
		{`ok 1 a \# b`, StatusPass, "a # b", "", ""},
		{"ok 1 a # time=12ms", StatusPass, "a", "", ""},
		{"ok", StatusPass, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			root := ParseString("1..1\n" + tc.line + "\n")
			assert.Equal(t, len(root.Children), 1)
			c := root.Children[0]
			assert.Equal(t, c.Status, tc.status)
			assert.Equal(t, c.Name, tc.name)
			assert.Equal(t, c.Directive, tc.directive)
			assert.Equal(t, c.Reason, tc.reason)
			assert.Equal(t, c.Number, 1)
		})
	}
}

// writeSample drives a Writer the way the harness does.
func writeSample(w *Writer) {
	w.Version()
	w.Plan(4)
	w.Diag("checks create")
	w.Result(Result{OK: true, Name: "create.tmpfs"})
	sub := w.Sub("rename")
	sub.Result(Result{OK: true, Name: "same_dir"})
	sub.Diag("want: IN_MOVED_TO\ngot:  nothing")
	sub.Result(Result{OK: false, Name: "cross_dir"})
	inner := sub.Sub("deep")
	inner.Result(Result{OK: true, Name: "leaf", Directive: Skip, Reason: "needs # ext4"})
	sub.EndSub(inner, Result{OK: true})
	w.EndSub(sub, Result{OK: false})
	w.Result(Result{OK: true, Name: "evictable", Directive: Skip, Reason: "FAN_MARK_EVICTABLE not supported (EINVAL)"})
	w.Result(Result{OK: false, Name: "slow", Directive: Timeout, Reason: "30 seconds"})
}

func TestWriterGolden(t *testing.T) {
	for _, f := range []Format{TAP13, KTAP} {
		name := map[Format]string{TAP13: "writer_tap13.golden", KTAP: "writer_ktap.golden"}[f]
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			writeSample(NewWriter(&buf, f))
			golden.Assert(t, buf.String(), name)
		})
	}
}

func TestRoundTrip(t *testing.T) {
	for _, f := range []Format{TAP13, KTAP} {
		t.Run(fmt.Sprint(f), func(t *testing.T) {
			var buf bytes.Buffer
			writeSample(NewWriter(&buf, f))
			root := ParseString(buf.String())
			assert.Equal(t, len(root.Problems), 0, "problems: %v", root.Problems)
			assert.Equal(t, root.Plan, 4)
			type leaf struct {
				Path   string
				Status Status
				Reason string
			}
			var got []leaf
			root.Walk(func(p []string, l *Node) {
				got = append(got, leaf{strings.Join(p, "/"), l.Status, l.Reason})
			})
			want := []leaf{
				{"create.tmpfs", StatusPass, ""},
				{"rename/same_dir", StatusPass, ""},
				{"rename/cross_dir", StatusFail, ""},
				{"rename/deep/leaf", StatusSkip, "needs # ext4"},
				{"evictable", StatusSkip, "FAN_MARK_EVICTABLE not supported (EINVAL)"},
				{"slow", StatusTimeout, "30 seconds"},
			}
			assert.DeepEqual(t, got, want)
			assert.DeepEqual(t, root.Children[0].Diagnostics, []string{"checks create"})
			assert.DeepEqual(t, root.Children[1].Children[1].Diagnostics, []string{"want: IN_MOVED_TO", "got:  nothing"})
		})
	}
}

func TestProveAcceptsWriter(t *testing.T) {
	prove, err := exec.LookPath("prove")
	if err != nil {
		t.Skip("prove (perl Test::Harness) not installed")
	}
	tests := []struct {
		name  string
		write func(w *Writer)
		ok    bool
	}{
		{"all_pass", func(w *Writer) {
			w.Version()
			w.Plan(2)
			w.Result(Result{OK: true, Name: "a"})
			s := w.Sub("b")
			s.Result(Result{OK: true, Name: "b1"})
			s.Result(Result{OK: true, Name: "b2", Directive: Skip, Reason: "no ext4"})
			w.EndSub(s, Result{OK: true})
		}, true},
		{"skip_all", func(w *Writer) {
			w.Version()
			w.SkipAll("requires root")
		}, true},
		{"with_failure", writeSample, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			tc.write(NewWriter(&buf, TAP13))
			script := filepath.Join(t.TempDir(), tc.name+".t")
			assert.NilError(t, os.WriteFile(script, []byte("#!/bin/sh\ncat <<'EOF'\n"+buf.String()+"EOF\n"), 0o755))
			cmd := exec.Command(prove, "-v", "--exec", "/bin/sh", script)
			out, err := cmd.CombinedOutput()
			t.Logf("prove output:\n%s", out)
			if tc.ok {
				assert.NilError(t, err)
				assert.Assert(t, !bytes.Contains(out, []byte("Parse errors")))
			} else {
				assert.Assert(t, err != nil, "prove accepted a failing stream")
				assert.Assert(t, !bytes.Contains(out, []byte("Parse errors")), "prove found parse errors")
			}
		})
	}
}

func TestReports(t *testing.T) {
	root := parseFile(t, "tap13_nested.tap")
	// A runner-shaped tree: binaries at the top.
	bin := &Node{Name: "inotify_basic", Number: 1, Status: StatusFail, Plan: root.Plan, Children: root.Children, Duration: 1500 * time.Millisecond}
	skipped := &Node{Name: "fanotify_perm", Number: 2, Status: StatusSkip, Directive: Skip, Reason: "requires root", Plan: 0, SkipAll: "requires root"}
	crashed := parseFile(t, "truncated.tap")
	crashBin := &Node{Name: "fanotify_ignore", Number: 3, Status: StatusFail, Plan: crashed.Plan, Children: crashed.Children, Problems: crashed.Problems,
		Diagnostics: []string{"fanotify_ignore: exit status 2"}}
	top := &Node{Plan: 3, Version: "TAP version 13", Children: []*Node{bin, skipped, crashBin}}

	var junit bytes.Buffer
	assert.NilError(t, WriteJUnit(&junit, top, "fsnsuite"))
	golden.Assert(t, junit.String(), "report.junit.golden")

	var js bytes.Buffer
	assert.NilError(t, WriteJSON(&js, top))
	golden.Assert(t, js.String(), "report.json.golden")
}

// FuzzParse checks that no input makes Parse panic or lose a planned point.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.*tap"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		root := ParseString(s)
		if root.Plan > 0 && root.Plan <= maxMissing && len(root.Children) < root.Plan {
			t.Errorf("plan 1..%d but only %d children: missing points not filled in", root.Plan, len(root.Children))
		}
		var buf bytes.Buffer
		if err := WriteJUnit(&buf, root, "fuzz"); err != nil {
			t.Errorf("WriteJUnit: %v", err)
		}
		if err := WriteJSON(&buf, root); err != nil {
			t.Errorf("WriteJSON: %v", err)
		}
	})
}

// TestJUnitSchemaRules checks the JUnit writer against junit-10.xsd's rules
// (CheckJUnit), and that CheckJUnit itself catches each broken rule.
func TestJUnitSchemaRules(t *testing.T) {
	for _, name := range []string{"tap13_nested.tap", "truncated.tap", "ktap_nested.ktap", "bailout.tap", "nodetap_style.tap"} {
		t.Run(name, func(t *testing.T) {
			st := parseFile(t, name)
			top := &Node{Plan: 1, Children: []*Node{{Name: "bin", Number: 1, Status: StatusFail, Plan: st.Plan, Children: st.Children, Problems: st.Problems}}}
			var buf bytes.Buffer
			assert.NilError(t, WriteJUnit(&buf, top, "fsnsuite"))
			assert.DeepEqual(t, CheckJUnit(&buf), []string(nil))
		})
	}
	broken := []struct{ name, doc, want string }{
		{"skipped_on_testsuites", `<testsuites skipped="1"></testsuites>`, `<testsuites>: attribute "skipped" is not allowed`},
		{"no_time", `<testsuites><testsuite name="a" tests="1"><testcase name="x"/></testsuite></testsuites>`, `attribute "time" is required`},
		{"slash_in_name", `<testsuites><testsuite name="a" tests="1"><testcase name="a/b" time="0"/></testsuite></testsuites>`, `name "a/b" is not a dotted path`},
		{"missing_style_name", `<testsuites><testsuite name="a" tests="1"><testcase name="#169 (missing)" time="0"/></testsuite></testsuites>`, `is not a dotted path`},
		{"bad_nesting", `<testsuites><testcase name="a" time="0"/></testsuites>`, `<testcase> is not allowed inside <testsuites>`},
	}
	for _, tc := range broken {
		t.Run(tc.name, func(t *testing.T) {
			errs := CheckJUnit(strings.NewReader(tc.doc))
			assert.Assert(t, len(errs) > 0 && strings.Contains(strings.Join(errs, "\n"), tc.want), "got %q", errs)
		})
	}
}

// A case reported, not gated, passes in JUnit and is named by a property of
// its testsuite (junit-10.xsd has no properties on a testcase; CheckJUnit
// would refuse them there).
func TestJUnitReportedProperty(t *testing.T) {
	st := ParseString("1..2\n# measurement: ratio 1.2 ratio [1.1,1.3]\n# reported, not gated: ratio 1.2000 [1.1000,1.3000]\nok 1 info.tmpfs\n# gate: ratio <= 1.03\nok 2 gated.tmpfs\n")
	top := &Node{Plan: 1, Children: []*Node{{Name: "perf_x", Number: 1, Status: StatusPass, Plan: st.Plan, Children: st.Children}}}
	var buf bytes.Buffer
	assert.NilError(t, WriteJUnit(&buf, top, "fsnsuite"))
	doc := buf.String()
	assert.Check(t, strings.Contains(doc, "<properties>\n      <property name=\"reported_not_gated\" value=\"info.tmpfs\"></property>\n    </properties>\n    <testcase name=\"info.tmpfs\""), doc)
	assert.Equal(t, strings.Count(doc, "<property "), 1)
	assert.DeepEqual(t, CheckJUnit(strings.NewReader(doc)), []string(nil))
	errs := CheckJUnit(strings.NewReader(`<testsuites><testsuite name="a" tests="1"><testcase name="x" time="0"><properties/></testcase></testsuite></testsuites>`))
	assert.Assert(t, len(errs) == 1 && strings.Contains(errs[0], "<properties> is not allowed inside <testcase>"), "%q", errs)

	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import junitparser").Run(); err != nil {
		t.Skip("python3-junitparser not installed (scripts/deps.sh installs it)")
	}
	p := filepath.Join(t.TempDir(), "junit.xml")
	assert.NilError(t, os.WriteFile(p, buf.Bytes(), 0o644))
	out, err := exec.Command(py, "-c", `import sys, junitparser
for suite in junitparser.JUnitXml.fromfile(sys.argv[1]):
    print([(p.name, p.value) for p in suite.properties()], [(c.name, c.is_passed) for c in suite])`, p).CombinedOutput()
	assert.NilError(t, err, "%s", out)
	assert.Equal(t, strings.TrimSpace(string(out)), "[('reported_not_gated', 'info.tmpfs')] [('info.tmpfs', True), ('gated.tmpfs', True)]")
}

// TestJUnitparser reads our JUnit with Debian's python3-junitparser, the
// library CI glue scripts commonly use (skipped where it is not installed).
func TestJUnitparser(t *testing.T) {
	// Debian's own python3, where python3-junitparser installs (a pyenv
	// earlier on PATH would not see it).
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import junitparser").Run(); err != nil {
		t.Skip("python3-junitparser not installed (scripts/deps.sh installs it)")
	}
	st := parseFile(t, "truncated.tap")
	top := &Node{Plan: 1, Children: []*Node{{Name: "bin", Number: 1, Status: StatusFail, Plan: st.Plan, Children: st.Children, Problems: st.Problems}}}
	p := filepath.Join(t.TempDir(), "junit.xml")
	f, err := os.Create(p)
	assert.NilError(t, err)
	assert.NilError(t, WriteJUnit(f, top, "fsnsuite"))
	assert.NilError(t, f.Close())
	script := `import sys, junitparser
x = junitparser.JUnitXml.fromfile(sys.argv[1])
n = 0
for suite in x:
    for case in suite:
        assert case.name and case.time is not None, case
        n += 1
print(n)`
	out, err := exec.Command(py, "-c", script, p).CombinedOutput()
	assert.NilError(t, err, "%s", out)
	// truncated.tap: six leaves (three reported, three missing) and the
	// binary_verdict case that carries the broken plan.
	assert.Equal(t, strings.TrimSpace(string(out)), "7")
}

// A real run's junit.xml meets the same rules and junitparser reads every
// testcase (by hand: FSNSUITE_JUNIT=results/latest/junit.xml go test
// -run TestJUnitOfFile ./tap).
func TestJUnitOfFile(t *testing.T) {
	p := os.Getenv("FSNSUITE_JUNIT")
	if p == "" {
		t.Skip("set FSNSUITE_JUNIT=FILE to check a real run's junit.xml")
	}
	f, err := os.Open(p)
	assert.NilError(t, err)
	defer f.Close()
	assert.DeepEqual(t, CheckJUnit(f), []string(nil))
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import junitparser").Run(); err != nil {
		t.Skip("python3-junitparser not installed (scripts/deps.sh installs it)")
	}
	out, err := exec.Command(py, "-c", `import sys, junitparser
x = junitparser.JUnitXml.fromfile(sys.argv[1])
n, st = 0, {}
for suite in x:
    for case in suite:
        assert case.name and case.time is not None, case
        k = type(case.result[0]).__name__ if case.result else "passed"
        st[k] = st.get(k, 0) + 1
        n += 1
print(n, sorted(st.items()))`, p).CombinedOutput()
	assert.NilError(t, err, "%s", out)
	t.Logf("junitparser: %s", out)
}

// TestResultLine decodes single result lines as Parse decodes them.
func TestResultLine(t *testing.T) {
	for _, tc := range []struct {
		line   string
		ok     bool
		name   string
		status Status
	}{
		{"    not ok 73 a.b.ext4 # TIMEOUT 120 seconds", true, "a.b.ext4", StatusTimeout},
		{"ok 2 - lone", true, "lone", StatusPass},
		{"        not ok 1 x # SKIP gone", true, "x", StatusSkip},
		{"    not ok 2 y # TODO later", true, "y", StatusTodo},
		{"    not ok 3 z", true, "z", StatusFail},
		{"    # not ok 2 lone", false, "", 0},
		{"    1..3", false, "", 0},
	} {
		n, ok := ResultLine(tc.line)
		if ok != tc.ok {
			t.Errorf("%q: ok %v, want %v", tc.line, ok, tc.ok)
			continue
		}
		if ok && (n.Name != tc.name || n.Status != tc.status) {
			t.Errorf("%q: name %q status %v, want %q %v", tc.line, n.Name, n.Status, tc.name, tc.status)
		}
	}
}
