package main

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/setup"
	"github.com/fsnsuite/fsnsuite/harness/tinyelf"
)

// The events one execve(2) of a marked file raises, as the kernel sends them:
//
//   - permission, before the file is open for the new program (fsnotify_perm
//     of include/linux/fsnotify.h up to 6.x, fsnotify_open_perm_and_set_mode
//     of fs/notify/fsnotify.c on 7.x): first FS_OPEN_EXEC_PERM, since the
//     file is opened with __FMODE_EXEC; a denial returns at once, so the
//     open fails with EPERM and nothing else is sent. Then FS_OPEN_PERM, as
//     for every open (fanotify(7): "FAN_OPEN_PERM: An application wants to
//     open a file or directory"), whose denial fails the execve likewise;
//   - notification, once the file is open: one fsnotify_open call with
//     FS_OPEN|FS_OPEN_EXEC (fanotify_mark(2): FAN_OPEN_EXEC "Create an event
//     when a file is opened with the intent to be executed"), which a group
//     receives as one event holding the bits it marked.
//
// Permission events are never merged (fanotify_merge leaves them alone), and
// the second waits for the answer to the first: the execve blocks in between.
// An execve that fails opens nothing, so a denied one sends no FAN_OPEN.
//
// The program executed is a static ELF of a few instructions (exit status
// scriptStatus) written by the case: a script would make its interpreter open
// the file again (an FS_OPEN_PERM of its own), and a dynamic program's loader
// opens files on the root filesystem only, but costs a copy; neither adds to
// what execve itself sends.

// execBit is one mask bit an execve of the marked file can raise.
type execBit struct {
	token string // in case names
	bit   uint64
	perm  bool
	needs *feature.Feature
}

var execBits = []execBit{
	{token: "exec_perm", bit: unix.FAN_OPEN_EXEC_PERM, perm: true, needs: feature.OpenExecPerm},
	{token: "open_perm", bit: unix.FAN_OPEN_PERM, perm: true},
	{token: "exec", bit: unix.FAN_OPEN_EXEC, needs: feature.OpenExec},
	{token: "open", bit: unix.FAN_OPEN},
}

// execOrder is the order of the permission events of one execve.
var execOrder = []uint64{unix.FAN_OPEN_EXEC_PERM, unix.FAN_OPEN_PERM}

// execVerdict names a subtest's answers: allow everything, or deny one
// permission event (the other is then allowed, or never sent).
type execVerdict struct {
	name string
	deny uint64
}

func verdictsFor(mask uint64) []execVerdict {
	vs := []execVerdict{{name: "allow"}}
	for _, b := range execBits {
		if b.perm && mask&b.bit != 0 {
			vs = append(vs, execVerdict{name: "deny_" + b.token, deny: b.bit})
		}
	}
	return vs
}

// wantExec is what one group marking mask receives from an execve answered
// by v, and the errno the execve returns.
func wantExec(mask uint64, v execVerdict, pid int, tg target) ([]fanotify.Event, unix.Errno) {
	var evs []fanotify.Event
	for _, perm := range execOrder {
		if mask&perm == 0 {
			continue
		}
		evs = append(evs, want(perm, pid, tg))
		if v.deny == perm {
			return evs, unix.EPERM
		}
	}
	if n := mask & (unix.FAN_OPEN | unix.FAN_OPEN_EXEC); n != 0 {
		evs = append(evs, want(n, pid, tg))
	}
	return evs, 0
}

// execMaskCases: one FAN_CLASS_CONTENT group marking every non-empty
// combination of the four bits, on each mark kind, each permission event
// allowed and denied in turn.
func execMaskCases() []harness.Case {
	var cs []harness.Case
	for set := 1; set < 1<<len(execBits); set++ {
		var mask uint64
		var tokens []string
		var needs []*feature.Feature
		for i, b := range execBits {
			if set&(1<<i) == 0 {
				continue
			}
			mask |= b.bit
			tokens = append(tokens, b.token)
			if b.needs != nil {
				needs = append(needs, b.needs)
			}
		}
		var subs []string
		for _, m := range markKinds {
			for _, v := range verdictsFor(mask) {
				subs = append(subs, m.name+"_"+v.name)
			}
		}
		cs = append(cs, harness.Case{
			Name: "execve_mask_" + strings.Join(tokens, "_"),
			Doc: fmt.Sprintf("execve(2) of a file marked %s: FAN_OPEN_EXEC_PERM, then FAN_OPEN_PERM, then one FAN_OPEN|FAN_OPEN_EXEC event, each as marked; a denial fails the execve with EPERM and ends the list (fanotify(7), fsnotify_open_perm_and_set_mode)",
				fanotify.Mask(mask)),
			Needs:    needs,
			Subtests: subs,
			Run:      func(t *harness.T) { runExecMask(t, mask) },
		})
	}
	return cs
}

