package runner

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/fsnsuite/fsnsuite/tap"
)

// runOf is a run of one binary whose cases (TAP lines, one level below the
// binary) are the leaves.
func runOf(kernel string, cases ...string) *Results {
	failed := false
	var b strings.Builder
	b.WriteString("TAP version 13\n1..1\n    # Subtest: fanotify_basic\n")
	n := 0
	for _, c := range cases {
		if strings.HasPrefix(c, "ok ") || strings.HasPrefix(c, "not ok ") {
			n++
			failed = failed || strings.HasPrefix(c, "not ok ")
		}
	}
	fmt.Fprintf(&b, "    1..%d\n", n)
	for _, c := range cases {
		b.WriteString("    " + c + "\n")
	}
	if failed {
		b.WriteString("not ok 1 fanotify_basic\n")
	} else {
		b.WriteString("ok 1 fanotify_basic\n")
	}
	return &Results{Dir: "results/" + kernel, Root: tap.ParseString(b.String()), Info: RunInfo{Kernel: kernel}}
}

// pass -> fail and fail -> pass are the verdict; a leaf failing in both runs
// is listed apart, and figures are compared by name.
func TestCompareResults(t *testing.T) {
	before := runOf("7.3-base",
		"ok 1 a.tmpfs", "not ok 2 b.tmpfs", "# measurement: cost 100 ns/op [90,110]", "ok 3 c.tmpfs",
		"ok 4 d.tmpfs # SKIP FAN_X not supported (EINVAL)")
	after := runOf("7.3-patched",
		"# events differ", `# HINT: kernel may lack 4f0b903ded72 ("fsnotify: fix merge with parent's ignored mask")`, "not ok 1 a.tmpfs",
		"not ok 2 b.tmpfs", "# measurement: cost 110 ns/op [100,120]", "ok 3 c.tmpfs", "ok 4 d.tmpfs")
	d := CompareResults(before, after)
	if !d.Differs() || len(d.Regressions) != 1 || d.Regressions[0].Path != "fanotify_basic.a.tmpfs" {
		t.Fatalf("regressions %+v, want a.tmpfs only", d.Regressions)
	}
	if !strings.HasPrefix(d.Regressions[0].Why, "HINT:") {
		t.Errorf("regression reason %q, want the HINT line", d.Regressions[0].Why)
	}
	if len(d.FailBoth) != 1 || len(d.Fixes) != 0 || len(d.SkipChanged) != 1 || d.Same != 1 {
		t.Errorf("fail-both %d fixes %d skip-changed %d same %d, want 1 0 1 1", len(d.FailBoth), len(d.Fixes), len(d.SkipChanged), d.Same)
	}
	if len(d.Figures) != 1 || d.Figures[0].Ratio != 1.1 {
		t.Errorf("figures %+v, want cost x1.1", d.Figures)
	}
	var b strings.Builder
	if err := d.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"verdict: behaviour changed: 1 leaves pass -> fail, 0 fail -> pass", "fail in both runs (1)",
		"\n                  events differ\n                  HINT: kernel may lack 4f0b903ded72",
		"100 ns/op ±10%  110 ns/op ±9%  ~ (+10.0% [-9.1,+33.3])  reported, not gated"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	// The same run against itself: no difference.
	if same := CompareResults(before, before); same.Differs() || len(same.FailBoth) != 1 {
		t.Errorf("a run against itself: %+v", same)
	}
}

// A failing leaf that one run lacks is a pass/fail difference: a binary
// that could not list its cases after has one failing leaf of its own and
// none of the before run's (all absent), and a binary that failed as a whole
// gets a binary_verdict leaf only in the run where it failed. A leaf that
// passed before and skips after is listed by name.
func TestCompareResultsAbsentLeaves(t *testing.T) {
	before := runOf("7.3-base", "ok 1 a.tmpfs", "ok 2 b.tmpfs")
	after := &Results{Dir: "results/7.3-patched", Info: RunInfo{Kernel: "7.3-patched"},
		Root: tap.ParseString("TAP version 13\n1..1\n# fanotify_basic: killed by the runner\nnot ok 1 fanotify_basic # TIMEOUT 30 seconds\n")}
	d := CompareResults(before, after)
	if !d.Differs() || len(d.Regressions) != 1 || d.Regressions[0].Path != "fanotify_basic" || d.Regressions[0].Before != "absent" {
		t.Errorf("regressions %+v, want the binary's own failing leaf (absent before)", d.Regressions)
	}
	if len(d.OnlyBefore) != 2 {
		t.Errorf("only before %+v, want a.tmpfs and b.tmpfs", d.OnlyBefore)
	}
	if back := CompareResults(after, before); !back.Differs() || len(back.Fixes) != 1 {
		t.Errorf("the other way round: fixes %+v, want the binary's leaf", back.Fixes)
	}

	skipped := runOf("7.3-patched", "ok 1 a.tmpfs # SKIP FAN_X not supported (EINVAL)", "ok 2 b.tmpfs")
	d = CompareResults(before, skipped)
	var b strings.Builder
	if err := d.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if d.Differs() || !strings.Contains(b.String(), "pass -> skip (no verdict after) (1):\n  pass   -> skip   fanotify_basic.a.tmpfs\n") {
		t.Errorf("pass -> skip: differs %v, text:\n%s", d.Differs(), b.String())
	}
}

