package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/markmirror"
	"github.com/fsnsuite/fsnsuite/harness/model"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
)

// handCases are the cases written by hand: the kernel bugzilla 215676 use
// case, evictable ignore marks, and the API rules with their errno.
var handCases = append(append(append(append(bugzillaCases(), evictableCases...), apiCases()...), permCases()...), partlyIgnoredCases()...)

// partlyIgnoredCases: one event that carries two event bits, one of them
// ignored. execve opens the file with __FMODE_EXEC, and fsnotify_open()
// gives that one open FS_OPEN|FS_OPEN_EXEC (include/linux/fsnotify.h). With a
// mark for FAN_OPEN|FAN_OPEN_EXEC and FAN_OPEN in its ignore mask, fsnotify()
// lets the event through (FAN_OPEN_EXEC is not ignored) and
// fanotify_group_event_mask() must still take the ignored bit out: the event
// is reported as FAN_OPEN_EXEC alone (fanotify_mark(2): events in the ignore
// mask are not reported). The shell the script runs in then opens it again
// to read it, a plain FS_OPEN, which the ignore mask drops whole. A kernel
// that tests the ignore mask only for the whole event (as fsnotify()'s
// send_to_group does) reports FAN_OPEN|FAN_OPEN_EXEC.
func partlyIgnoredCases() []harness.Case {
	var out []harness.Case
	for _, fl := range []struct {
		name  string
		flags uint
		needs []*feature.Feature
	}{
		{"ignored_mask", unix.FAN_MARK_IGNORED_MASK, nil},
		{"mark_ignore", unix.FAN_MARK_IGNORE, []*feature.Feature{feature.MarkIgnore}},
	} {
		out = append(out, harness.Case{
			Name: "exec_open_partly_ignored_" + fl.name,
			Doc: fmt.Sprintf("inode mark FAN_OPEN|FAN_OPEN_EXEC with FAN_OPEN ignored (%s): execve's one open event is reported as FAN_OPEN_EXEC alone, the shell's plain open not at all (fanotify_group_event_mask)",
				fanotify.MarkFlagsString(fl.flags)),
			Needs: append([]*feature.Feature{feature.OpenExec}, fl.needs...),
			Run:   func(t *harness.T) { runPartlyIgnored(t, fl.flags) },
		})
	}
	return out
}

func runPartlyIgnored(t *harness.T, ignoreFlag uint) {
	w := newWorld(t)
	gi := w.addGroup(kindNotif)
	w.mustMark(markCall{group: gi, loc: model.LocSelf, mask: unix.FAN_OPEN | unix.FAN_OPEN_EXEC}, objFile)
	w.mustMark(markCall{group: gi, loc: model.LocSelf, flags: ignoreFlag, mask: unix.FAN_OPEN}, objFile)
	w.checkStates("after marking", objFile)
	pid, did := w.do(evOpenExec, objFile)
	got, err := w.groups[gi].G.Drain()
	if err != nil {
		t.Fatal(err)
	}
	expect.Fanotify(t, fmt.Sprintf("inode mark FAN_OPEN|FAN_OPEN_EXEC, %s FAN_OPEN on %s; %s",
		fanotify.MarkFlagsString(ignoreFlag), w.rel(w.file), did), got, []fanotify.Event{
		{Mask: unix.FAN_OPEN_EXEC, Pid: pid, Path: w.file},
	})
}