func runExecMask(t *harness.T, mask uint64) {
	a := t.Actor()
	prog := writeTinyProgram(t, "prog")
	for _, m := range markKinds {
		for _, v := range verdictsFor(mask) {
			m, v := m, v
			t.Run(m.name+"_"+v.name, func(t *harness.T) {
				t.Require(m.needs...)
				g := group(t, unix.FAN_CLASS_CONTENT)
				markFor(t, g, m, mask, prog)
				did := fmt.Sprintf("group CLASS_CONTENT; %s mark %s; actor execve %s; answer %s", m.name, fanotify.Mask(mask), prog.Path, v.name)
				got, res, pid := execAnswering(t, a, g, prog, v, did)
				wantEvs, wantErrno := wantExec(mask, v, pid, prog)
				expect.Fanotify(t, did, got, wantEvs)
				checkExecResult(t, did, res, wantErrno)
				quiet(t, g, did+"; after the execve returned")
			})
		}
	}
}

// markFor places g's mark of kind m: on the program, on its directory (with
// FAN_EVENT_ON_CHILD), or on the filesystem's root for a mount or filesystem
// mark.
func markFor(t *harness.T, g *fanotify.Group, m markKind, mask uint64, prog target) {
	t.Helper()
	path := prog.Path
	switch {
	case m.onDir:
		mask, path = mask|unix.FAN_EVENT_ON_CHILD, t.Dir()
	case m.root:
		path = t.FS().Root
	}
	mark(t, g, m.flags, mask, path)
}

// execAnswering starts the actor's execve of prog and answers every
// permission event g receives while it runs (FAN_DENY for v.deny, else
// FAN_ALLOW), then drains what was queued before it returned. It returns
// every event in order, the actor's result, and the pid the events must
// carry: the execve's process, found while it waits for an answer (execPid),
// or, with no permission event, the process the actor started.
func execAnswering(t *harness.T, a *actor.Actor, g *fanotify.Group, prog target, v execVerdict, did string) ([]fanotify.Event, actor.Result, int) {
	t.Helper()
	p := send(t, a, execOp(prog.Path))
	var got []fanotify.Event
	pid := 0
	deadline := time.Now().Add(eventWait + answerWait)
	for {
		evs, err := g.Read(time.Now().Add(10 * time.Millisecond))
		if err != nil && !errors.Is(err, fanotify.ErrTimeout) {
			g.Answer(evs, fanotify.Allow)
			t.Fatalf("%s: read: %v", did, err)
		}
		for _, ev := range evs {
			got = append(got, ev)
			if !ev.IsPermission() {
				continue
			}
			if pid == 0 {
				pid = execPid(t, a.Pid())
			}
			resp := uint32(fanotify.Allow)
			if uint64(ev.Mask)&v.deny != 0 {
				resp = fanotify.Deny
			}
			respond(t, g, ev, resp)
		}
		r, err := p.Wait(time.Millisecond)
		if err == nil {
			rest, derr := g.Drain()
			if aerr := g.Answer(rest, fanotify.Allow); aerr != nil {
				t.Errorf("%s: %v", did, aerr)
			}
			if derr != nil {
				t.Fatalf("%s: drain: %v", did, derr)
			}
			got = append(got, rest...)
			if pid == 0 {
				pid = r.Pid
			}
			return got, r, pid
		}
		if !errors.Is(err, actor.ErrStillBlocked) {
			t.Fatalf("%s: the actor: %v; events so far: %s", did, err, expect.List(got))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the execve did not return within %v of answering every event; events so far: %s", did, eventWait+answerWait, expect.List(got))
		}
	}
}

// checkExecResult checks the execve's errno and, when it ran, that the
// program ran to its end.
func checkExecResult(t *harness.T, did string, r actor.Result, wantErrno unix.Errno) {
	t.Helper()
	if r.Errno != wantErrno {
		t.Errorf("%s: execve returned %s, want %s", did, expect.ErrnoText(r.Errno), expect.ErrnoText(wantErrno))
		return
	}
	if wantErrno == 0 && r.N != scriptStatus {
		t.Errorf("%s: the program's exit status is %d, want %d (it did not run to its end)", did, r.N, scriptStatus)
	}
}

// execGroupCases: the two permission events of one execve in two groups, and
// the notification in a third. The FAN_OPEN_PERM group is asked only after
// the FAN_OPEN_EXEC_PERM group answered (fsnotify sends the second event
// after the first returned), and nothing reaches it, nor the notification
// group, when the first is denied.
var execGroupCases = []harness.Case{{
	Name:     "execve_groups_exec_perm_then_open_perm",
	Doc:      "execve(2): a FAN_OPEN_EXEC_PERM group is asked first, a FAN_OPEN_PERM group only after it allowed, a FAN_OPEN|FAN_OPEN_EXEC group told once the file is open; a denial by either fails the execve with EPERM and stops the rest (fsnotify_open_perm_and_set_mode, fanotify(7))",
	Needs:    []*feature.Feature{feature.OpenExecPerm, feature.OpenExec},
	Subtests: execGroupSubtests(),
	Run:      runExecGroups,
}}

