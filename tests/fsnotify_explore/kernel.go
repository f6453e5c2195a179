package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/limits"
	"github.com/fsnsuite/fsnsuite/harness/markmirror"
	"github.com/fsnsuite/fsnsuite/harness/model"
	"github.com/fsnsuite/fsnsuite/harness/ownproc"
)

// runner runs scenarios on the kernel: each in a fresh copy of the tree
// under base, with its own groups, file operations done by one actor.
type runner struct {
	base  string // a directory on the filesystem under test
	root  string // the filesystem's mount point (mount and filesystem marks)
	a     *actor.Actor
	count int
	// foreign names the other programs' processes whose events the last
	// run read (ownproc.Foreign, still running); foreignObs holds those
	// events per step, rendered as observe does. They are kept out of the
	// run's observations (the model predicts the actor's operations only)
	// and judged by the caller (judgeForeign).
	foreign    []ownproc.Process
	foreignObs map[int]Obs
	// replaying: runs replay a mismatch (reportMismatch); each starts
	// after the earlier runs' groups are destroyed.
	replaying bool
	// seen: when each other program's process was last met in a run.
	seen map[int]seenProc
}

// seenProc is another program's process and when a run last met it.
type seenProc struct {
	p  ownproc.Process
	at time.Time
}

// seenSince returns the other programs' processes runs met at or after t.
func (r *runner) seenSince(t time.Time) []ownproc.Process {
	var out []ownproc.Process
	for _, sp := range r.seen {
		if !sp.at.Before(t) {
			out = append(out, sp.p)
		}
	}
	slices.SortFunc(out, func(a, b ownproc.Process) int { return a.Pid - b.Pid })
	return out
}

// group is one open group of a scenario run.
type group struct {
	kind model.GroupKind
	fan  *fanotify.Group
	in   *inotify.Instance
	wds  map[string]int32 // inotify: the wd the kernel gave each object
	objs map[int32]string // inotify: every wd ever given -> object
	// answered: the events a responder read during the step (permission
	// events it allowed, and any other event it read with them).
	answered []fanotify.Event
}

// responder reads a content group while the actor acts, answering every
// permission event with FAN_ALLOW.
type responder struct {
	g    *group
	stop chan struct{}
	done chan struct{}
	err  error
}

// permLog is the order in which the responders of a step read permission
// events, across groups: a group is offered a permission event only after
// the group before it answered (fanotify_handle_event waits), so the order
// of the reads is the order of delivery (model.PermOrder).
type permLog struct {
	mu  sync.Mutex
	evs []model.Event
}

// respond starts a responder for group gi; it logs every permission event
// it reads in log (named by name) before answering it.
func respond(g *group, gi int, log *permLog, name func(path string) string) *responder {
	rp := &responder{g: g, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(rp.done)
		for {
			select {
			case <-rp.stop:
				return
			default:
			}
			evs, err := g.fan.Read(time.Now().Add(2 * time.Millisecond))
			if errors.Is(err, fanotify.ErrTimeout) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			for _, e := range evs {
				if e.IsPermission() {
					// Another program's permission event is answered too,
					// but is no part of the order the model predicts.
					if p, foreign := ownproc.Foreign(e.Pid); !foreign || p.Gone {
						log.mu.Lock()
						log.evs = append(log.evs, model.Event{Group: gi, Obj: name(e.Path), Mask: uint32(e.Mask)})
						log.mu.Unlock()
					}
					if rerr := g.fan.Respond(e.Fd, fanotify.Allow); rerr != nil && err == nil {
						err = rerr
					}
					g.fan.ReleaseFd(e.Fd)
				}
				g.answered = append(g.answered, e)
			}
			if err != nil {
				rp.err = err
				return
			}
		}
	}()
	return rp
}

// finish stops the responder once the actor's call returned (so every
// permission event of the step was answered) and waits for it.
func (rp *responder) finish() error {
	close(rp.stop)
	<-rp.done
	return rp.err
}

