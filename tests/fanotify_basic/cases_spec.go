package main

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// specCases check rules of the man pages no earlier case checked; each
// names its rule ids in spec.go.
var specCases = []harness.Case{
	{
		Name:  "spec_delete_self",
		Doc:   "FAN_DELETE_SELF of a marked file comes with its FID when its last link goes, and the mark goes with the inode (fanotify_mark(2) FAN_DELETE_SELF; fanotify(7) \"If files or directories are deleted ... the corresponding entries are deleted\")",
		Needs: []*feature.Feature{feature.ReportFID},
		Run:   specDeleteSelf,
	},
	{
		Name:     "spec_event_on_child_mount_fs",
		Doc:      "FAN_EVENT_ON_CHILD on a mount or filesystem mark has no effect: the mark keeps the rest of its mask and reports a child's open once (fanotify_mark(2); do_fanotify_mark masks it out)",
		Subtests: []string{"mount", "filesystem"},
		Run:      specEventOnChildMountFS,
	},
	{
		Name: "spec_not_recursive",
		Doc:  "a directory's FAN_EVENT_ON_CHILD mark reports its children, not the entries of its subdirectories (fanotify(7) \"Fanotify monitoring of directories is not recursive\")",
		Run:  specNotRecursive,
	},
	{
		Name: "spec_dir_not_told_of_children",
		Doc:  "a directory marked for open, access, modify and close (FAN_ONDIR, no FAN_EVENT_ON_CHILD) gets nothing when a child is created, written and read, and its own open and close when it is opened (fanotify(7) \"Events for directories are created only if the directory itself is opened, read, and closed\")",
		Run:  specDirNotToldOfChildren,
	},
	{
		Name: "spec_mmap_no_events",
		Doc:  "reads and writes through a shared mmap(2), msync(2) and munmap(2) of a file marked for FAN_ACCESS|FAN_MODIFY create no event (fanotify(7) Limitations and caveats)",
		Run:  specMmapNoEvents,
	},
	{
		Name: "spec_fallocate_modify",
		Doc:  "fallocate(2) of a marked file reports FAN_MODIFY (fanotify(7) BUGS: since 3.19)",
		Run:  specFallocateModify,
	},
	{
		Name:  "spec_exec_script_interpreter",
		Doc:   "a script run as sh SCRIPT is opened by the interpreter: FAN_OPEN, never FAN_OPEN_EXEC (fanotify_mark(2) NOTES: exec events only for execve(2), not for a file an interpreter reads)",
		Needs: []*feature.Feature{feature.OpenExec},
		Run:   specExecScriptInterpreter,
	},
	{
		Name:  "spec_event_on_child_no_self",
		Doc:   "a directory's FAN_DELETE_SELF|FAN_MOVE_SELF|FAN_EVENT_ON_CHILD mark gets nothing when a child is renamed and deleted; the child's own mark gets both (fanotify_mark(2) FAN_EVENT_ON_CHILD)",
		Needs: []*feature.Feature{feature.ReportFID},
		Run:   specEventOnChildNoSelf,
	},
	{
		Name:        "spec_exec_dynamic_linker",
		Doc:         "executing a dynamically linked program reports FAN_OPEN_EXEC on its dynamic linker (PT_INTERP) when the linker is marked (fanotify_mark(2) NOTES)",
		Needs:       []*feature.Feature{feature.OpenExec},
		Filesystems: []string{}, // the host's linker: no filesystem of the suite's
		Run:         specExecDynamicLinker,
	},
	{
		Name: "spec_readdir_access",
		Doc:  "getdents(2) of a directory marked FAN_ACCESS|FAN_ONDIR reports FAN_ACCESS (fanotify_mark(2) BUGS: readdir gave none before 3.16)",
		Run:  specReaddirAccess,
	},
	{
		Name:     "spec_ignore_while_open_for_write",
		Doc:      "an ignore mask without FAN_MARK_IGNORED_SURV_MODIFY on a file another process has open for writing is not added (the call succeeds); with it, it is (do_fanotify_mark: inode_is_open_for_write)",
		Subtests: []string{"legacy_no_surv", "legacy_surv"},
		Run:      specIgnoreWhileOpenForWrite,
	},
}

