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

func init() {
	cases = append(cases, harness.Case{
		Name: "release_frees_instance_memory",
		// Subtests: the names its t.Run calls use, so that a skip keeps these leaves.
		Subtests:    []string{"bare_instance", "instance_with_watch"},
		Doc:         "closing an instance's last fd frees it and its watches (inotify(7): the underlying object and its resources are freed for reuse by the kernel): thousands of instances created and closed, bare or with a watch, do not grow the kernel's unreclaimable slab round after round",
		Filesystems: []string{"tmpfs"},
		Run:         releaseFreesInstanceMemory,
	})
}

// inotify(7): "When all file descriptors referring to an inotify instance
// have been closed (using close(2)), the underlying object and its
// resources are freed for reuse by the kernel; all associated watches are
// automatically freed." In fs/notify: inotify_release ->
// fsnotify_destroy_group (its marks destroyed: inotify_free_mark) ->
// inotify_free_group_priv (the watch descriptor idr, the per-user instance
// count) -> the group's kfree. Leaked objects would grow the unreclaimable
// slab by their size every round (harness/kmem).
func releaseFreesInstanceMemory(t *harness.T) {
	if _, err := kmem.Unreclaimable(); errors.Is(err, kmem.ErrNoCounter) {
		t.Skipf("%v", err)
	} else if err != nil {
		t.Fatalf("%v", err)
	}
	f := t.Path("f")
	setup.Touch(t, f)
	for _, c := range []struct {
		name string
		// leak is the smallest leak per instance to catch: the group (a
		// kmalloc'd struct fsnotify_group, several hundred bytes) for a
		// bare instance, an inotify mark (~100 bytes) with a watch.
		leak, perRound int64
		watch          bool
	}{
		{"bare_instance", 256, 2048, false},
		{"instance_with_watch", 96, 4096, true},
	} {
		t.Run(c.name, func(t *harness.T) {
			check := kmem.Check{PerRound: int(c.perRound), Workers: 16, Rounds: 4, Leak: c.leak, Settle: 200 * time.Millisecond}
			res, err := check.Run(func() error {
				fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
				if err != nil {
					return fmt.Errorf("inotify_init1: %w", err)
				}
				defer unix.Close(fd)
				if c.watch {
					if _, err := unix.InotifyAddWatch(fd, f, unix.IN_OPEN|unix.IN_CLOSE_WRITE); err != nil {
						return fmt.Errorf("inotify_add_watch(%s, IN_OPEN|IN_CLOSE_WRITE): %w", f, err)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%v", err)
			}
			what := fmt.Sprintf("%d inotify instances per round created and closed", c.perRound)
			if c.watch {
				what += ", each with a watch"
			}
			if res.Leaks() {
				t.Errorf("%s: the kernel's unreclaimable slab grew every round: %s; an instance's release (inotify_free_group_priv, fsnotify_destroy_group, inotify_free_mark) is not freeing what it allocated", what, res)
				return
			}
			t.Logf("%s: %s", what, res)
		})
	}
}