// A failing leaf's why is the case's own line about it, not the closing
// brace of the diff dump it printed last.
func TestWhyFailureLine(t *testing.T) {
	n := &tap.Node{Name: "bz215676_fs_exclude_dir_notif.tmpfs", Status: tap.StatusFail, Diagnostics: []string{
		"fs mark FAN_OPEN|FAN_ONDIR, dir excluded: only the sibling's opens (notif group)",
		"bz215676_fs_exclude_dir_notif.tmpfs (tmpfs): events differ",
		"  want: [0] FAN_OPEN /x/sibling",
		"      }",
	}}
	if got, want := Why(n), "bz215676_fs_exclude_dir_notif.tmpfs (tmpfs): events differ"; got != want {
		t.Errorf("Why = %q, want %q", got, want)
	}
	// A log line first, the failure last: the failure.
	m := &tap.Node{Name: "kernel_memory_released_fanotify_group", Status: tap.StatusFail, Diagnostics: []string{
		"kernel_memory_released_fanotify_group (tmpfs): control: 32 objects held at once charged 65032 bytes",
		"after 8192 objects made and closed one by one: 8487168 bytes still charged",
		"8192 fanotify_group objects made and closed one at a time left 8487168 bytes charged, want under 524288",
	}}
	if got, want := Why(m), m.Diagnostics[2]; got != want {
		t.Errorf("Why after a log line = %q, want %q", got, want)
	}
	n.Diagnostics = []string{"  want: [0] FAN_OPEN /x/sibling", "      }"}
	if got, want := Why(n), "  want: [0] FAN_OPEN /x/sibling"; got != want {
		t.Errorf("Why with indented lines only = %q, want %q", got, want)
	}
}

// The verdict line counts the leaves both ways and the figures that went
// beyond their gates; it is the first line after the two runs.
func TestVerdictLine(t *testing.T) {
	gated := func(v float64, ok bool) *Results {
		res := "ok 1 a.tmpfs"
		if !ok {
			res = "not ok 1 a.tmpfs"
		}
		return runOf("k", fmt.Sprintf("# measurement: ratio %g ratio [%g,%g]", v, v-0.01, v+0.01), "# gate: ratio <= 1.05", res, "ok 2 b.tmpfs")
	}
	for _, tc := range []struct {
		name          string
		before, after *Results
		want          string
	}{
		{"same", gated(1.01, true), gated(1.02, true), "no difference: no leaf changed between pass and fail (2 the same)"},
		{"regression", gated(1.01, true), gated(1.2, false), "behaviour changed: 1 leaves pass -> fail, 0 fail -> pass, 1 figure beyond its gate (1 the same)"},
		{"fix", gated(1.2, false), gated(1.01, true), "behaviour changed: 0 leaves pass -> fail, 1 fail -> pass, 0 figures beyond their gates (1 the same)"},
		// Above the gate but undecided (the case skipped): no leaf
		// changed, and the figure is counted.
		{"beyond only", gated(1.01, true), runOf("k", "# measurement: ratio 1.06 ratio [1.01,1.11]", "# gate: ratio <= 1.05", "ok 1 a.tmpfs # SKIP interval straddles the bound", "ok 2 b.tmpfs"),
			"no difference: no leaf changed between pass and fail, 1 figure beyond its gate (1 the same)"},
	} {
		d := CompareResults(tc.before, tc.after)
		if got := d.Verdict(); got != tc.want {
			t.Errorf("%s: Verdict = %q, want %q", tc.name, got, tc.want)
		}
		var b strings.Builder
		if err := d.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(b.String(), "\n"); lines[2] != "verdict: "+tc.want {
			t.Errorf("%s: third line %q, want the verdict", tc.name, lines[2])
		}
	}
}

