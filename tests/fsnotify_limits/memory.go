package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/memcg"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
)

// roleMemcg is the reexec role of the kernel_memory_released child.
const roleMemcg = "limits_memcg"

// The kernel_memory_released figures. Every object of the loop is freed
// before the next is made, so what a correct kernel leaves charged after the
// loop is per-CPU slack of the memcg counters (a few pages: memcg_stock,
// the stat flush threshold), however long the loop ran; one byte per
// iteration never freed adds a byte per iteration. Each kind's bound
// (iterations × leakBytes) is far above that slack (-8 to +4 KiB measured
// on 6.18 cgroup v1, Debian 6.1 and 7.3 cgroup v2) and below what one
// iteration allocates with accounting and a lost free would leave: the
// fanotify merge hash is 1 KiB (sizeof(struct hlist_head) <<
// FANOTIFY_HTABLE_BITS); the memEvents events of a marked object at least
// 640 bytes. A leaked mark alone (about 100 bytes; the connector is not
// accounted) stays under the bound: the case does not claim it.
const (
	// memControl objects held at once measure what one object charges (the
	// control: it proves the kernel charges these objects to the cgroup at
	// all); fewer when a per-user limit shared with other programs
	// (fs.fanotify.max_user_groups, default 128) is short.
	memControl    = 32
	memControlMin = 8
	// memPerObjectMin is the least a held object must charge for the
	// control to count: below it the objects are not accounted here.
	memPerObjectMin = 256
)

// memObject is one kind of object kernel_memory_released makes and frees:
// make returns a descriptor whose close frees it all.
type memObject struct {
	name, doc string
	needs     []*feature.Feature
	make      func(file string) (int, error)
	// iterations objects are made and closed one by one; what stays charged
	// must be under iterations × leakBytes. A group that had a mark waits,
	// as it closes, for the mark reaper's SRCU grace period
	// (fsnotify_wait_marks_destroyed: about 9 ms on 6.18), hence fewer
	// iterations there.
	iterations, leakBytes int
}

// bound is the most a correct kernel may leave charged after the loop.
func (o *memObject) bound() int64 { return int64(o.iterations * o.leakBytes) }

