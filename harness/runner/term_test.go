package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/internal/termtest"
)

// onlcr is what a tty's line discipline makes of the newlines written to it.
func onlcr(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }

// sgr is a colour sequence.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// slowBody prints n results of a binary, one every 0.3 s, so that the live
// view is redrawn between them.
func slowBody(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "echo 'TAP version 13'\necho 1..%d\n", n)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "sleep 0.3\necho 'ok %d case_%d'\n", i, i)
	}
	return b.String()
}

// TestLiveViewFitsTheWidth draws the live view of a run whose binaries have
// long names (a running line of 97 columns) on a terminal of 80 and of 200
// columns, with the TAP stream on the same terminal and with stdout
// redirected, and replays what reached the terminal: no line of the view
// is wider than the terminal's last column but one, and none is left
// behind (each redraw erased the one before: at 80 columns the base
// commit's view left a wrapped line per refresh).
func TestLiveViewFitsTheWidth(t *testing.T) {
	dir := t.TempDir()
	var bins []Binary
	for _, n := range []string{"one", "two", "three"} {
		bins = append(bins, fake(t, dir, "inotify_binary_with_a_rather_long_name_"+n, slowBody(3)))
	}
	for _, cols := range []int{80, 200} {
		for _, redirected := range []bool{true, false} {
			t.Run(fmt.Sprintf("%d_redirected_%v", cols, redirected), func(t *testing.T) {
				const rows = 24
				var raw syncBuffer
				screen := NewScreen(&raw, func() (int, int) { return cols, rows })
				var stdout bytes.Buffer
				opt := Options{Screen: screen, Log: screen, Jobs: 2, Timeout: time.Minute, Lister: fakeList()}
				if redirected {
					opt.Out = &stdout
				} else {
					opt.Out = screen
				}
				rep, err := Run(context.Background(), bins, opt)
				assert.NilError(t, err)
				assert.NilError(t, screen.Close())
				out := raw.String()
				assert.Assert(t, strings.Contains(out, "running inotify_binary_with"), "no live view drawn")

				// Every view line drawn fits: strip the cursor-up-and-erase
				// that starts a redraw, and measure runes.
				widest := 0
				for _, l := range strings.Split(regexp.MustCompile("\x1b\\[[0-9]+A(\r\x1b\\[2K\x1b\\[B)+\x1b\\[[0-9]+A\r").ReplaceAllString(out, ""), "\n") {
					if strings.HasPrefix(l, "running ") || strings.Contains(l, " waiting, ") {
						widest = max(widest, visibleWidth(l))
					}
				}
				assert.Check(t, widest <= cols-1, "a view line of %d columns on a terminal of %d", widest, cols)

				term := termtest.New(cols, rows)
				// tmux: redirected, the view starts at the top-left corner
				// of this empty screen, as after clear.
				term.ScrollOnClear = true
				term.Write(onlcr([]byte(out)))
				assert.Check(t, is.Len(term.Unknown, 0), "%q", term.Unknown)
				scroll := term.Scrollback()
				var stale []string
				finished := 0
				for _, l := range scroll {
					if strings.HasPrefix(l, "running ") || strings.Contains(l, " waiting, ") {
						stale = append(stale, l)
					}
					if strings.HasPrefix(l, "PASS    inotify_binary_with") {
						finished++
					}
				}
				assert.Check(t, is.Len(stale, 0), "lines of the live view left behind:\n%s", strings.Join(scroll, "\n"))
				if redirected {
					// A line per finished binary, and nothing else.
					assert.Check(t, is.Equal(finished, len(bins)), "%s", strings.Join(scroll, "\n"))
					assert.Check(t, is.Len(scroll, len(bins)), "%s", strings.Join(scroll, "\n"))
					assert.Check(t, strings.HasPrefix(stdout.String(), "TAP version 13\n1..3\n"), "the stream went to stdout: %q", stdout.String())
				} else {
					// The stream's lines, the view gone.
					assert.Check(t, is.Equal(scroll[0], "TAP version 13"))
					assert.Check(t, is.Equal(scroll[len(scroll)-1], "ok 3 inotify_binary_with_a_rather_long_name_three"))
				}
				assert.Equal(t, rep.ExitCode(false), 0)
			})
		}
	}
}

// TestScreenResizedNarrower: a view drawn at 100 columns and erased at 40
// (the terminal re-wrapped its lines) is erased whole.
func TestScreenResizedNarrower(t *testing.T) {
	cols := 100
	var out bytes.Buffer
	s := NewScreen(&out, func() (int, int) { return cols, 20 })
	s.Write([]byte("text\n"))
	s.SetView([]string{strings.Repeat("a", 90), strings.Repeat("b", 90)})
	term := termtest.New(100, 20)
	term.Write(onlcr(out.Bytes()))
	out.Reset()
	// The terminal reflows to 40 columns: each 90-column line takes 3 rows.
	term = termtest.New(40, 20)
	term.Write([]byte("text\r\n" + strings.Repeat("a", 90) + "\r\n" + strings.Repeat("b", 90) + "\r\n"))
	cols = 40
	s.SetView([]string{"short"})
	term.Write(onlcr(out.Bytes()))
	assert.DeepEqual(t, term.Scrollback(), []string{"text", "short"})
}

