package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/limits"
)

// The race: the test adds and removes the parent's watch in a loop while two
// actors write, create and rename children (inside w, into it, out of it), so
// that the children walk that sets PARENT_WATCHED (mark added), the lazy
// clearing (mark gone) and the per-dentry updates in d_instantiate/__d_move
// interleave. During the race any event is allowed but must be well formed.
// Afterwards, with the watch stable, every child then in w must report every
// operation with its name, children in u nothing, and after the watch's
// removal nobody anything.
//
// Bounded: raceFor of racing per case. The operation sequences come from a
// seed printed with the case; FSNOTIFY_PARENT_SEED=<seed> replays them (the
// interleaving with the watch toggling is the scheduler's).
const (
	envSeed  = "FSNOTIFY_PARENT_SEED"
	raceFor  = 750 * time.Millisecond
	planLen  = 5000
	maxNames = 8 // per actor, in w and u together
)

var raceCases = pair("race_watch_toggle",
	"watch added/removed in a loop while children are written, created and renamed; then a stable watch gets every child event by name and none after removal (seeded: "+envSeed+")",
	raceInotify,
	"ON_CHILD mark added/removed in a loop while children are written, created and renamed; then a stable mark gets every child event and none after removal (seeded: "+envSeed+")",
	raceFanotify)

type opKind int

const (
	opWrite opKind = iota
	opRead
	opCreate
	opRenameWithin
	opRenameOut
	opRenameIn
)

type raceOp struct {
	kind     opKind
	from, to string // names; directory implied by kind
}

// raceState is one actor's names in w and in u.
type raceState struct {
	w, u []string
	next int
}

func (s *raceState) apply(op raceOp) {
	switch op.kind {
	case opCreate:
		s.w = append(s.w, op.to)
	case opRenameWithin, opRenameIn:
		s.w = append(s.w, op.to)
		if op.kind == opRenameWithin {
			s.w = slices.DeleteFunc(s.w, func(n string) bool { return n == op.from })
		} else {
			s.u = slices.DeleteFunc(s.u, func(n string) bool { return n == op.from })
		}
	case opRenameOut:
		s.w = slices.DeleteFunc(s.w, func(n string) bool { return n == op.from })
		s.u = append(s.u, op.to)
	}
}

// plan makes actor k's operation sequence from rng, starting from its initial
// names (k<k>_0..2 in w, k<k>_3 in u).
func plan(k int, rng *rand.Rand) (raceState, []raceOp) {
	name := func(s *raceState) string { s.next++; return fmt.Sprintf("k%d_%d", k, s.next) }
	var init raceState
	for i := 0; i < 3; i++ {
		init.w = append(init.w, name(&init))
	}
	init.u = append(init.u, name(&init))
	s := raceState{w: slices.Clone(init.w), u: slices.Clone(init.u), next: init.next}
	ops := make([]raceOp, 0, planLen)
	for len(ops) < planLen {
		var op raceOp
		r := rng.IntN(100)
		switch {
		case r < 40 && len(s.w) > 0:
			op = raceOp{kind: opWrite, from: s.w[rng.IntN(len(s.w))]}
		case r < 50 && len(s.w) > 0:
			op = raceOp{kind: opRead, from: s.w[rng.IntN(len(s.w))]}
		case r < 60 && len(s.w)+len(s.u) < maxNames:
			op = raceOp{kind: opCreate, to: name(&s)}
		case r < 75 && len(s.w) > 0:
			op = raceOp{kind: opRenameWithin, from: s.w[rng.IntN(len(s.w))], to: name(&s)}
		case r < 87 && len(s.w) > 0:
			op = raceOp{kind: opRenameOut, from: s.w[rng.IntN(len(s.w))], to: name(&s)}
		case len(s.u) > 0:
			op = raceOp{kind: opRenameIn, from: s.u[rng.IntN(len(s.u))], to: name(&s)}
		default:
			continue
		}
		s.apply(op)
		ops = append(ops, op)
	}
	return init, ops
}

