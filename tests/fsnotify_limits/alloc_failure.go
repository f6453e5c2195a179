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

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/envfault"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	userlimits "github.com/fsnsuite/fsnsuite/harness/limits"
	"github.com/fsnsuite/fsnsuite/harness/memcg"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
)

// roleAllocFailure is the reexec role of event_alloc_failure_others_served's
// child.
const roleAllocFailure = "limits_alloc_failure"

// allocFailure figures: the most files opened per attempt (each open must
// give the inotify instance its IN_OPEN; an attempt ends at the second
// open whose fanotify event could not be queued), attempts before the case
// calls itself undecided. Each fanotify event stays queued (a file of its
// own: no merge), so the charges the cgroup may still have cached on the
// child's CPU after the limit (up to a batch of 64 pages,
// MEMCG_CHARGE_BATCH, where the drain did not run, plus less than a page
// of object stock) run out after about 3600 events of 72 bytes charged
// (a struct fanotify_path_event and its object cgroup pointer); the
// group's queue holds 16384 (FANOTIFY_DEFAULT_MAX_EVENTS), so it never
// fills first. allocFailureMaxProblems bounds the problems a report lists.
const (
	allocFailureFiles       = 8192
	allocFailureAttempts    = 3
	allocFailureMaxProblems = 20
)

var allocFailureCase = harness.Case{
	Name: "event_alloc_failure_others_served",
	Doc: "a fanotify group (FAN_CLASS_CONTENT, served first) whose memory cgroup is full loses a FAN_OPEN event to a failed " +
		"allocation and gets FAN_Q_OVERFLOW instead, and an inotify instance watching the same directory still gets IN_OPEN for " +
		"every open of a child: a handler's failure ends delivery to the other groups only for permission events (fsnotify(), fs/notify/fsnotify.c)",
	Needs: []*feature.Feature{feature.Fanotify, feature.FanotifyPerm},
	Run:   eventAllocFailureOthersServed,
}

