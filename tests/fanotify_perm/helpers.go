package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// Time bounds. An expected event, or an actor's return after its event was
// answered, must come within eventWait / answerWait (at once on a healthy
// kernel; the bound only turns a hang into a failure). releaseWait is the
// promptness the issue asks of a release by a closed or dead listener.
// blockedProbe is how long an actor that must still be blocked is watched: a
// negative check, like a Collect window.
const (
	eventWait    = 2 * time.Second
	answerWait   = 2 * time.Second
	releaseWait  = time.Second
	blockedProbe = 30 * time.Millisecond
)

// eventFlags are the event_f_flags of every group: the event fds are opened
// read-only and close-on-exec, so actors started later never inherit them.
const eventFlags = unix.O_RDONLY | unix.O_LARGEFILE | unix.O_CLOEXEC

// fileContent is what every prepared regular file holds.
var fileContent = []byte("fanotify_perm\n")

// scriptStatus is the exit status of the prepared script, so that a run of
// it is told apart from any failure to run it.
const scriptStatus = 7

// target is a file the actor acts on, identified before any mark is placed.
type target struct {
	Path     string
	Dev, Ino uint64
}

// env is a case's setup: its directory, its actors and its files, all made
// before any fanotify group exists.
type env struct {
	t      *harness.T
	actors []*actor.Actor
	files  map[string]target
}

// prepare makes the case directory, n actors, and the named entries below the
// case directory ("d/" makes a directory, "x.sh" an executable script,
// anything else a regular file holding fileContent). It must run before any
// group is opened: cleanups run last-registered first, so the groups are then
// closed before the directory is removed (removing it opens directories, which
// a filesystem mark of a still-open group would hold for permission).
func prepare(t *harness.T, nActors int, entries ...string) *env {
	t.Helper()
	e := &env{t: t, files: map[string]target{}}
	t.Dir()
	for i := 0; i < nActors; i++ {
		e.actors = append(e.actors, t.Actor())
	}
	for _, name := range entries {
		p := t.Path(name)
		switch {
		case strings.HasSuffix(name, "/"):
			setup.Mkdir(t, p)
			continue
		case strings.HasSuffix(name, ".sh"):
			setup.WriteFileMode(t, p, []byte(fmt.Sprintf("#!/bin/sh\nexit %d\n", scriptStatus)), 0o755)
		default:
			setup.WriteFileMode(t, p, fileContent, 0o644)
		}
		e.files[name] = statTarget(t, p)
	}
	return e
}

// a returns the i-th actor.
func (e *env) a(i int) *actor.Actor { return e.actors[i] }

// f returns the prepared file name.
func (e *env) f(name string) target {
	tg, ok := e.files[name]
	if !ok {
		e.t.Fatalf("internal: file %q was not prepared", name)
	}
	return tg
}

func statTarget(t *harness.T, p string) target {
	t.Helper()
	st := setup.Stat(t, p)
	return target{Path: p, Dev: st.Dev, Ino: st.Ino}
}

// group opens a fanotify group of the given class and flags with eventFlags.
func group(t *harness.T, initFlags uint) *fanotify.Group {
	t.Helper()
	return t.Fanotify(initFlags, eventFlags)
}

// mark adds a mark and fails the case if the kernel refuses it.
func mark(t *harness.T, g *fanotify.Group, flags uint, mask uint64, path string) {
	t.Helper()
	if err := g.Add(flags, mask, path); err != nil {
		t.Fatalf("%v", err)
	}
}

// want is the event a case expects: mask, pid, and the file the event fd must
// refer to (path as readlink(2) of /proc/self/fd gives it, device and inode).
func want(mask uint64, pid int, tg target, info ...fanotify.Info) fanotify.Event {
	return fanotify.Event{Mask: fanotify.Mask(mask), Pid: int32(pid), Path: tg.Path, Dev: tg.Dev, Ino: tg.Ino, Info: info}
}

