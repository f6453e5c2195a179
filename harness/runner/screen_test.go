package runner

import (
	"bytes"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/fsnsuite/fsnsuite/harness/internal/termtest"
)

// TestScreen replays a Screen's output in a 20x6 terminal: text stays in
// whole lines above the view, the view is cut to the width and the height,
// and Close leaves only the text.
func TestScreen(t *testing.T) {
	var out bytes.Buffer
	s := NewScreen(&out, func() (int, int) { return 20, 6 })
	term := termtest.New(20, 6)
	replay := func() {
		term.Write(bytes.ReplaceAll(out.Bytes(), []byte("\n"), []byte("\r\n"))) // a tty's ONLCR
		out.Reset()
	}
	s.SetView([]string{"running a_binary_with_a_long_name 12 ok", "1 waiting"})
	replay()
	assert.DeepEqual(t, term.Scrollback(), []string{"running a_binary_w…", "1 waiting"})
	s.Write([]byte("line 1\nline 2 is longer than twenty columns\nhalf "))
	s.Write([]byte("a line\n"))
	replay()
	assert.DeepEqual(t, term.Scrollback(), []string{"line 1", "line 2 is longer than twenty columns", "half a line",
		"running a_binary_w…", "1 waiting"})
	// Taller than the terminal: the view keeps a row free and says what it left out.
	s.SetView(strings.Split("a b c d e f g h", " "))
	replay()
	assert.DeepEqual(t, term.Screen(), []string{"a", "b", "c", "d", "(4 more)", ""})
	s.Write([]byte("tail without newline"))
	assert.NilError(t, s.Close())
	s.Write([]byte("\nafter\n"))
	replay()
	assert.DeepEqual(t, term.Scrollback(), []string{"line 1", "line 2 is longer than twenty columns", "half a line", "tail without newline", "after"})
	assert.Equal(t, len(term.Unknown), 0, "%q", term.Unknown)
}
