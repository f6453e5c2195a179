package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

var mergeCases = []harness.Case{
	{
		Name: "merge_fd_events",
		Doc:  "queued events of one process on one object merge into one event with the union of the masks; another process or another object does not",
		Run:  mergeFdEvents,
	},
	{
		Name: "merge_fid_dirent",
		// Subtests: the names its t.Run calls use, so that a skip keeps these leaves.
		Subtests: []string{"fid_same_dir", "dfid_name", "dfid_name_same_rename_twice"},
		Doc:      "FID groups merge dirent events of one dir unless one is about a subdir; DFID_NAME groups merge only same-name events; FAN_RENAME merges only with a FAN_RENAME of the same old and new names",
		Needs:    []*feature.Feature{feature.ReportDFIDName, feature.RenameEvent},
		Run:      mergeFidDirent,
	},
	{
		Name: "merge_past_other_threads",
		Doc: fmt.Sprintf("a thread's second write of a file merges with its first, still queued, although %d other threads' "+
			"events on that file were queued between them (FAN_REPORT_TID; the pid is mixed into the merge bucket's hash)", mergeOthers),
		Needs: []*feature.Feature{feature.ReportTID},
		Run:   mergePastOtherThreads,
	},
	{
		Name: "merge_name_hash_collision",
		Doc: fmt.Sprintf("DFID_NAME group: creates of %q and %q in one dir, whose events have the same merge hash on x86_64 "+
			"and arm64, stay two events (names of different lengths never merge)", collideShort, collideLong),
		Needs: []*feature.Feature{feature.ReportDFIDName},
		Run:   mergeNameHashCollision,
	},
}

// The merge rules are fanotify_should_merge (fs/notify/fanotify/fanotify.c):
// two queued events merge when they have the same type, the same pid (the
// thread group's, without FAN_REPORT_TID), and the same object (path for fd
// groups; FID for FID groups; dir FID + name for name groups); never when one
// is about a directory and the other is not (FS_ISDIR: "we do not want to
// merge dirent events referring to subdirs with dirent events referring to
// non subdirs"), never when one is FAN_RENAME and the other is not (two
// FAN_RENAME events merge when their old and new dir+name match), never for
// permission events; fanotify_merge ORs the new mask into the queued event.
// fanotify(7): "multiple events ... for the same filesystem object and
// originating from the same process may be merged". Each step drains the
// group only after all its operations, so its events are still queued when the
// next one arrives.

// mergeFdEvents: the fd-group rules above.
func mergeFdEvents(t *harness.T) {
	f, g2 := t.Path("f"), t.Path("g")
	setup.Touch(t, f, g2)
	a, b := t.Actor(), t.Actor()
	grp := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	for _, p := range []string{f, g2} {
		if err := grp.Add(0, unix.FAN_OPEN|unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE, p); err != nil {
			t.Fatalf("%v", err)
		}
	}
	write := func(who interface {
		WriteFile(string, []byte) error
	}, p string) {
		t.Helper()
		if err := who.WriteFile(p, []byte("x")); err != nil {
			t.Fatalf("write %s: %v", p, err)
		}
	}
	setup := "inode marks OPEN|MODIFY|CLOSE_WRITE on f and g"
	write(a, f)
	write(a, f)
	expect.FanotifyDrained(t, grp, setup+"; actor A writes f twice (open, write, close each)", []fanotify.Event{
		fev(unix.FAN_OPEN|unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE, a.Pid(), f),
	})
	write(a, f)
	write(b, f)
	expect.FanotifyDrained(t, grp, setup+"; actor A then actor B write f", []fanotify.Event{
		fev(unix.FAN_OPEN|unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE, a.Pid(), f),
		fev(unix.FAN_OPEN|unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE, b.Pid(), f),
	})
	write(a, f)
	write(a, g2)
	expect.FanotifyDrained(t, grp, setup+"; actor A writes f then g", []fanotify.Event{
		fev(unix.FAN_OPEN|unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE, a.Pid(), f),
		fev(unix.FAN_OPEN|unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE, a.Pid(), g2),
	})
}

