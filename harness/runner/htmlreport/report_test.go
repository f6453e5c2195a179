package htmlreport

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/internal/execfile"
	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/tap"
)

// sampleRun runs fake binaries shaped like ours (a failure with a HINT, skips,
// perf cases with measurements: a scaling family and plain ratios) and
// loads the results directory.
func sampleRun(t *testing.T) *runner.Results {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) runner.Binary {
		p := filepath.Join(dir, name)
		assert.NilError(t, execfile.Write(p, []byte("#!/bin/sh\n"+body), 0o755))
		return runner.Binary{Name: name, Path: p}
	}
	var scale strings.Builder
	n := 0
	for _, c := range []int{1, 2, 4} {
		for _, cond := range []string{"other", "watch"} {
			n++
			none := 1000.0 + float64(c)*10
			slope := map[string]float64{"other": 0.01, "watch": 0.05}[cond]
			v := none * (1 + slope*float64(c))
			ms := []tap.Measurement{
				{Name: "none_ns_per_op", Value: none, Unit: "ns/op", Lo: none - 5, Hi: none + 5},
				{Name: cond + "_ns_per_op", Value: v, Unit: "ns/op", Lo: v - 6, Hi: v + 6},
				{Name: "ratio", Value: v / none, Unit: "ratio", Lo: v/none - 0.01, Hi: v/none + 0.01},
			}
			for _, m := range ms {
				fmt.Fprintf(&scale, "echo '# %s'\n", m)
			}
			// "other" is gated at 1.05; "watch" is reported, not gated.
			if cond == "other" {
				fmt.Fprintf(&scale, "echo '# %s'\n", tap.Gate{Name: "ratio", Max: 1.05})
			} else {
				fmt.Fprintf(&scale, "echo '# reported, not gated: ratio %.4f'\n", v/none)
			}
			fmt.Fprintf(&scale, "echo 'ok %d %s_none_n%d'\n", n, cond, c)
		}
	}
	bins := []runner.Binary{
		write("inotify_basic", `echo 1..3
echo 'ok 1 create.tmpfs'
echo 'ok 2 evictable.ext4 # SKIP ext4: mkfs.ext4 not found'
echo '# delete.tmpfs (tmpfs): events differ'
echo '#   want: IN_DELETE f'
echo '#   got:  nothing'
echo '# HINT: kernel may lack 0123456789ab ("fsnotify: a fix")'
echo 'not ok 3 delete.tmpfs'
exit 1
`),
		write("perf_parent_write", fmt.Sprintf("echo 1..%d\n%s", n, scale.String())),
		write("perf_open_path", "echo 1..2\necho '# measurement: ratio 1.01 ratio [1.0,1.02]'\necho '# gate: ratio <= 1.03'\necho 'ok 1 other_watch.tmpfs'\n"+
			"echo '# measurement: ratio 1.2 ratio [1.1,1.3]'\necho '# reported, not gated: ratio 1.2000 [1.1000,1.3000]'\necho 'ok 2 parent_watch.tmpfs'\n"),
	}
	res := filepath.Join(dir, "results")
	_, err := runner.Run(context.Background(), bins, runner.Options{ResultsDir: res, Timeout: 10 * time.Second})
	assert.NilError(t, err)
	r, err := runner.LoadResults(res)
	assert.NilError(t, err)
	return r
}

var svgRE = regexp.MustCompile(`(?s)<svg [^>]*data-points="(\d+)"[^>]*>(.*?)</svg>`)

