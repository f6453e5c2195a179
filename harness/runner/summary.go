package runner

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fsnsuite/fsnsuite/tap"
)

// SummaryRows is how many lines WriteSummary's summary takes at most (one
// screen of a 50-row terminal, with the prompt).
const SummaryRows = 48

// WriteSummary prints the run's summary for a person, within SummaryRows
// lines (WriteSummarySized for a terminal of known size).
func (r *Report) WriteSummary(w io.Writer) { r.WriteSummarySized(w, 0, SummaryRows) }

// WriteSummarySized prints the run's summary for a terminal of cols x rows
// (0 cols: lines are not cut) in at most rows lines, more only when the
// binaries' verdict lines alone need more: the totals, a verdict line per
// binary, the first failures (each with its first diagnostic and its HINT
// lines, whole: a long one counts the rows it wraps to), the skips grouped by
// reason with counts, the cases reported without a gate (these lines cut to
// the width), and the results directory last. What does not fit is counted;
// summary.txt (WriteSummaryFile) has it.
func (r *Report) WriteSummarySized(w io.Writer, cols, rows int) {
	r.writeSummary(w, summaryForm{cols: cols, rows: max(rows, 1)})
}

// WriteSummaryFile writes summary.txt: the summary with nothing left out
// (every failure with more of its diagnostics, every skip reason, every
// reported-only case) and then every skipped case with its exact reason.
func (r *Report) WriteSummaryFile(w io.Writer) {
	r.writeSummary(w, summaryForm{context: 4, eachSkip: true})
}

// summaryForm is the shape of a summary: bounded to a terminal's rows (0:
// no bound) with lines of cols (0: any length), each failure with context
// more diagnostics, and, with eachSkip, every skipped case on its own line.
type summaryForm struct {
	cols, rows int
	context    int
	eachSkip   bool
}

// summaryEntry is one failed, skipped or reported case the summary names.
type summaryEntry struct {
	path  string // binary/case/subtest
	text  string // "FAIL reason", the skip reason, the reported figures
	diags []string
	more  int // diagnostic lines not shown
}

// rowsOf is how many terminal rows l takes.
func (f summaryForm) rowsOf(l string) int {
	if f.cols <= 0 {
		return 1
	}
	return max(1, (utf8.RuneCountInString(l)+f.cols-1)/f.cols)
}

// cut shortens l to the terminal's width.
func (f summaryForm) cut(l string) string {
	if f.cols <= 1 || utf8.RuneCountInString(l) < f.cols {
		return l
	}
	return string([]rune(l)[:f.cols-2]) + "…"
}