// run executes s and returns the kernel's observations, step by step.
func (r *runner) run(s *Scenario) ([]Obs, error) {
	r.count++
	r.foreign, r.foreignObs = nil, map[int]Obs{}
	if r.replaying {
		// Groups of earlier runs still closing in the background (their
		// marks are flushed, each group awaits an SRCU grace period) are
		// gone before a replay starts.
		fanotify.WaitClosing()
	}
	dir := filepath.Join(r.base, fmt.Sprintf("sc%d", r.count))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	defer os.RemoveAll(dir)
	// The tree, and an O_PATH descriptor on each object for the length of
	// the run: the inodes stay in memory, so no mark (evictable or not)
	// goes with an inode evicted by someone's drop_caches.
	handles := map[string]string{} // FID handle (hex) -> object
	pins := map[string]int{}
	defer func() {
		for _, fd := range pins {
			unix.Close(fd)
		}
	}()
	t, objs := treeOf(s)
	for _, obj := range objs {
		p := filepath.Join(dir, obj)
		var err error
		switch {
		case obj == ".":
		case t[obj]:
			err = os.Mkdir(p, 0o755)
		case obj == fifoName:
			err = unix.Mkfifo(p, 0o644)
		default:
			err = os.WriteFile(p, []byte("data\n"), 0o644)
		}
		if err != nil {
			return nil, fmt.Errorf("setup: %w", err)
		}
		if err := pin(pins, handles, dir, obj); err != nil {
			return nil, fmt.Errorf("setup: %w", err)
		}
	}
	kinds := s.kinds()
	gs := make([]*group, len(kinds))
	for i, k := range kinds {
		g := &group{kind: k, wds: map[string]int32{}, objs: map[int32]string{}}
		var err error
		if k.Inotify {
			g.in, err = inotify.Init(unix.IN_NONBLOCK)
		} else {
			g.fan, err = initGroup(k.Init | unix.FAN_NONBLOCK)
		}
		if err != nil {
			return nil, err
		}
		gs[i] = g
	}
	defer func() {
		// fanotify groups first, each closing in the background
		// (CloseDetached): closing one answers the permission events
		// still waiting in it (fanotify_release), such as another
		// program's open between two steps, and a process waiting for
		// that answer pins the current mark of every object list its
		// event walks, so marks of groups not yet asked too
		// (fsnotify_prepare_user_wait: fsnotify_get_mark_safe raises each
		// such group's user_waits), and fsnotify_destroy_group of those
		// groups waits for it. Closed one after another in this thread,
		// an inotify group or a fanotify group before the one waited on
		// deadlocked the explorer beside a directory walker on 6.18.
		// What is queued in the permission groups is allowed first.
		for _, g := range gs {
			if g != nil && g.fan != nil && g.kind.Perm {
				if evs, _ := g.fan.Drain(); len(evs) > 0 {
					g.fan.Answer(evs, fanotify.Allow)
				}
			}
		}
		for _, g := range gs {
			if g != nil && g.fan != nil {
				g.fan.CloseDetached()
			}
		}
		for _, g := range gs {
			if g != nil && g.in != nil {
				g.in.Close()
			}
		}
	}()
	path := func(obj string) string { return filepath.Join(dir, obj) }
	out := make([]Obs, len(s.Steps))
	for i, st := range s.Steps {
		if gone := removes(st); gone != "" {
			// The pin goes first: with the dentry held elsewhere, d_delete
			// would leave the inode (and FS_DELETE_SELF) for the last dput.
			if fd, ok := pins[gone]; ok {
				unix.Close(fd)
				delete(pins, gone)
			}
		}
		// Content groups may get permission events, which block the actor
		// until answered: while it acts, a responder per such group allows
		// each one and keeps every event it read.
		var rs []*responder
		log := &permLog{}
		// openGone: the file this step unlinks while it holds it open
		// (unlinkrw), the only object whose event fds may read
		// " (deleted)" and whose FS_DELETE_SELF this process may cause
		// (relObj, drain).
		openGone := ""
		if st.Op == "unlinkrw" {
			openGone = st.Obj
		}
		if _, isAct := model.Ops[st.Op]; isAct || st.Op == "rename" || st.Op == "link" || st.Op == "markw" {
			for gi, g := range gs {
				if g.kind.Perm && askedPerm(s.Steps[:i], gi) {
					rs = append(rs, respond(g, gi, log, func(p string) string { return relObj(dir, p, openGone) }))
				}
			}
		}
		res, err := r.step(st, gs, path)
		for _, rp := range rs {
			if rerr := rp.finish(); rerr != nil && err == nil {
				err = rerr
			}
		}
		if err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i+1, st, err)
		}
		if (st.Op == "create" || st.Op == "mkdir") && res == "" {
			if err := pin(pins, handles, dir, st.Obj); err != nil {
				return nil, fmt.Errorf("step %d: %w", i+1, err)
			}
		}
		// The fd-reporting fanotify groups are read first: a queued event
		// of theirs holds its path (fanotify_alloc_path_event: path_get),
		// so the last dput of a file unlinked while open (unlinkrw), and
		// with it FS_DELETE_SELF (dentry_unlink_inode ->
		// fsnotify_inoderemove), may wait until such an event is read and
		// freed, and its fd closed (fanotify.Group.Read closes it). Read
		// first, they let that happen before the other groups are read,
		// so FS_DELETE_SELF and IN_IGNORED fall in the step that caused
		// them, as the model says.
		var evs, others []model.Event
		for _, fdFirst := range []bool{true, false} {
			for gi, g := range gs {
				if (g.fan != nil && !g.kind.FID) != fdFirst {
					continue
				}
				got, oth, err := r.drain(gi, g, dir, handles, openGone)
				if err != nil {
					return nil, fmt.Errorf("step %d: drain g%d: %w", i+1, gi, err)
				}
				evs = append(evs, got...)
				others = append(others, oth...)
			}
		}
		out[i] = withPerm(observe(kinds, res, evs), model.RenderPermOrder(kinds, log.evs))
		if len(others) > 0 {
			r.foreignObs[i] = observe(kinds, "", others)
		}
		if st.Op == "rename" && res == "" {
			renamed(st.Obj, st.To, pins, handles, gs)
		}
	}
	return out, nil
}

