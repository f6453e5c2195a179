package main

import (
	"bytes"
	"encoding/binary"
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
	"github.com/fsnsuite/fsnsuite/harness/feature"
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
// own: no merge), so the charges the cgroup's per-CPU caches still hold
// after the limit (at most a batch of 64 pages, MEMCG_CHARGE_BATCH, plus
// less than a page of object stock) run out after at most about 5500
// events of 48 bytes (struct fanotify_path_event); the group's queue holds
// 16384 (FANOTIFY_DEFAULT_MAX_EVENTS), so it never fills first.
const (
	allocFailureFiles    = 8192
	allocFailureAttempts = 3
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
			t.Fatalf("setup: %v", err)
		}
	}
	cmd := reexec.Command(roleAllocFailure, "", limited.Dir, free.Dir, strconv.FormatBool(limited.V1), dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %s", reexec.Failure(err, errOut.Bytes()))
	}
	var rep allocFailureReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("child's report %q: %v", out.String(), err)
	}
	if rep.Skip != "" {
		t.Skipf("%s", rep.Skip)
	}
	if rep.Setup != "" {
		t.Fatalf("setup: %s", rep.Setup)
	}
	for _, l := range rep.Log {
		t.Logf("%s", l)
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
		t.Skipf("undecided: in %d attempts of up to %d opens, with its memory cgroup limited to what it had charged, no event "+
			"allocation of the fanotify group failed (reclaim found room in the cgroup: swap, or page cache charged to it), "+
			"so a kernel that stops delivery after a failed allocation could not be told apart", allocFailureAttempts, allocFailureFiles)
	}
}

