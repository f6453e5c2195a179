package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
)

var unlinkCases = []harness.Case{
	{
		Name: "unlinked_child.inotify",
		Doc: "a child open across its unlink keeps reporting to the parent watch under its old name " +
			"(inotify(7) IN_EXCL_UNLINK: \"By default ... events are generated for children even after they have been unlinked\")",
		Run: func(t *harness.T) { unlinkedInotify(t, false) },
	},
	{
		Name: "unlinked_child_excl_unlink.inotify",
		Doc:  "with IN_EXCL_UNLINK a child's events stop at its unlink (inotify(7) IN_EXCL_UNLINK; fsnotify.c fsnotify_handle_inode_event d_unlinked check)",
		Run:  func(t *harness.T) { unlinkedInotify(t, true) },
	},
	{
		Name: "unlinked_child.fanotify",
		Doc: "a child open across its unlink keeps reporting to the parent's ON_CHILD mark with DFID_NAME(parent, old name) " +
			"(an unlinked dentry keeps d_parent; __fsnotify_parent; fanotify has no IN_EXCL_UNLINK)",
		Needs: []*feature.Feature{feature.ReportDFIDName},
		Run:   unlinkedFanotify,
	},
	{
		Name: "disconnected_dentry.inotify",
		Doc: "a file reopened by handle after its dentry was dropped (disconnected, IS_ROOT) reports only to its own watch, not the parent's " +
			"(include/linux/fsnotify.h fsnotify_parent: \"disconnected dentry cannot notify parent\"); ext4 only: tmpfs pins every dentry",
		Filesystems: []string{"ext4"},
		Run:         disconnectedInotify,
	},
	{
		Name: "disconnected_dentry.fanotify",
		Doc: "a file reopened by handle after its dentry was dropped reports only to its own mark, with FID and no DFID_NAME " +
			"(fsnotify_parent IS_ROOT; fanotify_init(2) FAN_REPORT_DIR_FID: no parent, no directory record); ext4 only: tmpfs pins every dentry",
		Filesystems: []string{"ext4"},
		Needs:       []*feature.Feature{feature.ReportDFIDName},
		Run:         disconnectedFanotify,
	},
}

func unlinkedInotify(t *harness.T, excl bool) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	fd := e.open(f, unix.O_WRONLY)
	l := e.inotify()
	mask := uint32(unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_DELETE)
	if excl {
		mask |= unix.IN_EXCL_UNLINK
	}
	wd := l.watch(e.w, mask)
	e.write(fd)
	l.check(iev(wd, unix.IN_MODIFY, "f"))
	e.unlink(f)
	l.check(iev(wd, unix.IN_DELETE, "f"))
	e.write(fd)
	if excl {
		l.check()
	} else {
		// d_delete of a dentry still in use only unhashes it: d_parent and
		// d_name stay, so the name snapshot is the old name.
		l.check(iev(wd, unix.IN_MODIFY, "f"))
	}
	e.close(fd)
	if excl {
		l.check()
	} else {
		l.check(iev(wd, unix.IN_CLOSE_WRITE, "f"))
	}
	l.quiet()
}

func unlinkedFanotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	rec := e.child(e.w, "f", e.fid(f))
	fd := e.open(f, unix.O_WRONLY)
	g := e.fanotify("p")
	g.mark(0, unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE|unix.FAN_DELETE|onChild, e.w)
	e.write(fd)
	g.check(e.fev(unix.FAN_MODIFY, rec...))
	e.unlink(f)
	g.check(e.fev(unix.FAN_DELETE, e.dname(e.w, "f")))
	// Path events on the open, unlinked file still go through
	// __fsnotify_parent with the dentry's retained d_parent and d_name.
	// fanotify_init(2)'s example of an object without a parent ("an event
	// occurs on an unlinked but open file") concerns events reported without
	// a path (fsnotify_inode: FAN_ATTRIB on the link count, FAN_DELETE_SELF),
	// not these.
	e.write(fd)
	g.check(e.fev(unix.FAN_MODIFY, rec...))
	e.close(fd)
	g.check(e.fev(unix.FAN_CLOSE_WRITE, rec...))
	g.quiet()
}

// ---- disconnected dentry ----

// roleByHandle is the reexec role of the by-handle helper: a process other
// than the test that opens a file with open_by_handle_at(2), writes one byte,
// closes it, and prints what /proc/self/fd says the open file is.
const roleByHandle = "by_handle"

// byHandleMain is the helper's main: args are the filesystem root (its cwd,
// the mount_fd AT_FDCWD refers to), the handle type and the handle in hex.
func byHandleMain(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "by-handle helper: want root, handle type, handle hex")
		return 2
	}
	typ, err := strconv.Atoi(args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "by-handle helper: type: %v\n", err)
		return 2
	}
	b, err := hex.DecodeString(args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "by-handle helper: handle: %v\n", err)
		return 2
	}
	if err := unix.Chdir(args[0]); err != nil {
		fmt.Fprintf(os.Stderr, "by-handle helper: chdir %s: %v\n", args[0], err)
		return 1
	}
	fd, err := unix.OpenByHandleAt(unix.AT_FDCWD, unix.NewFileHandle(int32(typ), b), unix.O_RDWR|unix.O_CLOEXEC)
	if err != nil {
		fmt.Fprintf(os.Stderr, "by-handle helper: open_by_handle_at: %v\n", err)
		return 1
	}
	link, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if _, err := unix.Write(fd, []byte("x")); err != nil {
		fmt.Fprintf(os.Stderr, "by-handle helper: write: %v\n", err)
		return 1
	}
	if err := unix.Close(fd); err != nil {
		fmt.Fprintf(os.Stderr, "by-handle helper: close: %v\n", err)
		return 1
	}
	fmt.Println(link)
	return 0
}

