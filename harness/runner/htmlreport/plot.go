package htmlreport

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/runner"
)

// Point is one plotted value with an optional interval (Lo == Hi == 0: none;
// an infinite end: unbounded, labelled so instead of a whisker to the edge).
// A value that is not finite is not drawn.
type Point struct {
	X      float64
	Label  string // the row's label (dot charts) or tooltip
	Y      float64
	Lo, Hi float64
	// Gate is the threshold the case's verdict held this figure to (its
	// "gate: ratio <= MAX" line), 0 for none.
	Gate float64
	// Reported marks a figure no gate judged (a ratio of a case reported,
	// not gated, or decided by other figures): drawn hollow.
	Reported bool
}

// hasInterval reports whether the point carries an interval.
func (pt Point) hasInterval() bool { return pt.Lo != 0 || pt.Hi != 0 }

// unbounded reports whether the point's interval has an infinite (or
// undefined) end.
func (pt Point) unbounded() bool {
	return pt.hasInterval() && (!finite(pt.Lo) || !finite(pt.Hi))
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Series is a named line of points.
type Series struct {
	Name   string
	Points []Point
}

// Plot is one chart: a line chart of Y against a numeric X (Lines), or a dot
// chart with one row per labelled point (Dots), with whiskers for intervals,
// an optional reference value (a ratio's 1) and the gates of its points.
type Plot struct {
	Title  string
	XLabel string
	// Unit is the values' unit ("ratio", "ns/op", "ops/s", ...): an axis of
	// an absolute unit starts at 0 and reads in human units (ns, µs, ms; k, M).
	Unit   string
	Series []Series
	Dots   bool
	Ref    float64 // drawn when non-zero
	LogX   bool
	// Interleave orders a dot chart's rows point by point across the series
	// (a before/after pair next to each other) instead of series by series.
	Interleave bool
	// OwnAxis gives each label of a dot chart (a figure, or a before/after
	// pair) its own axis, scaled to its values, intervals and gate: figures
	// of very different sizes (1.02 beside 641) each read at their scale.
	OwnAxis bool
}

// N is how many points the plot draws (those with a finite value).
func (p *Plot) N() int {
	n := 0
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if finite(pt.Y) {
				n++
			}
		}
	}
	return n
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// The drawing's own coordinates (its viewBox); the page scales it to its
// width.
const (
	plotW                          = 960
	lineH                          = 330
	padL, padR, padT, padB         = 80, 240, 34, 48
	innerW, innerH                 = plotW - padL - padR, lineH - padT - padB
	dotRowH                        = 22
	dotPadR                        = 40
	maxTicks                       = 7
	pointRadius            float64 = 3.5
	charW                  float64 = 6.4 // an 11px tick label's mean character width
)

// SVG renders the plot as a standalone <svg> element, as wide as the page.
// Every point is a <circle class="pt">; the element carries data-points
// with their count so that a reader (the browser test) can check that none
// went missing.
func (p *Plot) SVG() string {
	if p.Dots {
		return p.dotSVG()
	}
	return p.lineSVG()
}

// absolute reports whether the plot's values are absolute figures (not
// ratios): their axis starts at 0.
func (p *Plot) absolute() bool { return p.Unit != "ratio" && p.Unit != "" }

// valueRange is the value axis's range: every value, interval end, gate and
// the reference inside it (so that no whisker is ever clipped), 0 too for an
// absolute unit, with a margin.
func (p *Plot) valueRange() (lo, hi float64) {
	var pts []Point
	for _, s := range p.Series {
		pts = append(pts, s.Points...)
	}
	return rangeOf(pts, p.Ref, p.absolute())
}

