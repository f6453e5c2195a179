package runner

import (
	"strings"
	"testing"

	"github.com/fsnsuite/fsnsuite/tap"
)

// The diagnostics below are copied from real results.tap files of this
// suite's binaries (the expectation inverted in a scratch copy to make them
// fail, or a planted model fault), paths shortened.
func TestStatementRealShapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leaf  string
		diags []string
		want  string
	}{{
		name: "errno: the call's result against what was wanted",
		leaf: "mark_internal_pseudo_fs",
		diags: []string{
			`mark_internal_pseudo_fs (tmpfs): inode mark FAN_MODIFY on a pipe: fanotify_mark(FAN_MARK_ADD, FAN_MODIFY, "/proc/self/fd/7"): invalid argument, want it accepted (only mount and filesystem marks are refused on SB_NOUSER)`,
		},
		want: `inode mark FAN_MODIFY on a pipe: fanotify_mark(FAN_MARK_ADD, FAN_MODIFY, "/proc/self/fd/7"): invalid argument, want it accepted (only mount and filesystem marks are refused on SB_NOUSER)`,
	}, {
		name: "events differ: did, want and got folded in, not the go-cmp dump",
		leaf: "inode_mark_file.tmpfs",
		diags: []string{
			"fanotify_basic: fanotify(7) inode/mount/filesystem marks, FID records, mark flags and queue overflow",
			"kernel 6.18.44-fc-v1272",
			"an inode mark on a file reports open, modify, access and both closes with the actor's pid and an fd for the file; a sibling is not reported",
			"inode_mark_file.tmpfs (tmpfs): events differ",
			"  did:  inode mark on f OPEN|ACCESS|MODIFY|CLOSE; write 1 byte",
			"  want: [0] FAN_ACCESS /m/inode_mark_file.1/f pid=17524",
			"  got:  [0] FAN_MODIFY /m/inode_mark_file.1/f pid=17524",
			"  diff (-want +got):",
			"      []fanotify.Event{",
			"      \t{",
			`    - 		Mask: Inverse(mask, string("FAN_ACCESS")),`,
			`    + 		Mask: Inverse(mask, string("FAN_MODIFY")),`,
			"      \t},",
			"      }",
			`HINT: kernel may lack 4f0b903ded72 ("fsnotify: fix merge with parent's ignored mask")`,
		},
		want: "events differ; did: inode mark on f OPEN|ACCESS|MODIFY|CLOSE; write 1 byte; want: [0] FAN_ACCESS /m/inode_mark_file.1/f pid=17524; got: [0] FAN_MODIFY /m/inode_mark_file.1/f pid=17524",
	}, {
		name: "events differ with expect's changed: block: did and changed, not the lists (a patchcheck of a patch that skips FAN_OPEN_PERM after FAN_OPEN_EXEC_PERM on 7.3)",
		leaf: "filesystem_allow",
		diags: []string{
			"events differ",
			"  did:  group CLASS_CONTENT; filesystem mark FAN_OPEN_PERM|FAN_OPEN_EXEC_PERM; actor execve /m/execve_mask_exec_perm_open_perm.48/prog; answer allow",
			"  changed: event count 1, want 2",
			"           want [1] not received: FAN_OPEN_PERM /m/execve_mask_exec_perm_open_perm.48/prog pid=4748",
			"  want: [0] FAN_OPEN_EXEC_PERM /m/execve_mask_exec_perm_open_perm.48/prog pid=4748",
			"        [1] FAN_OPEN_PERM /m/execve_mask_exec_perm_open_perm.48/prog pid=4748",
			"  got:  [0] FAN_OPEN_EXEC_PERM /m/execve_mask_exec_perm_open_perm.48/prog pid=4748",
			"  diff (-want +got):",
			"      []fanotify.Event{",
			"      }",
		},
		want: "events differ; did: group CLASS_CONTENT; filesystem mark FAN_OPEN_PERM|FAN_OPEN_EXEC_PERM; actor execve /m/execve_mask_exec_perm_open_perm.48/prog; answer allow; " +
			"changed: event count 1, want 2; want [1] not received: FAN_OPEN_PERM /m/execve_mask_exec_perm_open_perm.48/prog pid=4748",
	}, {
		name: "events differ with several events",
		leaf: "x.tmpfs",
		diags: []string{
			"x.tmpfs (tmpfs): events differ",
			"  did:  open f",
			"  want: [0] FAN_OPEN f pid=1",
			"        [1] FAN_CLOSE_NOWRITE f pid=1",
			"  got:  no event",
		},
		want: "events differ; did: open f; want: [0] FAN_OPEN f pid=1, [1] FAN_CLOSE_NOWRITE f pid=1; got: no event",
	}, {
		name: "the count that changed, not the log line about the event's pid after it",
		leaf: "errors_merge_into_count",
		diags: []string{
			"errors_merge_into_count: 3 lookups of the corrupted inode (expected from a kworker: fserror_report in /proc/kallsyms): the events' error_count add up to 1 within 5s of the last failing call, want 3",
			"event pid 35: kworker/1:1-mm_percpu_wq, ppid 2, a kernel thread",
		},
		want: "3 lookups of the corrupted inode (expected from a kworker: fserror_report in /proc/kallsyms): the events' error_count add up to 1 within 5s of the last failing call, want 3",
	}, {
		name:  "a subtest's errno",
		leaf:  "init1_unknown_flag",
		diags: []string{"init1_unknown_flag: succeeded, want EINVAL"},
		want:  "succeeded, want EINVAL",
	}, {
		name: "a log line first, a failure in other words last",
		leaf: "kernel_memory_released_fanotify_group",
		diags: []string{
			"kernel_memory_released_fanotify_group (tmpfs): control: 32 objects held at once charged 65032 bytes",
			"8192 fanotify_group objects made and closed one at a time left 8487168 bytes charged, want under 524288",
		},
		want: "8192 fanotify_group objects made and closed one at a time left 8487168 bytes charged, want under 524288",
	}, {
		name: "the explorer: the mismatch and what differs, not the closing case row",
		leaf: "scenarios.tmpfs",
		diags: []string{
			"scenarios.tmpfs (tmpfs): seed 184 (tmpfs): the kernel and the model differ at step 11 of 11 (1 groups):",
			"  g0 = dfid_name",
			"  1. g0 fanotify_mark(FAN_MARK_ADD, FAN_ATTRIB|FAN_CLOSE_WRITE|FAN_OPEN|FAN_CREATE|FAN_DELETE|FAN_EVENT_ON_CHILD, .)",
			"  11. actor write g",
			"  at step 11 (actor write g):",
			"    result want: ok",
			"    result got:  ok",
			"    g0 want: g0 FAN_CLOSE_WRITE|FAN_OPEN g (dfid_name)  <- differs",
			"    g0 got:  g0 FAN_CLOSE_WRITE g (dfid_name)",
			"  reproduced (the same difference at the same step) on 3 of 3 replays",
			"shrunk to 3 steps, 1 groups:",
			"  g0 = dfid_name",
			"replay: fsnotify_explore -seed 184 -n 1 -run 'scenarios.tmpfs' -v",
			"case row for tests/fsnotify_explore/regressions.go:",
			"{",
			"\tName: \"seed184\",",
			"}}},",
		},
		want: "seed 184 (tmpfs): the kernel and the model differ at step 11 of 11 (1 groups); g0 want: g0 FAN_CLOSE_WRITE|FAN_OPEN g (dfid_name); g0 got: g0 FAN_CLOSE_WRITE g (dfid_name)",
	}, {
		name: "the explorer's replay: the first difference, not the note counting them before the log",
		leaf: "scenarios.tmpfs",
		diags: []string{
			"fsnotify_explore: seeded random fsnotify scenarios checked against the model oracle, shrunk on a mismatch",
			"kernel 7.3.4-fsnp-x-01234567",
			"a fixed seed range of random scenarios: every mark errno, watch descriptor and event equals the model's (harness/model)",
			"0 scenarios (0 steps) in 0.0s: no rate; model rules hit 0/44, distinct rule paths 0; kinds notif,inotify,content,pre_content,fid,dfid_name",
			"against /explore-base.json (7.3.4-fsnbase): 30 scenarios, 3 differ; 0 not replayed for lack of a feature here (group kinds missing: [])",
			"scenarios.tmpfs (tmpfs): seed 1 (tmpfs): 7.3.4-fsnbase (recorded) and 7.3.4-fsnp-x-01234567 (here) differ at step 5 of 7 (g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORE, FAN_ACCESS|FAN_ONDIR, s)): recorded result: EINVAL; here result: ok",
			"  g0 = pre_content",
			"  1. g0 fanotify_mark(FAN_MARK_REMOVE, FAN_MODIFY, .)",
			"seed 3 (tmpfs): 7.3.4-fsnbase (recorded) and 7.3.4-fsnp-x-01234567 (here) differ at step 4 of 11 (x): recorded result: EINVAL; here result: ok",
		},
		want: "seed 1 (tmpfs): 7.3.4-fsnbase (recorded) and 7.3.4-fsnp-x-01234567 (here) differ at step 5 of 7 (g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORE, FAN_ACCESS|FAN_ONDIR, s)): recorded result: EINVAL; here result: ok",
	}, {
		name: "a note that says 'differ' before a log line that names no want: the log line",
		leaf: "x.ext4",
		diags: []string{
			"3 runs differ in timing only",
			"x.ext4 (ext4): fanotify_init: operation not permitted",
			"no kernel HINT: the machine, not the kernel, stopped part of this case",
		},
		want: "fanotify_init: operation not permitted",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			n := &tap.Node{Name: tc.leaf, Status: tap.StatusFail, Diagnostics: tc.diags}
			if got := FullStatement(n); got != tc.want {
				t.Errorf("statement\n got: %s\nwant: %s", got, tc.want)
			}
			if strings.HasPrefix(Statement(n), "HINT") {
				t.Errorf("statement is the HINT")
			}
		})
	}
}