// allocFailureReport is what the child prints: Skip or Setup when it could
// not run the experiment, else Problems (empty on a correct kernel) and
// whether the fanotify group got FAN_Q_OVERFLOW.
type allocFailureReport struct {
	Skip, Setup string
	Problems    []string
	Log         []string
	Overflowed  bool
	Opens       int
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

func allocFailureChild(args []string) (rep allocFailureReport) {
	if len(args) != 4 {
		rep.Setup = "want limited cgroup, free cgroup, v1, directory"
		return rep
	}
	limited, free := &memcg.Group{Dir: args[0]}, &memcg.Group{Dir: args[1]}
	v1, dir := args[2] == "true", args[3]
	// One thread on one CPU makes every allocation, so the per-CPU charge
	// caches it fills are those the drain below empties.
	runtime.LockOSThread()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		rep.Setup = fmt.Sprintf("sched_getaffinity: %v", err)
		return rep
	}
	cpu := -1
	for c := 0; c < len(set)*64 && cpu < 0; c++ {
		if set.IsSet(c) {
			cpu = c
		}
	}
	set.Zero()
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		rep.Setup = fmt.Sprintf("sched_setaffinity to CPU %d: %v", cpu, err)
		return rep
	}

	if err := limited.Enter(0); err != nil {
		rep.Setup = err.Error()
		return rep
	}
	fan, err := unix.FanotifyInit(unix.FAN_CLASS_CONTENT|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDONLY|unix.O_LARGEFILE)
	if err != nil {
		rep.Setup = fmt.Sprintf("fanotify_init(FAN_CLASS_CONTENT) in %s: %v", limited.Dir, err)
		return rep
	}
	defer unix.Close(fan)
	if err := free.Enter(0); err != nil {
		rep.Setup = err.Error()
		return rep
	}
	// Opened before the watch: the directory's own open is no event here.
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		rep.Setup = fmt.Sprintf("open %s: %v", dir, err)
		return rep
	}
	defer unix.Close(dirfd)
	ino, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		rep.Setup = fmt.Sprintf("inotify_init1: %v", err)
		return rep
	}
	defer unix.Close(ino)
	wd, err := unix.InotifyAddWatch(ino, dir, unix.IN_OPEN)
	if err != nil {
		rep.Setup = fmt.Sprintf("inotify_add_watch(IN_OPEN): %v", err)
		return rep
	}
	if err := unix.FanotifyMark(fan, unix.FAN_MARK_ADD, unix.FAN_OPEN|unix.FAN_EVENT_ON_CHILD, unix.AT_FDCWD, dir); err != nil {
		rep.Setup = fmt.Sprintf("fanotify_mark(FAN_OPEN|FAN_EVENT_ON_CHILD): %v", err)
		return rep
	}
	defer liftLimit(limited, v1)

	// A small buffer: each FAN_OPEN event read opens a descriptor, at most
	// 64 at a time then.
	buf := make([]byte, 64*unix.FAN_EVENT_METADATA_LEN)
	for attempt := 1; attempt <= allocFailureAttempts && !rep.Overflowed; attempt++ {
		charged, err := limitToCharged(limited, v1)
		if err != nil {
			rep.Setup = err.Error()
			return rep
		}
		queued, opened := 0, 0
		for i := 0; i < allocFailureFiles; i++ {
			rep.Opens++
			opened++
			name := allocFailureName(i)
			fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
			if err != nil {
				rep.Setup = fmt.Sprintf("open %s/%s: %v", dir, name, err)
				return rep
			}
			unix.Close(fd)
			// inotify(7): one struct inotify_event {wd, mask, cookie,
			// len, name} per event; a directory watch names the child.
			want := fmt.Sprintf("wd %d IN_OPEN %s", wd, name)
			n, err := unix.Read(ino, buf)
			switch {
			case errors.Is(err, unix.EAGAIN):
				addProblem(&rep, fmt.Sprintf("open %d (%s): the inotify instance got no event; want %q", rep.Opens, name, want))
			case err != nil:
				rep.Setup = fmt.Sprintf("read(inotify): %v", err)
				return rep
			default:
				if got := inotifyEvents(buf[:n]); len(got) != 1 || got[0] != want {
					addProblem(&rep, fmt.Sprintf("open %d (%s): the inotify instance got %q; want exactly [%q]", rep.Opens, name, got, want))
				}
			}
			// fanotify(7) FIONREAD: the bytes of the queued events. A
			// queue that did not grow lost this open's event: its
			// allocation failed after the overflow event was queued.
			q, err := unix.IoctlGetInt(fan, unix.TIOCINQ) // FIONREAD
			if err != nil {
				rep.Setup = fmt.Sprintf("ioctl(fanotify, FIONREAD): %v", err)
				return rep
			}
			if q == queued {
				break
			}
			queued = q
		}
		opens, overflows, other, err := drainFanotify(fan, buf)
		if err != nil {
			rep.Setup = err.Error()
			return rep
		}
		rep.Problems = append(rep.Problems, other...)
		if overflows > 1 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("attempt %d: the fanotify group read %d FAN_Q_OVERFLOW events; want at most one (the group's one preallocated overflow event is queued once)", attempt, overflows))
		}
		if opens == 0 && overflows == 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("attempt %d: the fanotify group read no event for %d opens in its marked directory; want FAN_OPEN, or FAN_Q_OVERFLOW for an event it could not allocate (fanotify_handle_event: fsnotify_queue_overflow)", attempt, opened))
		}
		rep.Overflowed = overflows > 0
		rep.Log = append(rep.Log, fmt.Sprintf("attempt %d: cgroup limited to the %d bytes it had charged; %d opens; the fanotify group read %d FAN_OPEN and %d FAN_Q_OVERFLOW", attempt, charged, opened, opens, overflows))
		if err := liftLimit(limited, v1); err != nil {
			rep.Setup = err.Error()
			return rep
		}
	}
	return rep
}