func (r *Report) writeSummary(w io.Writer, f summaryForm) {
	bounded := f.rows > 0
	var bPass, bFail, bSkip, reported int
	cases := map[tap.Status]int{}
	var failed, skipped, reports []summaryEntry
	for _, o := range r.Outcomes {
		switch {
		case o.Node.Status.Failed():
			bFail++
		case o.Node.Status == tap.StatusSkip:
			bSkip++
		default:
			bPass++
		}
		for s, n := range o.Stream.Counts() {
			cases[s] += n
		}
		name := o.Binary.Name
		leafFailed := false
		docs := caseDocs(o.Stream, name)
		o.Stream.Walk(func(path []string, l *tap.Node) {
			full := name + "/" + strings.Join(path, "/")
			if text, ok := l.ReportedOnly(); ok {
				reported++
				reports = append(reports, summaryEntry{path: full, text: text})
				return
			}
			switch {
			case l.Status.Failed():
				leafFailed = true
				diags, more := explain(l, name, docs, f.context)
				failed = append(failed, summaryEntry{path: full, text: describe(l), diags: diags, more: more})
			case l.Status == tap.StatusSkip:
				skipped = append(skipped, summaryEntry{path: full, text: orNone(l.Reason)})
			}
		})
		switch {
		case o.Node.Status.Failed():
			if !leafFailed || len(o.Notes) > 0 {
				notes, more := o.Notes, 0
				if bounded && len(notes) > 6 {
					notes, more = notes[:6], len(notes)-6
				}
				failed = append(failed, summaryEntry{path: name, text: describe(o.Node), diags: notes, more: more})
			}
		case o.Node.Status == tap.StatusSkip && len(o.Stream.Children) == 0:
			skipped = append(skipped, summaryEntry{path: name, text: orNone(o.Node.Reason)})
		}
	}
	noun := "binaries"
	if len(r.Outcomes) == 1 {
		noun = "binary"
	}
	fmt.Fprintf(w, "\nfsnsuite: %d %s: %d passed, %d failed, %d skipped in %s\n",
		len(r.Outcomes), noun, bPass, bFail, bSkip, r.Elapsed.Round(100*time.Millisecond))
	var parts []string
	// A perf measurement without a gate passes without a threshold having held:
	// it is counted apart ("reported only"), not as a pass.
	cases[tap.StatusPass] -= reported
	for s := tap.StatusPass; s <= tap.StatusMissing; s++ {
		if cases[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", cases[s], s))
		}
		if s == tap.StatusPass && reported > 0 {
			parts = append(parts, fmt.Sprintf("%d reported only (not gated)", reported))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none reported")
	}
	fmt.Fprintf(w, "cases: %s\n", strings.Join(parts, ", "))
	if r.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: the run did not finish")
	}
	for _, l := range r.verdictLines() {
		fmt.Fprintln(w, f.cut(l))
	}

	groups := skipGroups(skipped)
	var budget listBudget
	if bounded {
		used := 3 + len(r.Outcomes) + 1 // blank, totals, cases, verdicts, results
		if r.Interrupted {
			used++
		}
		var need [3]int
		for _, e := range failed {
			need[0] += f.entryRows(e)
		}
		need[1], need[2] = len(groups), len(reports)
		budget = share(f.rows-used, need)
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "failed (%d):\n", len(failed))
		shown, rows := 0, 0
		for _, e := range failed {
			cost := f.entryRows(e)
			if bounded && shown > 0 && rows+cost > budget[0] {
				break
			}
			rows += cost
			shown++
			fmt.Fprintf(w, "  %s: %s\n", e.path, e.text)
			for _, d := range e.diags {
				fmt.Fprintf(w, "      %s\n", d)
			}
			if e.more > 0 && !bounded {
				fmt.Fprintf(w, "      ... (%d more %s in the log)\n", e.more, plural(e.more, "line", "lines"))
			}
		}
		if n := len(failed) - shown; n > 0 {
			fmt.Fprintf(w, "  ... and %d more failed (every one in summary.txt)\n", n)
		}
	}
	if len(skipped) > 0 {
		n := len(groups)
		if bounded {
			n = max(1, min(n, budget[1]))
		}
		fmt.Fprintf(w, "skipped (%d), by reason:\n", len(skipped))
		for _, g := range groups[:n] {
			first := g.paths[0]
			if len(g.paths) > 1 {
				first += ", ..."
			}
			fmt.Fprintln(w, f.cut(fmt.Sprintf("  %5d  %s  (%s)", len(g.paths), g.reason, first)))
		}
		if rest := groups[n:]; len(rest) > 0 {
			left := 0
			for _, g := range rest {
				left += len(g.paths)
			}
			fmt.Fprintf(w, "  ... and %d more %s for %d cases (every one in summary.txt)\n", len(rest), plural(len(rest), "reason", "reasons"), left)
		}
	}
	if len(reports) > 0 {
		fmt.Fprintf(w, "reported only, not gated (%d):\n", len(reports))
		shown := reports
		if bounded {
			shown = shown[:max(1, min(len(shown), budget[2]))]
		}
		for _, e := range shown {
			fmt.Fprintln(w, f.cut(fmt.Sprintf("  %s: %s", e.path, e.text)))
		}
		if n := len(reports) - len(shown); n > 0 {
			fmt.Fprintf(w, "  ... and %d more (every one in summary.txt)\n", n)
		}
	}
	if f.eachSkip && len(skipped) > 0 {
		fmt.Fprintf(w, "skipped, case by case (%d):\n", len(skipped))
		for _, e := range skipped {
			fmt.Fprintf(w, "  %s: %s\n", e.path, e.text)
		}
	}
	if r.ResultsDir != "" {
		fmt.Fprintf(w, "results: %s\n", r.ResultsDir)
	}
}