// TestScreenAfterClear: a view drawn from the screen's top-left corner (the
// terminal cleared just before) leaves nothing in the scrollback of a
// terminal that, like tmux (scroll-on-clear), takes an erase below at that
// corner as a clear into the scrollback: the view is erased row by row.
func TestScreenAfterClear(t *testing.T) {
	var out bytes.Buffer
	s := NewScreen(&out, func() (int, int) { return 80, 24 })
	for i := range 5 {
		s.SetView([]string{fmt.Sprintf("running one %d", i), "1 waiting, 0 of 2 done"})
	}
	s.Print("PASS    one")
	s.SetView([]string{"running two"})
	assert.NilError(t, s.Close())
	term := termtest.New(80, 24)
	term.ScrollOnClear = true
	term.Write(onlcr(out.Bytes()))
	assert.Check(t, is.Len(term.Unknown, 0), "%q", term.Unknown)
	assert.DeepEqual(t, term.Scrollback(), []string{"PASS    one"})
}

// TestFit: lines are cut to the width in runes, colour sequences take no
// column, and a line cut while coloured ends with a reset.
func TestFit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		cols int
		want string
	}{
		{"abcdef", 6, "abcd…"},
		{"abcde", 6, "abcde"},
		{"ééééééé", 6, "éééé…"},
		{"\x1b[32mPASS\x1b[0m    good", 10, "\x1b[32mPASS\x1b[0m    …"},
		{"\x1b[31mFAILFAILFAIL", 6, "\x1b[31mFAIL…\x1b[0m"},
		{"a\tb\x1b]0;title\x07", 0, "a b ]0;title "},
	} {
		assert.Check(t, is.Equal(fit(tc.in, tc.cols), tc.want), "fit(%q, %d)", tc.in, tc.cols)
	}
}

// strictEPERM is a binary run with -strict in a user namespace: 20 cases
// fail the same way.
func strictEPERM() string {
	var b strings.Builder
	b.WriteString("echo 'TAP version 13'\necho 1..20\n")
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "echo '# strict: skip counted as failure: fanotify_init(FAN_CLASS_NOTIF, O_RDONLY): EPERM (needs CAP_SYS_ADMIN in the initial user namespace)'\necho 'not ok %d init_%d.tmpfs'\n", i, i)
	}
	return b.String() + "exit 1\n"
}

// timeouts is a binary 17 of whose cases time out.
func timeouts() string {
	var b strings.Builder
	b.WriteString("echo 'TAP version 13'\necho 1..19\n")
	for i := 1; i <= 17; i++ {
		fmt.Fprintf(&b, "echo '# hang_%d: deadline of 30s passed; fanotify groups closed, actors killed; the next case runs in a fresh process'\necho 'not ok %d hang_%d # TIMEOUT 30 seconds'\n", i, i, i)
	}
	b.WriteString("echo '# events_18.tmpfs (tmpfs): events differ'\necho '#   want: IN_CREATE f'\necho '#   got:  nothing'\necho '# HINT: kernel may lack 0123456789ab (\"fsnotify: a fix\")'\necho 'not ok 18 events_18.tmpfs'\n")
	b.WriteString("echo 'ok 19 fine'\nexit 1\n")
	return b.String()
}

