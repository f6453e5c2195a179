package main

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// allowedDenyErrnos are the errnos fs/notify/fanotify/fanotify_user.c
// process_access_response accepts with FAN_DENY_ERRNO ("Limit errno to values
// expected on open(2)/read(2)/write(2) of regular files").
var allowedDenyErrnos = []unix.Errno{unix.EIO, unix.EPERM, unix.EBUSY, unix.ETXTBSY, unix.EAGAIN, unix.ENOSPC, unix.EDQUOT}

// rejectedDenyErrnos are outside that set: the response is refused with EINVAL.
var rejectedDenyErrnos = []unix.Errno{unix.EACCES, unix.ENOENT, unix.EINVAL, unix.EBADF, unix.EROFS, unix.EFAULT, 255}

// blockedOpen prepares one file and one actor, opens a group of class
// initFlags with an inode FAN_OPEN_PERM mark on the file, starts the actor's
// open and reads the (checked) event. The actor stays blocked.
type blockedOpen struct {
	e   *env
	g   *fanotify.Group
	f   target
	p   *actor.Pending
	ev  fanotify.Event
	did string
}

func openBlocked(t *harness.T, initFlags uint) *blockedOpen {
	t.Helper()
	e := prepare(t, 1, "f")
	g := group(t, initFlags)
	return openBlockedIn(t, e, g, fanotify.InitFlagsString(initFlags))
}

func openBlockedIn(t *harness.T, e *env, g *fanotify.Group, class string) *blockedOpen {
	t.Helper()
	f := e.f("f")
	mark(t, g, 0, unix.FAN_OPEN_PERM, f.Path)
	b := &blockedOpen{e: e, g: g, f: f}
	b.did = fmt.Sprintf("group %s; inode mark FAN_OPEN_PERM on %s; actor open(2)", class, f.Path)
	b.p = send(t, e.a(0), openOp(f.Path))
	b.ev = readOne(t, g, b.did, want(unix.FAN_OPEN_PERM, e.a(0).Pid(), f))
	return b
}

