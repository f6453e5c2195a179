package tap

import (
	"errors"
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

// ParseMeasurement reads a diagnostic written by Measurement.String. A
// figure whose value is not a finite number, or whose interval has a NaN
// bound, is not a measurement (no consumer can store it, JSON cannot even
// write it): NonFinite names it instead. An interval with an infinite bound
// is a measurement: the perf engine's undecided interval ([-Inf,+Inf] when a
// side was never measured), which readers show as unbounded.
func ParseMeasurement(diag string) (Measurement, bool) {
	m, err := parseMeasurement(diag)
	return m, err == nil
}

// errNotMeasurement is parseMeasurement's answer for a diagnostic that is
// not a measurement line at all.
var errNotMeasurement = errors.New("not a measurement")

func parseMeasurement(diag string) (Measurement, error) {
	m := measurementRE.FindStringSubmatch(diag)
	if m == nil {
		return Measurement{}, errNotMeasurement
	}
	num := func(what, s string) (float64, error) {
		v, err := strconv.ParseFloat(s, 64)
		switch {
		case err != nil:
			return 0, fmt.Errorf("%s %q is not a number", what, s)
		case math.IsNaN(v) || math.IsInf(v, 0):
			return 0, fmt.Errorf("%s %s is not finite", what, s)
		}
		return v, nil
	}
	v, err := num("value", m[2])
	if err != nil {
		return Measurement{}, err
	}
	out := Measurement{Name: m[1], Value: v, Unit: m[3]}
	bound := func(s string) (float64, error) {
		v, err := strconv.ParseFloat(s, 64)
		switch {
		case err != nil:
			return 0, fmt.Errorf("interval bound %q is not a number", s)
		case math.IsNaN(v):
			return 0, fmt.Errorf("interval bound %s is not finite", s)
		}
		return v, nil
	}
	if m[4] != "" {
		if out.Lo, err = bound(m[4]); err != nil {
			return Measurement{}, err
		}
		if out.Hi, err = bound(m[5]); err != nil {
			return Measurement{}, err
		}
	}
	return out, nil
}

// NonFinite lists the measurement lines among n's diagnostics that
// Measurements leaves out because a number in them is not finite or not a
// number, each as "NAME: why" (e.g. "ratio: interval bound NaN is not
// finite"), for the note an export puts where the figure would have been.
func (n *Node) NonFinite() []string {
	var out []string
	for _, d := range n.Diagnostics {
		if _, err := parseMeasurement(d); err != nil && err != errNotMeasurement {
			out = append(out, measurementRE.FindStringSubmatch(d)[1]+": "+err.Error())
		}
	}
	return out
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

// ReportedMarker starts the diagnostic that marks a case whose figures are
// reported, not gated: the case is "ok" because its setup held and nothing
// failed, not because a threshold held ("# reported, not gated: ratio ...",
// the perf engine's last line for the case). Summaries, JUnit and the HTML
// report count such a case apart from the passes.
const ReportedMarker = "reported, not gated:"

// ReportedOnly returns the text after ReportedMarker when n is an ok case
// whose figures no threshold decided, and false otherwise.
func (n *Node) ReportedOnly() (string, bool) {
	if n.Status != StatusPass {
		return "", false
	}
	for _, d := range n.Diagnostics {
		if rest, ok := strings.CutPrefix(d, ReportedMarker); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

// Gate is the threshold a case's verdict held a measurement to: the figure
// Name (a ratio) must stay at or below Max. A case prints it as the
// diagnostic "gate: NAME <= MAX" (String), beside its measurements.
type Gate struct {
	Name string
	Max  float64
}

const gateTag = "gate: "

var gateRE = regexp.MustCompile(`^gate: ([a-z0-9_]+) <= (\S+)$`)

// String renders g as the diagnostic text "gate: NAME <= MAX".
func (g Gate) String() string { return gateTag + g.Name + " <= " + fmtFloat(g.Max) }

// ParseGate reads a diagnostic written by Gate.String.
func ParseGate(diag string) (Gate, bool) {
	m := gateRE.FindStringSubmatch(diag)
	if m == nil {
		return Gate{}, false
	}
	v, err := strconv.ParseFloat(m[2], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Gate{}, false
	}
	return Gate{Name: m[1], Max: v}, true
}

// Gates returns the gates among n's diagnostics, by measurement name.
func (n *Node) Gates() map[string]float64 {
	var out map[string]float64
	for _, d := range n.Diagnostics {
		if g, ok := ParseGate(d); ok {
			if out == nil {
				out = map[string]float64{}
			}
			out[g.Name] = g.Max
		}
	}
	return out
}
