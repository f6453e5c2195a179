package main

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// Obs is what one step produced: the result of the call (errno, watch
// descriptor) and every group's events, normalised by model.Normalise
// (an inotify group's in queue order, a fanotify group's folded) and
// rendered one per line. Kernel and model observations compare as equal lines.
type Obs []string

func errnoText(e unix.Errno) string {
	if e == 0 {
		return "ok"
	}
	return unix.ErrnoName(e)
}

// observe renders one step's result and events.
func observe(kinds []model.GroupKind, result string, evs []model.Event) Obs {
	var o Obs
	if result != "" {
		o = append(o, "result: "+result)
	}
	for _, e := range model.Normalise(kinds, evs) {
		var mask string
		if kinds[e.Group].Inotify {
			mask = inotify.Mask(e.Mask).String()
		} else {
			mask = fanotify.Mask(e.Mask).String()
		}
		obj := e.Obj
		if e.Name != "" {
			obj += " name=" + e.Name
		}
		if e.Rec != "" {
			obj += " (" + e.Rec + ")"
		}
		o = append(o, fmt.Sprintf("g%d %s %s", e.Group, mask, obj))
	}
	return o
}

// withPerm adds the order in which groups of different classes received
// each permission event of the step (model.RenderPermOrder).
func withPerm(o Obs, perm []string) Obs {
	for _, l := range perm {
		o = append(o, "permission order: "+l)
	}
	return o
}

func (o Obs) String() string {
	if len(o) == 0 {
		return "(nothing)"
	}
	return strings.Join(o, "; ")
}

// firstDiff returns the index of the first step whose observations differ, or -1.
func firstDiff(a, b []Obs) int {
	for i := range min(len(a), len(b)) {
		if !slices.Equal(a[i], b[i]) {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// predict runs a scenario through the model.
func predict(k model.Kernel, s *Scenario) []Obs {
	kinds := s.kinds()
	t, _ := treeOf(s)
	w := model.NewWorld(k, t, kinds)
	if s.Special {
		w.SetFIFO(fifoName)
	}
	out := make([]Obs, len(s.Steps))
	for i, st := range s.Steps {
		var res string
		var evs []model.Event
		switch st.Op {
		case "mark":
			res = errnoText(w.FanMark(st.Group, st.Flags, st.Mask, st.Obj))
		case "markw":
			// open(O_WRONLY), the mark call, close: the open's errno when
			// it fails (no call then), else the call's.
			var e unix.Errno
			if e, evs = w.Act("openw", st.Obj); e != 0 {
				res = errnoText(e)
				break
			}
			res = errnoText(w.FanMark(st.Group, st.Flags, st.Mask, st.Obj))
			_, closed := w.Act("closew", st.Obj)
			evs = append(evs, closed...)
		case "watch":
			wd, e := w.InWatch(st.Group, st.Obj, st.Mask)
			res = errnoText(e)
			if e == 0 {
				res = fmt.Sprintf("wd=%d", wd)
			}
		case "rmwatch":
			var e unix.Errno
			e, evs = w.InRm(st.Group, st.Obj)
			res = errnoText(e)
		case "link":
			var e unix.Errno
			e, evs = w.Link(st.Obj, st.To)
			if e != 0 {
				res = errnoText(e)
			}
		case "rename":
			var e unix.Errno
			e, evs = w.Rename(st.Obj, st.To)
			if e != 0 {
				res = errnoText(e)
			}
		default:
			var e unix.Errno
			e, evs = w.Act(st.Op, st.Obj)
			if e != 0 {
				res = errnoText(e)
			}
		}
		out[i] = withPerm(observe(kinds, res, k.InotifyMerge(kinds, evs)), k.PermOrder(kinds, evs))
		if k.Cov != nil {
			k.Cov.EndPath()
		}
	}
	return out
}