// specDeleteSelf: fanotify_mark(2) FAN_DELETE_SELF "Create an event when a
// marked file or directory itself is deleted" (a FID group); the mark is
// attached to the inode and goes when it does (fanotify(7) "The entries in
// the fanotify notification groups refer to files and directories via their
// inode number ... If files or directories are deleted ... the corresponding
// entries are deleted"; fsnotify_inoderemove).
func specDeleteSelf(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	fid := expect.FID(t, f)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
	mark(t, g, 0, unix.FAN_DELETE_SELF, f)
	expect.MarkKinds(t, "after marking f", g, "inode")
	expect.FanotifySteps(t, g, fidGroup, "FAN_REPORT_FID; inode mark on f FAN_DELETE_SELF", []step{
		{Did: "unlink f", Do: func() error { return a.Unlink(f) }, Want: []fanotify.Event{fev(unix.FAN_DELETE_SELF, a.Pid(), "", fid)}},
	})
	expect.MarkKinds(t, "after f's inode was deleted", g, "none")
}

// specEventOnChildMountFS: fanotify_mark(2) FAN_EVENT_ON_CHILD "The flag has
// no effect when marking mounts and filesystems"; do_fanotify_mark clears it
// from a mount or filesystem mark's mask (fdinfo shows the mask without it).
func specEventOnChildMountFS(t *harness.T) {
	for _, k := range []struct {
		name  string
		flags uint
	}{{"mount", unix.FAN_MARK_MOUNT}, {"filesystem", unix.FAN_MARK_FILESYSTEM}} {
		t.Run(k.name, func(t *harness.T) {
			if k.flags == unix.FAN_MARK_FILESYSTEM {
				t.Require(feature.MarkFilesystem)
			}
			dir := t.Path(k.name)
			setup.Mkdir(t, dir)
			f := filepath.Join(dir, "f")
			setup.Touch(t, f)
			a := t.Actor()
			g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
			mark(t, g, k.flags, unix.FAN_OPEN|unix.FAN_EVENT_ON_CHILD, t.FS().Root)
			ms, err := g.Marks()
			if err != nil {
				t.Fatalf("%v", err)
			}
			if len(ms) != 1 || uint64(ms[0].Mask) != unix.FAN_OPEN {
				t.Errorf("%s mark FAN_OPEN|FAN_EVENT_ON_CHILD: fdinfo %v, want one mark with mask FAN_OPEN", k.name, ms)
			}
			expect.FanotifySteps(t, g, fdGroup, k.name+" mark FAN_OPEN|FAN_EVENT_ON_CHILD", []step{
				{Did: "open dir/f; close", Do: func() error { return openClose(a, f, unix.O_RDONLY) }, Want: []fanotify.Event{fev(unix.FAN_OPEN, a.Pid(), f)}},
			})
		})
	}
}

// specNotRecursive: fanotify(7) "Fanotify monitoring of directories is not
// recursive: to monitor subdirectories under a directory, additional marks
// must be created"; fanotify_mark(2) FAN_EVENT_ON_CHILD "events are not
// generated for children of the subdirectories of marked directories".
func specNotRecursive(t *harness.T) {
	d := t.Path("d")
	sub := filepath.Join(d, "sub")
	setup.Mkdir(t, d, sub)
	f, deep := filepath.Join(d, "f"), filepath.Join(sub, "g")
	setup.Touch(t, f, deep)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	mark(t, g, 0, unix.FAN_OPEN|unix.FAN_EVENT_ON_CHILD, d)
	expect.FanotifySteps(t, g, fdGroup, "inode mark on d FAN_OPEN|FAN_EVENT_ON_CHILD", []step{
		{Did: "open d/sub/g; close", Do: func() error { return openClose(a, deep, unix.O_RDONLY) }, Want: nil},
		{Did: "open d/f; close", Do: func() error { return openClose(a, f, unix.O_RDONLY) }, Want: []fanotify.Event{fev(unix.FAN_OPEN, a.Pid(), f)}},
	})
}

