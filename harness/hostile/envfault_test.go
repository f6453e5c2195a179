//go:build hostile

package hostile

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/tap"
)

// The environment-fault conditions (issue 33 item 7): a setup failure that
// is the machine's is never a kernel verdict. With no free loop device every
// ext4 leaf failed (537 not ok, 537 FAIL in KCIDB, fanotify_fs_error "exit
// status 1 although no case failed"); with fs.inotify.max_user_watches=1
// inotify_basic's mask_create_eexist.tmpfs was not ok. Now such a leaf is a
// skip whose reason begins "environment:" and names the resource and the
// errno (harness/envfault), the binary exits 4 or 0 (kselftest) and 2 with
// -exit ltp, the KCIDB export has no FAIL, and -strict fails the run.

// blockLeaf matches the path of a leaf on a loop-device filesystem.
var blockLeaf = regexp.MustCompile(`\.(ext4|xfs|btrfs)(\.|$)`)

// envfaultConditions exhaust the loop pool (seccompexec: LOOP_CTL_GET_FREE
// ENOSPC, or LOOP_CONFIGURE and LOOP_SET_FD EBUSY as when another program
// takes each device first) and lower a per-user limit.
func envfaultConditions() []condition {
	return []condition{
		loopPoolCondition("loop_pool_get_free_enospc", "ENOSPC", "LOOP_CTL_GET_FREE"),
		loopPoolCondition("loop_pool_configure_ebusy", "EBUSY", "LOOP_CONFIGURE,LOOP_SET_FD"),
		{name: "loop_pool_exhausted_strict", run: func(h *h) []string {
			// -strict counts the skips as failures, as any skip: exit 1,
			// and in KCIDB an ERROR (the case did not run), not a FAIL.
			r := h.run(60*time.Second, nil, h.sce, "-errno", "ENOSPC", "-ioctls", "LOOP_CTL_GET_FREE", "--",
				h.binary("fanotify_fs_error"), "-strict")
			p := want(!r.hung && r.code == 1, "exit: fanotify_fs_error -strict with no free loop device: status %d, want 1", r.code)
			p = append(p, want(strings.Contains(r.stdout, "# strict: skip counted as failure: environment: "),
				"unclear: -strict does not say an environment fault's skip counted as a failure")...)
			res := filepath.Join(h.tmp, "results-strict")
			rr := h.run(120*time.Second, nil, h.sce, "-errno", "ENOSPC", "-ioctls", "LOOP_CTL_GET_FREE", "--",
				h.binary("fsnsuite"), "-strict", "-run", "^fanotify_fs_error$", "-results", res)
			p = append(p, want(!rr.hung && rr.code == 1, "exit: fsnsuite -strict with no free loop device: status %d, want 1", rr.code)...)
			return append(p, kcidbNoFail(h, res, "ERROR")...)
		}},
		{name: "limit_inotify_max_user_watches_1_mask_create", run: func(h *h) []string {
			// The limit is global and per user: lowered for one short
			// binary run (two cases) only. The first watch of the case
			// fits; the one IN_MASK_CREATE makes on a second file does not.
			return withSysctl("fs.inotify.max_user_watches", "1", func() []string {
				r := h.run(60*time.Second, nil, h.binary("inotify_basic"), "-run", "^mask_create")
				p := append(audit(r), unclear(r)...)
				p = append(p, want(!r.hung && r.code != 1, "exit: inotify_basic -run mask_create with max_user_watches=1: status 1%s", failedNames(r))...)
				return append(p, leavesSkipSaying(r, nil, "fs.inotify.max_user_watches=1")...)
			})
		}},
	}
}

