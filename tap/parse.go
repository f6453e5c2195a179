package tap

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Status is the verdict of one node of a parsed stream.
type Status int

// Statuses, from a result line's "ok"/"not ok" and its directive. StatusMissing marks
// a test point the plan promised but the stream never reported (a crash, a
// bail out, a killed process): it counts as a failure.
const (
	StatusPass Status = iota
	StatusFail
	StatusSkip
	StatusTimeout
	StatusTodo
	StatusXFail
	StatusError
	StatusMissing
)

var statusNames = [...]string{"pass", "fail", "skip", "timeout", "todo", "xfail", "error", "missing"}

// String returns the lowercase name used in JSON and summaries.
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// MarshalText encodes s as its name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a name written by MarshalText.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("unknown tap status %q", b)
}

// Failed reports whether s is a verdict that must make a run fail.
func (s Status) Failed() bool {
	switch s {
	case StatusFail, StatusTimeout, StatusError, StatusMissing:
		return true
	}
	return false
}

// Node is one block or test point of a parsed stream. The root returned by
// Parse is the whole stream; a result line that closes a nested block carries
// that block's plan and children.
type Node struct {
	Name      string    `json:"name"`
	Number    int       `json:"number,omitempty"`
	Status    Status    `json:"status"`
	Directive Directive `json:"directive,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	// Diagnostics are the "# " lines (prefix removed) and unrecognised lines
	// that preceded the result line in the same block.
	Diagnostics []string `json:"diagnostics,omitempty"`
	// YAML holds the lines of a TAP13 "---" ... "..." block after the result.
	YAML []string `json:"yaml,omitempty"`
	// Plan is the count from "1..N", or -1 when the block had no plan.
	Plan int `json:"plan"`
	// SkipAll is the reason from "1..0 # SKIP reason".
	SkipAll string `json:"skip_all,omitempty"`
	// BailOut is the reason from "Bail out!", if the block bailed out.
	BailOut string `json:"bail_out,omitempty"`
	// Problems are defects of the block itself: missing or duplicate test
	// points, no plan, an unclosed subtest. Any problem is a failure.
	Problems []string `json:"problems,omitempty"`
	Children []*Node  `json:"children,omitempty"`
	// Version is "TAP version 13" or "KTAP version 1" if the block had one.
	Version string `json:"version,omitempty"`
	// Duration is filled in by callers that timed the block (the runner).
	Duration time.Duration `json:"duration_ns,omitempty"`
}

// Failed reports whether n or anything below it failed, has a problem or
// bailed out.
func (n *Node) Failed() bool {
	if n.Status.Failed() || len(n.Problems) > 0 || n.BailOut != "" {
		return true
	}
	for _, c := range n.Children {
		if c.Failed() {
			return true
		}
	}
	return false
}

// DisplayName is Name, or "#N (missing)"-style text for a nameless point.
func (n *Node) DisplayName() string {
	if n.Name != "" {
		return n.Name
	}
	if n.Status == StatusMissing {
		return fmt.Sprintf("#%d (missing)", n.Number)
	}
	return fmt.Sprintf("#%d", n.Number)
}

// Key is n's name as a component of a dotted test path, the form KCIDB
// (`^[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*$`), JUnit consumers and LAVA key
// history on: every character outside [A-Za-z0-9_.-] becomes '_', an empty
// dot-separated part becomes '_', and a point without a name is "missing_N"
// (never reported) or "point_N". Our own names ([a-z0-9_] with a dotted
// filesystem suffix) are their own keys.
func (n *Node) Key() string {
	if n.Name == "" {
		if n.Status == StatusMissing {
			return fmt.Sprintf("missing_%d", n.Number)
		}
		return fmt.Sprintf("point_%d", n.Number)
	}
	parts := strings.Split(n.Name, ".")
	for i, p := range parts {
		p = strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
				return r
			}
			return '_'
		}, p)
		if p == "" {
			p = "_"
		}
		parts[i] = p
	}
	return strings.Join(parts, ".")
}

// Walk calls fn for every leaf below n (a node without children) with the
// names of its ancestors below n followed by its own (DisplayName of each).
func (n *Node) Walk(fn func(path []string, leaf *Node)) { n.walk((*Node).DisplayName, fn) }

// WalkKeys is Walk with each level named by its Key.
func (n *Node) WalkKeys(fn func(path []string, leaf *Node)) { n.walk((*Node).Key, fn) }

func (n *Node) walk(name func(*Node) string, fn func(path []string, leaf *Node)) {
	var rec func(path []string, m *Node)
	rec = func(path []string, m *Node) {
		for _, c := range m.Children {
			p := append(append([]string(nil), path...), name(c))
			if len(c.Children) == 0 {
				fn(p, c)
				continue
			}
			rec(p, c)
		}
	}
	rec(nil, n)
}

// Counts tallies the leaves below n by status.
func (n *Node) Counts() map[Status]int {
	m := map[Status]int{}
	n.Walk(func(_ []string, l *Node) { m[l.Status]++ })
	return m
}

var (
	versionRE = regexp.MustCompile(`^(TAP version \d+|KTAP version \d+)\s*$`)
	planRE    = regexp.MustCompile(`^1\.\.(\d+)\s*(?:#\s*(.*))?$`)
	resultRE  = regexp.MustCompile(`^(not )?ok\b\s*(\d+)?\s*(.*)$`)
	bailRE    = regexp.MustCompile(`^Bail out!\s*(.*)$`)
	subtestRE = regexp.MustCompile(`^#\s*Subtest:\s*(.*)$`)
	kselftRE  = regexp.MustCompile(`^#\s+selftests:\s*(.*)$`)
	skipWord  = regexp.MustCompile(`(?i)^skip\w*:?\s*`)
)

// Parse reads a TAP13 stream (with indented "# Subtest:" blocks and YAML
// blocks), a KTAP v1 stream, or kselftest's run_kselftest.sh output, and
// returns its tree. The root's Status sums the stream up: fail if anything
// failed (see Node.Failed), skip for "1..0 # SKIP", else pass. Parse is
// tolerant: unknown lines become diagnostics, and a truncated stream yields
// StatusMissing nodes and Problems rather than an error. The error is only
// for a failing reader. Every line is read through Escape: no name, reason
// or diagnostic of the tree holds a control character or invalid UTF-8
// (a guest console line quoted in a diagnostic, a process name), so that
// each consumer (the terminal summary, JUnit, KCIDB, HTML) gets text.
func Parse(r io.Reader) (*Node, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var lines []string
	for sc.Scan() {
		lines = append(lines, Escape(strings.TrimRight(sc.Text(), "\r")))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading tap stream: %w", err)
	}
	root := parseBlock(lines, true)
	switch {
	case root.Failed():
		root.Status = StatusFail
	case root.SkipAll != "":
		root.Status, root.Directive, root.Reason = StatusSkip, Skip, root.SkipAll
	}
	return root, nil
}

// ParseString is Parse for an in-memory stream.
func ParseString(s string) *Node {
	n, _ := Parse(strings.NewReader(s)) // a strings.Reader never fails
	return n
}

func indented(l string) bool {
	return l != "" && (l[0] == ' ' || l[0] == '\t')
}

func blank(l string) bool { return strings.TrimSpace(l) == "" }

// dedent removes the leading whitespace of the first non-blank line from every
// line (or all leading whitespace from a line that is less indented).
func dedent(lines []string) []string {
	prefix := ""
	for _, l := range lines {
		if !blank(l) {
			prefix = l[:len(l)-len(strings.TrimLeft(l, " \t"))]
			break
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if s, ok := strings.CutPrefix(l, prefix); ok {
			out[i] = s
		} else {
			out[i] = strings.TrimLeft(l, " \t")
		}
	}
	return out
}

// unhash removes one "# " (or a bare "#") from each line of a wrapped stream.
func unhash(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if s, ok := strings.CutPrefix(l, "# "); ok {
			out[i] = s
		} else {
			out[i] = strings.TrimPrefix(l, "#")
		}
	}
	return out
}

// parseBlock parses the lines of one block, already stripped of the block's
// own indentation.
func parseBlock(lines []string, isRoot bool) *Node {
	b := &Node{Plan: -1}
	var (
		diags       []string
		pending     *Node // a nested block waiting for the result line that closes it
		pendingName string
		last        *Node // last result line, for YAML
		seen        = map[int]bool{}
		started     bool
	)
	flushPending := func() {
		if pending == nil {
			return
		}
		// A nested block that no result line closed: the producer died in it.
		pending.Number = nextNumber(b)
		pending.Status = StatusMissing
		pending.Problems = append(pending.Problems, "subtest not closed by a result line")
		b.Children = append(b.Children, pending)
		seen[pending.Number] = true
		pending = nil
	}
	i := 0
	for i < len(lines) {
		l := lines[i]
		if blank(l) {
			i++
			continue
		}
		if indented(l) {
			j := i
			for j < len(lines) && (indented(lines[j]) || blank(lines[j])) {
				j++
			}
			block := dedent(lines[i:j])
			if strings.TrimSpace(block[0]) == "---" && last != nil && pending == nil {
				// YAML after a result: keep until "...", the rest is a nested block.
				k := 1
				for k < len(block) && strings.TrimSpace(block[k]) != "..." {
					k++
				}
				last.YAML = append(last.YAML, block[1:min(k, len(block))]...)
				i += min(k+1, len(block))
				continue
			}
			flushPending()
			pending = parseBlock(block, false)
			if pending.Name == "" {
				pending.Name = pendingName
			}
			pendingName = ""
			i = j
			continue
		}
		t := strings.TrimSpace(l)
		switch {
		case versionRE.MatchString(t):
			if b.Version == "" && !started {
				b.Version = t
			}
		case planRE.MatchString(t):
			m := planRE.FindStringSubmatch(t)
			n, err := strconv.Atoi(m[1])
			if err != nil {
				diags = append(diags, t)
				break
			}
			if b.Plan >= 0 {
				b.Problems = append(b.Problems, fmt.Sprintf("second plan %q", t))
				break
			}
			b.Plan = n
			if n == 0 {
				if s := skipWord.ReplaceAllString(m[2], ""); s != m[2] || strings.HasPrefix(strings.ToUpper(m[2]), "SKIP") {
					b.SkipAll = strings.TrimSpace(s)
					if b.SkipAll == "" {
						b.SkipAll = "no reason given"
					}
				}
			}
		case resultRE.MatchString(t):
			started = true
			r := parseResult(t, b)
			if pending != nil {
				r.Plan, r.SkipAll, r.BailOut = pending.Plan, pending.SkipAll, pending.BailOut
				r.Children, r.Version, r.Problems = pending.Children, pending.Version, pending.Problems
				r.Diagnostics = append(r.Diagnostics, pending.Diagnostics...)
				if r.Name == "" {
					r.Name = pending.Name
				}
				if r.Status == StatusSkip && r.Reason == "" {
					r.Reason = pending.SkipAll
				}
				pending = nil
			}
			r.Diagnostics = append(diags, r.Diagnostics...)
			diags = nil
			if seen[r.Number] {
				b.Problems = append(b.Problems, fmt.Sprintf("duplicate test point %d", r.Number))
			}
			seen[r.Number] = true
			b.Children = append(b.Children, r)
			last = r
		case bailRE.MatchString(t):
			b.BailOut = strings.TrimSpace(bailRE.FindStringSubmatch(t)[1])
			if b.BailOut == "" {
				b.BailOut = "no reason given"
			}
			i = len(lines) // a bail out ends the block
			continue
		case subtestRE.MatchString(t):
			name := strings.TrimSpace(subtestRE.FindStringSubmatch(t)[1])
			if !isRoot && !started && b.Plan < 0 && b.Name == "" && !nextIndented(lines, i+1) {
				b.Name = name // the header of this very block (indented style)
			} else {
				flushPending()
				pendingName = name
			}
		case kselftRE.MatchString(t):
			// run_kselftest.sh: "# selftests: dir: name", then the test's own
			// output with "# " in front, then the result line.
			j := i + 1
			for j < len(lines) && strings.HasPrefix(lines[j], "#") && !kselftRE.MatchString(lines[j]) {
				j++
			}
			flushPending()
			pending = parseBlock(unhash(lines[i+1:j]), false)
			if pending.Name == "" {
				pending.Name = strings.TrimSpace(kselftRE.FindStringSubmatch(t)[1])
			}
			i = j
			continue
		case strings.HasPrefix(t, "#"):
			diags = append(diags, diagText(t))
		default:
			diags = append(diags, t)
		}
		i++
	}
	flushPending()
	b.Diagnostics = append(b.Diagnostics, diags...)
	finishBlock(b, isRoot)
	return b
}

// diagText is a diagnostic line's text: without the "#" and the one space
// after it, and without trailing blanks, but with any deeper indentation
// kept (the continuation lines of a dump are indented under the line that
// says what failed; runner.Why tells them apart by it).
func diagText(line string) string {
	d := strings.TrimRight(strings.TrimPrefix(line, "#"), " \t\r")
	if strings.HasPrefix(d, " ") {
		d = d[1:]
	}
	return d
}

// nextIndented reports whether the first non-blank line from i on is indented:
// a "# Subtest:" line followed by one heads that deeper block (node-tap style),
// otherwise it names the block it is in (Test::More and KTAP style).
func nextIndented(lines []string, i int) bool {
	for ; i < len(lines); i++ {
		if !blank(lines[i]) {
			return indented(lines[i])
		}
	}
	return false
}

func nextNumber(b *Node) int {
	n := 0
	for _, c := range b.Children {
		n = max(n, c.Number)
	}
	return n + 1
}

// parseResult decodes "ok N desc # DIRECTIVE reason" (number and description
// optional, "- " before the description allowed).
func parseResult(t string, b *Node) *Node {
	m := resultRE.FindStringSubmatch(t)
	ok := m[1] == ""
	r := &Node{Plan: -1}
	if m[2] != "" {
		r.Number, _ = strconv.Atoi(m[2])
	} else {
		r.Number = nextNumber(b)
	}
	desc, directive := splitDirective(m[3])
	desc = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(desc), "- "))
	r.Name = strings.ReplaceAll(desc, `\#`, "#")
	if ok {
		r.Status = StatusPass
	} else {
		r.Status = StatusFail
	}
	if directive == "" {
		return r
	}
	word, reason, _ := strings.Cut(directive, " ")
	word = strings.TrimRight(strings.ToUpper(word), ":")
	reason = strings.TrimSpace(reason)
	switch {
	case strings.HasPrefix(word, "SKIP"):
		r.Directive, r.Status = Skip, StatusSkip
	case word == "TODO":
		r.Directive, r.Status = Todo, StatusTodo
	case word == "TIMEOUT":
		r.Directive, r.Status = Timeout, StatusTimeout
	case word == "XFAIL":
		r.Directive, r.Status = XFail, StatusXFail
	case word == "ERROR":
		r.Directive, r.Status = Error, StatusError
	default:
		// Not a directive but a comment (node-tap's "# time=12ms"): kept as
		// a diagnostic, out of the name that CI systems key on.
		r.Diagnostics = append(r.Diagnostics, directive)
		return r
	}
	r.Reason = strings.ReplaceAll(reason, `\#`, "#")
	return r
}

