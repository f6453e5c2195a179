package main

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/kmem"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

var releaseCases = []harness.Case{
	{
		Name: "release_frees_group_memory",
		// Subtests: the names its t.Run calls use, so that a skip keeps these leaves.
		Subtests:    []string{"bare_group", "group_with_inode_mark"},
		Doc:         "closing a group's last fd frees what the group allocated (fanotify(7): its resources are freed for reuse by the kernel): thousands of groups created and closed, bare or with an inode mark, do not grow the kernel's unreclaimable slab round after round",
		Filesystems: []string{"tmpfs"},
		Run:         releaseFreesGroupMemory,
	},
}

// fanotify(7): "When all file descriptors referring to the fanotify
// notification group are closed, the fanotify group is released and its
// resources are freed for reuse by the kernel." In fs/notify that is
// fanotify_release -> fsnotify_destroy_group -> fsnotify_put_group ->
// fsnotify_final_destroy_group -> fanotify_free_group_priv, which kfrees the
// group's merge hash table (FANOTIFY_HTABLE_SIZE 128 hlist heads: 1 KiB,
// kmalloc'd in fanotify_init), then the group; a mark is freed through
// fsnotify_put_mark -> fanotify_free_mark once detached. Those are
// unreclaimable slab objects: freed ones are reused by the next round,
// leaked ones grow SUnreclaim by their size every round (harness/kmem).
func releaseFreesGroupMemory(t *harness.T) {
	if _, err := kmem.Unreclaimable(); errors.Is(err, kmem.ErrNoCounter) {
		t.Skipf("%v", err)
	} else if err != nil {
		t.Fatalf("%v", err)
	}
	f := t.Path("f")
	setup.Touch(t, f)
	for _, c := range []struct {
		name string
		// leak is the smallest leak per group to catch: the merge hash
		// (1 KiB) for a bare group, a fanotify mark (fanotify_mark_cache,
		// ~100 bytes) for one with a mark.
		leak, perRound int64
		mark           bool
	}{
		{"bare_group", 1024, 2048, false},
		{"group_with_inode_mark", 96, 4096, true},
	} {
		t.Run(c.name, func(t *harness.T) {
			check := kmem.Check{PerRound: int(c.perRound), Workers: 16, Rounds: 4, Leak: c.leak, Settle: 200 * time.Millisecond}
			res, err := check.Run(func() error {
				fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
				if err != nil {
					return fmt.Errorf("fanotify_init: %w", err)
				}
				defer unix.Close(fd)
				if c.mark {
					if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_OPEN|unix.FAN_CLOSE_WRITE, unix.AT_FDCWD, f); err != nil {
						return fmt.Errorf("fanotify_mark(ADD, OPEN|CLOSE_WRITE, %s): %w", f, err)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%v", err)
			}
			what := fmt.Sprintf("%d fanotify groups per round created and closed", c.perRound)
			if c.mark {
				what += ", each with an inode mark"
			}
			if res.Leaks() {
				t.Errorf("%s: the kernel's unreclaimable slab grew every round: %s; a group's release (fanotify_free_group_priv, fsnotify_final_destroy_group, fanotify_free_mark) is not freeing what it allocated", what, res)
				return
			}
			t.Logf("%s: %s", what, res)
		})
	}
}
