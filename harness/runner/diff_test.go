package runner

import (
	"fmt"
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
	for _, want := range []string{"verdict: behaviour changed: 1 leaves pass -> fail, 0 fail -> pass", "fail in both runs (1)", "x1.1000 [0.9091,1.3333]"} {
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