// rangeOf is the range of an axis for pts: every finite value and interval
// end and every gate, ref (when non-zero) and 0 (when zero is set) inside it,
// with a margin. An infinite interval end is left out: it is labelled
// "unbounded", not drawn.
func rangeOf(pts []Point, ref float64, zero bool) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	add := func(v float64) {
		if finite(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, pt := range pts {
		if !finite(pt.Y) {
			continue
		}
		add(pt.Y)
		if pt.hasInterval() {
			add(pt.Lo)
			add(pt.Hi)
		}
		if pt.Gate != 0 {
			add(pt.Gate)
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	if ref != 0 {
		add(ref)
	}
	if zero {
		add(0)
	}
	if hi == lo {
		hi, lo = hi+math.Abs(hi)*0.05+1e-9, lo-math.Abs(lo)*0.05-1e-9
	}
	pad := (hi - lo) * 0.05
	if zero && lo == 0 {
		return 0, hi + pad
	}
	return lo - pad, hi + pad
}

// ticks are round values between lo and hi, at most maxTicks of them.
func ticks(lo, hi float64) []float64 {
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/maxTicks)))
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(step*m) <= maxTicks {
			step *= m
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, v)
	}
	return out
}

// num writes v with 4 significant digits in plain decimals, as the
// comparison table does (runner.FormatValue): never an exponent.
func num(v float64) string {
	if math.Abs(v) < 1e-12 {
		v = 0 // no "-0" from a tick computed as a tiny negative
	}
	return runner.FormatValue(v, "")
}

// human writes a count with a k, M or G suffix from 10,000 on: 10k, 100k, 1.5M.
func human(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return num(v/1e9) + "G"
	case a >= 1e6:
		return num(v/1e6) + "M"
	case a >= 1e4:
		return num(v/1e3) + "k"
	}
	return num(v)
}

// scale is how an axis writes its values: divided by div, with unit as its
// title; counts with human suffixes.
type scale struct {
	div   float64
	unit  string
	count bool
}

// scaleFor picks the axis's scale for values up to top: a unit in
// nanoseconds ("ns/op", "p99-ns", "cpu-ns/op") reads in ns, µs, ms or s;
// a ratio as it is; any other unit (ops/s) as a count.
func scaleFor(unit string, top float64) scale {
	switch {
	case unit == "ratio" || unit == "":
		return scale{div: 1, unit: unit}
	case runner.Nanoseconds(unit):
		div, name := 1.0, "ns"
		switch {
		case top >= 1e9:
			div, name = 1e9, "s"
		case top >= 1e6:
			div, name = 1e6, "ms"
		case top >= 1e3:
			div, name = 1e3, "µs"
		}
		return scale{div: div, unit: strings.Replace(unit, "ns", name, 1)}
	}
	return scale{div: 1, unit: unit, count: true}
}

// label writes v (in the plot's unit) in the scale's.
func (s scale) label(v float64) string {
	if s.count {
		return human(v)
	}
	return num(v / s.div)
}

// ticks are round values of the scale between lo and hi, in the plot's unit.
func (s scale) ticks(lo, hi float64) []float64 {
	var out []float64
	for _, t := range ticks(lo/s.div, hi/s.div) {
		out = append(out, t*s.div)
	}
	return out
}

// value writes v with its unit, for a tooltip.
func (s scale) value(v float64) string {
	if s.unit == "" {
		return s.label(v)
	}
	return s.label(v) + " " + s.unit
}

