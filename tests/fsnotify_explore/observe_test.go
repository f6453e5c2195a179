package main

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// TestInotifyOrderAndDuplicates: the comparison sees an inotify instance's
// events in queue order and count. A kernel that reversed them, or
// delivered one twice in a row (inotify_merge drops an event identical to
// the queue's tail, inotify(7): "coalesced into a single event"), differs
// from the model; the model's own identical successive events are merged
// as inotify_merge does.
func TestInotifyOrderAndDuplicates(t *testing.T) {
	kinds := []model.GroupKind{{Name: "inotify", Inotify: true}, {Name: "notif"}}
	seq := []model.Event{
		{Group: 0, Obj: ".", Name: "f", Mask: unix.IN_MOVED_FROM},
		{Group: 1, Obj: "f", Mask: unix.FAN_MODIFY},
		{Group: 0, Obj: ".", Name: "g", Mask: unix.IN_MOVED_TO},
		{Group: 0, Obj: "f", Mask: unix.IN_MOVE_SELF},
	}
	want := observe(kinds, "", model.InotifyMerge(kinds, seq))
	if len(want) != 4 {
		t.Fatalf("want 3 inotify lines and 1 fanotify line, got %d: %s", len(want), want)
	}
	rev := slices.Clone(seq)
	slices.Reverse(rev)
	var twice []model.Event
	for _, e := range seq {
		twice = append(twice, e, e)
	}
	for name, got := range map[string][]model.Event{
		"reversed":            rev,
		"each twice in a row": twice,
		"the list twice":      append(slices.Clone(seq), seq...),
	} {
		if o := observe(kinds, "", got); slices.Equal(o, want) {
			t.Errorf("kernel events %s compare equal to the model's: %s", name, o)
		}
	}
	// The other group's events may come in any order between groups.
	other := []model.Event{seq[1], seq[0], seq[2], seq[3]}
	if o := observe(kinds, "", other); !slices.Equal(o, want) {
		t.Errorf("order between groups compared: got %s, want %s", o, want)
	}
	// The model's identical successive events are one, as the kernel's queue makes them.
	if o := observe(kinds, "", model.InotifyMerge(kinds, twice)); !slices.Equal(o, want) {
		t.Errorf("InotifyMerge left duplicates: got %s, want %s", o, want)
	}
	// event_compare never merges into a queued IN_IGNORED.
	ign := model.Event{Group: 0, Obj: "f", Mask: unix.IN_IGNORED}
	if got := model.InotifyMerge(kinds, []model.Event{ign, ign}); len(got) != 2 {
		t.Errorf("InotifyMerge merged two IN_IGNORED: %v", got)
	}
}

// TestFanotifyUnmerged: two events of one read with the same object, pid
// and bit are flagged (fanotify_should_merge would have merged them);
// permission events, other pids, FAN_ONDIR and other objects are not.
func TestFanotifyUnmerged(t *testing.T) {
	fid := []fanotify.Info{{Type: unix.FAN_EVENT_INFO_TYPE_FID, Handle: "01"}}
	mod := fanotify.Event{Mask: unix.FAN_MODIFY, Pid: 7, Info: fid}
	cases := []struct {
		name string
		evs  []fanotify.Event
		want []uint64
	}{
		{"same event twice", []fanotify.Event{mod, mod}, []uint64{0, unix.FAN_MODIFY}},
		{"one bit again", []fanotify.Event{mod, {Mask: unix.FAN_MODIFY | unix.FAN_CLOSE_WRITE, Pid: 7, Info: fid}}, []uint64{0, unix.FAN_MODIFY}},
		{"other bits", []fanotify.Event{mod, {Mask: unix.FAN_CLOSE_WRITE, Pid: 7, Info: fid}}, []uint64{0, 0}},
		{"other pid", []fanotify.Event{mod, {Mask: unix.FAN_MODIFY, Pid: 8, Info: fid}}, []uint64{0, 0}},
		{"other object", []fanotify.Event{mod, {Mask: unix.FAN_MODIFY, Pid: 7, Info: []fanotify.Info{{Type: unix.FAN_EVENT_INFO_TYPE_FID, Handle: "02"}}}}, []uint64{0, 0}},
		{"FAN_ONDIR differs", []fanotify.Event{mod, {Mask: unix.FAN_MODIFY | unix.FAN_ONDIR, Pid: 7, Info: fid}}, []uint64{0, 0}},
		{"permission events", []fanotify.Event{{Mask: unix.FAN_ACCESS_PERM, Pid: 7, Path: "/f"}, {Mask: unix.FAN_ACCESS_PERM, Pid: 7, Path: "/f"}}, []uint64{0, 0}},
		{"FAN_RENAME", []fanotify.Event{{Mask: unix.FAN_RENAME, Pid: 7, Info: fid}, {Mask: unix.FAN_RENAME, Pid: 7, Info: fid}}, []uint64{0, 0}},
		{"same path", []fanotify.Event{{Mask: unix.FAN_ACCESS, Pid: 7, Path: "/f"}, {Mask: unix.FAN_ACCESS, Pid: 7, Path: "/f"}}, []uint64{0, unix.FAN_ACCESS}},
	}
	for _, tc := range cases {
		if got := unmerged(tc.evs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: unmerged = %#x, want %#x", tc.name, got, tc.want)
		}
	}
}
