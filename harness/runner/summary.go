package runner

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/tap"
)

// SummaryRows is how many lines WriteSummary's summary takes at most (one
// screen of a 50-row terminal, with the prompt).
const SummaryRows = 48

// SummaryTerm is the terminal a summary is read on.
type SummaryTerm struct {
	// Cols and Rows are its size; 0 Cols: lines are not cut; 0 Rows:
	// SummaryRows.
	Cols, Rows int
	// Colour paints the verdicts (PASS green, FAIL red, SKIP yellow).
	Colour bool
	// Self is how fsnsuite is run from here, for the next-step line
	// ("bin/fsnsuite"; a path under the working directory is shown
	// relative to it). Empty: "fsnsuite".
	Self string
}

// WriteSummary prints the run's summary for a person, within SummaryRows
// lines (WriteSummaryTo for a terminal of known size).
func (r *Report) WriteSummary(w io.Writer) { r.WriteSummaryTo(w, SummaryTerm{}) }

// WriteSummarySized prints the run's summary for a terminal of cols x rows
// (WriteSummaryTo without colour).
func (r *Report) WriteSummarySized(w io.Writer, cols, rows int) {
	r.WriteSummaryTo(w, SummaryTerm{Cols: cols, Rows: rows})
}

// WriteSummaryTo prints the run's summary for terminal t in at most t.Rows
// lines (rows, counting the ones a long line wraps to), the totals last:
// a verdict line per binary (on a terminal too small for them all, one per
// binary that did not pass and one line naming the passes), the failures
// grouped by reason with counts (each group's first case with its
// diagnostics and HINT lines), the skips grouped by reason, the cases
// reported without a gate, the binaries an interrupt left unrun, the case
// counts, the command that reruns the first failure, what to run next (the
// HTML report of the results directory) and the totals. What does not fit
// is counted; summary.txt (WriteSummaryFile) has it.
func (r *Report) WriteSummaryTo(w io.Writer, t SummaryTerm) {
	if t.Rows <= 0 {
		t.Rows = SummaryRows
	}
	r.writeSummary(w, summaryForm{cols: t.Cols, rows: t.Rows, colour: t.Colour, self: t.Self})
}

// WriteSummaryFile writes summary.txt: the summary with nothing left out
// (every binary, every failure group and skip reason, every reported-only
// case), then every failed case with more of its diagnostics and every
// skipped case with its exact reason, and the totals last.
func (r *Report) WriteSummaryFile(w io.Writer) {
	r.writeSummary(w, summaryForm{context: 4, eachCase: true})
}

// summaryForm is the shape of a summary: bounded to a terminal's rows (0:
// no bound) with lines of cols (0: any length), coloured or not, each
// failure with context more diagnostics, and, with eachCase, every failed
// and skipped case on its own line.
type summaryForm struct {
	cols, rows int
	colour     bool
	self       string
	context    int
	eachCase   bool
}

// summaryEntry is one failed, skipped or reported case the summary names.
type summaryEntry struct {
	path  string // binary/case/subtest
	text  string // "FAIL reason", the skip reason, the reported figures
	diags []string
	more  int // diagnostic lines not shown
	// interrupted: a case of a binary the run's interrupt stopped, listed
	// after the others.
	interrupted bool
	// rerun is the command that runs the failed case alone, verbose.
	rerun string
}

// rowsOf is how many terminal rows l takes.
func (f summaryForm) rowsOf(l string) int {
	if f.cols <= 0 {
		return 1
	}
	return max(1, (visibleWidth(l)+f.cols-1)/f.cols)
}

// cut shortens l to the terminal's width.
func (f summaryForm) cut(l string) string { return fit(l, f.cols) }

// leafCounts are a stream's leaves by verdict: ok (less those reported
// without a gate), failed in any way, skipped, and reported only.
type leafCounts struct{ pass, fail, skip, reported int }

