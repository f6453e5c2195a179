// Package ownproc tells the suite's own processes (the test binary, its case
// process, the actors and helpers they start) from other programs' (an
// indexer, an antivirus, another CI job), so that a difference caused by
// another program's events can be named instead of read as a kernel bug.
package ownproc

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	mu      sync.Mutex
	root    = os.Getpid()
	started = map[int]bool{}
)

// SetRoot names the process whose descendants are the suite's own: the
// supervisor (the test binary) for a case process; by default this process.
func SetRoot(pid int) {
	mu.Lock()
	defer mu.Unlock()
	root = pid
}

// Started records a process the suite started (an actor, a helper), so that
// it counts as the suite's own even after it has exited.
func Started(pid int) {
	mu.Lock()
	defer mu.Unlock()
	started[pid] = true
}

// Process is another program's process, as an event's pid named it.
type Process struct {
	Pid  int
	Comm string // /proc/PID/comm; "" when Gone
	Gone bool   // it had exited when it was looked up
}

// String renders p the way reports name it: "pid 4123 comm updatedb" or
// "pid 4123 gone" (it exited before it could be named).
func (p Process) String() string {
	if p.Gone {
		return fmt.Sprintf("pid %d gone", p.Pid)
	}
	return fmt.Sprintf("pid %d comm %s", p.Pid, p.Comm)
}

// Own reports whether pid (a process or thread id in this pid namespace) is
// the suite's: this process, the root, a process Started recorded, or a
// descendant of any of them.
func Own(pid int) bool {
	_, foreign := Foreign(int32(pid))
	return !foreign
}

// Foreign reports whether an event's pid field belongs to another program,
// and names it. The pid may be a thread id (FAN_REPORT_TID): its thread
// group is looked up. It is never foreign when it cannot be told: 0 (the
// process is outside the listener's pid namespace: fanotify(7) "pid ... 0 if
// ... not in the pid namespace") or a negative value. A pid that no longer
// exists and that the suite did not start is foreign and Gone (the suite's
// own short-lived helpers are Started); its thread group cannot be checked.
// An exited pid that Foreign found running outside the suite in the last
// seenFor is named as that process, not Gone.
func Foreign(pid int32) (Process, bool) {
	if pid <= 0 {
		return Process{}, false
	}
	mu.Lock()
	r := root
	own := func(p int) bool { return p == r || p == os.Getpid() || started[p] }
	defer mu.Unlock()
	p := int(pid)
	if own(p) {
		return Process{}, false
	}
	tgid, _, err := status(p)
	if err != nil {
		return goneOrSeen(p), true
	}
	for q, n := tgid, 0; q > 1 && n < 128; n++ {
		if own(q) {
			return Process{}, false
		}
		_, pp, err := status(q)
		if err != nil {
			break
		}
		q = pp
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p))
	if err != nil {
		return goneOrSeen(p), true
	}
	proc := Process{Pid: p, Comm: strings.TrimSpace(string(comm))}
	seenAlive[p] = sighting{proc, time.Now()}
	return proc, true
}

// seenFor is how long a process Foreign named running still names a pid
// that has exited since: an event queued just before another program
// exited is that program's (pids are handed out in order, so one is not
// reused within seconds).
const seenFor = 5 * time.Second

// sighting is a running process outside the suite and when Foreign saw it.
type sighting struct {
	p  Process
	at time.Time
}

// seenAlive holds, by pid, the processes outside the suite that Foreign
// found running (guarded by mu).
var seenAlive = map[int]sighting{}

// goneOrSeen names pid, which no longer exists: as the running process
// Foreign saw with it within seenFor, else Gone.
func goneOrSeen(pid int) Process {
	if s, ok := seenAlive[pid]; ok && time.Since(s.at) < seenFor {
		return s.p
	}
	return Process{Pid: pid, Gone: true}
}

// status returns the Tgid and PPid lines of /proc/PID/status (a thread id
// works too: /proc/TID exists though readdir does not list it).
func status(pid int) (tgid, ppid int, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("ownproc: %w", err)
	}
	defer f.Close()
	tgid, ppid = -1, -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch k {
		case "Tgid":
			tgid, _ = strconv.Atoi(strings.TrimSpace(v))
		case "PPid":
			ppid, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("ownproc: reading /proc/%d/status: %w", pid, err)
	}
	if tgid < 0 || ppid < 0 {
		return 0, 0, fmt.Errorf("ownproc: /proc/%d/status: no Tgid or PPid line", pid)
	}
	return tgid, ppid, nil
}
