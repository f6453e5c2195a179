// Package memcg makes a private memory cgroup and reads how much kernel
// memory is charged to it, so a case can tell whether the kernel objects a
// process made were freed: the kernel charges an allocation made with
// __GFP_ACCOUNT (GFP_KERNEL_ACCOUNT, a SLAB_ACCOUNT cache) to the memory
// cgroup of the task that allocates it, or to the one set_active_memcg
// names, and uncharges it when it is freed (mm/memcontrol.c). Other programs'
// allocations go to their own cgroups, so a cgroup nobody else uses counts
// only what its own members left behind, whatever else runs on the machine.
//
// Both hierarchies work: cgroup v1's memory controller (the counter is
// memory.kmem.usage_in_bytes), else cgroup v2 (the "slab" line of
// memory.stat: the objects of kmalloc and of kmem caches). Where no
// hierarchy with the memory controller is mounted (a minimal VM guest),
// Open mounts cgroup2 on a directory given by the caller.
package memcg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/internal/cgroupfs"
)

// ErrNoMemcg is wrapped by Open's error when the kernel offers no memory
// controller here (a reason for a skip).
var ErrNoMemcg = errors.New("no memory cgroup controller")

// Group is a memory cgroup made by Open; Remove deletes it.
type Group struct {
	// Dir is its directory; V1 says which hierarchy holds it.
	Dir string
	V1  bool
	// undo restores what Open changed besides making Dir (a cgroup2 mount,
	// the memory controller enabled in the root's subtree_control).
	undo []func()
}

// Open makes a new memory cgroup named name: in cgroup v1 below this
// process's own memory cgroup, in cgroup v2 at the hierarchy's root (a
// cgroup with processes cannot pass controllers on to children, the root
// is exempt: cgroups(7) "no internal processes" rule). mountDir is where
// cgroup2 is mounted when no hierarchy with the memory controller is.
func Open(name, mountDir string) (*Group, error) {
	if own, _, ok := cgroupfs.Dir(0, "memory"); ok {
		SweepStale(own)
		g := &Group{Dir: filepath.Join(own, name), V1: true}
		if err := os.Mkdir(g.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("memcg: %w", err)
		}
		return g, nil
	}
	g := &Group{}
	root := cgroupfs.RootMount(cgroupfs.V2)
	if root == "" {
		if err := unix.Mount("none", mountDir, "cgroup2", 0, ""); err != nil {
			return nil, fmt.Errorf("memcg: no cgroup hierarchy with the memory controller is mounted, and mount -t cgroup2 %s: %w (%w)", mountDir, err, ErrNoMemcg)
		}
		root = mountDir
		g.undo = append(g.undo, func() { _ = unix.Unmount(mountDir, unix.MNT_DETACH) })
	}
	fail := func(err error) (*Group, error) { g.Remove(); return nil, err }
	ctl, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	if err != nil {
		return fail(fmt.Errorf("memcg: %w", err))
	}
	if !hasWord(string(ctl), "memory") {
		return fail(fmt.Errorf("memcg: the cgroup2 root %s has no memory controller (controllers %q: a kernel without CONFIG_MEMCG, cgroup_disable=memory, or memory bound to an unmounted v1 hierarchy): %w", root, strings.TrimSpace(string(ctl)), ErrNoMemcg))
	}
	sub := filepath.Join(root, "cgroup.subtree_control")
	on, err := os.ReadFile(sub)
	if err != nil {
		return fail(fmt.Errorf("memcg: %w", err))
	}
	if !hasWord(string(on), "memory") {
		if err := os.WriteFile(sub, []byte("+memory"), 0); err != nil {
			return fail(fmt.Errorf("memcg: enabling the memory controller in %s: %w", sub, err))
		}
		// Undone only while the root has no other child cgroup: "-memory"
		// takes the controller away from every child, and one made
		// meanwhile (another suite's, a service's) would lose its
		// memory.* files and limits.
		g.undo = append(g.undo, func() {
			if !hasChildCgroups(root) {
				_ = os.WriteFile(sub, []byte("-memory"), 0)
			}
		})
	}
	SweepStale(root)
	g.Dir = filepath.Join(root, name)
	if err := os.Mkdir(g.Dir, 0o755); err != nil {
		g.Dir = ""
		return fail(fmt.Errorf("memcg: %w", err))
	}
	return g, nil
}

