package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/fsnsuite/fsnsuite/harness/internal/termtest"
)

// slowTAP is a fake binary's body that prints n results, one every 0.15 s
// (so that the live view redraws between them), failing case 2 with a
// diagnostic and a HINT.
func slowTAP(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "echo 'TAP version 13'; echo 1..%d\n", n)
	for i := 1; i <= n; i++ {
		b.WriteString("sleep 0.15\n")
		if i == 2 {
			b.WriteString("echo '# case_2.tmpfs (tmpfs): events differ'\necho '#   want: IN_CREATE f'\necho '#   got:  nothing'\n" +
				"echo '# HINT: kernel may lack 0123456789ab (\"fsnotify: a fix\")'\n")
			fmt.Fprintf(&b, "echo 'not ok %d case_%d.tmpfs'\n", i, i)
			continue
		}
		fmt.Fprintf(&b, "echo 'ok %d case_%d.tmpfs'\n", i, i)
	}
	b.WriteString("exit 1\n")
	return b.String()
}

// TestTerminalScrollback runs the runner with stdout and stderr on one
// pseudo-terminal, 60 columns by 20 rows (narrower than a progress line),
// replays what reached the terminal, and checks what a person scrolling
// back would read: the merged TAP stream, line for line as in results.tap,
// then the summary, and no leftover of the live view.
func TestTerminalScrollback(t *testing.T) {
	const cols, rows = 60, 20
	t.Run("same_terminal", func(t *testing.T) { scrollback(t, cols, rows, false) })
	// fsnsuite | tee log: stdout is a pipe whose reader copies the stream to
	// the terminal stderr is on; a live view there would overwrite it.
	t.Run("through_a_pipe", func(t *testing.T) { scrollback(t, cols, rows, true) })
}

func scrollback(t *testing.T, cols, rows int, piped bool) {
	master, tty, err := termtest.OpenPTY(cols, rows)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(master) // EIO once tty is closed and all is read
		got <- b
	}()
	dir := binDir(t, map[string]string{
		"inotify_long_binary_name_one": slowTAP(8),
		"inotify_two":                  slowTAP(6),
		"inotify_three":                slowTAP(5),
		"inotify_four":                 slowTAP(4),
	})
	res := filepath.Join(t.TempDir(), "res")
	stdout := tty
	var copied chan error
	if piped {
		pr, pw, err := os.Pipe()
		assert.NilError(t, err)
		copied = make(chan error)
		go func() { _, err := io.Copy(tty, pr); pr.Close(); copied <- err }()
		stdout = pw
	}
	code := run([]string{"-dir", dir, "-results", res, "-j", "2"}, stdout, tty)
	assert.Equal(t, code, 1)
	if piped {
		assert.NilError(t, stdout.Close())
		assert.NilError(t, <-copied)
	}
	assert.NilError(t, tty.Close())
	out := <-got

	if piped {
		// Plain progress lines, no cursor movement; the stream's lines all
		// there, in order, between them.
		assert.Assert(t, !strings.Contains(string(out), "\x1b"), "escape codes beside a piped stdout: %q", out)
		term := termtest.New(cols, rows)
		term.Write(out)
		screen := term.Scrollback()
		tapBytes, err := os.ReadFile(filepath.Join(res, "results.tap"))
		assert.NilError(t, err)
		tap := strings.Split(strings.TrimSuffix(string(tapBytes), "\n"), "\n")
		i := 0
		for _, l := range screen {
			if i < len(tap) && l == tap[i] {
				i++
			}
		}
		assert.Equal(t, i, len(tap), "the scrollback holds only %d of results.tap's %d lines in order:\n%s", i, len(tap), strings.Join(screen, "\n"))
		return
	}

	// The live view was there while the binaries ran (a fix that dropped
	// it would pass the rest trivially).
	assert.Assert(t, strings.Contains(string(out), "running inotify_two"), "no live view drawn")

	term := termtest.New(cols, rows)
	term.Write(out)
	assert.Equal(t, len(term.Unknown), 0, "escape sequences the emulator does not know: %q", term.Unknown)
	screen := term.Scrollback()
	tapBytes, err := os.ReadFile(filepath.Join(res, "results.tap"))
	assert.NilError(t, err)
	tap := strings.Split(strings.TrimSuffix(string(tapBytes), "\n"), "\n")
	if len(screen) < len(tap) {
		t.Fatalf("the scrollback has %d lines, results.tap %d:\n%s", len(screen), len(tap), strings.Join(screen, "\n"))
	}
	var diff []string
	for i, want := range tap {
		if screen[i] != want {
			diff = append(diff, fmt.Sprintf("line %d: want %q\n          got  %q", i+1, want, screen[i]))
		}
	}
	missing := 0
	seen := map[string]int{}
	for _, l := range screen {
		seen[l]++
	}
	for _, l := range tap {
		if seen[l] == 0 {
			missing++
		} else {
			seen[l]--
		}
	}
	stale := 0
	for _, l := range screen {
		if strings.Contains(l, "running ") || strings.Contains(l, " waiting, ") {
			stale++
		}
	}
	if len(diff) > 0 || stale > 0 {
		t.Errorf("scrollback differs from results.tap: %d of %d TAP lines missing, %d lines of the live view left over; first differences:\n%s\nscrollback:\n%s",
			missing, len(tap), stale, strings.Join(diff[:min(len(diff), 5)], "\n"), strings.Join(screen, "\n"))
	}
	rest := screen[len(tap):]
	assert.Assert(t, len(rest) > 0 && strings.Join(rest, "\n") != "", "no summary after the stream")
	assert.Equal(t, rest[len(rest)-1], "results: "+res, "the results path comes last")
}
