package tap

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes root as indented JSON (the Node fields, statuses by name).
func WriteJSON(w io.Writer, root *Node) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("writing json report: %w", err)
	}
	return nil
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Props    *junitProps `xml:"properties"`
	Cases    []junitCase `xml:"testcase"`
	Out      *junitText  `xml:"system-out"`
}

// junitProps is a testsuite's <properties>. junit-10.xsd allows them on a
// testsuite only, not on a testcase.
type junitProps struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// ReportedProperty names the testsuite property that marks one of its
// testcases as reported, not gated (Node.ReportedOnly): its value is the
// testcase's name. Jenkins xunit's junit-10.xsd allows no properties on a
// testcase, so the mark sits on its suite; the testcase itself passes, its
// system-out carrying the ReportedMarker line.
const ReportedProperty = "reported_not_gated"

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *junitMessage `xml:"skipped"`
	Error     *junitMessage `xml:"error"`
	Failure   *junitMessage `xml:"failure"`
	Out       *junitText    `xml:"system-out"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",cdata"`
}

// junitText is element text kept as CDATA, so that newlines stay readable.
type junitText struct {
	Text string `xml:",cdata"`
}

func text(s string) *junitText {
	if s == "" {
		return nil
	}
	return &junitText{Text: s}
}

// VerdictCase names the JUnit testcase (and results-file line) that carries a
// block's own verdict when the block as a whole went wrong (a crash, a
// timeout, a broken plan), so that it can never hide behind green leaves.
const VerdictCase = "binary_verdict"