// specDirNotToldOfChildren: fanotify(7) Limitations and caveats "Events for
// directories are created only if the directory itself is opened, read, and
// closed. Adding, removing, or changing children of a marked directory does
// not create events for the monitored directory itself."
func specDirNotToldOfChildren(t *harness.T) {
	d := t.Path("d")
	setup.Mkdir(t, d)
	f := filepath.Join(d, "f")
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	mask := uint64(unix.FAN_OPEN | unix.FAN_ACCESS | unix.FAN_MODIFY | unix.FAN_CLOSE | unix.FAN_ONDIR)
	mark(t, g, 0, mask, d)
	expect.FanotifySteps(t, g, fdGroup, "inode mark on d "+fanotify.Mask(mask).String(), []step{
		{Did: "create d/f, write, close", Do: func() error { return a.WriteFile(f, []byte("x")) }, Want: nil},
		{Did: "read d/f", Do: func() error { _, err := a.ReadFile(f, 1); return err }, Want: nil},
		{Did: "unlink d/f", Do: func() error { return a.Unlink(f) }, Want: nil},
		{Did: "open d O_DIRECTORY; close", Do: func() error { return openClose(a, d, unix.O_RDONLY|unix.O_DIRECTORY) },
			Want: []fanotify.Event{fev(unix.FAN_OPEN|unix.FAN_CLOSE_NOWRITE, a.Pid(), d)}},
	})
}

