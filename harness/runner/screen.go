package runner

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Screen is one terminal shared by the merged TAP stream and the live
// progress view, for a run whose stdout and stderr are the same terminal.
// Text written to it (the TAP stream, the runner's messages) goes above the
// view in whole lines: the view, the last lines of the screen, is erased,
// the text written, and the view drawn again below it. No redraw moves the
// cursor over text, so every line of the stream stays in the scrollback.
// View lines are cut to the terminal's width (a line that wrapped would
// spoil the count of lines to erase) and the view to its height.
type Screen struct {
	mu    sync.Mutex
	w     io.Writer
	size  func() (cols, rows int)
	view  []string // the view as last set
	drawn int      // view lines on the terminal now, each ended by a newline
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
	if s.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\r\x1b[J", s.drawn) // to the view's first line; erase it and below
	}
	b.Write(text)
	cols, rows := 0, 0
	if s.size != nil {
		cols, rows = s.size()
	}
	lines := s.view
	if rows > 1 && len(lines) > rows-1 {
		// One row stays for the cursor below the view: a taller view would
		// scroll its own first lines away, where no cursor-up reaches.
		keep := rows - 2
		lines = append(append([]string(nil), lines[:keep]...), fmt.Sprintf("(%d more)", len(s.view)-keep))
	}
	for _, l := range lines {
		b.WriteString(fit(l, cols))
		b.WriteByte('\n')
	}
	s.drawn = len(lines)
	_, err := s.w.Write(b.Bytes())
	if err != nil {
		return fmt.Errorf("writing to the terminal: %w", err)
	}
	return nil
}

// fit makes l one terminal line of at most cols-1 characters (0: any
// length), with no control characters: the last column stays free, since
// terminals differ on what a character written there does to the cursor.
func fit(l string, cols int) string {
	l = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, l)
	if cols <= 1 || utf8.RuneCountInString(l) <= cols-1 {
		return l
	}
	r := []rune(l)
	return string(r[:cols-2]) + "…"
}