// run performs ops through a until deadline; it returns the state reached.
func (e *env) runPlan(a *actor.Actor, init raceState, ops []raceOp, deadline time.Time) (raceState, int, error) {
	s := raceState{w: slices.Clone(init.w), u: slices.Clone(init.u)}
	wp := func(n string) string { return e.w + "/" + n }
	up := func(n string) string { return e.u + "/" + n }
	for i, op := range ops {
		if time.Now().After(deadline) {
			return s, i, nil
		}
		var err error
		switch op.kind {
		case opWrite, opRead, opCreate:
			flags, p := unix.O_WRONLY, wp(op.from)
			switch op.kind {
			case opRead:
				flags = unix.O_RDONLY
			case opCreate:
				flags, p = unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, wp(op.to)
			}
			var fd int
			if fd, err = a.Open(p, flags, 0o644); err == nil {
				if op.kind == opWrite {
					_, err = a.Write(fd, []byte("x"))
				}
				if cerr := a.Close(fd); err == nil {
					err = cerr
				}
			}
		case opRenameWithin:
			err = a.Rename(wp(op.from), wp(op.to))
		case opRenameOut:
			err = a.Rename(wp(op.from), up(op.to))
		case opRenameIn:
			err = a.Rename(up(op.from), wp(op.to))
		}
		if err != nil {
			return s, i, fmt.Errorf("op %d (%+v): %w", i, op, err)
		}
		s.apply(op)
	}
	return s, len(ops), nil
}

func raceSeed(t *harness.T) uint64 {
	if v := os.Getenv(envSeed); v != "" {
		s, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", envSeed, v, err)
		}
		return s
	}
	return uint64(time.Now().UnixNano())
}

var raceName = regexp.MustCompile(`^k[01]_[0-9]+$`)

// race runs the racing phase: toggle is one add/remove cycle of the watch
// (it drains and checks what arrived); it returns each actor's final state.
func (e *env) race(a2 *actor.Actor, toggle func(rng *rand.Rand) error) [2]raceState {
	t := e.t
	seed := raceSeed(t)
	t.Notef("seed %d (replay the operation sequences with %s=%d)", seed, envSeed, seed)
	actors := [2]*actor.Actor{e.a, a2}
	var inits [2]raceState
	var plans [2][]raceOp
	for k := range 2 {
		inits[k], plans[k] = plan(k, rand.New(rand.NewPCG(seed, uint64(k))))
		for _, n := range inits[k].w {
			e.file(e.w, n, "")
		}
		for _, n := range inits[k].u {
			e.file(e.u, n, "")
		}
	}
	var stop atomic.Bool
	cycles := 0
	toggled := make(chan error, 1)
	go func() {
		rng := rand.New(rand.NewPCG(seed, 2))
		for !stop.Load() {
			if err := toggle(rng); err != nil {
				toggled <- err
				return
			}
			cycles++
		}
		toggled <- nil
	}()
	deadline := time.Now().Add(raceFor)
	var wg sync.WaitGroup
	var finals [2]raceState
	var counts [2]int
	errs := make([]error, 2)
	for k := range 2 {
		wg.Go(func() {
			finals[k], counts[k], errs[k] = e.runPlan(actors[k], inits[k], plans[k], deadline)
		})
	}
	wg.Wait()
	stop.Store(true)
	if err := errors.Join(append(errs, <-toggled)...); err != nil {
		t.Fatalf("race: %v", err)
	}
	t.Notef("race: %d watch add/remove cycles; actors ran %d and %d operations", cycles, counts[0], counts[1])
	e.did("race (seed %d): %d toggles, %d+%d ops, watch removed", seed, cycles, counts[0], counts[1])
	return finals
}

// raceNames merges the actors' names in one directory, sorted.
func raceNames(fs [2]raceState, inW bool) []string {
	var out []string
	for _, s := range fs {
		if inW {
			out = append(out, s.w...)
		} else {
			out = append(out, s.u...)
		}
	}
	slices.Sort(out)
	return out
}

const (
	inRace  = inRW | unix.IN_CREATE | inMoves
	fanRace = fanRW | unix.FAN_CREATE | fanMoves
)

