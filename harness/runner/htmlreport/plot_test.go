package htmlreport

import (
	"regexp"
	"strconv"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestScale(t *testing.T) {
	for _, tc := range []struct {
		unit  string
		top   float64
		v     float64
		label string
		axis  string
	}{
		{"ns/op", 900, 500, "500", "ns/op"},
		{"ns/op", 4500, 2000, "2", "µs/op"},
		{"p99-cpu-ns/op", 2.5e6, 1.5e6, "1.5", "p99-cpu-ms/op"},
		{"p50-ns", 3e9, 2e9, "2", "p50-s"},
		{"ops/s", 340000, 100000, "100k", "ops/s"},
		{"ops/s", 3e6, 1.5e6, "1.5M", "ops/s"},
		{"ops/s", 9000, 5000, "5000", "ops/s"},
		{"ratio", 2, 1.05, "1.05", "ratio"},
	} {
		sc := scaleFor(tc.unit, tc.top)
		assert.Check(t, is.Equal(sc.label(tc.v), tc.label), "%s %g", tc.unit, tc.v)
		assert.Check(t, is.Equal(sc.unit, tc.axis), tc.unit)
	}
	assert.Equal(t, human(10000), "10k")
	assert.Equal(t, human(100000), "100k")
	assert.Equal(t, human(512), "512")
}

var (
	whiskerRE = regexp.MustCompile(`<line class="whisker" stroke="[^"]*"(?: stroke-width="[^"]*")? x1="([-0-9.]+)" y1="([-0-9.]+)" x2="([-0-9.]+)" y2="([-0-9.]+)"/>`)
	axisRE    = regexp.MustCompile(`<line class="axis" x1="([-0-9.]+)" y1="([-0-9.]+)" x2="([-0-9.]+)" y2="([-0-9.]+)"/>`)
)

func floats(t *testing.T, m []string) []float64 {
	var out []float64
	for _, s := range m[1:] {
		f, err := strconv.ParseFloat(s, 64)
		assert.NilError(t, err)
		out = append(out, f)
	}
	return out
}

// No whisker is ever clipped: every interval end lies inside the axes,
// whatever the values (an interval far wider than the values, one below 0,
// a gate or the reference outside them).
func TestWhiskersInside(t *testing.T) {
	pts := []Point{
		{X: 1, Label: "a", Y: 1000, Lo: 10, Hi: 90000},
		{X: 2, Label: "b", Y: 1200, Lo: 1100, Hi: 1300, Gate: 5000},
		{X: 4, Label: "c", Y: 50, Lo: -400, Hi: 60},
	}
	for _, p := range []*Plot{
		{Title: "lines", Unit: "ns/op", Series: []Series{{Name: "s", Points: pts}}},
		{Title: "dots", Unit: "ns/op", Dots: true, Series: []Series{{Name: "s", Points: pts}}},
		{Title: "ratio dots", Unit: "ratio", Dots: true, Ref: 1, Series: []Series{{Name: "r", Points: []Point{{Label: "x", Y: 3, Lo: 2.5, Hi: 3.5, Gate: 1.03}}}}},
	} {
		svg := p.SVG()
		axes := axisRE.FindAllStringSubmatch(svg, -1)
		assert.Assert(t, len(axes) >= 1, p.Title)
		a := floats(t, axes[0]) // the value axis's line: x from a[0] to a[2]
		x0, x1 := a[0], a[2]
		y0, y1 := 0.0, 1e9
		if !p.Dots {
			v := floats(t, axes[1]) // the vertical axis: y from v[1] to v[3]
			y0, y1 = v[1], v[3]
		}
		ws := whiskerRE.FindAllStringSubmatch(svg, -1)
		assert.Equal(t, len(ws), len(p.Series[0].Points), p.Title)
		for _, w := range ws {
			c := floats(t, w)
			for _, x := range []float64{c[0], c[2]} {
				assert.Check(t, x >= x0-0.1 && x <= x1+0.1, "%s: whisker x %g outside [%g,%g]", p.Title, x, x0, x1)
			}
			for _, y := range []float64{c[1], c[3]} {
				assert.Check(t, y >= y0-0.1 && y <= y1+0.1, "%s: whisker y %g outside [%g,%g]", p.Title, y, y0, y1)
			}
		}
	}
}
