package main

import (
	"bytes"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// permKind is one permission event and the actor operation that raises it.
type permKind struct {
	name  string // case name prefix
	mask  uint64
	entry string // file prepared for it
	needs []*feature.Feature
	what  string // the operation, for Doc lines
}

var permKinds = []permKind{
	// fanotify(7) FAN_OPEN_PERM: "An application wants to open a file or
	// directory. The reading application has to decide whether permission
	// for opening ... should be granted."
	{name: "open_perm", mask: unix.FAN_OPEN_PERM, entry: "f", what: "open(2)"},
	// fanotify(7) FAN_ACCESS_PERM: "An application wants to read a file or
	// directory". Since 6.14 the file's mode is fixed at open time
	// (fs/notify/fsnotify.c fsnotify_open_perm_and_set_mode), so the actor
	// opens the file after the mark is placed and then reads.
	{name: "access_perm", mask: unix.FAN_ACCESS_PERM, entry: "f", what: "read(2)"},
	// fanotify(7) FAN_OPEN_EXEC_PERM: "An application wants to open a file
	// for execution". The mask holds only FAN_OPEN_EXEC_PERM: the script's
	// interpreter later opens the script for reading, a plain open that this
	// mask does not report.
	{name: "open_exec_perm", mask: unix.FAN_OPEN_EXEC_PERM, entry: "x.sh", what: "execve(2)",
		needs: []*feature.Feature{feature.OpenExecPerm}},
}

// markKind is where the permission mark is placed.
type markKind struct {
	name  string
	flags uint
	onDir bool // mark the case directory with FAN_EVENT_ON_CHILD instead of the file
	root  bool // mark the filesystem's root (mount or filesystem mark)
	needs []*feature.Feature
}

var markKinds = []markKind{
	{name: "inode"},
	{name: "parent", onDir: true},
	{name: "mount", flags: unix.FAN_MARK_MOUNT, root: true},
	{name: "filesystem", flags: unix.FAN_MARK_FILESYSTEM, root: true, needs: []*feature.Feature{feature.MarkFilesystem}},
}

// verdictCases is the matrix event x mark x answer: the listener reads the
// permission event while the actor is blocked, checks it, answers, and the
// actor's call then succeeds (FAN_ALLOW) or fails with EPERM (FAN_DENY).
func verdictCases() []harness.Case {
	var cs []harness.Case
	for _, k := range permKinds {
		for _, m := range markKinds {
			for _, allow := range []bool{true, false} {
				k, m, allow := k, m, allow
				verdict, outcome := "allow", "succeeds"
				if !allow {
					verdict, outcome = "deny", "fails with EPERM"
				}
				cs = append(cs, harness.Case{
					Name: fmt.Sprintf("%s_%s_%s", k.name, verdict, m.name),
					Doc: fmt.Sprintf("%s (%s mark) carries the actor's pid and an fd of the file; FAN_%s: the actor's %s %s (fanotify(7))",
						fanotify.Mask(k.mask), m.name, map[bool]string{true: "ALLOW", false: "DENY"}[allow], k.what, outcome),
					Needs: append(append([]*feature.Feature(nil), k.needs...), m.needs...),
					Run:   func(t *harness.T) { runVerdict(t, k, m, allow) },
				})
			}
		}
	}
	return cs
}

func runVerdict(t *harness.T, k permKind, m markKind, allow bool) {
	e := prepare(t, 1, k.entry)
	a, f := e.a(0), e.f(k.entry)

	mask, path := k.mask, f.Path
	switch {
	case m.onDir:
		mask, path = k.mask|unix.FAN_EVENT_ON_CHILD, t.Dir()
	case m.root:
		path = t.FS().Root
	}
	g := group(t, unix.FAN_CLASS_CONTENT)
	mark(t, g, m.flags, mask, path)
	did := fmt.Sprintf("group CLASS_CONTENT; %s mark %s on %s; actor %s %s", m.name, fanotify.Mask(mask), path, k.what, f.Path)

	var p *actor.Pending
	switch k.mask {
	case unix.FAN_ACCESS_PERM:
		fd, err := a.Open(f.Path, unix.O_RDONLY, 0)
		if err != nil {
			t.Fatalf("actor open %s: %v", f.Path, err)
		}
		p = send(t, a, readOp(fd, 64))
	case unix.FAN_OPEN_EXEC_PERM:
		p = send(t, a, execOp(f.Path))
	default:
		p = send(t, a, openOp(f.Path))
	}

	evs := readEvents(t, g, 1, did)
	pid := a.Pid()
	if k.mask == unix.FAN_OPEN_EXEC_PERM {
		pid = execPid(t, a.Pid())
	}
	if !expectOne(t, did, evs[0], want(k.mask, pid, f)) {
		t.FailNow()
	}
	stillBlocked(t, p, did)

	resp, wantErrno := uint32(fanotify.Allow), unix.Errno(0)
	if !allow {
		resp, wantErrno = fanotify.Deny, unix.EPERM
	}
	respond(t, g, evs[0], resp)
	r := finish(t, p, answerWait, wantErrno, did+"; answered "+responseString(resp))
	if allow {
		switch k.mask {
		case unix.FAN_ACCESS_PERM:
			if !bytes.Equal(r.Data, fileContent) {
				t.Errorf("%s: read returned %q, want %q", did, r.Data, fileContent)
			}
		case unix.FAN_OPEN_EXEC_PERM:
			if r.N != scriptStatus {
				t.Errorf("%s: script exit status %d, want %d (it did not run to its end)", did, r.N, scriptStatus)
			}
		}
	}
	quiet(t, g, did+"; after the actor returned")
}
