// Command perf_modify_overhead measures what marks that do not ask for FS_MODIFY cost
// a 1-byte pwrite loop on tmpfs, against a file without a mark, side by side in one
// process (the ioloop benchmark of Amir Goldstein's "Fsnotify ignored mask related
// fixes" v2, turned into a gate).
//
// Before 04e317ba72d0 ("fsnotify: optimize FS_MODIFY events with no ignored masks")
// every write to a marked file entered fsnotify() and walked its marks, in case an
// ignore mask had to be cleared: about 25% more time per write with a DELETE_SELF
// mark. Since then fsnotify_calc_mask() adds FS_MODIFY to an object's interest only
// for a mark with an ignore mask that does not survive modification, and fsnotify()
// returns at once for other marks. So:
//   - an inotify IN_DELETE_SELF watch, a fanotify FAN_DELETE_SELF mark and a legacy
//     ignore mask with FAN_MARK_IGNORED_SURV_MODIFY must cost at most 3%;
//   - a legacy ignore mask without SURV_MODIFY keeps FS_MODIFY in the interest mask on
//     purpose (the write must clear the ignore mask): its cost is reported, not gated.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/perf"
)

const suite = "perf_modify_overhead"

// opsPerRun is the number of writes in one timed run in the quick profile (about
// 3.5 ms here); -profile full multiplies it.
const opsPerRun = 2000

// maxOverhead is the gate: a mark that does not want FS_MODIFY costs at most 3%.
const maxOverhead = 1.03

var fix = &harness.Fix{Commit: "04e317ba72d0", Subject: "fsnotify: optimize FS_MODIFY events with no ignored masks"}

const gateWhy = "gate: since 04e317ba72d0 FS_MODIFY is not in the object's interest mask for this mark, so fsnotify() returns before walking marks"

func main() {
	harness.Main(harness.Suite{
		Name:        suite,
		Timeout:     perf.CaseTimeout,
		Doc:         "1-byte pwrite loop on tmpfs: a mark that does not ask for FS_MODIFY costs at most 3% over no mark",
		Filesystems: []string{"tmpfs"},
		Cases: []harness.Case{
			{
				Name:  "inotify_delete_self",
				Doc:   "an IN_DELETE_SELF watch on the written file costs <= 3% per write",
				Needs: []*feature.Feature{feature.Inotify},
				Fix:   fix,
				Run: func(t *harness.T) {
					measure(t, "delete_self", perf.Gate{Max: maxOverhead, Why: gateWhy}, func(path string) int {
						in := t.Inotify(0)
						if _, err := in.AddWatch(path, unix.IN_DELETE_SELF); err != nil {
							t.Fatalf("%v", err)
						}
						return in.Fd()
					})
				},
			},
			{
				Name:  "fanotify_delete_self",
				Doc:   "a FAN_DELETE_SELF inode mark on the written file costs <= 3% per write",
				Needs: []*feature.Feature{feature.Fanotify, feature.ReportFID},
				Fix:   fix,
				Run: func(t *harness.T) {
					measure(t, "delete_self", perf.Gate{Max: maxOverhead, Why: gateWhy}, func(path string) int {
						g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
						if err := g.Add(0, unix.FAN_DELETE_SELF, path); err != nil {
							t.Fatalf("%v", err)
						}
						return g.Fd()
					})
				},
			},
			{
				Name:  "fanotify_ignore_surv_modify",
				Doc:   "a legacy ignore mask with FAN_MARK_IGNORED_SURV_MODIFY costs <= 3% per write",
				Needs: []*feature.Feature{feature.Fanotify},
				Fix:   fix,
				Run: func(t *harness.T) {
					var g *fanotify.Group
					measure(t, "ignore_surv", perf.Gate{Max: maxOverhead,
						Why: "gate: fsnotify_calc_mask() adds FS_MODIFY only for an ignore mask that does not survive modify; this one does, so writes skip fsnotify() as with no ignore mask"},
						func(path string) int {
							g = t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
							if err := g.Add(unix.FAN_MARK_IGNORED_MASK|unix.FAN_MARK_IGNORED_SURV_MODIFY, unix.FAN_OPEN, path); err != nil {
								t.Fatalf("%v", err)
							}
							return g.Fd()
						})
					// fanotify_mark(2) FAN_MARK_IGNORED_SURV_MODIFY: the ignore mask
					// is not cleared by modify events.
					wantIgnoredMask(t, g, unix.FAN_OPEN, "a surviving ignore mask outlives the writes")
				},
			},
			{
				Name:  "fanotify_ignore_legacy",
				Doc:   "a legacy ignore mask without SURV_MODIFY: every write walks the marks to clear it (reported, not gated)",
				Needs: []*feature.Feature{feature.Fanotify},
				Run: func(t *harness.T) {
					var g *fanotify.Group
					measure(t, "ignore", perf.Gate{
						Why: "no gate on the cost: with an ignore mask that FS_MODIFY clears, fsnotify_calc_mask() keeps FS_MODIFY in the interest mask by design, so each write takes the srcu lock and walks the marks (the cost 04e317ba72d0 removed for every other mark)"},
						func(path string) int {
							g = t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
							if err := g.Add(unix.FAN_MARK_IGNORED_MASK, unix.FAN_OPEN, path); err != nil {
								t.Fatalf("%v", err)
							}
							return g.Fd()
						})
					// fanotify_mark(2) FAN_MARK_IGNORED_SURV_MODIFY: without it "the
					// ignore mask is cleared when a modify event occurs for the
					// ignored file": the measured writes must have cleared it, which
					// is what makes this condition walk the marks.
					wantIgnoredMask(t, g, 0, "the writes cleared the non-surviving ignore mask")
				},
			},
		},
	})
}

