//go:build hostile

package hostile

import (
	"fmt"
	"github.com/fsnsuite/fsnsuite/harness/internal/cgroupfs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The resource conditions (issue 22 items 5 and 6): a pids limit that
// refuses actors is named by every case it fails, and under memory pressure
// the OOM killer would take the case process before its binary and the
// binary before the runner.

// pidsConditions: a case whose actor cannot start says why (issue 22 item
// 5: under pids.max 40, four cases failed with only "actor hello: EOF", the
// cause "failed to create new OS thread (errno=11)" only on stderr).
func pidsConditions() []condition {
	return []condition{{name: "pids_limit", run: func(h *h) []string {
		dir, undo, err := pidsCgroup()
		if err != nil {
			return []string{"setup: " + err.Error()}
		}
		p := pidsTrial(h, dir)
		return append(p, undo()...)
	}}}
}

// pidsTrial runs fanotify_perm's open_perm_allow_inode cases in the pids
// cgroup dir under pids.max 16: the supervisor and the case process start
// (8 or 9 threads each, measured), but an actor, mkfs or the case process's
// next thread is refused. Every case that fails must name the limit, in its
// own diagnostics or in the binary's line saying the case process died.
func pidsTrial(h *h, dir string) []string {
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte("16"), 0); err != nil {
		return []string{"setup: " + err.Error()}
	}
	r := h.run(60*time.Second, nil, "/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir, h.binary("fanotify_perm"), "-run", "^open_perm_allow_inode")
	p := want(!r.hung, "hang: fanotify_perm under pids.max 16")
	named := func(s string) bool { return strings.Contains(s, "pids.max 16") }
	binaryLevel := false
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "# fanotify_perm: the case process ended") && named(l) {
			binaryLevel = true
		}
	}
	failed := 0
	for _, c := range cases(r) {
		if !c.Status.Failed() {
			continue
		}
		failed++
		d := strings.Join(c.Diagnostics, "\n")
		p = append(p, want(named(d) || binaryLevel,
			"unclear: %s failed under pids.max 16 without naming the pids limit: %q", c.Name, lastLines(d, 2))...)
	}
	return append(p, want(failed > 0, "setup: pids.max 16 refused nothing (exit %d)", r.code)...)
}

// pidsCgroup makes a cgroup of the pids controller (cgroup v1 "pids", or
// cgroup v2 where the root delegates pids) and returns it with its undo:
// wait for it to empty, then remove it.
func pidsCgroup() (string, func() []string, error) {
	base := cgroupfs.RootMount("pids")
	if v2 := cgroupfs.RootMount(cgroupfs.V2); base == "" && v2 != "" {
		if c, err := os.ReadFile(filepath.Join(v2, "cgroup.subtree_control")); err == nil && strings.Contains(" "+string(c), " pids") {
			base = v2
		}
	}
	if base == "" {
		return "", nil, fmt.Errorf("no pids controller mounted (cgroup v1 pids, or cgroup v2 delegating pids)")
	}
	dir := filepath.Join(base, fmt.Sprintf("fsnsuite-hostile-pids-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", nil, err
	}
	return dir, func() []string {
		for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			err := os.Remove(dir)
			if err == nil {
				return nil
			}
			if time.Now().After(end) {
				return []string{fmt.Sprintf("leftover: cgroup %s: %v", dir, err)}
			}
		}
	}, nil
}

// memoryConditions: under memory pressure the runner is the last to go
// (issue 22 item 6): oom_score_adj runner < binary < case process = its
// actors, and the case process's tmpfs mounts are bounded. (The OOM kill
// itself is not provoked: the only memory cgroup here belongs to the
// machine's own machinery; runner.TestOOMKilledBinaryNamed stands in for
// the kernel's counter.)
func memoryConditions() []condition {
	return []condition{{name: "oom_order_and_tmpfs_bounds", run: func(h *h) []string {
		var got string
		r, probs := h.runDuring(60*time.Second, nil, func(runner int) []string {
			var cp, ap int
			for end := time.Now().Add(20 * time.Second); cp == 0 && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				cp, ap = caseWithActor(runner)
			}
			if cp == 0 {
				return []string{"setup: no case process with an actor below the runner within 20s"}
			}
			sup := procTable()[cp].ppid
			adj := func(pid int) int {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid))
				v, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				return v
			}
			ar, as, ac, aa := adj(runner), adj(sup), adj(cp), adj(ap)
			got = fmt.Sprintf("runner %d, binary %d, case process %d, actor %d", ar, as, ac, aa)
			p := want(ar < as && as < ac && ac <= aa, "exit: oom_score_adj not ordered runner < binary < case process <= actor: %s", got)
			mi, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", cp))
			if err != nil {
				return append(p, "setup: "+err.Error())
			}
			for _, l := range strings.Split(string(mi), "\n") {
				pre, post, ok := strings.Cut(l, " - ")
				if !ok || !strings.HasPrefix(post, "tmpfs fsnsuite") {
					continue
				}
				sf := strings.Fields(post)
				if len(sf) < 3 || !strings.Contains(","+sf[2]+",", ",size=") {
					p = append(p, fmt.Sprintf("exit: tmpfs %s on %s has no size bound (%s)", sf[1], strings.Fields(pre)[4], sf[2]))
				}
			}
			return p
		}, h.binary("fsnsuite"), "-run", "^fanotify_perm$", "-case", "^open_perm_allow_inode", "-results", filepath.Join(h.tmp, "results"))
		h.t.Logf("oom_score_adj: %s", got)
		return append(probs, want(!r.hung && r.code == 0, "exit: status %d%s", r.code, failedNames(r))...)
	}}}
}
