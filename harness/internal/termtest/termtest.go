// Package termtest lets a test see what a person at a terminal would see: a
// pseudo-terminal of a chosen size (OpenPTY, with golang.org/x/sys/unix
// alone: /dev/ptmx and its ioctls) and Terminal, a small emulator that
// replays the bytes a program wrote to it and gives back the screen and the
// scrollback. The emulator knows what our programs write (printable text,
// carriage return, newline, tab, backspace, cursor up and down, erase in
// line and erase below, SGR colours, which it ignores) and records any other
// escape sequence in Unknown, so that a test can refuse output it cannot
// judge.
package termtest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// OpenPTY opens a pseudo-terminal pair whose window is cols x rows. A program
// writes to tty (its stdout and stderr); the test reads what arrived from
// master. Close tty when the program is done: master's reads then end (EIO)
// once everything was read.
func OpenPTY(cols, rows int) (master, tty *os.File, err error) {
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening /dev/ptmx: %w", err)
	}
	fail := func(what string, err error) (*os.File, *os.File, error) {
		unix.Close(mfd)
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil { // unlockpt
		return fail("unlocking the pty (TIOCSPTLCK)", err)
	}
	n, err := unix.IoctlGetUint32(mfd, unix.TIOCGPTN) // ptsname
	if err != nil {
		return fail("naming the pty (TIOCGPTN)", err)
	}
	name := "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail("opening "+name, err)
	}
	if err := unix.IoctlSetWinsize(sfd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		unix.Close(sfd)
		return fail("setting the window size (TIOCSWINSZ)", err)
	}
	return os.NewFile(uintptr(mfd), "/dev/ptmx"), os.NewFile(uintptr(sfd), name), nil
}

// Terminal is a cols x rows screen above an unbounded scrollback. Lines that
// scroll off the top stay in the scrollback, as in tmux or xterm, and the
// cursor can never leave the screen: cursor up stops at its top row.
type Terminal struct {
	cols, rows int
	lines      []line
	top        int  // index in lines of the screen's first row
	row, col   int  // cursor; row indexes lines
	pending    bool // the last column was written: the next character wraps
	state      int
	params     []byte
	partial    []byte // an incomplete UTF-8 sequence
	// Unknown lists the escape sequences the emulator does not implement,
	// in order (with their parameters).
	Unknown []string
	// ScrollOnClear makes an erase below at the screen's top-left corner
	// push the screen's lines into the scrollback instead of erasing them,
	// as tmux does (its scroll-on-clear option, on by default since 3.3).
	ScrollOnClear bool
}

type line struct {
	text []rune
	// wrapped: the text goes on in the next line (an automatic wrap at the
	// last column, not a newline).
	wrapped bool
}

const (
	ground = iota
	escape
	csi
)

// New returns an empty terminal of cols x rows.
func New(cols, rows int) *Terminal {
	return &Terminal{cols: cols, rows: rows, lines: []line{{}}}
}

// Write replays p; an escape sequence or UTF-8 character split across writes
// is completed by the next one.
func (t *Terminal) Write(p []byte) (int, error) {
	b := append(t.partial, p...)
	t.partial = nil
	for len(b) > 0 {
		if !utf8.FullRune(b) {
			t.partial = append([]byte(nil), b...)
			break
		}
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		t.feed(r)
	}
	return len(p), nil
}

func (t *Terminal) feed(r rune) {
	switch t.state {
	case escape:
		if r == '[' {
			t.state, t.params = csi, t.params[:0]
			return
		}
		t.state = ground
		t.Unknown = append(t.Unknown, "ESC "+string(r))
		return
	case csi:
		if r >= 0x30 && r <= 0x3f { // parameter bytes
			t.params = append(t.params, byte(r))
			return
		}
		t.state = ground
		t.control(string(t.params), r)
		return
	}
	switch r {
	case 0x1b:
		t.state = escape
	case '\r':
		t.col, t.pending = 0, false
	case '\n':
		t.lineFeed()
	case '\t':
		t.col, t.pending = min(t.cols-1, (t.col/8+1)*8), false
	case '\b':
		t.col, t.pending = max(0, t.col-1), false
	case '\a':
	default:
		if r < 0x20 || r == 0x7f {
			t.Unknown = append(t.Unknown, fmt.Sprintf("control %#x", r))
			return
		}
		t.put(r)
	}
}