// loopPoolCondition runs fanotify_fs_error (ext4 only) and inotify_basic's
// create_in_dir (tmpfs and ext4) with every loop device refused by
// ioctls failing with errno, under both exit conventions, then the runner
// over both and its KCIDB export.
func loopPoolCondition(name, errno, ioctls string) condition {
	return condition{name: name, run: func(h *h) []string {
		sec := func(bin string, args ...string) result {
			return h.run(120*time.Second, nil, h.sce, append([]string{"-errno", errno, "-ioctls", ioctls, "--", h.binary(bin)}, args...)...)
		}
		saying := []string{"environment: ", "no free loop device", errno}
		var p []string
		for _, tc := range []struct {
			bin  string
			args []string
			// statuses by convention: every case skipped (fs_error), or
			// the tmpfs one passed beside the skipped ext4 one.
			kself int
		}{
			{"fanotify_fs_error", nil, 4},
			{"inotify_basic", []string{"-run", "^create_in_dir"}, 0},
		} {
			r := sec(tc.bin, tc.args...)
			p = append(p, audit(r)...)
			p = append(p, want(!r.hung && r.code == tc.kself, "exit: %s with no free loop device (%s): status %d, want %d", tc.bin, errno, r.code, tc.kself)...)
			p = append(p, leavesSkipSaying(r, blockLeaf.MatchString, saying...)...)
			r = sec(tc.bin, append([]string{"-exit", "ltp"}, tc.args...)...)
			p = append(p, want(!r.hung && r.code == 2, "exit: %s -exit ltp with no free loop device (%s): status %d, want 2 (broken)", tc.bin, errno, r.code)...)
			p = append(p, leavesSkipSaying(r, blockLeaf.MatchString, saying...)...)
		}
		// The runner over both: a skip, not a failure; LTP's broken.
		for _, conv := range []string{"kselftest", "ltp"} {
			res := filepath.Join(h.tmp, "results-"+conv)
			r := h.run(180*time.Second, nil, h.sce, "-errno", errno, "-ioctls", ioctls, "--", h.binary("fsnsuite"),
				"-exit", conv, "-run", "^(fanotify_fs_error|inotify_basic)$", "-case", "^(create_in_dir|ext4_error_records)", "-results", res)
			wantCode := 0
			if conv == "ltp" {
				wantCode = 2
			}
			p = append(p, want(!r.hung && r.code == wantCode, "exit: fsnsuite -exit %s with no free loop device (%s): status %d, want %d: %s", conv, errno, r.code, wantCode, lastLines(r.stderr, 3))...)
			p = append(p, want(!strings.Contains(r.stderr, "although no case failed"), "unclear: the runner says a binary exited 1 although no case failed")...)
			p = append(p, kcidbNoFail(h, res, "SKIP")...)
		}
		return p
	}}
}

// leavesSkipSaying checks that every leaf whose dotted path match accepts
// (every leaf when match is nil) is a skip whose reason contains each of
// words, and that no leaf at all is not ok.
func leavesSkipSaying(r result, match func(string) bool, words ...string) []string {
	var p []string
	n := 0
	tap.ParseString(r.stdout).Walk(func(path []string, l *tap.Node) {
		name := strings.Join(path, ".")
		if l.Status.Failed() {
			p = append(p, fmt.Sprintf("skip reason: %s is %s, want a skip saying %q", name, l.Status, words))
			return
		}
		if match != nil && !match(name) {
			return
		}
		n++
		ok := l.Status == tap.StatusSkip
		for _, w := range words {
			ok = ok && strings.Contains(l.Reason, w)
		}
		if !ok {
			p = append(p, fmt.Sprintf("skip reason: %s: %s %q, want a skip saying %q", name, l.Status, l.Reason, words))
		}
	})
	if n == 0 {
		p = append(p, fmt.Sprintf("skip reason: no leaf to check (exit %d): %q", r.code, lastLines(r.stdout, 3)))
	}
	if len(p) > 3 {
		p = append(p[:3], fmt.Sprintf("... %d more", len(p)-3))
	}
	return p
}

// kcidbNoFail exports the results directory res as KCIDB and checks that no
// test is FAIL and that the loop-device filesystems' leaves are envStatus.
func kcidbNoFail(h *h, res, envStatus string) []string {
	r := h.run(30*time.Second, nil, h.binary("fsnsuite"), "export", "-kcidb", res)
	if r.code != 0 {
		return []string{fmt.Sprintf("exit: fsnsuite export -kcidb %s: status %d: %s", res, r.code, lastLines(r.stderr, 2))}
	}
	var doc struct {
		Tests []struct {
			Path   string `json:"path"`
			Status string `json:"status"`
		} `json:"tests"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		return []string{"exit: fsnsuite export -kcidb: " + err.Error()}
	}
	var p []string
	block := 0
	for _, t := range doc.Tests {
		if t.Status == "FAIL" {
			p = append(p, fmt.Sprintf("false fail: KCIDB %s is FAIL", t.Path))
		}
		if blockLeaf.MatchString(t.Path) {
			block++
			if t.Status != envStatus {
				p = append(p, fmt.Sprintf("exit: KCIDB %s is %s, want %s", t.Path, t.Status, envStatus))
			}
		}
	}
	p = append(p, want(block > 0, "setup: the KCIDB export has no ext4 test (%d tests)", len(doc.Tests))...)
	if len(p) > 3 {
		p = append(p[:3], fmt.Sprintf("... %d more", len(p)-3))
	}
	return p
}