func countLeaves(st *tap.Node) leafCounts {
	var c leafCounts
	if st == nil {
		return c
	}
	st.Walk(func(_ []string, l *tap.Node) {
		switch {
		case l.Status.Failed():
			c.fail++
		case l.Status == tap.StatusSkip:
			c.skip++
		default:
			if _, ok := l.ReportedOnly(); ok {
				c.reported++
			} else {
				c.pass++
			}
		}
	})
	return c
}

// notRun reports whether o is a binary the run's interrupt kept from
// starting.
func (o *Outcome) notRun() bool {
	return o.Interrupted && o.Elapsed == 0 && o.StartErr == nil
}

// interruptedMark is what a failure of o says when the run's interrupt
// stopped o: the failure is the interrupt's doing.
func interruptedMark(o *Outcome) string {
	if o.Interrupted {
		return " (interrupted)"
	}
	return ""
}

// notRunLeaf reports whether l, a leaf of o, is a case an interrupt kept
// from running (the runner closed it "not run: ..."; closingLines).
func (o *Outcome) notRunLeaf(l *tap.Node) bool {
	return o.Interrupted && l.Status == tap.StatusSkip && strings.HasPrefix(l.Reason, "not run: ")
}

func (r *Report) writeSummary(w io.Writer, f summaryForm) {
	bounded := f.rows > 0
	var bPass, bFail, bSkip, bNotRun, reported, notRunLeaves int
	cases := map[tap.Status]int{}
	var failed, skipped, reports []summaryEntry
	var notRun []string
	for _, o := range r.Outcomes {
		switch {
		case o.notRun():
			bNotRun++
			notRun = append(notRun, o.Binary.Name)
		case o.Node.Status.Failed():
			bFail++
		case o.Node.Status == tap.StatusSkip:
			bSkip++
		default:
			bPass++
		}
		name := o.Binary.Name
		leafFailed := false
		docs := caseDocs(o.Stream, name)
		o.Stream.Walk(func(path []string, l *tap.Node) {
			if o.notRunLeaf(l) {
				notRunLeaves++
				return
			}
			cases[l.Status]++
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
				top := path[0] // the case's name, for its -run
				for _, c := range o.Stream.Children {
					if c.DisplayName() == path[0] {
						top = c.Name
						break
					}
				}
				failed = append(failed, summaryEntry{path: full, text: describe(l) + interruptedMark(o), diags: diags, more: more,
					interrupted: o.Interrupted, rerun: commandLine(append(append([]string{shortPath(o.Binary.Path)}, o.Binary.Args...), "-run", "'^"+regexp.QuoteMeta(top)+"$'", "-v")...)})
			case l.Status == tap.StatusSkip:
				skipped = append(skipped, summaryEntry{path: full, text: orNone(l.Reason)})
			}
		})
		switch {
		case o.notRun():
		case o.Node.Status.Failed():
			if !leafFailed || len(o.Notes) > 0 {
				notes, more := o.Notes, 0
				if bounded && len(notes) > 6 {
					notes, more = notes[:6], len(notes)-6
				}
				failed = append(failed, summaryEntry{path: name, text: describe(o.Node) + interruptedMark(o), diags: notes, more: more,
					interrupted: o.Interrupted, rerun: commandLine(append([]string{shortPath(o.Binary.Path)}, o.Binary.Args...)...)})
			}
		case o.Node.Status == tap.StatusSkip && len(o.Stream.Children) == 0:
			skipped = append(skipped, summaryEntry{path: name, text: orNone(o.Node.Reason)})
		}
	}
	// Failures the interrupt caused come after the others.
	sort.SliceStable(failed, func(i, j int) bool { return !failed[i].interrupted && failed[j].interrupted })

	// The closing lines, the totals last: they are always shown.
	var tail []string
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
	if notRunLeaves > 0 {
		parts = append(parts, fmt.Sprintf("%d not run (interrupted)", notRunLeaves))
	}
	if len(parts) == 0 {
		parts = append(parts, "none reported")
	}
	tail = append(tail, "cases: "+strings.Join(parts, ", "))
	for _, e := range failed {
		if !e.interrupted {
			tail = append(tail, "first failure: "+e.rerun)
			break
		}
	}
	if r.ResultsDir != "" {
		self := "fsnsuite"
		if f.self != "" {
			self = shortPath(f.self)
		}
		tail = append(tail, "next: "+commandLine(self, "report", r.ResultsDir, "-o", "report.html"))
	}
	noun := "binaries"
	if len(r.Outcomes) == 1 {
		noun = "binary"
	}
	totals := fmt.Sprintf("fsnsuite: %d %s: %s, %s, %s", len(r.Outcomes), noun,
		f.paint(fmt.Sprintf("%d passed", bPass), "PASS", bPass > 0), f.paint(fmt.Sprintf("%d failed", bFail), "FAIL", bFail > 0),
		f.paint(fmt.Sprintf("%d skipped", bSkip), "SKIP", bSkip > 0))
	if bNotRun > 0 {
		totals += fmt.Sprintf(", %d not run (interrupted)", bNotRun)
	}
	totals += " in " + r.Elapsed.Round(100*time.Millisecond).String()
	if r.Interrupted {
		totals += ": " + f.paint("INTERRUPTED", "FAIL", true) + ", the run did not finish"
	}
	tail = append(tail, totals)

	fmt.Fprintln(w)
	used := 1
	for _, l := range tail {
		used += f.rowsOf(l) // whole, not cut: commands to copy
	}

	// A verdict line per binary, or, on a terminal too small for them all,
	// one per binary that did not pass and a line naming the passes; a line
	// naming the binaries an interrupt left unrun.
	var verdicts, passed []string
	for i, l := range r.verdictLines(f) {
		switch o := r.Outcomes[i]; {
		case o.notRun():
		case o.Node.Status == tap.StatusPass:
			passed = append(passed, o.Binary.Name)
			fallthrough
		default:
			verdicts = append(verdicts, l)
		}
	}
	var closing []string
	if bounded && len(verdicts)+min(len(notRun), 1) > (f.rows-used)/2 {
		verdicts = verdicts[:0]
		for i, l := range r.verdictLines(f) {
			if o := r.Outcomes[i]; !o.notRun() && o.Node.Status != tap.StatusPass {
				verdicts = append(verdicts, l)
			}
		}
		if len(passed) > 0 {
			closing = append(closing, fmt.Sprintf("  %s %d %s: %s", paint("PASS   ", f.colour), len(passed), plural(len(passed), "binary", "binaries"), strings.Join(passed, ", ")))
		}
	}
	if len(notRun) > 0 {
		closing = append(closing, fmt.Sprintf("  not run %d %s (interrupted before %s started): %s", len(notRun),
			plural(len(notRun), "binary", "binaries"), plural(len(notRun), "it", "they"), strings.Join(notRun, ", ")))
	}
	if room := (f.rows-used)/2 - len(closing); bounded && len(verdicts) > max(room, 1) {
		n := len(verdicts) - max(room-1, 0)
		verdicts = append(verdicts[:max(room-1, 0)], fmt.Sprintf("  ... and %d more binaries that did not pass (every one in summary.txt)", n))
	}
	verdicts = append(verdicts, closing...)
	for _, l := range verdicts {
		l = f.cut(l)
		fmt.Fprintln(w, l)
		used += f.rowsOf(l)
	}

	fgroups := failureGroups(failed)
	groups := skipGroups(skipped)
	var budget listBudget
	if bounded {
		var need [3]int
		for _, g := range fgroups {
			need[0] += f.groupRows(g)
		}
		need[1], need[2] = len(groups), len(reports)
		budget = share(f.rows-used, need)
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "failed (%d), by reason:\n", len(failed))
		shown, rows := 0, 0
		for _, g := range fgroups {
			cost := f.groupRows(g)
			if bounded && shown > 0 && rows+cost > budget[0] {
				break
			}
			rows += cost
			shown++
			f.writeGroup(w, g)
		}
		if rest := fgroups[shown:]; len(rest) > 0 {
			left := 0
			for _, g := range rest {
				left += len(g.entries)
			}
			fmt.Fprintf(w, "  ... and %d more %s for %d failed (every one in summary.txt)\n", len(rest), plural(len(rest), "reason", "reasons"), left)
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
	if f.eachCase && len(failed) > 0 {
		fmt.Fprintf(w, "failed, case by case (%d):\n", len(failed))
		for _, e := range failed {
			fmt.Fprintf(w, "  %s: %s\n", e.path, e.text)
			for _, d := range e.diags {
				fmt.Fprintf(w, "      %s\n", d)
			}
			if e.more > 0 {
				fmt.Fprintf(w, "      ... (%d more %s in the log)\n", e.more, plural(e.more, "line", "lines"))
			}
		}
	}
	if f.eachCase && len(skipped) > 0 {
		fmt.Fprintf(w, "skipped, case by case (%d):\n", len(skipped))
		for _, e := range skipped {
			fmt.Fprintf(w, "  %s: %s\n", e.path, e.text)
		}
	}
	for _, l := range tail {
		fmt.Fprintln(w, l)
	}
}

