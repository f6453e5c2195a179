package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/envfault"
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
// closes it, and reports what /proc/self/fd says the open file is.
const roleByHandle = "by_handle"

// byHandleReport is what the by-handle helper prints (JSON).
type byHandleReport struct {
	Link  string     // /proc/self/fd's name of the file it opened
	Step  string     // the call that failed ("" none): chdir, open_by_handle_at, write, close
	Errno unix.Errno // that call's errno
}

// byHandleMain is the helper's main: args are the filesystem root (its cwd,
// the mount_fd AT_FDCWD refers to), the handle type and the handle in hex.
// It exits 2 on bad arguments, else 0 with its report.
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
	rep := byHandleOpenWrite(args[0], unix.NewFileHandle(int32(typ), b))
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}

// byHandleOpenWrite is the helper's work: chdir to root, open the handle
// O_RDWR, read its /proc/self/fd link, write one byte, close.
func byHandleOpenWrite(root string, h unix.FileHandle) byHandleReport {
	fail := func(step string, err error) byHandleReport {
		var n unix.Errno
		errors.As(err, &n)
		return byHandleReport{Step: step, Errno: n}
	}
	if err := unix.Chdir(root); err != nil {
		return fail("chdir "+root, err)
	}
	fd, err := unix.OpenByHandleAt(unix.AT_FDCWD, h, unix.O_RDWR|unix.O_CLOEXEC)
	if err != nil {
		return fail("open_by_handle_at", err)
	}
	link, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if _, err := unix.Write(fd, []byte("x")); err != nil {
		unix.Close(fd)
		return fail("write", err)
	}
	if err := unix.Close(fd); err != nil {
		return fail("close", err)
	}
	return byHandleReport{Link: link}
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
// pass of the LRU. Global and not undoable; it only costs re-lookups, and
// another program doing the same meanwhile only helps. A write the machine
// refuses is a setup step's failure, never the kernel's under test: EPERM
// (or EACCES in a user namespace) a skip naming the privilege, EROFS (a
// read-only /proc/sys, as in many containers) and the other errnos of the
// machine an environment skip (harness/envfault), anything else "setup:".
func (e *env) dropDentries() {
	for i := 0; i < 3; i++ {
		if err := fixture.DropCaches(); err != nil {
			if r, ok := feature.Refusal(err, "CAP_SYS_ADMIN"); ok {
				e.t.Skipf("setup: drop_caches (/proc/sys/vm/drop_caches): %s", r)
			}
			e.t.Fatalf("setup: %v", envfault.Setup("write /proc/sys/vm/drop_caches", err))
		}
	}
	e.t.Note("wrote 2 to /proc/sys/vm/drop_caches (global: drops unused dentries and inodes system-wide; nothing to restore)")
	e.did("drop_caches=2 x3")
}

// openByHandle runs the helper once and returns its pid and the link its
// open file showed. A helper that cannot run, or whose calls fail, is a
// setup failure (the writes and their events are what the case judges, not
// open_by_handle_at): EPERM a skip naming CAP_DAC_READ_SEARCH, an errno of
// the machine (ENOSPC on the write, ENOMEM, EMFILE) an environment skip.
func (e *env) openByHandle(p string, h unix.FileHandle) (int, string) {
	cmd := reexec.Command(roleByHandle, "", e.t.FS().Root, strconv.Itoa(int(h.Type())), hex.EncodeToString(h.Bytes()))
	var rep byHandleReport
	if err := reexec.RunReport(cmd, &rep); err != nil {
		e.t.Fatalf("setup: by-handle helper: %v", err)
	}
	if rep.Step != "" {
		call := fmt.Sprintf("by-handle helper (pid %d): %s of %s", cmd.Process.Pid, rep.Step, e.rel(p))
		if r, ok := feature.Refusal(rep.Errno, "CAP_DAC_READ_SEARCH in the initial user namespace"); ok && rep.Step == "open_by_handle_at" {
			e.t.Skipf("setup: %s: %s", call, r)
		}
		e.t.Fatalf("setup: %v [after: %s]", envfault.Setup(call, fmt.Errorf("%s: %w", call, rep.Errno)), e.history())
	}
	e.did("helper pid %d: open_by_handle_at(%s) O_RDWR (fd shows %q), write 1 byte, close", cmd.Process.Pid, e.rel(p), rep.Link)
	e.t.Notef("by-handle open: /proc/<pid>/fd shows %q (the connected dentry would show %s)", rep.Link, p)
	return cmd.Process.Pid, rep.Link
}

// disconnectedTries bounds the attempts to make the disconnected dentry.
const disconnectedTries = 5

// disconnectedWrite drops the dentries and has the helper open p by handle
// h, write a byte and close it; it returns the helper's pid. The helper must
// get a disconnected dentry: with nothing holding w/f's dentry it was freed,
// and exportfs_decode_fh does not reconnect a non-directory when the caller
// has CAP_DAC_READ_SEARCH (vfs_dentry_acceptable accepts any alias). That is
// the case's precondition, not the kernel behaviour it judges, and another
// program can defeat it: one that holds the dentry (an open file, a cwd)
// keeps drop_caches from freeing it, and a lookup of the path between the
// drop and the open makes a connected alias again. So an attempt whose open
// got the connected dentry (its /proc fd link is p) is no measurement: what
// it queued on ls is drained and dropped, and the dentries are dropped
// again. After disconnectedTries such attempts the case is an environment
// skip naming the dentry.
func (e *env) disconnectedWrite(p string, h unix.FileHandle, ls ...discarder) int {
	for try := 1; ; try++ {
		e.dropDentries()
		pid, link := e.openByHandle(p, h)
		if link != p {
			return pid
		}
		dropped := 0
		for _, l := range ls {
			n, err := l.discard()
			if err != nil {
				e.t.Fatalf("draining the events of an attempt whose open got the connected dentry: %v [after: %s]", err, e.history())
			}
			dropped += n
		}
		e.did("attempt %d: the helper's open got the connected dentry; its %d events dropped", try, dropped)
		e.t.Notef("attempt %d of %d: open_by_handle_at got the connected dentry %s (held or looked up by another process?); its %d events dropped", try, disconnectedTries, p, dropped)
		if try == disconnectedTries {
			e.t.SkipEnvironment("dentry of %s stayed connected: open_by_handle_at(2) got it on all %d attempts, each right after drop_caches=2 x3 "+
				"(another process holds it, as an open file or a cwd, or looks the path up meanwhile), so this run could not make the disconnected dentry the case is about", e.rel(p), try)
		}
	}
}

func disconnectedInotify(t *harness.T) {
	e := newEnv(t)
	f := e.file(e.w, "f", "")
	h := e.handleOf(f)
	l := e.inotify()
	wdP := l.watch(e.w, inRW)
	wdF := l.watch(f, inRW) // pins the inode (not the dentry) while it is dropped
	e.disconnectedWrite(f, h, l)
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
	pid := e.disconnectedWrite(f, h, gp, gs)
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