var execGroupVerdicts = []execVerdict{{name: "allow"}, {name: "deny_exec_perm", deny: unix.FAN_OPEN_EXEC_PERM}, {name: "deny_open_perm", deny: unix.FAN_OPEN_PERM}}

func execGroupSubtests() []string {
	var subs []string
	for _, m := range markKinds {
		for _, v := range execGroupVerdicts {
			subs = append(subs, m.name+"_"+v.name)
		}
	}
	return subs
}

func runExecGroups(t *harness.T) {
	a := t.Actor()
	prog := writeTinyProgram(t, "prog")
	for _, m := range markKinds {
		for _, v := range execGroupVerdicts {
			m, v := m, v
			t.Run(m.name+"_"+v.name, func(t *harness.T) {
				t.Require(m.needs...)
				gx := group(t, unix.FAN_CLASS_CONTENT)
				markFor(t, gx, m, unix.FAN_OPEN_EXEC_PERM, prog)
				gp := group(t, unix.FAN_CLASS_CONTENT)
				markFor(t, gp, m, unix.FAN_OPEN_PERM, prog)
				gn := group(t, unix.FAN_CLASS_NOTIF)
				markFor(t, gn, m, unix.FAN_OPEN|unix.FAN_OPEN_EXEC, prog)
				did := fmt.Sprintf("groups CLASS_CONTENT %[1]s mark FAN_OPEN_EXEC_PERM, CLASS_CONTENT %[1]s mark FAN_OPEN_PERM, CLASS_NOTIF %[1]s mark FAN_OPEN|FAN_OPEN_EXEC; actor execve %[2]s; answer %[3]s",
					m.name, prog.Path, v.name)

				p := send(t, a, execOp(prog.Path))
				xev := readEvents(t, gx, 1, did+"; the FAN_OPEN_EXEC_PERM group")[0]
				pid := execPid(t, a.Pid())
				if !expectOne(t, did+"; the FAN_OPEN_EXEC_PERM group", xev, want(unix.FAN_OPEN_EXEC_PERM, pid, prog)) {
					t.FailNow()
				}
				// Not yet answered: the FAN_OPEN_PERM event is not sent, and
				// the file is not open.
				none(t, gp, did+"; the FAN_OPEN_PERM group before FAN_OPEN_EXEC_PERM was answered")
				none(t, gn, did+"; the notification group before FAN_OPEN_EXEC_PERM was answered")
				stillBlocked(t, p, did+"; FAN_OPEN_EXEC_PERM not answered")
				if v.deny == unix.FAN_OPEN_EXEC_PERM {
					respond(t, gx, xev, fanotify.Deny)
					checkExecResult(t, did, finish(t, p, answerWait, unix.EPERM, did), unix.EPERM)
					none(t, gp, did+"; the FAN_OPEN_PERM group after the denial")
					none(t, gn, did+"; the notification group after the denial")
					quietAll(t, did, gx, gp, gn)
					return
				}
				respond(t, gx, xev, fanotify.Allow)
				pev := readEvents(t, gp, 1, did+"; the FAN_OPEN_PERM group after FAN_OPEN_EXEC_PERM was allowed")[0]
				if !expectOne(t, did+"; the FAN_OPEN_PERM group", pev, want(unix.FAN_OPEN_PERM, pid, prog)) {
					t.FailNow()
				}
				none(t, gn, did+"; the notification group before FAN_OPEN_PERM was answered")
				stillBlocked(t, p, did+"; FAN_OPEN_PERM not answered")
				if v.deny == unix.FAN_OPEN_PERM {
					respond(t, gp, pev, fanotify.Deny)
					checkExecResult(t, did, finish(t, p, answerWait, unix.EPERM, did), unix.EPERM)
					none(t, gn, did+"; the notification group after the denial")
					quietAll(t, did, gx, gp, gn)
					return
				}
				respond(t, gp, pev, fanotify.Allow)
				checkExecResult(t, did, finish(t, p, answerWait, 0, did), 0)
				nevs, err := gn.Drain()
				if err != nil {
					t.Fatalf("%s: drain the notification group: %v", did, err)
				}
				expect.Fanotify(t, did+"; the notification group", nevs, []fanotify.Event{want(unix.FAN_OPEN|unix.FAN_OPEN_EXEC, pid, prog)})
				quietAll(t, did, gx, gp, gn)
			})
		}
	}
}

// writeTinyProgram writes an executable that exits with scriptStatus and
// does nothing else (no interpreter, no library, no file opened): a static
// ELF of one loadable segment, made here for the machine's architecture.
func writeTinyProgram(t *harness.T, name string) target {
	t.Helper()
	img, err := tinyProgram(runtime.GOARCH, scriptStatus)
	if err != nil {
		t.Skipf("no program to execute: %v", err)
	}
	p := t.Path(name)
	setup.WriteFileMode(t, p, img, 0o755)
	return statTarget(t, p)
}

// tinyProgram is tinyelf.Program: a static ELF executable whose only code
// is exit(status), for execve cases that must not depend on the guest's
// programs (a copy of busybox answers to its name, not "prog").
var tinyProgram = tinyelf.Program
