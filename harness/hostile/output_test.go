//go:build hostile

package hostile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The unwritable-output conditions (issue 22 item 2): a binary whose stdout
// write fails says so on stderr in one line and exits non-zero (1, or LTP's
// broken 2); the runner exits 2 and says exactly what is incomplete: its
// stream on stdout (/dev/full, or a reader that went away: fsnsuite | head),
// while the results directory is complete.

// runToFile runs a program with stdout on f (a file or a pipe's write end)
// for at most limit, and returns its exit status ("hang" past the limit) and
// stderr.
func (h *h) runToFile(limit time.Duration, f *os.File, name string, args ...string) (code int, stderr string, hung bool) {
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = h.env, h.tmp
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = f, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return -1, err.Error(), false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(limit):
		hung = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		code = -1
	}
	return code, errb.String(), hung
}

func outputConditions() []condition {
	return []condition{
		{name: "stdout_unwritable", run: func(h *h) []string {
			var p []string
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				return []string{"setup: " + err.Error()}
			}
			defer full.Close()
			// A binary.
			for _, tc := range []struct {
				args []string
				code int
			}{
				{[]string{"-run", "^create_in_dir.tmpfs$"}, 1},
				{[]string{"-run", "^create_in_dir.tmpfs$", "-exit", "ltp"}, 2},
				{[]string{"-list"}, 1},
			} {
				code, stderr, hung := h.runToFile(30*time.Second, full, h.binary("inotify_basic"), tc.args...)
				p = append(p, want(!hung, "hang: inotify_basic %v >/dev/full", tc.args)...)
				p = append(p, want(code == tc.code, "exit: inotify_basic %v >/dev/full: status %d, want %d", tc.args, code, tc.code)...)
				p = append(p, want(strings.Count(stderr, "\n") == 1 && strings.Contains(stderr, "on stdout is incomplete: write /dev/stdout: no space left on device"),
					"unclear: inotify_basic %v >/dev/full: stderr %q, want one line naming the error", tc.args, stderr)...)
			}
			// The runner, >/dev/full and | head -3.
			check := func(how string, code int, stderr string, hung bool, res, errno string) {
				p = append(p, want(!hung, "hang: fsnsuite %s", how)...)
				p = append(p, want(code == 2, "exit: fsnsuite %s: status %d, want 2", how, code)...)
				p = append(p, want(strings.Contains(stderr, "fsnsuite: the TAP stream on stdout is incomplete: ") && strings.Contains(stderr, errno) &&
					strings.Contains(stderr, "the results in "+res+" are complete") && !strings.Contains(stderr, "are incomplete"),
					"unclear: fsnsuite %s: the closing lines do not say that stdout (%s) is incomplete and %s complete: %q", how, errno, res, lastLines(stderr, 3))...)
				for _, f := range []string{"results.json", "junit.xml", "summary.txt", "results.tap"} {
					_, err := os.Stat(filepath.Join(res, f))
					p = append(p, want(err == nil, "exit: fsnsuite %s: %v", how, err)...)
				}
			}
			res := filepath.Join(h.tmp, "results-full")
			code, stderr, hung := h.runToFile(60*time.Second, full, h.binary("fsnsuite"), "-run", "^inotify_basic$", "-results", res)
			check(">/dev/full", code, stderr, hung, res, "no space left on device")

			pr, pw, err := os.Pipe()
			if err != nil {
				return append(p, "setup: "+err.Error())
			}
			head := make(chan struct{})
			go func() { // head -3
				defer close(head)
				sc := bufio.NewScanner(pr)
				for i := 0; i < 3 && sc.Scan(); i++ {
				}
				pr.Close()
			}()
			res = filepath.Join(h.tmp, "results-head")
			code, stderr, hung = h.runToFile(60*time.Second, pw, h.binary("fsnsuite"), "-run", "^inotify_basic$", "-results", res)
			pw.Close()
			<-head
			check("| head -3", code, stderr, hung, res, "broken pipe")
			return p
		}},
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// badResultsConditions: fsnsuite export and report refuse a results.json
// that is not a results document (issue 22 item 3): exit 2, one line naming
// the file and what is wrong, no output.
func badResultsConditions() []condition {
	return []condition{{name: "bad_results_json", run: func(h *h) []string {
		var p []string
		run := `{"suite":"fsnsuite","kernel":"6.1.0","arch":"x86_64","host":"h","start":"2026-01-02T03:04:05Z","seconds":1}`
		for i, doc := range []string{`null`, `{}`, `{"binaries":5}`, `[]`, `{"version":"TAP version 13","plan":3,"children":[{"name":"a","status":"pass"}]}`} {
			dir := filepath.Join(h.tmp, fmt.Sprintf("r%d", i))
			os.Mkdir(dir, 0o755)
			if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(doc), 0o644); err != nil {
				return []string{"setup: " + err.Error()}
			}
			if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(run), 0o644); err != nil {
				return []string{"setup: " + err.Error()}
			}
			html := filepath.Join(h.tmp, fmt.Sprintf("r%d.html", i))
			for _, args := range [][]string{{"export", "-kcidb", dir}, {"report", dir, "-o", html}} {
				r := h.run(30*time.Second, nil, h.binary("fsnsuite"), args...)
				p = append(p, want(!r.hung && r.code == 2, "exit: fsnsuite %s of results.json %s: status %d, want 2", args[0], doc, r.code)...)
				p = append(p, want(r.stdout == "", "false pass: fsnsuite %s of results.json %s wrote %d bytes", args[0], doc, len(r.stdout))...)
				p = append(p, want(strings.Count(r.stderr, "\n") == 1 && strings.Contains(r.stderr, filepath.Join(dir, "results.json")+": not a results document: "),
					"unclear: fsnsuite %s of results.json %s: stderr %q, want one line naming the file and what is wrong", args[0], doc, r.stderr)...)
			}
			_, err := os.Stat(html)
			p = append(p, want(err != nil, "false pass: fsnsuite report of results.json %s wrote %s", doc, html)...)
		}
		return p
	}}}
}