func (p *Plot) header(b *strings.Builder, w, h int) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="%d" height="%d" viewBox="0 0 %d %d" data-points="%d" role="img" aria-label="%s">`,
		w, h, w, h, p.N(), html.EscapeString(p.Title))
	fmt.Fprintf(b, `<text x="%d" y="18" class="title">%s</text>`, 10, html.EscapeString(p.Title))
}

// gates are the distinct gate values of the plot's points, in order.
func (p *Plot) gates() []float64 {
	seen := map[float64]bool{}
	var out []float64
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if pt.Gate != 0 && !seen[pt.Gate] {
				seen[pt.Gate] = true
				out = append(out, pt.Gate)
			}
		}
	}
	sort.Float64s(out)
	return out
}

// circle draws a point: filled, or hollow for a reported-only figure.
func circle(b *strings.Builder, c string, x, y float64, pt Point, title string) {
	fill, extra := c, ""
	if pt.Reported {
		fill, extra = "#fff", fmt.Sprintf(` stroke="%s" stroke-width="1.5"`, c)
		title += " (reported, not gated)"
	}
	fmt.Fprintf(b, `<circle class="pt" fill="%s"%s cx="%.1f" cy="%.1f" r="%.1f"><title>%s</title></circle>`,
		fill, extra, x, y, pointRadius, html.EscapeString(title))
}

func (p *Plot) lineSVG() string {
	var b strings.Builder
	p.header(&b, plotW, lineH)
	xs := map[float64]bool{}
	for _, s := range p.Series {
		for _, pt := range s.Points {
			xs[pt.X] = true
		}
	}
	var xv []float64
	for x := range xs {
		xv = append(xv, x)
	}
	sort.Float64s(xv)
	tx := func(x float64) float64 { return x }
	if p.LogX && len(xv) > 0 && xv[0] > 0 {
		tx = math.Log10
	}
	xlo, xhi := 0.0, 1.0
	if len(xv) > 0 {
		xlo, xhi = tx(xv[0]), tx(xv[len(xv)-1])
	}
	if xhi == xlo {
		xlo, xhi = xlo-1, xhi+1
	}
	ylo, yhi := p.valueRange()
	sc := scaleFor(p.Unit, math.Max(math.Abs(ylo), math.Abs(yhi)))
	X := func(x float64) float64 { return padL + (tx(x)-xlo)/(xhi-xlo)*innerW }
	Y := func(y float64) float64 { return padT + (1-(y-ylo)/(yhi-ylo))*innerH }
	// Axes, ticks, labels.
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, padL, padT+innerH, padL+innerW, padT+innerH)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, padL, padT, padL, padT+innerH)
	for _, v := range sc.ticks(ylo, yhi) {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`,
			padL, Y(v), padL+innerW, Y(v), padL-5, Y(v)+4, sc.label(v))
	}
	for _, x := range xv {
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, X(x), padT+innerH+15, human(x))
	}
	fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="middle">%s</text>`, padL+innerW/2, lineH-8, html.EscapeString(p.XLabel))
	fmt.Fprintf(&b, `<text class="label" transform="translate(16 %d) rotate(-90)" text-anchor="middle">%s</text>`, padT+innerH/2, html.EscapeString(sc.unit))
	if p.Ref != 0 {
		fmt.Fprintf(&b, `<line class="ref" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`, padL, Y(p.Ref), padL+innerW, Y(p.Ref))
	}
	for _, g := range p.gates() {
		fmt.Fprintf(&b, `<line class="gate" x1="%d" y1="%.1f" x2="%d" y2="%.1f"><title>gate ≤ %s</title></line>`,
			padL, Y(g), padL+innerW, Y(g), num(g))
	}
	legend := 0
	for i, s := range p.Series {
		c := palette[i%len(palette)]
		var pts []Point
		for _, pt := range s.Points {
			if finite(pt.Y) {
				pts = append(pts, pt)
			}
		}
		sort.Slice(pts, func(a, b int) bool { return pts[a].X < pts[b].X })
		// The line goes through the mean at each x: a condition measured
		// in several experiments (the base of each) has a point per
		// experiment, all drawn, and one line.
		var path []string
		for i := 0; i < len(pts); {
			j, sum := i, 0.0
			for ; j < len(pts) && pts[j].X == pts[i].X; j++ {
				sum += pts[j].Y
			}
			path = append(path, fmt.Sprintf("%.1f,%.1f", X(pts[i].X), Y(sum/float64(j-i))))
			i = j
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, c, strings.Join(path, " "))
		for _, pt := range pts {
			x := X(pt.X)
			switch {
			case pt.unbounded():
				// No whisker to the plot's edge: the finite end, if any,
				// and the word.
				for _, end := range []float64{pt.Lo, pt.Hi} {
					if finite(end) {
						fmt.Fprintf(&b, `<line class="whisker" stroke="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, c, x, Y(pt.Y), x, Y(end))
					}
				}
				fmt.Fprintf(&b, `<text class="unbounded" x="%.1f" y="%.1f">unbounded</text>`, x+6, Y(pt.Y)-6)
			case pt.hasInterval():
				fmt.Fprintf(&b, `<line class="whisker" stroke="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, c, x, Y(pt.Lo), x, Y(pt.Hi))
			}
			circle(&b, c, x, Y(pt.Y), pt, fmt.Sprintf("%s: %s = %s%s", s.Name, human(pt.X), sc.value(pt.Y), intervalTitle(pt, sc)))
		}
		ly := padT + 14*legend
		legend++
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text class="legend" x="%d" y="%d">%s</text>`,
			padL+innerW+12, ly, c, padL+innerW+26, ly+9, html.EscapeString(s.Name))
	}
	if hollow(p) {
		ly := padT + 14*legend
		legend++
		fmt.Fprintf(&b, `<circle fill="#fff" stroke="#555" stroke-width="1.5" cx="%d" cy="%d" r="4"/><text class="legend" x="%d" y="%d">reported, not gated</text>`,
			padL+innerW+17, ly+5, padL+innerW+26, ly+9)
	}
	// Each gate in the legend, with the series it holds.
	for _, g := range p.gates() {
		var names []string
		for _, s := range p.Series {
			for _, pt := range s.Points {
				if pt.Gate == g {
					names = append(names, s.Name)
					break
				}
			}
		}
		ly := padT + 14*legend
		legend++
		fmt.Fprintf(&b, `<line class="gate" x1="%d" y1="%d" x2="%d" y2="%d"/><text class="legend" x="%d" y="%d">gate ≤ %s: %s</text>`,
			padL+innerW+10, ly+5, padL+innerW+22, ly+5, padL+innerW+26, ly+9, num(g), html.EscapeString(strings.Join(names, ", ")))
	}
	b.WriteString("</svg>")
	return b.String()
}

