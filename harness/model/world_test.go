package model

import (
	"reflect"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// These hold World to sentences of inotify(7), fanotify_mark(2) and
// fanotify(7), independently of any kernel run.

var testTree = map[string]bool{".": true, "f": false, "s": true, "s/h": false}

var (
	inKind    = GroupKind{Name: "inotify", Inotify: true}
	notifKind = GroupKind{Name: "notif"}
	fidKind   = GroupKind{Name: "fid", FID: true}
	dfidKind  = GroupKind{Name: "dfid_name", FID: true, DirName: true}
)

func TestWorldSentences(t *testing.T) {
	type call func(w *World) (unix.Errno, []Event)
	mark := func(g int, flags uint, mask uint32, obj string) call {
		return func(w *World) (unix.Errno, []Event) { return w.FanMark(g, flags, mask, obj), nil }
	}
	watch := func(g int, obj string, mask uint32) call {
		return func(w *World) (unix.Errno, []Event) { _, e := w.InWatch(g, obj, mask); return e, nil }
	}
	act := func(op, obj string) call { return func(w *World) (unix.Errno, []Event) { return w.Act(op, obj) } }
	for _, tc := range []struct {
		name  string
		kinds []GroupKind
		calls []call
		errno unix.Errno // of the last call
		want  []Event    // of the last call, folded
	}{
		{
			// inotify(7): a watched directory reports events on its files
			// with their name; a watched file reports them without one.
			name: "inotify_parent_and_child_both_report", kinds: []GroupKind{inKind},
			calls: []call{watch(0, ".", unix.IN_OPEN), watch(0, "f", unix.IN_OPEN), act("read", "f")},
			want:  []Event{{Group: 0, Obj: ".", Name: "f", Mask: unix.IN_OPEN}, {Group: 0, Obj: "f", Name: "", Mask: unix.IN_OPEN}},
		},
		{
			// inotify(7) IN_ONESHOT: "Monitor ... for one event, then remove
			// from watch list"; IN_IGNORED: the watch was removed.
			name: "inotify_oneshot_ignored", kinds: []GroupKind{inKind},
			calls: []call{watch(0, "f", unix.IN_OPEN|unix.IN_ONESHOT), act("read", "f")},
			want:  []Event{{Group: 0, Obj: "f", Name: "", Mask: unix.IN_OPEN | unix.IN_IGNORED}},
		},
		{
			// inotify(7) IN_MASK_ADD: "add (OR) the events in mask to the watch mask".
			name: "inotify_mask_add_ors", kinds: []GroupKind{inKind},
			calls: []call{watch(0, "f", unix.IN_ACCESS), watch(0, "f", unix.IN_OPEN|unix.IN_MASK_ADD), act("read", "f")},
			want:  []Event{{Group: 0, Obj: "f", Name: "", Mask: unix.IN_OPEN | unix.IN_ACCESS}},
		},
		{
			// inotify(7) IN_CREATE "File/directory created in watched
			// directory"; IN_ISDIR "Subject of this event is a directory".
			name: "inotify_mkdir", kinds: []GroupKind{inKind},
			calls: []call{watch(0, ".", unix.IN_CREATE), act("mkdir", "e")},
			want:  []Event{{Group: 0, Obj: ".", Name: "e", Mask: unix.IN_CREATE | unix.IN_ISDIR}},
		},
		{
			// inotify(7) IN_DELETE_SELF, then IN_IGNORED ("file was deleted").
			name: "inotify_unlink_self", kinds: []GroupKind{inKind},
			calls: []call{watch(0, "f", unix.IN_DELETE_SELF), act("unlink", "f")},
			want:  []Event{{Group: 0, Obj: "f", Name: "", Mask: unix.IN_DELETE_SELF | unix.IN_IGNORED}},
		},
		{
			// fanotify_mark(2) FAN_ONDIR: "Without this flag, events are
			// created only for files."
			name: "fanotify_dir_needs_ondir", kinds: []GroupKind{notifKind},
			calls: []call{mark(0, unix.FAN_MARK_ADD|unix.FAN_MARK_FILESYSTEM, unix.FAN_OPEN, ""), act("opendir", "s")},
		},
		{
			name: "fanotify_fid_reports_ondir", kinds: []GroupKind{fidKind},
			calls: []call{mark(0, unix.FAN_MARK_ADD|unix.FAN_MARK_FILESYSTEM, unix.FAN_OPEN|unix.FAN_ONDIR, ""), act("opendir", "s")},
			want:  []Event{{Group: 0, Obj: "s", Name: "", Mask: unix.FAN_OPEN | unix.FAN_ONDIR}},
		},
		{
			// fanotify_mark(2) FAN_EVENT_ON_CHILD: "Events for the immediate
			// children of marked directories shall be created."
			name: "fanotify_on_child", kinds: []GroupKind{notifKind},
			calls: []call{mark(0, unix.FAN_MARK_ADD, unix.FAN_OPEN|unix.FAN_EVENT_ON_CHILD, "."), act("read", "f")},
			want:  []Event{{Group: 0, Obj: "f", Name: "", Mask: unix.FAN_OPEN}},
		},
		{
			name: "fanotify_no_on_child", kinds: []GroupKind{notifKind},
			calls: []call{mark(0, unix.FAN_MARK_ADD, unix.FAN_OPEN, "."), act("read", "f")},
		},
		{
			// fanotify_mark(2) FAN_MARK_IGNORED_SURV_MODIFY: "If this flag is
			// not set, the ignore mask is cleared when a modify event occurs".
			name: "fanotify_modify_clears_ignore", kinds: []GroupKind{notifKind},
			calls: []call{mark(0, unix.FAN_MARK_ADD|unix.FAN_MARK_MOUNT, unix.FAN_OPEN|unix.FAN_CLOSE, ""),
				mark(0, unix.FAN_MARK_ADD|unix.FAN_MARK_IGNORED_MASK, unix.FAN_OPEN|unix.FAN_CLOSE, "f"),
				act("write", "f")},
			want: []Event{{Group: 0, Obj: "f", Name: "", Mask: unix.FAN_CLOSE_WRITE}},
		},
		{
			// fanotify_mark(2) EINVAL: dirent events need a group that
			// identifies objects by file handles.
			name: "fanotify_create_needs_fid", kinds: []GroupKind{notifKind},
			calls: []call{mark(0, unix.FAN_MARK_ADD, unix.FAN_CREATE, ".")},
			errno: unix.EINVAL,
		},
		{
			// fanotify(7): FAN_CREATE reports the directory (FAN_REPORT_FID).
			name: "fanotify_create_reports_dir", kinds: []GroupKind{fidKind},
			calls: []call{mark(0, unix.FAN_MARK_ADD, unix.FAN_CREATE, "."), act("create", "n")},
			want:  []Event{{Group: 0, Obj: ".", Name: "", Mask: unix.FAN_CREATE}},
		},
		{
			// inotify(7): IN_MOVE_SELF of a watched directory; inotify never
			// reported IN_ISDIR with the self events (inotify_handle_inode_event).
			name: "inotify_dir_move_self_without_isdir", kinds: []GroupKind{inKind},
			calls: []call{watch(0, "s", unix.IN_MOVE_SELF), func(w *World) (unix.Errno, []Event) { return w.Rename("s", "e") }},
			want:  []Event{{Group: 0, Obj: "s", Name: "", Mask: unix.IN_MOVE_SELF}},
		},
		{
			// fanotify(7) FAN_REPORT_DFID_NAME: a child's event carries its
			// parent's fid and its name; a file's FAN_DELETE_SELF has no
			// directory to report and is not reported (fanotify_group_event_mask).
			name: "dfid_name_child_and_self", kinds: []GroupKind{dfidKind},
			calls: []call{mark(0, unix.FAN_MARK_ADD|unix.FAN_MARK_FILESYSTEM, unix.FAN_ATTRIB|unix.FAN_DELETE_SELF, ""), act("unlink", "f")},
		},
		{
			name: "dfid_name_chmod", kinds: []GroupKind{dfidKind},
			calls: []call{mark(0, unix.FAN_MARK_ADD|unix.FAN_MARK_FILESYSTEM, unix.FAN_ATTRIB, ""), act("chmod", "s/h")},
			want:  []Event{{Group: 0, Obj: "s/h", Mask: unix.FAN_ATTRIB, Rec: "dfid_name"}},
		},
		{
			// fanotify_mark(2) ENOENT: "trying to remove a mark from an
			// object which is not marked".
			name: "fanotify_remove_unmarked", kinds: []GroupKind{notifKind},
			calls: []call{mark(0, unix.FAN_MARK_REMOVE, unix.FAN_OPEN, "f")},
			errno: unix.ENOENT,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWorld(Fixed, testTree, tc.kinds)
			var errno unix.Errno
			var evs []Event
			for _, c := range tc.calls {
				errno, evs = c(w)
			}
			if errno != tc.errno {
				t.Errorf("errno %v, want %v", errno, tc.errno)
			}
			if got := Fold(evs); !reflect.DeepEqual(got, Fold(tc.want)) {
				t.Errorf("events %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestPermOrder: the model offers a permission event to pre-content groups
// before content groups; a delivery that interleaves the classes, or
// reverses them, renders differently, and groups of one class are not
// ordered among themselves.
func TestPermOrder(t *testing.T) {
	content := GroupKind{Name: "content", Init: unix.FAN_CLASS_CONTENT, Perm: true}
	pre := GroupKind{Name: "pre_content", Init: unix.FAN_CLASS_PRE_CONTENT, Perm: true}
	kinds := []GroupKind{content, pre, content}
	ev := func(g int) Event { return Event{Group: g, Obj: "f", Mask: unix.FAN_OPEN_PERM} }
	want := Fixed.PermOrder(kinds, []Event{ev(0), ev(2), ev(1)})
	if len(want) != 1 || want[0] != "FAN_OPEN_PERM f: pre_content{g1} < content{g0,g2}" {
		t.Fatalf("model order %q", want)
	}
	if got := RenderPermOrder(kinds, []Event{ev(1), ev(2), ev(0)}); !slices.Equal(got, want) {
		t.Errorf("content groups in another order: %q, want %q", got, want)
	}
	for _, bad := range [][]Event{{ev(0), ev(1), ev(2)}, {ev(0), ev(2), ev(1)}} {
		if got := RenderPermOrder(kinds, bad); slices.Equal(got, want) {
			t.Errorf("delivery %v renders as the model's order %q", bad, got)
		}
	}
	if got := RenderPermOrder(kinds[:1], []Event{ev(0)}); len(got) != 0 {
		t.Errorf("one class: %q, want no line", got)
	}
}

// TestLinkErrno holds World.Link to do_linkat's order (fs/namei.c): the
// source lookup (ENOENT), filename_create (ENOENT for a missing directory,
// EEXIST for an existing name, the scenario directory "." included: the
// kernel gave EEXIST for link(f, <scenario dir>) on 6.18), then vfs_link
// (EPERM for a directory source; link(2)).
func TestLinkErrno(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		want     unix.Errno
	}{
		{"x", "n", unix.ENOENT},
		{"f", "d/n", unix.ENOENT},
		{"f", ".", unix.EEXIST},
		{"f", "s/h", unix.EEXIST},
		{"s", "s/h", unix.EEXIST},
		{"s", "n", unix.EPERM},
		{"f", "s/n", 0},
	} {
		w := NewWorld(Fixed, testTree, []GroupKind{inKind})
		if got, _ := w.Link(tc.from, tc.to); got != tc.want {
			t.Errorf("link(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}
