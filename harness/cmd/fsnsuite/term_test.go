package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

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
	t.Setenv("TERM", "xterm")
	t.Setenv("NO_COLOR", "")
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
		// Plain progress lines, no cursor movement (colour only: stderr is
		// the terminal); the stream's lines all there, in order, between
		// them.
		assert.Assert(t, !strings.Contains(sgr.ReplaceAllString(string(out), ""), "\x1b"), "escape codes beside a piped stdout: %q", out)
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
	assert.Assert(t, len(rest) > 1 && strings.Join(rest, "\n") != "", "no summary after the stream")
	assert.Check(t, is.Regexp(`^fsnsuite: 4 binaries: 0 passed, 4 failed, 0 skipped in \S+$`, rest[len(rest)-1]), "the totals come last")
	assert.Check(t, is.Regexp(`^next: \S+ report `+regexp.QuoteMeta(res)+` -o report.html$`, rest[len(rest)-2]), "the next step just above")
}

// sgr is a colour sequence.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestRedirectedStdout runs the runner as `fsnsuite > out.tap` is run on a
// terminal of 80x24 and of 200x50: stdout a file, stderr the terminal. What
// stays on the terminal is a line per finished binary and the summary, no
// line of the live view (the base commit left one wrapped line per refresh
// below about 101 columns), the totals last; with colour unless NO_COLOR is
// set or TERM is dumb (then no escape sequence at all, and no live view).
func TestRedirectedStdout(t *testing.T) {
	dir := binDir(t, map[string]string{
		"inotify_long_binary_name_one": slowTAP(6),
		"inotify_two":                  slowTAP(4),
	})
	for _, tc := range []struct {
		name       string
		cols, rows int
		noColor    string
		term       string
	}{
		{"80x24", 80, 24, "", "xterm"},
		{"200x50", 200, 50, "", "xterm"},
		{"no_color", 80, 24, "1", "xterm"},
		{"dumb", 80, 24, "", "dumb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			t.Setenv("TERM", tc.term)
			master, tty, err := termtest.OpenPTY(tc.cols, tc.rows)
			if err != nil {
				t.Skipf("no pseudo-terminal: %v", err)
			}
			defer master.Close()
			got := make(chan []byte)
			go func() {
				b, _ := io.ReadAll(master)
				got <- b
			}()
			stdout, err := os.Create(filepath.Join(t.TempDir(), "out.tap"))
			assert.NilError(t, err)
			defer stdout.Close()
			res := filepath.Join(t.TempDir(), "res")
			code := run([]string{"-dir", dir, "-results", res}, stdout, tty)
			assert.Equal(t, code, 1)
			assert.NilError(t, tty.Close())
			out := <-got

			switch {
			case tc.term == "dumb":
				assert.Check(t, !strings.Contains(string(out), "\x1b"), "escape codes on a dumb terminal: %q", out)
			case tc.noColor != "":
				assert.Check(t, !sgr.Match(out), "colour under NO_COLOR: %q", out)
				assert.Check(t, strings.Contains(string(out), "running inotify_two"), "no live view drawn")
			default:
				assert.Check(t, strings.Contains(string(out), "\x1b[31mFAIL\x1b[0m"), "no colour on a terminal: %q", out)
				assert.Check(t, strings.Contains(string(out), "running inotify_two"), "no live view drawn")
			}
			term := termtest.New(tc.cols, tc.rows)
			term.Write(out)
			assert.Check(t, is.Len(term.Unknown, 0), "%q", term.Unknown)
			lines := term.Scrollback()
			stale := 0
			for _, l := range lines {
				if strings.HasPrefix(l, "running ") || strings.Contains(l, " waiting, ") {
					stale++
				}
			}
			assert.Check(t, is.Equal(stale, 0), "lines of the live view left on the terminal:\n%s", strings.Join(lines, "\n"))
			// The two binaries' lines, then the summary.
			assert.Check(t, strings.HasPrefix(lines[0], "FAIL    inotify_long_binary_name_one "), "%s", strings.Join(lines, "\n"))
			assert.Check(t, strings.HasPrefix(lines[1], "FAIL    inotify_two "), "%s", strings.Join(lines, "\n"))
			assert.Check(t, is.Regexp(`^fsnsuite: 2 binaries: 0 passed, 2 failed, 0 skipped in \S+$`, lines[len(lines)-1]))
			screen := strings.Join(term.Screen(), "\n")
			assert.Check(t, is.Contains(screen, "fsnsuite: 2 binaries: "), "the totals are not on the last screen")
			tapOut, err := os.ReadFile(stdout.Name())
			assert.NilError(t, err)
			assert.Check(t, !strings.Contains(string(tapOut), "\x1b"), "escape codes in the TAP file")
			saved, err := os.ReadFile(filepath.Join(res, "results.tap"))
			assert.NilError(t, err)
			assert.Check(t, is.Equal(string(tapOut), string(saved)))
			summary, err := os.ReadFile(filepath.Join(res, "summary.txt"))
			assert.NilError(t, err)
			assert.Check(t, !strings.Contains(string(summary), "\x1b"), "escape codes in summary.txt")
		})
	}
}
