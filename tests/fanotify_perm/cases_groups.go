package main

import (
	"bytes"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// groupCases: one FAN_CLASS_PRE_CONTENT and one FAN_CLASS_CONTENT group mark
// FAN_OPEN_PERM on the file, a FAN_CLASS_NOTIF group marks FAN_OPEN.
// fanotify_init(2): pre-content listeners receive events before content
// listeners, and those before notification listeners; fs/notify/fsnotify.c
// fsnotify() walks the groups by priority and stops at the first group that
// returns an error for a permission event, so one DENY wins and later groups
// never see the event; FAN_OPEN is only generated once the open succeeded.
var groupCases = []harness.Case{
	{
		Name: "groups_order_allow",
		Doc:  "PRE_CONTENT group sees FAN_OPEN_PERM first, the CONTENT group only after it answered, the NOTIF group's FAN_OPEN only after both allowed",
		Run:  func(t *harness.T) { runGroups(t, fanotify.Allow, fanotify.Allow) },
	},
	{
		Name: "groups_pre_content_deny_wins",
		Doc:  "a DENY from the PRE_CONTENT group fails the open with EPERM; the CONTENT and NOTIF groups see nothing",
		Run:  func(t *harness.T) { runGroups(t, fanotify.Deny, 0) },
	},
	{
		Name: "groups_content_deny_wins",
		Doc:  "PRE_CONTENT allows, CONTENT denies: the open fails with EPERM and the NOTIF group sees no FAN_OPEN",
		Run:  func(t *harness.T) { runGroups(t, fanotify.Allow, fanotify.Deny) },
	},
}

func runGroups(t *harness.T, pcAnswer, cAnswer uint32) {
	e := prepare(t, 1, "f")
	a, f := e.a(0), e.f("f")
	// Opened in the reverse of priority order, so that the order of the
	// groups' creation cannot explain the order of delivery.
	n := group(t, unix.FAN_CLASS_NOTIF)
	c := group(t, unix.FAN_CLASS_CONTENT)
	pc := group(t, unix.FAN_CLASS_PRE_CONTENT)
	mark(t, n, 0, unix.FAN_OPEN, f.Path)
	mark(t, c, 0, unix.FAN_OPEN_PERM, f.Path)
	mark(t, pc, 0, unix.FAN_OPEN_PERM, f.Path)
	did := fmt.Sprintf("inode marks on %s: NOTIF FAN_OPEN, CONTENT FAN_OPEN_PERM, PRE_CONTENT FAN_OPEN_PERM; actor open(2)", f.Path)

	p := send(t, a, openOp(f.Path))
	evPC := readOne(t, pc, did+"; PRE_CONTENT group", want(unix.FAN_OPEN_PERM, a.Pid(), f))
	none(t, c, did+"; CONTENT group before PRE_CONTENT answered")
	none(t, n, did+"; NOTIF group before PRE_CONTENT answered")
	stillBlocked(t, p, did)
	respond(t, pc, evPC, pcAnswer)
	if pcAnswer == fanotify.Deny {
		finish(t, p, answerWait, unix.EPERM, did+"; PRE_CONTENT answered FAN_DENY")
		quietAll(t, did+"; after PRE_CONTENT denied", pc, c, n)
		return
	}
	evC := readOne(t, c, did+"; CONTENT group after PRE_CONTENT allowed", want(unix.FAN_OPEN_PERM, a.Pid(), f))
	none(t, n, did+"; NOTIF group before CONTENT answered")
	stillBlocked(t, p, did+"; CONTENT group not answered yet")
	respond(t, c, evC, cAnswer)
	if cAnswer == fanotify.Deny {
		finish(t, p, answerWait, unix.EPERM, did+"; CONTENT answered FAN_DENY")
		none(t, n, did+"; NOTIF group after CONTENT denied")
	} else {
		finish(t, p, answerWait, 0, did+"; both allowed")
		got, err := n.Drain()
		if err != nil {
			t.Fatalf("drain NOTIF group: %v", err)
		}
		expect.Fanotify(t, did+"; NOTIF group after the open returned", got, []fanotify.Event{want(unix.FAN_OPEN, a.Pid(), f)})
	}
	quietAll(t, did, pc, c, n)
}

// ignoreCases: a mount mark asks for FAN_OPEN_PERM on the whole mount; an
// ignore mask on the file, or on its parent with FAN_EVENT_ON_CHILD, takes
// the event away (fanotify_mark(2) FAN_MARK_IGNORED_MASK, FAN_MARK_IGNORE;
// fs/notify/fsnotify.c send_to_group: the event is reported only for
// mask & ~ignore_mask; a parent's ignore mask applies to its children only
// when it holds FAN_EVENT_ON_CHILD: commit e252f2ed1c8c "fanotify: introduce
// FAN_MARK_IGNORE", include/linux/fsnotify_backend.h
// fsnotify_effective_ignore_mask). A file elsewhere on the mount is still
// reported, which proves the mount mark is live.
var ignoreCases = []harness.Case{
	{
		Name: "ignore_inode",
		Doc:  "an inode ignore mask FAN_OPEN_PERM hides the file's open from a mount mark (no event, open succeeds); another file's open is still held",
		Run: func(t *harness.T) {
			runIgnore(t, func(t *harness.T, g *fanotify.Group, e *env) string {
				mark(t, g, unix.FAN_MARK_IGNORED_MASK|unix.FAN_MARK_IGNORED_SURV_MODIFY, unix.FAN_OPEN_PERM, e.f("d/f").Path)
				return "inode ignore mask FAN_OPEN_PERM on d/f"
			}, true)
		},
	},
	{
		Name:  "ignore_parent_on_child",
		Doc:   "a parent ignore mask FAN_OPEN_PERM|FAN_EVENT_ON_CHILD (FAN_MARK_IGNORE) hides a child's open from a mount mark; a file in another directory is still held",
		Needs: []*feature.Feature{feature.MarkIgnore},
		Run: func(t *harness.T) {
			runIgnore(t, func(t *harness.T, g *fanotify.Group, e *env) string {
				mark(t, g, unix.FAN_MARK_IGNORE|unix.FAN_MARK_IGNORED_SURV_MODIFY, unix.FAN_OPEN_PERM|unix.FAN_EVENT_ON_CHILD, t.Path("d"))
				return "parent ignore (FAN_MARK_IGNORE) FAN_OPEN_PERM|FAN_EVENT_ON_CHILD on d"
			}, true)
		},
	},
	{
		Name:  "ignore_parent_not_on_child",
		Doc:   "a parent ignore mask FAN_OPEN_PERM without FAN_EVENT_ON_CHILD (FAN_MARK_IGNORE) does not apply to its children: the child's open is held",
		Needs: []*feature.Feature{feature.MarkIgnore},
		Run: func(t *harness.T) {
			runIgnore(t, func(t *harness.T, g *fanotify.Group, e *env) string {
				mark(t, g, unix.FAN_MARK_IGNORE|unix.FAN_MARK_IGNORED_SURV_MODIFY, unix.FAN_OPEN_PERM, t.Path("d"))
				return "parent ignore (FAN_MARK_IGNORE) FAN_OPEN_PERM on d, no FAN_EVENT_ON_CHILD"
			}, false)
		},
	},
}

func runIgnore(t *harness.T, ignore func(*harness.T, *fanotify.Group, *env) string, hidden bool) {
	e := prepare(t, 1, "d/", "d/f", "o/", "o/f")
	a := e.a(0)
	root := t.FS().Root
	g := group(t, unix.FAN_CLASS_CONTENT)
	mark(t, g, unix.FAN_MARK_MOUNT, unix.FAN_OPEN_PERM, root)
	did := fmt.Sprintf("mount mark FAN_OPEN_PERM on %s; %s", root, ignore(t, g, e))

	in, other := e.f("d/f"), e.f("o/f")
	p := send(t, a, openOp(in.Path))
	if hidden {
		r := noPerm(t, g, p, did+"; actor open(2) d/f")
		if r.Errno != 0 {
			t.Errorf("%s: open d/f: %s, want success", did, expect.ErrnoText(r.Errno))
		}
	} else {
		ev := readOne(t, g, did+"; actor open(2) d/f", want(unix.FAN_OPEN_PERM, a.Pid(), in))
		respond(t, g, ev, fanotify.Allow)
		finish(t, p, answerWait, 0, did+"; open d/f answered FAN_ALLOW")
	}

	p = send(t, a, openOp(other.Path))
	ev := readOne(t, g, did+"; actor open(2) o/f", want(unix.FAN_OPEN_PERM, a.Pid(), other))
	respond(t, g, ev, fanotify.Deny)
	finish(t, p, answerWait, unix.EPERM, did+"; open o/f answered FAN_DENY")
	quiet(t, g, did)
}

// preContentCases: FAN_PRE_ACCESS (6.14) is reported before a read with the
// page-aligned range being read (fs/notify/fsnotify.c fsnotify_pre_content:
// pos = PAGE_ALIGN_DOWN(pos), count = PAGE_ALIGN(pos + count) - pos) in a
// FAN_EVENT_INFO_TYPE_RANGE record (fanotify(7)). Only filesystems whose
// superblock sets SB_I_ALLOW_HSM accept the mark (fanotify_user.c
// fanotify_events_supported: EOPNOTSUPP otherwise); the case runs on ext4
// only, and would skip naming the filesystem anywhere else.
var preContentCases = []harness.Case{
	{
		Name:  "pre_access_range",
		Doc:   "FAN_PRE_ACCESS before pread(2) carries the page-aligned range; FAN_ALLOW lets the read return the data, FAN_DENY_ERRNO(EIO) fails it with EIO (fanotify(7))",
		Needs: []*feature.Feature{feature.PreContent},
		// Pre-content events need a superblock with SB_I_ALLOW_HSM
		// (fanotify_user.c: fanotify_events_supported() returns EOPNOTSUPP
		// otherwise); tmpfs never sets it, by design rather than by a
		// missing feature, so the case is not run there and -strict can pass.
		Filesystems: []string{"ext4"},
		Run:         runPreAccess,
	},
}

func runPreAccess(t *harness.T) {
	page := unix.Getpagesize()
	e := prepare(t, 1, "f")
	a, f := e.a(0), e.f("f")
	data := bytes.Repeat([]byte("0123456789abcdef"), 3*page/16)
	if err := writeOver(f.Path, data); err != nil {
		t.Fatalf("setup: %v", err)
	}
	g := group(t, unix.FAN_CLASS_PRE_CONTENT)
	if err := g.Add(0, unix.FAN_PRE_ACCESS, f.Path); err != nil {
		// EOPNOTSUPP: the superblock lacks SB_I_ALLOW_HSM. The feature
		// layer judges it: a skip on a kernel before the filesystem allowed
		// pre-content marks, a failure from that release on.
		if errors.Is(err, unix.EOPNOTSUPP) {
			t.Judge(feature.PreContentOn(t.FS().Type), err)
		}
		t.Fatalf("%v", err)
	}
	did := fmt.Sprintf("group FAN_CLASS_PRE_CONTENT; inode mark FAN_PRE_ACCESS on %s", f.Path)

	// The open itself raises no pre-content event (fsnotify_open_perm_and_set_mode
	// sends only FAN_OPEN_EXEC_PERM/FAN_OPEN_PERM).
	po := send(t, a, openOp(f.Path))
	r := noPerm(t, g, po, did+"; actor open(2)")
	if r.Errno != 0 {
		t.Fatalf("%s: actor open: %s", did, expect.ErrnoText(r.Errno))
	}
	fd := r.Fd

	off, n := int64(page+904), 10
	rng := fanotify.Info{Type: unix.FAN_EVENT_INFO_TYPE_RANGE, Offset: uint64(page), Count: uint64(page)}
	d1 := fmt.Sprintf("%s; actor pread(2) %d bytes at %d", did, n, off)
	p := send(t, a, preadOp(fd, n, off))
	ev := readOne(t, g, d1, want(unix.FAN_PRE_ACCESS, a.Pid(), f, rng))
	stillBlocked(t, p, d1)
	respond(t, g, ev, fanotify.Allow)
	res := finish(t, p, answerWait, 0, d1+"; answered FAN_ALLOW")
	if w := data[off : off+int64(n)]; !bytes.Equal(res.Data, w) {
		t.Errorf("%s: read %q, want %q", d1, res.Data, w)
	}

	off, n = 0, page+1
	rng = fanotify.Info{Type: unix.FAN_EVENT_INFO_TYPE_RANGE, Offset: 0, Count: uint64(2 * page)}
	d2 := fmt.Sprintf("%s; actor pread(2) %d bytes at %d", did, n, off)
	p = send(t, a, preadOp(fd, n, off))
	ev = readOne(t, g, d2, want(unix.FAN_PRE_ACCESS, a.Pid(), f, rng))
	respond(t, g, ev, fanotify.DenyErrno(unix.EIO))
	finish(t, p, answerWait, unix.EIO, d2+"; answered FAN_DENY|errno EIO")
	quiet(t, g, did)
}

// writeOver replaces a prepared file's content (before any mark).
func writeOver(path string, data []byte) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_TRUNC|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
