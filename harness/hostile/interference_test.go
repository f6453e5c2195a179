//go:build hostile

package hostile

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
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
	return []condition{
		{name: "other_program_walks_the_tree", run: func(h *h) []string {
			return walkedRun(h, walker, false, h.binary("fsnotify_explore"), "-run", `^scenarios\.tmpfs$`, "-timeout", "80s")
		}},
		// fsnotify_parent compares inotify events (no pid) and
		// fanotify events: the inotify differences are named by a
		// filesystem mark's watch after them (harness.T.OthersOnFS).
		{name: "other_program_walks_parent_cases", run: func(h *h) []string {
			return walkedRun(h, walker, true, h.binary("fsnotify_parent"), "-timeout", "80s")
		}},
	}
}

// walkedRun runs a binary while the walker walks its case process's
// workspace for 15 s, and checks that no case fails, that every undecided
// skip names the walker and, with needPass, that some case still passed
// (not everything was put down to the walker).
func walkedRun(h *h, walker string, needPass bool, bin string, args ...string) []string {
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
		// The case process's workspace, through its root: the walker's
		// opens reach the same files from another mount namespace.
		cmd := exec.Command(walker, "-for", "15s", fmt.Sprintf("/proc/%d/root/tmp/fsnsuite", cp))
		cmd.Stderr = &walkerErr
		if err := cmd.Start(); err != nil {
			return []string{"setup: walker: " + err.Error()}
		}
		walkerPid = cmd.Process.Pid
		cmd.Wait()
		return nil
	}, bin, args...)
	p = append(p, probs...)
	p = append(p, audit(r)...)
	if walkerPid == 0 {
		return p
	}
	read := strings.TrimSpace(walkerErr.String())
	p = append(p, want(strings.HasPrefix(read, "walker: read ") && read != "walker: read 0 files", "setup: the walker read nothing (%q): no interference to judge", read)...)
	named := fmt.Sprintf("pid %d comm walker", walkerPid)
	counts := map[tap.Status]int{}
	undecided, failed := 0, 0
	tap.ParseString(r.stdout).Walk(func(_ []string, l *tap.Node) {
		counts[l.Status]++
		if l.Status.Failed() {
			failed++
		}
		first := ""
		if len(l.Diagnostics) > 0 {
			first = ": " + l.Diagnostics[0]
		}
		p = append(p, want(!l.Status.Failed(), "false fail: %s beside another program's walk (walker pid %d)%s", l.Name, walkerPid, first)...)
		if l.Status == tap.StatusSkip && strings.Contains(l.Reason, "undecided") {
			undecided++
			p = append(p, want(strings.Contains(l.Reason, named), "unclear: %s's skip does not name the walker (%s): %q", l.Name, named, l.Reason)...)
		}
	})
	p = append(p, want(!needPass || counts[tap.StatusPass] > 0, "false skip: no case of %s passed beside the walker: everything undecided?", filepath.Base(bin))...)
	h.t.Logf("%s beside the walker: %d pass, %d undecided, %d other skips, %d fail; %s; %.1fs", filepath.Base(bin), counts[tap.StatusPass], undecided, counts[tap.StatusSkip]-undecided, failed, read, r.elapsed.Seconds())
	return p
}
