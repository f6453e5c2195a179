package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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
// (iterations × leakBytes) is far above that slack (0 to 4 KiB measured on
// 6.18, cgroup v1) and far below the smallest object its calls allocate
// with accounting: the fanotify merge hash is 1 KiB (sizeof(struct
// hlist_head) << FANOTIFY_HTABLE_BITS), a mark with its connector over 64
// bytes, an event at least 32.
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
		doc:        "fanotify_init then close: the group, its merge hash (fanotify_alloc_merge_hash, GFP_KERNEL_ACCOUNT) and its file are freed by fanotify_release (fsnotify_destroy_group, fanotify_free_group_priv)",
		needs:      []*feature.Feature{feature.Fanotify},
		iterations: 8192, leakBytes: 64,
		make: func(string) (int, error) {
			return unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
		},
	},
	{
		name:       "fanotify_group_mark_event",
		doc:        "a fanotify group with an inode mark for FAN_OPEN and one queued event, then close: the mark (fanotify_mark_cache, SLAB_ACCOUNT) goes at fsnotify_clear_marks_by_group, the unread event (charged to the group's memcg) at fsnotify_flush_notify",
		needs:      []*feature.Feature{feature.Fanotify},
		iterations: 256, leakBytes: 128,
		make: func(file string) (int, error) {
			fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
			if err != nil {
				return -1, err
			}
			if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_OPEN, unix.AT_FDCWD, file); err != nil {
				unix.Close(fd)
				return -1, fmt.Errorf("fanotify_mark: %w", err)
			}
			return fd, openClose(file)
		},
	},
	{
		name:       "inotify_instance_watch_event",
		iterations: 256, leakBytes: 128,
		doc: "an inotify instance with a watch for IN_OPEN and one queued event, then close: the watch (inotify_inode_mark_cachep, SLAB_ACCOUNT) and the unread event (kmalloc GFP_KERNEL_ACCOUNT, charged to the group's memcg) go at inotify_release (fsnotify_destroy_group)",
		make: func(file string) (int, error) {
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err != nil {
				return -1, err
			}
			if _, err := unix.InotifyAddWatch(fd, file, unix.IN_OPEN); err != nil {
				unix.Close(fd)
				return -1, fmt.Errorf("inotify_add_watch: %w", err)
			}
			return fd, openClose(file)
		},
	},
}

// memObjectNames are kernel_memory_released's subtests.
func memObjectNames() []string {
	var out []string
	for _, o := range memObjects {
		out = append(out, o.name)
	}
	return out
}

func openClose(file string) error {
	fd, err := unix.Open(file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", file, err)
	}
	return unix.Close(fd)
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
	// counter, read once it showed a marker of Control objects held again
	// (Flushed), less the marker's charge (ControlBytes), Waited after the
	// loop.
	Iterations int
	LeftBytes  int64
	Waited     time.Duration
	// Flushed: the marker held after the loop showed in the counter (it
	// was read after a flush that came after the loop).
	Flushed bool
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
// the group it is queued on (fsnotify_insert_event's callers run under
// set_active_memcg(group->memcg)), and the groups here are the child's own;
// an event another program's open queues on them is freed with them.
func kernelMemoryReleased(t *harness.T) {
	for _, o := range memObjects {
		t.Run(o.name, func(t *harness.T) {
			t.Logf("%s", o.doc)
			t.Require(o.needs...)
			file := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(file, nil, 0o644); err != nil {
				t.Fatalf("setup: %v", err)
			}
			mnt := t.TempDir()
			g, err := memcg.Open(fmt.Sprintf("fsnsuite-memcg-%d-%s", os.Getpid(), o.name), mnt)
			if errors.Is(err, memcg.ErrNoMemcg) {
				t.Skipf("%v", err)
			}
			if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) {
				t.Skipf("cannot make a memory cgroup here (a container's read-only or delegated cgroup tree): %v", err)
			}
			if err != nil {
				t.Fatalf("setup: %v", err)
			}
			defer func() {
				if err := g.Remove(); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			}()
			bound := o.bound()
			cmd := reexec.Command(roleMemcg, "", o.name, file, g.Dir, strconv.FormatBool(g.V1))
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("child: %s", reexec.Failure(err, errOut.Bytes()))
			}
			var rep memReport
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("child report %q: %v; stderr: %s", out.String(), err, errOut.String())
			}
			if rep.Setup != "" {
				t.Fatalf("child: %s", rep.Setup)
			}
			hier := map[bool]string{true: "cgroup v1 memory.kmem.usage_in_bytes", false: "cgroup v2 memory.stat slab"}[g.V1]
			if rep.Control < memControlMin {
				t.Skipf("control: only %d %s objects could be held at once (%s: a per-user limit other programs hold most of), want at least %d", rep.Control, o.name, rep.ControlErrno, memControlMin)
			}
			per := rep.ControlBytes / int64(rep.Control)
			t.Logf("control: %d objects held at once charged %d bytes (%d each, %s)", rep.Control, rep.ControlBytes, per, hier)
			if per < memPerObjectMin {
				t.Skipf("control: %d %s objects held at once charged %d bytes to their memory cgroup (%s) within %v, under %d each: this kernel does not charge them (cgroup.memory=nokmem, or a kernel whose fsnotify allocations are not accounted)", rep.Control, o.name, rep.ControlBytes, hier, memFlushWait, memPerObjectMin)
			}
			if !rep.Flushed {
				t.Skipf("undecided: the %d objects held again after the loop did not show in %s within %v, so the counter may not have been flushed since the loop", rep.Control, hier, memFlushWait)
			}
			t.Logf("after %d objects made and closed one by one: %d bytes still charged (the counter once it showed the control's objects held again, less their charge; read %v after the loop)", rep.Iterations, rep.LeftBytes, rep.Waited.Round(time.Millisecond))
			if rep.LeftBytes >= bound {
				t.Errorf("%d %s objects made and closed one at a time left %d bytes charged to their memory cgroup (%s) after %v, want under %d (%d per object): closing does not free what the object allocated (one held object charged %d)",
					rep.Iterations, o.name, rep.LeftBytes, hier, rep.Waited.Round(time.Millisecond), bound, o.leakBytes, per)
			}
		})
	}
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
	hold := func() (fds []int, errno string, err error) {
		for len(fds) < memControl {
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
	start := read()
	held, errno, err := hold()
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
			rep.Setup = fmt.Sprintf("object %d of the loop: %v", i, err)
			return rep
		}
	}
	// The marker: the same number of objects held again. Once the counter
	// shows them, it has been flushed after the loop, and what it holds
	// beyond the control's charge is what the loop left.
	t0 := time.Now()
	time.Sleep(100 * time.Millisecond) // the last marks' SRCU-deferred frees
	marker, _, err := hold()
	defer release(marker)
	if err != nil || len(marker) != rep.Control {
		rep.Setup = fmt.Sprintf("the marker after the loop: %d objects (%v), the control held %d", len(marker), err, rep.Control)
		return rep
	}
	v, rep.Flushed = waitFor(read, func(v int64) bool { return v-base >= want }, memFlushWait)
	for time.Since(t0) < memFlushWait && v-base-rep.ControlBytes >= bound {
		// Frees still on their way (a worker, an RCU grace period).
		time.Sleep(50 * time.Millisecond)
		v = read()
	}
	rep.LeftBytes = v - base - rep.ControlBytes
	rep.Waited = time.Since(t0)
	return rep
}

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
