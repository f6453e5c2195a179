package tap

import (
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
