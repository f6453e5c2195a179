// Package htmlreport renders results directories as one self-contained HTML
// page: per binary its verdict and counts, every failing case with its
// diagnostics (diffs, HINT lines), skips grouped by reason, and the perf
// measurements as SVG plots (scaling curves where case names carry a size,
// ratios with their intervals otherwise). No script, style sheet or image is
// fetched: the page is one file.
package htmlreport

import (
	"fmt"
	"html"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/tap"
)

// Write renders runs as one HTML page.
func Write(w io.Writer, runs []*runner.Results) error {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fsnsuite report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}h3{font-size:1.05em}
table{border-collapse:collapse}td,th{padding:2px 10px;border-bottom:1px solid #eee;text-align:left}
td.n{text-align:right}.pass{color:#186a18}.fail{color:#b00020;font-weight:bold}.skip{color:#8a6d00}
pre{background:#f6f6f6;padding:6px;white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px}pre .hint{color:#b00020;font-weight:bold}
svg.plot{display:block;box-sizing:border-box;width:100%;max-width:1400px;height:auto;margin:8px 0;border:1px solid #ddd;background:#fff}
svg .title{font-weight:bold;font-size:13px}svg .tick,svg .legend{font-size:11px}svg .label{font-size:12px}
svg .axis{stroke:#333}svg .grid{stroke:#eee}svg .ref{stroke:#888;stroke-dasharray:4 3}
svg .gate{stroke:#b00020;stroke-width:1.5;stroke-dasharray:6 3}
.reported{color:#1f5fa8;font-weight:bold}
</style></head><body>
<h1>fsnsuite report</h1>
`)
	if cmp := Compare(runs); len(cmp) > 0 {
		b.WriteString("<h2>Before and after</h2>\n<p>Each perf figure of the first run beside the same figure of the others, with its interval")
		for i, r := range runs {
			fmt.Fprintf(&b, "; run %d: %s", i+1, esc(RunLabel(r)))
		}
		b.WriteString(".</p>\n<div>")
		for _, p := range cmp {
			b.WriteString(p.SVG())
			b.WriteString("\n")
		}
		b.WriteString("</div>\n")
	}
	for i, r := range runs {
		writeRun(&b, i+1, r)
	}
	b.WriteString(`<script>
// A self-check for readers and the browser test: every plot must draw as
// many points as its data-points says.
(function(){var bad=[];document.querySelectorAll("svg.plot").forEach(function(s){
var n=s.querySelectorAll("circle.pt").length;if(String(n)!==s.getAttribute("data-points"))bad.push(s.getAttribute("aria-label"));});
document.body.setAttribute("data-plots",document.querySelectorAll("svg.plot").length);
document.body.setAttribute("data-plot-check",bad.length?"missing points: "+bad.join(", "):"ok");})();
</script>
</body></html>
`)
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("writing html report: %w", err)
	}
	return nil
}

func esc(s string) string { return html.EscapeString(s) }

func writeRun(b *strings.Builder, n int, r *runner.Results) {
	in := r.Info
	fmt.Fprintf(b, "<h2>Run %d: %s</h2>\n<p>%s: kernel %s (%s) on %s, started %s, %s; results in <code>%s</code></p>\n",
		n, esc(RunLabel(r)), esc(orDash(in.Suite)), esc(orDash(in.Kernel)), esc(orDash(in.Arch)), esc(orDash(in.Host)),
		esc(in.Start.Format(time.RFC3339)), (time.Duration(in.Seconds * 1e9)).Round(100*time.Millisecond), esc(r.Dir))

	b.WriteString("<table><tr><th>binary</th><th>verdict</th><th>pass</th><th>reported</th><th>fail</th><th>skip</th><th>time</th><th>reason</th></tr>\n")
	for _, bin := range r.Root.Children {
		c := bin.Counts()
		fails := c[tap.StatusFail] + c[tap.StatusTimeout] + c[tap.StatusError] + c[tap.StatusMissing]
		rep := 0
		bin.Walk(func(_ []string, l *tap.Node) {
			if _, ok := l.ReportedOnly(); ok {
				rep++
			}
		})
		fmt.Fprintf(b, `<tr><td>%s</td><td class="%s">%s</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td><td class="n">%.1fs</td><td>%s</td></tr>`+"\n",
			esc(bin.Key()), runner.ResultWord(bin.Status), strings.ToUpper(bin.Status.String()),
			c[tap.StatusPass]+c[tap.StatusXFail]+c[tap.StatusTodo]-rep, rep, fails, c[tap.StatusSkip], bin.Duration.Seconds(), esc(bin.Reason))
	}
	b.WriteString("</table>\n")

	var failed, reported []runner.Leaf
	skips := map[string][]string{}
	for _, l := range runner.Leaves(r.Root) {
		if _, ok := l.Node.ReportedOnly(); ok {
			reported = append(reported, l)
			continue
		}
		switch {
		case l.Node.Status.Failed() || (l.Node == l.Binary && l.Binary.Status.Failed()):
			failed = append(failed, l)
		case l.Node.Status == tap.StatusSkip:
			skips[l.Node.Reason] = append(skips[l.Node.Reason], l.Path)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(b, "<h3>Failures (%d)</h3>\n", len(failed))
		for _, l := range failed {
			fmt.Fprintf(b, `<p class="fail">%s: %s</p><pre>`, esc(l.Path), esc(strings.ToUpper(strings.TrimSpace(l.Node.Status.String()+" "+l.Node.Reason))))
			for _, d := range l.Node.Diagnostics {
				if strings.HasPrefix(d, "HINT:") {
					fmt.Fprintf(b, "<span class=\"hint\">%s</span>\n", esc(d))
					continue
				}
				b.WriteString(esc(d) + "\n")
			}
			b.WriteString("</pre>\n")
		}
	}
	if len(skips) > 0 {
		var reasons []string
		for k := range skips {
			reasons = append(reasons, k)
		}
		sort.Slice(reasons, func(i, j int) bool { return len(skips[reasons[i]]) > len(skips[reasons[j]]) })
		b.WriteString("<h3>Skips, by reason</h3>\n<table><tr><th>cases</th><th>reason</th><th>first cases</th></tr>\n")
		for _, k := range reasons {
			paths := skips[k]
			first := paths
			if len(first) > 3 {
				first = first[:3]
			}
			fmt.Fprintf(b, `<tr><td class="n">%d</td><td>%s</td><td>%s</td></tr>`+"\n", len(paths), esc(orDash(k)), esc(strings.Join(first, ", ")))
		}
		b.WriteString("</table>\n")
	}
	if len(reported) > 0 {
		fmt.Fprintf(b, "<h3>Reported, not gated (%d)</h3>\n<p>These cases measured without a threshold: their setup held and nothing failed, but no gate decided them, so they are not passes.</p>\n<table><tr><th>case</th><th>verdict</th><th>figures</th></tr>\n", len(reported))
		for _, l := range reported {
			text, _ := l.Node.ReportedOnly()
			fmt.Fprintf(b, `<tr><td>%s</td><td class="reported">REPORTED</td><td>%s</td></tr>`+"\n", esc(l.Path), esc(text))
		}
		b.WriteString("</table>\n")
	}
	plots := Plots(r.Root)
	if len(plots) > 0 {
		b.WriteString("<h3>Perf measurements</h3>\n<div>")
		for _, p := range plots {
			b.WriteString(p.SVG())
			b.WriteString("\n")
		}
		b.WriteString("</div>\n")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sizeRE finds a case's size parameter: a trailing "_n4", "_p2", "_10k",
// "_100k" or "_1m" (before a ".fs" suffix).
var sizeRE = regexp.MustCompile(`^(.*)_([a-z]?)(\d+)([km]?)$`)

// Plots builds the perf plots of a run. Cases of one binary whose names
// differ only in a size parameter become curves (value against size, one
// line per condition, per unit, and the gated ratio per experiment); the
// rest become one dot chart per binary of their gated ratios with intervals,
// with the reference line at 1.
func Plots(root *tap.Node) []*Plot {
	var plots []*Plot
	for _, bin := range root.Children {
		curves := map[string]*Plot{} // by series family + unit
		var order []string
		dots := &Plot{Title: bin.Key() + ": ratio (measured / base) with its interval", Unit: "ratio", Dots: true, Ref: 1}
		dotSeries := Series{Name: "ratio"}
		bin.WalkKeys(func(path []string, l *tap.Node) {
			ms := l.Measurements()
			if len(ms) == 0 {
				return
			}
			gates := l.Gates()
			_, reported := l.ReportedOnly()
			point := func(x float64, label string, m tap.Measurement) Point {
				return Point{X: x, Label: label, Y: m.Value, Lo: m.Lo, Hi: m.Hi, Gate: gates[m.Name], Reported: reported && m.Unit == "ratio"}
			}
			name := strings.Join(path, ".")
			fs := ""
			if i := strings.IndexByte(name, '.'); i >= 0 {
				name, fs = name[:i], name[i:]
			}
			m := sizeRE.FindStringSubmatch(name)
			if m == nil {
				for _, x := range ms {
					if x.Name == "ratio" { // the gated metric's ratio
						dotSeries.Points = append(dotSeries.Points, point(0, strings.Join(path, ".")+suffix(x.Name), x))
					}
				}
				return
			}
			family, param := m[1]+fs, m[2]
			size, _ := strconv.ParseFloat(m[3], 64)
			switch m[4] {
			case "k":
				size *= 1e3
			case "m":
				size *= 1e6
			}
			for _, x := range ms {
				if x.Unit == "ratio" && x.Name != "ratio" {
					continue // only the gated metric's ratio: one ratio plot, readable
				}
				// One plot per unit (and filesystem): the conditions of
				// every family side by side, so "none", "other" and "watch"
				// share the axes; ratios are per family, the gated ones
				// apart from those reported only, whose axis would squash
				// the gated ones against their gates.
				key := fs + "|" + x.Unit
				what := x.Unit
				if x.Unit == "ratio" && reported {
					key += "|reported"
					what = "ratio (reported, not gated)"
				}
				p := curves[key]
				if p == nil {
					xl := "size"
					switch param {
					case "n":
						xl = "clients (n)"
					case "p":
						xl = "workers (p)"
					}
					p = &Plot{Title: fmt.Sprintf("%s%s: %s against %s", bin.Key(), fs, what, xl), XLabel: xl, Unit: x.Unit}
					if x.Unit == "ratio" {
						p.Ref = 1
					}
					curves[key] = p
					order = append(order, key)
				}
				sname := x.Name
				if x.Unit == "ratio" {
					sname = strings.TrimSuffix(family, fs) + " " + x.Name
				}
				idx := -1
				for i, s := range p.Series {
					if s.Name == sname {
						idx = i
					}
				}
				if idx < 0 {
					p.Series = append(p.Series, Series{Name: sname})
					idx = len(p.Series) - 1
				}
				p.Series[idx].Points = append(p.Series[idx].Points, point(size, name, x))
			}
		})
		for _, k := range order {
			p := curves[k]
			if maxX(p) >= 1000 {
				p.LogX = true
			}
			plots = append(plots, p)
		}
		if len(dotSeries.Points) > 0 {
			dots.Series = []Series{dotSeries}
			plots = append(plots, dots)
		}
	}
	return plots
}

func suffix(name string) string {
	if name == "ratio" {
		return ""
	}
	return " (" + name + ")"
}

func maxX(p *Plot) float64 {
	m := 0.0
	for _, s := range p.Series {
		for _, pt := range s.Points {
			m = max(m, pt.X)
		}
	}
	return m
}

// RunLabel names a run: its Label (fsnsuite report -label), else its
// kernel and its results directory, "6.18.0 (results/a)", so that two runs
// on one kernel (a patch and its base built alike) stay apart.
func RunLabel(r *runner.Results) string {
	switch {
	case r.Label != "":
		return r.Label
	case r.Info.Kernel != "":
		return r.Info.Kernel + " (" + r.Dir + ")"
	}
	return r.Dir
}

// Compare builds the before/after charts of several runs (a kernel and a
// patched one): per binary and unit, one row per measurement of each leaf,
// the first run's figure and each other run's beside it, with intervals.
// Only figures the first run and at least one other run both have are shown.
func Compare(runs []*runner.Results) []*Plot {
	if len(runs) < 2 {
		return nil
	}
	type key struct{ bin, unit string }
	type fig struct {
		m        tap.Measurement
		gate     float64
		reported bool
	}
	figs := make([]map[string]fig, len(runs)) // per run: "bin|path|name" -> figure
	for i, r := range runs {
		figs[i] = map[string]fig{}
		for _, bin := range r.Root.Children {
			bin.WalkKeys(func(path []string, l *tap.Node) {
				gates := l.Gates()
				_, reported := l.ReportedOnly()
				for _, m := range l.Measurements() {
					figs[i][bin.Key()+"|"+strings.Join(path, ".")+"|"+m.Name] = fig{m, gates[m.Name], reported && m.Unit == "ratio"}
				}
			})
		}
	}
	var keys []string
	for k := range figs[0] {
		for _, f := range figs[1:] {
			if _, ok := f[k]; ok {
				keys = append(keys, k)
				break
			}
		}
	}
	sort.Strings(keys)
	plots := map[key]*Plot{}
	var order []key
	for _, k := range keys {
		parts := strings.SplitN(k, "|", 3)
		m0 := figs[0][k].m
		pk := key{parts[0], m0.Unit}
		p := plots[pk]
		if p == nil {
			p = &Plot{Title: fmt.Sprintf("%s: %s, run by run", parts[0], m0.Unit), Unit: m0.Unit, Dots: true, Interleave: true}
			if m0.Unit == "ratio" {
				p.Ref = 1
			}
			for i, r := range runs {
				p.Series = append(p.Series, Series{Name: fmt.Sprintf("run %d: %s", i+1, RunLabel(r))})
			}
			plots[pk] = p
			order = append(order, pk)
		}
		for i := range runs {
			if f, ok := figs[i][k]; ok {
				p.Series[i].Points = append(p.Series[i].Points, Point{Label: parts[1] + " " + parts[2], Y: f.m.Value, Lo: f.m.Lo, Hi: f.m.Hi, Gate: f.gate, Reported: f.reported})
			}
		}
	}
	var out []*Plot
	for _, k := range order {
		out = append(out, plots[k])
	}
	return out
}
