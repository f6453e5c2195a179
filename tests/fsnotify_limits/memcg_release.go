package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
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

// roleMemcgGroups is the reexec role of memcg_released_after_groups' child.
const roleMemcgGroups = "limits_memcg_groups"

// memcgReleaseWait bounds the wait for a removed cgroup to be freed: its
// last reference goes with an RCU grace period and a work item
// (css_release, css_free_rwork_fn in kernel/cgroup/cgroup.c).
const memcgReleaseWait = 5 * time.Second

// memcgAttempts is how many times memcg_released_after_groups tries before
// it fails (memcgReleasedAfterGroups says why more than once).
const memcgAttempts = 3

var memcgReleaseCase = harness.Case{
	Name: "memcg_released_after_groups",
	Doc: "a memory cgroup in which a process made an inotify and a fanotify group, each with a watch or mark added twice, and " +
		"closed them is freed once removed, as one in which the process made none is (each group's reference to the creator's " +
		"memcg is put when the group is freed, and a group is freed once its marks are)",
	Needs: []*feature.Feature{feature.Fanotify},
	Run:   memcgReleasedAfterGroups,
}

// memcgReleasedAfterGroups: inotify_new_group and fanotify_init take a
// reference to the memory cgroup of the task that makes the group
// (group->memcg = get_mem_cgroup_from_mm(current->mm),
// fs/notify/inotify/inotify_user.c and fanotify/fanotify_user.c, since 4.20:
// d46eb14b735b "fs: fsnotify: account fsnotify metadata to kmemcg"), so
// that the group's events are charged there, and
// fsnotify_final_destroy_group (fs/notify/group.c) puts it (mem_cgroup_put)
// when the group is freed. A cgroup removed
// (rmdir) while a reference is held is offline but not freed: its parent's
// cgroup.stat counts it in nr_dying_descendants (cgroup-v2.rst) until the
// last reference goes. The case makes a private parent with two children:
// in one a process makes nothing (the control: a kernel or a setup that
// keeps a removed cgroup for another reason, such as a page cache page
// charged to it, makes the case undecided, not failed), in the other it
// makes and closes one inotify and one fanotify group; both processes exit
// and both children are removed; the parent must then count no dying
// descendant. A lost mem_cgroup_put keeps the second child dying for good.
func memcgReleasedAfterGroups(t *harness.T) {
	parent := openMemcg(t, "release")
	if parent.V1 {
		parent.Remove()
		t.Skipf("cgroup v1's memory hierarchy: no cgroup.stat nr_dying_descendants to see a removed cgroup that is not freed (cgroup v2 only)")
	}
	warm := filepath.Join(parent.Dir, "warm")
	var made []string // every child cgroup, removed at the end (deepest first is not needed: they are leaves)
	defer func() {
		for _, c := range append(made, warm) {
			unix.Rmdir(c)
		}
		if err := parent.Remove(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}()
	if err := os.WriteFile(filepath.Join(parent.Dir, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
		t.Skipf("cannot pass the memory controller to children of %s: %v", parent.Dir, err)
	}
	child := func(dir, mode string) {
		t.Helper()
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatalf("setup: %v", err)
		}
		if dir != warm {
			made = append(made, dir)
		}
		cmd := reexec.Command(roleMemcgGroups, "", dir, mode)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("child in %s (%s): %s", dir, mode, reexec.Failure(err, errOut.Bytes()))
		}
	}
	dying := func() int64 {
		b, err := os.ReadFile(filepath.Join(parent.Dir, "cgroup.stat"))
		if err != nil {
			t.Fatalf("%v", err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "nr_dying_descendants "); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("cgroup.stat %q: %v", l, err)
				}
				return n
			}
		}
		t.Fatalf("%s/cgroup.stat has no nr_dying_descendants line", parent.Dir)
		return 0
	}
	// memcg.Group.Remove retries an rmdir while an exited member is reaped.
	remove := func(dir string) {
		t.Helper()
		if err := (&memcg.Group{Dir: dir}).Remove(); err != nil {
			t.Fatalf("%v", err)
		}
	}
	// removeFreed removes dir and waits until the parent counts no more
	// dying descendants than before (base).
	removeFreed := func(dir string, base int64) (bool, time.Duration) {
		remove(dir)
		start := time.Now()
		for {
			if dying() <= base {
				return true, time.Since(start)
			}
			if time.Since(start) > memcgReleaseWait {
				return false, time.Since(start)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// A first child in a cgroup that stays until the verdict faults in
	// what the others will run (pages of the binary and of the runtime),
	// so the page cache they use is charged there, not to a cgroup that is
	// removed and would be kept for it.
	child(warm, "groups")
	// A removed memcg can also be pinned a while by a per-CPU charge cache
	// (mm/memcontrol.c memcg_stock: its cached memcg is only replaced when
	// another memcg charges on that CPU, and drain_all_stock skips a drain
	// another is running), with no reference lost. So the experiment runs
	// up to memcgAttempts times: a leaked reference keeps the cgroup dying
	// in every attempt, a cache in at most some of them.
	var waited time.Duration
	for attempt := 1; attempt <= memcgAttempts; attempt++ {
		control := filepath.Join(parent.Dir, fmt.Sprintf("control-%d", attempt))
		groups := filepath.Join(parent.Dir, fmt.Sprintf("groups-%d", attempt))
		child(control, "none")
		child(groups, "groups")
		base := dying()
		if ok, w := removeFreed(control, base); !ok {
			t.Skipf("undecided: the control cgroup, whose process made no group, is still dying %v after its removal (nr_dying_descendants %d, %d before): something else holds it here (a page charged to it), so a leaked reference could not be told apart", w.Round(time.Millisecond), dying(), base)
		}
		ok, w := removeFreed(groups, base)
		waited = w
		if ok {
			t.Logf("attempt %d: the control cgroup was freed, and the one whose process made and closed an inotify and a fanotify group in %v", attempt, w.Round(time.Millisecond))
			return
		}
		t.Logf("attempt %d: the control cgroup was freed; the one whose process made and closed an inotify and a fanotify group is still dying %v after its removal", attempt, w.Round(time.Millisecond))
	}
	t.Errorf("in each of %d attempts the memory cgroup in which a process made and closed an inotify and a fanotify group (a watch and a mark added twice each) stayed dying %v after its removal while the control's was freed: its reference from a group was not put (fsnotify_final_destroy_group: mem_cgroup_put), or a group was not freed (a mark reference not put keeps the mark, which holds its group)", memcgAttempts, waited.Round(time.Millisecond))
}

// runMemcgGroups is the child: args are the cgroup directory and "none" or
// "groups" (make one inotify and one fanotify group there, add a watch and
// a mark on the cgroup's directory twice each, close both groups).
func runMemcgGroups(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "want cgroup, mode")
		return 2
	}
	g := &memcg.Group{Dir: args[0]}
	if err := g.Enter(0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if args[1] != "groups" {
		return 0
	}
	ifd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		fmt.Fprintln(os.Stderr, "inotify_init1:", err)
		return 1
	}
	ffd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanotify_init:", err)
		return 1
	}
	// A watch and a mark on the cgroup's directory, each added twice: the
	// second call finds the first and updates it (inotify_update_existing_watch,
	// fanotify_add_mark: each takes and puts a reference to the mark). A
	// mark holds its group, so a mark never freed keeps the group, and the
	// group the memcg.
	for i := 0; i < 2; i++ {
		if _, err := unix.InotifyAddWatch(ifd, args[0], unix.IN_MODIFY); err != nil {
			fmt.Fprintln(os.Stderr, "inotify_add_watch:", err)
			return 1
		}
		if err := unix.FanotifyMark(ffd, unix.FAN_MARK_ADD, unix.FAN_MODIFY, unix.AT_FDCWD, args[0]); err != nil {
			fmt.Fprintln(os.Stderr, "fanotify_mark:", err)
			return 1
		}
	}
	unix.Close(ifd)
	unix.Close(ffd)
	return 0
}
