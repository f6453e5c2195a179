package statedir

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// BusyError is a lock that another process held for longer than the wait:
// the machine (another program, another fsnsuite run) stopped the caller,
// not the kernel under test.
type BusyError struct {
	// Path is the lock file.
	Path string
	// Waited is how long the caller waited.
	Waited time.Duration
	// Holders are the processes holding it, from /proc/locks.
	Holders []Holder
}

// Holder is a process that holds a lock.
type Holder struct {
	Pid  int
	Comm string // "" when the process is gone (the lock lives on in a descriptor it passed on)
}

func (h Holder) String() string {
	if h.Comm == "" {
		return fmt.Sprintf("pid %d (exited; a descriptor it passed on holds the lock)", h.Pid)
	}
	return fmt.Sprintf("pid %d comm %s", h.Pid, h.Comm)
}

func (e *BusyError) Error() string {
	who := "a process not visible here (another pid namespace)"
	if len(e.Holders) > 0 {
		var s []string
		for _, h := range e.Holders {
			s = append(s, h.String())
		}
		who = strings.Join(s, ", ")
	}
	return fmt.Sprintf("lock %s held by %s for more than %v", e.Path, who, e.Waited)
}

// Holders lists the processes holding a lock on f's inode, from /proc/locks.
func Holders(f *os.File) []Holder {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil
	}
	var hs []Holder
	for _, pid := range LockPids(string(b), unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino) {
		hs = append(hs, Holder{Pid: pid, Comm: comm(pid)})
	}
	return hs
}

func comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// LockPids returns, in order and once each, the pids that hold (not wait
// for) a lock on the inode (major:minor:ino) in a /proc/locks text. Its
// lines are "ID: CLASS TYPE ACCESS PID MAJ:MIN:INO START END" with the
// device in hex (fs/locks.c lock_get_status); a waiter's line has "->"
// after the ID. A pid of 0 or -1 (an OFD lock) names no process.
func LockPids(locks string, major, minor uint32, ino uint64) []int {
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, ino)
	var pids []int
	seen := map[int]bool{}
	for _, l := range strings.Split(locks, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[1] == "->" {
			continue
		}
		for i := 2; i < len(f); i++ {
			if !sameInode(f[i], want) {
				continue
			}
			pid, err := strconv.Atoi(f[i-1])
			if err == nil && pid > 0 && !seen[pid] {
				seen[pid] = true
				pids = append(pids, pid)
			}
			break
		}
	}
	return pids
}

// sameInode compares "MAJ:MIN:INO" fields numerically (the kernel pads the
// hex numbers to two digits; a wider one is printed whole).
func sameInode(field, want string) bool {
	if field == want {
		return true
	}
	a, b := strings.Split(field, ":"), strings.Split(want, ":")
	if len(a) != 3 || len(b) != 3 {
		return false
	}
	for i := range a {
		base := 16
		if i == 2 {
			base = 10
		}
		x, err1 := strconv.ParseUint(a[i], base, 64)
		y, err2 := strconv.ParseUint(b[i], base, 64)
		if err1 != nil || err2 != nil || x != y {
			return false
		}
	}
	return true
}
