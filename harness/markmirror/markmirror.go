// Package markmirror keeps, beside each fanotify group of a case, the
// harness/model view of its marks: every mark placed through it is first
// asked of the model (model.MarkAdd: the errno the call must give and the
// mark it leaves), and Check compares what the kernel holds
// (/proc/self/fdinfo: mask, ignored_mask, mflags; fs/notify/fdinfo.c
// fanotify_fdinfo) with what the model holds, so a case that fails on events
// also says whether the marks were what it assumed.
package markmirror

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// TB is the part of harness.T the package needs.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// locs is the order in which a group's marks are listed.
var locs = []model.Loc{model.LocSelf, model.LocParent, model.LocMount, model.LocFS}

// Places are the objects the four mark locations name for one event: the
// object itself, its parent directory and the root of its filesystem (mount
// and filesystem marks).
type Places struct {
	Self, Parent, Root string
	SelfIsDir          bool // the object is a directory
}

// Path is the object a mark at loc is placed on.
func (p Places) Path(loc model.Loc) string {
	switch loc {
	case model.LocSelf:
		return p.Self
	case model.LocParent:
		return p.Parent
	}
	return p.Root
}

// Target is the model's description of the object a mark at loc is placed on.
func (p Places) Target(loc model.Loc) model.Target {
	return model.Target{Loc: loc, IsDir: loc == model.LocParent || (loc == model.LocSelf && p.SelfIsDir)}
}

// Marks is the model of one group's marks, at most one per location.
type Marks struct {
	index  int  // the group's number in the model (model.Mark.Group)
	dirFID bool // the group reports FAN_REPORT_DIR_FID (model.MarkAdd's rules differ)
	byLoc  map[model.Loc]*model.Mark
}

// NewMarks is an empty model for group number index.
func NewMarks(index int, dirFID bool) *Marks {
	return &Marks{index: index, dirFID: dirFID, byLoc: map[model.Loc]*model.Mark{}}
}

// Predict returns what fanotify_mark(FAN_MARK_ADD|loc's type|flags, mask) on
// tg would give: the errno (0: success) and the mark it would leave (nil: the
// location keeps no mark). The model is not changed.
func (m *Marks) Predict(tg model.Target, flags uint, mask uint32) (*model.Mark, unix.Errno) {
	nm, errno := model.MarkAdd(m.byLoc[tg.Loc], m.index, flags|tg.Loc.MarkFlags(), mask, tg, m.dirFID)
	return nm, errno
}

// Add applies the mark call to the model as Predict says and returns its errno.
func (m *Marks) Add(tg model.Target, flags uint, mask uint32) unix.Errno {
	nm, errno := m.Predict(tg, flags, mask)
	if errno == 0 && nm != nil {
		m.byLoc[tg.Loc] = nm
	}
	return errno
}

// List returns the marks, in the order self, parent, mount, fs.
func (m *Marks) List() []*model.Mark {
	var out []*model.Mark
	for _, l := range locs {
		if mk := m.byLoc[l]; mk != nil {
			out = append(out, mk)
		}
	}
	return out
}

// States renders the model's marks like Group.FdinfoStates renders fdinfo's.
func (m *Marks) States() []string {
	var out []string
	for l, mk := range m.byLoc {
		out = append(out, state(l.String(), mk.MFlags(), fanotify.Mask(mk.Mask), fanotify.Mask(mk.Ignore)))
	}
	sort.Strings(out)
	return out
}

func state(loc string, mflags uint64, mask, ignored fanotify.Mask) string {
	return fmt.Sprintf("%s mflags=%#x mask=%s ignored_mask=%s", loc, mflags, mask, ignored)
}

// Group is a fanotify group and the model of its marks.
type Group struct {
	*Marks
	G *fanotify.Group
}

// New wraps g, group number index in the model; dirFID says g was created
// with FAN_REPORT_DIR_FID.
func New(g *fanotify.Group, index int, dirFID bool) *Group {
	return &Group{Marks: NewMarks(index, dirFID), G: g}
}

// Mark places fanotify_mark(FAN_MARK_ADD|loc's type|flags, mask) on the object
// p names for loc. It returns the errno the model predicts (0: success) and
// the call's error; the model takes the new mark only when the model and the
// kernel both say the call succeeded.
func (g *Group) Mark(p Places, loc model.Loc, flags uint, mask uint32) (predicted unix.Errno, err error) {
	tg := p.Target(loc)
	nm, predicted := g.Predict(tg, flags, mask)
	err = g.G.Add(loc.MarkFlags()|flags, uint64(mask), p.Path(loc))
	if predicted == 0 && err == nil && nm != nil {
		g.byLoc[loc] = nm
	}
	return predicted, err
}

// Errno is the errno err carries: 0 for nil; an error that carries none is
// returned as is.
func Errno(err error) (unix.Errno, error) {
	if err == nil {
		return 0, nil
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return e, nil
	}
	return 0, err
}

// FdinfoStates reads the group's marks from /proc/self/fdinfo and renders them
// sorted, one per mark: "<loc> mflags=.. mask=.. ignored_mask=..". A mark on
// an object that p does not name prints as the fdinfo line says.
func (g *Group) FdinfoStates(p Places) ([]string, error) {
	ms, err := g.G.Marks()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		var loc string
		switch {
		case m.Kind == fanotify.InodeMark && m.IsOn(p.Self):
			loc = model.LocSelf.String()
		case m.Kind == fanotify.InodeMark && m.IsOn(p.Parent):
			loc = model.LocParent.String()
		case m.Kind == fanotify.MountMark:
			loc = model.LocMount.String()
		case m.Kind == fanotify.FilesystemMark && m.IsOn(p.Root):
			loc = model.LocFS.String()
		default:
			loc = m.String()
		}
		out = append(out, state(loc, m.MFlags, m.Mask, m.IgnoredMask))
	}
	sort.Strings(out)
	return out, nil
}

// Check compares the group's marks in fdinfo with the model and fails t on
// any difference, with both lists. name names the group in the report; when
// says at which point of the case the check is made.
func (g *Group) Check(t TB, name, when string, p Places) bool {
	t.Helper()
	got, err := g.FdinfoStates(p)
	if err != nil {
		t.Errorf("fdinfo of group %s %s: %v", name, when, err)
		return false
	}
	want := g.States()
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return true
	}
	t.Errorf("fdinfo marks of group %s %s differ from the model\n  want: %s\n  got:  %s",
		name, when, lines(want), lines(got))
	return false
}

func lines(states []string) string {
	if len(states) == 0 {
		return "no mark"
	}
	return strings.Join(states, "\n        ")
}

// AllMarks lists the model's marks of every group (a *Marks or a *Group),
// group by group: the marks model.Kernel.Deliver takes.
func AllMarks[M interface{ List() []*model.Mark }](gs []M) []*model.Mark {
	var out []*model.Mark
	for _, g := range gs {
		out = append(out, g.List()...)
	}
	return out
}

// Forget removes the model's mark at loc: the kernel dropped it by itself
// (an evictable mark goes with its evicted inode: fsnotify_inode_delete).
func (m *Marks) Forget(loc model.Loc) { delete(m.byLoc, loc) }

// At returns the model's mark at loc (nil: none).
func (m *Marks) At(loc model.Loc) *model.Mark { return m.byLoc[loc] }