// measure creates two 4 KiB files in the case directory, marks the second with mark
// (which returns the inotify or fanotify fd), and compares 1-byte pwrite loops on
// them. The mark as the kernel shows it in fdinfo is printed before and after: an
// ignore mask that FS_MODIFY clears reads ignored_mask:0 afterwards, which shows that
// the writes did reach the marks.
func measure(t *harness.T, cond string, gate perf.Gate, mark func(path string) int) {
	dir := t.Dir()
	path := filepath.Join(dir, cond)
	create(t, filepath.Join(dir, "none"))
	create(t, path)
	// Mark first, open for writing after (both files alike): fanotify silently adds
	// no ignore mask without FAN_MARK_IGNORED_SURV_MODIFY to an inode open for write.
	nfd := mark(path)
	none := openWrite(t, filepath.Join(dir, "none"))
	marked := openWrite(t, path)
	t.Notef("mark before: %s", fdinfoMarks(nfd))
	defer func() { t.Notef("mark after:  %s", fdinfoMarks(nfd)) }()
	perf.Check(t, &perf.Experiment{
		Suite:     suite,
		Name:      t.Name(),
		Base:      perf.Condition{Name: "none", Run: pwriteLoop(none)},
		Cond:      perf.Condition{Name: cond, Run: pwriteLoop(marked)},
		OpsPerRun: opsPerRun,
		Gate:      gate,
		FSPath:    dir,
	})
}

// wantIgnoredMask fails the case unless the group's one mark has the given
// ignore mask after the measurement (read from /proc/self/fdinfo). Only a gate
// run writes to the marked file: -aa and -inject measure the unmarked one twice.
func wantIgnoredMask(t *harness.T, g *fanotify.Group, want uint64, what string) {
	if perf.Flags.Mode() != "gate" {
		return
	}
	ms, err := g.Marks()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if len(ms) != 1 || ms[0].IgnoredMask != fanotify.Mask(want) {
		t.Errorf("after the writes: marks %v, want one with ignored_mask %s (%s)", ms, fanotify.Mask(want), what)
	}
}

// fdinfoMarks returns the mark lines of /proc/self/fdinfo/fd.
func fdinfoMarks(fd int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", fd))
	if err != nil {
		return err.Error()
	}
	var marks []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "inotify ") || strings.HasPrefix(l, "fanotify ") {
			marks = append(marks, l)
		}
	}
	return strings.Join(marks, "; ")
}

// create makes path with 4 KiB of data (and closes it).
func create(t *harness.T, path string) {
	if err := os.WriteFile(path, make([]byte, 4096), 0o644); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
}

// openWrite opens path for writing (closed at the end of the case).
func openWrite(t *harness.T, path string) int {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// pwriteLoop returns the measured loop: r.N one-byte pwrite(2) calls at offset 0,
// each followed by r.Spin iterations of calibrated extra work (-inject only). The
// call is a raw syscall: a 1-byte write to tmpfs does not block, and the measuring
// thread is locked, so the scheduler's syscall bookkeeping is left out of the loop.
func pwriteLoop(fd int) func(r *perf.Run) error {
	buf := []byte{'x'}
	p := uintptr(unsafe.Pointer(&buf[0]))
	return func(r *perf.Run) error {
		for i := 0; i < r.N; i++ {
			n, _, e := unix.RawSyscall6(unix.SYS_PWRITE64, uintptr(fd), p, 1, 0, 0, 0)
			if e != 0 || n != 1 {
				return fmt.Errorf("pwrite: %d, %w", n, e)
			}
			perf.Spin(r.Spin)
		}
		runtime.KeepAlive(buf)
		return nil
	}
}