// eventAllocFailureOthersServed: fsnotify() (fs/notify/fsnotify.c) calls
// send_to_group for each group with a mark on the object, in the order of
// fsnotify_iter_select_report_types (the highest group priority first:
// fsnotify_compare_groups, fs/notify/mark.c; FAN_CLASS_CONTENT is above
// inotify's), and leaves the loop on a handler's error only when the event
// is a permission event (`if (ret && (mask & ALL_FSNOTIFY_PERM_EVENTS))
// goto out;`, the same from 5.10 to 7.x). A non-permission event's handler
// fails when its event cannot be allocated: fanotify_handle_event
// (fs/notify/fanotify/fanotify.c) allocates with GFP_KERNEL_ACCOUNT |
// __GFP_RETRY_MAYFAIL (a queue of limited length: fanotify_alloc_event),
// charged to the memory cgroup the group was made in (set_active_memcg
// (group->memcg), taken at fanotify_init), and on failure queues the
// group's preallocated overflow event (fsnotify_queue_overflow) and returns
// -ENOMEM; __GFP_RETRY_MAYFAIL makes a charge over the cgroup's limit fail
// after reclaim, without the OOM killer (try_charge_memcg, mm/memcontrol.c).
//
// A child process makes the fanotify group in a cgroup L, moves to a
// cgroup F without a limit and makes the inotify instance there (its events
// are charged to F), marks one directory from both (FAN_EVENT_ON_CHILD,
// IN_OPEN), then limits L to what it has charged (after a write that
// drains the per-CPU charge caches, which would otherwise serve
// allocations below the limit), and opens the directory's files one by
// one: every open must give the inotify instance exactly one IN_OPEN with
// the file's name, whether or not the fanotify group's event could be
// allocated. The fanotify queue stops growing (FIONREAD) once allocations
// fail, and its FAN_Q_OVERFLOW shows that one did; where none did (reclaim
// found room: swap, page cache) the case is undecided.
func eventAllocFailureOthersServed(t *harness.T) {
	limited := openMemcg(t, "alloc-limited")
	defer func() {
		if err := limited.Remove(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}()
	free := openMemcg(t, "alloc-free")
	defer func() {
		if err := free.Remove(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}()
	dir := t.TempDir()
	for i := 0; i < allocFailureFiles; i++ {
		if err := os.WriteFile(filepath.Join(dir, allocFailureName(i)), nil, 0o644); err != nil {
			t.Fatalf("setup: %v", envfault.Setup("", err))
		}
	}
	cmd := reexec.Command(roleAllocFailure, "", limited.Dir, free.Dir, strconv.FormatBool(limited.V1), dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var rep allocFailureReport
	if err := reexec.RunReport(cmd, &rep); err != nil {
		t.Fatalf("child: %v", err)
	}
	for _, l := range rep.Log {
		t.Logf("%s", l)
	}
	if rep.Limit != "" {
		t.SkipEnvironment("%s", rep.Limit)
	}
	if rep.Setup != "" {
		t.Fatalf("setup: %s", rep.Setup)
	}
	if len(rep.Problems) > 0 {
		t.Errorf("%d problem(s) with %d opens of files in a directory marked by a fanotify group (FAN_CLASS_CONTENT, served first) "+
			"whose event allocations fail in its full memory cgroup and watched by an inotify instance:\n  %s\n"+
			"fsnotify() (fs/notify/fsnotify.c) must go on to the next group after a handler's error for a non-permission "+
			"event (it stops only for ALL_FSNOTIFY_PERM_EVENTS), and the group whose allocation failed gets FAN_Q_OVERFLOW "+
			"(fanotify_handle_event: fsnotify_queue_overflow)", len(rep.Problems), rep.Opens, strings.Join(rep.Problems, "\n  "))
		return
	}
	if !rep.Overflowed {
		t.Skipf("undecided: in %d attempts of up to %d opens (%d in all), with its memory cgroup limited to what it had "+
			"charged (%d bytes at the last attempt), no event allocation of the fanotify group failed: reclaim found room in "+
			"the cgroup (swap, page cache charged to it), the kernel does not charge kernel memory to it "+
			"(cgroup.memory=nokmem), or charges cached on other CPUs served the allocations; a kernel that stops delivery "+
			"after a failed allocation could not be told apart", allocFailureAttempts, allocFailureFiles, rep.Opens, rep.Charged)
	}
}

// allocFailureReport is what the child prints: Limit (a shared per-user
// limit, the descriptor table or another resource of the machine was short) or Setup when it could not run
// the experiment, else Problems (empty on a correct kernel) and whether
// the fanotify group got FAN_Q_OVERFLOW.
type allocFailureReport struct {
	Limit, Setup string
	Problems     []string
	Log          []string
	Overflowed   bool
	Opens        int
	Charged      int64
}

// addProblem adds p to the report's problems, up to
// allocFailureMaxProblems of them, then one line saying more were left out.
func (rep *allocFailureReport) addProblem(p string) {
	switch n := len(rep.Problems); {
	case n < allocFailureMaxProblems:
		rep.Problems = append(rep.Problems, p)
	case n == allocFailureMaxProblems:
		rep.Problems = append(rep.Problems, "(more problems left out)")
	}
}

// fail records err as the reason the experiment could not run: Limit when
// a per-user limit shared with other programs (harness/limits) or a
// resource of the machine (harness/envfault) refused it, else Setup.
func (rep *allocFailureReport) fail(err error) allocFailureReport {
	_, limit := userlimits.As(err)
	_, machine := envfault.As(err)
	if limit || machine {
		rep.Limit = err.Error()
	} else {
		rep.Setup = err.Error()
	}
	return *rep
}

// runAllocFailure is the child's main: args are the limited cgroup, the
// free one, whether they are cgroup v1, and the directory of
// allocFailureFiles files to watch.
func runAllocFailure(args []string) int {
	rep := allocFailureChild(args)
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}

// pinToOneCPU binds the calling thread to the first CPU it may run on, so
// that the per-CPU charge caches its allocations fill are on that CPU. A
// move to another cgroup can reset it (a cpuset), so it is called after
// each.
func pinToOneCPU() error {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return fmt.Errorf("sched_getaffinity: %w", err)
	}
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			set.Zero()
			set.Set(c)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				return fmt.Errorf("sched_setaffinity to CPU %d: %w", c, err)
			}
			return nil
		}
	}
	return fmt.Errorf("sched_getaffinity: no CPU in the set")
}

