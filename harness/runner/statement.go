package runner

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/fsnsuite/fsnsuite/tap"
)

// expectation matches a line in which a case states what it wanted: the
// suite's wording of a failure is "WHAT: GOT, want WANT" (expect.Errno,
// records, counts), "events differ" (expect.Fanotify, expect.Inotify) or
// "... differ at step N" (the explorer).
var expectation = regexp.MustCompile(`\b(want|wanted|expected|differ|differs)\b`)

// dumpLine matches the lines of a failure's indented dump that say what
// was done, wanted and got: expect's "did:", "want:", "got:" and "want N
// events, got M; ...", the explorer's per-group "g0 want:"/"g0 got:".
var dumpLine = regexp.MustCompile(`^(\S+ )?(did|want|got|changed):|^want \d+ events`)

// own reports whether a diagnostic line is the case's own words: not a
// HINT (nor the harness's "no kernel HINT: ..."), a measurement or a gate
// line.
func own(d string) bool {
	if strings.HasPrefix(d, "HINT:") || strings.HasPrefix(d, "no kernel HINT:") {
		return false
	}
	if _, ok := tap.ParseMeasurement(d); ok {
		return false
	}
	_, ok := tap.ParseGate(d)
	return !ok
}

func indented(d string) bool { return d != "" && (d[0] == ' ' || d[0] == '\t') }

func hasLetter(d string) bool { return strings.IndexFunc(d, unicode.IsLetter) >= 0 }

// ownStatement is the rule behind Statement. A case's log lines (from
// logStart: not the binary's header, the case's Doc or its notes) are
// heads (not indented: what a t.Errorf, t.Fatalf or t.Logf call wrote
// first) each followed by its indented dump. The statement is
//  1. the first head that states an expectation (want, expected, differ):
//     the call that failed the case first, not a log line after it ("event
//     pid 35: kworker/1:1, a kernel thread") nor the explorer's closing
//     "case row for ...:" line;
//  2. else the last head (a failure with other wording comes after the
//     log lines that led to it);
//  3. else the line that names the leaf, else its last line with words in
//     it.
func ownStatement(n *tap.Node) string {
	if i := statementHead(n); i >= 0 {
		return strings.TrimRight(n.Diagnostics[i], " ")
	}
	for _, d := range n.Diagnostics {
		if n.Name != "" && strings.HasPrefix(strings.TrimSpace(d), n.Name+" ") {
			return strings.TrimSpace(d)
		}
	}
	for i := len(n.Diagnostics) - 1; i >= 0; i-- {
		if d := n.Diagnostics[i]; own(d) && hasLetter(d) {
			return d
		}
	}
	return ""
}

// logStart is the index of a leaf's first log line: the harness writes
// the binary's header, the case's Doc and its notes (Notef: "against ...:
// 30 scenarios, 3 differ") before the log, and puts "NAME (fs): " before
// the log's first line (harness/caseproc.go writeT). 0 when no line has
// that prefix (a subtest's log has none).
func logStart(n *tap.Node) int {
	if n.Name == "" {
		return 0
	}
	for i, d := range n.Diagnostics {
		if strings.HasPrefix(d, n.Name+" (") && strings.Contains(d, "): ") {
			return i
		}
	}
	return 0
}

// statementHead is the index of the head ownStatement takes (rules 1 and
// 2) among the leaf's log lines (logStart on), -1 when it has none.
func statementHead(n *tap.Node) int {
	ds := n.Diagnostics
	start := logStart(n)
	for i := start; i < len(ds); i++ {
		if d := ds[i]; own(d) && !indented(d) && hasLetter(d) && expectation.MatchString(d) {
			return i
		}
	}
	for i := len(ds) - 1; i >= start; i-- {
		if d := ds[i]; own(d) && !indented(d) && hasLetter(d) {
			return i
		}
	}
	return -1
}

