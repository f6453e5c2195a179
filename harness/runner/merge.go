package runner

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/fsnsuite/fsnsuite/tap"
)

// merger builds the merged stream. Blocks appear in list order; the block of
// the first binary not yet closed is streamed line by line as the binary
// writes it, later ones (running in parallel) are held until their turn.
type merger struct {
	mu       sync.Mutex
	w        *tap.Writer
	format   tap.Format
	bins     []Binary
	blocks   []*block
	outcomes []*Outcome
	next     int // first block not yet closed
}

// block is one binary's part of the merged stream.
type block struct {
	held     []string // lines waiting for their turn
	partial  []byte   // an unterminated line
	headed   bool     // "# Subtest:" written
	firstSet bool     // the first non-blank line has been seen
	ltpLines int      // lines of an LTP summary still to drop
}

// ltpCount is a count line of the LTP summary a binary prints under -exit ltp.
var ltpCount = regexp.MustCompile(`^(passed|failed|broken|skipped|warnings)\s+\d+$`)

const indent = "    "

func newMerger(w *tap.Writer, f tap.Format, bins []Binary) *merger {
	m := &merger{w: w, format: f, bins: bins, outcomes: make([]*Outcome, len(bins))}
	for range bins {
		m.blocks = append(m.blocks, &block{})
	}
	return m
}

// stream returns the writer that receives binary i's stdout as it runs.
func (m *merger) stream(i int) io.Writer { return &blockWriter{m: m, i: i} }

type blockWriter struct {
	m *merger
	i int
}

// Write splits p into lines and passes the complete ones to the merger.
func (bw *blockWriter) Write(p []byte) (int, error) {
	m := bw.m
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.blocks[bw.i]
	b.partial = append(b.partial, p...)
	for {
		k := bytes.IndexByte(b.partial, '\n')
		if k < 0 {
			break
		}
		m.lineLocked(bw.i, strings.TrimRight(string(b.partial[:k]), "\r"))
		b.partial = b.partial[k+1:]
	}
	return len(p), nil
}

// lineLocked re-indents one line of binary i's stream and writes it now (its
// block is the current one) or holds it. The stream's own version line goes:
// the block gets a header of the merged stream's dialect instead.
func (m *merger) lineLocked(i int, l string) {
	b := m.blocks[i]
	// A binary's LTP summary (-exit ltp) is for kirk reading that binary
	// alone; it is not TAP, and the runner prints the run's own at the end.
	switch {
	case l == "Summary:":
		b.ltpLines = 5
		return
	case b.ltpLines > 0 && ltpCount.MatchString(l):
		b.ltpLines--
		return
	}
	b.ltpLines = 0
	if !b.firstSet {
		if strings.TrimSpace(l) == "" {
			return
		}
		b.firstSet = true
		if strings.HasPrefix(l, "TAP version ") || strings.HasPrefix(l, "KTAP version ") {
			return
		}
	}
	if l != "" {
		l = indent + l
	}
	b.held = append(b.held, l)
	if i == m.next {
		m.flushLocked(i)
	}
}

// flushLocked writes block i's header (once) and held lines.
func (m *merger) flushLocked(i int) {
	b := m.blocks[i]
	var out strings.Builder
	if !b.headed {
		b.headed = true
		if m.format == tap.KTAP {
			out.WriteString(indent + "KTAP version 1\n")
		}
		out.WriteString(indent + "# Subtest: " + m.bins[i].Name + "\n")
	}
	for _, l := range b.held {
		out.WriteString(l + "\n")
	}
	b.held = nil
	if out.Len() > 0 {
		m.w.Raw(strings.TrimSuffix(out.String(), "\n"))
	}
}

// finish records binary i's outcome and closes every block that can be
// closed now, in order; the next open block starts streaming.
func (m *merger) finish(i int, o *Outcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.outcomes[i] = o
	if b := m.blocks[i]; len(b.partial) > 0 {
		m.lineLocked(i, strings.TrimRight(string(b.partial), "\r"))
		b.partial = nil
	}
	for _, l := range o.Closing {
		m.lineLocked(i, l)
	}
	for m.next < len(m.outcomes) {
		m.flushLocked(m.next)
		if m.outcomes[m.next] == nil {
			return
		}
		m.closeLocked(m.next+1, m.outcomes[m.next])
		m.next++
	}
}

// closeLocked ends a block: a trailing plan for a stream that had none (so
// that nested parsers accept the block), the runner's notes, and the result
// line that carries the binary's verdict.
func (m *merger) closeLocked(n int, o *Outcome) {
	if o.Stream != nil && o.Stream.Plan < 0 {
		m.w.Raw(fmt.Sprintf("%s1..%d", indent, len(o.Stream.Children)))
	}
	if len(o.Notes) > 0 {
		m.w.Diag(strings.Join(o.Notes, "\n"))
	}
	m.w.Result(tap.Result{OK: !o.Node.Status.Failed(), Name: o.Binary.Name, Directive: o.Node.Directive, Reason: o.Node.Reason})
}
