package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/tap"
)

// exportRun makes a results directory from fakes shaped like our binaries: a
// pass with nested subtests, skips with reasons (two leaves whose names a
// reason-in-name scheme would collide: LAVA's "_dup"), a failure, a crash, a
// perf case with measurements.
func exportRun(t *testing.T) (*Report, string) {
	t.Helper()
	dir := t.TempDir()
	m1 := tap.Measurement{Name: "none_ns_per_op", Value: 1664, Unit: "ns/op", Lo: 1651, Hi: 1678}
	m2 := tap.Measurement{Name: "ratio", Value: 1.005, Unit: "ratio", Lo: 0.998, Hi: 1.012}
	bins := []Binary{
		fake(t, dir, "inotify_basic", `echo 'TAP version 13'
echo 1..3
echo 'ok 1 create.tmpfs'
echo '    # Subtest: mark_dont_follow.ext4'
echo '    1..2'
echo '    ok 1 dont_follow # SKIP ext4: mkfs.ext4 not found'
echo '    ok 2 follow # SKIP ext4: mkfs.ext4 not found'
echo 'ok 2 mark_dont_follow.ext4 # SKIP ext4: mkfs.ext4 not found'
echo '# want: IN_CREATE'
echo 'not ok 3 delete.tmpfs'
exit 1
`),
		fake(t, dir, "crasher", crashBody),
		fake(t, dir, "perf_modify_overhead", fmt.Sprintf("echo 'TAP version 13'\necho 1..2\necho '# %s'\necho '# %s'\necho 'ok 1 write_watch.tmpfs'\necho '# %s'\necho 'ok 2 read_watch.tmpfs # SKIP undecided: ratio 1.005 [0.998,1.012]'\n", m1, m2, m2)),
	}
	res := filepath.Join(dir, "results")
	rep, err := Run(context.Background(), bins, Options{ResultsDir: res, Timeout: 5 * time.Second})
	assert.NilError(t, err)
	return rep, res
}

// The LAVA results file: one line per leaf and per measurement, stable
// dotted names (no reason, no "_dup"), measurements with units; checked by
// ParseLAVA, the parse the test definition's loop relies on.
func TestLAVAResults(t *testing.T) {
	_, res := exportRun(t)
	f, err := os.Open(filepath.Join(res, "lava.txt"))
	assert.NilError(t, err)
	defer f.Close()
	lines, err := ParseLAVA(f)
	assert.NilError(t, err)
	var got []string
	for _, l := range lines {
		got = append(got, strings.TrimSpace(strings.Join([]string{l.Name, l.Result, l.Measurement, l.Units}, " ")))
	}
	assert.DeepEqual(t, got, []string{
		"inotify_basic.create.tmpfs pass",
		"inotify_basic.mark_dont_follow.ext4.dont_follow skip",
		"inotify_basic.mark_dont_follow.ext4.follow skip",
		"inotify_basic.delete.tmpfs fail",
		"crasher.first pass",
		"crasher.missing_2 fail",
		"crasher.missing_3 fail",
		"perf_modify_overhead.write_watch.tmpfs pass",
		"perf_modify_overhead.write_watch.tmpfs.none_ns_per_op pass 1664 ns/op",
		"perf_modify_overhead.write_watch.tmpfs.ratio pass 1.005 ratio",
		"perf_modify_overhead.read_watch.tmpfs skip",
		"perf_modify_overhead.read_watch.tmpfs.ratio skip 1.005 ratio",
	})
	for _, l := range lines {
		assert.Check(t, !strings.Contains(l.Name, "mkfs") && !strings.Contains(l.Name, "_dup"), l.Name)
	}
	for _, bad := range []string{"a pass\na pass\n", "a b/c pass\n", "a/b pass\n", "a maybe\n", "a pass x ms\n"} {
		_, err := ParseLAVA(strings.NewReader(bad))
		assert.Check(t, err != nil, "accepted %q", bad)
	}
}