// Enter moves the process pid (0: this one) into the group, all its
// threads: charges already made stay where they were.
func (g *Group) Enter(pid int) error {
	if pid == 0 {
		pid = os.Getpid()
	}
	if err := os.WriteFile(filepath.Join(g.Dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("memcg: moving pid %d into %s: %w", pid, g.Dir, err)
	}
	return nil
}

// KernelBytes is the kernel memory charged to the group now: cgroup v1's
// memory.kmem.usage_in_bytes, or the "slab" line of cgroup v2's
// memory.stat (its figures are flushed from per-CPU counters when read).
func (g *Group) KernelBytes() (int64, error) {
	if g.V1 {
		b, err := os.ReadFile(filepath.Join(g.Dir, "memory.kmem.usage_in_bytes"))
		if err != nil {
			return 0, fmt.Errorf("memcg: %w", err)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("memcg: memory.kmem.usage_in_bytes %q: %w", b, err)
		}
		return v, nil
	}
	b, err := os.ReadFile(filepath.Join(g.Dir, "memory.stat"))
	if err != nil {
		return 0, fmt.Errorf("memcg: %w", err)
	}
	return statField(string(b), "slab")
}

// Write writes value to the group's control file name (memory.max, ...) in
// one blocking write(2). os.WriteFile would leave the file O_NONBLOCK (the
// runtime's poller takes kernfs files, which can be polled), and a
// memory.max or memory.high write with O_NONBLOCK only sets the value,
// without the reclaim and the drain of per-CPU charge caches it does
// otherwise (memory_max_write, memory_high_write in mm/memcontrol.c of
// 6.16 and later; Documentation/admin-guide/cgroup-v2.rst).
func (g *Group) Write(name, value string) error {
	dir, err := unix.Open(g.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("memcg: %s: %w", g.Dir, err)
	}
	defer unix.Close(dir)
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("memcg: %s/%s: %w", g.Dir, name, err)
	}
	defer unix.Close(fd)
	for {
		_, err = unix.Write(fd, []byte(value))
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("memcg: writing %q to %s/%s: %w", value, g.Dir, name, err)
	}
	return nil
}

// Charged is what the group has charged now, in bytes: cgroup v2's
// memory.current, cgroup v1's memory.usage_in_bytes (both the page
// counter, kernel memory included).
func (g *Group) Charged() (int64, error) {
	name := "memory.current"
	if g.V1 {
		name = "memory.usage_in_bytes"
	}
	b, err := os.ReadFile(filepath.Join(g.Dir, name))
	if err != nil {
		return 0, fmt.Errorf("memcg: %w", err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("memcg: %s/%s: %q is not a byte count", g.Dir, name, b)
	}
	return v, nil
}

// statField is the value of key in a memory.stat text ("key value" lines).
func statField(stat, key string) (int64, error) {
	for _, l := range strings.Split(stat, "\n") {
		k, v, ok := strings.Cut(l, " ")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("memcg: memory.stat %s %q: %w", key, v, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("memcg: memory.stat has no %q line", key)
}

// Remove deletes the group (it must hold no process: retried for up to a
// second while an exited member is reaped) and undoes what Open changed.
// A group with charges left is removed all the same: the kernel keeps its
// memcg until they are freed.
func (g *Group) Remove() error {
	var err error
	if g.Dir != "" {
		for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
			if err = unix.Rmdir(g.Dir); err == nil || errors.Is(err, unix.ENOENT) {
				err = nil
				break
			}
			if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
				err = fmt.Errorf("memcg: rmdir %s: %w", g.Dir, err)
				break
			}
		}
	}
	for i := len(g.undo) - 1; i >= 0; i-- {
		g.undo[i]()
	}
	g.undo = nil
	return err
}

func hasWord(list, w string) bool {
	for _, x := range strings.Fields(list) {
		if x == w {
			return true
		}
	}
	return false
}

// hasChildCgroups reports whether the cgroup directory dir has a child
// cgroup (any subdirectory), or cannot be read.
func hasChildCgroups(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return true
	}
	for _, e := range ents {
		if e.IsDir() {
			return true
		}
	}
	return false
}

// StalePrefix starts the name of every group the suite makes
// ("fsnsuite-memcg-PID-..."), so that SweepStale can find those of a
// process that was killed before it removed them.
const StalePrefix = "fsnsuite-memcg-"

// SweepStale removes the groups under dir that a process no longer alive
// made (killed at a deadline, its Remove never ran) and that hold no
// process; their charges stay with the kernel's offline memcg. It returns
// the groups it removed.
func SweepStale(dir string) (removed []string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), StalePrefix)
		if !e.IsDir() || !ok {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || unix.Kill(pid, 0) == nil || !errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			continue
		}
		g := filepath.Join(dir, e.Name())
		removeTree(g)
		if _, err := os.Lstat(g); errors.Is(err, os.ErrNotExist) {
			removed = append(removed, g)
		}
	}
	return removed
}

// removeTree removes a cgroup and the cgroups below it, deepest first (a
// cgroup with a child cannot be removed).
func removeTree(dir string) {
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				removeTree(filepath.Join(dir, e.Name()))
			}
		}
	}
	_ = unix.Rmdir(dir)
}
