package runner

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Screen is the terminal the live progress view is drawn on, shared with
// the merged TAP stream when stdout and stderr are the same terminal, and
// with the runner's own lines (a line per finished binary, messages) when
// stdout goes elsewhere. Text written to it goes above the view in whole
// lines: the view, the last lines of the screen, is erased, the text
// written, and the view drawn again below it. No redraw moves the cursor
// over text, so every line of the stream stays in the scrollback. View
// lines (and Print's) are cut to the terminal's width, in runes, colour
// sequences taking none (a line that wrapped would spoil the count of lines
// to erase), and the view to its height; a terminal made narrower since the
// last redraw re-wrapped the view's lines, and the erase counts the rows
// they take now.
type Screen struct {
	mu    sync.Mutex
	w     io.Writer
	size  func() (cols, rows int)
	view  []string // the view as last set
	drawn []int    // the view's lines on the terminal now (their widths), each ended by a newline
	part  []byte   // text not yet ended by a newline
	done  bool
}

// NewScreen returns a Screen writing to w, a terminal whose size is asked of
// size at every redraw (0 for a dimension it does not know: no limit).
func NewScreen(w io.Writer, size func() (cols, rows int)) *Screen {
	return &Screen{w: w, size: size}
}

// Write puts the complete lines of p above the view; a last line without its
// newline waits for it (or for Close). After Close it writes p through.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.w.Write(p)
	}
	s.part = append(s.part, p...)
	k := bytes.LastIndexByte(s.part, '\n')
	if k < 0 {
		return len(p), nil
	}
	text := s.part[:k+1]
	s.part = append([]byte(nil), s.part[k+1:]...)
	if err := s.emit(text); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Print puts one line above the view, cut to the terminal's width like the
// view's lines (a line of the runner's own, not of the stream: the stream is
// written whole).
func (s *Screen) Print(line string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cols, _ := s.dims()
	if s.done {
		_, err := io.WriteString(s.w, fit(line, cols)+"\n")
		return err
	}
	return s.emit([]byte(fit(line, cols) + "\n"))
}

func (s *Screen) dims() (cols, rows int) {
	if s.size != nil {
		return s.size()
	}
	return 0, 0
}

// SetView replaces the view with lines and redraws it (nil: no view).
func (s *Screen) SetView(lines []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	s.view = lines
	return s.emit(nil)
}

// Close erases the view and writes any text still waiting for its newline;
// later writes go straight to the terminal.
func (s *Screen) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	s.view = nil
	err := s.emit(nil)
	if err == nil && len(s.part) > 0 {
		_, err = s.w.Write(s.part)
	}
	s.part, s.done = nil, true
	return err
}

// emit erases the view, writes text (whole lines) and draws the view again,
// in one write.
func (s *Screen) emit(text []byte) error {
	var b bytes.Buffer
	cols, rows := s.dims()
	if up := rowsTaken(s.drawn, cols); up > 0 {
		// Up to the view's first row, erase each of its rows, and back up
		// to the first: not "erase below" (ESC [ J), which tmux, at the
		// screen's top-left corner (a view drawn after clear), takes as a
		// clear that pushes the screen into the scrollback (scroll-on-clear),
		// leaving a copy of the view there at every redraw.
		fmt.Fprintf(&b, "\x1b[%dA", up)
		for range up {
			b.WriteString("\r\x1b[2K\x1b[B")
		}
		fmt.Fprintf(&b, "\x1b[%dA\r", up)
	}
	b.Write(text)
	lines := s.view
	if rows > 1 && len(lines) > rows-1 {
		// One row stays for the cursor below the view: a taller view would
		// scroll its own first lines away, where no cursor-up reaches.
		keep := rows - 2
		lines = append(append([]string(nil), lines[:keep]...), fmt.Sprintf("(%d more)", len(s.view)-keep))
	}
	s.drawn = s.drawn[:0]
	for _, l := range lines {
		l = fit(l, cols)
		b.WriteString(l)
		b.WriteByte('\n')
		s.drawn = append(s.drawn, visibleWidth(l))
	}
	_, err := s.w.Write(b.Bytes())
	if err != nil {
		return fmt.Errorf("writing to the terminal: %w", err)
	}
	return nil
}

// rowsTaken is how many terminal rows lines of these widths take at cols
// columns: one each, more for a line the terminal re-wrapped when it was
// made narrower after the line was drawn (tmux and xterm reflow).
func rowsTaken(widths []int, cols int) int {
	n := 0
	for _, w := range widths {
		if cols > 0 && w > cols {
			n += (w + cols - 1) / cols
		} else {
			n++
		}
	}
	return n
}

// fit makes l one terminal line of at most cols-1 characters (0: any
// length), counted in runes, with no control characters but SGR colour
// sequences (ESC [ digits ; m), which take no column: the last column stays
// free, since terminals differ on what a character written there does to
// the cursor. A line cut while a colour is on ends with a reset.
func fit(l string, cols int) string {
	var b strings.Builder
	width, coloured := 0, false
	cut := cols > 1 && visibleWidth(l) > cols-1
	for i := 0; i < len(l); {
		if n := sgrLen(l[i:]); n > 0 {
			seq := l[i : i+n]
			b.WriteString(seq)
			coloured = seq != "\x1b[0m" && seq != "\x1b[m"
			i += n
			continue
		}
		r, size := utf8.DecodeRuneInString(l[i:])
		i += size
		if cut && width == cols-2 {
			b.WriteString("…")
			if coloured {
				b.WriteString("\x1b[0m")
			}
			return b.String()
		}
		if r < 0x20 || r == 0x7f {
			r = ' '
		}
		b.WriteRune(r)
		width++
	}
	return b.String()
}

// visibleWidth is l's width in runes, SGR sequences left out.
func visibleWidth(l string) int {
	n := 0
	for i := 0; i < len(l); {
		if k := sgrLen(l[i:]); k > 0 {
			i += k
			continue
		}
		_, size := utf8.DecodeRuneInString(l[i:])
		i += size
		n++
	}
	return n
}

// sgrLen is the length of the SGR sequence (ESC [ params m) s starts with,
// 0 when it starts with none.
func sgrLen(s string) int {
	if !strings.HasPrefix(s, "\x1b[") {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c >= '0' && c <= '9' || c == ';':
		default:
			return 0
		}
	}
	return 0
}

// SGR sequences of the verdict colours (ECMA-48 8.3.117).
const (
	sgrGreen  = "\x1b[32m"
	sgrRed    = "\x1b[31m"
	sgrYellow = "\x1b[33m"
	sgrReset  = "\x1b[0m"
)

// paint colours a verdict word for a terminal when on: PASS green, SKIP
// yellow, FAIL and every other failure (TIMEOUT, ERROR, MISSING) red; other
// words (running, waiting) stay as they are. The padding after the word is
// left outside the colour.
func paint(word string, on bool) string {
	if !on {
		return word
	}
	bare := strings.TrimRight(word, " ")
	var c string
	switch bare {
	case "PASS", "XFAIL", "TODO": // an expected failure is a pass
		c = sgrGreen
	case "SKIP":
		c = sgrYellow
	case "FAIL", "TIMEOUT", "ERROR", "MISSING":
		c = sgrRed
	default:
		return word
	}
	return c + bare + sgrReset + word[len(bare):]
}
