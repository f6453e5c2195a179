package tap

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Measurement is a figure a case reports for CI to track (LAVA
// measurements, KCIDB's number, the HTML report's plots). A case prints it as
// a diagnostic line (String) before its result line; ParseMeasurement reads
// it back from the parsed stream.
type Measurement struct {
	// Name is [a-z0-9_]: it becomes the last part of a dotted test path.
	Name  string
	Value float64
	// Unit is one word ("ns/op", "ratio", "us").
	Unit string
	// Lo and Hi bound Value's confidence interval; both 0 when there is none.
	Lo, Hi float64
}

const measurementTag = "measurement: "

var measurementRE = regexp.MustCompile(`^measurement: ([a-z0-9_]+) (\S+) (\S+)(?: \[(\S+),(\S+)\])?$`)

// String renders m as the diagnostic text "measurement: NAME VALUE UNIT
// [LO,HI]" (the interval only when there is one).
func (m Measurement) String() string {
	s := fmt.Sprintf("%s%s %s %s", measurementTag, m.Name, fmtFloat(m.Value), strings.Join(strings.Fields(m.Unit), "_"))
	if m.Lo != 0 || m.Hi != 0 {
		s += fmt.Sprintf(" [%s,%s]", fmtFloat(m.Lo), fmtFloat(m.Hi))
	}
	return s
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// ParseMeasurement reads a diagnostic written by Measurement.String.
func ParseMeasurement(diag string) (Measurement, bool) {
	m := measurementRE.FindStringSubmatch(diag)
	if m == nil {
		return Measurement{}, false
	}
	v, err := strconv.ParseFloat(m[2], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Measurement{}, false
	}
	out := Measurement{Name: m[1], Value: v, Unit: m[3]}
	if m[4] != "" {
		out.Lo, _ = strconv.ParseFloat(m[4], 64)
		out.Hi, _ = strconv.ParseFloat(m[5], 64)
	}
	return out, true
}

// Measurements returns the measurements among n's diagnostics, in order.
func (n *Node) Measurements() []Measurement {
	var out []Measurement
	for _, d := range n.Diagnostics {
		if m, ok := ParseMeasurement(d); ok {
			out = append(out, m)
		}
	}
	return out
}