// entryRows is how many terminal rows a failure's lines take.
func (f summaryForm) entryRows(e summaryEntry) int {
	n := f.rowsOf(fmt.Sprintf("  %s: %s", e.path, e.text))
	for _, d := range e.diags {
		n += f.rowsOf("      " + d)
	}
	return n
}

// listBudget is the lines given to the failures, the skip reasons and the
// reported-only cases.
type listBudget [3]int

// share divides lines among the three lists by need: each list present
// costs its heading and a line for what it leaves out; then the failures get
// up to half of the rest, the skip reasons and the reported cases a quarter
// each, and what one list does not use goes to the others, in that order.
func share(lines int, need [3]int) listBudget {
	var b listBudget
	for _, n := range need {
		if n > 0 {
			lines -= 2
		}
	}
	lines = max(lines, 0)
	quota := [3]int{lines / 2, lines / 4, lines - lines/2 - lines/4}
	left := 0
	for i := range b {
		b[i] = min(need[i], quota[i])
		left += quota[i] - b[i]
	}
	for i := range b {
		more := min(need[i]-b[i], left)
		b[i] += more
		left -= more
	}
	return b
}

// verdictLines are a line per binary: its verdict, counts and time, and
// why it skipped or broke as a whole.
func (r *Report) verdictLines() []string {
	width := 0
	for _, o := range r.Outcomes {
		width = max(width, len(o.Binary.Name))
	}
	var out []string
	for _, o := range r.Outcomes {
		c := o.Stream.Counts()
		rep := 0
		o.Stream.Walk(func(_ []string, l *tap.Node) {
			if _, ok := l.ReportedOnly(); ok {
				rep++
			}
		})
		pass := c[tap.StatusPass] + c[tap.StatusXFail] + c[tap.StatusTodo] - rep
		fail := c[tap.StatusFail] + c[tap.StatusTimeout] + c[tap.StatusError] + c[tap.StatusMissing]
		line := fmt.Sprintf("  %-7s %-*s %4d ok %4d fail %4d skip", strings.ToUpper(o.Node.Status.String()), width, o.Binary.Name, pass, fail, c[tap.StatusSkip])
		if rep > 0 {
			line += fmt.Sprintf(" %3d reported", rep)
		}
		line += fmt.Sprintf(" %7.1fs", o.Elapsed.Seconds())
		if o.Node.Reason != "" {
			line += "  " + o.Node.Reason
		}
		out = append(out, line)
	}
	return out
}

// skipGroup is the skips that share a reason.
type skipGroup struct {
	reason string
	paths  []string
}

// skipGroups groups skips by reason, the largest group first (ties in the
// order of their first case). Reasons that differ only in a call's
// arguments or a quoted path are one reason (reasonShape).
func skipGroups(skipped []summaryEntry) []skipGroup {
	idx := map[string]int{}
	var groups []skipGroup
	for _, e := range skipped {
		shape := reasonShape(e.text)
		i, ok := idx[shape]
		if !ok {
			i = len(groups)
			idx[shape] = i
			groups = append(groups, skipGroup{reason: shape})
		}
		groups[i].paths = append(groups[i].paths, e.path)
	}
	sort.SliceStable(groups, func(i, j int) bool { return len(groups[i].paths) > len(groups[j].paths) })
	return groups
}

