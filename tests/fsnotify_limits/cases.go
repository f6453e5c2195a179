package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
)

// childLimit is the limit set in the child namespace: small, so the case is
// quick and adds at most childLimit+1 objects to root's count in the initial
// namespace.
const childLimit = 3

// unprivFanotify: a group without CAP_SYS_ADMIN in the initial namespace
// (fanotify_init(2): "Since Linux 5.13, users may call fanotify_init() without
// the CAP_SYS_ADMIN capability"); the fanotify limits are per user since 5.13
// too (fs.fanotify.max_user_groups, max_user_marks).
// Its probe checks fanotify as root first, so an EPERM names what that needs.
var unprivFanotify = func() *feature.Feature {
	f := feature.New("unprivileged fanotify (FAN_REPORT_FID without CAP_SYS_ADMIN) and per-user fanotify limits", "5.13",
		func() error {
			// fanotify(7): "/proc/sys/fs/fanotify/max_user_marks (since
			// Linux 5.13)": its absence is the kernel's lack of the
			// per-user limits (no call refused anything, so no errno).
			if _, err := os.Stat("/proc/sys/fs/fanotify/max_user_marks"); errors.Is(err, os.ErrNotExist) {
				return feature.Lacks("no /proc/sys/fs/fanotify/max_user_marks")
			} else if err != nil {
				return fmt.Errorf("fs.fanotify.max_user_marks: %w", err)
			}
			return nil
		})
	f.Privilege = "CAP_SYS_ADMIN in the initial user namespace, for the probe's privileged fanotify group"
	// fanotify itself first (Check runs Requires before the probe): a
	// kernel built without it has no /proc/sys/fs/fanotify either, and
	// lacks fanotify, not only its per-user limits.
	f.Requires = []*feature.Feature{feature.Fanotify}
	return f
}()

var cases = []harness.Case{
	{
		Name: "inotify_instances",
		Doc:  "with max_inotify_instances = 3 a user makes 3 instances, the 4th is EMFILE, and closing one frees a slot",
		Run:  func(t *harness.T) { checkLimit(t, "inotify_instances") },
	},
	{
		Name: "inotify_watches",
		Doc:  "with max_inotify_watches = 3 a user adds 3 watches, the 4th is ENOSPC, IN_MASK_ADD to a watch still works, and removing one frees a slot",
		Run:  func(t *harness.T) { checkLimit(t, "inotify_watches") },
	},
	{
		Name:  "fanotify_groups",
		Doc:   "with max_fanotify_groups = 3 a user makes 3 groups, the 4th is EMFILE, and closing one frees a slot",
		Needs: []*feature.Feature{unprivFanotify},
		Run:   func(t *harness.T) { checkLimit(t, "fanotify_groups") },
	},
	{
		Name:  "fd_table_full",
		Doc:   "with no descriptor left under RLIMIT_NOFILE, inotify_init1 and fanotify_init fail with EMFILE, and both work again once the limit is back",
		Needs: []*feature.Feature{feature.Fanotify},
		Run:   fdTableFull,
	},
	{
		Name:  "fanotify_marks",
		Doc:   "with max_fanotify_marks = 3 a user adds 3 marks, the 4th is ENOSPC, adding events to a mark still works, and removing one frees a slot",
		Needs: []*feature.Feature{unprivFanotify},
		Run:   func(t *harness.T) { checkLimit(t, "fanotify_marks") },
	},
}