// paint colours s as verdict word would be, when the form has colour and on.
func (f summaryForm) paint(s, word string, on bool) string {
	if !f.colour || !on {
		return s
	}
	p := paint(word, true)
	return strings.Replace(p, word, s, 1)
}

// failureGroup is the failed cases that share a reason.
type failureGroup struct {
	reason  string         // the verdict and the first diagnostic, the case's name left out
	detail  []string       // the first case's further diagnostics and HINT lines
	entries []summaryEntry // in the order they failed
}

// failureGroups groups failures by their reason (the verdict and the first
// diagnostic, with the case's own name left out, in the shape skips are
// grouped by: reasonShape) and their HINT lines, the largest group first
// (ties in the order of their first case), those of an interrupted binary
// last.
func failureGroups(failed []summaryEntry) []failureGroup {
	idx := map[string]int{}
	var groups []failureGroup
	for _, e := range failed {
		reason, detail := e.text, e.diags
		if len(detail) > 0 && !strings.HasPrefix(detail[0], "HINT:") {
			reason += ": " + withoutName(detail[0], e.path)
			detail = detail[1:]
		}
		var hints []string
		for _, d := range detail {
			if strings.HasPrefix(d, "HINT:") {
				hints = append(hints, d)
			}
		}
		key := fmt.Sprint(e.interrupted) + "\x00" + reasonShape(reason) + "\x00" + strings.Join(hints, "\x00")
		i, ok := idx[key]
		if !ok {
			i = len(groups)
			idx[key] = i
			groups = append(groups, failureGroup{reason: reason, detail: detail})
		}
		groups[i].entries = append(groups[i].entries, e)
	}
	for i := range groups {
		if len(groups[i].entries) > 1 {
			groups[i].reason = reasonShape(groups[i].reason)
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.entries[0].interrupted != b.entries[0].interrupted {
			return !a.entries[0].interrupted
		}
		return len(a.entries) > len(b.entries)
	})
	return groups
}

