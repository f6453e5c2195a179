package harness_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The permission-event watchdog and SIGKILL tests (issue 5, "Rules"): a test
// binary that holds a process blocked on a fanotify permission event must not
// leave it blocked when it dies or when its watchdog fires. fanotify(7):
// closing the group's fd allows every pending permission event; the kernel
// closes it when the process dies, and the harness watchdog closes every group
// (fanotify.CloseAll) before it reports the timeout.

// releaseBound is how soon the blocked process must finish.
const releaseBound = time.Second

func buildPermKill(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "permkill")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/permkill").CombinedOutput()
	if err != nil {
		t.Fatalf("build permkill: %v\n%s", err, out)
	}
	return bin
}

// lineReader delivers a process's stdout line by line with arrival times.
type line struct {
	text string
	at   time.Time
}

func readLines(r io.Reader) <-chan line {
	ch := make(chan line, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- line{sc.Text(), time.Now()}
		}
	}()
	return ch
}

// startPermKill runs the binary and waits for its "BLOCKED pid=N" line. It
// skips the test when the binary skipped its case (no permission events here).
func startPermKill(t *testing.T, args ...string) (*exec.Cmd, <-chan line, int, *[]string) {
	t.Helper()
	cmd := exec.Command(buildPermKill(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// A process left blocked (the failure this test looks for) keeps the
	// stderr pipe open: do not let Wait hang on it.
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := readLines(out)
	seen := &[]string{}
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("permkill ended before blocking a process:\n%s\nstderr:\n%s", strings.Join(*seen, "\n"), stderr.String())
			}
			*seen = append(*seen, l.text)
			if strings.Contains(l.text, "# SKIP") {
				t.Skipf("permkill skipped: %s", l.text)
			}
			if v, ok := strings.CutPrefix(l.text, "BLOCKED pid="); ok {
				pid, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("bad BLOCKED line %q", l.text)
				}
				return cmd, lines, pid, seen
			}
		case <-deadline:
			t.Fatalf("no BLOCKED line within 20s:\n%s\nstderr:\n%s", strings.Join(*seen, "\n"), stderr.String())
		}
	}
}

// permAlive reports whether pid exists and is not a zombie.
func permAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || s[i+2] != 'Z'
}

// waitGone polls until pid has exited (gone or a zombie) or d passes.
func waitGone(pid int, d time.Duration) bool {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if !permAlive(pid) {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return !permAlive(pid)
}

// TestPermKillReleasesBlocked: SIGKILL the test binary while cat(1) is blocked
// on its unanswered FAN_OPEN_PERM event; cat must be allowed (it prints the
// file) and exit within a second.
func TestPermKillReleasesBlocked(t *testing.T) {
	requireRoot(t)
	cmd, lines, pid, seen := startPermKill(t)
	if !permAlive(pid) {
		t.Fatalf("cat (pid %d) is not blocked: it already exited", pid)
	}
	time.Sleep(50 * time.Millisecond)
	if !permAlive(pid) {
		t.Fatalf("cat (pid %d) finished although its permission event was not answered", pid)
	}
	killed := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(releaseBound)
	for released := false; !released; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output closed without RELEASED after SIGKILL:\n%s", strings.Join(*seen, "\n"))
			}
			*seen = append(*seen, l.text)
			if l.text == "RELEASED" {
				released = true
				t.Logf("cat released %v after SIGKILL", l.at.Sub(killed))
			}
		case <-timeout:
			t.Fatalf("cat (pid %d) not released within %v of SIGKILL to the test binary:\n%s", pid, releaseBound, strings.Join(*seen, "\n"))
		}
	}
	if !waitGone(pid, releaseBound-time.Since(killed)) {
		t.Errorf("cat (pid %d) still running %v after SIGKILL to the test binary", pid, time.Since(killed))
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || !killedBy(ee, syscall.SIGKILL) {
		t.Errorf("test binary: want death by SIGKILL, got %v", err)
	}
}

func killedBy(ee *exec.ExitError, sig syscall.Signal) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// TestPermWatchdogReleasesBeforeReport: the case never answers; at its
// deadline the harness closes its fanotify groups first, so cat is released
// before the TIMEOUT result is printed, and the binary exits 1. The case's
// report of cat's return (the kernel's fault in a real case) comes after the
// watchdog closed its log, so the TIMEOUT block does not print it.
func TestPermWatchdogReleasesBeforeReport(t *testing.T) {
	requireRoot(t)
	cmd, lines, pid, seen := startPermKill(t, "-timeout", "2s")
	var releasedAt, timeoutAt = -1, -1
	deadline := time.After(15 * time.Second)
	for done := false; !done; {
		select {
		case l, ok := <-lines:
			if !ok {
				done = true
				break
			}
			*seen = append(*seen, l.text)
			switch {
			case l.text == "RELEASED":
				releasedAt = len(*seen) - 1
			case strings.HasPrefix(l.text, "not ok 1 blocked # TIMEOUT"):
				timeoutAt = len(*seen) - 1
			}
		case <-deadline:
			t.Fatalf("binary did not finish within 15s:\n%s", strings.Join(*seen, "\n"))
		}
	}
	out := strings.Join(*seen, "\n")
	if timeoutAt < 0 {
		t.Fatalf("no TIMEOUT result:\n%s", out)
	}
	if releasedAt < 0 || releasedAt > timeoutAt {
		t.Errorf("cat not released before the TIMEOUT report (RELEASED at line %d, TIMEOUT at line %d):\n%s", releasedAt, timeoutAt, out)
	}
	if strings.Contains(out, "although") {
		t.Errorf("the timed-out case's log blames the kernel for the watchdog's release:\n%s", out)
	}
	if !waitGone(pid, releaseBound) {
		t.Errorf("cat (pid %d) still running after the watchdog fired", pid)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: want status 1 (a timed-out case fails), got %v", err)
	}
}
