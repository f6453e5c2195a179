package main

import (
	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

var hsmCases = []harness.Case{{
	Name:        "pre_content_fs_opt_in",
	Doc:         "FAN_PRE_ACCESS marks need a filesystem that opted in (SB_I_ALLOW_HSM: ext4, xfs, btrfs); tmpfs answers EOPNOTSUPP",
	Needs:       []*feature.Feature{feature.PreContent},
	Filesystems: []string{"tmpfs", "ext4", "xfs", "btrfs"},
	Run:         preContentFsOptIn,
}}

// allowsHSM lists the filesystems that set SB_I_ALLOW_HSM in their
// superblocks (commit "fs: enable pre-content events on supported file
// systems", 6.14: ext4, xfs, btrfs; tmpfs does not).
var allowsHSM = map[string]bool{"ext4": true, "xfs": true, "btrfs": true}

// preContentFsOptIn: fanotify_events_supported (fs/notify/fanotify/
// fanotify_user.c): "Filesystems need to opt-into pre-content events (a.k.a
// HSM)": a FANOTIFY_PRE_CONTENT_EVENTS mask on a superblock without
// SB_I_ALLOW_HSM is -EOPNOTSUPP; on one with it, an inode mark on a regular
// file is accepted (fanotify_mark(2) FAN_PRE_ACCESS, since 6.14).
func preContentFsOptIn(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	g := t.Fanotify(unix.FAN_CLASS_PRE_CONTENT, unix.O_RDONLY)
	fs := t.FS().Type
	var want unix.Errno
	if !allowsHSM[fs] {
		want = unix.EOPNOTSUPP
	}
	expect.Errno(t, "fanotify_mark(FAN_MARK_ADD, FAN_PRE_ACCESS) on a regular file of "+fs, g.Add(0, unix.FAN_PRE_ACCESS, f), want)
}
