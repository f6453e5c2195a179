package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

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
var unprivFanotify = feature.New("unprivileged fanotify (FAN_REPORT_FID without CAP_SYS_ADMIN) and per-user fanotify limits", "5.13",
	func() error {
		if _, err := os.Stat("/proc/sys/fs/fanotify/max_user_marks"); err != nil {
			return fmt.Errorf("fs.fanotify.max_user_marks: %w", unix.ENOSYS)
		}
		return feature.Fanotify.Check()
	})

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

// checkLimit runs the child for limit kind in a new user namespace (root
// mapped to root) and checks its report: exactly childLimit objects, then the
// limit's errno (inc_ucount lets the count reach the maximum, not pass it),
// then one more after releasing the first (dec_ucount when an object goes).
func checkLimit(t *harness.T, kind string) {
	l := limits[kind]
	dir := t.TempDir()
	for i := 0; i <= childLimit+1; i++ {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	cmd := reexec.Command(roleChild, "", kind, dir, strconv.Itoa(childLimit))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		var en unix.Errno
		if errors.As(err, &en) && (en == unix.EPERM || en == unix.EINVAL || en == unix.ENOSPC || en == unix.EUSERS) {
			t.Skipf("user namespaces unavailable: clone(CLONE_NEWUSER): %s (kernel without CONFIG_USER_NS, or user.max_user_namespaces reached)", unix.ErrnoName(en))
		}
		t.Fatalf("child in a new user namespace: %v; stderr: %s", err, errOut.String())
	}
	var rep childReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("child report %q: %v; stderr: %s", out.String(), err, errOut.String())
	}
	if rep.Setup != "" {
		t.Fatalf("child: %s", rep.Setup)
	}
	did := fmt.Sprintf("new user namespace, user.%s = %d; make objects until one fails", l.sysctl, childLimit)
	want := unix.ErrnoName(l.errno)
	if rep.Made != childLimit || rep.Errno != want {
		hint := ""
		if rep.Made < childLimit {
			hint = " (an earlier failure can also mean root's limit in the initial namespace is nearly used up by other programs)"
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