func TestReport(t *testing.T) {
	r := sampleRun(t)
	var buf bytes.Buffer
	assert.NilError(t, Write(&buf, []*runner.Results{r}))
	page := buf.String()
	// What a reader needs: verdicts, the failure's diagnostics and hint, the skip's reason.
	for _, want := range []string{"inotify_basic.delete.tmpfs", "want: IN_DELETE f", `<span class="hint">HINT: kernel may lack 0123456789ab (&#34;fsnotify: a fix&#34;)</span>`, "ext4: mkfs.ext4 not found", "kernel " + r.Info.Kernel} {
		assert.Check(t, is.Contains(page, want), want)
	}
	// Self-contained: nothing is fetched.
	assert.Check(t, !regexp.MustCompile(`(src|href)=`).MatchString(page))
	// Plots: ns/op and ratio curves for the scaling family (the gated
	// ratios apart from the reported ones), a dot chart for the ratios.
	plots := svgRE.FindAllStringSubmatch(page, -1)
	assert.Equal(t, len(plots), 4, "plots: %d", len(plots))
	for _, p := range plots {
		want, _ := strconv.Atoi(p[1])
		assert.Check(t, want > 0)
		assert.Equal(t, strings.Count(p[2], `<circle class="pt"`), want)
	}
	// 3 sizes x (none twice, other, watch) in ns/op; 3 gated ratios, 3
	// reported ones; 2 dots.
	assert.Equal(t, plots[0][1], "12")
	assert.Equal(t, plots[1][1], "3")
	assert.Equal(t, plots[2][1], "3")
	assert.Equal(t, plots[3][1], "2")
	assert.Check(t, is.Contains(plots[2][2], "ratio (reported, not gated) against clients (n)"))
	assert.Check(t, !strings.Contains(plots[2][2], `class="gate"`), "no gate on a reported-only plot")
	// ns/op reads in µs on an axis from 0; the sizes are human.
	assert.Check(t, is.Contains(plots[0][2], `>µs/op</text>`))
	assert.Check(t, is.Contains(plots[0][2], `text-anchor="end">0</text>`), "an absolute axis starts at 0")
	// Every gated ratio plot draws its gate; a reported-only case is no pass.
	assert.Check(t, is.Contains(plots[1][2], `<line class="gate"`))
	assert.Check(t, is.Contains(plots[1][2], "gate ≤ 1.05: other_none ratio"))
	assert.Check(t, is.Contains(plots[3][2], `<line class="gate"`))
	assert.Check(t, is.Contains(plots[3][2], "parent_watch.tmpfs (reported, not gated)"))
	assert.Check(t, is.Contains(page, `<tr><td>perf_open_path.parent_watch.tmpfs</td><td class="reported">REPORTED</td><td>ratio 1.2000 [1.1000,1.3000]</td></tr>`))
	assert.Check(t, is.Contains(page, `<h3>Reported, not gated (4)</h3>`))
	// The binary table counts them apart: perf_open_path 1 pass, 1 reported.
	assert.Check(t, is.Contains(page, `<tr><td>perf_open_path</td><td class="pass">PASS</td><td class="n">1</td><td class="n">1</td>`))
	// A run is named by its kernel and directory.
	assert.Check(t, is.Contains(page, "<h1>fsnsuite report: "+r.Info.Kernel+" ("+r.Dir+")</h1>"))
	if dir := os.Getenv("FSNSUITE_REPORT_OUT"); dir != "" {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, "report.html"), buf.Bytes(), 0o644))
	}
}