// hollow reports whether any of the plot's points is reported-only.
func hollow(p *Plot) bool {
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if pt.Reported {
				return true
			}
		}
	}
	return false
}

// dotRow is one row of a dot chart: a point and its series' colour.
type dotRow struct {
	pt    Point
	color string
}

// dotGroup is the rows that share a label (a figure; a before/after pair),
// and, with OwnAxis, their axis's range.
type dotGroup struct {
	label  string
	rows   []dotRow
	lo, hi float64
}

// Heights in the drawing's coordinates of a dot chart's own-axis strip (the
// tick labels under each group) and of the space between groups.
const (
	axisStripH = 18
	groupGap   = 6
)

func (p *Plot) dotSVG() string {
	var rows []dotRow
	add := func(i int, pt Point) {
		rows = append(rows, dotRow{pt, palette[i%len(palette)]})
	}
	if p.Interleave {
		longest := 0
		for _, s := range p.Series {
			longest = max(longest, len(s.Points))
		}
		for j := range longest {
			for i, s := range p.Series {
				if j < len(s.Points) {
					add(i, s.Points[j])
				}
			}
		}
	} else {
		for i, s := range p.Series {
			for _, pt := range s.Points {
				add(i, pt)
			}
		}
	}
	var groups []*dotGroup
	for _, r := range rows {
		if len(groups) == 0 || groups[len(groups)-1].label != r.pt.Label {
			groups = append(groups, &dotGroup{label: r.pt.Label})
		}
		g := groups[len(groups)-1]
		g.rows = append(g.rows, r)
	}
	// The label column is as wide as its longest label (within reason).
	longest := 0
	for _, r := range rows {
		longest = max(longest, len([]rune(rowLabel(r.pt))))
	}
	padDot := int(math.Min(plotW*0.45, math.Max(120, charW*float64(longest)+24)))
	padR := dotPadR
	if p.OwnAxis {
		padR = 72 // room for each axis's unit at its right end
	}
	innerDot := plotW - padDot - padR
	top := padT
	legend := len(p.Series) > 1 || hollow(p) || len(p.gates()) > 0 || p.anyUnbounded()
	if legend {
		top += 16 // a legend line: which colour is which series, hollow, gate
	}
	groupH := func(g *dotGroup) int {
		h := dotRowH * len(g.rows)
		if p.OwnAxis {
			h += axisStripH + groupGap
		}
		return h
	}
	bottom := top
	for _, g := range groups {
		bottom += groupH(g)
	}
	h := bottom + padB
	if p.OwnAxis {
		h = bottom + 24
	}
	var b strings.Builder
	p.header(&b, plotW, h)
	if legend {
		x := 10
		if len(p.Series) > 1 {
			for i, s := range p.Series {
				fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text class="legend" x="%d" y="%d">%s</text>`,
					x, padT-4, palette[i%len(palette)], x+14, padT+5, html.EscapeString(s.Name))
				x += 24 + int(charW*float64(len([]rune(s.Name))))
			}
		}
		if hollow(p) {
			fmt.Fprintf(&b, `<circle fill="#fff" stroke="#555" stroke-width="1.5" cx="%d" cy="%d" r="4"/><text class="legend" x="%d" y="%d">reported, not gated</text>`,
				x+5, padT+1, x+14, padT+5)
			x += 150
		}
		if len(p.gates()) > 0 {
			fmt.Fprintf(&b, `<line class="gate" x1="%d" y1="%d" x2="%d" y2="%d"/><text class="legend" x="%d" y="%d">the gate the figure was judged against</text>`,
				x+4, padT-5, x+4, padT+7, x+12, padT+5)
			x += 250
		}
		if p.anyUnbounded() {
			fmt.Fprintf(&b, `<text class="legend" x="%d" y="%d">unbounded: an interval with an infinite end (too few rounds)</text>`, x+4, padT+5)
		}
	}
	lo, hi := p.valueRange()
	sc := scaleFor(p.Unit, math.Max(math.Abs(lo), math.Abs(hi)))
	if !p.OwnAxis {
		X := func(v float64) float64 { return float64(padDot) + (v-lo)/(hi-lo)*float64(innerDot) }
		fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, padDot, bottom, padDot+innerDot, bottom)
		for _, v := range sc.ticks(lo, hi) {
			fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/><text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`,
				X(v), top, X(v), bottom, X(v), bottom+15, sc.label(v))
		}
		fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="middle">%s</text>`, padDot+innerDot/2, h-8, html.EscapeString(sc.unit))
		if p.Ref != 0 {
			fmt.Fprintf(&b, `<line class="ref" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`, X(p.Ref), top, X(p.Ref), bottom)
		}
		y := top
		for _, g := range groups {
			p.dotGroupSVG(&b, g, y, padDot, sc, X)
			y += groupH(g)
		}
	} else {
		y := top
		for _, g := range groups {
			var pts []Point
			for _, r := range g.rows {
				pts = append(pts, r.pt)
			}
			g.lo, g.hi = rangeOf(pts, 0, false)
			gsc := scaleFor(p.Unit, math.Max(math.Abs(g.lo), math.Abs(g.hi)))
			X := func(v float64) float64 { return float64(padDot) + (v-g.lo)/(g.hi-g.lo)*float64(innerDot) }
			axisY := y + dotRowH*len(g.rows)
			fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, padDot, axisY, padDot+innerDot, axisY)
			ts := gsc.ticks(g.lo, g.hi)
			end := float64(padDot + innerDot)
			unitX := end + 4 // right of the axis, and of a tick label centred at its end
			for _, v := range ts {
				l := gsc.label(v)
				fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/><text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`,
					X(v), y, X(v), axisY, X(v), axisY+13, l)
				unitX = math.Max(unitX, X(v)+charW*float64(len([]rune(l)))/2+6)
			}
			fmt.Fprintf(&b, `<text class="tick" x="%.0f" y="%d" text-anchor="start">%s</text>`, unitX, axisY+13, html.EscapeString(gsc.unit))
			if p.Ref != 0 && p.Ref > g.lo && p.Ref < g.hi {
				fmt.Fprintf(&b, `<line class="ref" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`, X(p.Ref), y, X(p.Ref), axisY)
			}
			p.dotGroupSVG(&b, g, y, padDot, gsc, X)
			y += groupH(g)
		}
	}
	b.WriteString("</svg>")
	return b.String()
}