var memObjects = []memObject{
	{
		name:       "fanotify_group",
		doc:        "fanotify_init then close: the group and its merge hash (fanotify_alloc_merge_hash, GFP_KERNEL_ACCOUNT) are freed by fanotify_release (fsnotify_destroy_group, fanotify_free_group_priv), its file by __fput",
		needs:      []*feature.Feature{feature.Fanotify},
		iterations: 8192, leakBytes: 64,
		make: func(string) (int, error) {
			return unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
		},
	},
	{
		name:       "fanotify_group_mark_event",
		doc:        "a fanotify group with a mark on a directory for FAN_OPEN|FAN_EVENT_ON_CHILD and memEvents unread events (one open of each child: distinct objects, not merged), then close: the mark (fanotify_mark_cache, SLAB_ACCOUNT) goes at fsnotify_clear_marks_by_group, the events (fanotify_alloc_event under set_active_memcg(group->memcg)) at fsnotify_flush_notify",
		needs:      []*feature.Feature{feature.Fanotify},
		iterations: 256, leakBytes: 256,
		make: func(dir string) (int, error) {
			fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
			if err != nil {
				return -1, err
			}
			if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_OPEN|unix.FAN_EVENT_ON_CHILD, unix.AT_FDCWD, dir); err != nil {
				unix.Close(fd)
				return -1, fmt.Errorf("fanotify_mark: %w", err)
			}
			return fd, openChildren(dir)
		},
	},
	{
		name: "inotify_instance_watch_event",
		// Twice the iterations: an instance with its events charges 20
		// KiB (6.18), and what a correct kernel left reached 28 KiB
		// there, but 131216 bytes (256.3 per instance) on Debian's 5.10
		// in one run of two (2026-12-05), at the bound of 256. 384 per
		// instance (192 KiB) keeps 1.5 times that margin and stays under
		// the 640 bytes an instance's 16 queued events leave when their
		// free is lost (memEvents).
		iterations: 512, leakBytes: 384,
		doc: "an inotify instance with a watch on a directory for IN_OPEN and memEvents unread events (one open of each child: distinct names, not merged), then close: the watch (inotify_inode_mark_cachep, SLAB_ACCOUNT) and the events (inotify_handle_inode_event's kmalloc under set_active_memcg(group->memcg)) go at inotify_release (fsnotify_destroy_group)",
		make: func(dir string) (int, error) {
			fd, err := inotifyWatching(dir, unix.IN_OPEN)
			if err != nil {
				return -1, err
			}
			return fd, openChildren(dir)
		},
	},
	{
		name: "inotify_watch_long_name_event",
		// A name longer than DNAME_INLINE_LEN lives in its own
		// allocation (struct external_name, __d_alloc with
		// GFP_KERNEL_ACCOUNT), shared by refcount with every name
		// snapshot taken of it; __fsnotify_parent takes one to report
		// the child's name to the watching parent and releases it
		// (release_dentry_name_snapshot). The directory is on the
		// tmpfs workspace, whose dentries go at their last dput
		// (simple_lookup's simple_dentry_operations: always_delete_dentry),
		// so each iteration's file has a new dentry and name, freed
		// with it. One lost release keeps the name of every unlinked
		// file alive: 256 bytes (kmalloc-256 for a 200-byte name) an
		// iteration, twice the bound of 128.
		iterations: 512, leakBytes: 128,
		doc: "an inotify instance watching a directory for IN_OPEN, then a file with a 200-byte name created in it, opened (the event carries the name: __fsnotify_parent's name snapshot) and unlinked, then close: the instance, the event and the file's dentry with its external name are freed",
		make: func(dir string) (int, error) {
			fd, err := inotifyWatching(dir, unix.IN_OPEN)
			if err != nil {
				return -1, err
			}
			name := filepath.Join(dir, longName)
			f, err := unix.Open(name, unix.O_CREAT|unix.O_RDONLY|unix.O_CLOEXEC, 0o600)
			if err != nil {
				return fd, fmt.Errorf("create %s: %w", name, err)
			}
			unix.Close(f)
			if err := unix.Unlink(name); err != nil {
				return fd, fmt.Errorf("unlink %s: %w", name, err)
			}
			return fd, nil
		},
	},
}

// inotifyWatching returns a new inotify instance watching dir for mask.
func inotifyWatching(dir string, mask uint32) (int, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return -1, err
	}
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("inotify_add_watch: %w", err)
	}
	return fd, nil
}

// longName is a 200-byte file name: longer than DNAME_INLINE_LEN (32 on
// 64-bit kernels before 6.15, 40 since), so its dentry's name is an
// external allocation.
var longName = strings.Repeat("n", 200)

// memEvents is how many events each marked object queues: one per child
// of the directory, so that a lost free of the queued events (at least
// 40 bytes each with the memcg's pointer: inotify's header and name, a
// fanotify path event) is memEvents × 40 = 640 bytes an iteration, over
// 2.5 times the bound of 256 (whose 64 KiB are over 3 times the most a
// correct kernel left here: 20 KiB, beside another instance of the case).
const memEvents = 16

// memChild names the directory's children.
func memChild(dir string, i int) string { return filepath.Join(dir, "f"+strconv.Itoa(i)) }

// memCases are the kernel_memory_released cases, one per kind of object,
// each within its own deadline (a kind takes up to 15 s here, more where
// cgroup v2 makes it wait for flushes).
func memCases() []harness.Case {
	var out []harness.Case
	for _, o := range memObjects {
		out = append(out, harness.Case{
			Name:  "kernel_memory_released_" + o.name,
			Doc:   fmt.Sprintf("%s; %d made and closed one by one in a private memory cgroup leave under %d bytes each charged to it", o.doc, o.iterations, o.leakBytes),
			Needs: o.needs,
			Run:   func(t *harness.T) { kernelMemoryReleased(t, o) },
		})
	}
	return out
}