// leadingFS is the filesystem the harness names after a case's name
// ("case.tmpfs (tmpfs): events differ").
var leadingFS = regexp.MustCompile(`^\([a-z0-9_]+\): `)

// withoutName is a diagnostic without the name of the case (or binary) it
// is about at its start, nor the filesystem after it ("case.tmpfs (tmpfs):
// events differ", "bin: exit status 2"), so that the same failure of two
// cases reads the same: "events differ", "exit status 2".
func withoutName(d, path string) string {
	name := path[strings.LastIndex(path, "/")+1:]
	for _, sep := range []string{": ", " "} {
		if rest, ok := strings.CutPrefix(d, name+sep); ok {
			return leadingFS.ReplaceAllString(rest, "")
		}
	}
	return d
}

// groupRows is how many terminal rows a failure group's lines take.
func (f summaryForm) groupRows(g failureGroup) int {
	n := f.rowsOf(groupLine(g))
	for _, d := range g.detail {
		n += f.rowsOf("           " + d)
	}
	return n
}

func groupLine(g failureGroup) string {
	where := g.entries[0].path
	if len(g.entries) > 1 {
		where += ", ..."
	}
	return fmt.Sprintf("  %5d  %s  (%s)", len(g.entries), g.reason, where)
}

// writeGroup prints a failure group: its count, reason and first case, and
// that case's further diagnostics, whole (a long line wraps).
func (f summaryForm) writeGroup(w io.Writer, g failureGroup) {
	l := groupLine(g)
	if f.colour {
		word := g.reason // the verdict: FAIL, TIMEOUT, MISSING...
		if i := strings.IndexAny(word, " :"); i >= 0 {
			word = word[:i]
		}
		l = strings.Replace(l, word, paint(word, true), 1)
	}
	fmt.Fprintln(w, l)
	for _, d := range g.detail {
		fmt.Fprintf(w, "           %s\n", d)
	}
}

