package htmlreport

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
)

// Point is one plotted value with an optional interval (Lo == Hi == 0: none).
type Point struct {
	X      float64
	Label  string // the x tick (dot charts) or tooltip
	Y      float64
	Lo, Hi float64
}

// Series is a named line of points.
type Series struct {
	Name   string
	Points []Point
}

// Plot is one chart: a line chart of Y against a numeric X (Lines), or a dot
// chart with one row per labelled point (Dots), with whiskers for intervals
// and an optional reference value (a ratio's 1).
type Plot struct {
	Title  string
	XLabel string
	YLabel string
	Series []Series
	Dots   bool
	Ref    float64 // drawn when non-zero
	LogX   bool
	// Interleave orders a dot chart's rows point by point across the series
	// (a before/after pair next to each other) instead of series by series.
	Interleave bool
}

// N is how many points the plot draws.
func (p *Plot) N() int {
	n := 0
	for _, s := range p.Series {
		n += len(s.Points)
	}
	return n
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

const (
	plotW, plotH                   = 720, 300
	padL, padR, padT, padB         = 70, 190, 30, 45
	innerW, innerH                 = plotW - padL - padR, plotH - padT - padB
	dotRowH                        = 22
	dotPadL                        = 340
	dotInnerW                      = plotW - dotPadL - 40
	maxTicks                       = 6
	pointRadius            float64 = 3.5
)

// SVG renders the plot as a standalone <svg> element. Every point is a
// <circle class="pt">; the element carries data-points with their count so a
// reader (the browser test) can check that none went missing.
func (p *Plot) SVG() string {
	if p.Dots {
		return p.dotSVG()
	}
	return p.lineSVG()
}

func (p *Plot) yRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for _, pt := range s.Points {
			vals := []float64{pt.Y}
			if pt.Lo != 0 || pt.Hi != 0 {
				vals = append(vals, pt.Lo, pt.Hi)
			}
			for _, v := range vals {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if p.Ref != 0 {
		lo, hi = math.Min(lo, p.Ref), math.Max(hi, p.Ref)
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	if !p.Dots && lo > 0 && lo < hi/3 {
		lo = 0 // a value axis that starts at 0 when the data are not all far from it
	}
	if hi == lo {
		hi, lo = hi+math.Abs(hi)*0.05+1e-9, lo-math.Abs(lo)*0.05-1e-9
	}
	pad := (hi - lo) * 0.05
	return lo - pad, hi + pad
}

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

func num(v float64) string {
	if math.Abs(v) < 1e-12 {
		v = 0 // no "-0" from a tick computed as a tiny negative
	}
	return strings.TrimSuffix(fmt.Sprintf("%.4g", v), ".")
}

func (p *Plot) header(b *strings.Builder, w, h int) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="%d" height="%d" viewBox="0 0 %d %d" data-points="%d" role="img" aria-label="%s">`,
		w, h, w, h, p.N(), html.EscapeString(p.Title))
	fmt.Fprintf(b, `<text x="%d" y="18" class="title">%s</text>`, 10, html.EscapeString(p.Title))
}

func (p *Plot) lineSVG() string {
	var b strings.Builder
	p.header(&b, plotW, plotH)
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
	ylo, yhi := p.yRange()
	X := func(x float64) float64 { return padL + (tx(x)-xlo)/(xhi-xlo)*innerW }
	Y := func(y float64) float64 { return padT + (1-(y-ylo)/(yhi-ylo))*innerH }
	// Axes, ticks, labels.
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, padL, padT+innerH, padL+innerW, padT+innerH)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, padL, padT, padL, padT+innerH)
	for _, v := range ticks(ylo, yhi) {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`,
			padL, Y(v), padL+innerW, Y(v), padL-5, Y(v)+4, num(v))
	}
	for _, x := range xv {
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, X(x), padT+innerH+15, num(x))
	}
	fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="middle">%s</text>`, padL+innerW/2, plotH-8, html.EscapeString(p.XLabel))
	fmt.Fprintf(&b, `<text class="label" transform="translate(14 %d) rotate(-90)" text-anchor="middle">%s</text>`, padT+innerH/2, html.EscapeString(p.YLabel))
	if p.Ref != 0 {
		fmt.Fprintf(&b, `<line class="ref" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`, padL, Y(p.Ref), padL+innerW, Y(p.Ref))
	}
	for i, s := range p.Series {
		c := palette[i%len(palette)]
		pts := append([]Point(nil), s.Points...)
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
			if pt.Lo != 0 || pt.Hi != 0 {
				fmt.Fprintf(&b, `<line stroke="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, c, X(pt.X), Y(pt.Lo), X(pt.X), Y(pt.Hi))
			}
			fmt.Fprintf(&b, `<circle class="pt" fill="%s" cx="%.1f" cy="%.1f" r="%.1f"><title>%s: %s = %s</title></circle>`,
				c, X(pt.X), Y(pt.Y), pointRadius, html.EscapeString(s.Name), num(pt.X), num(pt.Y))
		}
		ly := padT + 14*i
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text class="legend" x="%d" y="%d">%s</text>`,
			padL+innerW+12, ly, c, padL+innerW+26, ly+9, html.EscapeString(s.Name))
	}
	b.WriteString("</svg>")
	return b.String()
}

func (p *Plot) dotSVG() string {
	var rows []Point
	var colors []string
	add := func(i int, pt Point) {
		rows = append(rows, pt)
		colors = append(colors, palette[i%len(palette)])
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
	top := padT
	if len(p.Series) > 1 {
		top += 16 // a legend line: which colour is which series
	}
	h := top + dotRowH*len(rows) + padB
	var b strings.Builder
	p.header(&b, plotW, h)
	if len(p.Series) > 1 {
		x := 10
		for i, s := range p.Series {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text class="legend" x="%d" y="%d">%s</text>`,
				x, padT-4, palette[i%len(palette)], x+14, padT+5, html.EscapeString(s.Name))
			x += 24 + 7*len(s.Name)
		}
	}
	lo, hi := p.yRange()
	X := func(v float64) float64 { return dotPadL + (v-lo)/(hi-lo)*dotInnerW }
	bottom := top + dotRowH*len(rows)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, dotPadL, bottom, dotPadL+dotInnerW, bottom)
	for _, v := range ticks(lo, hi) {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/><text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`,
			X(v), top, X(v), bottom, X(v), bottom+15, num(v))
	}
	fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="middle">%s</text>`, dotPadL+dotInnerW/2, h-8, html.EscapeString(p.YLabel))
	if p.Ref != 0 {
		fmt.Fprintf(&b, `<line class="ref" x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`, X(p.Ref), top, X(p.Ref), bottom)
	}
	for i, pt := range rows {
		y := float64(top + dotRowH*i + dotRowH/2)
		if i == 0 || rows[i-1].Label != pt.Label { // a before/after pair shares its label
			fmt.Fprintf(&b, `<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`, dotPadL-8, y+4, html.EscapeString(pt.Label))
		}
		if pt.Lo != 0 || pt.Hi != 0 {
			fmt.Fprintf(&b, `<line stroke="%s" stroke-width="1.5" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, colors[i], X(pt.Lo), y, X(pt.Hi), y)
		}
		fmt.Fprintf(&b, `<circle class="pt" fill="%s" cx="%.1f" cy="%.1f" r="%.1f"><title>%s = %s</title></circle>`,
			colors[i], X(pt.Y), y, pointRadius, html.EscapeString(pt.Label), num(pt.Y))
	}
	b.WriteString("</svg>")
	return b.String()
}