// bugzillaCases: kernel bugzilla 215676 asked for a way to watch a whole
// mount (or filesystem) except one directory tree level. FAN_MARK_IGNORE
// (Linux 6.0) answers it: an ignore mask on the directory with FAN_ONDIR
// (the directory's own events) and FAN_EVENT_ON_CHILD (its entries' events)
// hides everything in it, and nothing else (fanotify_mark(2), FAN_MARK_IGNORE;
// fsnotify_effective_ignore_mask / fsnotify_mask_applicable).
func bugzillaCases() []harness.Case {
	var out []harness.Case
	for _, loc := range []model.Loc{model.LocMount, model.LocFS} {
		for _, k := range []groupKind{kindNotif, kindDFIDName} {
			needs := []*feature.Feature{feature.MarkIgnore}
			if loc == model.LocFS {
				needs = append(needs, feature.MarkFilesystem)
			}
			if k.fid {
				needs = append(needs, feature.ReportDFIDName)
			}
			out = append(out, harness.Case{
				Name: fmt.Sprintf("bz215676_%s_exclude_dir_%s", loc, k.name),
				Doc: fmt.Sprintf("%s mark FAN_OPEN|FAN_ONDIR, dir excluded by FAN_MARK_IGNORE|FAN_ONDIR|FAN_EVENT_ON_CHILD: only the sibling's opens (%s group)",
					loc, k.name),
				Needs: needs,
				Run:   func(t *harness.T) { runBugzilla(t, loc, k) },
			})
		}
	}
	return out
}

func runBugzilla(t *harness.T, loc model.Loc, k groupKind) {
	if k.fid {
		t.RequireFID() // this case is about its one group: no class to leave out
	}
	w := newWorld(t)
	gi := w.addGroup(k)
	w.mustMark(markCall{group: gi, loc: loc, mask: unix.FAN_OPEN | unix.FAN_ONDIR}, objFile)
	// The excluded directory is w.dir, named here as the parent of the objects.
	w.mustMark(markCall{group: gi, loc: model.LocParent, flags: unix.FAN_MARK_IGNORE | unix.FAN_MARK_IGNORED_SURV_MODIFY,
		mask: unix.FAN_OPEN | unix.FAN_ONDIR | unix.FAN_EVENT_ON_CHILD}, objFile)
	w.checkStates("after marking", objFile)
	a := w.actor()
	sibFile := filepath.Join(w.sibling, "file")
	type op struct {
		path string
		dir  bool
	}
	ops := []op{{w.dir, true}, {w.file, false}, {w.sub, true}, {w.sibling, true}, {sibFile, false}}
	var did []string
	for _, o := range ops {
		flags := unix.O_RDONLY
		if o.dir {
			flags |= unix.O_DIRECTORY
		}
		fd, err := a.Open(o.path, flags, 0)
		if err != nil {
			t.Fatalf("actor open %s: %v", o.path, err)
		}
		if err := a.Close(fd); err != nil {
			t.Fatalf("actor close: %v", err)
		}
		did = append(did, "open "+w.rel(o.path))
	}
	got, err := w.groups[gi].G.Drain()
	if err != nil {
		t.Fatal(err)
	}
	// Everything under dir is ignored; the sibling directory and its file
	// are reported, in the order they were opened. fd groups never report
	// FAN_ONDIR; fid groups do (fanotify_group_event_mask).
	pid := int32(a.Pid())
	var want []fanotify.Event
	if !k.fid {
		want = []fanotify.Event{
			{Mask: unix.FAN_OPEN, Pid: pid, Path: w.sibling},
			{Mask: unix.FAN_OPEN, Pid: pid, Path: sibFile},
		}
	} else {
		d, err1 := fanotify.DFIDNameOf(w.sibling, ".")
		f, err2 := fanotify.DFIDNameOf(w.sibling, "file")
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		want = []fanotify.Event{
			{Mask: unix.FAN_OPEN | unix.FAN_ONDIR, Pid: pid, Fd: unix.FAN_NOFD, Info: []fanotify.Info{d}},
			{Mask: unix.FAN_OPEN, Pid: pid, Fd: unix.FAN_NOFD, Info: []fanotify.Info{f}},
		}
	}
	expect.Fanotify(t, fmt.Sprintf("%s mark FAN_OPEN|FAN_ONDIR; dir ignore FAN_OPEN|FAN_ONDIR|FAN_EVENT_ON_CHILD; actor: %s",
		loc, strings.Join(did, ", ")), got, want)
}

