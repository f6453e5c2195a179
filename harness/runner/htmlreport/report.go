// Package htmlreport renders results directories as one self-contained HTML
// page. It opens with the verdict (of one run: pass, failed or skipped, its
// failures grouped by reason; of two: the comparison fsnsuite diff prints,
// its regressions, what improved and a benchstat-like table of the perf
// figures), then the plots, each gate drawn (scaling curves where case names
// carry a size, ratios with their intervals otherwise), then per run its
// binaries, every failing case with its diagnostics (diffs, HINT lines) and
// the skips grouped by reason. No script, style sheet or image is fetched:
// the page is one file.
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

// Write renders runs as one HTML page. Given one run, the page opens with
// its verdict and its failures grouped by reason; given several (a kernel
// and a patched one), with the verdict of the comparison of the first with
// each other run (runner.CompareResults, the comparison fsnsuite diff
// prints), its regressions and improvements, and the per-figure table; the
// before/after plots come after those, and each run's own section after
// the plots.
func Write(w io.Writer, runs []*runner.Results) error {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fsnsuite report</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .4em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}h3{font-size:1.05em}
table{border-collapse:collapse}td,th{padding:2px 10px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
td.n{text-align:right;white-space:nowrap}.pass{color:#186a18}.fail{color:#b00020;font-weight:bold}.skip{color:#8a6d00}
pre{background:#f6f6f6;padding:6px;white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px}pre .hint,.hint{color:#b00020;font-weight:bold}
.verdict{font-size:1.25em;padding:8px 12px;margin:.3em 0 .6em;border-left:6px solid}
.verdict.pass{background:#eef7ee;border-color:#186a18}.verdict.fail{background:#fdecee;border-color:#b00020}.verdict.skip{background:#fbf6e3;border-color:#8a6d00}
.runs{color:#555;margin:0 0 .8em}
table.figs td{font-variant-numeric:tabular-nums;white-space:nowrap}table.figs tr.moved td.change{font-weight:bold}
table.figs tr.beyond td{background:#fdecee}.same{color:#777}.why{max-width:60em}
details{margin:0}summary{cursor:pointer;color:#555}
svg.plot{display:block;box-sizing:border-box;width:100%;max-width:1400px;height:auto;margin:8px 0;border:1px solid #ddd;background:#fff}
svg .title{font-weight:bold;font-size:13px}svg .tick,svg .legend{font-size:11px}svg .label{font-size:12px}
svg .axis{stroke:#333}svg .grid{stroke:#eee}svg .ref{stroke:#888;stroke-dasharray:4 3}
svg .gate{stroke:#b00020;stroke-width:1.5;stroke-dasharray:6 3}svg .gatelabel{font-size:10px;fill:#b00020}
svg .unbounded{font-size:10px;fill:#555;font-style:italic}
.reported{color:#1f5fa8;font-weight:bold}
</style></head><body>
`)
	if len(runs) >= 2 {
		b.WriteString("<h1>fsnsuite: before and after</h1>\n")
		for _, r := range runs[1:] {
			writeComparison(&b, runner.CompareResults(runs[0], r), len(runs) > 2)
		}
		if cmp := Compare(runs); len(cmp) > 0 {
			b.WriteString("<h2>Plots, before and after</h2>\n<p>Each perf figure of the first run beside the same figure of the others, with its interval, on an axis of its own; the dashed red line is the gate the figure was judged against, a hollow dot a figure reported, not gated")
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
	} else if len(runs) == 1 {
		fmt.Fprintf(&b, "<h1>fsnsuite report: %s</h1>\n", esc(RunLabel(runs[0])))
	}
	for i, r := range runs {
		writeRun(&b, i+1, r, len(runs) > 1)
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

// arrows writes the comparison's "->" as "→" for the page.
func arrows(s string) string { return strings.ReplaceAll(s, " -> ", " → ") }

// writeComparison writes the comparison of two runs: the verdict line
// (runner.Diff.Verdict, fsnsuite diff's), the leaves that went from pass to
// fail with the case's own statement and HINT, those that went the other
// way, the rest counted, and the figures both runs reported.
func writeComparison(b *strings.Builder, d *runner.Diff, named bool) {
	class := "pass"
	if d.Differs() || d.Beyond() > 0 {
		class = "fail"
	}
	word, rest, _ := strings.Cut(d.Verdict(), ": ")
	fmt.Fprintf(b, `<p class="verdict %s" id="verdict"><b>%s</b>: %s</p>`+"\n", class, esc(word), esc(arrows(rest)))
	fmt.Fprintf(b, `<p class="runs">before: %s &nbsp;·&nbsp; after: %s</p>`+"\n", esc(RunLabel(d.Before)), esc(RunLabel(d.After)))
	sub := ""
	if named {
		sub = " (" + esc(RunLabel(d.After)) + ")"
	}
	after, before := leafNodes(d.After), leafNodes(d.Before)
	changes := func(title string, cs []runner.LeafChange, nodes map[string]*tap.Node, why string) {
		if len(cs) == 0 {
			return
		}
		fmt.Fprintf(b, "<h2>%s (%d)%s</h2>\n<table><tr><th>leaf</th><th>before → after</th><th>%s</th></tr>\n", title, len(cs), sub, why)
		for _, c := range cs {
			fmt.Fprintf(b, `<tr><td>%s</td><td class="n">%s → <span class="%s">%s</span></td><td class="why">`, esc(c.Path), esc(c.Before), runner.ResultWord(statusOf(c.After)), esc(c.After))
			if n := nodes[c.Path]; n != nil {
				writeWhy(b, n)
			} else {
				b.WriteString(esc(c.Why))
			}
			b.WriteString("</td></tr>\n")
		}
		b.WriteString("</table>\n")
	}
	changes("Regressions: pass → fail", d.Regressions, after, "why (the case's own statement; HINT)")
	changes("Improved: fail → pass", d.Fixes, before, "why it failed before")
	if len(d.FailBoth) > 0 {
		fmt.Fprintf(b, "<details><summary>Failing in both runs, not caused by the change (%d)</summary>\n<table><tr><th>leaf</th><th>why, after</th></tr>\n", len(d.FailBoth))
		for _, c := range d.FailBoth {
			fmt.Fprintf(b, `<tr><td>%s</td><td class="why">`, esc(c.Path))
			if n := after[c.Path]; n != nil {
				writeWhy(b, n)
			}
			b.WriteString("</td></tr>\n")
		}
		b.WriteString("</table></details>\n")
	}
	var lost []runner.LeafChange
	for _, c := range d.SkipChanged {
		if c.Before == "pass" {
			lost = append(lost, c)
		}
	}
	if len(lost) > 0 {
		fmt.Fprintf(b, "<details><summary>Passed before, skipped after: no verdict after (%d)</summary>\n<table><tr><th>leaf</th><th>skip reason</th></tr>\n", len(lost))
		for _, c := range lost {
			fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td></tr>\n", esc(c.Path), esc(c.Why))
		}
		b.WriteString("</table></details>\n")
	}
	if n := len(d.SkipChanged) - len(lost) + len(d.OnlyBefore) + len(d.OnlyAfter); n > 0 {
		fmt.Fprintf(b, "<p>Other differences: %d skip → pass, %d leaves only before, %d only after (none failing).</p>\n",
			len(d.SkipChanged)-len(lost), len(d.OnlyBefore), len(d.OnlyAfter))
	}
	writeFigureTable(b, d.Figures, sub)
}

// writeWhy writes a failing leaf's statement (without the leaf's own name
// before it), its HINT lines, and its whole diagnostics folded.
func writeWhy(b *strings.Builder, n *tap.Node) {
	b.WriteString(esc(orDash(runner.FullStatement(n))))
	for _, h := range runner.Hints(n) {
		fmt.Fprintf(b, `<br><span class="hint">%s</span>`, esc(h))
	}
	if len(n.Diagnostics) > 1 {
		b.WriteString("<details><summary>diagnostics</summary><pre>")
		for _, d := range n.Diagnostics {
			b.WriteString(esc(d) + "\n")
		}
		b.WriteString("</pre></details>")
	}
}

// trimName drops a statement's leading "NAME (fs): " or "NAME: " when NAME
// is the leaf's own (or its case's): the row already names the leaf.
func trimName(s, name string) string {
	base, _, _ := strings.Cut(name, ".")
	head, rest, ok := strings.Cut(s, ": ")
	if !ok || name == "" {
		return s
	}
	h, _, _ := strings.Cut(head, " (")
	if h == name || h == base || strings.HasPrefix(h, name+"/") || strings.HasPrefix(h, base+".") {
		return rest
	}
	return s
}

// statusOf maps a LeafChange's word back to a status for its CSS class.
func statusOf(word string) tap.Status {
	switch word {
	case "fail":
		return tap.StatusFail
	case "skip":
		return tap.StatusSkip
	}
	return tap.StatusPass
}

// leafNodes maps a run's leaf paths (runner.Leaves) to their nodes.
func leafNodes(r *runner.Results) map[string]*tap.Node {
	m := map[string]*tap.Node{}
	for _, l := range runner.Leaves(r.Root) {
		m[l.Path] = l.Node
	}
	return m
}

// writeFigureTable writes the per-figure comparison, benchstat's way: before
// and after, each ± the wider side of its interval, the change with its
// interval (~ when it spans no change), and the gate the figure was judged
// against.
func writeFigureTable(b *strings.Builder, figs []runner.FigureChange, sub string) {
	if len(figs) == 0 {
		return
	}
	moved := 0
	for _, f := range figs {
		if !f.Spans1() && f.Lo > 0 {
			moved++
		}
	}
	fmt.Fprintf(b, "<h2>Perf figures, before and after (%d; %d moved beyond their intervals)%s</h2>\n", len(figs), moved, sub)
	b.WriteString(`<p>Each figure ± the wider side of its interval (hover for the interval); the change after / before with the interval both runs' intervals allow, <b>~</b> when that interval spans no change; the gate is the threshold the case held the figure to.</p>` + "\n")
	b.WriteString(`<table class="figs"><tr><th>figure</th><th>before</th><th>after</th><th>change</th><th>gate</th></tr>` + "\n")
	for _, f := range figs {
		cls := ""
		switch {
		case f.Beyond:
			cls = "beyond"
		case !f.Spans1() && f.Lo > 0:
			cls = "moved"
		}
		bs, bx := runner.FormatInterval(f.Before)
		as, ax := runner.FormatInterval(f.After)
		change := f.Change()
		changeCell := esc(change)
		if strings.HasPrefix(change, "~ (") {
			changeCell = `~ <span class="same">` + esc(strings.TrimPrefix(change, "~ ")) + `</span>`
		}
		gate := runner.GateText(f.Gate)
		gateCell := esc(gate)
		if f.Gate == 0 {
			gateCell = `<span class="reported">` + gateCell + `</span>`
		}
		if f.Beyond {
			gateCell += ` <span class="fail">beyond</span>`
		}
		fmt.Fprintf(b, `<tr class="%s"><td>%s</td><td class="n" title="%s">%s</td><td class="n" title="%s">%s</td><td class="n change">%s</td><td>%s</td></tr>`+"\n",
			cls, esc(f.Path), esc(bx), esc(bs), esc(ax), esc(as), changeCell, gateCell)
	}
	b.WriteString("</table>\n")
}

// runVerdict is a run's verdict in one line, with its class: FAIL and how
// many leaves failed, SKIP when every leaf skipped, PASS otherwise; with the
// counts.
func runVerdict(r *runner.Results) (class, line string) {
	var pass, reported, fail, skip int
	for _, l := range runner.Leaves(r.Root) {
		_, rep := l.Node.ReportedOnly()
		switch {
		case rep:
			reported++
		case l.Node.Status.Failed() || (l.Node == l.Binary && l.Binary.Status.Failed()):
			fail++
		case l.Node.Status == tap.StatusSkip:
			skip++
		default:
			pass++
		}
	}
	total := pass + reported + fail + skip
	counts := fmt.Sprintf("%d passed, %d reported (not gated), %d failed, %d skipped of %d leaves", pass, reported, fail, skip, total)
	switch {
	case fail > 0:
		return "fail", fmt.Sprintf("<b>FAIL</b>: %d %s failed (%s)", fail, plural(fail, "leaf", "leaves"), counts)
	case total == 0:
		return "skip", "<b>no result</b>: the run has no leaves"
	case skip == total:
		return "skip", fmt.Sprintf("<b>SKIP</b>: all %d leaves skipped", total)
	}
	return "pass", fmt.Sprintf("<b>PASS</b>: %s", counts)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func writeRun(b *strings.Builder, n int, r *runner.Results, several bool) {
	in := r.Info
	if several {
		fmt.Fprintf(b, "<h2>Run %d: %s</h2>\n", n, esc(RunLabel(r)))
	}
	class, verdict := runVerdict(r)
	fmt.Fprintf(b, `<p class="verdict %s">%s</p>`+"\n", class, verdict)
	fmt.Fprintf(b, "<p class=\"runs\">%s: kernel %s (%s) on %s, started %s, %s; results in <code>%s</code></p>\n",
		esc(orDash(in.Suite)), esc(orDash(in.Kernel)), esc(orDash(in.Arch)), esc(orDash(in.Host)),
		esc(in.Start.Format(time.RFC3339)), (time.Duration(in.Seconds * 1e9)).Round(100*time.Millisecond), esc(r.Dir))

	var failed, reported []runner.Leaf
	var skipPaths, skipReasons []string
	for _, l := range runner.Leaves(r.Root) {
		if _, ok := l.Node.ReportedOnly(); ok {
			reported = append(reported, l)
			continue
		}
		switch {
		case l.Node.Status.Failed() || (l.Node == l.Binary && l.Binary.Status.Failed()):
			failed = append(failed, l)
		case l.Node.Status == tap.StatusSkip:
			skipPaths = append(skipPaths, l.Path)
			skipReasons = append(skipReasons, orNone(l.Node.Reason))
		}
	}
	// The failures grouped by reason first (the case's statement without
	// its own name, so that twenty EPERMs are one line), as the run's
	// summary groups its skips.
	if len(failed) > 0 {
		var paths, reasons []string
		hints := map[string]string{}
		for _, l := range failed {
			paths = append(paths, l.Path)
			reason := orNone(trimName(runner.Statement(l.Node), l.Node.Name))
			reasons = append(reasons, reason)
			if h := runner.Hints(l.Node); len(h) > 0 && hints[l.Path] == "" {
				hints[l.Path] = h[0]
			}
		}
		fmt.Fprintf(b, "<h3>Failures by reason (%d)</h3>\n<table><tr><th>leaves</th><th>reason</th><th>first leaves</th></tr>\n", len(failed))
		for _, g := range runner.GroupByReason(paths, reasons) {
			fmt.Fprintf(b, `<tr><td class="n">%d</td><td class="why">%s`, len(g.Paths), esc(g.Reason))
			if h := hints[g.Paths[0]]; h != "" {
				fmt.Fprintf(b, `<br><span class="hint">%s</span>`, esc(h))
			}
			fmt.Fprintf(b, "</td><td>%s</td></tr>\n", esc(firstOf(g.Paths, 3)))
		}
		b.WriteString("</table>\n")
	}

	b.WriteString("<h3>Binaries</h3>\n<table><tr><th>binary</th><th>verdict</th><th>pass</th><th>reported</th><th>fail</th><th>skip</th><th>time</th><th>reason</th></tr>\n")
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

	if len(failed) > 0 {
		fmt.Fprintf(b, "<h3>Failures, each with its diagnostics (%d)</h3>\n", len(failed))
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
	if len(skipPaths) > 0 {
		fmt.Fprintf(b, "<h3>Skips, by reason (%d)</h3>\n<table><tr><th>cases</th><th>reason</th><th>first cases</th></tr>\n", len(skipPaths))
		for _, g := range runner.GroupByReason(skipPaths, skipReasons) {
			fmt.Fprintf(b, `<tr><td class="n">%d</td><td>%s</td><td>%s</td></tr>`+"\n", len(g.Paths), esc(g.Reason), esc(firstOf(g.Paths, 3)))
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
		b.WriteString("<h3>Perf measurements</h3>\n<p>The dashed red line is the gate a figure was judged against; a hollow dot a figure reported, not gated; dot charts give each figure an axis of its own.</p>\n<div>")
		for _, p := range plots {
			b.WriteString(p.SVG())
			b.WriteString("\n")
		}
		b.WriteString("</div>\n")
	}
}

// firstOf is the first n paths, ", ..." when there are more.
func firstOf(paths []string, n int) string {
	if len(paths) <= n {
		return strings.Join(paths, ", ")
	}
	return strings.Join(paths[:n], ", ") + ", ..."
}

func orNone(reason string) string {
	if reason == "" {
		return "(no reason given)"
	}
	return reason
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
		dots := &Plot{Title: bin.Key() + ": ratio (measured / base) with its interval", Unit: "ratio", Dots: true, Ref: 1, OwnAxis: true}
		dotSeries := Series{Name: "ratio"}
		bin.WalkKeys(func(path []string, l *tap.Node) {
			ms := l.Measurements()
			if len(ms) == 0 {
				return
			}
			gates := l.Gates()
			// A ratio no gate judged is marked so: the case is reported,
			// not gated, or other figures (perf_watch_add's guards) decide it.
			point := func(x float64, label string, m tap.Measurement) Point {
				return Point{X: x, Label: label, Y: m.Value, Lo: m.Lo, Hi: m.Hi, Gate: gates[m.Name], Reported: m.Unit == "ratio" && gates[m.Name] == 0}
			}
			// The ratios drawn: the gated metric's ("ratio") and every
			// other ratio with a gate of its own (a guard's).
			drawn := func(m tap.Measurement) bool {
				return m.Unit != "ratio" || m.Name == "ratio" || gates[m.Name] != 0
			}
			name := strings.Join(path, ".")
			fs := ""
			if i := strings.IndexByte(name, '.'); i >= 0 {
				name, fs = name[:i], name[i:]
			}
			m := sizeRE.FindStringSubmatch(name)
			if m == nil {
				for _, x := range ms {
					if x.Unit == "ratio" && drawn(x) {
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
				if !drawn(x) {
					continue // only the gated ratios and the metric's: one ratio plot, readable
				}
				// One plot per unit (and filesystem): the conditions of
				// every family side by side, so "none", "other" and "watch"
				// share the axes; ratios are per family, the gated ones
				// apart from those reported only, whose axis would squash
				// the gated ones against their gates.
				key := fs + "|" + x.Unit
				what := x.Unit
				if x.Unit == "ratio" && gates[x.Name] == 0 {
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
				for _, m := range l.Measurements() {
					figs[i][bin.Key()+"|"+strings.Join(path, ".")+"|"+m.Name] = fig{m, gates[m.Name], m.Unit == "ratio" && gates[m.Name] == 0}
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
			p = &Plot{Title: fmt.Sprintf("%s: %s, run by run", parts[0], m0.Unit), Unit: m0.Unit, Dots: true, Interleave: true, OwnAxis: true}
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
