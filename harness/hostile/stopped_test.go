//go:build hostile

package hostile

import (
	"bytes"
	"fmt"
	"github.com/fsnsuite/fsnsuite/harness/internal/cgroupfs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/tap"
)

// The stopped-case conditions (issue 22 item 1): a case process that is
// SIGSTOPped or frozen by a cgroup freezer in the middle of a case cannot
// time itself out; its supervisor must kill it past the case's deadline,
// report that one case TIMEOUT saying what the process was doing, and run
// the rest in a fresh process, standalone and under the runner.

// stopArgs are the binary and cases the conditions stop: 16 short cases,
// each with an actor, so "mid-case" can be seen from outside.
var stopArgs = []string{"-timeout", "2s", "-run", "^open_perm_"}

const stopCases = 16

// proc is one line of the process table the conditions read.
type proc struct {
	ppid  int
	state byte
	role  string // FSNSUITE_ROLE without its state: "cases", "actor", ""
}

func procTable() map[int]proc {
	m := map[int]proc{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			continue
		}
		f := strings.Fields(string(b[i+2:]))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		p := proc{ppid: ppid, state: f[0][0]}
		if env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid)); err == nil {
			for _, kv := range strings.Split(string(env), "\x00") {
				if v, ok := strings.CutPrefix(kv, "FSNSUITE_ROLE="); ok {
					p.role, _, _ = strings.Cut(v, ":")
				}
			}
		}
		m[pid] = p
	}
	return m
}

func below(tab map[int]proc, pid, root int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		if pid == root {
			return true
		}
		pid = tab[pid].ppid
	}
	return false
}

// caseWithActor finds, below root, a case process with a live actor child:
// a case is running in it (an actor is reaped by its case's cleanup, before
// the case's result).
func caseWithActor(root int) (casePid, actorPid int) {
	tab := procTable()
	for pid, p := range tab {
		if p.role != "actor" || p.state == 'Z' {
			continue
		}
		if c := tab[p.ppid]; c.role == "cases" && below(tab, p.ppid, root) {
			return p.ppid, pid
		}
	}
	return 0, 0
}

// haltMidCase waits (up to 20 s) for a case process below root to be in a
// case, halts it with halt, and checks that it was: halted, and its actor
// still there (so its case had not ended). A halt that came between cases is
// undone with resume and tried again. It returns the halted case process.
func haltMidCase(root int, halt func(pid int) error, halted func(pid int) bool, resume func(pid int)) (int, error) {
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		cp, ap := caseWithActor(root)
		if cp == 0 {
			continue
		}
		if err := halt(cp); err != nil {
			return 0, err
		}
		for w := time.Now().Add(2 * time.Second); !halted(cp) && time.Now().Before(w); {
			time.Sleep(time.Millisecond)
		}
		if !halted(cp) {
			resume(cp)
			return 0, fmt.Errorf("case process %d did not halt within 2s", cp)
		}
		if p, ok := procTable()[ap]; ok && p.ppid == cp && p.state != 'Z' {
			return cp, nil
		}
		resume(cp) // between two cases after all: again
	}
	return 0, fmt.Errorf("no case process with an actor below pid %d within 20s", root)
}

func stateOf(pid int) byte { return procTable()[pid].state }

func sigstop(pid int) error  { return syscall.Kill(pid, syscall.SIGSTOP) }
func isStopped(pid int) bool { return stateOf(pid) == 'T' }
func sigcont(pid int)        { syscall.Kill(pid, syscall.SIGCONT) }