// kcidbRules checks a KCIDB I/O document against the rules of the published
// schema (kernelci/kcidb-io, v5.3; read there, restated here): version, the
// test object's required and allowed properties, id and origin formats,
// the dotted path, the status values, no nulls, the log_excerpt limit.
func kcidbRules(doc []byte) []string {
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	var top map[string]any
	if err := json.Unmarshal(doc, &top); err != nil {
		return []string{err.Error()}
	}
	// walk visits every value of the JSON tree with its path.
	var walk func(p string, v any, visit func(p string, v any))
	walk = func(p string, v any, visit func(p string, v any)) {
		visit(p, v)
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(p+"."+k, e, visit)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", p, i), e, visit)
			}
		}
	}
	walk("", top, func(p string, v any) {
		switch x := v.(type) {
		case nil:
			bad("%s is null (the schema allows no nulls)", p)
		case string:
			// Every string property of the schema's objects excludes
			// NUL ("^[^\\0]*$" and the id patterns).
			if strings.ContainsRune(x, 0) {
				bad("%s contains NUL", p)
			}
		}
	})
	for k := range top {
		if !strings.Contains(" version checkouts builds tests issues incidents ", " "+k+" ") {
			bad("top-level property %q not allowed", k)
		}
	}
	v, _ := top["version"].(map[string]any)
	if v == nil || v["major"] != float64(5) {
		bad("version.major must be 5, got %v", v)
	} else if mi, ok := v["minor"].(float64); !ok || mi < 0 || mi > 3 {
		bad("version.minor must be 0..3, got %v", v["minor"])
	}
	origin := regexp.MustCompile(`^[a-z0-9_]+$`)
	originID := regexp.MustCompile(`^[a-z0-9_]+:.*$`)
	path := regexp.MustCompile(`^([a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*)?$`)
	compatible := regexp.MustCompile("^[^ \x00]+(,[^ \x00]+)*$")
	allowed := " _timestamp build_id id origin environment path comment log_url log_excerpt status number start_time duration input_files output_files misc "
	tests, _ := top["tests"].([]any)
	ids := map[string]bool{}
	for i, e := range tests {
		tt, _ := e.(map[string]any)
		for k := range tt {
			if !strings.Contains(allowed, " "+k+" ") {
				bad("tests[%d]: property %q not allowed", i, k)
			}
		}
		for _, k := range []string{"build_id", "id", "origin"} {
			if _, ok := tt[k].(string); !ok {
				bad("tests[%d]: %s is required (a string)", i, k)
			}
		}
		id, _ := tt["id"].(string)
		if !originID.MatchString(id) || !originID.MatchString(fmt.Sprint(tt["build_id"])) || !origin.MatchString(fmt.Sprint(tt["origin"])) {
			bad("tests[%d]: id %q / build_id %v / origin %v do not match origin:... and [a-z0-9_]+", i, id, tt["build_id"], tt["origin"])
		}
		if !strings.HasPrefix(id, fmt.Sprint(tt["origin"])+":") {
			bad("tests[%d]: id %q does not start with its origin", i, id)
		}
		if ids[id] {
			bad("tests[%d]: duplicate id %q", i, id)
		}
		ids[id] = true
		if p, ok := tt["path"].(string); ok && !path.MatchString(p) {
			bad("tests[%d]: path %q breaks the dotted-path rule", i, p)
		}
		if s, ok := tt["status"]; ok && !strings.Contains(" FAIL ERROR MISS PASS DONE SKIP ", " "+fmt.Sprint(s)+" ") {
			bad("tests[%d]: status %v not in FAIL ERROR MISS PASS DONE SKIP", i, s)
		}
		// "number ... Should only be considered when the test has
		// actually executed. That is, with a FAIL, ERROR, PASS, or DONE
		// status only."
		if _, ok := tt["number"]; ok && !strings.Contains(" FAIL ERROR PASS DONE ", " "+fmt.Sprint(tt["status"])+" ") {
			bad("tests[%d]: a number with status %v (FAIL, ERROR, PASS or DONE only)", i, tt["status"])
		}
		for _, k := range []string{"comment", "log_url", "log_excerpt", "start_time", "path", "status"} {
			if v, ok := tt[k]; ok {
				if _, str := v.(string); !str {
					bad("tests[%d]: %s %v is not a string", i, k, v)
				}
			}
		}
		if m, ok := tt["misc"]; ok {
			if _, obj := m.(map[string]any); !obj {
				bad("tests[%d]: misc is not an object", i)
			}
		}
		if d, ok := tt["duration"]; ok {
			if _, num := d.(float64); !num {
				bad("tests[%d]: duration %v is not a number", i, d)
			}
		}
		if st, ok := tt["start_time"].(string); ok {
			if _, err := time.Parse(time.RFC3339, st); err != nil {
				bad("tests[%d]: start_time %q is not a date-time", i, st)
			}
		}
		if l, ok := tt["log_excerpt"].(string); ok && len([]rune(l)) > 16384 {
			bad("tests[%d]: log_excerpt longer than 16384", i)
		}
		if n, ok := tt["number"].(map[string]any); ok {
			if _, num := n["value"].(float64); !num {
				bad("tests[%d]: number.value is required (a number)", i)
			}
			for k := range n {
				if k != "value" && k != "unit" && k != "prefix" {
					bad("tests[%d]: number.%s not allowed", i, k)
				}
			}
			if p, ok := n["prefix"]; ok && p != "metric" && p != "binary" {
				bad("tests[%d]: number.prefix %v not metric or binary", i, p)
			}
		}
		if env, ok := tt["environment"].(map[string]any); ok {
			for k := range env {
				if k != "compatible" && k != "comment" && k != "misc" {
					bad("tests[%d]: environment.%s not allowed", i, k)
				}
			}
			if m, ok := env["misc"]; ok {
				if _, obj := m.(map[string]any); !obj {
					bad("tests[%d]: environment.misc is not an object", i)
				}
			}
			if c, ok := env["compatible"]; ok {
				list, _ := c.([]any)
				for _, e := range list {
					if s, _ := e.(string); !compatible.MatchString(s) {
						bad("tests[%d]: environment.compatible %q", i, e)
					}
				}
				if list == nil {
					bad("tests[%d]: environment.compatible is not an array", i)
				}
			}
		}
	}
	return errs
}