// TestReportInChromium renders the page in headless Chromium (Debian's
// chromium package): it must load without console errors, its own check
// must find every plot's points drawn, and a screenshot must be taken.
func TestReportInChromium(t *testing.T) {
	chromium := ""
	for _, c := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(c); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		t.Skip("chromium not installed (Debian's chromium: scripts/deps.sh --report installs it)")
	}
	// By hand on a real run: FSNSUITE_RESULTS=results/latest.
	r, plots := sampleRun(t), "4"
	if res := os.Getenv("FSNSUITE_RESULTS"); res != "" {
		var err error
		r, err = runner.LoadResults(res)
		assert.NilError(t, err)
		plots = strconv.Itoa(len(Plots(r.Root)))
		t.Logf("%s: %s plots", res, plots)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	assert.NilError(t, err)
	assert.NilError(t, Write(f, []*runner.Results{r}))
	assert.NilError(t, f.Close())

	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000"}
	var stderr bytes.Buffer
	cmd := exec.Command(chromium, append(args, "--dump-dom", "file://"+page)...)
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	assert.NilError(t, err, "chromium: %s", stderr.String())
	assert.Check(t, strings.Contains(string(dom), `data-plot-check="ok"`), "the page's own check:\n%s", grep(string(dom), "data-plot"))
	assert.Check(t, strings.Contains(string(dom), `data-plots="`+plots+`"`), "plots drawn:\n%s", grep(string(dom), "data-plot"))
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
			t.Errorf("console message: %s", l)
		}
	}

	shot := filepath.Join(dir, "report.png")
	if out := os.Getenv("FSNSUITE_REPORT_OUT"); out != "" {
		shot = filepath.Join(out, "report.png")
	}
	cmd = exec.Command(chromium, append(args, "--screenshot="+shot, "--window-size=1200,2200", "file://"+page)...)
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", out)
	fi, err := os.Stat(shot)
	assert.NilError(t, err)
	assert.Assert(t, fi.Size() > 10000, "screenshot of %d bytes", fi.Size())
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Two runs (a kernel and a patched one) get before/after charts: each figure
// of the first run beside the other's, with intervals.
func TestCompare(t *testing.T) {
	before, after := sampleRun(t), sampleRun(t)
	before.Info.Kernel, after.Info.Kernel = "6.18.0", "6.18.0-patched"
	plots := Compare([]*runner.Results{before, after})
	// perf_open_path: ratio; perf_parent_write: ns/op and ratio.
	assert.Equal(t, len(plots), 3)
	for _, p := range plots {
		assert.Equal(t, len(p.Series), 2)
		assert.Equal(t, len(p.Series[0].Points), len(p.Series[1].Points), p.Title)
		svg := p.SVG()
		assert.Equal(t, strings.Count(svg, `<circle class="pt"`), p.N())
	}
	// Rows come in pairs, run 1 then run 2, sharing one label.
	rows := plots[0].SVG()
	assert.Check(t, is.Contains(rows, "run 1: 6.18.0 ("+before.Dir+")"))
	assert.Check(t, is.Contains(rows, "run 2: 6.18.0-patched ("+after.Dir+")"))
	assert.Check(t, is.Contains(rows, `<line class="gate"`), "the gate of other_watch")
	after.Label = "patched"
	assert.Check(t, is.Contains(Compare([]*runner.Results{before, after})[0].SVG(), "run 2: patched"))
	assert.Equal(t, strings.Count(rows, `text-anchor="end">other_watch.tmpfs ratio<`), 1, "one label per pair")
	var buf bytes.Buffer
	assert.NilError(t, Write(&buf, []*runner.Results{before, after}))
	assert.Check(t, is.Contains(buf.String(), "<h2>Plots, before and after</h2>"))
	assert.Check(t, Compare([]*runner.Results{before}) == nil)
}

// resultsOf runs fake binaries (name -> shell body printing TAP) through
// the runner and loads the results directory it wrote.
func resultsOf(t *testing.T, bins map[string]string) *runner.Results {
	t.Helper()
	dir := t.TempDir()
	var bs []runner.Binary
	for _, name := range []string{"fanotify_basic", "perf_watch_add"} {
		body, ok := bins[name]
		if !ok {
			continue
		}
		p := filepath.Join(dir, name)
		assert.NilError(t, execfile.Write(p, []byte("#!/bin/sh\n"+body), 0o755))
		bs = append(bs, runner.Binary{Name: name, Path: p})
	}
	res := filepath.Join(dir, "results")
	_, err := runner.Run(context.Background(), bs, runner.Options{ResultsDir: res, Timeout: 10 * time.Second})
	assert.NilError(t, err)
	r, err := runner.LoadResults(res)
	assert.NilError(t, err)
	return r
}

// perfBody is a perf binary's TAP: a gated case on an empty directory and a
// case whose ratio (12040) is reported while its guard (walk_vs_readdir <= 1) gates
// it, as perf_watch_add prints them; scale multiplies the figures.
func perfBody(scale float64) string {
	var b strings.Builder
	b.WriteString("echo 1..2\n")
	for _, l := range []string{
		tap.Measurement{Name: "plain_p50_ns", Value: 2164 * scale, Unit: "p50-ns", Lo: 2124 * scale, Hi: 2204 * scale}.String(),
		tap.Measurement{Name: "ratio", Value: 1.02 * scale, Unit: "ratio", Lo: 1.0 * scale, Hi: 1.04 * scale}.String(),
		tap.Gate{Name: "ratio", Max: 1.06}.String(),
	} {
		fmt.Fprintf(&b, "echo '# %s'\n", l)
	}
	b.WriteString("echo 'ok 1 add_empty_dir'\n")
	for _, l := range []string{
		tap.Measurement{Name: "child_p99_ns", Value: 4383 * scale * scale, Unit: "p99-ns", Lo: 4000 * scale, Hi: 4800 * scale * scale}.String(),
		// A ratio as large as a 1M-child tree gives: plain decimals still.
		tap.Measurement{Name: "ratio", Value: 12040 * scale, Unit: "ratio", Lo: 11800 * scale, Hi: 12300 * scale}.String(),
		tap.Measurement{Name: "walk_vs_readdir", Value: 0.18, Unit: "ratio", Lo: 0.111, Hi: 0.227}.String(),
		tap.Gate{Name: "walk_vs_readdir", Max: 1}.String(),
		// An interval with no bounds yet (too few rounds).
		tap.Measurement{Name: "readdir_ns_per_child", Value: 283.8, Unit: "ns/op", Lo: math.Inf(-1), Hi: math.Inf(1)}.String(),
	} {
		fmt.Fprintf(&b, "echo '# %s'\n", l)
	}
	b.WriteString("echo 'ok 2 add_cached_10k'\n")
	return b.String()
}

