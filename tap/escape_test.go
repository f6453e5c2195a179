package tap

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, tab\tand \\# kept", "plain text, tab\tand \\# kept"},
		{"é ü 漢字 \uFFFD", "é ü 漢字 \uFFFD"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"bell\x07 nul\x00 del\x7f cr\rlf\n", `bell\x07 nul\x00 del\x7f cr\x0dlf\x0a`},
		{"c1 \u009b and \u0085", `c1 \u009b and \u0085`},
		{"bad utf-8 \xff\xfe and cut \xe6\xbc", `bad utf-8 \xff\xfe and cut \xe6\xbc`},
		{`already \x1b escaped`, `already \x1b escaped`},
		{"not ok \u202eko ton\u202c \u2066x\u2069 zw\u200b", `not ok \u202eko ton\u202c \u2066x\u2069 zw\u200b`},
	}
	for _, tc := range tests {
		assert.Check(t, is.Equal(Escape(tc.in), tc.want), "%q", tc.in)
		assert.Check(t, is.Equal(Escape(Escape(tc.in)), tc.want), "twice: %q", tc.in)
	}
	// XMLSafe keeps newlines (CDATA holds lines) and also drops what XML
	// forbids beyond the controls.
	assert.Equal(t, XMLSafe("a\nb\x1b\uffff\ufffe\x00"), `a`+"\n"+`b\x1b\uffff\ufffe\x00`)
}

// A stream whose diagnostics, names and reasons hold control bytes parses
// to escaped text: no consumer of the tree sees a raw one (issue 33 item 6).
func TestParseEscapes(t *testing.T) {
	root := ParseString("TAP version 13\n1..2\n# console: \x1b[2J\x07\x00\xff\n" +
		"not ok 1 case\x1b[1m\n" +
		"ok 2 other # SKIP why \x1b]0;title\x07\n")
	assert.Equal(t, len(root.Children), 2)
	assert.DeepEqual(t, root.Children[0].Diagnostics, []string{`console: \x1b[2J\x07\x00\xff`})
	assert.Equal(t, root.Children[0].Name, `case\x1b[1m`)
	assert.Equal(t, root.Children[0].Key(), "case_x1b_1m")
	assert.Equal(t, root.Children[1].Reason, `why \x1b]0;title\x07`)
}

// The writer never emits a control byte either: a binary's diagnostic that
// quotes a process name reaches its stdout escaped.
func TestWriterEscapes(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, TAP13)
	w.Plan(1)
	w.Diag("comm=evil\x1b[31m\x00")
	w.Result(Result{OK: true, Name: "a"})
	w.Raw("    # raw \x07")
	assert.Equal(t, b.String(), "1..1\n# comm=evil\\x1b[31m\\x00\nok 1 a\n    # raw \\x07\n")
}

// junit.xml is well-formed XML whatever the tree holds (a tree read back
// from JSON or built by hand, not through Parse): the second line of
// defence.
func TestJUnitNeverEmitsForbiddenCharacters(t *testing.T) {
	bad := "console \x1b[2J\x07\x00 \uffff \xff"
	root := &Node{Plan: 1, Children: []*Node{{
		Name: "bin", Status: StatusFail, Plan: 2, Duration: time.Second, Diagnostics: []string{bad},
		Children: []*Node{
			{Name: "a", Number: 1, Status: StatusFail, Diagnostics: []string{bad, "second"}},
			{Name: "b", Number: 2, Status: StatusSkip, Directive: Skip, Reason: bad},
		},
	}}}
	var b bytes.Buffer
	assert.NilError(t, WriteJUnit(&b, root, "suite\x1b"))
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		assert.NilError(t, err, "%s", b.String())
	}
	assert.Check(t, is.Len(CheckJUnit(bytes.NewReader(b.Bytes())), 0))
	assert.Check(t, strings.Contains(b.String(), `console \x1b[2J\x07\x00 \uffff \xff`), b.String())
}