func TestKCIDB(t *testing.T) {
	_, res := exportRun(t)
	r, err := LoadResults(res)
	assert.NilError(t, err)
	assert.Assert(t, r.Info.Kernel != "" && r.Info.Arch != "", "%+v", r.Info)
	var buf bytes.Buffer
	assert.NilError(t, WriteKCIDB(&buf, r, KCIDBOptions{}))
	assert.DeepEqual(t, kcidbRules(buf.Bytes()), []string(nil))

	var doc kcidbDoc
	assert.NilError(t, json.Unmarshal(buf.Bytes(), &doc))
	byPath := map[string]kcidbTest{}
	for _, tt := range doc.Tests {
		byPath[tt.Path] = tt
	}
	assert.Equal(t, len(byPath), 12)
	assert.Equal(t, byPath["fsnsuite.inotify_basic.create.tmpfs"].Status, "PASS")
	assert.Equal(t, byPath["fsnsuite.inotify_basic.delete.tmpfs"].Status, "FAIL")
	assert.Check(t, is.Contains(byPath["fsnsuite.inotify_basic.delete.tmpfs"].LogExcerpt, "want: IN_CREATE"))
	skip := byPath["fsnsuite.inotify_basic.mark_dont_follow.ext4.follow"]
	assert.Equal(t, skip.Status, "SKIP")
	assert.Equal(t, skip.Misc["reason"], "ext4: mkfs.ext4 not found")
	assert.Equal(t, byPath["fsnsuite.crasher.missing_2"].Status, "ERROR")
	ratio := byPath["fsnsuite.perf_modify_overhead.write_watch.tmpfs.ratio"]
	assert.Assert(t, ratio.Number != nil)
	assert.DeepEqual(t, *ratio.Number, kcidbNumber{Value: 1.005, Unit: "ratio"})
	assert.Equal(t, ratio.Status, "DONE", "a figure is a test's main output: DONE")
	// An undecided gate is a skip, but its figure was measured: DONE too
	// (the schema allows a number only with FAIL, ERROR, PASS or DONE).
	assert.Equal(t, byPath["fsnsuite.perf_modify_overhead.read_watch.tmpfs"].Status, "SKIP")
	assert.Equal(t, byPath["fsnsuite.perf_modify_overhead.read_watch.tmpfs.ratio"].Status, "DONE")
	assert.Equal(t, ratio.Environment.Misc["kernel_release"], r.Info.Kernel)

	// The rules catch what they state.
	for _, broken := range []string{
		`{"version":{"major":4,"minor":0}}`,
		`{"version":{"major":5,"minor":3},"tests":[{"id":"x","build_id":"a:b","origin":"a"}]}`,
		`{"version":{"major":5,"minor":3},"tests":[{"id":"a:1","build_id":"a:b","origin":"a","path":"a/b"}]}`,
		`{"version":{"major":5,"minor":3},"tests":[{"id":"a:1","build_id":"a:b","origin":"a","status":"OK"}]}`,
		`{"version":{"major":5,"minor":3},"tests":[{"id":"a:1","build_id":"a:b","origin":"a","comment":null}]}`,
		`{"version":{"major":5,"minor":3},"tests":[{"id":"a:1","build_id":"a:b","origin":"a","reason":"x"}]}`,
		`{"version":{"major":5,"minor":3},"tests":[{"id":"a:1","build_id":"a:b","origin":"a","status":"SKIP","number":{"value":1}}]}`,
		`{"version":{"major":5,"minor":3},"tests":[{"id":"a:1","build_id":"a:b","origin":"a","number":{"value":1,"prefix":"kilo"}}]}`,
		`{"version":{"major":5,"minor":3},"tests":[{"id":"a:1","build_id":"a:b","origin":"a","comment":"a\u0000b"}]}`,
		`{"version":{"major":5,"minor":3},"tests":[{"id":"a:1","build_id":"a:b","origin":"a","misc":"x"}]}`,
		`{"version":{"major":5,"minor":3},"tests":[{"id":"a:1","build_id":"a:b","origin":"a","environment":{"compatible":["a b"]}}]}`,
		`{"version":{"major":5,"minor":4}}`,
	} {
		assert.Check(t, len(kcidbRules([]byte(broken))) > 0, "accepted %s", broken)
	}
	assert.ErrorContains(t, WriteKCIDB(&buf, r, KCIDBOptions{Origin: "Bad Origin"}), "want [a-z0-9_]+")
}