const (
	basicPass = "echo 1..3\necho 'ok 1 inode_mark_file.tmpfs'\necho 'ok 2 mount_mark_scope.tmpfs'\necho 'ok 3 filesystem_mark_scope.tmpfs'\n"
	basicFail = `echo 1..3
echo '# an inode mark on a file reports open'
echo '# inode_mark_file.tmpfs (tmpfs): events differ'
echo '#   want: [0] FAN_OPEN /f'
echo '#   got:  nothing'
echo '# HINT: kernel may lack 0123456789ab ("fsnotify: a fix")'
echo 'not ok 1 inode_mark_file.tmpfs'
echo '# mount_mark_scope.tmpfs (tmpfs): events differ'
echo 'not ok 2 mount_mark_scope.tmpfs'
echo 'ok 3 filesystem_mark_scope.tmpfs'
exit 1
`
)

// The before/after page of a passing and a failing run opens with the
// verdict fsnsuite diff prints (the same function), then the regressions
// with the case's statement and HINT, then the figures, and only then any
// plot; a passing pair says "no difference" there.
func TestVerdictFirst(t *testing.T) {
	pass := resultsOf(t, map[string]string{"fanotify_basic": basicPass, "perf_watch_add": perfBody(1)})
	fail := resultsOf(t, map[string]string{"fanotify_basic": basicFail, "perf_watch_add": perfBody(1.07)})
	for _, tc := range []struct {
		name      string
		runs      []*runner.Results
		verdict   string
		class     string
		sections  []string // in this order, after the verdict and before any plot
		noSection string
	}{
		{"failing", []*runner.Results{pass, fail}, "<b>behaviour changed</b>: 2 leaves pass → fail, 0 fail → pass, 1 figure beyond its gate (3 the same)", "fail",
			[]string{"Regressions: pass → fail (2)", "events differ; want: [0] FAN_OPEN /f; got: nothing<br><span class=\"hint\">HINT: kernel may lack 0123456789ab", "Perf figures, before and after"}, "Improved"},
		{"passing", []*runner.Results{pass, pass}, "<b>no difference</b>: no leaf changed between pass and fail (5 the same)", "pass",
			[]string{"Perf figures, before and after"}, "Regressions"},
		{"fixed", []*runner.Results{fail, pass}, "<b>behaviour changed</b>: 0 leaves pass → fail, 2 fail → pass, 0 figures beyond their gates (3 the same)", "fail",
			[]string{"Improved: fail → pass (2)", "Perf figures, before and after"}, "Regressions"},
	} {
		var buf bytes.Buffer
		assert.NilError(t, Write(&buf, tc.runs))
		page := buf.String()
		// The same words as fsnsuite diff's verdict line.
		want := arrows(runner.CompareResults(tc.runs[0], tc.runs[1]).Verdict())
		assert.Check(t, is.Contains(strings.NewReplacer("<b>", "", "</b>", "").Replace(tc.verdict), want), tc.name)
		at := strings.Index(page, `<p class="verdict `+tc.class+`" id="verdict">`+tc.verdict+"</p>")
		assert.Assert(t, at >= 0, "%s: no verdict %q in\n%s", tc.name, tc.verdict, page[:min(len(page), 4000)])
		plot := strings.Index(page, "<svg")
		assert.Assert(t, plot > 0, tc.name)
		assert.Check(t, at < plot, "%s: verdict at %d after the first plot at %d", tc.name, at, plot)
		// Nothing but the title before the verdict.
		assert.Check(t, !strings.Contains(page[:at], "<table") && !strings.Contains(page[:at], "<h2"), tc.name)
		last := at
		for _, s := range tc.sections {
			i := strings.Index(page, s)
			assert.Check(t, i > last && i < plot, "%s: %q at %d, want between %d and the first plot at %d", tc.name, s, i, last, plot)
			last = max(last, i)
		}
		assert.Check(t, !strings.Contains(page[:plot], tc.noSection), "%s: %q", tc.name, tc.noSection)
	}
}