func allocFailureChild(args []string) (rep allocFailureReport) {
	if len(args) != 4 {
		rep.Setup = "want limited cgroup, free cgroup, v1, directory"
		return rep
	}
	limited, free := &memcg.Group{Dir: args[0], V1: args[2] == "true"}, &memcg.Group{Dir: args[1], V1: args[2] == "true"}
	dir := args[3]
	// One thread makes every allocation, on one CPU.
	runtime.LockOSThread()
	if err := limited.Enter(0); err != nil {
		return rep.fail(err)
	}
	if err := pinToOneCPU(); err != nil {
		return rep.fail(err)
	}
	fan, err := unix.FanotifyInit(unix.FAN_CLASS_CONTENT|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDONLY|unix.O_LARGEFILE)
	if err != nil {
		return rep.fail(userlimits.FanotifyInit(fmt.Sprintf("fanotify_init(FAN_CLASS_CONTENT) in %s", limited.Dir), err))
	}
	defer unix.Close(fan)
	if err := free.Enter(0); err != nil {
		return rep.fail(err)
	}
	if err := pinToOneCPU(); err != nil {
		return rep.fail(err)
	}
	// Opened before the watch: the directory's own open is no event here.
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return rep.fail(envfault.Setup("open "+dir, fmt.Errorf("open %s: %w", dir, err)))
	}
	defer unix.Close(dirfd)
	ino, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return rep.fail(userlimits.InotifyInit("inotify_init1", err))
	}
	defer unix.Close(ino)
	wd, err := unix.InotifyAddWatch(ino, dir, unix.IN_OPEN)
	if err != nil {
		return rep.fail(userlimits.InotifyWatch("inotify_add_watch(IN_OPEN)", err))
	}
	if err := unix.FanotifyMark(fan, unix.FAN_MARK_ADD, unix.FAN_OPEN|unix.FAN_EVENT_ON_CHILD, unix.AT_FDCWD, dir); err != nil {
		return rep.fail(userlimits.FanotifyMark("fanotify_mark(FAN_OPEN|FAN_EVENT_ON_CHILD)", err))
	}
	defer liftLimit(limited)

	// A small buffer: each FAN_OPEN event read opens a descriptor, at most
	// 64 at a time then.
	buf := make([]byte, 64*unix.FAN_EVENT_METADATA_LEN)
	for attempt := 1; attempt <= allocFailureAttempts && !rep.Overflowed; attempt++ {
		if rep.Charged, err = limitToCharged(limited); err != nil {
			return rep.fail(err)
		}
		queued, opened, stalled := 0, 0, false
		for i := 0; i < allocFailureFiles && !stalled; i++ {
			rep.Opens++
			opened++
			name := allocFailureName(i)
			fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
			if err != nil {
				return rep.fail(envfault.Setup("open "+dir+"/"+name, fmt.Errorf("open %s/%s: %w", dir, name, err)))
			}
			unix.Close(fd)
			// inotify(7): one struct inotify_event per event; a
			// directory watch names the child.
			want := inotify.Event{Wd: int32(wd), Mask: unix.IN_OPEN, Name: name}
			n, err := unix.Read(ino, buf)
			switch {
			case errors.Is(err, unix.EAGAIN):
				rep.addProblem(fmt.Sprintf("open %d (%s): the inotify instance got no event; want %v", rep.Opens, name, want))
			case err != nil:
				return rep.fail(fmt.Errorf("read(inotify): %w", err))
			default:
				got, err := inotify.Decode(buf[:n])
				if err != nil {
					rep.addProblem(fmt.Sprintf("open %d (%s): %v", rep.Opens, name, err))
				} else if len(got) == 1 && got[0].Mask == unix.IN_Q_OVERFLOW {
					return rep.fail(&userlimits.Error{Call: "the inotify instance's queue", Sysctl: "fs.inotify.max_queued_events",
						Value: userlimits.Value("fs.inotify.max_queued_events"), Need: "room for one event", Err: unix.ENOSPC})
				} else if len(got) != 1 || got[0] != want {
					rep.addProblem(fmt.Sprintf("open %d (%s): the inotify instance got %v; want exactly [%v]", rep.Opens, name, got, want))
				}
			}
			// fanotify FIONREAD (TIOCINQ's number): the bytes of the queued
			// events. A queue that did not grow lost this open's event: its
			// allocation failed after the overflow event was queued.
			q, err := unix.IoctlGetInt(fan, unix.TIOCINQ)
			if err != nil {
				return rep.fail(fmt.Errorf("ioctl(fanotify, FIONREAD): %w", err))
			}
			stalled = q == queued
			queued = q
		}
		opens, overflows, err := drainFanotify(fan, buf, &rep)
		if err != nil {
			return rep.fail(err)
		}
		if overflows > 1 {
			rep.addProblem(fmt.Sprintf("attempt %d: the fanotify group read %d FAN_Q_OVERFLOW events; want at most one (the group's one preallocated overflow event is queued once)", attempt, overflows))
		}
		if stalled && overflows == 0 {
			rep.addProblem(fmt.Sprintf("attempt %d: the fanotify group's queue stopped growing at open %d (an event lost) and it read no FAN_Q_OVERFLOW; want FAN_Q_OVERFLOW for an event it could not allocate (fanotify_handle_event: fsnotify_queue_overflow)", attempt, opened))
		}
		rep.Log = append(rep.Log, fmt.Sprintf("attempt %d: cgroup limited to the %d bytes it had charged; %d opens; the fanotify group read %d FAN_OPEN and %d FAN_Q_OVERFLOW", attempt, rep.Charged, opened, opens, overflows))
		// A full queue also ends in FAN_Q_OVERFLOW (fsnotify_insert_event),
		// with no allocation failed: it decides nothing.
		if full, err := strconv.Atoi(userlimits.Value("fs.fanotify.max_queued_events")); err == nil && opens >= full {
			rep.Log = append(rep.Log, fmt.Sprintf("attempt %d: %d events filled the queue (fs.fanotify.max_queued_events=%d): its overflow says nothing of an allocation", attempt, opens, full))
			overflows = 0
		}
		rep.Overflowed = overflows > 0
		if err := liftLimit(limited); err != nil {
			return rep.fail(err)
		}
	}
	return rep
}