// WriteJUnit writes root as JUnit XML that Jenkins xunit's junit-10.xsd
// accepts: one <testsuite> per top-level child (one test binary in a runner
// stream), one <testcase> per leaf below it named by its dotted path
// (Node.Key of each level joined by "."), each with a time, <skipped
// message="reason">, <failure> carrying the diagnostics, and <error> for
// missing points, timeouts of the whole suite and problems of the stream
// (bail out, broken plan; a testcase named VerdictCase). A testcase that was
// reported, not gated, passes and is named by a ReportedProperty of its
// testsuite. suite names the
// <testsuites> element and prefixes every classname. Leaves carry no time of
// their own in TAP: each gets its block's time divided among its leaves.
func WriteJUnit(w io.Writer, root *Node, suite string) error {
	doc := junitSuites{Name: suite}
	var total float64
	for _, top := range root.Children {
		s := junitSuite{Name: top.Key()}
		class := top.Key()
		if suite != "" {
			class = suite + "." + class
		}
		total += top.Duration.Seconds()
		s.Time = secs(top.Duration.Seconds())
		leaves := 0
		top.Walk(func([]string, *Node) { leaves++ })
		share := secs(top.Duration.Seconds() / float64(max(leaves, 1)))
		if len(top.Children) == 0 {
			c := junitCaseFor(top.Key(), class, top)
			c.Time = s.Time
			s.Cases = append(s.Cases, c)
		}
		top.WalkKeys(func(path []string, leaf *Node) {
			c := junitCaseFor(strings.Join(path, "."), class, leaf)
			c.Time = share
			s.Cases = append(s.Cases, c)
			if _, ok := leaf.ReportedOnly(); ok {
				if s.Props == nil {
					s.Props = &junitProps{}
				}
				s.Props.Props = append(s.Props.Props, junitProp{Name: ReportedProperty, Value: c.Name})
			}
		})
		if msg := blockProblems(top); msg != "" && len(top.Children) != 0 {
			s.Cases = append(s.Cases, junitCase{Name: VerdictCase, Classname: class, Time: secs(0),
				Error: &junitMessage{Message: msg, Type: strings.ToUpper(top.Status.String()), Body: strings.Join(top.Diagnostics, "\n")}})
		}
		if len(top.Diagnostics) > 0 {
			s.Out = text(strings.Join(top.Diagnostics, "\n"))
		}
		for _, c := range s.Cases {
			s.Tests++
			switch {
			case c.Error != nil:
				s.Errors++
			case c.Failure != nil:
				s.Failures++
			case c.Skipped != nil:
				s.Skipped++
			}
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Suites = append(doc.Suites, s)
	}
	doc.Time = secs(total)
	doc.xmlSafe()
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("writing junit report: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing junit report: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("writing junit report: %w", err)
	}
	return nil
}

// xmlSafe passes every text of d through XMLSafe. Parse has escaped what
// came from a stream already; this is the second line of defence, for a tree
// built another way (read back from JSON, made by hand): encoding/xml writes
// CDATA as given, and one control character in it makes the whole document
// unreadable to every JUnit consumer.
func (d *junitSuites) xmlSafe() {
	d.Name = XMLSafe(d.Name)
	msg := func(m *junitMessage) {
		if m != nil {
			m.Message, m.Type, m.Body = XMLSafe(m.Message), XMLSafe(m.Type), XMLSafe(m.Body)
		}
	}
	txt := func(t *junitText) {
		if t != nil {
			t.Text = XMLSafe(t.Text)
		}
	}
	for i := range d.Suites {
		s := &d.Suites[i]
		s.Name = XMLSafe(s.Name)
		txt(s.Out)
		if s.Props != nil {
			for j := range s.Props.Props {
				p := &s.Props.Props[j]
				p.Name, p.Value = XMLSafe(p.Name), XMLSafe(p.Value)
			}
		}
		for j := range s.Cases {
			c := &s.Cases[j]
			c.Name, c.Classname = XMLSafe(c.Name), XMLSafe(c.Classname)
			msg(c.Skipped)
			msg(c.Error)
			msg(c.Failure)
			txt(c.Out)
		}
	}
}

// blockProblems describes what is wrong with a block as a whole, or "".
func blockProblems(n *Node) string {
	var p []string
	if n.Status == StatusTimeout || n.Status == StatusError || n.Status == StatusMissing {
		s := strings.ToUpper(n.Status.String())
		if n.Reason != "" {
			s += " " + n.Reason
		}
		p = append(p, s)
	}
	if n.Status == StatusFail && !anyLeafFailed(n) {
		p = append(p, "reported not ok although no case below it failed")
	}
	if n.BailOut != "" {
		p = append(p, "Bail out! "+n.BailOut)
	}
	p = append(p, n.Problems...)
	return strings.Join(p, "; ")
}

func junitCaseFor(name, class string, n *Node) junitCase {
	c := junitCase{Name: name, Classname: class, Time: secs(n.Duration.Seconds())}
	body := strings.Join(n.Diagnostics, "\n")
	switch n.Status {
	case StatusSkip:
		c.Skipped = &junitMessage{Message: n.Reason}
		c.Out = text(body)
	case StatusTodo, StatusXFail:
		c.Out = text(strings.TrimSpace(fmt.Sprintf("%s %s\n%s", n.Directive, n.Reason, body)))
	case StatusFail:
		msg := "failed"
		if len(n.Diagnostics) > 0 {
			msg = n.Diagnostics[0]
		}
		c.Failure = &junitMessage{Message: msg, Type: "FAIL", Body: body}
	case StatusTimeout:
		c.Failure = &junitMessage{Message: strings.TrimSpace("TIMEOUT " + n.Reason), Type: "TIMEOUT", Body: body}
	case StatusError:
		c.Error = &junitMessage{Message: strings.TrimSpace("ERROR " + n.Reason), Type: "ERROR", Body: body}
	case StatusMissing:
		c.Error = &junitMessage{Message: "test point never reported (crash, bail out or kill)", Type: "MISSING", Body: body}
	default:
		if n.SkipAll != "" {
			c.Skipped = &junitMessage{Message: n.SkipAll}
		}
		c.Out = text(body)
	}
	if c.Failure == nil && c.Error == nil && (len(n.Problems) > 0 || n.BailOut != "") {
		c.Skipped = nil
		c.Error = &junitMessage{Message: blockProblems(n), Type: "BROKEN", Body: body}
	}
	return c
}

func anyLeafFailed(n *Node) bool {
	failed := false
	n.Walk(func(_ []string, l *Node) { failed = failed || l.Failed() })
	return failed
}

func secs(s float64) string { return fmt.Sprintf("%.3f", s) }
