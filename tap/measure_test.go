package tap

import (
	"math"
	"testing"

	"gotest.tools/v3/assert"
)

func TestMeasurementGateReported(t *testing.T) {
	st := ParseString(`TAP version 13
1..3
# measurement: ratio 1.01 ratio [1,1.02]
# gate: ratio <= 1.03
# ratio 1.0100 [1.0000,1.0200] <= 1.03
ok 1 gated
# measurement: ratio 1.2 ratio [1.1,1.3]
# reported, not gated: ratio 1.2000 [1.1000,1.3000]
ok 2 info
# gate: ratio <= nan
# gate: ratio < 2
not ok 3 broken
`)
	gated, info, bad := st.Children[0], st.Children[1], st.Children[2]
	assert.DeepEqual(t, gated.Measurements(), []Measurement{{Name: "ratio", Value: 1.01, Unit: "ratio", Lo: 1, Hi: 1.02}})
	assert.DeepEqual(t, gated.Gates(), map[string]float64{"ratio": 1.03})
	_, ok := gated.ReportedOnly()
	assert.Assert(t, !ok)
	text, ok := info.ReportedOnly()
	assert.Assert(t, ok)
	assert.Equal(t, text, "ratio 1.2000 [1.1000,1.3000]")
	assert.Assert(t, info.Gates() == nil)
	assert.Assert(t, bad.Gates() == nil, "malformed gate lines are not gates")
	_, ok = bad.ReportedOnly()
	assert.Assert(t, !ok)
	g := Gate{Name: "ratio", Max: 1.25}
	back, ok := ParseGate(g.String())
	assert.Assert(t, ok)
	assert.Equal(t, back, g)
	assert.Equal(t, g.String(), "gate: ratio <= 1.25")
}

// A figure with a number that is not finite is not a measurement (no
// consumer can hold it: JSON has no NaN); NonFinite names it and why, for
// the note that takes its place (issue 33 item 6).
func TestMeasurementNonFinite(t *testing.T) {
	st := ParseString(`TAP version 13
1..1
# measurement: ns_per_op 1664 ns/op [1651,1678]
# measurement: ratio 1.02 ratio [NaN,+Inf]
# measurement: inf_value Inf ns/op
# measurement: count 12 ops [x,2]
# measurement: undecided 1.1 ratio [-Inf,+Inf]
# not a measurement: NaN
ok 1 write.tmpfs
`)
	leaf := st.Children[0]
	assert.DeepEqual(t, leaf.Measurements(), []Measurement{
		{Name: "ns_per_op", Value: 1664, Unit: "ns/op", Lo: 1651, Hi: 1678},
		{Name: "undecided", Value: 1.1, Unit: "ratio", Lo: math.Inf(-1), Hi: math.Inf(1)},
	})
	assert.DeepEqual(t, leaf.NonFinite(), []string{
		"ratio: interval bound NaN is not finite",
		"inf_value: value Inf is not finite",
		`count: interval bound "x" is not a number`,
	})
}