// mergeFidDirent: the FID and name rules above. fanotify(7): with
// FAN_REPORT_FID a dirent event's record "identifies the modified directory";
// with FAN_REPORT_DFID_NAME the record carries the entry's name.
func mergeFidDirent(t *harness.T) {
	t.Run("fid_same_dir", func(t *harness.T) {
		dir := t.Path("fid")
		setup.Mkdir(t, dir)
		a := t.Actor()
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
		t.JudgeFIDMark(g.Add(0, unix.FAN_CREATE|unix.FAN_DELETE|unix.FAN_ONDIR, dir))
		dfid := expect.FID(t, dir)
		do(t, a.Touch(filepath.Join(dir, "a")), a.Touch(filepath.Join(dir, "b")), a.Unlink(filepath.Join(dir, "a")))
		do(t, a.Mkdir(filepath.Join(dir, "s"), 0o755), a.Mkdir(filepath.Join(dir, "t"), 0o755))
		expect.FanotifyDrained(t, g, "FID group, CREATE|DELETE|ONDIR on dir; actor creates a, b, unlinks a, makes subdirs s, t", []fanotify.Event{
			fev(unix.FAN_CREATE|unix.FAN_DELETE, a.Pid(), "", dfid),
			fev(unix.FAN_CREATE|unix.FAN_ONDIR, a.Pid(), "", dfid),
		})
	})
	t.Run("dfid_name", func(t *harness.T) {
		dir := t.Path("name")
		setup.Mkdir(t, dir)
		a := t.Actor()
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME, unix.O_RDONLY)
		t.JudgeFIDMark(g.Add(0, unix.FAN_CREATE|unix.FAN_DELETE|unix.FAN_MOVED_FROM|unix.FAN_MOVED_TO|unix.FAN_RENAME, dir))
		rec := func(typ uint8, name string) fanotify.Info { return expect.DFIDName(t, dir, name).WithType(typ) }
		do(t, a.Touch(filepath.Join(dir, "a")), a.Touch(filepath.Join(dir, "b")), a.Unlink(filepath.Join(dir, "a")))
		do(t, a.Rename(filepath.Join(dir, "b"), filepath.Join(dir, "c")), a.Rename(filepath.Join(dir, "c"), filepath.Join(dir, "b")))
		// fsnotify_move queues FAN_RENAME, then FAN_MOVED_FROM, then
		// FAN_MOVED_TO; the second rename's MOVED_FROM c merges with the
		// first's MOVED_TO c and its MOVED_TO b with b's CREATE.
		expect.FanotifyDrained(t, g, "DFID_NAME group on dir; actor creates a, b, unlinks a, renames b to c and c back to b", []fanotify.Event{
			fev(unix.FAN_CREATE|unix.FAN_DELETE, a.Pid(), "", rec(unix.FAN_EVENT_INFO_TYPE_DFID_NAME, "a")),
			fev(unix.FAN_CREATE|unix.FAN_MOVED_FROM|unix.FAN_MOVED_TO, a.Pid(), "", rec(unix.FAN_EVENT_INFO_TYPE_DFID_NAME, "b")),
			fev(unix.FAN_RENAME, a.Pid(), "", rec(unix.FAN_EVENT_INFO_TYPE_OLD_DFID_NAME, "b"), rec(unix.FAN_EVENT_INFO_TYPE_NEW_DFID_NAME, "c")),
			fev(unix.FAN_MOVED_FROM|unix.FAN_MOVED_TO, a.Pid(), "", rec(unix.FAN_EVENT_INFO_TYPE_DFID_NAME, "c")),
			fev(unix.FAN_RENAME, a.Pid(), "", rec(unix.FAN_EVENT_INFO_TYPE_OLD_DFID_NAME, "c"), rec(unix.FAN_EVENT_INFO_TYPE_NEW_DFID_NAME, "b")),
		})
	})
	// Two FAN_RENAME events with the same old and new dir+name are equal to
	// fanotify_info_equal (it compares both names and both dir handles), so
	// the second merges into the first, as the MOVED_FROM/MOVED_TO ones do.
	t.Run("dfid_name_same_rename_twice", func(t *harness.T) {
		dir := t.Path("twice")
		setup.Mkdir(t, dir)
		b, c := filepath.Join(dir, "b"), filepath.Join(dir, "c")
		setup.Touch(t, b)
		a := t.Actor()
		g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME, unix.O_RDONLY)
		t.JudgeFIDMark(g.Add(0, unix.FAN_CREATE|unix.FAN_MOVED_FROM|unix.FAN_MOVED_TO|unix.FAN_RENAME, dir))
		rec := func(typ uint8, name string) fanotify.Info { return expect.DFIDName(t, dir, name).WithType(typ) }
		do(t, a.Rename(b, c), a.Touch(b), a.Rename(b, c))
		expect.FanotifyDrained(t, g, "DFID_NAME group on dir; actor renames b to c, creates b, renames b over c", []fanotify.Event{
			fev(unix.FAN_RENAME, a.Pid(), "", rec(unix.FAN_EVENT_INFO_TYPE_OLD_DFID_NAME, "b"), rec(unix.FAN_EVENT_INFO_TYPE_NEW_DFID_NAME, "c")),
			fev(unix.FAN_MOVED_FROM|unix.FAN_CREATE, a.Pid(), "", rec(unix.FAN_EVENT_INFO_TYPE_DFID_NAME, "b")),
			fev(unix.FAN_MOVED_TO, a.Pid(), "", rec(unix.FAN_EVENT_INFO_TYPE_DFID_NAME, "c")),
		})
	})
}

// mergeOthers is more threads than the events fanotify_merge looks at in a
// bucket (FANOTIFY_MAX_MERGE_EVENTS, 128, since 5.13).
const mergeOthers = 160