// The single-run page opens with its verdict and its failures grouped by
// reason (the summary's grouping: two "events differ" are one line), before
// the binaries' table and any plot.
func TestRunVerdictFirst(t *testing.T) {
	const skipAll = "echo '1..0 # SKIP requires root'\nexit 4\n"
	for _, tc := range []struct {
		name        string
		basic, perf string
		want        string
		group       string
	}{
		{"failing", basicFail, perfBody(1), `<p class="verdict fail"><b>FAIL</b>: 2 leaves failed (3 passed, 0 reported (not gated), 2 failed, 0 skipped of 5 leaves)</p>`,
			`<tr><td class="n">2</td><td class="why">events differ<br><span class="hint">HINT: kernel may lack 0123456789ab`},
		{"passing", basicPass, perfBody(1), `<p class="verdict pass"><b>PASS</b>: 5 passed, 0 reported (not gated), 0 failed, 0 skipped of 5 leaves</p>`, ""},
		{"skipped", skipAll, skipAll, `<p class="verdict skip"><b>SKIP</b>: all 2 leaves skipped</p>`, ""},
	} {
		r := resultsOf(t, map[string]string{"fanotify_basic": tc.basic, "perf_watch_add": tc.perf})
		var buf bytes.Buffer
		assert.NilError(t, Write(&buf, []*runner.Results{r}))
		page := buf.String()
		at := strings.Index(page, tc.want)
		assert.Assert(t, at > 0, "%s: no %q in\n%s", tc.name, tc.want, page[:min(len(page), 3000)])
		assert.Check(t, !strings.Contains(page[:at], "<table"), tc.name)
		if plot := strings.Index(page, "<svg"); plot >= 0 {
			assert.Check(t, at < plot, tc.name)
		}
		if tc.group != "" {
			g := strings.Index(page, tc.group)
			assert.Check(t, g > at && g < strings.Index(page, "<h3>Binaries</h3>"), "%s: grouped failures at %d:\n%s", tc.name, g, page[:min(len(page), 3000)])
		}
	}
}

// The per-figure table reads like benchstat's: plain decimals with units,
// the change in percent with its interval or ~, the gate or "reported, not
// gated"; never scientific notation, NaN or Inf.
func TestFigureTable(t *testing.T) {
	before := resultsOf(t, map[string]string{"perf_watch_add": perfBody(1)})
	after := resultsOf(t, map[string]string{"perf_watch_add": perfBody(1.07)})
	var buf bytes.Buffer
	assert.NilError(t, Write(&buf, []*runner.Results{before, after}))
	page := buf.String()
	start := strings.Index(page, `<table class="figs">`)
	assert.Assert(t, start > 0)
	table := page[start : start+strings.Index(page[start:], "</table>")]
	for _, want := range []string{
		// 2164 -> 2315 p50-ns: +7.0% with its interval, in µs.
		`<td>perf_watch_add.add_empty_dir.plain_p50_ns</td><td class="n" title="[2.124 p50-µs, 2.204 p50-µs]">2.164 p50-µs ±2%</td><td class="n" title="[2.273 p50-µs, 2.358 p50-µs]">2.315 p50-µs ±2%</td><td class="n change">+7.0% [+3.1,+11.0]</td><td><span class="reported">reported, not gated</span></td>`,
		// The gated ratio went beyond its gate (1.09 > 1.06).
		`<tr class="beyond"><td>perf_watch_add.add_empty_dir.ratio</td>`,
		`<td>≤ 1.06 <span class="fail">beyond</span></td>`,
		// The guard's figure did not move: ~, judged against its gate.
		`<td>perf_watch_add.add_cached_10k.walk_vs_readdir</td><td class="n" title="[0.111, 0.227]">0.18 ±38%</td><td class="n" title="[0.111, 0.227]">0.18 ±38%</td><td class="n change">~ <span class="same">(+0.0% [-51.1,+105])</span></td><td>≤ 1</td>`,
		// 4383 -> 5018 p99-ns, µs; an unbounded interval says so.
		"4.383 p99-µs ±10%", "5.018 p99-µs ±",
		"283.8 ns/op ± unbounded", `title="unbounded interval"`,
		// A ratio of 12040 (12883 after): plain decimals, no exponent.
		"12040 ±2%", "12883 ±2%",
	} {
		assert.Check(t, is.Contains(table, want))
	}
	sci := regexp.MustCompile(`\de[-+]?\d|NaN|Inf`)
	assert.Check(t, !sci.MatchString(table), "scientific notation or NaN/Inf in\n%s", sci.FindAllString(table, -1))
	assert.Check(t, !regexp.MustCompile(`>[^<]*(NaN|Inf)[^<]*<`).MatchString(page), "NaN or Inf shown on the page")
}

