package termtest

import (
	"io"
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
)

func replay(cols, rows int, s string) *Terminal {
	t := New(cols, rows)
	t.Write([]byte(s))
	return t
}

func TestTerminal(t *testing.T) {
	tests := []struct {
		name       string
		cols, rows int
		in         string
		scrollback []string
		screen     []string
	}{
		{"plain", 10, 3, "a\r\nb\r\n", []string{"a", "b"}, []string{"a", "b", ""}},
		{"wrap joined", 4, 3, "abcdef\r\ng\r\n", []string{"abcdef", "g"}, []string{"ef", "g", ""}},
		{"exact width no extra line", 4, 3, "abcd\r\ne", []string{"abcd", "e"}, []string{"abcd", "e", ""}},
		{"redraw in place", 10, 3, "one\r\ntwo\r\n\x1b[2A\r\x1b[Jthree\r\n", []string{"three"}, []string{"three", "", ""}},
		{"erase line", 10, 3, "abc\r\x1b[2Kd", []string{"d"}, []string{"d", "", ""}},
		{"erase to end", 10, 3, "abcdef\r\x1b[3C", nil, nil}, // CSI C is unknown: recorded
		{"scrolled lines stay", 10, 2, "1\r\n2\r\n3\r\n4\r\n", []string{"1", "2", "3", "4"}, []string{"4", ""}},
		{"cursor up stops at the top row", 10, 2, "1\r\n2\r\n3\r\n\x1b[9Ax", []string{"1", "2", "x"}, []string{"x", ""}},
		{"utf-8 split", 10, 2, "\xe2\x80", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			term := replay(tc.cols, tc.rows, tc.in)
			switch tc.name {
			case "erase to end":
				assert.DeepEqual(t, term.Unknown, []string{"CSI 3C"})
				return
			case "utf-8 split":
				term.Write([]byte("\xa6ok"))
				assert.DeepEqual(t, term.Scrollback(), []string{"…ok"})
				return
			}
			assert.DeepEqual(t, term.Scrollback(), tc.scrollback)
			assert.DeepEqual(t, term.Screen(), tc.screen)
			assert.Equal(t, len(term.Unknown), 0, "%q", term.Unknown)
		})
	}
}

func TestOpenPTY(t *testing.T) {
	master, tty, err := OpenPTY(33, 7)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer master.Close()
	ws, err := unix.IoctlGetWinsize(int(tty.Fd()), unix.TIOCGWINSZ)
	assert.NilError(t, err)
	assert.Equal(t, [2]uint16{ws.Col, ws.Row}, [2]uint16{33, 7})
	_, err = tty.WriteString("a\nb\n")
	assert.NilError(t, err)
	assert.NilError(t, tty.Close())
	got, _ := io.ReadAll(master)               // ends with EIO once the tty side is closed
	assert.Equal(t, string(got), "a\r\nb\r\n") // the line discipline's ONLCR
}
