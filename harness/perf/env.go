package perf

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Env describes the machine a result was measured on.
type Env struct {
	Kernel   string   `json:"kernel"`  // uname -r
	Version  string   `json:"version"` // uname -v
	Machine  string   `json:"machine"`
	CPUModel string   `json:"cpu_model"`
	NumCPU   int      `json:"nproc"`
	LoadAvg  string   `json:"loadavg"` // /proc/loadavg when the experiment started
	Go       string   `json:"go"`
	Time     string   `json:"time"`
	FSType   string   `json:"fs_type,omitempty"`
	FSDev    string   `json:"fs_dev,omitempty"` // major:minor of the filesystem under test
	Foreign  []string `json:"foreign_marks"`    // other processes' fsnotify marks on that filesystem
	Warnings []string `json:"warnings,omitempty"`
	// Clock is the clock the chunks were timed with (ReadClock).
	Clock *ClockInfo `json:"clock,omitempty"`
}

// Line renders the environment as one diagnostic line.
func (e *Env) Line() string {
	s := fmt.Sprintf("env: kernel %s, %s, %d cpus, load %s", e.Kernel, e.CPUModel, e.NumCPU, e.LoadAvg)
	if e.FSDev != "" {
		s += fmt.Sprintf(", fs %s %s", e.FSType, e.FSDev)
		if len(e.Foreign) == 0 {
			s += ", no foreign fsnotify marks on it"
		} else {
			s += fmt.Sprintf(", %d FOREIGN fsnotify marks on it (first: %s)", len(e.Foreign), e.Foreign[0])
		}
	}
	if e.Clock != nil {
		s += ", " + e.Clock.String()
	}
	for _, w := range e.Warnings {
		s += "; " + w
	}
	return s
}

// CollectEnv gathers the environment. fsPath, if not empty, names a file or directory
// on the filesystem under test: the marks that other processes hold on it are listed
// (they would add their cost to every condition). Failures to read a source are
// recorded as warnings, never fatal.
func CollectEnv(fsPath string) Env {
	e := Env{NumCPU: runtime.NumCPU(), Go: runtime.Version(), Time: time.Now().UTC().Format(time.RFC3339)}
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		e.Kernel = unix.ByteSliceToString(u.Release[:])
		e.Version = unix.ByteSliceToString(u.Version[:])
		e.Machine = unix.ByteSliceToString(u.Machine[:])
	} else {
		e.Warnings = append(e.Warnings, fmt.Sprintf("uname: %v", err))
	}
	e.CPUModel = cpuModel()
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			e.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	if fsPath != "" {
		var st unix.Stat_t
		if err := unix.Stat(fsPath, &st); err != nil {
			e.Warnings = append(e.Warnings, fmt.Sprintf("stat %s: %v", fsPath, err))
			return e
		}
		e.FSDev = fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
		var sf unix.Statfs_t
		if err := unix.Statfs(fsPath, &sf); err == nil {
			e.FSType = fsTypeName(sf.Type)
		}
		marks, err := ForeignMarks(st.Dev, os.Getpid())
		if err != nil {
			e.Warnings = append(e.Warnings, fmt.Sprintf("foreign marks: %v", err))
		}
		e.Foreign = marks
	}
	if e.Foreign == nil {
		e.Foreign = []string{}
	}
	return e
}

func fsTypeName(t int64) string {
	switch t {
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	}
	return fmt.Sprintf("0x%x", t)
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// ForeignMarks lists the inotify watches and fanotify marks that processes other
// than self hold on the filesystem with device dev (as from stat(2)), read from
// /proc/PID/fdinfo. fanotify mount marks are listed whatever their mount (fdinfo
// names the mount by id only). Processes that vanish while being read are ignored.
func ForeignMarks(dev uint64, self int) ([]string, error) {
	// fdinfo prints the kernel's internal dev_t: major << 20 | minor.
	kdev := strconv.FormatUint(uint64(unix.Major(dev))<<20|uint64(unix.Minor(dev)), 16)
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("read /proc: %w", err)
	}
	var out []string
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", p.Name(), "fdinfo")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			b, err := os.ReadFile(filepath.Join(dir, fd.Name()))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				if !strings.HasPrefix(line, "inotify ") && !strings.HasPrefix(line, "fanotify ") {
					continue
				}
				if strings.Contains(line, " sdev:"+kdev+" ") || strings.HasSuffix(line, " sdev:"+kdev) ||
					strings.HasPrefix(line, "fanotify mnt_id:") {
					out = append(out, fmt.Sprintf("pid %d (%s) fd %s: %s", pid, comm(pid), fd.Name(), line))
				}
			}
		}
	}
	return out, nil
}

func comm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
