package perf

import (
	"math"
	"strings"

	"github.com/fsnsuite/fsnsuite/tap"
)

// Measurements are r's figures for CI to track: per metric, the base and
// the measured condition's medians and their ratio, each with its interval.
// CheckWith prints them as "measurement:" diagnostics (tap.Measurement),
// which the runner turns into LAVA measurements, KCIDB numbers and plots.
func (r *Result) Measurements() []tap.Measurement {
	var out []tap.Measurement
	for i, metric := range r.Metrics() {
		s, ok := r.Summaries[metric]
		if !ok {
			continue
		}
		m := measureName(metric)
		ratio := "ratio"
		if i > 0 {
			ratio = m + "_ratio"
		}
		for _, x := range []struct {
			name string
			iv   Interval
			unit string
		}{
			{measureName(r.Base) + "_" + m, s.Base, metric},
			{measureName(r.Cond) + "_" + m, s.Cond, metric},
			{ratio, s.Ratio, "ratio"},
		} {
			if math.IsNaN(x.iv.Center) || math.IsInf(x.iv.Center, 0) {
				continue
			}
			mm := tap.Measurement{Name: x.name, Value: x.iv.Center, Unit: x.unit}
			if finite(x.iv.Lo) && finite(x.iv.Hi) {
				mm.Lo, mm.Hi = x.iv.Lo, x.iv.Hi
			}
			out = append(out, mm)
		}
	}
	return out
}

// GateMeasurement is the threshold r's verdict held its "ratio" measurement
// (the gated metric's) to, which CheckWith prints as a "gate:" diagnostic
// (tap.Gate) for the report to draw; false for an ungated ratio and in the
// self-check modes (-aa, -inject), which judge by other rules.
func (r *Result) GateMeasurement() (tap.Gate, bool) {
	if r.Mode != "gate" || r.Gate.Max <= 0 {
		return tap.Gate{}, false
	}
	return tap.Gate{Name: "ratio", Max: r.Gate.Max}, true
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// measureName makes a condition or metric name [a-z0-9_]: "ns/op" is "ns_per_op".
func measureName(s string) string {
	s = strings.ReplaceAll(strings.ToLower(s), "/", "_per_")
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