// dotGroupSVG draws a group's rows from y down: the label, each row's gate,
// interval (or "unbounded") and point.
func (p *Plot) dotGroupSVG(b *strings.Builder, g *dotGroup, top int, padDot int, sc scale, X func(float64) float64) {
	for i, r := range g.rows {
		pt := r.pt
		y := float64(top + dotRowH*i + dotRowH/2)
		if i == 0 { // a before/after pair shares its label
			fmt.Fprintf(b, `<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`, padDot-8, y+4, html.EscapeString(rowLabel(pt)))
		}
		if pt.Gate != 0 {
			fmt.Fprintf(b, `<line class="gate" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"><title>gate ≤ %s</title></line>`,
				X(pt.Gate), y-dotRowH/2+2, X(pt.Gate), y+dotRowH/2-2, num(pt.Gate))
			if i == 0 {
				fmt.Fprintf(b, `<text class="gatelabel" x="%.1f" y="%.1f">≤ %s</text>`, X(pt.Gate)+3, y-dotRowH/2+9, num(pt.Gate))
			}
		}
		if !finite(pt.Y) {
			fmt.Fprintf(b, `<text class="tick" x="%d" y="%.1f">n/a</text>`, padDot+4, y+4)
			continue
		}
		switch {
		case pt.unbounded():
			for _, end := range []float64{pt.Lo, pt.Hi} {
				if finite(end) {
					fmt.Fprintf(b, `<line class="whisker" stroke="%s" stroke-width="1.5" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, r.color, X(pt.Y), y, X(end), y)
				}
			}
			fmt.Fprintf(b, `<text class="unbounded" x="%.1f" y="%.1f">unbounded</text>`, X(pt.Y)+7, y+4)
		case pt.hasInterval():
			fmt.Fprintf(b, `<line class="whisker" stroke="%s" stroke-width="1.5" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, r.color, X(pt.Lo), y, X(pt.Hi), y)
		}
		circle(b, r.color, X(pt.Y), y, pt, pt.Label+" = "+sc.value(pt.Y)+intervalTitle(pt, sc))
	}
}

// intervalTitle is a point's interval for its tooltip: " [lo, hi]", "
// (interval unbounded)", or "" for none.
func intervalTitle(pt Point, sc scale) string {
	switch {
	case pt.unbounded():
		return " (interval unbounded)"
	case pt.hasInterval():
		return " [" + sc.value(pt.Lo) + ", " + sc.value(pt.Hi) + "]"
	}
	return ""
}

// anyUnbounded reports whether any point's interval is unbounded.
func (p *Plot) anyUnbounded() bool {
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if pt.unbounded() {
				return true
			}
		}
	}
	return false
}

// rowLabel is a dot chart row's label: a reported-only figure says so.
func rowLabel(pt Point) string {
	if pt.Reported {
		return pt.Label + " (reported, not gated)"
	}
	return pt.Label
}