// Figures read as a person reads them: plain decimals with their units
// (never 3.171e+04), the change in percent with its interval, ~ when the
// interval spans no change, n/a and unbounded for what is not a number.
func TestFigureFormat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{
		{4383, "p99-ns", "4.383 p99-µs"},
		{31710, "p99-ns", "31.71 p99-µs"},
		{6.63633e+06, "ns/op", "6.636 ms/op"},
		{512, "ns/op", "512 ns/op"},
		{2.5e6, "p99-cpu-ns/op", "2.5 p99-cpu-ms/op"},
		{72000, "insn/op", "72k insn/op"}, // instructions, not nanoseconds
		{170978, "ops/s", "171k ops/s"},
		{149.244, "ops/s", "149.2 ops/s"},
		{3.5e6, "ops/s", "3.5M ops/s"},
		{0.00355274, "ratio", "0.003553"},
		{641.741, "ratio", "641.7"},
		{1.00489, "ratio", "1.005"},
		{9.99996, "ratio", "10"},
		{0.0000123456, "ratio", "0.00001235"},
		{1e-300, "ratio", "0"},
		{math.NaN(), "ratio", "n/a"},
		{math.Inf(1), "ns/op", "unbounded"},
	} {
		if got := FormatValue(tc.v, tc.unit); got != tc.want {
			t.Errorf("FormatValue(%g, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
	sci := regexp.MustCompile(`\de[-+]?\d`)
	for _, tc := range []struct {
		before, after tap.Measurement
		want          string
	}{
		{tap.Measurement{Value: 100, Lo: 99, Hi: 101}, tap.Measurement{Value: 106.8, Lo: 106.3, Hi: 107.4}, "+6.8% [+5.2,+8.5]"},
		{tap.Measurement{Value: 100, Lo: 95, Hi: 105}, tap.Measurement{Value: 101, Lo: 96, Hi: 106}, "~ (+1.0% [-8.6,+11.6])"},
		{tap.Measurement{Value: 4383, Lo: 4000, Hi: 4500}, tap.Measurement{Value: 31710, Lo: 30000, Hi: 33000}, "+623% [+567,+725]"},
		{tap.Measurement{Value: 100}, tap.Measurement{Value: 90}, "-10.0% (no interval)"},
		{tap.Measurement{Value: 100, Lo: 90, Hi: 110}, tap.Measurement{Value: 120, Lo: math.Inf(-1), Hi: math.Inf(1)}, "+20.0% (no interval)"},
		{tap.Measurement{Value: 0}, tap.Measurement{Value: 5}, "n/a"},
	} {
		before := runOf("a", "# "+tc.before.String(), "ok 1 x")
		tc.before.Name, tc.after.Name, tc.before.Unit, tc.after.Unit = "f", "f", "ns/op", "ns/op"
		before = runOf("a", "# "+tc.before.String(), "ok 1 x")
		after := runOf("b", "# "+tc.after.String(), "ok 1 x")
		d := CompareResults(before, after)
		if len(d.Figures) != 1 {
			t.Fatalf("%v -> %v: %d figures", tc.before, tc.after, len(d.Figures))
		}
		if got := d.Figures[0].Change(); got != tc.want {
			t.Errorf("%v -> %v: Change = %q, want %q", tc.before, tc.after, got, tc.want)
		}
		var b strings.Builder
		if err := d.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if sci.MatchString(b.String()) {
			t.Errorf("scientific notation in the text:\n%s", b.String())
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("text lacks %q:\n%s", tc.want, b.String())
		}
	}
	short, exact := FormatInterval(tap.Measurement{Value: 4917.5, Unit: "ns/op", Lo: 4289.92, Hi: 5474.96})
	if short != "4.918 µs/op ±13%" || exact != "[4.29 µs/op, 5.475 µs/op]" {
		t.Errorf("FormatInterval = %q, %q", short, exact)
	}
	if short, _ := FormatInterval(tap.Measurement{Value: 283.8, Unit: "ns/op", Lo: math.Inf(-1), Hi: math.Inf(1)}); short != "283.8 ns/op ± unbounded" {
		t.Errorf("FormatInterval of an unbounded interval = %q", short)
	}
}

// A failing leaf's statement is its own line without the HINT (which is
// apart) and without the figures it printed.
func TestStatementAndHints(t *testing.T) {
	n := &tap.Node{Name: "a.tmpfs", Status: tap.StatusFail, Diagnostics: []string{
		"a.tmpfs (tmpfs): fanotify_mark: got success, want EINVAL",
		`HINT: kernel may lack 4f0b903ded72 ("x")`,
		"measurement: ratio 1.2 ratio [1.1,1.3]",
		"gate: ratio <= 1.05",
	}}
	if got, want := Statement(n), n.Diagnostics[0]; got != want {
		t.Errorf("Statement = %q, want %q", got, want)
	}
	if got := Hints(n); len(got) != 1 || got[0] != n.Diagnostics[1] {
		t.Errorf("Hints = %q", got)
	}
	to := &tap.Node{Name: "b", Status: tap.StatusTimeout, Reason: "30 seconds"}
	if got, want := Statement(to), "TIMEOUT 30 seconds"; got != want {
		t.Errorf("Statement of a timeout = %q, want %q", got, want)
	}
	if got := Statement(&tap.Node{Status: tap.StatusPass, Diagnostics: []string{"x y"}}); got != "" {
		t.Errorf("Statement of a pass = %q", got)
	}
}