// handleOf returns path's file handle (setup).
func (e *env) handleOf(p string) unix.FileHandle {
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, p, 0)
	if err != nil {
		e.t.Fatalf("setup: name_to_handle_at %s: %v", p, err)
	}
	return h
}

// dropDentries writes 2 to /proc/sys/vm/drop_caches (free reclaimable slab:
// dentries and inodes) a few times, since a referenced dentry survives one
// pass of the LRU. Global and not undoable; it only costs re-lookups.
func (e *env) dropDentries() {
	for i := 0; i < 3; i++ {
		if err := fixture.DropCaches(); err != nil {
			e.t.Fatalf("%v", err)
		}
	}
	e.t.Note("wrote 2 to /proc/sys/vm/drop_caches (global: drops unused dentries and inodes system-wide; nothing to restore)")
	e.did("drop_caches=2 x3")
}

// openByHandle runs the helper and returns its pid. The helper must get the
// disconnected dentry: with nothing holding w/f's dentry it was freed, and
// exportfs_decode_fh does not reconnect a non-directory when the caller has
// CAP_DAC_READ_SEARCH (vfs_dentry_acceptable accepts any alias).
func (e *env) openByHandle(p string, h unix.FileHandle) int {
	cmd := reexec.Command(roleByHandle, "", e.t.FS().Root, strconv.Itoa(int(h.Type())), hex.EncodeToString(h.Bytes()))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		e.t.Fatalf("by-handle helper: %s", reexec.Failure(err, errb.Bytes()))
	}
	link := strings.TrimSpace(out.String())
	e.did("helper pid %d: open_by_handle_at(%s) O_RDWR (fd shows %q), write 1 byte, close", cmd.Process.Pid, e.rel(p), link)
	e.t.Notef("by-handle open: /proc/<pid>/fd shows %q (the connected dentry would show %s)", link, p)
	if link == p {
		e.t.Fatalf("precondition failed: open_by_handle_at got the connected dentry %s (its dentry was not dropped), so this run cannot test a disconnected dentry", link)
	}
	return cmd.Process.Pid
}

func disconnectedInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	h := e.handleOf(f)
	l := e.inotify()
	wdP := l.watch(e.w, inRW)
	wdF := l.watch(f, inRW) // pins the inode (not the dentry) while it is dropped
	e.dropDentries()
	e.openByHandle(f, h)
	l.check(iev(wdF, unix.IN_OPEN, ""), iev(wdF, unix.IN_MODIFY, ""), iev(wdF, unix.IN_CLOSE_WRITE, ""))
	// Through the path, a new connected dentry is made under w (d_splice_alias
	// adds a non-directory alias with __d_add, which flags it): the parent
	// hears again.
	e.writeThrough(f,
		func() { l.check(iev(wdP, unix.IN_OPEN, "f"), iev(wdF, unix.IN_OPEN, "")) },
		func() { l.check(iev(wdP, unix.IN_MODIFY, "f"), iev(wdF, unix.IN_MODIFY, "")) },
		func() { l.check(iev(wdP, unix.IN_CLOSE_WRITE, "f"), iev(wdF, unix.IN_CLOSE_WRITE, "")) })
	l.quiet()
}

func disconnectedFanotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	h := e.handleOf(f)
	fid := e.fid(f)
	rec := e.child(e.w, "f", fid)
	gp, gs := e.fanotify("parent"), e.fanotify("self")
	gp.mark(0, fanRW|onChild, e.w)
	gs.mark(0, fanRW, f)
	e.dropDentries()
	pid := e.openByHandle(f, h)
	gp.check()
	// No parent: only the object's FID record (fanotify_init(2)
	// FAN_REPORT_DIR_FID: "a filesystem object does not have a parent ... the
	// event will be reported without an information record to identify the
	// parent directory"). The helper's three events concern one object and
	// one pid and are not read in between, so fanotify merges them into one
	// (fs/notify/fanotify/fanotify.c fanotify_merge/fanotify_should_merge).
	gs.check(fanEventPid(unix.FAN_OPEN|unix.FAN_MODIFY|unix.FAN_CLOSE_WRITE, pid, fid))
	ev := func(mask uint64) func() {
		return func() { gp.check(e.fev(mask, rec...)); gs.check(e.fev(mask, rec...)) }
	}
	e.writeThrough(f, ev(unix.FAN_OPEN), ev(unix.FAN_MODIFY), ev(unix.FAN_CLOSE_WRITE))
	e.quiet(gp, gs)
}