func raceInotify(t *harness.T) {
	e := newEnv(t)
	in := t.Inotify(0)
	wds := map[int32]bool{}
	var bad []string
	checkRace := func() error {
		evs, err := in.Drain()
		if err != nil {
			return err
		}
		for _, ev := range evs {
			ok := wds[ev.Wd] && (ev.Mask == unix.IN_IGNORED && ev.Name == "" ||
				uint32(ev.Mask)&^uint32(inRace) == 0 && ev.Mask != 0 && raceName.MatchString(ev.Name))
			if !ok && len(bad) < 10 {
				bad = append(bad, ev.String())
			}
		}
		return nil
	}
	finals := e.race(t.Actor(), func(rng *rand.Rand) error {
		wd, err := in.AddWatch(e.w, inRace)
		if err != nil {
			return err
		}
		wds[wd] = true
		time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond)
		if err := in.RmWatch(wd); err != nil {
			return err
		}
		return checkRace()
	})
	if err := checkRace(); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if len(bad) > 0 {
		t.Errorf("malformed events during the race (want a known wd, a child name k[01]_N and a mask within %s, or IN_IGNORED): %v", inotify.Mask(inRace), bad)
		for _, ev := range bad {
			if strings.Contains(ev, "IN_Q_OVERFLOW") {
				t.Errorf("%s", limits.Overflow("inotify", len(bad)))
				break
			}
		}
	}
	l := &inL{e: e, in: in}
	wd := l.watch(e.w, inRace)
	for _, n := range raceNames(finals, true) {
		e.writeThrough(e.w+"/"+n,
			func() { l.check(iev(wd, unix.IN_OPEN, n)) },
			func() { l.check(iev(wd, unix.IN_MODIFY, n)) },
			func() { l.check(iev(wd, unix.IN_CLOSE_WRITE, n)) })
	}
	none := func() { l.check() }
	for _, n := range raceNames(finals, false) {
		e.writeThrough(e.u+"/"+n, none, none, none)
	}
	l.rm(wd)
	l.check(iev(wd, unix.IN_IGNORED, ""))
	for _, n := range raceNames(finals, true) {
		e.writeThrough(e.w+"/"+n, none, none, none)
	}
	l.quiet()
}

func raceFanotify(t *harness.T) {
	e := newEnv(t)
	g := e.fanotify("p")
	dirW := e.dname(e.w, "")
	var pids [2]int32
	var bad []string
	checkRace := func() error {
		evs, err := g.g.Drain()
		if err != nil {
			return err
		}
		for _, ev := range evs {
			ok := (ev.Pid == pids[0] || ev.Pid == pids[1]) &&
				uint64(ev.Mask)&^uint64(fanRace) == 0 && ev.Mask != 0 &&
				len(ev.Info) >= 1 && len(ev.Info) <= 2 &&
				ev.Info[0].Type == unix.FAN_EVENT_INFO_TYPE_DFID_NAME &&
				ev.Info[0].Handle == dirW.Handle && raceName.MatchString(ev.Info[0].Name) &&
				(len(ev.Info) == 1 || ev.Info[1].Type == unix.FAN_EVENT_INFO_TYPE_FID)
			if !ok && len(bad) < 10 {
				bad = append(bad, ev.String())
			}
		}
		return nil
	}
	a2 := t.Actor()
	pids = [2]int32{int32(e.a.Pid()), int32(a2.Pid())}
	finals := e.race(a2, func(rng *rand.Rand) error {
		if err := g.g.Add(0, fanRace|onChild, e.w); err != nil {
			return err
		}
		time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond)
		if err := g.g.Remove(0, fanRace|onChild, e.w); err != nil {
			return err
		}
		return checkRace()
	})
	if err := checkRace(); err != nil {
		t.Fatalf("drain: %v", err)
	}
	if len(bad) > 0 {
		t.Errorf("malformed events during the race (want an actor's pid, DFID_NAME(w, k[01]_N)[+FID] and a mask within %s): %v", fanotify.Mask(fanRace), bad)
		for _, ev := range bad {
			if strings.Contains(ev, "FAN_Q_OVERFLOW") {
				t.Errorf("%s", limits.Overflow("fanotify", len(bad)))
				break
			}
		}
	}
	inW, inU := raceNames(finals, true), raceNames(finals, false)
	recs := map[string][]fanotify.Info{}
	for _, n := range inW {
		recs[n] = e.child(e.w, n, e.fid(e.w+"/"+n))
	}
	g.mark(0, fanRace|onChild, e.w)
	for _, n := range inW {
		ev := func(mask uint64) func() { return func() { g.check(e.fev(mask, recs[n]...)) } }
		e.writeThrough(e.w+"/"+n, ev(unix.FAN_OPEN), ev(unix.FAN_MODIFY), ev(unix.FAN_CLOSE_WRITE))
	}
	none := func() { g.check() }
	for _, n := range inU {
		e.writeThrough(e.u+"/"+n, none, none, none)
	}
	g.unmark(0, fanRace|onChild, e.w)
	for _, n := range inW {
		e.writeThrough(e.w+"/"+n, none, none, none)
	}
	g.quiet()
}