// dropCaches asks the kernel to reclaim dentries and inodes
// (Documentation/admin-guide/sysctl/vm.rst, drop_caches = 2). Only an inode
// without page cache is on the inode LRU (fs/inode.c inode_add_lru /
// mapping_shrinkable, since 5.16), so the evictable case uses an empty file.
// It changes no setting, so there is nothing to restore.
func dropCaches() error { return fixture.DropCaches() }

var evictableCases = []harness.Case{
	{
		Name: "evictable_ignore_evicted",
		Doc:  "an evictable ignore mark goes with its evicted inode; the mount mark's event comes back (fanotify_mark(2) FAN_MARK_EVICTABLE)",
		// tmpfs keeps every dentry and inode of an existing file in memory
		// (shmem has no backing store to reload them from), so drop_caches
		// never evicts them there: the case cannot apply to tmpfs.
		Filesystems: []string{"ext4"},
		Needs:       []*feature.Feature{feature.MarkEvictable, feature.MarkIgnore},
		Run:         runEvictableEvicted,
	},
	{
		Name:  "evictable_upgrade_downgrade",
		Doc:   "an evictable mark may become non-evictable, never the reverse (EEXIST) (fanotify_may_update_existing_mark)",
		Needs: []*feature.Feature{feature.MarkEvictable, feature.MarkIgnore},
		Run:   runEvictableUpgrade,
	},
	{
		Name:  "evictable_mount_einval",
		Doc:   "FAN_MARK_EVICTABLE on a mount or filesystem ignore mark is EINVAL: only inodes are evicted (do_fanotify_mark)",
		Needs: []*feature.Feature{feature.MarkEvictable, feature.MarkFilesystem},
		Run: func(t *harness.T) {
			w := newWorld(t)
			gi := w.addGroup(kindNotif)
			for _, loc := range []model.Loc{model.LocMount, model.LocFS} {
				w.expectErrno(markCall{group: gi, loc: loc, flags: unix.FAN_MARK_IGNORED_MASK | unix.FAN_MARK_IGNORED_SURV_MODIFY | unix.FAN_MARK_EVICTABLE,
					mask: unix.FAN_OPEN}, objFile, unix.EINVAL)
			}
			w.checkStates("after the refused calls", objFile)
		},
	},
}