// A case the harness could not set up (harness/setup's "setup:" failure)
// is ERROR in KCIDB: its code was never judged. Any other failure is FAIL.
func TestKCIDBSetupError(t *testing.T) {
	st := tap.ParseString("1..3\n# setup: open /tmp/x/f: no such file or directory\nnot ok 1 marks.tmpfs\n# want: IN_OPEN\nnot ok 2 events.tmpfs\n" +
		"    # Subtest: sub.tmpfs\n    1..1\n    # setup: bind mount /a on /b: EPERM\n    not ok 1 bind\nnot ok 3 sub.tmpfs\n")
	r := &Results{Root: &tap.Node{Children: []*tap.Node{{Name: "inotify_api", Status: tap.StatusFail, Children: st.Children}}}, Info: RunInfo{Kernel: "6.18.0"}}
	var buf bytes.Buffer
	assert.NilError(t, WriteKCIDB(&buf, r, KCIDBOptions{}))
	assert.DeepEqual(t, kcidbRules(buf.Bytes()), []string(nil))
	var doc kcidbDoc
	assert.NilError(t, json.Unmarshal(buf.Bytes(), &doc))
	got := map[string]string{}
	for _, tt := range doc.Tests {
		got[tt.Path] = tt.Status
	}
	assert.DeepEqual(t, got, map[string]string{
		"fsnsuite.inotify_api.marks.tmpfs":    "ERROR",
		"fsnsuite.inotify_api.events.tmpfs":   "FAIL",
		"fsnsuite.inotify_api.sub.tmpfs.bind": "ERROR",
	})
}