// Every gate is drawn, a guard's included, on the single-run and the
// before/after plots; a ratio no gate judged is marked; each figure of a
// dot chart reads on its own axis; an unbounded interval is labelled.
func TestPlotsShowDecision(t *testing.T) {
	before := resultsOf(t, map[string]string{"perf_watch_add": perfBody(1)})
	after := resultsOf(t, map[string]string{"perf_watch_add": perfBody(1.07)})
	// Single run: add_cached_10k is a size family (curves), add_empty_dir a dot.
	var ratio, reported string
	for _, p := range Plots(before.Root) {
		switch p.Title {
		case "perf_watch_add: ratio against size":
			ratio = p.SVG()
		case "perf_watch_add: ratio (reported, not gated) against size":
			reported = p.SVG()
		}
	}
	assert.Check(t, is.Contains(ratio, `<line class="gate"`), "the guard's gate")
	assert.Check(t, is.Contains(ratio, "gate ≤ 1: add_cached walk_vs_readdir"))
	assert.Check(t, is.Contains(reported, `stroke-width="1.5" cx=`), "hollow dots")
	assert.Check(t, is.Contains(reported, ">reported, not gated</text>"))
	assert.Check(t, !strings.Contains(reported, `class="gate"`))
	// Before and after: the guard's rows carry its gate, the reported
	// ratio is marked, the 1.02 ratio and the 12040 one each on their axis.
	var cmpRatio string
	for _, p := range Compare([]*runner.Results{before, after}) {
		if p.Unit == "ratio" {
			cmpRatio = p.SVG()
		}
	}
	assert.Check(t, is.Contains(cmpRatio, "<title>gate ≤ 1</title>"))
	assert.Check(t, is.Contains(cmpRatio, "<title>gate ≤ 1.06</title>"))
	assert.Check(t, is.Contains(cmpRatio, "add_cached_10k ratio (reported, not gated)"))
	assert.Check(t, is.Equal(strings.Count(cmpRatio, `<line class="axis"`), 3), "an axis per figure")
	// The unbounded interval: labelled, no whisker.
	var ns string
	for _, p := range Compare([]*runner.Results{before, after}) {
		if p.Unit == "ns/op" {
			ns = p.SVG()
		}
	}
	assert.Check(t, is.Equal(strings.Count(ns, `>unbounded</text>`), 2))
	assert.Check(t, !strings.Contains(ns, `class="whisker"`), "no whisker for an unbounded interval")
}

// An unbounded interval is labelled, not drawn to the plot's edge; a
// finite end is still drawn; a value that is not a number is not drawn.
func TestUnbounded(t *testing.T) {
	for _, dots := range []bool{true, false} {
		p := &Plot{Title: "u", Unit: "ratio", Dots: dots, Ref: 1, Series: []Series{{Name: "s", Points: []Point{
			{X: 1, Label: "a", Y: 1.2, Lo: math.Inf(-1), Hi: math.Inf(1)},
			{X: 2, Label: "b", Y: 1.1, Lo: 1.05, Hi: math.Inf(1)},
			{X: 4, Label: "c", Y: 1.0, Lo: 0.9, Hi: 1.1},
			{X: 8, Label: "d", Y: math.NaN()},
		}}}}
		svg := p.SVG()
		assert.Check(t, is.Equal(strings.Count(svg, ">unbounded</text>"), 2), "dots %v", dots)
		assert.Check(t, is.Equal(len(whiskerRE.FindAllString(svg, -1)), 2), "dots %v: b's finite side and c", dots)
		assert.Check(t, is.Equal(p.N(), 3))
		assert.Check(t, is.Equal(strings.Count(svg, `<circle class="pt"`), 3))
		assert.Check(t, !strings.Contains(svg, "NaN") && !strings.Contains(svg, "Inf"), svg)
	}
}
