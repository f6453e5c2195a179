package htmlreport

import (
	"bytes"
	"context"
	"fmt"
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
	assert.Check(t, is.Contains(plots[3][2], "parent_watch.tmpfs (reported)"))
	assert.Check(t, is.Contains(page, `<tr><td>perf_open_path.parent_watch.tmpfs</td><td class="reported">REPORTED</td><td>ratio 1.2000 [1.1000,1.3000]</td></tr>`))
	assert.Check(t, is.Contains(page, `<h3>Reported, not gated (4)</h3>`))
	// The binary table counts them apart: perf_open_path 1 pass, 1 reported.
	assert.Check(t, is.Contains(page, `<tr><td>perf_open_path</td><td class="pass">PASS</td><td class="n">1</td><td class="n">1</td>`))
	// A run is named by its kernel and directory.
	assert.Check(t, is.Contains(page, "<h2>Run 1: "+r.Info.Kernel+" ("+r.Dir+")</h2>"))
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
	assert.Check(t, is.Contains(buf.String(), "<h2>Before and after</h2>"))
	assert.Check(t, Compare([]*runner.Results{before}) == nil)
}
