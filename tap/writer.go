// Package tap writes and reads Test Anything Protocol streams: TAP version 13 as
// accepted by prove and node-tap, and KTAP version 1 as read by the kernel's kunit
// parser. It also renders a parsed stream as JUnit XML or JSON. It makes no
// system calls beyond the io.Writer and io.Reader it is given.
package tap

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// Format selects the dialect a Writer emits.
type Format int

const (
	// TAP13 is "TAP version 13" with "# Subtest:" headed, 4-space indented blocks.
	TAP13 Format = iota
	// KTAP is strict KTAP version 1: every block starts with its own version line.
	KTAP
)

// String returns the flag spelling of f: "tap13" or "ktap".
func (f Format) String() string {
	if f == KTAP {
		return "ktap"
	}
	return "tap13"
}

// ParseFormat maps the flag spellings "tap13" and "ktap" to a Format.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "tap13", "tap", "":
		return TAP13, nil
	case "ktap":
		return KTAP, nil
	}
	return TAP13, fmt.Errorf("unknown output format %q (want tap13 or ktap)", s)
}

// Directive is the word after '#' on a result line that qualifies it.
type Directive string

// Directives understood by prove, tap-parser and kunit.
const (
	NoDirective Directive = ""
	Skip        Directive = "SKIP"
	Todo        Directive = "TODO"
	Timeout     Directive = "TIMEOUT"
	XFail       Directive = "XFAIL"
	Error       Directive = "ERROR"
)

// Result is one test point.
type Result struct {
	OK        bool
	Name      string
	Directive Directive
	// Reason follows the directive; for SKIP it is mandatory in this project.
	Reason string
}

// Writer emits one TAP block. The top-level Writer streams straight to its
// io.Writer; a Writer returned by Sub buffers its block until EndSub, because a
// nested block's plan is only known when it ends. All Writers of one tree share
// a mutex, so the harness watchdog may write while a case is running.
type Writer struct {
	mu     *sync.Mutex
	out    io.Writer
	format Format
	depth  int
	n      int
	name   string
	buf    []string // nested blocks only
	parent *Writer
	ended  bool
}

// NewWriter returns a top-level Writer for out in the given format.
func NewWriter(out io.Writer, f Format) *Writer {
	return &Writer{mu: new(sync.Mutex), out: out, format: f}
}

// Format reports the dialect this Writer emits.
func (w *Writer) Format() Format { return w.format }

// emit writes one line, or holds it in a nested block. Every line goes
// through Escape: whatever a diagnostic quotes, the stream holds no control
// character a terminal would obey and no invalid UTF-8.
func (w *Writer) emit(line string) {
	line = Escape(line)
	if w.parent != nil {
		w.buf = append(w.buf, line)
		return
	}
	fmt.Fprintln(w.out, line)
}

// Version writes the stream's version line. Call it once on the top-level Writer.
func (w *Writer) Version() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.format == KTAP {
		w.emit("KTAP version 1")
	} else {
		w.emit("TAP version 13")
	}
}

// Plan writes "1..n".
func (w *Writer) Plan(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.emit(fmt.Sprintf("1..%d", n))
}

// SkipAll writes the plan of a block that runs nothing: "1..0 # SKIP reason".
func (w *Writer) SkipAll(reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.emit("1..0 # SKIP " + oneLine(reason))
}

// Diag writes text as diagnostic lines, each prefixed "# ".
func (w *Writer) Diag(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.diagLocked(text)
}

// Diagf formats and writes diagnostic lines.
func (w *Writer) Diagf(format string, args ...any) { w.Diag(fmt.Sprintf(format, args...)) }

func (w *Writer) diagLocked(text string) {
	text = strings.TrimRight(text, "\n")
	for _, l := range strings.Split(text, "\n") {
		if l == "" {
			w.emit("#")
			continue
		}
		w.emit("# " + l)
	}
}

// Result writes one result line with the next number and returns that number.
func (w *Writer) Result(r Result) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.resultLocked(r)
}

func (w *Writer) resultLocked(r Result) int {
	w.n++
	w.emit(FormatResult(w.n, r))
	return w.n
}

// Resume makes the next result number n+1, for a process that continues a
// stream another process began (the harness's case process after a timeout).
func (w *Writer) Resume(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n = n
}

// Count is how many results this block has written.
func (w *Writer) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// SetCount makes the next result of this block number n+1, for a Writer that
// continues a stream another program began (the runner closing the block of a
// binary it killed).
func (w *Writer) SetCount(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n = n
}

// LTPSummary writes the end-of-run counts in the shape LTP's test library
// prints and LTP's runner kirk reads from a test's output ("Summary:", then
// passed, failed, broken, skipped and warnings, one per line). They are not
// TAP: print them only after a stream's last line, and only for LTP's tools
// (-exit ltp); TAP consumers that are not strict ignore them.
// StoppedBySignal begins the reason a binary gives, in the diagnostic right
// before its result line, for the case a signal stopped ("NAME: interrupted
// by SIGTERM; ..."). A runner that killed the binary reads it: that case is
// reported already, and every later one did not run.
const StoppedBySignal = "interrupted by "

func LTPSummary(w io.Writer, passed, failed, broken, skipped, warnings int) error {
	_, err := fmt.Fprintf(w, "\nSummary:\npassed   %d\nfailed   %d\nbroken   %d\nskipped  %d\nwarnings %d\n",
		passed, failed, broken, skipped, warnings)
	return err
}

// FormatResult renders a result line without indentation.
func FormatResult(n int, r Result) string {
	var b strings.Builder
	if !r.OK {
		b.WriteString("not ")
	}
	fmt.Fprintf(&b, "ok %d %s", n, r.Name)
	if r.Directive != NoDirective {
		b.WriteString(" # ")
		b.WriteString(string(r.Directive))
		if r.Reason != "" {
			b.WriteString(" ")
			b.WriteString(oneLine(r.Reason))
		}
	}
	return b.String()
}

// Sub opens a nested block named name. Its lines are held until EndSub.
func (w *Writer) Sub(name string) *Writer {
	return &Writer{mu: w.mu, out: w.out, format: w.format, depth: w.depth + 1, name: name, parent: w}
}

// EndSub writes child's block (header, plan, body, indented by four spaces) into
// w, then r as w's result line that closes it. A child with no results gets a
// plan of 0. It returns r's number; calling it twice for one child is a no-op
// returning 0.
func (w *Writer) EndSub(child *Writer, r Result) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if child.ended {
		return 0
	}
	child.ended = true
	const indent = "    "
	if w.format == KTAP {
		w.emit(indent + "KTAP version 1")
	}
	w.emit(indent + "# Subtest: " + child.name)
	w.emit(fmt.Sprintf("%s1..%d", indent, child.n))
	for _, l := range child.buf {
		w.emit(indent + l)
	}
	if r.Name == "" {
		r.Name = child.name
	}
	return w.resultLocked(r)
}

// Raw writes pre-formatted lines verbatim into w (each indented only by w's own
// nesting), for embedding another program's stream.
func (w *Writer) Raw(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	for _, l := range strings.Split(text, "\n") {
		w.emit(l)
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "#", "\\#")), " ")
}
