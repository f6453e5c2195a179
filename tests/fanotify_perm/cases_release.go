package main

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// releaseCases check that an event gives back what it held. A path event
// holds its file's path, the mount and the dentry (fanotify_alloc_path_event
// and fanotify_alloc_perm_event take path_get; fanotify_free_event drops it:
// fanotify_free_path_event / fanotify_free_perm_event, path_put), and the
// event fd handed to the listener holds another reference until closed. Once
// the event is answered or read, its fd closed and its group closed, nothing
// of fsnotify may keep the mount: umount(2) of a bind mount the file was
// opened through must succeed, not fail with EBUSY ("target is busy",
// umount(2)).
var releaseCases = []harness.Case{
	{
		Name: "events_release_path",
		Doc:  "after a permission event is answered (allowed or denied), a notification event read, or an event left queued when the group closes, and every fd is closed, the bind mount the file was opened through unmounts (no EBUSY): the freed event dropped its path (fanotify.c fanotify_free_event, path_put)",
		// Subtests: releaseWays, so that a skip keeps these leaves.
		Subtests: releaseWayNames(),
		Run:      runEventsReleasePath,
	},
}

func releaseWayNames() []string {
	var out []string
	for _, w := range releaseWays {
		out = append(out, w.name)
	}
	return out
}

// releaseWays are the ends an event can meet: its group's class and mask,
// what the listener does, and the errno the actor's open gets.
var releaseWays = []struct {
	name   string
	class  uint
	mask   uint64
	answer string // "allow", "deny", "read" (a notification read), "close" (left queued)
	errno  unix.Errno
}{
	{"perm_allowed", unix.FAN_CLASS_CONTENT, unix.FAN_OPEN_PERM, "allow", 0},
	{"perm_denied", unix.FAN_CLASS_CONTENT, unix.FAN_OPEN_PERM, "deny", unix.EPERM},
	{"notification_read", unix.FAN_CLASS_NOTIF, unix.FAN_OPEN, "read", 0},
	{"queued_at_close", unix.FAN_CLASS_NOTIF, unix.FAN_OPEN, "close", 0},
}

func runEventsReleasePath(t *harness.T) {
	e := prepare(t, 1, "src/", "src/f")
	for _, w := range releaseWays {
		t.Run(w.name, func(t *harness.T) {
			mnt := t.Path("mnt_" + w.name)
			setup.Mkdir(t, mnt)
			if err := unix.Mount(t.Path("src"), mnt, "", unix.MS_BIND, ""); err != nil {
				t.Fatalf("setup: bind mount %s on %s: %v", t.Path("src"), mnt, err)
			}
			mounted := true
			t.Cleanup(func() {
				if mounted {
					unix.Unmount(mnt, unix.MNT_DETACH)
				}
			})
			f := statTarget(t, mnt+"/f")
			did := fmt.Sprintf("%s group, inode mark %s on %s (a bind mount of %s), the actor opens it",
				fanotify.InitFlagsString(w.class), fanotify.Mask(w.mask), f.Path, t.Path("src"))

			// The group is closed here, not at cleanup, so the unmount
			// below comes after everything fsnotify held was given back.
			g, err := fanotify.Init(w.class, eventFlags)
			if err != nil {
				t.Fatalf("fanotify_init: %v", err)
			}
			defer g.Close()
			mark(t, g, 0, w.mask, f.Path)
			p := send(t, e.a(0), openOp(f.Path))
			switch w.answer {
			case "allow", "deny":
				ev := readOne(t, g, did, want(w.mask, e.a(0).Pid(), f))
				resp := uint32(fanotify.Allow)
				if w.answer == "deny" {
					resp = fanotify.Deny
				}
				respond(t, g, ev, resp)
			case "read":
				readOne(t, g, did, want(w.mask, e.a(0).Pid(), f))
			}
			r := finish(t, p, answerWait, w.errno, did)
			if r.Errno == 0 {
				if err := e.a(0).Close(r.Fd); err != nil {
					t.Fatalf("actor close: %v", err)
				}
			}
			if w.answer == "close" {
				waitReadable(t, g, did)
			}
			if err := g.Close(); err != nil {
				t.Fatalf("close group: %v", err)
			}
			// The last fput of a file may finish just after close(2)
			// returns (task work); a reference fsnotify leaked stays.
			var uerr error
			for end := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
				if uerr = unix.Unmount(mnt, 0); uerr == nil || !errors.Is(uerr, unix.EBUSY) || time.Now().After(end) {
					break
				}
			}
			if uerr != nil {
				t.Errorf("%s; event %s, every fd closed, group closed: umount(%s) = %v for 1s, want success: the mount is still referenced, so the freed event did not drop its path (fanotify.c fanotify_free_event: fanotify_free_perm_event / fanotify_free_path_event, path_put)",
					did, releaseEnd(w.answer), mnt, uerr)
				return
			}
			mounted = false
		})
	}
}

func releaseEnd(answer string) string {
	switch answer {
	case "allow":
		return "answered FAN_ALLOW"
	case "deny":
		return "answered FAN_DENY"
	case "read":
		return "read"
	}
	return "left queued"
}