// TestSummaryFitsTheTerminal: the closing summary of a 17-binary run with
// 37 failures fits 80x24 and 200x50 (less a row for the prompt and one
// spare), failures grouped by reason with counts, the totals its last line
// and the next step just above them.
func TestSummaryFitsTheTerminal(t *testing.T) {
	dir := t.TempDir()
	var bins []Binary
	for i := range 14 {
		bins = append(bins, fake(t, dir, fmt.Sprintf("inotify_pass_%02d", i), passBody))
	}
	bins = append(bins, fake(t, dir, "fanotify_strict", strictEPERM()), fake(t, dir, "fanotify_hangs", timeouts()),
		fake(t, dir, "perf_watch_add", "echo 'TAP version 13'\necho 1..1\necho '# reported, not gated: walk_vs_readdir 108.2 [100.1,117.3]'\necho 'ok 1 walk'\n"))
	res := filepath.Join(dir, "res")
	rep, err := Run(context.Background(), bins, Options{ResultsDir: res, Jobs: 2, Lister: fakeList()})
	assert.NilError(t, err)
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		cols, rows := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", cols, rows), func(t *testing.T) {
			var b bytes.Buffer
			rep.WriteSummaryTo(&b, SummaryTerm{Cols: cols, Rows: rows - 2, Self: "bin/fsnsuite"})
			text := strings.TrimPrefix(b.String(), "\n")
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			used := 1 // the blank line
			for _, l := range lines {
				used += max(1, (visibleWidth(l)+cols-1)/cols)
			}
			assert.Check(t, used <= rows-2, "%d rows on a terminal of %d:\n%s", used, rows, text)
			term := termtest.New(cols, rows)
			term.Write(onlcr([]byte("$ bin/fsnsuite -no-perf\n" + b.String() + "$ ")))
			screen := term.Screen()
			assert.Check(t, is.Contains(strings.Join(screen, "\n"), "fsnsuite: 17 binaries: 15 passed, 2 failed, 0 skipped in "), "the totals are not on the last screen:\n%s", strings.Join(screen, "\n"))
			assert.Check(t, is.Regexp(`^fsnsuite: 17 binaries: 15 passed, 2 failed, 0 skipped in \S+$`, lines[len(lines)-1]), "the totals are not last")
			assert.Check(t, is.Equal(lines[len(lines)-2], "next: bin/fsnsuite report "+res+" -o report.html"))
			assert.Check(t, is.Equal(lines[len(lines)-3], "first failure: "+filepath.Join(dir, "fanotify_strict")+` -run '^init_1\.tmpfs$' -v`))
			for _, want := range []string{
				"failed (38), by reason:\n",
				"     20  FAIL: strict: skip counted as failure: fanotify_init(…): EPERM (needs CAP_SYS_ADMIN in the initial user namespace)",
				"     17  TIMEOUT 30 seconds: deadline of 30s passed; fanotify groups closed, actors killed",
			} {
				assert.Check(t, is.Contains(text, want))
			}
			assert.Check(t, !strings.Contains(text, "fanotify_strict/init_2.tmpfs"), "a failure of a group listed one by one:\n%s", text)
			if cols == 200 {
				// Room for every group: the events failure with its HINT.
				assert.Check(t, is.Contains(text, "      1  FAIL: events differ  (fanotify_hangs/events_18.tmpfs)\n           HINT: kernel may lack 0123456789ab (\"fsnotify: a fix\")\n"))
				assert.Check(t, is.Contains(text, "  PASS    inotify_pass_00 "), "every binary's line on a tall terminal")
			} else {
				assert.Check(t, is.Contains(text, "  PASS    15 binaries: inotify_pass_00, inotify_pass_01"), "the passes in one line")
				assert.Check(t, is.Contains(text, "  ... and 1 more reason for 1 failed (every one in summary.txt)\n"))
			}
		})
	}
	// summary.txt keeps every failure, one by one, the totals last.
	file, err := os.ReadFile(filepath.Join(res, "summary.txt"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(file), "  fanotify_strict/init_20.tmpfs: FAIL\n      strict: skip counted as failure:"))
	assert.Check(t, is.Contains(string(file), "  fanotify_hangs/hang_17: TIMEOUT 30 seconds\n"))
	fl := strings.Split(strings.TrimSuffix(string(file), "\n"), "\n")
	assert.Check(t, strings.HasPrefix(fl[len(fl)-1], "fsnsuite: 17 binaries: "))
}

// TestColour: PASS green, FAIL red, SKIP yellow in the summary and the
// progress lines when asked for; none otherwise.
func TestColour(t *testing.T) {
	dir := t.TempDir()
	rep, err := Run(context.Background(), []Binary{fake(t, dir, "good", passBody), fake(t, dir, "bad", failBody), fake(t, dir, "skipper", skipAllBody)}, Options{})
	assert.NilError(t, err)
	var on, off bytes.Buffer
	rep.WriteSummaryTo(&on, SummaryTerm{Cols: 80, Rows: 40, Colour: true})
	rep.WriteSummaryTo(&off, SummaryTerm{Cols: 80, Rows: 40})
	assert.Check(t, !strings.Contains(off.String(), "\x1b"), "colour asked off: %q", off.String())
	for _, want := range []string{"\x1b[32mPASS\x1b[0m    good", "\x1b[31mFAIL\x1b[0m    bad", "\x1b[33mSKIP\x1b[0m    skipper", "\x1b[31mFAIL\x1b[0m: want: IN_CREATE", "\x1b[32m1 passed\x1b[0m, \x1b[31m1 failed\x1b[0m, \x1b[33m1 skipped\x1b[0m"} {
		assert.Check(t, is.Contains(on.String(), want))
	}
	// The same text once the colour is taken out.
	assert.Check(t, is.Equal(sgr.ReplaceAllString(on.String(), ""), off.String()))

	var plain bytes.Buffer
	_, err = Run(context.Background(), []Binary{fake(t, dir, "good", passBody)}, Options{Progress: &plain, Colour: true})
	assert.NilError(t, err)
	assert.Check(t, is.Regexp("^\x1b\\[32mPASS\x1b\\[0m    good +1 ok", plain.String()))
}