// readEvents reads until exactly n events have arrived (or eventWait passes).
// More events than n, or fewer, fail the case; the group's close at cleanup
// answers whatever was read and not answered (fanotify(7): closing the group
// allows pending permission events).
func readEvents(t *harness.T, g *fanotify.Group, n int, did string) []fanotify.Event {
	t.Helper()
	evs, err := g.ReadN(n, time.Now().Add(eventWait))
	if err != nil {
		t.Fatalf("%s: reading %d event(s): %v; got %s", did, n, err, expect.List(evs))
	}
	if len(evs) != n {
		t.Fatalf("%s: want %d event(s), got %d: %s", did, n, len(evs), expect.List(evs))
	}
	return evs
}

// readOne reads one event and compares it with w in full.
func readOne(t *harness.T, g *fanotify.Group, did string, w fanotify.Event) fanotify.Event {
	t.Helper()
	ev := readEvents(t, g, 1, did)[0]
	if !expect.Fanotify(t, did, []fanotify.Event{ev}, []fanotify.Event{w}) {
		t.FailNow()
	}
	return ev
}

// respond answers a permission event and closes its fd; a refusal fails the case.
func respond(t *harness.T, g *fanotify.Group, ev fanotify.Event, resp uint32) {
	t.Helper()
	if err := g.Respond(ev.Fd, resp); err != nil {
		t.Fatalf("answer %s with %s: %v", ev.Mask, responseString(resp), err)
	}
	g.ReleaseFd(ev.Fd)
}

// respondErr writes a response that the kernel must refuse with wantErr.
func respondErr(t *harness.T, g *fanotify.Group, fd int32, resp uint32, wantErr unix.Errno, why string) {
	t.Helper()
	err := g.Respond(fd, resp)
	if !errors.Is(err, wantErr) {
		t.Errorf("response {fd %d, %s}: want %s (%s), got %v", fd, responseString(resp), expect.ErrnoText(wantErr), why, errOrNil(err))
	}
}

func errOrNil(err error) string {
	if err == nil {
		return "success"
	}
	return err.Error()
}

// responseString renders a fanotify_response.response value.
func responseString(r uint32) string {
	var parts []string
	switch r & 0x3 {
	case unix.FAN_ALLOW:
		parts = append(parts, "FAN_ALLOW")
	case unix.FAN_DENY:
		parts = append(parts, "FAN_DENY")
	default:
		parts = append(parts, fmt.Sprintf("%#x", r&0x3))
	}
	if r&unix.FAN_AUDIT != 0 {
		parts = append(parts, "FAN_AUDIT")
	}
	if r&unix.FAN_INFO != 0 {
		parts = append(parts, "FAN_INFO")
	}
	if e := unix.Errno(r >> unix.FAN_ERRNO_SHIFT); e != 0 {
		parts = append(parts, "errno "+expect.ErrnoText(e))
	}
	if rest := r &^ (0x3 | unix.FAN_AUDIT | unix.FAN_INFO | 0xff<<unix.FAN_ERRNO_SHIFT); rest != 0 {
		parts = append(parts, fmt.Sprintf("%#x", rest))
	}
	return strings.Join(parts, "|")
}

// send starts an operation in actor a; the actor may block in it.
func send(t *harness.T, a *actor.Actor, op actor.Op) *actor.Pending {
	t.Helper()
	p, err := a.Send(op)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return p
}

func openOp(path string) actor.Op {
	return actor.Op{Kind: "open", Path: path, Flags: unix.O_RDONLY}
}

func readOp(fd, n int) actor.Op { return actor.Op{Kind: "read", Fd: fd, N: n} }

func preadOp(fd, n int, off int64) actor.Op {
	return actor.Op{Kind: "pread", Fd: fd, N: n, Off: off}
}

func execOp(path string) actor.Op { return actor.Op{Kind: "exec", Path: path} }

// stillBlocked checks that the actor's operation has not finished: it is
// waiting for an answer that has not been given.
func stillBlocked(t *harness.T, p *actor.Pending, what string) {
	t.Helper()
	r, err := p.Wait(blockedProbe)
	if errors.Is(err, actor.ErrStillBlocked) {
		return
	}
	t.Fatalf("%s: the actor's call returned (errno %v, %v) although its permission event is not answered", what, expect.ErrnoText(r.Errno), err)
}