// mergePastOtherThreads: since 5.13 (94e00d28a680 "fsnotify: use hash table
// for faster events merge", 7e3e5c694399 "fanotify: limit number of event
// merge attempts") fanotify_merge looks for the event to merge with only
// among the newest FANOTIFY_MAX_MERGE_EVENTS (128) events of the new event's
// hash bucket, and fanotify_alloc_event mixes the pid into that hash
// ("Mix event info, FAN_ONDIR flag and pid into event merge key"), so other
// threads' events on the same object spread over the 128 buckets. Thread A
// writes f, 160 other threads write f once each, A writes f again: A's
// second FAN_MODIFY merges into its first (same type, pid and path:
// fanotify_should_merge), and each other thread's event stays its own (its
// pid differs). Older kernels scan the whole queue and merge as well. A
// kernel that leaves the pid out of the hash puts all 161 events in one
// bucket, finds A's first event beyond the 128 it looks at, and queues A's
// second write as an event of its own.
func mergePastOtherThreads(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	grp := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_TID, unix.O_RDONLY)
	if err := grp.Add(0, unix.FAN_MODIFY, f); err != nil {
		t.Fatalf("fanotify_mark(FAN_MODIFY, f): %v", err)
	}
	fd := setup.Open(t, f, unix.O_WRONLY)
	threads := make([]*writerThread, mergeOthers+1)
	for i := range threads {
		threads[i] = startWriterThread()
		defer threads[i].stop()
	}
	write := func(w *writerThread) {
		t.Helper()
		if err := w.pwrite(fd); err != nil {
			t.Fatalf("pwrite(f) on thread %d: %v", w.tid, err)
		}
	}
	a := threads[0]
	write(a)
	for _, w := range threads[1:] {
		write(w)
	}
	write(a)
	want := []fanotify.Event{fev(unix.FAN_MODIFY, a.tid, f)}
	for _, w := range threads[1:] {
		want = append(want, fev(unix.FAN_MODIFY, w.tid, f))
	}
	expect.FanotifyDrained(t, grp, fmt.Sprintf("FAN_REPORT_TID group, FAN_MODIFY on f; thread A (tid %d) writes f, "+
		"%d other threads write f once each, A writes f again", a.tid, mergeOthers), want)
}

// collideShort and collideLong are two names whose name events in one
// directory get the same merge key: fanotify_alloc_name_event mixes in
// full_name_hash(salt = the name's length, name), and the event keeps the
// low FANOTIFY_EVENT_HASH_BITS (29) bits of the key. With the word-at-a-time
// full_name_hash of 64-bit little-endian kernels (fs/namei.c, x86_64 and
// arm64: CONFIG_DCACHE_WORD_ACCESS) both fold to 0x?594ee2f
// (nameHash64, TestCollidingNames); they were found by trying names of
// 7 bytes that start with the short one.
const (
	collideShort = "c"
	collideLong  = "cbu80jv"
)

// mergeNameHashCollision: fanotify_merge compares only events with equal
// hashes (fanotify_should_merge), and then fanotify_info_equal tells them
// apart by their names' lengths before it compares the bytes: "c" and the
// longer name it prefixes, with the same hash, are two creates and two
// events. A kernel that compared only the first name's bytes would merge
// the second create into the first (one event, named "c").
func mergeNameHashCollision(t *harness.T) {
	dir := t.Path("coll")
	setup.Mkdir(t, dir)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME, unix.O_RDONLY)
	t.JudgeFIDMark(g.Add(0, unix.FAN_CREATE, dir))
	do(t, a.Touch(filepath.Join(dir, collideShort)), a.Touch(filepath.Join(dir, collideLong)))
	expect.FanotifyDrained(t, g, fmt.Sprintf("DFID_NAME group, CREATE on dir; actor creates %s, then %s (same merge hash)", collideShort, collideLong), []fanotify.Event{
		fev(unix.FAN_CREATE, a.Pid(), "", expect.DFIDName(t, dir, collideShort)),
		fev(unix.FAN_CREATE, a.Pid(), "", expect.DFIDName(t, dir, collideLong)),
	})
}

// writerThread is a goroutine locked to an OS thread of its own, which
// writes a file when asked (so that each write has that thread's id).
type writerThread struct {
	tid  int
	req  chan int
	done chan error
}

// startWriterThread starts a writerThread; stop unlocks its thread (the
// thread goes back to the Go runtime, it does not exit: see
// fixture.OnOtherThread).
func startWriterThread() *writerThread {
	w := &writerThread{req: make(chan int), done: make(chan error)}
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		buf := []byte{'x'}
		for fd := range w.req {
			_, _, e := unix.Syscall6(unix.SYS_PWRITE64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), 1, 0, 0, 0)
			if e != 0 {
				w.done <- e
			} else {
				w.done <- nil
			}
		}
	}()
	w.tid = <-tid
	return w
}

// pwrite writes one byte at offset 0 of fd on the thread.
func (w *writerThread) pwrite(fd int) error {
	w.req <- fd
	return <-w.done
}

func (w *writerThread) stop() { close(w.req) }

// do fails the case on the first error of operations already performed.
func do(t *harness.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("actor: %v", err)
		}
	}
}
