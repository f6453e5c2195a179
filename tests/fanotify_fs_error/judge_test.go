package main

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/fanotify"
)

func ev(pid int32, count uint32) fanotify.Event {
	return fanotify.Event{Mask: unix.FAN_FS_ERROR, Pid: pid, Info: []fanotify.Info{
		{Type: unix.FAN_EVENT_INFO_TYPE_FID},
		{Type: unix.FAN_EVENT_INFO_TYPE_ERROR, Error: int32(unix.EUCLEAN), ErrorCount: count},
	}}
}

// judgeErrorReads on the reads a kernel could give for made errors, right
// and wrong (issue 35: a merge that kept error_count at 1 must be named by
// its count; a kernel that stops merging when events arrive in separate
// reads must fail).
func TestJudgeErrorReads(t *testing.T) {
	type reads = [][]fanotify.Event
	for _, tc := range []struct {
		name    string
		batches reads
		made    uint32
		worker  bool
		want    []string // each problem's opening, in order; none: no problem
	}{
		// the older rule: one task, every error queued before the read
		{"task_merged", reads{{ev(7, 3)}}, 3, false, nil},
		{"task_count_kept_at_1", reads{{ev(7, 1)}}, 3, false, []string{"error_count 1, want 3: "}},
		{"task_not_merged", reads{{ev(7, 1), ev(7, 1), ev(7, 1)}}, 3, false, []string{"FAN_FS_ERROR events 3, want 1: "}},
		{"task_counted_twice", reads{{ev(7, 4)}}, 3, false, []string{"error_count 4, want 3: "}},
		{"task_lost", nil, 3, false, []string{"error_count 0, want 3: ", "FAN_FS_ERROR events 0, want 1: "}},
		// the newer rule: kworkers, events read as they come
		{"worker_merged_in_one_read", reads{{ev(35, 3)}}, 3, true, nil},
		{"worker_new_event_after_a_read", reads{{ev(35, 1)}, {ev(35, 2)}}, 3, true, nil},
		{"worker_two_kworkers", reads{{ev(35, 2), ev(36, 1)}}, 3, true, nil},
		{"worker_count_kept_at_1", reads{{ev(35, 1)}}, 3, true, []string{"error_count 1, want 3: "}},
		{"worker_count_kept_at_1_over_reads", reads{{ev(35, 1)}, {ev(35, 1)}}, 3, true, []string{"error_count 2, want 3: "}},
		{"worker_not_merged_in_one_read", reads{{ev(35, 1), ev(35, 1), ev(35, 1)}}, 3, true, []string{"FAN_FS_ERROR events of pid 35 in read 1: 3, want 1"}},
		{"worker_not_merged_after_a_read", reads{{ev(35, 1)}, {ev(35, 1), ev(35, 1)}}, 3, true, []string{"FAN_FS_ERROR events of pid 35 in read 2: 2, want 1"}},
		{"worker_extra", reads{{ev(35, 3)}, {ev(36, 1)}}, 3, true, []string{"error_count 4, want 3: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := judgeErrorReads(tc.batches, tc.made, tc.worker)
			if len(got) != len(tc.want) {
				t.Fatalf("judgeErrorReads = %q, want %d problems opening %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d = %q, want it to open with %q", i, got[i], w)
				}
			}
		})
	}
}