// settleRuns bounds the runs of one scenario that runSettled makes while
// other programs' events keep arriving.
const settleRuns = 3

// runSettled runs s, and again while a run reads another program's events
// (at most settleRuns runs): a run without them decides the scenario. It
// returns the last run's observations and the other programs that run met
// (nil when it met none).
func (r *runner) runSettled(s *Scenario) ([]Obs, []ownproc.Process, error) {
	for i := 1; ; i++ {
		got, err := r.run(s)
		if err != nil || len(r.foreign) == 0 || i == settleRuns {
			return got, r.foreign, err
		}
	}
}

// othersWindow is how long othersActive watches the filesystem.
const othersWindow = 500 * time.Millisecond

// othersActive watches the filesystem under test for othersWindow while no
// scenario runs (ownproc.WatchFS) and returns the running processes outside
// the suite that used files on it. Nothing it sees changes a scenario: no
// scenario runs while it watches, and its group is closed before the next
// one starts.
func (r *runner) othersActive() ([]ownproc.Process, error) {
	return ownproc.WatchFS(r.root, othersWindow)
}

// othersAround names the other programs that used the filesystem around a
// run that ended at end: those of foreign (met in the run), those runs met
// in the recentWindow before it, and else those othersActive sees now.
func (r *runner) othersAround(foreign []ownproc.Process, end time.Time) ([]ownproc.Process, error) {
	others := addProcs(foreign, r.seenSince(end.Add(-recentWindow)))
	if len(others) > 0 {
		return others, nil
	}
	return r.othersActive()
}

// removes returns the name whose inode a step may remove: the object of
// unlink and rmdir, the target of a rename.
func removes(st Step) string {
	switch st.Op {
	case "unlink", "rmdir", "unlinkrw":
		return st.Obj
	case "rename":
		return st.To
	}
	return ""
}