func runEvictableEvicted(t *harness.T) {
	w := newWorld(t)
	// The empty file: no page cache to keep its inode off the LRU.
	w.file = w.empty
	// Pin the inode until the first open is checked: vm.drop_caches is
	// global, and another run's (or another case's) write to it must not
	// evict the inode, and its evictable mark, before this case asks for
	// it. The O_PATH descriptor is taken before any mark, so it raises no
	// event this group could see; it is closed before the eviction below.
	pin, err := unix.Open(w.file, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("setup: pin %s: %v", w.file, err)
	}
	unpin := func() {
		if pin >= 0 {
			unix.Close(pin)
			pin = -1
		}
	}
	t.Cleanup(unpin)
	gi := w.addGroup(kindNotif)
	w.mustMark(markCall{group: gi, loc: model.LocMount, mask: unix.FAN_OPEN}, objFile)
	w.mustMark(markCall{group: gi, loc: model.LocSelf, flags: unix.FAN_MARK_IGNORE | unix.FAN_MARK_IGNORED_SURV_MODIFY | unix.FAN_MARK_EVICTABLE,
		mask: unix.FAN_OPEN}, objFile)
	w.checkStates("after marking", objFile)
	a := w.actor()
	open := func() {
		fd, err := a.Open(w.file, unix.O_RDONLY, 0)
		if err != nil {
			t.Fatalf("actor open: %v", err)
		}
		if err := a.Close(fd); err != nil {
			t.Fatalf("actor close: %v", err)
		}
	}
	open()
	got, err := w.groups[gi].G.Drain()
	if err != nil {
		t.Fatal(err)
	}
	if !expect.Fanotify(t, "mount mark FAN_OPEN; evictable ignore FAN_OPEN on file; actor open file (before eviction)", got, nil) {
		return
	}
	unpin()
	// Nothing holds the file's inode now: the actor closed its fd, the
	// event queue is empty (a queued event pins its path), and neither
	// process has its cwd below the filesystem. Eviction is still up to the
	// kernel's reclaim, so the mark's disappearance is asserted in fdinfo
	// (an evicted inode drops its marks: fsnotify_inode_delete) before the
	// events are: the case fails, not passes, if the inode stays cached.
	gone, tries := false, 0
	for ; tries < 5 && !gone; tries++ {
		if err := dropCaches(); err != nil {
			t.Fatal(err)
		}
		st, err := w.groups[gi].FdinfoStates(w.places(objFile))
		if err != nil {
			t.Fatal(err)
		}
		gone = len(st) == 1 && strings.HasPrefix(st[0], "mount ")
	}
	if !gone {
		st, _ := w.groups[gi].FdinfoStates(w.places(objFile))
		t.Fatalf("the file's inode was not evicted by 5 rounds of drop_caches; marks: %v", st)
	}
	t.Logf("inode evicted after %d drop_caches", tries)
	w.groups[gi].Forget(model.LocSelf) // the model: the mark went with the inode
	w.checkStates("after eviction", objFile)
	open()
	got, err = w.groups[gi].G.Drain()
	if err != nil {
		t.Fatal(err)
	}
	expect.Fanotify(t, "mount mark FAN_OPEN; evictable ignore FAN_OPEN on file; inode evicted; actor open file", got,
		[]fanotify.Event{{Mask: unix.FAN_OPEN, Pid: int32(a.Pid()), Path: w.file}})
}

func runEvictableUpgrade(t *harness.T) {
	w := newWorld(t)
	// The file's inode must stay cached throughout, or its evictable mark
	// could go with it (another run's drop_caches is global): an O_PATH
	// descriptor taken before any mark pins it and raises no event.
	pin, err := unix.Open(w.file, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("setup: pin %s: %v", w.file, err)
	}
	t.Cleanup(func() { unix.Close(pin) })
	gi := w.addGroup(kindNotif)
	ign := uint(unix.FAN_MARK_IGNORE | unix.FAN_MARK_IGNORED_SURV_MODIFY)
	// An evictable ignore mark on the file, then the same without
	// FAN_MARK_EVICTABLE: "NO_IREF may be removed from a mark, but not added"
	// (fanotify_mark_update_flags), so the mark now pins the inode.
	w.expectErrno(markCall{group: gi, loc: model.LocSelf, flags: ign | unix.FAN_MARK_EVICTABLE, mask: unix.FAN_OPEN}, objFile, 0)
	w.checkStates("after the evictable mark", objFile)
	w.expectErrno(markCall{group: gi, loc: model.LocSelf, flags: ign, mask: unix.FAN_ACCESS}, objFile, 0)
	w.checkStates("after the upgrade", objFile)
	// "Non evictable mark cannot be downgraded to evictable mark": EEXIST,
	// and the mark keeps its masks.
	w.expectErrno(markCall{group: gi, loc: model.LocSelf, flags: ign | unix.FAN_MARK_EVICTABLE, mask: unix.FAN_MODIFY}, objFile, unix.EEXIST)
	// The same for a mark that was non-evictable from the start (the parent).
	w.expectErrno(markCall{group: gi, loc: model.LocParent, flags: ign, mask: unix.FAN_OPEN | unix.FAN_EVENT_ON_CHILD}, objFile, 0)
	w.expectErrno(markCall{group: gi, loc: model.LocParent, flags: ign | unix.FAN_MARK_EVICTABLE, mask: unix.FAN_OPEN}, objFile, unix.EEXIST)
	w.checkStates("after the refused downgrades", objFile)
}