// lostOne checks a stream of stopCases cases of which exactly one is the
// TIMEOUT the halt cost, with a diagnostic saying what (say) the process was.
func lostOne(r result, say string) []string {
	var p []string
	cs := cases(r)
	p = append(p, want(len(cs) == stopCases, "exit/stream: %d cases reported, want %d", len(cs), stopCases)...)
	var lost []*tap.Node
	for _, c := range cs {
		if c.Status != tap.StatusPass {
			lost = append(lost, c)
		}
	}
	if len(lost) != 1 {
		var names []string
		for _, c := range lost {
			names = append(names, c.Name+" "+c.Status.String())
		}
		return append(p, fmt.Sprintf("exit: the halted case process cost %d cases, want 1: %v", len(lost), names))
	}
	c := lost[0]
	diag := strings.Join(c.Diagnostics, "\n")
	p = append(p, want(c.Status == tap.StatusTimeout && c.Reason == "2 seconds", "exit: %s: %s %q, want TIMEOUT 2 seconds", c.Name, c.Status, c.Reason)...)
	return append(p, want(strings.Contains(diag, c.Name+": no result ") && strings.Contains(diag, say) && strings.Contains(diag, "the supervisor killed it"),
		"unclear: %s's diagnostics do not say it was %q and killed: %q", c.Name, say, diag)...)
}

func stoppedConditions() []condition {
	return []condition{
		{name: "case_process_stopped", run: func(h *h) []string {
			var p []string
			// Standalone.
			var cp int
			r, probs := h.runDuring(40*time.Second, nil, func(pid int) []string {
				var err error
				if cp, err = haltMidCase(pid, sigstop, isStopped, sigcont); err != nil {
					return []string{"setup: " + err.Error()}
				}
				return nil
			}, h.binary("fanotify_perm"), stopArgs...)
			if cp != 0 {
				sigcont(cp) // for the old code's leftover, killed with its binary
			}
			p = append(p, probs...)
			p = append(p, audit(r)...)
			p = append(p, lostOne(r, "case process stopped (state T)")...)
			// Two seconds of deadline, five of grace, and the cases.
			p = append(p, want(r.hung || r.elapsed < 30*time.Second, "hang: standalone run with a stopped case process took %.1fs", r.elapsed.Seconds())...)
			standalone := r.elapsed

			// Under the runner: its binary timeout (30 s) must not be what
			// ends the stopped process.
			res := filepath.Join(h.tmp, "results")
			cp = 0
			r, probs = h.runDuring(60*time.Second, nil, func(pid int) []string {
				var err error
				if cp, err = haltMidCase(pid, sigstop, isStopped, sigcont); err != nil {
					return []string{"setup: " + err.Error()}
				}
				return nil
			}, h.binary("fsnsuite"), "-run", "^fanotify_perm$", "-case", stopArgs[3], "-case-timeout", stopArgs[1], "-timeout", "30s", "-results", res)
			if cp != 0 {
				sigcont(cp)
			}
			p = append(p, probs...)
			p = append(p, want(!r.hung && r.code == 1, "exit: runner with a stopped case process: status %d, want 1", r.code)...)
			b, err := os.ReadFile(filepath.Join(res, "results.json"))
			p = append(p, want(err == nil, "exit: no results.json: %v", err)...)
			if err == nil {
				st := tap.ParseString(r.stdout)
				counts := map[tap.Status]int{}
				notRun := 0
				st.Walk(func(_ []string, l *tap.Node) {
					counts[l.Status]++
					if strings.HasPrefix(l.Reason, "not run") {
						notRun++
					}
				})
				p = append(p, want(counts[tap.StatusPass] == stopCases-1 && counts[tap.StatusTimeout] == 1 && notRun == 0,
					"exit: under the runner the stopped case process cost more than one case: %d pass, %d timeout, %d not run (of %d)", counts[tap.StatusPass], counts[tap.StatusTimeout], notRun, stopCases)...)
				p = append(p, want(strings.Contains(string(b), "case process stopped (state T)"), "unclear: results.json does not say the case process was stopped")...)
			}
			p = append(p, want(r.hung || r.elapsed < 30*time.Second, "hang: runner with a stopped case process took %.1fs", r.elapsed.Seconds())...)
			h.t.Logf("case_process_stopped: standalone %.1fs, under the runner %.1fs", standalone.Seconds(), r.elapsed.Seconds())
			return p
		}},
		{name: "case_process_frozen", run: func(h *h) []string {
			var p []string
			ran := 0
			for _, fz := range freezers() {
				ran++
				r, probs := h.runDuring(40*time.Second, nil, func(pid int) []string {
					if _, err := haltMidCase(pid, fz.freeze, fz.frozen, fz.thawOne); err != nil {
						return []string{"setup: " + fz.name + ": " + err.Error()}
					}
					return nil
				}, h.binary("fanotify_perm"), stopArgs...)
				p = append(p, fz.cleanup()...)
				p = append(p, probs...)
				p = append(p, audit(r)...)
				for _, q := range lostOne(r, "case process frozen by the "+fz.name) {
					p = append(p, fz.name+": "+q)
				}
				p = append(p, want(r.hung || r.elapsed < 30*time.Second, "hang: %s: a frozen case process: the run took %.1fs", fz.name, r.elapsed.Seconds())...)
			}
			return append(p, want(ran > 0, "setup: no cgroup freezer (v1 or v2) to freeze a case process with")...)
		}},
	}
}