var responseCases = []harness.Case{
	{
		Name:  "deny_errno_allowed",
		Doc:   "FAN_DENY_ERRNO from a FAN_CLASS_PRE_CONTENT group: the actor's open(2) fails with exactly the errno given, for each errno fanotify_user.c allows (EIO arrives as EIO)",
		Needs: []*feature.Feature{feature.PreContent},
		Run: func(t *harness.T) {
			e := prepare(t, 1, "f")
			g := group(t, unix.FAN_CLASS_PRE_CONTENT)
			f := e.f("f")
			mark(t, g, 0, unix.FAN_OPEN_PERM, f.Path)
			for _, errno := range allowedDenyErrnos {
				did := fmt.Sprintf("group FAN_CLASS_PRE_CONTENT; inode mark FAN_OPEN_PERM; actor open(2); answer FAN_DENY|errno %s", expect.ErrnoText(errno))
				p := send(t, e.a(0), openOp(f.Path))
				ev := readOne(t, g, did, want(unix.FAN_OPEN_PERM, e.a(0).Pid(), f))
				respond(t, g, ev, fanotify.DenyErrno(errno))
				finish(t, p, answerWait, errno, did)
			}
			quiet(t, g, "after the last answer")
		},
	},
	{
		Name:  "deny_errno_rejected_values",
		Doc:   "FAN_DENY_ERRNO with an errno outside the allowed set, or FAN_ALLOW with an errno, is refused with EINVAL and the event stays pending and answerable (fanotify_user.c process_access_response)",
		Needs: []*feature.Feature{feature.PreContent},
		Run: func(t *harness.T) {
			b := openBlocked(t, unix.FAN_CLASS_PRE_CONTENT)
			for _, errno := range rejectedDenyErrnos {
				respondErr(t, b.g, b.ev.Fd, fanotify.DenyErrno(errno), unix.EINVAL, "errno outside the allowed set")
			}
			respondErr(t, b.g, b.ev.Fd, fanotify.Allow|uint32(unix.EIO)<<unix.FAN_ERRNO_SHIFT, unix.EINVAL, "an errno with FAN_ALLOW")
			stillBlocked(t, b.p, b.did+"; after refused responses")
			respond(t, b.g, b.ev, fanotify.DenyErrno(unix.EIO))
			finish(t, b.p, answerWait, unix.EIO, b.did+"; then FAN_DENY|errno EIO")
			quiet(t, b.g, b.did)
		},
	},
	{
		Name: "deny_errno_content_class_rejected",
		Doc:  "FAN_DENY_ERRNO from a FAN_CLASS_CONTENT group is refused with EINVAL (custom errno only for pre-content groups, on every kernel); the event stays pending and a plain FAN_DENY then gives EPERM",
		Run: func(t *harness.T) {
			b := openBlocked(t, unix.FAN_CLASS_CONTENT)
			respondErr(t, b.g, b.ev.Fd, fanotify.DenyErrno(unix.EIO), unix.EINVAL,
				"fanotify_user.c: \"Custom errno is supported only for pre-content groups\"")
			stillBlocked(t, b.p, b.did+"; after the refused FAN_DENY|errno EIO")
			respond(t, b.g, b.ev, fanotify.Deny)
			finish(t, b.p, answerWait, unix.EPERM, b.did+"; then FAN_DENY")
			quiet(t, b.g, b.did)
		},
	},
	{
		Name: "audit_needs_enable_audit",
		Doc:  "FAN_AUDIT in a response of a group made without FAN_ENABLE_AUDIT is refused with EINVAL; the event stays pending and answerable (fanotify(7) FAN_AUDIT; fanotify_user.c)",
		Run: func(t *harness.T) {
			b := openBlocked(t, unix.FAN_CLASS_CONTENT)
			respondErr(t, b.g, b.ev.Fd, fanotify.Allow|unix.FAN_AUDIT, unix.EINVAL, "group made without FAN_ENABLE_AUDIT")
			respondErr(t, b.g, b.ev.Fd, fanotify.Deny|unix.FAN_AUDIT, unix.EINVAL, "group made without FAN_ENABLE_AUDIT")
			stillBlocked(t, b.p, b.did+"; after refused FAN_AUDIT responses")
			respond(t, b.g, b.ev, fanotify.Allow)
			finish(t, b.p, answerWait, 0, b.did+"; then FAN_ALLOW")
			quiet(t, b.g, b.did)
		},
	},
	{
		Name: "audit_enabled",
		Doc:  "with FAN_ENABLE_AUDIT (needs CAP_AUDIT_WRITE) FAN_DENY|FAN_AUDIT is accepted and denies (EPERM), FAN_ALLOW|FAN_AUDIT is accepted and allows (fanotify_init(2), fanotify(7))",
		Run: func(t *harness.T) {
			e := prepare(t, 1, "f")
			// A plain content group first: without CAP_SYS_ADMIN it skips
			// with that reason, so an EPERM below is CAP_AUDIT_WRITE's.
			group(t, unix.FAN_CLASS_CONTENT)
			g, err := fanotify.Init(unix.FAN_CLASS_CONTENT|unix.FAN_ENABLE_AUDIT, eventFlags)
			if err != nil {
				// EPERM (no CAP_AUDIT_WRITE) and EINVAL (no
				// CONFIG_AUDITSYSCALL, or a kernel before 4.15) are
				// judged by the feature layer: a skip naming the reason,
				// a failure when the kernel's config sets the option.
				t.Judge(feature.EnableAudit, err)
				t.Fatalf("%v", err)
			}
			t.Cleanup(func() { g.Close() })
			b := openBlockedIn(t, e, g, "FAN_CLASS_CONTENT|FAN_ENABLE_AUDIT")
			respond(t, g, b.ev, fanotify.Deny|unix.FAN_AUDIT)
			finish(t, b.p, answerWait, unix.EPERM, b.did+"; answered FAN_DENY|FAN_AUDIT")

			p := send(t, e.a(0), openOp(b.f.Path))
			ev := readOne(t, g, b.did+" again", want(unix.FAN_OPEN_PERM, e.a(0).Pid(), b.f))
			respond(t, g, ev, fanotify.Allow|unix.FAN_AUDIT)
			finish(t, p, answerWait, 0, b.did+" again; answered FAN_ALLOW|FAN_AUDIT")
			quiet(t, g, b.did)
		},
	},
	{
		Name: "response_unknown_fd",
		Doc:  "a response naming an fd that is no pending event's is refused with ENOENT, a negative fd with EINVAL; the pending event is still answerable (fanotify_user.c process_access_response)",
		Run: func(t *harness.T) {
			b := openBlocked(t, unix.FAN_CLASS_CONTENT)
			// The group's own fd is open in this process but names no event.
			respondErr(t, b.g, int32(b.g.Fd()), fanotify.Allow, unix.ENOENT, "no pending event has this fd")
			respondErr(t, b.g, 1<<20, fanotify.Allow, unix.ENOENT, "no pending event has this fd")
			respondErr(t, b.g, -2, fanotify.Allow, unix.EINVAL, "a negative fd without FAN_INFO")
			stillBlocked(t, b.p, b.did+"; after refused responses")
			respond(t, b.g, b.ev, fanotify.Deny)
			finish(t, b.p, answerWait, unix.EPERM, b.did+"; then FAN_DENY")
			quiet(t, b.g, b.did)
		},
	},
	{
		Name: "response_twice",
		Doc:  "a second response for an answered event is refused with ENOENT and does not change the first answer (fanotify_user.c: the answered event leaves the access list)",
		Run: func(t *harness.T) {
			b := openBlocked(t, unix.FAN_CLASS_CONTENT)
			if err := b.g.Respond(b.ev.Fd, fanotify.Deny); err != nil {
				t.Fatalf("first response: %v", err)
			}
			respondErr(t, b.g, b.ev.Fd, fanotify.Allow, unix.ENOENT, "the event was already answered")
			b.g.ReleaseFd(b.ev.Fd)
			finish(t, b.p, answerWait, unix.EPERM, b.did+"; answered FAN_DENY then FAN_ALLOW")
			quiet(t, b.g, b.did)
		},
	},
	{
		Name: "response_size",
		Fix:  &harness.Fix{Commit: "5e23663b49e1e8ee6b805356259e3062edac5e2b", Subject: "fanotify: don't write with size under sizeof(response)"},
		Doc:  "a response shorter than struct fanotify_response is refused with EINVAL and the event stays pending; a longer one without FAN_INFO is applied and write(2) returns sizeof(struct fanotify_response) (fanotify_user.c fanotify_write)",
		Run: func(t *harness.T) {
			b := openBlocked(t, unix.FAN_CLASS_CONTENT)
			r := unix.FanotifyResponse{Fd: b.ev.Fd, Response: fanotify.Deny}
			raw := unsafe.Slice((*byte)(unsafe.Pointer(&r)), unsafe.Sizeof(r))
			n, err := unix.Write(b.g.Fd(), raw[:len(raw)-1])
			if !errors.Is(err, unix.EINVAL) {
				t.Errorf("write of %d bytes: want EINVAL, got n=%d err=%v", len(raw)-1, n, errOrNil(err))
			}
			if err == nil {
				// A kernel without the Fix accepts the short write; any
				// other errno is no sign of it.
				t.KernelLacks(t.CaseFix())
			}
			stillBlocked(t, b.p, b.did+"; after a short response")
			long := append(append([]byte(nil), raw...), make([]byte, 8)...)
			n, err = unix.Write(b.g.Fd(), long)
			if err != nil || n != len(raw) {
				t.Errorf("write of %d bytes (response + 8 bytes, no FAN_INFO): want %d, got n=%d err=%v", len(long), len(raw), n, errOrNil(err))
			}
			b.g.ReleaseFd(b.ev.Fd)
			finish(t, b.p, answerWait, unix.EPERM, b.did+"; answered FAN_DENY in a long write")
			quiet(t, b.g, b.did)
		},
	},
	{
		Name: "response_other_group",
		Doc:  "a group cannot answer another group's event (ENOENT); the owner's answer still works, and the event then reaches the second group (fanotify_user.c; fsnotify.c fsnotify)",
		Run: func(t *harness.T) {
			e := prepare(t, 1, "f")
			pc := group(t, unix.FAN_CLASS_PRE_CONTENT)
			c := group(t, unix.FAN_CLASS_CONTENT)
			f := e.f("f")
			mark(t, c, 0, unix.FAN_OPEN_PERM, f.Path)
			b := openBlockedIn(t, e, pc, "FAN_CLASS_PRE_CONTENT (and a FAN_CLASS_CONTENT group with the same mark)")
			respondErr(t, c, b.ev.Fd, fanotify.Allow, unix.ENOENT, "the event belongs to the pre-content group")
			stillBlocked(t, b.p, b.did+"; after the other group's response")
			respond(t, pc, b.ev, fanotify.Allow)
			ev := readOne(t, c, b.did+"; pre-content group allowed", want(unix.FAN_OPEN_PERM, e.a(0).Pid(), f))
			respond(t, c, ev, fanotify.Allow)
			finish(t, b.p, answerWait, 0, b.did+"; both groups allowed")
			quietAll(t, b.did, pc, c)
		},
	},
}
