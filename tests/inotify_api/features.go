package main

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
)

// fdinfoUserFlags: /proc/PID/fdinfo shows a watch's IN_ONESHOT and
// IN_EXCL_UNLINK since a32e697cda27 ("inotify: show inotify mask flags in
// proc fdinfo"), merged for 5.19 (it sits after v5.18-rc1 in linux-next of
// 2022-04-26, beside the for-5.19 branches) and backported to stable trees
// (5.15.y has it in the 5.15.44..5.15.49 range). Before it, inotify_fdinfo
// printed mark->mask & IN_ALL_EVENTS (6933599697c9 "inotify: hide internal
// kernel bits from fdinfo"), which never holds those bits. The probe reads
// the fdinfo of a one-shot watch, so a backport counts as present. No call
// fails on a kernel without it: the mask without the flags is its
// OlderResult, an absence below 5.19 and a wrong result (a failure, "the
// probe's … succeeded, but …") from 5.19 on.
var fdinfoUserFlags = func() *feature.Feature {
	f := feature.New("IN_ONESHOT/IN_EXCL_UNLINK in inotify fdinfo mask (a32e697cda27)", "5.19", func() error {
		return feature.WithInotifyWatch(unix.IN_ATTRIB|unix.IN_ONESHOT|unix.IN_EXCL_UNLINK, func(fd int, _ string) error {
			ws, err := inotify.ReadWatches(os.Getpid(), fd)
			if err != nil {
				return err
			}
			return fdinfoFlagsOutcome(ws)
		})
	})
	f.OlderResult = "what a kernel before a32e697cda27 does, whose fdinfo prints mask & IN_ALL_EVENTS"
	f.Privilege = "" // reading one's own fdinfo checks no capability
	return f
}()

// fdinfoFlagsOutcome is fdinfoUserFlags' decision on the fdinfo of an
// inotify fd with one watch added with IN_ATTRIB|IN_ONESHOT|IN_EXCL_UNLINK.
func fdinfoFlagsOutcome(ws []inotify.WatchState) error {
	const call = "reading the fdinfo of an inotify fd with one watch of IN_ATTRIB|IN_ONESHOT|IN_EXCL_UNLINK"
	if len(ws) != 1 {
		return feature.Wrong(call, "it lists %d watches %v; want 1 (inotify(7) fdinfo)", len(ws), ws)
	}
	want := inotify.Mask(unix.IN_ONESHOT | unix.IN_EXCL_UNLINK)
	if ws[0].Mask&want != want {
		return feature.Wrong(call, "its mask is %v, without %v (inotify_mark_user_mask, fs/notify/inotify/inotify.h)", ws[0].Mask, want&^ws[0].Mask)
	}
	return nil
}