// A real results directory's export follows the same rules (by hand:
// FSNSUITE_RESULTS=results/latest go test -run TestKCIDBOfResultsDir).
func TestKCIDBOfResultsDir(t *testing.T) {
	dir := os.Getenv("FSNSUITE_RESULTS")
	if dir == "" {
		t.Skip("set FSNSUITE_RESULTS=DIR to check the export of a real results directory")
	}
	r, err := LoadResults(dir)
	assert.NilError(t, err)
	var buf bytes.Buffer
	assert.NilError(t, WriteKCIDB(&buf, r, KCIDBOptions{}))
	assert.DeepEqual(t, kcidbRules(buf.Bytes()), []string(nil))
	var doc kcidbDoc
	assert.NilError(t, json.Unmarshal(buf.Bytes(), &doc))
	counts := map[string]int{}
	for _, tt := range doc.Tests {
		counts[tt.Status]++
	}
	t.Logf("%d tests: %v", len(doc.Tests), counts)
}

// A results.json that is not a results document is refused with an error
// naming the file and what is wrong (issue 22 item 3: null, {} and
// {"binaries":5} were read as empty runs).
func TestLoadResultsRefusesNonDocuments(t *testing.T) {
	run := `{"suite":"fsnsuite","kernel":"6.1.0","arch":"x86_64","host":"h","start":"2026-01-02T03:04:05Z","seconds":1}`
	good := `{"name":"","status":"pass","plan":1,"children":[{"name":"a","status":"pass","plan":0}],"version":"TAP version 13"}`
	for _, tc := range []struct{ results, run, want string }{
		{`null`, run, "results.json: not a results document: the JSON value is null, not an object"},
		{`{}`, run, `results.json: not a results document: no "version"`},
		{`{"binaries":5}`, run, `results.json: not a results document: no "version"`},
		{`[]`, run, "the JSON value is [], not an object"},
		{`{"version":"TAP version 12","plan":1,"children":[{"name":"a"}]}`, run, `"version" is "TAP version 12"`},
		{`{"version":"TAP version 13","plan":0}`, run, "no binary"},
		{`{"version":"TAP version 13","plan":2,"children":[{"name":"a","status":"pass"}]}`, run, `"plan" is 2 but "children" lists 1 binaries`},
		{`{"version":"TAP version 13","plan":1,"children":[null]}`, run, `binary 1 of 1 has no "name"`},
		{`{"version":"TAP version 13","plan":1,"children":[{"name":"a","status":"great"}]}`, run, `unknown tap status "great"`},
		{good + ` {}`, run, "invalid character"},
		{good, `null`, "run.json: not a run description: the JSON value is null"},
		{good, `{}`, `run.json: not a run description: no "suite" or "start"`},
	} {
		dir := t.TempDir()
		assert.NilError(t, os.WriteFile(filepath.Join(dir, "results.json"), []byte(tc.results), 0o644))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, "run.json"), []byte(tc.run), 0o644))
		_, err := LoadResults(dir)
		assert.ErrorContains(t, err, tc.want, "results.json %s, run.json %s", tc.results, tc.run)
		assert.Check(t, is.Contains(err.Error(), dir+"/"), "the error names the file: %v", err)
	}
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "results.json"), []byte(good), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "run.json"), []byte(run), 0o644))
	r, err := LoadResults(dir)
	assert.NilError(t, err)
	assert.Equal(t, r.Root.Children[0].Name, "a")
}
