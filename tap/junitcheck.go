package tap

import (
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
)

// junitAttrs are the attributes Jenkins xunit's junit-10.xsd allows on each
// element we write (the strictest JUnit schema in common use: it has no
// "skipped" on <testsuites>), and those it requires.
var junitAttrs = map[string]struct{ allowed, required []string }{
	"testsuites": {allowed: []string{"name", "time", "tests", "failures", "disabled", "errors"}},
	"testsuite": {allowed: []string{"name", "tests", "failures", "errors", "disabled", "skipped", "timestamp", "hostname", "id", "package", "time"},
		required: []string{"name", "tests"}},
	"testcase":   {allowed: []string{"name", "assertions", "time", "classname", "status"}, required: []string{"name", "time"}},
	"skipped":    {allowed: []string{"message"}},
	"failure":    {allowed: []string{"message", "type"}},
	"error":      {allowed: []string{"message", "type"}},
	"system-out": {},
	"system-err": {},
	"properties": {},
	"property":   {allowed: []string{"name", "value"}, required: []string{"name", "value"}},
}

// junitChildren are the elements each element may contain.
var junitChildren = map[string][]string{
	"":           {"testsuites"},
	"testsuites": {"testsuite"},
	"testsuite":  {"properties", "testcase", "system-out", "system-err"},
	"testcase":   {"skipped", "error", "failure", "system-out", "system-err"},
	"properties": {"property"},
}

// DottedPath is the rule KCIDB sets for a test path (and the shape every name
// we hand to CI has): dot-separated parts of [a-zA-Z0-9_-].
var DottedPath = regexp.MustCompile(`^[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*$`)

// CheckJUnit reads a JUnit document and returns every way it breaks the rules
// of Jenkins xunit's junit-10.xsd (elements, attributes, nesting, numeric
// counts and times) and of the names CI keys history on (testcase names and
// testsuite names are dotted paths). An empty result means it passes.
func CheckJUnit(r io.Reader) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	dec := xml.NewDecoder(r)
	stack := []string{""}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			bad("not well-formed XML: %v", err)
			return errs
		}
		switch t := tok.(type) {
		case xml.StartElement:
			el, parent := t.Name.Local, stack[len(stack)-1]
			stack = append(stack, el)
			if !contains(junitChildren[parent], el) {
				bad("<%s> is not allowed inside <%s>", el, orRoot(parent))
			}
			rule, known := junitAttrs[el]
			if !known {
				continue
			}
			have := map[string]string{}
			for _, a := range t.Attr {
				have[a.Name.Local] = a.Value
				if !contains(rule.allowed, a.Name.Local) {
					bad("<%s>: attribute %q is not allowed", el, a.Name.Local)
				}
			}
			for _, a := range rule.required {
				if _, ok := have[a]; !ok {
					bad("<%s name=%q>: attribute %q is required", el, have["name"], a)
				}
			}
			for _, a := range []string{"tests", "failures", "errors", "skipped", "disabled", "assertions"} {
				if v, ok := have[a]; ok {
					if n, err := strconv.Atoi(v); err != nil || n < 0 {
						bad("<%s name=%q>: %s=%q is not a count", el, have["name"], a, v)
					}
				}
			}
			if v, ok := have["time"]; ok {
				if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 {
					bad("<%s name=%q>: time=%q is not a duration in seconds", el, have["name"], v)
				}
			}
			if (el == "testcase" || el == "testsuite") && !DottedPath.MatchString(have["name"]) {
				bad("<%s>: name %q is not a dotted path ([a-zA-Z0-9_-] parts joined by '.')", el, have["name"])
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func orRoot(s string) string {
	if s == "" {
		return "the document"
	}
	return s
}