// renamed moves the run's names after a rename (after the step's events
// were named: they are the old names, as in the model).
func renamed(from, to string, pins map[string]int, handles map[string]string, gs []*group) {
	move := func(n string) string {
		if n == from {
			return to
		}
		if rest, ok := strings.CutPrefix(n, from+"/"); ok {
			return to + "/" + rest
		}
		return n
	}
	np := map[string]int{}
	for n, fd := range pins {
		np[move(n)] = fd
	}
	clear(pins)
	for n, fd := range np {
		pins[n] = fd
	}
	for h, n := range handles {
		handles[h] = move(n)
	}
	for _, g := range gs {
		if g.in == nil {
			continue
		}
		nw := map[string]int32{}
		for n, wd := range g.wds {
			if n == to { // the overwritten target's watch is gone
				continue
			}
			nw[move(n)] = wd
		}
		g.wds = nw
		for wd, n := range g.objs {
			g.objs[wd] = move(n)
		}
	}
}

// pin holds an O_PATH descriptor on obj for the length of the run (until
// it is removed), so that its inode stays in memory and no mark, evictable
// or not, goes with an inode evicted by someone's drop_caches; and learns
// obj's file handle, to name the objects of FID records.
func pin(pins map[string]int, handles map[string]string, dir, obj string) error {
	p := filepath.Join(dir, obj)
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("pin %s: %w", p, err)
	}
	pins[obj] = fd
	if h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, p, 0); err == nil {
		handles[fmt.Sprintf("%x", h.Bytes())] = obj
	}
	return nil
}

func (r *runner) step(st Step, gs []*group, path func(string) string) (string, error) {
	p := path(st.Obj)
	switch st.Op {
	case "markw":
		// The actor holds the file open for write across the call
		// (model.World "openw", "closew"); a FIFO would block in open(2)
		// for a reader, and the generator never holds one.
		if st.Obj == fifoName {
			return "", fmt.Errorf("markw on the FIFO %s: not a step the explorer draws", st.Obj)
		}
		fd, err := r.a.Open(p, unix.O_WRONLY, 0)
		if e, err := markmirror.Errno(err); err != nil || e != 0 {
			return errnoText(e), err
		}
		res, merr := r.mark(st, gs, p)
		if err := r.a.Close(fd); err != nil && merr == nil {
			merr = fmt.Errorf("close of %s after the mark: %w", st.Obj, err)
		}
		return res, merr
	case "mark":
		return r.mark(st, gs, p)
	case "watch":
		g := gs[st.Group]
		wd, err := unix.InotifyAddWatch(g.in.Fd(), p, st.Mask)
		// ENOSPC is only fs.inotify.max_user_watches (inotify_add_watch(2)),
		// or a failed allocation: not a result the model predicts.
		if lerr := limits.InotifyWatch("inotify_add_watch", err); lerr != nil {
			if _, ok := limits.As(lerr); ok {
				return "", lerr
			}
		}
		e, err := markmirror.Errno(err)
		if err != nil || e != 0 {
			return errnoText(e), err
		}
		g.wds[st.Obj], g.objs[int32(wd)] = int32(wd), st.Obj
		return fmt.Sprintf("wd=%d", wd), nil
	case "rmwatch":
		g := gs[st.Group]
		wd, ok := g.wds[st.Obj]
		if !ok {
			wd = 1 << 30 // a wd no watch has
		}
		_, err := unix.InotifyRmWatch(g.in.Fd(), uint32(wd))
		e, err := markmirror.Errno(err)
		return errnoText(e), err
	case "":
		return "", fmt.Errorf("empty step")
	}
	var err error
	switch st.Op {
	case "rename":
		err = r.a.Rename(p, path(st.To))
	case "link":
		err = r.a.Link(p, path(st.To))
	default:
		err = r.act(st.Op, p, isDirName[st.Obj])
	}
	e, err := markmirror.Errno(err)
	if err != nil || e == 0 {
		return "", err
	}
	return errnoText(e), nil
}