// expectErrno places a mark and asserts its result twice: against want,
// written in the case from fanotify_mark(2) / fanotify_user.c, and against
// the model's model.MarkAdd, so that the rule function and the table agree.
func (w *world) expectErrno(c markCall, obj object, want unix.Errno) {
	t := w.t
	predicted, err := w.mark(c, obj)
	if predicted != want {
		t.Errorf("rule error: model predicts %s for %s, the case says %s", expect.ErrnoText(predicted), c, expect.ErrnoText(want))
	}
	got, err := markmirror.Errno(err)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	if got != want {
		t.Errorf("%s on %s: got %s, want %s", c, obj, expect.ErrnoText(got), expect.ErrnoText(want))
	}
}

// apiCase is one row of the API table: calls in order, each with the errno
// fanotify_user.c gives it.
type apiCase struct {
	name, doc string
	obj       object
	calls     []apiCall
	needs     []*feature.Feature
}

type apiCall struct {
	loc   model.Loc
	flags uint
	mask  uint32
	want  unix.Errno
}

const (
	fIgnore = unix.FAN_MARK_IGNORE
	fLegacy = unix.FAN_MARK_IGNORED_MASK
	fSurv   = unix.FAN_MARK_IGNORED_SURV_MODIFY
)

var apiTable = []apiCase{
	{
		name: "ignore_dir_no_surv_eisdir",
		doc:  "FAN_MARK_IGNORE on a directory without FAN_MARK_IGNORED_SURV_MODIFY: EISDIR (fanotify_mark(2), do_fanotify_mark)",
		obj:  objDir,
		calls: []apiCall{
			{model.LocSelf, fIgnore, unix.FAN_OPEN | unix.FAN_ONDIR, unix.EISDIR},
			{model.LocParent, fIgnore, unix.FAN_OPEN | unix.FAN_EVENT_ON_CHILD, unix.EISDIR},
			{model.LocSelf, fIgnore | fSurv, unix.FAN_OPEN | unix.FAN_ONDIR, 0},
		},
	},
	{
		name: "ignore_mount_fs_no_surv_einval",
		doc:  "FAN_MARK_IGNORE on a mount or filesystem mark without FAN_MARK_IGNORED_SURV_MODIFY: EINVAL (do_fanotify_mark)",
		obj:  objFile,
		calls: []apiCall{
			{model.LocMount, fIgnore, unix.FAN_OPEN, unix.EINVAL},
			{model.LocFS, fIgnore, unix.FAN_OPEN, unix.EINVAL},
			{model.LocMount, fIgnore | fSurv, unix.FAN_OPEN, 0},
			{model.LocFS, fIgnore | fSurv, unix.FAN_OPEN, 0},
		},
		needs: []*feature.Feature{feature.MarkFilesystem},
	},
	{
		name: "ignore_file_no_surv_ok",
		doc:  "FAN_MARK_IGNORE on a non-directory inode needs no FAN_MARK_IGNORED_SURV_MODIFY (do_fanotify_mark)",
		obj:  objFile,
		calls: []apiCall{
			{model.LocSelf, fIgnore, unix.FAN_OPEN, 0},
		},
	},
	{
		name: "ignore_event_flags_on_file_enotdir",
		doc:  "FAN_ONDIR or FAN_EVENT_ON_CHILD in a FAN_MARK_IGNORE mask of a non-directory: ENOTDIR (fanotify_events_supported)",
		obj:  objFile,
		calls: []apiCall{
			{model.LocSelf, fIgnore | fSurv, unix.FAN_OPEN | unix.FAN_ONDIR, unix.ENOTDIR},
			{model.LocSelf, fIgnore | fSurv, unix.FAN_OPEN | unix.FAN_EVENT_ON_CHILD, unix.ENOTDIR},
			{model.LocSelf, fIgnore, unix.FAN_OPEN | unix.FAN_ONDIR, unix.ENOTDIR},
		},
	},
	{
		name: "legacy_event_flags_dropped",
		doc:  "FAN_ONDIR / FAN_EVENT_ON_CHILD in a legacy ignore mask are accepted and dropped, on a file and a directory (do_fanotify_mark)",
		obj:  objDir,
		calls: []apiCall{
			{model.LocSelf, fLegacy, unix.FAN_OPEN | unix.FAN_ONDIR | unix.FAN_EVENT_ON_CHILD, 0},
			{model.LocParent, fLegacy | fSurv, unix.FAN_OPEN | unix.FAN_ONDIR | unix.FAN_EVENT_ON_CHILD, 0},
		},
	},
	{
		name: "legacy_after_ignore_eexist",
		doc:  "FAN_MARK_IGNORED_MASK on a mark that uses FAN_MARK_IGNORE: EEXIST, new semantics cannot be downgraded (fanotify_may_update_existing_mark)",
		obj:  objFile,
		calls: []apiCall{
			{model.LocSelf, fIgnore | fSurv, unix.FAN_OPEN, 0},
			{model.LocSelf, fLegacy | fSurv, unix.FAN_ACCESS, unix.EEXIST},
			{model.LocSelf, fLegacy, unix.FAN_ACCESS, unix.EEXIST},
			{model.LocParent, fIgnore | fSurv, unix.FAN_OPEN | unix.FAN_EVENT_ON_CHILD, 0},
			{model.LocParent, fLegacy | fSurv, unix.FAN_ACCESS, unix.EEXIST},
		},
	},
	{
		name: "ignore_after_legacy_upgrade",
		doc:  "FAN_MARK_IGNORE on a mark with a legacy ignore mask is an allowed upgrade; the mark then reports FAN_MARK_IGNORE in fdinfo (fanotify_mark_update_flags)",
		obj:  objFile,
		calls: []apiCall{
			{model.LocSelf, fLegacy | fSurv, unix.FAN_OPEN, 0},
			{model.LocSelf, fIgnore | fSurv, unix.FAN_ACCESS, 0},
			{model.LocParent, fLegacy | fSurv, unix.FAN_OPEN, 0},
			{model.LocParent, fIgnore | fSurv, unix.FAN_ACCESS | unix.FAN_EVENT_ON_CHILD, 0},
			{model.LocMount, fLegacy, unix.FAN_OPEN, 0},
			{model.LocMount, fIgnore | fSurv, unix.FAN_ACCESS, 0},
		},
	},
	{
		name: "both_flavours_einval",
		doc:  "FAN_MARK_IGNORE together with FAN_MARK_IGNORED_MASK: EINVAL (do_fanotify_mark)",
		obj:  objFile,
		calls: []apiCall{
			{model.LocSelf, fIgnore | fLegacy | fSurv, unix.FAN_OPEN, unix.EINVAL},
			{model.LocParent, fIgnore | fLegacy | fSurv, unix.FAN_OPEN, unix.EINVAL},
			{model.LocMount, fIgnore | fLegacy | fSurv, unix.FAN_OPEN, unix.EINVAL},
		},
	},
}

func apiCases() []harness.Case {
	var out []harness.Case
	for _, c := range apiTable {
		out = append(out, harness.Case{
			Name:  c.name,
			Doc:   c.doc,
			Needs: append([]*feature.Feature{feature.MarkIgnore}, c.needs...),
			Run: func(t *harness.T) {
				w := newWorld(t)
				gi := w.addGroup(kindNotif)
				for _, call := range c.calls {
					w.expectErrno(markCall{group: gi, loc: call.loc, flags: call.flags, mask: call.mask}, c.obj, call.want)
				}
				// Refused calls leave the marks as they were; accepted ones
				// show in fdinfo exactly as the model built them.
				w.checkStates("after the calls", c.obj)
			},
		})
	}
	return out
}
