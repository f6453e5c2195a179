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

	"golang.org/x/sys/unix"
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
// The lines are its stdout and stderr in one pipe (cat prints to stderr).
func startPermKill(t *testing.T, args ...string) (*exec.Cmd, <-chan line, int, *[]string) {
	t.Helper()
	cmd := exec.Command(buildPermKill(t), args...)
	var stderr bytes.Buffer
	out, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	// A process left blocked (the failure this test looks for) keeps the
	// pipe open: do not let Wait hang on it.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); out.Close() })
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
//
// "Before" is not read off the order of cat's RELEASED line and the TIMEOUT
// line in the shared stdout pipe: closing the group only answers the event
// and wakes cat (fanotify(7): "Upon close(2), outstanding permission events
// will be set to allowed"; fs/notify/fanotify/fanotify_user.c,
// fanotify_release()); when cat then runs and writes is up to the scheduler,
// and under load the case process can write its report first (issue
// "flakes": RELEASED once printed after TIMEOUT). Instead the test stops the
// case process inside its report: once cat is blocked, it fills the
// binary's stdout pipe, so that the supervisor blocks forwarding the case
// process's output, and then the case process's own stdout pipe (to the
// supervisor), so the first line of the report blocks in write(2) (pipe(7):
// a write to a full pipe blocks until data is read). While the case process
// sits there it can neither release nor exit, so cat can only get out of its
// open(2) (and print RELEASED on stderr) if the groups were closed before the
// report began.
func TestPermWatchdogReleasesBeforeReport(t *testing.T) {
	requireRoot(t)
	if _, err := os.ReadFile("/proc/self/syscall"); err != nil {
		t.Skipf("needs /proc/pid/syscall (CONFIG_HAVE_ARCH_TRACEHOOK) to see where a process is blocked: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// A second, non-blocking open file description of the pipe's write end
	// (opening /proc/self/fd/N of a pipe opens the pipe as a FIFO), to fill
	// it without blocking and without making the binary's stdout
	// non-blocking.
	fill, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", w.Fd()), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("reopen the stdout pipe: %v", err)
	}
	fill2 := -1 // the case process's stdout pipe, opened the same way
	closeFill := func() {
		for _, fd := range []*int{&fill, &fill2} {
			if *fd >= 0 {
				unix.Close(*fd)
				*fd = -1
			}
		}
	}
	cmd := exec.Command(buildPermKill(t), "-timeout", "3s")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// cat and the case process may be blocked on the full pipe: closing
	// the read end lets them go (EPIPE) once the binary is killed.
	t.Cleanup(func() { cmd.Process.Kill(); closeFill(); r.Close(); cmd.Wait() })

	br := bufio.NewReader(r)
	var seen []string
	out := func() string { return strings.Join(seen, "\n") + "\nstderr:\n" + stderr.String() }
	readLine := func(deadline time.Time) (string, bool) {
		r.SetReadDeadline(deadline)
		l, err := br.ReadString('\n')
		if err == io.EOF && l == "" {
			return "", false
		}
		if err != nil && err != io.EOF {
			t.Fatalf("reading the binary's output: %v\n%s", err, out())
		}
		return strings.TrimSuffix(l, "\n"), true
	}
	pid := -1
	for deadline := time.Now().Add(20 * time.Second); pid < 0; {
		l, ok := readLine(deadline)
		if !ok {
			t.Fatalf("permkill ended before blocking a process:\n%s", out())
		}
		seen = append(seen, l)
		if strings.Contains(l, "# SKIP") {
			t.Skipf("permkill skipped: %s", l)
		}
		if v, ok := strings.CutPrefix(l, "BLOCKED pid="); ok {
			if pid, err = strconv.Atoi(v); err != nil {
				t.Fatalf("bad BLOCKED line %q", l)
			}
		}
	}
	casePid, err := parentPid(pid)
	if err != nil {
		t.Fatalf("case process of cat (pid %d): %v", pid, err)
	}
	// Fill the pipe with whole pages of newlines (empty lines, dropped
	// below): the last pipe buffer is then full, so no later write can be
	// merged into it and every write blocks until the pipe is read.
	page := bytes.Repeat([]byte{'\n'}, os.Getpagesize())
	fillUp := func(fd int, what string) {
		for {
			if _, err := unix.Write(fd, page); err == unix.EAGAIN {
				return
			} else if err != nil {
				t.Fatalf("filling %s: %v", what, err)
			}
		}
	}
	fillUp(fill, "the stdout pipe")
	// Then the case process's stdout pipe, until the supervisor, which
	// forwards it, sits blocked writing to the full one: from then on
	// nobody reads it.
	if fill2, err = unix.Open(fmt.Sprintf("/proc/%d/fd/1", casePid), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err != nil {
		t.Fatalf("open the case process's stdout pipe: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		fillUp(fill2, "the case process's stdout pipe")
		if inWrite(cmd.Process.Pid, 1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the supervisor (pid %d) did not block writing to its full stdout within 10s:\n%s", cmd.Process.Pid, out())
		}
	}
	fillUp(fill2, "the case process's stdout pipe")
	// Wait for the watchdog's report to block on the full pipe.
	for deadline := time.Now().Add(15 * time.Second); !inWrite(casePid, 1); {
		if !permAlive(casePid) {
			t.Fatalf("case process (pid %d) ended before its report blocked on the full pipe: the watchdog fired before the pipe was filled; test setup too slow:\n%s", casePid, out())
		}
		if time.Now().After(deadline) {
			t.Fatalf("case process (pid %d) did not start its report within 15s:\n%s", casePid, out())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The report has begun and cannot go on. cat, released, gets out of
	// open(2), reads the file, prints RELEASED on stderr and exits.
	released := func() bool { return !permAlive(pid) }
	for end := time.Now().Add(releaseBound); !released() && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	if !released() {
		t.Errorf("cat (pid %d) still waits for its permission event (/proc/pid/syscall: %s; %d is openat) while the case process (pid %d) is writing its TIMEOUT report: the watchdog reported before it closed the fanotify groups", pid, procSyscall(pid), unix.SYS_OPENAT, casePid)
	}

	closeFill()
	timeoutAt := -1
	for deadline := time.Now().Add(15 * time.Second); ; {
		l, ok := readLine(deadline)
		if !ok {
			break
		}
		if l == "" {
			continue // the filler
		}
		seen = append(seen, l)
		if strings.HasPrefix(l, "not ok 1 blocked # TIMEOUT") {
			timeoutAt = len(seen) - 1
		}
	}
	if timeoutAt < 0 {
		t.Fatalf("no TIMEOUT result:\n%s", out())
	}
	if strings.Contains(strings.Join(seen, "\n"), "although") {
		t.Errorf("the timed-out case's log blames the kernel for the watchdog's release:\n%s", out())
	}
	if !waitGone(pid, releaseBound) {
		t.Errorf("cat (pid %d) still running after the watchdog fired", pid)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: want status 1 (a timed-out case fails), got %v", err)
	}
	if !strings.Contains(stderr.String(), "RELEASED\n") {
		t.Errorf("cat never printed the file (its open(2) was not allowed):\n%s", out())
	}
}

// parentPid reads pid's parent from /proc/pid/status.
func parentPid(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PPid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("no PPid in /proc/%d/status", pid)
}

// procSyscall is /proc/pid/syscall: the blocked system call's number and
// arguments, "running", or -1 (proc(5)).
func procSyscall(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", pid))
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(b))
}

// inWrite reports whether a thread of pid is blocked in write(2) on fd.
func inWrite(pid, fd int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, task := range tasks {
		tid, err := strconv.Atoi(filepath.Base(task))
		if err != nil {
			continue
		}
		f := strings.Fields(procSyscall(tid))
		if len(f) >= 2 && f[0] == strconv.Itoa(unix.SYS_WRITE) && f[1] == fmt.Sprintf("%#x", fd) {
			return true
		}
	}
	return false
}