// specMmapNoEvents: fanotify(7) Limitations and caveats "The fanotify API
// does not report file accesses and modifications that may occur because of
// mmap(2), msync(2), and munmap(2)." The file is opened before the mark, in
// the test process (the actor cannot map).
func specMmapNoEvents(t *harness.T) {
	f := t.Path("f")
	setup.WriteFile(t, f, "0123456789")
	fd := setup.Open(t, f, unix.O_RDWR)
	g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	mark(t, g, 0, unix.FAN_ACCESS|unix.FAN_MODIFY, f)
	expect.FanotifySteps(t, g, fdGroup, "f open O_RDWR; inode mark on f FAN_ACCESS|FAN_MODIFY", []step{
		{Did: "mmap MAP_SHARED; read and write a byte through it; msync; munmap", Do: func() error {
			m, err := unix.Mmap(fd, 0, 10, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			if err != nil {
				return err
			}
			m[0] = m[1] + 1
			if err := unix.Msync(m, unix.MS_SYNC); err != nil {
				unix.Munmap(m)
				return err
			}
			return unix.Munmap(m)
		}, Want: nil},
	})
}

// specFallocateModify: fanotify(7) BUGS "Since Linux 3.19, calls to
// fallocate(2) generate FAN_MODIFY events" (vfs_fallocate ->
// fsnotify_modify). The test process allocates (the actor has no
// fallocate): the event carries its pid.
func specFallocateModify(t *harness.T) {
	f := t.Path("f")
	setup.Touch(t, f)
	fd := setup.Open(t, f, unix.O_RDWR)
	g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	mark(t, g, 0, unix.FAN_MODIFY, f)
	expect.FanotifySteps(t, g, fdGroup, "f open O_RDWR; inode mark on f FAN_MODIFY", []step{
		{Did: "fallocate 4096 bytes", Do: func() error { return unix.Fallocate(fd, 0, 0, 4096) },
			Want: []fanotify.Event{fev(unix.FAN_MODIFY, os.Getpid(), f)}},
	})
}

// specExecScriptInterpreter: fanotify_mark(2) NOTES "events of these types
// will be returned only when the direct execution of a program occurs ...
// Events of these types will not be raised in the situation where an
// interpreter is passed (or reads) a file for interpretation."
func specExecScriptInterpreter(t *harness.T) {
	sh := setup.Program(t, "sh")
	s := t.Path("script")
	setup.WriteFileMode(t, s, []byte("exit 0\n"), 0o644)
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	mark(t, g, 0, unix.FAN_OPEN|unix.FAN_OPEN_EXEC, s)
	r, err := a.Do(actor.Op{Kind: "exec", Path: sh, Args: []string{s}})
	if err == nil {
		err = r.Err()
	}
	if err != nil || r.N != 0 {
		t.Fatalf("%s %s: %v, exit status %d", sh, s, err, r.N)
	}
	got, err := g.Drain()
	if err != nil {
		t.Fatalf("%v", err)
	}
	expect.FanotifyFds(t, "sh script", got, fdGroup)
	expect.Fanotify(t, "inode mark on script FAN_OPEN|FAN_OPEN_EXEC; "+sh+" script", got, []fanotify.Event{fev(unix.FAN_OPEN, r.Pid, s)})
	fanotify.CloseEventFds(got)
}

// specIgnoreWhileOpenForWrite: do_fanotify_mark (fs/notify/fanotify/
// fanotify_user.c) "If some other task has this inode open for write we
// should not add an ignore mask, unless that ignore mask is supposed to
// survive modification changes anyway": the call returns 0 and the mark
// keeps no ignore mask; with FAN_MARK_IGNORED_SURV_MODIFY it is added.
func specIgnoreWhileOpenForWrite(t *harness.T) {
	for _, v := range []struct {
		name  string
		flags uint
		want  bool // the ignore mask is added
	}{{"legacy_no_surv", unix.FAN_MARK_IGNORED_MASK, false}, {"legacy_surv", unix.FAN_MARK_IGNORED_MASK | unix.FAN_MARK_IGNORED_SURV_MODIFY, true}} {
		t.Run(v.name, func(t *harness.T) {
			f := t.Path(v.name)
			setup.Touch(t, f)
			w := t.Actor()
			wfd, err := w.Open(f, unix.O_WRONLY, 0)
			if err != nil {
				t.Fatalf("setup: actor open: %v", err)
			}
			defer w.Close(wfd)
			a := t.Actor()
			g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
			mark(t, g, 0, unix.FAN_OPEN, f)
			expect.Errno(t, fanotify.MarkFlagsString(unix.FAN_MARK_ADD|v.flags)+" FAN_OPEN on a file open for writing", g.Add(v.flags, unix.FAN_OPEN, f), 0)
			ms, err := g.Marks()
			if err != nil {
				t.Fatalf("%v", err)
			}
			var wantIgnored uint64
			var want []fanotify.Event
			if v.want {
				wantIgnored = unix.FAN_OPEN
			} else {
				want = []fanotify.Event{fev(unix.FAN_OPEN, a.Pid(), f)}
			}
			if len(ms) != 1 || uint64(ms[0].IgnoredMask) != wantIgnored {
				t.Errorf("fdinfo after the ignore call: %v, want one mark with ignored_mask %s", ms, fanotify.Mask(wantIgnored))
			}
			expect.FanotifySteps(t, g, fdGroup, "f open for writing elsewhere; inode mark FAN_OPEN; ignore "+fanotify.MarkFlagsString(v.flags), []step{
				{Did: "open f O_RDONLY; close", Do: func() error { return openClose(a, f, unix.O_RDONLY) }, Want: want},
			})
		})
	}
}

// specEventOnChildNoSelf: fanotify_mark(2) FAN_EVENT_ON_CHILD "Note that the
// events FAN_DELETE_SELF and FAN_MOVE_SELF are not generated for children of
// marked directories" (they are not FS_EVENTS_POSS_ON_CHILD:
// include/linux/fsnotify_backend.h). The child's own mark shows they
// happened.
func specEventOnChildNoSelf(t *harness.T) {
	d := t.Path("d")
	setup.Mkdir(t, d)
	f, g := filepath.Join(d, "f"), filepath.Join(d, "g")
	setup.Touch(t, f)
	fid := expect.FID(t, f)
	a := t.Actor()
	dirGroup := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
	self := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY)
	mark(t, dirGroup, 0, unix.FAN_DELETE_SELF|unix.FAN_MOVE_SELF|unix.FAN_EVENT_ON_CHILD, d)
	mark(t, self, 0, unix.FAN_DELETE_SELF|unix.FAN_MOVE_SELF, f)
	did := "FID groups: d marked DELETE_SELF|MOVE_SELF|EVENT_ON_CHILD, d/f marked DELETE_SELF|MOVE_SELF"
	for _, s := range []struct {
		did  string
		do   func() error
		mask uint64
	}{
		{"rename d/f d/g", func() error { return a.Rename(f, g) }, unix.FAN_MOVE_SELF},
		{"unlink d/g", func() error { return a.Unlink(g) }, unix.FAN_DELETE_SELF},
	} {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.did, err)
		}
		got, err := dirGroup.Drain()
		if err != nil {
			t.Fatalf("%v", err)
		}
		expect.Fanotify(t, did+"; "+s.did+" (the directory's group)", got, nil)
		got, err = self.Drain()
		if err != nil {
			t.Fatalf("%v", err)
		}
		expect.Fanotify(t, did+"; "+s.did+" (the child's group)", got, []fanotify.Event{fev(s.mask, a.Pid(), "", fid)})
	}
	expect.QuietAll(t, did+"; after the last step", expect.Quiet, expect.OnFanotify("directory", dirGroup), expect.OnFanotify("child", self))
}