// StatementDetail is what the dump under a failing leaf's statement says
// was done, wanted and got, in one line ("did: ...; want: ...; got: ..."),
// when the statement leaves it to the dump (it ends with ":" or "differ",
// as "events differ" does); "" otherwise. Where the explorer marks the
// parts that differ ("<- differs"), only those and the got line after each.
func StatementDetail(n *tap.Node) string {
	if !n.Status.Failed() {
		return ""
	}
	head := statementHead(n)
	if head < 0 {
		return ""
	}
	s := strings.TrimRight(n.Diagnostics[head], " ")
	if !strings.HasSuffix(s, ":") && !strings.HasSuffix(s, "differ") {
		return ""
	}
	var body []string
	for _, d := range n.Diagnostics[head+1:] {
		if !indented(d) {
			break
		}
		body = append(body, d)
	}
	return strings.Join(fold(body), "; ")
}

// FullStatement is Statement with its StatementDetail: the line a kernel
// developer would paste ("events differ; did: ...; want: ...; got: ...").
// The leaf's own name is dropped from its front (TrimLeafName).
func FullStatement(n *tap.Node) string {
	s := TrimLeafName(Statement(n), n.Name)
	if d := StatementDetail(n); d != "" {
		s = strings.TrimSuffix(s, ":") + "; " + d
	}
	return s
}

// foldItems bounds the continuation items ("[1] ...") kept per dump line.
const foldItems = 4

// fold picks the did/want/got lines of a dump (with their "[i] ..."
// continuation lines joined by ", "), or, when some are marked "<- differs",
// only those and the line after each. Where expect's "changed:" block names
// every field that differs ("changed: event count 1, want 0", its further
// lines indented below it, joined by "; "), it stands for the want and got
// lists: did and changed are kept.
func fold(body []string) []string {
	marked := false
	for _, d := range body {
		if strings.HasSuffix(strings.TrimSpace(d), "<- differs") {
			marked = true
		}
	}
	type part struct{ key, text string }
	var out []part
	items, keep, indent := 0, false, 0
	for i, d := range body {
		t := strings.TrimSpace(d)
		ind := len(d) - len(strings.TrimLeft(d, " \t"))
		switch {
		case dumpLine.MatchString(t):
			keep = !marked || strings.HasSuffix(t, "<- differs") || (i > 0 && strings.HasSuffix(strings.TrimSpace(body[i-1]), "<- differs"))
			if keep {
				key := dumpLine.FindStringSubmatch(t)[2]
				out = append(out, part{key, strings.Join(strings.Fields(strings.TrimSuffix(t, "<- differs")), " ")})
				items, indent = 0, ind
			}
		case keep && strings.HasPrefix(t, "[") && len(out) > 0 && out[len(out)-1].key != "changed":
			if items++; items <= foldItems {
				out[len(out)-1].text += ", " + t
			} else if items == foldItems+1 {
				out[len(out)-1].text += ", ..."
			}
		case keep && len(out) > 0 && out[len(out)-1].key == "changed" && ind > indent:
			out[len(out)-1].text += "; " + strings.Join(strings.Fields(t), " ")
		default:
			keep = false
		}
	}
	changed := false
	for _, p := range out {
		changed = changed || p.key == "changed"
	}
	var texts []string
	for _, p := range out {
		if changed && (p.key == "want" || p.key == "got" || p.key == "") {
			continue
		}
		texts = append(texts, p.text)
	}
	return texts
}

// TrimLeafName drops a statement's leading "NAME (fs): " or "NAME: " when
// NAME is the leaf's own name (or its case's): a line that lists the leaf
// names it already.
func TrimLeafName(s, name string) string {
	base, _, _ := strings.Cut(name, ".")
	head, rest, ok := strings.Cut(s, ": ")
	if !ok || name == "" {
		return s
	}
	h, _, _ := strings.Cut(head, " (")
	if h == name || h == base || strings.HasPrefix(h, name+"/") || strings.HasPrefix(h, base+".") {
		return rest
	}
	return s
}