var (
	// callArgs is a call's argument list with a comma or a quote in it:
	// fanotify_mark(FAN_MARK_ADD, FAN_OPEN, "/tmp/...").
	callArgs = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\(([^()]*[,"][^()]*)\)`)
	quoted   = regexp.MustCompile(`"[^"]*"`)
)

// reasonShape is a skip reason without what varies from case to case: a
// call's arguments (fanotify_mark(…)) and quoted strings ("…").
func reasonShape(reason string) string {
	return quoted.ReplaceAllString(callArgs.ReplaceAllString(reason, "$1(…)"), `"…"`)
}

// caseDocs guesses the descriptions among a stream's diagnostics: the
// harness prints a case's Doc before each of its variants (name.tmpfs,
// name.ext4), so a first line that two top-level cases of one name share is
// their description, not what went wrong.
func caseDocs(st *tap.Node, bin string) map[string]bool {
	seen := map[string]int{}
	for _, c := range st.Children {
		base, _, _ := strings.Cut(c.Name, ".")
		for _, d := range c.Diagnostics {
			if c.Number == 1 && isHeader(d, bin) {
				continue
			}
			seen[base+"\x00"+d]++
			break
		}
	}
	docs := map[string]bool{}
	for k, n := range seen {
		if n > 1 {
			_, d, _ := strings.Cut(k, "\x00")
			docs[d] = true
		}
	}
	return docs
}

// isHeader reports whether d is one of the lines the harness begins a
// binary's stream with ("BINARY: doc", "kernel RELEASE"; supervise.go),
// which a parser hands to the first case.
func isHeader(d, bin string) bool {
	return strings.HasPrefix(d, bin+": ") || strings.HasPrefix(d, "kernel ")
}

// explain picks what a failure's summary shows: its first diagnostic,
// context more lines, and every HINT line; more counts the lines left out.
// The first diagnostic is the line that names the case, else the first
// after the stream's header lines and after the case's description (docs),
// which the harness prints before each case.
func explain(l *tap.Node, bin string, docs map[string]bool, context int) (lines []string, more int) {
	var diags []string
	for i, d := range l.Diagnostics {
		if len(diags) == 0 && l.Number == 1 && isHeader(d, bin) && i < len(l.Diagnostics)-1 {
			continue
		}
		if _, ok := tap.ParseMeasurement(d); ok {
			continue
		}
		if _, ok := tap.ParseGate(d); ok {
			continue
		}
		diags = append(diags, d)
	}
	start := 0
	if len(diags) > 1 && docs[diags[0]] {
		start = 1
	}
	for i, d := range diags {
		if strings.HasPrefix(d, l.Name+" ") || strings.HasPrefix(d, l.Name+":") {
			start = i
			break
		}
	}
	var hints []string
	shown := 0
	for i, d := range diags {
		isHint := strings.HasPrefix(d, "HINT:")
		switch {
		case isHint:
			hints = append(hints, d)
		case i < start:
		case shown <= context:
			lines = append(lines, d)
			shown++
		default:
			more++
		}
	}
	return append(lines, hints...), more
}

func describe(n *tap.Node) string {
	s := strings.ToUpper(n.Status.String())
	if n.Reason != "" {
		s += " " + n.Reason
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orNone(reason string) string {
	if reason == "" {
		return "(no reason given)"
	}
	return reason
}

// WriteLTPSummary writes the run's case counts in LTP's end-of-run shape, which
// kirk reads from a test's output: passed, failed (a failed leaf), broken (a
// leaf that timed out, errored or never reported, or a binary that broke
// without a failed leaf) and skipped. Call it after the merged stream.
func (r *Report) WriteLTPSummary(w io.Writer) {
	var passed, failed, broken, skipped int
	for _, o := range r.Outcomes {
		c := o.Stream.Counts()
		passed += c[tap.StatusPass] + c[tap.StatusXFail] + c[tap.StatusTodo]
		failed += c[tap.StatusFail]
		broken += c[tap.StatusTimeout] + c[tap.StatusError] + c[tap.StatusMissing]
		skipped += c[tap.StatusSkip]
		if len(o.Stream.Children) == 0 {
			switch {
			case o.Node.Status == tap.StatusSkip:
				skipped++
			case o.Node.Status.Failed():
				broken++
			}
		}
	}
	_ = tap.LTPSummary(w, passed, failed, broken, skipped, 0)
}