// finish waits (up to d) for the actor's operation and checks its errno.
func finish(t *harness.T, p *actor.Pending, d time.Duration, wantErrno unix.Errno, what string) actor.Result {
	t.Helper()
	r, err := p.Wait(d)
	if err != nil {
		t.Fatalf("%s: actor did not return within %v: %v", what, d, err)
	}
	if r.Errno != wantErrno {
		t.Errorf("%s: actor's call returned %s, want %s", what, expect.ErrnoText(r.Errno), expect.ErrnoText(wantErrno))
	}
	return r
}

// none drains g and fails when anything is queued. It is called after the
// actor's call returned, or while the actor waits for another group's answer:
// fsnotify queues an event before the syscall that causes it returns (and a
// group is asked only after the groups before it answered), so a drain then
// sees everything there can be. Permission events found are allowed, so no
// actor stays blocked.
func none(t *harness.T, g *fanotify.Group, did string) {
	t.Helper()
	evs, err := g.Drain()
	if aerr := g.Answer(evs, fanotify.Allow); aerr != nil {
		t.Errorf("%s: %v", did, aerr)
	}
	if err != nil {
		t.Fatalf("%s: drain: %v", did, err)
	}
	expect.Fanotify(t, did, evs, nil)
}

// quiet is a case's final check on g: nothing more arrives within
// expect.Quiet (the suite's one "quiet"; a permission event that does is
// allowed and reported).
func quiet(t *harness.T, g *fanotify.Group, did string) {
	t.Helper()
	expect.FanotifyQuiet(t, did, g, expect.Quiet)
}

// quietAll is quiet on several groups in one window.
func quietAll(t *harness.T, did string, gs ...*fanotify.Group) {
	t.Helper()
	var ls []expect.Listener
	for _, g := range gs {
		ls = append(ls, expect.OnFanotify(fanotify.InitFlagsString(g.InitFlags), g))
	}
	expect.QuietAll(t, did, expect.Quiet, ls...)
}

// noPerm checks that the actor's pending operation completes without any
// permission event reaching g: it waits for the actor, and if the actor is
// blocked it drains g, allows whatever is there (so the actor is released)
// and fails with the events.
func noPerm(t *harness.T, g *fanotify.Group, p *actor.Pending, did string) actor.Result {
	t.Helper()
	r, err := p.Wait(answerWait)
	if err != nil {
		none(t, g, did)
		t.Fatalf("%s: actor blocked for %v: %v", did, answerWait, err)
	}
	none(t, g, did)
	return r
}

// childrenOf lists the processes whose parent is pid (the PPid line of each
// /proc/<pid>/status). A process that exits while the list is made is left
// out.
func childrenOf(pid int) ([]int, error) {
	paths, err := filepath.Glob("/proc/[0-9]*/status")
	if err != nil {
		return nil, fmt.Errorf("list /proc: %w", err)
	}
	var kids []int
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PPid:"); ok && strings.TrimSpace(v) == strconv.Itoa(pid) {
				n, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
				if err != nil {
					return nil, fmt.Errorf("pid of %s: %w", p, err)
				}
				kids = append(kids, n)
			}
		}
	}
	return kids, nil
}

// execPid is the pid an exec permission event must carry, found without
// looking at the event: the actor runs the program in a child (os/exec:
// clone, then execve in the child), and FAN_OPEN_EXEC_PERM is raised in that
// child's execve (fs/exec.c do_open_execat -> fsnotify_open_perm), so the
// pid is that of the actor's one child while the child is still blocked in
// execve, waiting for the answer.
func execPid(t *harness.T, actorPid int) int {
	t.Helper()
	kids, err := childrenOf(actorPid)
	if err != nil {
		t.Fatalf("children of the actor (pid %d): %v", actorPid, err)
	}
	if len(kids) != 1 {
		t.Fatalf("the actor (pid %d) has children %v while its exec waits for an answer, want exactly one", actorPid, kids)
	}
	return kids[0]
}

// expectOne compares one received event with the wanted one.
func expectOne(t *harness.T, did string, got, w fanotify.Event) bool {
	t.Helper()
	return expect.Fanotify(t, did, []fanotify.Event{got}, []fanotify.Event{w})
}
