package expect

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
)

// errEvent is a FAN_FS_ERROR event as fanotify_fs_error reads it: a FID
// record, then an ERROR record with count.
func errEvent(pid int32, count uint32) fanotify.Event {
	return fanotify.Event{Mask: unix.FAN_FS_ERROR, Pid: pid, Info: []fanotify.Info{
		{Type: unix.FAN_EVENT_INFO_TYPE_FID, Fsid: [2]int32{1, 2}, HandleType: 1, Handle: "0a0b"},
		{Type: unix.FAN_EVENT_INFO_TYPE_ERROR, Error: int32(unix.EUCLEAN), ErrorCount: count},
	}}
}

// A mismatch report names every differing field, counts and masks before
// pids, names and descriptors (issue 35: an FS_ERROR merge that kept
// error_count at 1 was reported as "event pid 35: kworker/1:1 ...").
func TestChangedNamesEveryFieldCountsFirst(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want []fanotify.Event
		// lines, in order, each a substring of the changed: block's
		// lines; none is the block must be absent.
		lines []string
	}{
		{"count_only", []fanotify.Event{errEvent(35, 1)}, []fanotify.Event{errEvent(35, 3)},
			[]string{"[0] info[1] ERROR error_count 1, want 3"}},
		{"mask_only",
			[]fanotify.Event{{Mask: unix.FAN_CLOSE_NOWRITE, Pid: 7, Path: "/m/f"}},
			[]fanotify.Event{{Mask: unix.FAN_OPEN, Pid: 7, Path: "/m/f"}},
			[]string{"[0] mask FAN_CLOSE_NOWRITE, want FAN_OPEN"}},
		{"pid_only", []fanotify.Event{errEvent(35, 3)}, []fanotify.Event{errEvent(4123, 3)},
			[]string{"[0] pid 35, want 4123"}},
		{"several_fields_ranked",
			[]fanotify.Event{func() fanotify.Event {
				e := errEvent(35, 1)
				e.Path = "/m/x"
				e.Mask = unix.FAN_FS_ERROR | unix.FAN_ONDIR
				e.Info[0].Handle = "ffff"
				e.Info[1].Error = int32(unix.ESHUTDOWN)
				return e
			}()},
			[]fanotify.Event{func() fanotify.Event { e := errEvent(4123, 3); e.Path = "/m/f"; return e }()},
			[]string{"[0] info[1] ERROR error_count 1, want 3; mask FAN_FS_ERROR|FAN_ONDIR, want FAN_FS_ERROR; info[1] ERROR error " +
				"108, want 117; info[0] FID handle \"ffff\", want \"0a0b\"; pid 35, want 4123; path \"/m/x\", want \"/m/f\""}},
		{"record_missing",
			[]fanotify.Event{{Mask: unix.FAN_FS_ERROR, Pid: 35, Info: errEvent(0, 0).Info[:1]}},
			[]fanotify.Event{errEvent(35, 1)},
			[]string{"[0] info records 1, want 2"}},
		{"event_count_and_missing_event",
			[]fanotify.Event{{Mask: unix.FAN_OPEN, Pid: 7}, {Mask: unix.FAN_CLOSE_NOWRITE, Pid: 8}},
			[]fanotify.Event{{Mask: unix.FAN_OPEN, Pid: 7}, {Mask: unix.FAN_ACCESS, Pid: 7}, {Mask: unix.FAN_CLOSE_NOWRITE, Pid: 7}},
			[]string{"event count 2, want 3", "[1] (want [2]) pid 8, want 7", "want [1] not received: "}},
		{"extra_event",
			[]fanotify.Event{errEvent(35, 1), errEvent(36, 1)},
			[]fanotify.Event{errEvent(35, 1)},
			[]string{"event count 2, want 1", "got [1] not wanted: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := FanotifyEqual(tc.got, tc.want)
			block, _, found := strings.Cut(r, "  want: ")
			if !found || !strings.HasPrefix(block, "  changed: ") {
				t.Fatalf("report does not open with the changed fields:\n%s", r)
			}
			ls := strings.Split(strings.TrimRight(block, "\n"), "\n")
			if len(ls) != len(tc.lines) {
				t.Fatalf("changed block has %d lines, want %d:\n%s", len(ls), len(tc.lines), block)
			}
			for i, w := range tc.lines {
				if !strings.Contains(ls[i], w) {
					t.Errorf("changed line %d = %q, want it to contain %q", i, ls[i], w)
				}
			}
		})
	}
}

// inotify events name their fields the same way; an equal list has no block.
func TestChangedInotify(t *testing.T) {
	got := []inotify.Event{{Wd: 1, Mask: unix.IN_CREATE, Name: "b"}}
	want := []inotify.Event{{Wd: 1, Mask: unix.IN_CREATE | unix.IN_ISDIR, Name: "a"}}
	r := InotifyEqual(got, want)
	if !strings.HasPrefix(r, "  changed: [0] mask IN_CREATE, want IN_CREATE|IN_ISDIR; name \"b\", want \"a\"\n") {
		t.Errorf("report:\n%s", r)
	}
	if c := changed(got, got); c != "" {
		t.Errorf("changed(equal lists) = %q", c)
	}
}

// Lists longer than longList name the first differing event's fields too.
func TestChangedLongList(t *testing.T) {
	var got, want []fanotify.Event
	for i := 0; i < longList+5; i++ {
		got = append(got, fanotify.Event{Mask: unix.FAN_MODIFY, Pid: 7})
		want = append(want, fanotify.Event{Mask: unix.FAN_MODIFY, Pid: 7})
	}
	got[10].Mask = unix.FAN_CLOSE_WRITE
	r := FanotifyEqual(got, want)
	if !strings.HasPrefix(r, "  changed: [10] mask FAN_CLOSE_WRITE, want FAN_MODIFY\n") {
		t.Errorf("report:\n%s", r)
	}
}

// align pairs unequal events between equal ones and leaves the rest over.
func TestAlign(t *testing.T) {
	pairs, missing, extra := align([]int{1, 9, 3, 4}, []int{1, 2, 3, 5, 4}, cmp.Options{})
	if len(pairs) != 1 || pairs[0] != [2]int{1, 1} || len(missing) != 1 || missing[0] != 3 || len(extra) != 0 {
		t.Errorf("align = %v, %v, %v", pairs, missing, extra)
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"ErrorCount": "error_count", "MntID": "mnt_id", "Pid": "pid", "HandleType": "handle_type", "PidfdPid": "pidfd_pid"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}
