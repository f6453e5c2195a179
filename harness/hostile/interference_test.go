//go:build hostile

package hostile

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/tap"
)

// interferenceConditions: another program walks the explorer's files while
// it runs. The explorer compares every event of its scenarios with its
// model; another program's events are no kernel bug, so the verdict must be
// a pass or a skip "undecided" naming that program (pid and comm), never a
// failure and never a hang (the walker's opens wait on the scenarios'
// permission groups between their steps).
func interferenceConditions(walker string) []condition {
	return []condition{{name: "other_program_walks_the_tree", run: func(h *h) []string {
		var p []string
		walkerPid := 0
		var walkerErr bytes.Buffer
		r, probs := h.runDuring(100*time.Second, nil, func(root int) []string {
			cp := 0
			for end := time.Now().Add(20 * time.Second); cp == 0 && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				tab := procTable()
				for pid, pr := range tab {
					if pr.role == "cases" && pr.state != 'Z' && below(tab, pid, root) {
						cp = pid
					}
				}
			}
			if cp == 0 {
				return []string{fmt.Sprintf("setup: no case process below pid %d within 20s", root)}
			}
			// The case process's workspace, through its root: the
			// walker's opens reach the same files from another mount
			// namespace.
			cmd := exec.Command(walker, "-for", "15s", fmt.Sprintf("/proc/%d/root/tmp/fsnsuite", cp))
			cmd.Stderr = &walkerErr
			if err := cmd.Start(); err != nil {
				return []string{"setup: walker: " + err.Error()}
			}
			walkerPid = cmd.Process.Pid
			cmd.Wait()
			return nil
		}, h.binary("fsnotify_explore"), "-run", `^scenarios\.tmpfs$`, "-timeout", "80s")
		p = append(p, probs...)
		p = append(p, audit(r)...)
		if walkerPid == 0 {
			return p
		}
		read := strings.TrimSpace(walkerErr.String())
		p = append(p, want(strings.HasPrefix(read, "walker: read ") && read != "walker: read 0 files", "setup: the walker read nothing (%q): no interference to judge", read)...)
		st := tap.ParseString(r.stdout)
		var got *tap.Node
		st.Walk(func(_ []string, l *tap.Node) {
			if l.Name == "scenarios.tmpfs" {
				got = l
			}
		})
		if got == nil {
			return append(p, "exit: no scenarios.tmpfs result in the stream")
		}
		named := fmt.Sprintf("pid %d comm walker", walkerPid)
		p = append(p, want(!got.Status.Failed(), "false fail: scenarios.tmpfs %s %q beside another program's walk (walker pid %d)\n%s", got.Status, got.Reason, walkerPid, strings.Join(got.Diagnostics, "\n"))...)
		if got.Status == tap.StatusSkip {
			p = append(p, want(strings.Contains(got.Reason, "undecided") && strings.Contains(got.Reason, named), "unclear: the skip does not name the walker (%s): %q", named, got.Reason)...)
		}
		h.t.Logf("other_program_walks_the_tree: scenarios.tmpfs %s %q; %s; %.1fs", got.Status, got.Reason, read, r.elapsed.Seconds())
		return p
	}}}
}