// mark makes the fanotify_mark(2) call of a mark or markw step on p (the
// filesystem's root for mount and filesystem marks) and returns its errno.
func (r *runner) mark(st Step, gs []*group, p string) (string, error) {
	if st.Flags&(unix.FAN_MARK_FILESYSTEM|unix.FAN_MARK_MOUNT) != 0 {
		p = r.root
	}
	err := unix.FanotifyMark(gs[st.Group].fan.Fd(), st.Flags, uint64(st.Mask), unix.AT_FDCWD, p)
	// ENOSPC is only fs.fanotify.max_user_marks (fanotify_mark(2)):
	// the machine's limit, not a result the model predicts; the case
	// skips with the limit named (harness/limits).
	if lerr := limits.FanotifyMark("fanotify_mark", err); lerr != nil {
		if _, ok := limits.As(lerr); ok {
			return "", lerr
		}
	}
	e, err := markmirror.Errno(err)
	return errnoText(e), err
}

// act does one file operation in the actor (see model.World's hooks for
// the fsnotify hooks each calls).
func (r *runner) act(op, p string, isDir bool) error {
	a := r.a
	switch op {
	case "read":
		_, err := a.ReadFile(p, 1)
		return err
	case "write":
		fd, err := a.Open(p, unix.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if _, err := a.Write(fd, []byte("w")); err != nil {
			a.Close(fd)
			return err
		}
		return a.Close(fd)
	case "opendir":
		fd, err := a.Open(p, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		return a.Close(fd)
	case "chmod":
		mode := uint32(0o644)
		if isDir {
			mode = 0o755
		}
		return a.Chmod(p, mode)
	case "create":
		fd, err := a.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		return a.Close(fd)
	case "mkdir":
		return a.Mkdir(p, 0o755)
	case "unlink":
		return a.Unlink(p)
	case "fifo":
		// The FIFO, opened for both sides (open(2) of a FIFO with O_RDWR
		// does not wait for a peer, fifo(7)): a byte written, read back.
		return openDo(a, p, unix.O_RDWR, func(fd int) error {
			if _, err := a.Write(fd, []byte("w")); err != nil {
				return err
			}
			_, err := a.Read(fd, 1)
			return err
		})
	case "unlinkrw":
		// An unlinked child used through an open file: open, unlink,
		// read one byte, write twice, close.
		return openDo(a, p, unix.O_RDWR, func(fd int) error {
			if err := a.Unlink(p); err != nil {
				return err
			}
			if _, err := a.Read(fd, 1); err != nil {
				return err
			}
			for range 2 {
				if _, err := a.Write(fd, []byte("w")); err != nil {
					return err
				}
			}
			return nil
		})
	case "rmdir":
		return a.Rmdir(p)
	}
	return fmt.Errorf("unknown operation %q", op)
}

// openDo opens p in the actor, calls do with the fd and closes it: the
// first error of the three.
func openDo(a *actor.Actor, p string, flags int, do func(fd int) error) error {
	fd, err := a.Open(p, flags, 0)
	if err != nil {
		return err
	}
	if err := do(fd); err != nil {
		a.Close(fd)
		return err
	}
	return a.Close(fd)
}

// drain reads a group's queue (events are queued before the actor's call
// returned) and names each event's object the way the model does;
// openGone is the file the step unlinked while open, if any (relObj).
// Events of another program's running process (ownproc.Foreign) come back
// apart, in others, and name it in r.foreign; an inotify event has no pid,
// so it is always the run's.
func (r *runner) drain(gi int, g *group, dir string, handles map[string]string, openGone string) (out, others []model.Event, err error) {
	pid := int32(r.a.Pid())
	if g.in != nil {
		evs, err := g.in.Drain()
		for _, e := range evs {
			obj, ok := g.objs[e.Wd]
			if !ok {
				obj = fmt.Sprintf("wd%d?", e.Wd)
			}
			out = append(out, model.Event{Group: gi, Obj: obj, Name: e.Name, Mask: uint32(e.Mask)})
		}
		return out, nil, err
	}
	last, err := g.fan.Drain()
	// A permission event read here waits for no responder (the step's
	// call returned): another program's, or one queued after its step's
	// responder stopped. It is allowed at once, so no process waits on
	// this group between steps.
	for _, e := range last {
		if e.IsPermission() {
			if rerr := g.fan.Respond(e.Fd, fanotify.Allow); rerr != nil && err == nil {
				err = rerr
			}
			g.fan.ReleaseFd(e.Fd)
		}
	}
	twice := unmerged(last)
	read := len(g.answered)
	evs := append(g.answered, last...)
	g.answered = nil
	for i, e := range evs {
		obj, rec := "?", ""
		switch {
		case e.Path != "":
			obj = relObj(dir, e.Path, openGone)
		case len(e.Info) > 0:
			in := e.Info[0]
			if o, ok := handles[in.Handle]; ok {
				obj = o
			} else {
				obj = "fid:" + in.Handle
			}
			if g.kind.DirName {
				// A DFID_NAME record names the entry (or the directory
				// itself with "."); the model keys it the same way.
				switch in.Type {
				case unix.FAN_EVENT_INFO_TYPE_DFID_NAME:
					rec = "dfid_name"
					if in.Name != "." {
						obj = path.Join(obj, in.Name)
					}
				case unix.FAN_EVENT_INFO_TYPE_FID:
					rec = "fid"
				default:
					rec = fmt.Sprintf("info type %d", in.Type)
				}
				if len(e.Info) > 1 {
					rec += fmt.Sprintf(" +%d records", len(e.Info)-1)
				}
			}
		}
		// fanotify(7): pid is that "of the process that caused the
		// event". FS_DELETE_SELF of a file unlinked while open is caused
		// by whoever drops the last reference to its dentry: the actor's
		// close, or this process, reading and freeing a queued event of
		// an fd-reporting group that holds the path
		// (fanotify_alloc_path_event) - which of the two depends on
		// whether a responder read such an event before the actor's
		// close (timing the model cannot predict; with a content group
		// marking the file for FAN_ACCESS_PERM|FAN_MODIFY|FAN_CLOSE_WRITE
		// and a fid group for FAN_DELETE_SELF it was this process in 40
		// of 40 runs on 6.18: the responder polls every 2 ms, the actor
		// closes sooner). So FAN_DELETE_SELF
		// of that file (openGone; in any other step the runner holds
		// no reference: pins go first) by this process counts as the
		// actor's; any other pid or object does not.
		lastRef := e.Pid == int32(os.Getpid()) && e.Mask&^unix.FAN_ONDIR == unix.FAN_DELETE_SELF &&
			openGone != "" && obj == openGone
		if e.Pid != pid && !lastRef {
			if p, foreign := ownproc.Foreign(e.Pid); foreign && !p.Gone {
				r.noteForeign(p)
				others = append(others, model.Event{Group: gi, Obj: fmt.Sprintf("%s pid=%d(%s)", obj, e.Pid, p), Mask: uint32(e.Mask), Rec: rec})
				continue
			}
			obj = fmt.Sprintf("%s pid=%d(not the actor)", obj, e.Pid)
		}
		out = append(out, model.Event{Group: gi, Obj: obj, Mask: uint32(e.Mask), Rec: rec})
		if i >= read && twice[i-read] != 0 {
			out = append(out, model.Event{Group: gi, Obj: obj, Mask: uint32(twice[i-read]),
				Rec: strings.TrimPrefix(rec+"; ", "; ") + "delivered again in one read, not merged (fanotify_merge)"})
		}
	}
	return out, others, err
}

// noteForeign adds p to the processes the run met, once.
func (r *runner) noteForeign(p ownproc.Process) {
	if r.seen == nil {
		r.seen = map[int]seenProc{}
	}
	r.seen[p.Pid] = seenProc{p, time.Now()}
	for _, q := range r.foreign {
		if q.Pid == p.Pid {
			return
		}
	}
	r.foreign = append(r.foreign, p)
}

// relObj names the object of an event's fd by its path relative to the
// scenario directory. An unlinked file's path reads "<path> (deleted)"
// (d_path, fs/d_path.c): whether an event of a step shows it depends on
// whether its fd was read before or after the unlink in that step (a
// responder reads mid-step; fanotify_merge folds later events into the
// queued one, whose fd is read after the step), not on the event, so the
// suffix is cut for openGone, the file the step unlinked while open: the
// object is the same inode either way. On any other object the suffix stays
// (no other step leaves an event fd on an unlinked file), so a stale path
// shows as a mismatch.
func relObj(dir, p, openGone string) string {
	if cut, ok := strings.CutSuffix(p, " (deleted)"); ok && openGone != "" && cut == path.Join(dir, openGone) {
		p = cut
	}
	if p == dir {
		return "."
	}
	if rel, ok := strings.CutPrefix(p, dir+"/"); ok {
		return rel
	}
	return p
}

// initGroup opens a fanotify group. EMFILE means the user's groups are at
// fs.fanotify.max_user_groups: groups this run closed are still being
// destroyed (an SRCU grace period each), or other suites on the machine
// hold many; it waits for them up to 5s before giving up.
func initGroup(flags uint) (*fanotify.Group, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		g, err := fanotify.Init(flags, unix.O_RDONLY)
		if !errors.Is(err, unix.EMFILE) || time.Now().After(deadline) {
			if errors.Is(err, unix.EMFILE) {
				err = fmt.Errorf("%w (fs.fanotify.max_user_groups reached for 5s)", err)
			}
			return g, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// askedPerm reports whether an earlier step asked for a permission event in
// group g's marks (only then can one arrive; whether the call succeeded is
// the kernel's business).
func askedPerm(steps []Step, g int) bool {
	for _, st := range steps {
		if (st.Op == "mark" || st.Op == "markw") && st.Group == g && st.Flags&unix.FAN_MARK_ADD != 0 &&
			st.Mask&(unix.FAN_OPEN_PERM|unix.FAN_ACCESS_PERM|unix.FAN_OPEN_EXEC_PERM) != 0 {
			return true
		}
	}
	return false
}

// unmerged returns, for each event of one read of the queue, the
// notification event bits the kernel delivered again for the same object
// where fanotify_merge must have merged them (fs/notify/fanotify/fanotify.c):
// the events of one Drain were all queued together, and
// fanotify_should_merge merges a new event into a queued one with the same
// type, pid, object (path, or the fids and names of its info records) and
// FS_ISDIR. Not checked: permission events ("Don't merge a permission event
// with any other event"; fanotify_is_hashed_event leaves them and
// FAN_Q_OVERFLOW out of the merge hash), FAN_RENAME events (merged only
// with another FAN_RENAME, and since FANOTIFY_NO_MERGE_EVENTS never), and
// events a responder read during the step (they left the queue before
// later ones came). drain renders such bits as an extra line the model
// never predicts, so each is a mismatch.
func unmerged(evs []fanotify.Event) []uint64 {
	out := make([]uint64, len(evs))
	seen := map[string]uint64{}
	for i, e := range evs {
		if e.IsPermission() || e.Mask&(unix.FAN_RENAME|unix.FAN_Q_OVERFLOW) != 0 {
			continue
		}
		id := fmt.Sprintf("pid=%d ondir=%t path=%q", e.Pid, e.Mask&unix.FAN_ONDIR != 0, e.Path)
		for _, in := range e.Info {
			id += fmt.Sprintf(" [%d %v %d %s %q]", in.Type, in.Fsid, in.HandleType, in.Handle, in.Name)
		}
		bits := uint64(e.Mask) &^ (unix.FAN_ONDIR | unix.FAN_EVENT_ON_CHILD)
		out[i] = seen[id] & bits
		seen[id] |= bits
	}
	return out
}