// openChildren opens and closes each of the directory's memEvents children.
func openChildren(dir string) error {
	for i := range memEvents {
		fd, err := unix.Open(memChild(dir, i), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", memChild(dir, i), err)
		}
		unix.Close(fd)
	}
	return nil
}

// memReport is what the child found.
type memReport struct {
	// Setup is a setup error (the other fields are then meaningless),
	// ControlErrno the errno that stopped the control short.
	Setup        string `json:",omitempty"`
	ControlErrno string `json:",omitempty"`
	// Control objects held at once charged ControlBytes.
	Control      int
	ControlBytes int64
	// After the loop of Iterations, LeftBytes were still charged: the
	// counter once it showed the marker (Marker) held and released
	// (Flushed), Waited after the loop.
	Iterations int
	LeftBytes  int64
	Waited     time.Duration
	// Flushed: the marker held after the loop showed in the counter and
	// its release did too (LeftBytes was read after a flush that came
	// after the loop); Marker names the last marker tried and why.
	Flushed bool
	Marker  string `json:",omitempty"`
	// Limit says which object a per-user limit refused (EMFILE, ENOSPC:
	// other programs hold most of it): undecided.
	Limit string `json:",omitempty"`
}

// kernelMemoryReleased runs the child in a new memory cgroup for each kind
// of object and checks its report.
//
// Expected, from the source: every object the loop makes is closed before
// the next one, and closing frees the group with everything it holds
// (fsnotify_destroy_group: marks, queued events, then the group's
// free_group_priv and the group itself; the file goes at __fput, on the
// return from close(2)), each free uncharging the memcg it was charged to.
// So what stays charged after the loop does not grow with the number of
// iterations. Other programs cannot charge this cgroup: an allocation is
// charged to the allocating task's memcg, or for an event to the memcg of
// the group it is queued on (set_active_memcg(group->memcg) around
// fanotify_alloc_event and around inotify_handle_inode_event's kmalloc),
// and the groups here are the child's own;
// an event another program's open queues on them is freed with them.
func kernelMemoryReleased(t *harness.T, o memObject) {
	file := t.TempDir()
	for i := range memEvents {
		if err := os.WriteFile(memChild(file, i), nil, 0o644); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	g := openMemcg(t, o.name)
	defer func() {
		if err := g.Remove(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}()
	bound := o.bound()
	cmd := reexec.Command(roleMemcg, "", o.name, file, g.Dir, strconv.FormatBool(g.V1))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var rep memReport
	if err := reexec.RunReport(cmd, &rep); err != nil {
		t.Fatalf("child: %v", err)
	}
	if rep.Setup != "" {
		t.Fatalf("child: %s", rep.Setup)
	}
	hier := map[bool]string{true: "cgroup v1 memory.kmem.usage_in_bytes", false: "cgroup v2 memory.stat slab"}[g.V1]
	if rep.Control < memControlMin {
		t.SkipEnvironment("control: only %d %s objects could be held at once (%s: a per-user limit other programs hold most of), want at least %d", rep.Control, o.name, rep.ControlErrno, memControlMin)
	}
	per := rep.ControlBytes / int64(rep.Control)
	t.Logf("control: %d objects held at once charged %d bytes (%d each, %s)", rep.Control, rep.ControlBytes, per, hier)
	if per < memPerObjectMin {
		t.Skipf("control: %d %s objects held at once charged %d bytes to their memory cgroup (%s) within %v, under %d each: this kernel does not charge them (cgroup.memory=nokmem, or a kernel whose fsnotify allocations are not accounted)", rep.Control, o.name, rep.ControlBytes, hier, memFlushWait, memPerObjectMin)
	}
	if rep.Limit != "" {
		t.SkipEnvironment("undecided: %s", rep.Limit)
	}
	if !rep.Flushed {
		t.Skipf("undecided: the marker (%s, held after the loop, then released) did not show in %s, or its release did not fall far enough, within %v for each, so the counter may not have been flushed since the loop", rep.Marker, hier, memFlushWait)
	}
	t.Logf("after %d objects made and closed one by one: %d bytes still charged (read once the counter showed the marker, %s, held and released: %v after the loop)", rep.Iterations, rep.LeftBytes, rep.Marker, rep.Waited.Round(time.Millisecond))
	if rep.LeftBytes >= bound {
		t.Errorf("%d %s objects made and closed one at a time left %d bytes charged to their memory cgroup (%s) after %v, want under %d (%d per object): closing does not free what the object allocated (one held object charged %d)",
			rep.Iterations, o.name, rep.LeftBytes, hier, rep.Waited.Round(time.Millisecond), bound, o.leakBytes, per)
	}
}

// openMemcg makes the case's private memory cgroup (memcg.Open, named so
// that memcg.SweepStale finds it if this process dies), or skips saying why
// none can be made here.
func openMemcg(t *harness.T, name string) *memcg.Group {
	t.Helper()
	g, err := memcg.Open(fmt.Sprintf("%s%d-%s", memcg.StalePrefix, os.Getpid(), name), t.TempDir())
	if errors.Is(err, memcg.ErrNoMemcg) {
		t.Skipf("%v", err)
	}
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) || errors.Is(err, unix.EBUSY) {
		t.Skipf("cannot make a memory cgroup here (a container's read-only or delegated cgroup tree, or a cgroup2 root with processes that cannot pass the memory controller on): %v", err)
	}
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	return g
}

// runMemcgChild is the child's main: args are the object kind, the file to
// mark, the cgroup directory and whether it is v1.
func runMemcgChild(args []string) int {
	rep := memcgChild(args)
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}

func memcgChild(args []string) (rep memReport) {
	if len(args) != 4 {
		rep.Setup = "want kind, file, cgroup, v1"
		return rep
	}
	var obj *memObject
	for i := range memObjects {
		if memObjects[i].name == args[0] {
			obj = &memObjects[i]
		}
	}
	v1, err := strconv.ParseBool(args[3])
	if obj == nil || err != nil {
		rep.Setup = fmt.Sprintf("bad arguments %q", args)
		return rep
	}
	// One thread makes every object; the runtime's other threads exist
	// already, so none is created (a thread's kernel stack is charged)
	// while the group counts.
	runtime.LockOSThread()
	g := &memcg.Group{Dir: args[2], V1: v1}
	if err := g.Enter(0); err != nil {
		rep.Setup = err.Error()
		return rep
	}
	read := func() int64 {
		v, err := g.KernelBytes()
		if err != nil && rep.Setup == "" {
			rep.Setup = err.Error()
		}
		return v
	}
	bound := obj.bound()
	hold := func(n int) (fds []int, errno string, err error) {
		for len(fds) < n {
			fd, err := obj.make(args[1])
			if fd >= 0 {
				fds = append(fds, fd)
			}
			if err != nil {
				var en unix.Errno
				if errors.As(err, &en) && (en == unix.EMFILE || en == unix.ENOSPC) {
					return fds, unix.ErrnoName(en), nil
				}
				return fds, "", err
			}
		}
		return fds, "", nil
	}
	release := func(fds []int) {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	// The fd table grows (alloc_fdtable, GFP_KERNEL_ACCOUNT, never shrunk
	// while the process lives) once the open-files marker below passes
	// 64 descriptors: grow it to its size now, before the first reading,
	// so that its charge is in every reading and none of the loop's.
	if fd, err := unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, markerFiles+16); err == nil {
		unix.Close(fd)
	}
	start := read()
	held, errno, err := hold(memControl)
	rep.Control, rep.ControlErrno = len(held), errno
	if err != nil {
		release(held)
		rep.Setup = fmt.Sprintf("control object %d: %v", len(held), err)
		return rep
	}
	if len(held) < memControlMin {
		release(held)
		return rep
	}
	// The control: the held objects' charge, once the counters show it.
	// cgroup v2's memory.stat is flushed from per-CPU counters only past
	// a threshold that 7.x counts in pages (about 64 per CPU), else by a
	// worker every 2 s (mm/memcontrol.c, FLUSH_TIME): so wait for it.
	want := int64(len(held)) * memPerObjectMin
	v, _ := waitFor(read, func(v int64) bool { return v-start >= want }, memFlushWait)
	rep.ControlBytes = v - start
	release(held)
	if rep.ControlBytes < want {
		return rep
	}
	// What the control's objects left is not the loop's: count from where
	// the counter settles once they are gone (under half their charge: a
	// reading flushed since they went).
	base := settle(read, start, min(bound/4, rep.ControlBytes/2), memFlushWait)
	rep.Iterations = obj.iterations
	for i := 0; i < obj.iterations; i++ {
		fd, err := obj.make(args[1])
		if fd >= 0 {
			unix.Close(fd)
		}
		if err != nil {
			var en unix.Errno
			if errors.As(err, &en) && (en == unix.EMFILE || en == unix.ENOSPC) {
				rep.Limit = fmt.Sprintf("object %d of the loop: %v (%s)", i, err, sharedLimits)
				return rep
			}
			rep.Setup = fmt.Sprintf("object %d of the loop: %v", i, err)
			return rep
		}
	}
	// The marker proves a flush after the loop: objects held, seen in the
	// counter, then released, and the counter seen to drop by at least
	// half of what they showed. Only a flush after the release shows that
	// drop, and it shows everything the loop left. (A reading that shows
	// the marker could be one flushed before it, showing a leak instead.)
	//
	// The first marker is the control's own kind (the control proved it
	// is charged): as many objects held again. A kernel that fails to
	// free this kind (its queued events, its group) leaves that marker's
	// drop short too, so then the second marker decides: markerFiles open
	// files of the directory, not objects of the kind under test (struct
	// file is charged to the memcg, filp_cachep being SLAB_ACCOUNT in
	// fs/file_table.c, and freed by __fput without fsnotify's frees), so
	// the leak is counted instead of being called undecided. Open files
	// second, not first: on Debian's 5.10 (no periodic stat flush, a
	// CPU's byte delta folded into memory.stat only past 32 pages) 512
	// of them showed but their close did not, twice. The first marker
	// gets two attempts; the files one, and only when the first showed
	// but fell short within the old two attempts' time (the case's
	// budget: a correct kernel that flushes slowly still ends undecided
	// within it).
	t0 := time.Now()
	time.Sleep(100 * time.Millisecond) // the last marks' SRCU-deferred frees
	// showAndDrop waits for the held marker to show, releases it and
	// waits for the counter to fall by drop(what it showed), recording
	// LeftBytes when it does; it says whether the marker showed.
	showAndDrop := func(want int64, fds []int, before int64, drop func(int64) int64) (shown bool) {
		v, ok := waitFor(read, func(v int64) bool { return v-before >= want }, memFlushWait)
		release(fds)
		if !ok {
			return false
		}
		need := drop(v - before)
		w, flushed := waitFor(read, func(w int64) bool { return v-w >= need }, memFlushWait)
		if flushed {
			rep.Flushed, rep.LeftBytes = true, w-base
		}
		return true
	}
	// The first marker: the control's kind, as many as the control held.
	dropShort := false
	for attempt := 0; attempt < 2 && !rep.Flushed && !dropShort; attempt++ {
		before := read()
		marker, errno, err := hold(rep.Control)
		if err != nil || len(marker) != rep.Control {
			release(marker)
			switch {
			case errno != "":
				rep.Limit = fmt.Sprintf("the marker after the loop: %d objects, then %s (the control held %d; %s)", len(marker), errno, rep.Control, sharedLimits)
			case err != nil:
				rep.Setup = fmt.Sprintf("the marker after the loop: object %d: %v", len(marker), err)
			}
			return rep
		}
		rep.Marker = fmt.Sprintf("%d %s objects", rep.Control, obj.name)
		// Shown, but its release did not fall by half: a kernel that
		// does not free this kind, or a slow flush; the files decide.
		dropShort = showAndDrop(want, marker, before, func(int64) int64 { return rep.ControlBytes / 2 }) && !rep.Flushed
	}
	if dropShort && time.Since(t0) < 2*memFlushWait+time.Second {
		// The second marker: open files, freed without fsnotify. Their
		// close must show whole (within a sixteenth: a half drop could
		// leave up to half their charge in LeftBytes).
		before := read()
		marker, err := holdFiles(args[1], markerFiles)
		var en unix.Errno
		switch {
		case errors.As(err, &en) && (en == unix.EMFILE || en == unix.ENFILE):
			release(marker)
			rep.Limit = fmt.Sprintf("the second marker after the loop: %d open files, then %v (RLIMIT_NOFILE or fs.file-max)", len(marker), err)
			return rep
		case err != nil:
			release(marker)
			rep.Setup = fmt.Sprintf("the second marker after the loop: %v", err)
			return rep
		}
		rep.Marker = fmt.Sprintf("%d open files (the %d %s objects held again showed, but their release did not fall by half)", markerFiles, rep.Control, obj.name)
		showAndDrop(markerWant, marker, before, func(d int64) int64 { return d - d/16 })
	}
	decided := time.Now()
	for time.Since(decided) < memFlushWait && rep.Flushed && rep.LeftBytes >= bound {
		// Frees still on their way (a worker, an RCU grace period).
		time.Sleep(50 * time.Millisecond)
		rep.LeftBytes = read() - base
	}
	rep.Waited = time.Since(t0)
	return rep
}

// The second marker: markerFiles descriptors of the case's directory, each
// a struct file charged to the memcg, must show at least markerWant (64
// bytes each) before they are closed. The fd table they need is grown
// before the first reading (memcgChild), so it is in none of the
// differences.
const (
	markerFiles = 512
	markerWant  = markerFiles * 64
)

// holdFiles opens n descriptors of dir; on an error it returns those it
// opened with it.
func holdFiles(dir string, n int) ([]int, error) {
	fds := make([]int, 0, n)
	for len(fds) < n {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fds, fmt.Errorf("open %s: %w", dir, err)
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

// sharedLimits names the per-user limits an EMFILE or ENOSPC of a group or
// instance comes from: other programs of this user hold part of them.
const sharedLimits = "a per-user limit that other programs share: fs.fanotify.max_user_groups, fs.inotify.max_user_instances"

// memFlushWait bounds each wait for the memcg counters: twice cgroup v2's
// periodic flush.
const memFlushWait = 4 * time.Second

// waitFor reads the counter until ok accepts it or wait has passed, and
// returns the last reading and whether ok accepted it.
func waitFor(read func() int64, ok func(int64) bool, wait time.Duration) (int64, bool) {
	deadline := time.Now().Add(wait)
	for {
		v := read()
		if ok(v) {
			return v, true
		}
		if time.Now().After(deadline) {
			return v, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// settle reads the counter until it is under from+bound or wait has passed
// (marks are freed by a worker after an SRCU grace period, files and
// events may wait for an RCU one), and returns the last reading.
func settle(read func() int64, from, bound int64, wait time.Duration) int64 {
	deadline := time.Now().Add(wait)
	for {
		v := read()
		if v-from < bound || time.Now().After(deadline) {
			return v
		}
		time.Sleep(50 * time.Millisecond)
	}
}