// commandLine joins a command's words with spaces.
func commandLine(words ...string) string { return strings.Join(words, " ") }

// shortPath is p relative to the working directory when p is under it
// ("bin/fsnsuite"), else p.
func shortPath(p string) string {
	wd, err := os.Getwd()
	if err != nil || !filepath.IsAbs(p) {
		return p
	}
	rel, err := filepath.Rel(wd, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return p
	}
	return rel
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

// verdictLines are a line per binary: its verdict (coloured on a terminal),
// counts and time, and why it skipped or broke as a whole.
func (r *Report) verdictLines(f summaryForm) []string {
	width := 0
	for _, o := range r.Outcomes {
		width = max(width, len(o.Binary.Name))
	}
	var out []string
	for _, o := range r.Outcomes {
		c := countLeaves(o.Stream)
		state := strings.ToUpper(o.Node.Status.String())
		if o.notRun() {
			state = "not run"
		}
		line := fmt.Sprintf("  %s %-*s %4d ok %4d fail %4d skip", paint(fmt.Sprintf("%-7s", state), f.colour), width, o.Binary.Name, c.pass, c.fail, c.skip)
		if c.reported > 0 {
			line += fmt.Sprintf(" %3d reported", c.reported)
		}
		line += fmt.Sprintf(" %7.1fs", o.Elapsed.Seconds())
		switch {
		case o.Node.Reason != "":
			line += "  " + o.Node.Reason
		case o.Interrupted && !o.notRun():
			line += "  interrupted"
		}
		if seeds := seedsNotes(o.Stream); len(seeds) > 0 {
			line += "  seeds " + strings.Join(seeds, ", ")
		}
		out = append(out, line)
	}
	return out
}

// seedsPrefix starts a case's note on the seeds it covered, the
// explorer's "seeds covered: tmpfs 1..363 of 1..1000 (time cap 25s)"
// (tests/fsnotify_explore, seedsCovered).
const seedsPrefix = "seeds covered: "

// seedsNotes returns what a binary's cases said about the seeds they
// covered, in stream order, each without seedsPrefix: the verdict line
// shows which seeds of the range a time cap let run.
func seedsNotes(st *tap.Node) []string {
	var out []string
	if st == nil {
		return out
	}
	st.Walk(func(_ []string, l *tap.Node) {
		for _, d := range l.Diagnostics {
			if rest, ok := strings.CutPrefix(d, seedsPrefix); ok {
				out = append(out, rest)
			}
		}
	})
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
