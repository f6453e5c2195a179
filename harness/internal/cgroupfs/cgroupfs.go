// Package cgroupfs finds a process's cgroup directory as mounted in this
// mount namespace, in the cgroup v2 hierarchy or in a cgroup v1 hierarchy
// by controller, for the harness's reading of pids, memory and freezer
// files (harness/internal/oom, harness/internal/procfail, the supervisor).
package cgroupfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// V2 names the cgroup v2 hierarchy in Dir's controller argument.
const V2 = ""

// Dir returns the directory of pid's cgroup (pid 0: this process) in the
// cgroup v1 hierarchy that has controller, or in the cgroup v2 hierarchy
// for V2, and that hierarchy's mount point here. ok is false when pid is
// gone, is in no such hierarchy, or the hierarchy is not mounted here (or
// its mount does not show pid's cgroup).
//
// /proc/PID/cgroup (cgroups(7)): "hierarchy-ID:controller-list:cgroup-path",
// "0::path" for v2. The path is relative to the hierarchy's root, and a
// mount shows the hierarchy from the root field of its mountinfo line
// (proc(5)), so the directory is the mount point plus the path less that
// root.
func Dir(pid int, controller string) (dir, mnt string, ok bool) {
	proc := "self"
	if pid != 0 {
		proc = fmt.Sprint(pid)
	}
	b, err := os.ReadFile("/proc/" + proc + "/cgroup")
	if err != nil {
		return "", "", false
	}
	path, found := "", false
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		if (controller == V2 && f[0] == "0" && f[1] == "") ||
			(controller != V2 && f[0] != "0" && hasWord(f[1], controller)) {
			path, found = f[2], true
			break
		}
	}
	if !found {
		return "", "", false
	}
	root, mnt := mount(controller)
	if mnt == "" {
		return "", "", false
	}
	rel, ok := strings.CutPrefix(path, root)
	if !ok {
		return "", "", false
	}
	return filepath.Join(mnt, rel), mnt, true
}

// Mount is one mount of a cgroup hierarchy: the hierarchy path its root
// shows and its mount point (mountinfo fields 4 and 5).
type Mount struct{ Root, Dir string }

// Mounts lists the mounts of the cgroup v1 hierarchy with controller (of
// cgroup v2 for V2) in this mount namespace, in mountinfo order (proc(5):
// after " - " the filesystem type and, for cgroup v1, the controllers among
// the super options).
func Mounts(controller string) []Mount {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []Mount
	for _, l := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		if !ok {
			continue
		}
		pf, sf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(sf) < 3 {
			continue
		}
		if (controller == V2 && sf[0] == "cgroup2") ||
			(controller != V2 && sf[0] == "cgroup" && hasWord(sf[2], controller)) {
			out = append(out, Mount{Root: pf[3], Dir: pf[4]})
		}
	}
	return out
}

// RootMount is the first mount of the hierarchy that shows its root ("/"),
// where a new cgroup can be made beside everything else; "" when none.
func RootMount(controller string) string {
	for _, m := range Mounts(controller) {
		if m.Root == "/" {
			return m.Dir
		}
	}
	return ""
}

// mount is the first mount of the hierarchy (Mounts).
func mount(controller string) (root, mnt string) {
	if ms := Mounts(controller); len(ms) > 0 {
		return ms[0].Root, ms[0].Dir
	}
	return "", ""
}

// hasWord reports whether the comma-separated list holds w.
func hasWord(list, w string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == w {
			return true
		}
	}
	return false
}