// splitDirective splits a description at its first unescaped '#'.
func splitDirective(s string) (desc, directive string) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '#':
			return s[:i], strings.TrimSpace(s[i+1:])
		}
	}
	return s, ""
}

// maxMissing bounds how many Missing nodes one block gets.
const maxMissing = 100000

// finishBlock checks the block against its plan and fills in StatusMissing points.
func finishBlock(b *Node, isRoot bool) {
	results := len(b.Children)
	if b.Plan < 0 {
		// KTAP lets a nested block omit its plan (its result line speaks
		// for it); a whole stream without one was cut short or is not TAP.
		if isRoot && b.BailOut == "" {
			b.Problems = append(b.Problems, "no plan")
		}
		return
	}
	if results > b.Plan {
		b.Problems = append(b.Problems, fmt.Sprintf("plan 1..%d but %d results", b.Plan, results))
		return
	}
	if results == b.Plan {
		return
	}
	b.Problems = append(b.Problems, fmt.Sprintf("plan 1..%d but only %d results", b.Plan, results))
	seen := map[int]bool{}
	for _, c := range b.Children {
		seen[c.Number] = true
	}
	if b.Plan-results > maxMissing {
		// A plan this far off is garbage, not a crash; do not allocate it.
		b.Problems = append(b.Problems, fmt.Sprintf("more than %d planned test points missing: not listed one by one", maxMissing))
		return
	}
	for n := 1; n <= b.Plan && len(b.Children) < b.Plan; n++ {
		if !seen[n] {
			b.Children = append(b.Children, &Node{Number: n, Status: StatusMissing, Plan: -1})
		}
	}
}

// ResultLine decodes one result line of a stream as it arrives ("ok N desc
// # DIRECTIVE reason", indentation allowed): the node's Name, Number,
// Status and Directive; ok is false for any other line. A stream's reader
// that cannot wait for the whole document (a watcher of a run in progress)
// decodes its result lines as Parse does.
func ResultLine(line string) (n *Node, ok bool) {
	t := strings.TrimLeft(line, " \t")
	if !resultRE.MatchString(t) {
		return nil, false
	}
	return parseResult(t, &Node{}), true
}