// freezer is a cgroup of one freezer hierarchy, made for one trial.
type freezer struct {
	name    string // "cgroup v2 freezer"
	dir     string
	freeze  func(pid int) error
	frozen  func(pid int) bool
	thawOne func(pid int)
}

func (f *freezer) thaw() {
	if strings.Contains(f.name, "v2") {
		os.WriteFile(filepath.Join(f.dir, "cgroup.freeze"), []byte("0"), 0)
	} else {
		os.WriteFile(filepath.Join(f.dir, "freezer.state"), []byte("THAWED"), 0)
	}
}

// cleanup thaws the cgroup (the old code leaves the case process in it,
// killed with its binary and dying when thawed) and removes it once empty.
func (f *freezer) cleanup() []string {
	f.thaw()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := os.Remove(f.dir)
		if err == nil || os.IsNotExist(err) {
			return nil
		}
		if time.Now().After(end) {
			b, _ := os.ReadFile(filepath.Join(f.dir, "cgroup.procs"))
			return []string{fmt.Sprintf("leftover: cgroup %s (processes %q): %v", f.dir, strings.Fields(string(b)), err)}
		}
	}
}

// freezers are the freezer hierarchies mounted here: cgroup v2 (any
// cgroup2 mount: cgroup.freeze is core) and the cgroup v1 freezer.
func freezers() []*freezer {
	var out []*freezer
	v1, v2 := cgroupfs.RootMount("freezer"), cgroupfs.RootMount(cgroupfs.V2)
	name := fmt.Sprintf("fsnsuite-hostile-%d", os.Getpid())
	if v2 != "" {
		d := filepath.Join(v2, name)
		if os.Mkdir(d, 0o755) == nil {
			f := &freezer{name: "cgroup v2 freezer", dir: d}
			f.freeze = func(pid int) error {
				if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
					return fmt.Errorf("move %d into %s: %w", pid, d, err)
				}
				return os.WriteFile(filepath.Join(d, "cgroup.freeze"), []byte("1"), 0)
			}
			f.frozen = func(int) bool {
				b, _ := os.ReadFile(filepath.Join(d, "cgroup.events"))
				return strings.Contains(string(b), "frozen 1")
			}
			f.thawOne = func(pid int) {
				f.thaw()
				os.WriteFile(filepath.Join(v2, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
			}
			out = append(out, f)
		}
	}
	if v1 != "" {
		d := filepath.Join(v1, name)
		if os.Mkdir(d, 0o755) == nil {
			f := &freezer{name: "cgroup v1 freezer", dir: d}
			f.freeze = func(pid int) error {
				if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
					return fmt.Errorf("move %d into %s: %w", pid, d, err)
				}
				return os.WriteFile(filepath.Join(d, "freezer.state"), []byte("FROZEN"), 0)
			}
			f.frozen = func(int) bool {
				b, _ := os.ReadFile(filepath.Join(d, "freezer.state"))
				return strings.TrimSpace(string(b)) == "FROZEN"
			}
			f.thawOne = func(pid int) {
				f.thaw()
				os.WriteFile(filepath.Join(v1, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
			}
			out = append(out, f)
		}
	}
	return out
}