// limitToCharged empties the cgroup's per-CPU charge caches and limits it
// to what it has charged then, so that its next charge of a page fails
// (its cached charges would otherwise serve allocations below the limit:
// memcg_stock and the object stock, mm/memcontrol.c). A limit below the
// usage drains them: cgroup v2 memory.high (memory_high_write drains, then
// reclaims, and never OOM-kills), cgroup v1 memory.limit_in_bytes
// (mem_cgroup_resize_max drains, reclaims, then refuses with EBUSY). The
// writes block (memcg.Group.Write): with O_NONBLOCK a kernel from 6.16 on
// would skip the drain.
func limitToCharged(g *memcg.Group) (int64, error) {
	limit := "memory.max"
	if g.V1 {
		limit = "memory.limit_in_bytes"
		if err := g.Write(limit, "0"); err != nil && !errors.Is(err, unix.EBUSY) {
			return 0, fmt.Errorf("draining the charge caches: %w", err)
		}
	} else {
		if err := g.Write("memory.high", "0"); err != nil {
			return 0, fmt.Errorf("draining the charge caches: %w", err)
		}
		if err := g.Write("memory.high", "max"); err != nil {
			return 0, err
		}
	}
	charged, err := g.Charged()
	if err != nil {
		return 0, err
	}
	if err := g.Write(limit, strconv.FormatInt(charged, 10)); err != nil {
		return 0, fmt.Errorf("limiting the cgroup to its %d charged bytes: %w", charged, err)
	}
	return charged, nil
}

// liftLimit takes the cgroup's limit away.
func liftLimit(g *memcg.Group) error {
	if g.V1 {
		return g.Write("memory.limit_in_bytes", "-1")
	}
	return g.Write("memory.max", "max")
}

// allocFailureName is the name of the directory's i-th file.
func allocFailureName(i int) string { return fmt.Sprintf("f%04d", i) }

// drainFanotify reads the group until it is empty and counts its FAN_OPEN
// events (fanotify.Decode closes their descriptors) and FAN_Q_OVERFLOW
// events; any other event is a problem of rep.
func drainFanotify(fan int, buf []byte, rep *allocFailureReport) (opens, overflows int, err error) {
	for {
		n, err := unix.Read(fan, buf)
		if errors.Is(err, unix.EAGAIN) {
			return opens, overflows, nil
		}
		if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) {
			return opens, overflows, &userlimits.Error{Call: "read(fanotify)", Sysctl: "fs.file-max", Value: userlimits.Value("fs.file-max"),
				Need: "a descriptor per FAN_OPEN event read (RLIMIT_NOFILE)", Err: err}
		}
		if err != nil {
			return opens, overflows, fmt.Errorf("read(fanotify): %w", err)
		}
		evs, err := fanotify.Decode(buf[:n])
		if err != nil {
			rep.addProblem(err.Error())
		}
		for _, ev := range evs {
			switch {
			case ev.Mask == unix.FAN_OPEN && ev.Fd >= 0:
				opens++
			case ev.Mask == unix.FAN_Q_OVERFLOW && ev.Fd == unix.FAN_NOFD:
				overflows++
			default:
				rep.addProblem(fmt.Sprintf("the fanotify group read %v; want FAN_OPEN with an fd, or FAN_Q_OVERFLOW with FAN_NOFD", ev))
			}
		}
	}
}