// checkLimit runs the child for limit kind in a new user namespace and checks
// its report: exactly childLimit objects, then the limit's errno (inc_ucount
// lets the count reach the maximum, not pass it), then one more after
// releasing the first (dec_ucount when an object goes).
//
// inc_ucount (kernel/ucount.c) charges an object to its user in its own
// namespace and, on the way up, to the namespace's creator in each parent
// (ns->ucounts), checking each level's maximum. A namespace created by root
// would charge the child's objects to root in the initial namespace too, where
// other programs (another suite, a daemon) may hold nearly all of
// max_user_instances or max_user_groups: the count would stop early for a
// reason that is not the limit under test. So the namespace is created by a
// uid that no process uses (idleUID): a creator process runs as that uid and
// starts the child in a new user namespace mapping root to itself, and every
// level's count starts at zero. Where an unprivileged user may not create a
// user namespace (EPERM: a distribution's policy; or any other errno of
// clone, which root's own attempt then classifies), where the idle uid cannot
// be set or may not execute this binary (a container mapping fewer uids;
// EACCES: built under umask 077), or where the child may not set its limit
// (Ubuntu's AppArmor unprivileged_userns profile denies the capabilities of a
// namespace an unprivileged user made), root creates the namespace as before
// and the log says so.
func checkLimit(t *harness.T, kind string) {
	l := limits[kind]
	dir := t.TempDir()
	for i := 0; i <= childLimit+1; i++ {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	// The child reaches the files through the directory's descriptor
	// (/proc/self/fd/3 jumps past the workspace's ancestors, which the
	// idle uid may not search); the directory itself is 0755.
	if kind == "fanotify_marks" {
		requireFIDAt(t, dir)
	}
	dirFile, err := os.Open(dir)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	defer dirFile.Close()
	args := []string{kind, "/proc/self/fd/3", strconv.Itoa(childLimit)}
	hint := " (the count starts at zero at every level of the namespace chain: an earlier failure is the kernel's)"
	out, errOut, err := runUnderIdleUID(dirFile, args)
	if err == nil {
		var rep childReport
		if json.Unmarshal(out, &rep) == nil && rep.SysctlDenied {
			err = fmt.Errorf("in the namespace the idle uid made, %s: %w", rep.Setup, errNoUnprivUserns)
		}
	}
	if errors.Is(err, errNoUnprivUserns) {
		hint = " (root created the namespace: an earlier failure can also mean root's limit in the initial namespace is nearly used up by other programs)"
		t.Logf("%v: root creates the namespace instead, so root's own counts in the initial namespace apply too", err)
		out, errOut, err = runUnderRoot(dirFile, args)
	}
	if err != nil {
		var en unix.Errno
		if errors.As(err, &en) && (en == unix.EPERM || en == unix.EINVAL || en == unix.ENOSPC || en == unix.EUSERS) {
			t.Skipf("user namespaces unavailable: clone(CLONE_NEWUSER): %s (kernel without CONFIG_USER_NS, or user.max_user_namespaces reached)", unix.ErrnoName(en))
		}
		t.Fatalf("child in a new user namespace: %s", reexec.Failure(err, errOut))
	}
	var rep childReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("child report %q: %v; stderr: %s", out, err, errOut)
	}
	if rep.Setup != "" {
		t.Fatalf("child: %s", rep.Setup)
	}
	did := fmt.Sprintf("new user namespace, user.%s = %d; make objects until one fails", l.sysctl, childLimit)
	want := unix.ErrnoName(l.errno)
	if rep.Made != childLimit || rep.Errno != want {
		if rep.Made >= childLimit {
			hint = ""
		}
		t.Errorf("%s: made %d then %q, want %d then %s%s", did, rep.Made, rep.Errno, childLimit, want, hint)
		return
	}
	if rep.Extended != "" {
		t.Errorf("%s; at the limit, add events to the first watch/mark: %s, want success (no new object is counted)", did, rep.Extended)
	}
	if rep.Reused != "" {
		t.Errorf("%s; release the first; make one more: %s, want success", did, rep.Reused)
	}
}

// requireFIDAt skips the case where the filesystem holding dir cannot
// report file handles on this kernel: the child's groups are unprivileged,
// hence FAN_REPORT_FID groups (fanotify_init(2)), and their marks on such a
// filesystem are ENODEV (5.10's tmpfs has no f_fsid: fanotify_test_fsid).
// The case's directory is on the workspace, a tmpfs (harness/fixture).
func requireFIDAt(t *harness.T, dir string) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatalf("setup: statfs %s: %v", dir, err)
	}
	typ := fmt.Sprintf("filesystem magic %#x", st.Type)
	if st.Type == unix.TMPFS_MAGIC {
		typ = "tmpfs"
	}
	t.Require(feature.FIDOn(typ, dir))
}