// specExecDynamicLinker: fanotify_mark(2) NOTES "if a mark has also been
// placed on the Linux dynamic linker, a user should also expect to receive
// an event for it when an ELF object has been successfully opened using
// execve(2)" (load_elf_binary opens PT_INTERP with open_exec: FMODE_EXEC,
// fsnotify_open -> FAN_OPEN_EXEC). The linker is the host's own: its inode
// mark also sees every other process's program start, so only the events
// of the actor's child count; that child must cause exactly one.
func specExecDynamicLinker(t *harness.T) {
	prog := setup.Program(t, "true")
	ef, err := elf.Open(prog)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	interp := ""
	for _, ph := range ef.Progs {
		if ph.Type == elf.PT_INTERP {
			b := make([]byte, ph.Filesz)
			if _, err := ph.ReadAt(b, 0); err == nil {
				interp = strings.TrimRight(string(b), "\x00")
			}
		}
	}
	ef.Close()
	if interp == "" {
		t.Skipf("%s is statically linked (no PT_INTERP)", prog)
	}
	linker, err := filepath.EvalSymlinks(interp)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	a := t.Actor()
	g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	mark(t, g, 0, unix.FAN_OPEN_EXEC, linker)
	r, err := a.Do(actor.Op{Kind: "exec", Path: prog})
	if err == nil {
		err = r.Err()
	}
	if err != nil || r.N != 0 {
		t.Fatalf("exec %s: %v, exit status %d", prog, err, r.N)
	}
	got, err := g.Drain()
	defer fanotify.CloseEventFds(got)
	if err != nil {
		t.Fatalf("%v", err)
	}
	var mine []fanotify.Event
	for _, e := range got {
		if int(e.Pid) == r.Pid {
			mine = append(mine, e)
		}
	}
	expect.Fanotify(t, fmt.Sprintf("inode mark FAN_OPEN_EXEC on the dynamic linker %s; exec %s (events of its pid %d)", linker, prog, r.Pid), mine,
		[]fanotify.Event{fev(unix.FAN_OPEN_EXEC, r.Pid, linker)})
}

// specReaddirAccess: fanotify_mark(2) BUGS "readdir(2) does not generate a
// FAN_ACCESS event" before 3.16; since then iterate_dir -> fsnotify_access.
// The test process reads the directory (the actor has no getdents); the
// directory is opened before the mark.
func specReaddirAccess(t *harness.T) {
	d := t.Path("d")
	setup.Mkdir(t, d)
	setup.Touch(t, filepath.Join(d, "f"))
	fd := setup.Open(t, d, unix.O_RDONLY|unix.O_DIRECTORY)
	g := t.Fanotify(unix.FAN_CLASS_NOTIF, unix.O_RDONLY)
	mark(t, g, 0, unix.FAN_ACCESS|unix.FAN_ONDIR, d)
	expect.FanotifySteps(t, g, fdGroup, "d open O_DIRECTORY; inode mark on d FAN_ACCESS|FAN_ONDIR", []step{
		{Did: "getdents d", Do: func() error {
			n, err := unix.Getdents(fd, make([]byte, 4096))
			if err == nil && n == 0 {
				err = fmt.Errorf("getdents returned no entry")
			}
			return err
		}, Want: []fanotify.Event{fev(unix.FAN_ACCESS, os.Getpid(), d)}},
	})
}