// limitToCharged empties the cgroup's per-CPU charge caches and limits it
// to what it has charged then, so its next charge of a page fails (its
// cached charges would otherwise serve allocations below the limit:
// memcg_stock and the object stock, mm/memcontrol.c). A limit below the
// usage drains them: cgroup v2 memory.high (memory_high_write drains, then
// reclaims, and never OOM-kills), cgroup v1 memory.limit_in_bytes
// (mem_cgroup_resize_max drains, reclaims, then refuses with EBUSY).
func limitToCharged(g *memcg.Group, v1 bool) (int64, error) {
	usage, limit := "memory.current", "memory.max"
	if v1 {
		usage, limit = "memory.usage_in_bytes", "memory.limit_in_bytes"
		err := os.WriteFile(filepath.Join(g.Dir, limit), []byte("0"), 0)
		if err != nil && !errors.Is(err, unix.EBUSY) {
			return 0, fmt.Errorf("draining %s: %w", g.Dir, err)
		}
	} else {
		if err := os.WriteFile(filepath.Join(g.Dir, "memory.high"), []byte("0"), 0); err != nil {
			return 0, fmt.Errorf("draining %s: %w", g.Dir, err)
		}
		if err := os.WriteFile(filepath.Join(g.Dir, "memory.high"), []byte("max"), 0); err != nil {
			return 0, fmt.Errorf("%s: %w", g.Dir, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(g.Dir, usage))
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", usage, err)
	}
	charged, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || charged < 0 {
		return 0, fmt.Errorf("%s/%s: %q is not a byte count", g.Dir, usage, b)
	}
	if err := os.WriteFile(filepath.Join(g.Dir, limit), []byte(strconv.FormatInt(charged, 10)), 0); err != nil {
		return 0, fmt.Errorf("limiting %s to its %d charged bytes: %w", g.Dir, charged, err)
	}
	return charged, nil
}

// allocFailureName is the name of the directory's i-th file.
func allocFailureName(i int) string { return fmt.Sprintf("f%04d", i) }

// allocFailureMaxProblems bounds the problems a report lists.
const allocFailureMaxProblems = 20

// addProblem adds p to the report's problems, up to
// allocFailureMaxProblems of them, then one line counting the rest.
func addProblem(rep *allocFailureReport, p string) {
	switch n := len(rep.Problems); {
	case n < allocFailureMaxProblems:
		rep.Problems = append(rep.Problems, p)
	case n == allocFailureMaxProblems:
		rep.Problems = append(rep.Problems, "(more problems left out)")
	}
}

// liftLimit takes the cgroup's limit away.
func liftLimit(g *memcg.Group, v1 bool) error {
	limit, none := "memory.max", "max"
	if v1 {
		limit, none = "memory.limit_in_bytes", "-1"
	}
	if err := os.WriteFile(filepath.Join(g.Dir, limit), []byte(none), 0); err != nil {
		return fmt.Errorf("lifting the limit of %s: %w", g.Dir, err)
	}
	return nil
}

// inotifyEvents names the events of one read: "wd N MASK" (a name, if
// any, after it).
func inotifyEvents(b []byte) []string {
	var out []string
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		n := int(binary.NativeEndian.Uint32(b[12:]))
		ev := fmt.Sprintf("wd %d %s", wd, inotifyMaskName(mask))
		if n > 0 && unix.SizeofInotifyEvent+n <= len(b) {
			ev += " " + strings.TrimRight(string(b[unix.SizeofInotifyEvent:unix.SizeofInotifyEvent+n]), "\x00")
		}
		out = append(out, ev)
		b = b[min(len(b), unix.SizeofInotifyEvent+n):]
	}
	return out
}

func inotifyMaskName(m uint32) string {
	if m == unix.IN_OPEN {
		return "IN_OPEN"
	}
	return fmt.Sprintf("mask %#x", m)
}

// drainFanotify reads the group until it is empty: the FAN_OPEN events
// (their descriptors closed), the FAN_Q_OVERFLOW events, and a problem for
// any other event.
func drainFanotify(fan int, buf []byte) (opens, overflows int, other []string, err error) {
	for {
		n, err := unix.Read(fan, buf)
		if errors.Is(err, unix.EAGAIN) {
			return opens, overflows, other, nil
		}
		if err != nil {
			return opens, overflows, other, fmt.Errorf("read(fanotify): %w", err)
		}
		b := buf[:n]
		for len(b) >= unix.FAN_EVENT_METADATA_LEN {
			elen := int(binary.NativeEndian.Uint32(b[0:]))
			mask := binary.NativeEndian.Uint64(b[8:])
			fd := int32(binary.NativeEndian.Uint32(b[16:]))
			if fd >= 0 {
				unix.Close(int(fd))
			}
			switch {
			case mask == unix.FAN_OPEN && fd >= 0:
				opens++
			case mask == unix.FAN_Q_OVERFLOW && fd == unix.FAN_NOFD:
				overflows++
			default:
				other = append(other, fmt.Sprintf("the fanotify group read an event with mask %#x and fd %d; want FAN_OPEN with an fd, or FAN_Q_OVERFLOW with FAN_NOFD", mask, fd))
			}
			if elen < unix.FAN_EVENT_METADATA_LEN || elen > len(b) {
				return opens, overflows, append(other, fmt.Sprintf("the fanotify group read an event of length %d in a read of %d bytes", elen, len(b))), nil
			}
			b = b[elen:]
		}
	}
}