func (t *Terminal) lineFeed() {
	t.pending = false
	if t.row == t.top+t.rows-1 {
		t.top++ // scroll: the top row goes to the scrollback
	}
	t.row++
	for len(t.lines) <= t.row {
		t.lines = append(t.lines, line{})
	}
}

func (t *Terminal) put(r rune) {
	if t.pending {
		t.lines[t.row].wrapped = true
		t.lineFeed()
		t.col = 0
	}
	l := &t.lines[t.row]
	for len(l.text) <= t.col {
		l.text = append(l.text, ' ')
	}
	l.text[t.col] = r
	if t.col == t.cols-1 {
		t.pending = true
	} else {
		t.col++
	}
}

func (t *Terminal) control(params string, final rune) {
	n := 1
	if params != "" {
		v, err := strconv.Atoi(params)
		if err != nil && final != 'm' {
			t.Unknown = append(t.Unknown, "CSI "+params+string(final))
			return
		}
		n = v
	}
	switch final {
	case 'A': // cursor up
		t.row, t.pending = max(t.top, t.row-max(n, 1)), false
	case 'B': // cursor down
		t.row, t.pending = min(t.top+t.rows-1, t.row+max(n, 1)), false
		for len(t.lines) <= t.row {
			t.lines = append(t.lines, line{})
		}
	case 'K': // erase in line
		if params == "" {
			n = 0
		}
		t.eraseLine(t.row, n)
	case 'J': // erase in display: only "from the cursor down" is used
		if params != "" && n != 0 {
			t.Unknown = append(t.Unknown, "CSI "+params+"J")
			return
		}
		if t.ScrollOnClear && t.row == t.top && t.col == 0 {
			used := 0
			for i := t.top; i < len(t.lines); i++ {
				if len(t.lines[i].text) > 0 {
					used = i - t.top + 1
				}
			}
			t.top += used
			t.row = t.top
			for len(t.lines) <= t.row {
				t.lines = append(t.lines, line{})
			}
		}
		t.eraseLine(t.row, 0)
		for i := t.row + 1; i < len(t.lines); i++ {
			t.lines[i] = line{}
		}
	case 'm': // colours: no effect on text
	default:
		t.Unknown = append(t.Unknown, "CSI "+params+string(final))
	}
}

// eraseLine erases row i from the cursor to its end (how 0), from its start
// to the cursor (1) or whole (2).
func (t *Terminal) eraseLine(i, how int) {
	l := &t.lines[i]
	switch how {
	case 0:
		if t.col < len(l.text) {
			l.text = l.text[:t.col]
		}
		l.wrapped = false
	case 1:
		for j := 0; j <= t.col && j < len(l.text); j++ {
			l.text[j] = ' '
		}
	case 2:
		*l = line{}
	}
	t.pending = false
}

// Scrollback returns every line, scrolled off or on the screen, with the
// lines a wrap split joined again (as tmux capture-pane -J does), trailing
// blanks cut and trailing empty lines left out.
func (t *Terminal) Scrollback() []string {
	var out []string
	cur := ""
	for _, l := range t.lines {
		cur += string(l.text)
		if l.wrapped {
			continue
		}
		out = append(out, strings.TrimRight(cur, " "))
		cur = ""
	}
	if cur != "" {
		out = append(out, strings.TrimRight(cur, " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// Screen returns the rows on the screen now, trailing blanks cut.
func (t *Terminal) Screen() []string {
	var out []string
	for i := t.top; i < t.top+t.rows; i++ {
		s := ""
		if i < len(t.lines) {
			s = strings.TrimRight(string(t.lines[i].text), " ")
		}
		out = append(out, s)
	}
	return out
}
