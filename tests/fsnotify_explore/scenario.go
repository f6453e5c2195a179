package main

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// The tree every scenario starts from, in its own directory: "." (the
// scenario directory), two files, a subdirectory and a file in it; in a
// Special scenario (every one the generator draws) also a FIFO, fifoName.
var tree = map[string]bool{".": true, "f": false, "g": false, "s": true, "s/h": false}

// objects lists the tree in a fixed order (generation must not depend on map order).
var objects = []string{".", "f", "g", "s", "s/h"}

// fifoName is the FIFO of a Special scenario's tree. The actor only uses it
// through the "fifo" operation (open O_RDWR, which does not wait for a
// peer, fifo(7); write a byte, read it back, close), chmod, unlink and
// link: a read or write operation would open it for one side only and
// block. So it is neither in allNames nor in children, and no rename
// moves it or onto it.
//
// Its read and write events do not reach its parent's marks and watches
// (635bc4def026, model.World.deliver); the rows of the regressions table
// written before FIFOs were drawn by default keep a tree without one.
const fifoName = "p"

// treeOf returns a scenario's starting tree and its objects in order.
func treeOf(s *Scenario) (map[string]bool, []string) {
	if !s.Special {
		return tree, objects
	}
	t := map[string]bool{fifoName: false}
	for n, d := range tree {
		t[n] = d
	}
	return t, append(objects[:len(objects):len(objects)], fifoName)
}

// Names that create and mkdir make (and unlink and rmdir remove), with
// their kind; every other name is in tree.
var (
	newFiles  = []string{"n", "s/n"}
	newDirs   = []string{"e", "s/e"}
	isDirName = map[string]bool{".": true, "s": true, "e": true, "s/e": true}
	allNames  = []string{".", "f", "g", "s", "s/h", "n", "s/n", "e", "s/e"}
	children  = map[string][]string{".": {"f", "g", "s", "n", "e"}, "s": {"s/h", "s/n", "s/e"}}
)

// The group kinds a scenario draws from.
var (
	kindNotif   = model.GroupKind{Name: "notif", Init: unix.FAN_CLASS_NOTIF}
	kindContent = model.GroupKind{Name: "content", Init: unix.FAN_CLASS_CONTENT, Perm: true}
	kindFID     = model.GroupKind{Name: "fid", Init: unix.FAN_CLASS_NOTIF | unix.FAN_REPORT_FID, FID: true}
	kindPre     = model.GroupKind{Name: "pre_content", Init: unix.FAN_CLASS_PRE_CONTENT, Perm: true}
	kindDFID    = model.GroupKind{Name: "dfid_name", Init: unix.FAN_CLASS_NOTIF | unix.FAN_REPORT_DFID_NAME, FID: true, DirName: true}
	kindInotify = model.GroupKind{Name: "inotify", Inotify: true}
)

var kindsByName = map[string]model.GroupKind{
	"notif": kindNotif, "content": kindContent, "pre_content": kindPre, "fid": kindFID, "dfid_name": kindDFID, "inotify": kindInotify,
}

// Step is one step of a scenario: a mark call, an inotify watch call, a
// file operation by the actor, or "markw": a mark call on a file the actor
// holds open for write (it opens the file O_WRONLY before the call and
// closes it after: model.World's "openw" and "closew").
type Step struct {
	Op    string // "mark", "markw", "watch", "rmwatch", or an actor operation (model.Ops, rename, link)
	Group int    `json:",omitempty"`
	Flags uint   `json:",omitempty"` // fanotify_mark(2) flags
	Mask  uint32 `json:",omitempty"` // fanotify mask, or inotify mask with IN_MASK_ADD / IN_ONESHOT
	Obj   string `json:",omitempty"` // tree object ("" for mount and filesystem marks)
	To    string `json:",omitempty"` // rename: the new name
}

// Scenario is one generated (or shrunk) script.
type Scenario struct {
	Seed int64
	// Special: the tree has a FIFO (every scenario the generator draws).
	Special bool `json:",omitempty"`
	// Aim: the model rule a directed seed's prelude applies (aimOf), or "".
	Aim    string   `json:",omitempty"`
	Groups []string // group kind names
	Steps  []Step
}

func (s *Scenario) kinds() []model.GroupKind {
	out := make([]model.GroupKind, len(s.Groups))
	for i, n := range s.Groups {
		out[i] = kindsByName[n]
	}
	return out
}

func (st Step) String() string {
	switch st.Op {
	case "mark":
		where := st.Obj
		switch {
		case st.Flags&unix.FAN_MARK_FILESYSTEM != 0:
			where = "<fs root>"
		case st.Flags&unix.FAN_MARK_MOUNT != 0:
			where = "<mount root>"
		}
		return fmt.Sprintf("g%d fanotify_mark(%s, %s, %s)", st.Group, fanotify.MarkFlagsString(st.Flags), fanotify.Mask(st.Mask), where)
	case "watch":
		return fmt.Sprintf("g%d inotify_add_watch(%s, %s)", st.Group, st.Obj, inotify.Mask(st.Mask))
	case "rmwatch":
		return fmt.Sprintf("g%d inotify_rm_watch(wd of %s)", st.Group, st.Obj)
	case "markw":
		return fmt.Sprintf("g%d fanotify_mark(%s, %s, %s) while the actor holds %s open for write (open O_WRONLY before, close after)",
			st.Group, fanotify.MarkFlagsString(st.Flags), fanotify.Mask(st.Mask), st.Obj, st.Obj)
	}
	if st.Op == "fifo" {
		return fmt.Sprintf("actor fifo %s (open O_RDWR, write a byte, read it back, close)", st.Obj)
	}
	if st.Op == "unlinkrw" {
		return fmt.Sprintf("actor unlinkrw %s (open O_RDWR, unlink, read 1 byte, write twice, close)", st.Obj)
	}
	if st.Op == "rename" || st.Op == "link" {
		return fmt.Sprintf("actor %s %s -> %s", st.Op, st.Obj, st.To)
	}
	return fmt.Sprintf("actor %s %s", st.Op, st.Obj)
}

// Script renders the scenario as a numbered script.
func (s *Scenario) Script() string {
	var b strings.Builder
	if s.Aim != "" {
		fmt.Fprintf(&b, "  (directed at the model rule %q)\n", s.Aim)
	}
	for i, g := range s.Groups {
		fmt.Fprintf(&b, "  g%d = %s\n", i, g)
	}
	for i, st := range s.Steps {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, st)
	}
	return b.String()
}

// Row renders the scenario as a row for the regressions table (regressions.go).
func (s *Scenario) Row(name string) string {
	var b strings.Builder
	special := ""
	if s.Special {
		special = " Special: true,"
	}
	fmt.Fprintf(&b, "{\n\tName: %q,\n\tDoc: \"TODO: what it shows, with its source\",\n\tScenario: Scenario{Seed: %d,%s Groups: %#v, Steps: []Step{\n", name, s.Seed, special, s.Groups)
	for _, st := range s.Steps {
		to := ""
		if st.To != "" {
			to = fmt.Sprintf(", To: %q", st.To)
		}
		fmt.Fprintf(&b, "\t{Op: %q, Group: %d, Flags: %#x, Mask: %#x, Obj: %q%s}, // %s\n", st.Op, st.Group, st.Flags, st.Mask, st.Obj, to, st)
	}
	b.WriteString("}}},")
	return b.String()
}

// Generator draws scenarios. kinds are the group kinds this kernel and
// filesystem support.
type Generator struct {
	Kinds []string
	// Undirected: no seed is directed (aimOf); for the tests that compare.
	Undirected bool
}

var (
	// Inode events, which only FID groups may mark (FAN_ATTRIB, dirent and self events).
	fidEvents = []uint32{unix.FAN_ATTRIB, unix.FAN_CREATE, unix.FAN_DELETE, unix.FAN_DELETE_SELF, unix.FAN_MOVE_SELF, unix.FAN_MOVED_FROM, unix.FAN_MOVED_TO}
	// OPEN is drawn most: every operation opens, so marks and ignore masks
	// drawn from it meet each other and the actions most often.
	fanEvents = []uint32{unix.FAN_OPEN, unix.FAN_OPEN, unix.FAN_OPEN, unix.FAN_ACCESS, unix.FAN_MODIFY, unix.FAN_CLOSE_WRITE, unix.FAN_CLOSE_NOWRITE}
	inEvents  = []uint32{unix.IN_OPEN, unix.IN_OPEN, unix.IN_ACCESS, unix.IN_MODIFY, unix.IN_CLOSE_WRITE, unix.IN_CLOSE_NOWRITE, unix.IN_ATTRIB,
		unix.IN_CREATE, unix.IN_DELETE, unix.IN_DELETE_SELF, unix.IN_MOVE_SELF, unix.IN_MOVED_FROM, unix.IN_MOVED_TO}
	// markObjects weighs the directories (parents of the others) up.
	markObjects = []string{".", ".", "s", "s", "f", "s/h", "g"}
)

// markObject draws the object of a mark or watch: one of markObjects, or
// 1 in 10 the FIFO (its own marks and watches get its read and write
// events, its parent's do not: model.World.deliver).
func markObject(r *rand.Rand) string {
	if r.Intn(10) == 0 {
		return fifoName
	}
	return pick(r, markObjects)
}

// Scenario returns the scenario of a seed: the same seed and kinds give the same scenario.
func (gen Generator) Scenario(seed int64) *Scenario {
	r := rand.New(rand.NewSource(seed))
	s := &Scenario{Seed: seed, Special: true}
	n := pick(r, []int{1, 1, 2, 2, 2, 2, 3, 3, 3, 4})
	for i := 0; i < n; i++ {
		s.Groups = append(s.Groups, gen.Kinds[r.Intn(len(gen.Kinds))])
	}
	steps := 5 + r.Intn(9)
	exists := map[string]bool{}
	t, _ := treeOf(s)
	for n := range t {
		exists[n] = true
	}
	if s.Groups[0] != "inotify" && r.Intn(2) == 0 {
		// Half the scenarios start with a mark that reports much (a mount,
		// filesystem or directory mark), which the later ignore masks and
		// other groups' marks then interact with.
		st := Step{Op: "mark", Flags: unix.FAN_MARK_ADD | pick(r, []uint{unix.FAN_MARK_MOUNT, unix.FAN_MARK_FILESYSTEM, 0}),
			Mask: unix.FAN_OPEN | pick(r, fanEvents)}
		if st.Flags&(unix.FAN_MARK_FILESYSTEM|unix.FAN_MARK_MOUNT) == 0 {
			st.Obj = "."
			st.Mask |= unix.FAN_EVENT_ON_CHILD
		}
		if r.Intn(2) == 0 {
			st.Mask |= unix.FAN_ONDIR
		}
		if (s.Groups[0] == "fid" || s.Groups[0] == "dfid_name") && st.Flags&unix.FAN_MARK_MOUNT == 0 {
			st.Mask |= unix.FAN_CREATE | unix.FAN_DELETE | unix.FAN_ATTRIB
			if st.Flags&unix.FAN_MARK_FILESYSTEM != 0 {
				st.Mask |= unix.FAN_DELETE_SELF
			}
		}
		s.Steps = append(s.Steps, st)
	} else if s.Groups[0] == "inotify" && r.Intn(2) == 0 {
		// or with a directory watch that sees much.
		s.Steps = append(s.Steps, Step{Op: "watch", Obj: pick(r, []string{".", "s"}),
			Mask: unix.IN_CREATE | unix.IN_DELETE | unix.IN_DELETE_SELF | pick(r, inEvents)})
	}
	if other := 1 + r.Intn(max(n-1, 1)); n > 1 && s.Groups[0] != "inotify" && len(s.Steps) < 2 && r.Intn(5) == 0 {
		// One group ignores on a directory what it reports there, and
		// another group's mark or watch on that directory watches its
		// children: the first group's directory mark is then visited (or
		// not) for the children's events, which may clear its ignore mask
		// (the interaction of 4f0b903ded72 and e730558adffb).
		d := pick(r, []string{".", "s"})
		ev := pick(r, fanEvents)
		s.Steps = append(s.Steps[:0],
			Step{Op: "mark", Flags: unix.FAN_MARK_ADD | pick(r, []uint{unix.FAN_MARK_MOUNT, unix.FAN_MARK_FILESYSTEM, 0}), Mask: ev | unix.FAN_ONDIR},
			Step{Op: "mark", Flags: unix.FAN_MARK_ADD | pick(r, []uint{unix.FAN_MARK_IGNORED_MASK, unix.FAN_MARK_IGNORED_MASK | unix.FAN_MARK_IGNORED_SURV_MODIFY}), Mask: ev, Obj: d})
		if s.Steps[0].Flags&(unix.FAN_MARK_MOUNT|unix.FAN_MARK_FILESYSTEM) == 0 {
			s.Steps[0].Obj = d
		}
		if s.Groups[other] == "inotify" {
			s.Steps = append(s.Steps, Step{Op: "watch", Group: other, Obj: d, Mask: pick(r, inEvents)})
		} else {
			s.Steps = append(s.Steps, Step{Op: "mark", Group: other, Flags: unix.FAN_MARK_ADD, Obj: d, Mask: unix.FAN_EVENT_ON_CHILD | pick(r, fanEvents)})
		}
	}
	if ci, pi := slices.Index(s.Groups, "content"), slices.Index(s.Groups, "pre_content"); ci >= 0 && pi >= 0 && len(s.Steps) < 3 && r.Intn(3) == 0 {
		// A content and a pre-content group both ask for a permission
		// event on what the actor opens: the pre-content group must be
		// offered it first (fanotify(7) FAN_CLASS_PRE_CONTENT).
		ev := pick(r, []uint32{unix.FAN_OPEN_PERM, unix.FAN_OPEN_PERM, unix.FAN_ACCESS_PERM})
		s.Steps = append(s.Steps,
			Step{Op: "mark", Group: ci, Flags: unix.FAN_MARK_ADD | pick(r, []uint{unix.FAN_MARK_MOUNT, 0}), Mask: ev | unix.FAN_EVENT_ON_CHILD, Obj: "."},
			Step{Op: "mark", Group: pi, Flags: unix.FAN_MARK_ADD | pick(r, []uint{unix.FAN_MARK_MOUNT, 0}), Mask: ev | unix.FAN_EVENT_ON_CHILD, Obj: "."})
	}
	if gi := slices.Index(s.Groups, "inotify"); gi >= 0 && len(s.Steps) < 2 && r.Intn(4) == 0 {
		// An inotify watch on a directory for what an open file does, half
		// the time with IN_EXCL_UNLINK: a child unlinked while open
		// (unlinkrw) then shows whether its events still reach the
		// directory, and its two writes whether identical successive
		// events are coalesced (inotify(7)).
		st := Step{Op: "watch", Group: gi, Obj: pick(r, []string{".", "s"}), Mask: unix.IN_MODIFY | unix.IN_ACCESS | unix.IN_CLOSE_WRITE | unix.IN_MOVE_SELF}
		if r.Intn(2) == 0 {
			st.Mask |= unix.IN_EXCL_UNLINK
		}
		s.Steps = append(s.Steps, st)
		if r.Intn(2) == 0 {
			// and, in the same instance, a file in that directory watched
			// for IN_MODIFY: a write then queues the parent's and the
			// child's event in turn, which inotify_merge (the queue's tail
			// only) must not coalesce across.
			kid := map[string][]string{".": {"f", "g"}, "s": {"s/h"}}[st.Obj]
			s.Steps = append(s.Steps, Step{Op: "watch", Group: gi, Obj: pick(r, kid), Mask: unix.IN_MODIFY})
		}
	}
	for i := len(s.Steps); i < steps; i++ {
		g := r.Intn(n)
		if r.Intn(100) < 60 {
			if s.Groups[g] == "inotify" {
				s.Steps = append(s.Steps, genWatch(r, g, s.Steps))
			} else {
				s.Steps = append(s.Steps, genMark(r, g, s.Groups[g], s.Steps))
			}
			continue
		}
		s.Steps = append(s.Steps, genAct(r, s.Steps, exists))
	}
	if r.Intn(4) == 0 {
		// A scenario may end with link(2) (the model does not follow a
		// hardlink pair further: model.World.Link), most often of a file
		// watched or marked before, or a child of a watched directory.
		s.Steps = append(s.Steps, genLink(r, s.Steps, exists))
	}
	if a, kind := aimOf(seed, gen.Kinds); a != nil && !gen.Undirected {
		direct(s, a, kind)
	}
	return s
}

// genLink draws link(from, to): from an existing file, to a new name in
// the same or the other directory (sometimes an existing one: EEXIST).
func genLink(r *rand.Rand, prev []Step, exists map[string]bool) Step {
	var files []string
	for _, n := range allNames {
		if exists[n] && !isDirName[n] {
			files = append(files, n)
		}
	}
	from := pick(r, append(files, "f"))
	if p, ok := earlier(r, prev, "watch", "mark"); ok && r.Intn(3) > 0 {
		var near []string
		for _, k := range append([]string{p.Obj}, children[p.Obj]...) {
			if exists[k] && !isDirName[k] {
				near = append(near, k)
			}
		}
		if len(near) > 0 {
			from = pick(r, near)
		}
	}
	return Step{Op: "link", Obj: from, To: pick(r, []string{"n", "s/n", "n", "s/n", "g"})}
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.Intn(len(xs))] }

// earlier returns a random earlier step with op (for steps that reuse an
// earlier target: an ignore mask on a marked object, a removal of what was
// added, an action under a mark), or false.
func earlier(r *rand.Rand, prev []Step, ops ...string) (Step, bool) {
	var c []Step
	for _, st := range prev {
		for _, op := range ops {
			if st.Op == op && (st.Obj != "" || op == "mark") {
				c = append(c, st)
			}
		}
	}
	if len(c) == 0 {
		return Step{}, false
	}
	return pick(r, c), true
}

// genAct draws a file operation; exists is the generator's idea of the
// tree (it follows the operations it drew), so that most operations find
// their object, and some do not.
// ignoredDir returns an earlier ignore mask of another group than g on a
// directory: marking or watching that directory for the same events (so it
// watches its children) is how one group's mark changes what another's
// ignore mask meets.
func ignoredDir(r *rand.Rand, prev []Step, g int) (Step, bool) {
	var c []Step
	for _, st := range prev {
		if st.Op == "mark" && st.Group != g && isDirName[st.Obj] &&
			st.Flags&(unix.FAN_MARK_IGNORED_MASK|unix.FAN_MARK_IGNORE) != 0 && st.Flags&unix.FAN_MARK_ADD != 0 {
			c = append(c, st)
		}
	}
	if len(c) == 0 {
		return Step{}, false
	}
	return pick(r, c), true
}

func genAct(r *rand.Rand, prev []Step, exists map[string]bool) Step {
	var present, absentFiles, absentDirs []string
	for _, n := range allNames {
		switch {
		case exists[n]:
			present = append(present, n)
		case exists[parentName(n)] && isDirName[n]:
			absentDirs = append(absentDirs, n)
		case exists[parentName(n)]:
			absentFiles = append(absentFiles, n)
		}
	}
	obj := pick(r, present)
	if st, ok := earlier(r, prev, "mark", "watch"); ok && st.Obj != "" && r.Intn(2) == 0 {
		obj = st.Obj
		if kids := children[obj]; len(kids) > 0 && r.Intn(2) == 0 { // a child of a marked directory
			obj = pick(r, kids)
		}
	}
	if n := len(prev); n > 0 && prev[n-1].Op == "rename" && exists[prev[n-1].To] && r.Intn(5) < 3 {
		obj = prev[n-1].To // act on what was just moved: its new parent must see it
	}
	if n := len(prev); n > 0 && prev[n-1].Op == "write" && exists[parentName(prev[n-1].Obj)] && r.Intn(3) == 0 {
		// A child's write (FS_MODIFY) may clear the ignore masks of the
		// parent's marks it visits: the parent's own next event shows it.
		return Step{Op: "opendir", Obj: parentName(prev[n-1].Obj)}
	}
	if p, ok := ignoredDir(r, prev, -1); ok && r.Intn(4) == 0 {
		// A write of a child of a directory with an ignore mask: its
		// FS_MODIFY meets the ignore mask only if the parent's mark is
		// visited for it, which another group's mark may cause.
		var kids []string
		for _, k := range children[p.Obj] {
			if exists[k] && !isDirName[k] {
				kids = append(kids, k)
			}
		}
		if len(kids) > 0 {
			return Step{Op: "write", Obj: pick(r, kids)}
		}
	}
	if w, ok := earlier(r, prev, "watch"); ok && r.Intn(6) == 0 {
		// A watched file, or a file child of a watched directory,
		// unlinked while open (IN_EXCL_UNLINK, the parent's view of an
		// unlinked child, FS_DELETE_SELF at the last close).
		var files []string
		for _, k := range append([]string{w.Obj}, children[w.Obj]...) {
			if exists[k] && !isDirName[k] && k != fifoName {
				files = append(files, k)
			}
		}
		if len(files) > 0 {
			st := Step{Op: "unlinkrw", Obj: pick(r, files)}
			delete(exists, st.Obj)
			return st
		}
	}
	if w, ok := earlier(r, prev, "watch", "mark"); ok && w.Mask&unix.IN_MOVE_SELF != 0 && w.Obj != "." && exists[w.Obj] && r.Intn(3) == 0 {
		// A rename of an object watched (or marked) for its own move
		// (IN_MOVE_SELF = FAN_MOVE_SELF): FS_MOVE_SELF on the inode.
		to := map[string]string{"f": "s/n", "g": "s/h", "n": "s/n", "s/h": "g", "s/n": "n", "s": "e", "e": "s", "s/e": "e"}[w.Obj]
		if to != "" && (!exists[to] || !isDirName[to]) && exists[parentName(to)] {
			delete(exists, w.Obj)
			exists[to] = true
			return Step{Op: "rename", Obj: w.Obj, To: to}
		}
	}
	if exists[fifoName] && r.Intn(8) == 0 {
		obj = fifoName // the FIFO: its events as a regular file's (model.World.hooks)
	}
	if obj == fifoName {
		st := Step{Op: pick(r, []string{"fifo", "fifo", "fifo", "chmod", "unlink"}), Obj: obj}
		if st.Op == "unlink" {
			delete(exists, obj)
		}
		return st
	}
	st := Step{Obj: obj}
	if r.Intn(3) == 0 {
		// Change the tree: make a new name, or remove one.
		switch x := r.Intn(8); {
		case x < 2 && len(absentFiles) > 0:
			st = Step{Op: "create", Obj: pick(r, absentFiles)}
		case x < 3 && len(absentDirs) > 0:
			st = Step{Op: "mkdir", Obj: pick(r, absentDirs)}
		case x < 5 && obj != ".":
			// Renames keep to one kind (file names to file names, directory
			// names to directory names), moving across directories too.
			st.Op = "rename"
			if isDirName[obj] {
				st.To = pick(r, []string{"e", "s/e", "s"})
			} else {
				st.To = pick(r, []string{"f", "g", "n", "s/h", "s/n"})
				// Most often across directories: into or out of a watched one.
				if parentName(st.To) == parentName(obj) && r.Intn(3) > 0 {
					st.To = map[string]string{"f": "s/n", "g": "s/h", "n": "s/n", "s/h": "g", "s/n": "n"}[st.To]
				}
			}
			if st.To == obj || strings.HasPrefix(st.To, obj+"/") {
				st = Step{Op: "opendir", Obj: "."}
			}
		case x < 7 && !isDirName[obj]:
			st.Op = "unlink"
			if r.Intn(2) == 0 {
				// Unlinked while open, then read, written and closed:
				// the child's events after the unlink (IN_EXCL_UNLINK,
				// the parent still notified, FS_DELETE_SELF at close).
				st.Op = "unlinkrw"
			}
		case obj != "." && isDirName[obj]:
			st.Op = "rmdir"
		}
	}
	if st.Op == "" {
		switch {
		case isDirName[obj] && r.Intn(4) == 0:
			st.Op = "chmod"
		case isDirName[obj]:
			st.Op = "opendir"
		default:
			st.Op = pick(r, []string{"read", "read", "write", "write", "chmod"})
		}
	}
	ok := exists[parentName(st.Obj)]
	switch st.Op {
	case "create", "mkdir":
		exists[st.Obj] = ok
	case "unlink", "unlinkrw":
		delete(exists, st.Obj)
	case "rename":
		if exists[st.Obj] && exists[parentName(st.To)] {
			delete(exists, st.Obj)
			exists[st.To] = true
		}
	case "rmdir":
		empty := true
		for n := range exists {
			if parentName(n) == st.Obj {
				empty = false
			}
		}
		if empty {
			delete(exists, st.Obj)
		}
	}
	return st
}

func parentName(n string) string {
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		return n[:i]
	}
	return "."
}

func genMark(r *rand.Rand, g int, kind string, prev []Step) Step {
	fid := kind == "fid" || kind == "dfid_name"
	if r.Intn(5) == 0 {
		return genRemove(r, g, prev)
	}
	st := Step{Op: "mark", Group: g, Flags: unix.FAN_MARK_ADD}
	switch x := r.Intn(10); {
	case x < 6:
		st.Obj = markObject(r)
	case x < 8:
		st.Flags |= unix.FAN_MARK_MOUNT
	default:
		st.Flags |= unix.FAN_MARK_FILESYSTEM
	}
	st.Mask = pick(r, fanEvents)
	if r.Intn(3) == 0 {
		st.Mask |= pick(r, fanEvents)
	}
	if ((kind == "content" || kind == "pre_content") && r.Intn(5) < 2) || r.Intn(40) == 0 {
		// Permission events (a content group answers them: the runner allows).
		st.Mask |= pick(r, []uint32{unix.FAN_OPEN_PERM, unix.FAN_OPEN_PERM, unix.FAN_ACCESS_PERM})
	}
	if (fid && r.Intn(5) < 2) || r.Intn(40) == 0 {
		st.Mask |= pick(r, fidEvents)
		if isDirName[st.Obj] || st.Flags&unix.FAN_MARK_FILESYSTEM != 0 {
			st.Mask |= unix.FAN_CREATE | unix.FAN_DELETE | unix.FAN_MOVE
		}
	}
	switch x := r.Intn(20); {
	case x < 7:
	case x < 11:
		st.Flags |= unix.FAN_MARK_IGNORED_MASK
	case x < 14:
		st.Flags |= unix.FAN_MARK_IGNORED_MASK | unix.FAN_MARK_IGNORED_SURV_MODIFY
	case x < 18:
		st.Flags |= unix.FAN_MARK_IGNORE | unix.FAN_MARK_IGNORED_SURV_MODIFY
	default:
		st.Flags |= unix.FAN_MARK_IGNORE
	}
	if st.Flags&(unix.FAN_MARK_IGNORED_MASK|unix.FAN_MARK_IGNORE) != 0 && r.Intn(3) > 0 {
		// An ignore mask, most often on a directory (a parent of the
		// objects acted on), ignoring what an earlier mark reports.
		st.Obj, st.Flags = pick(r, []string{".", ".", "s", "s", "f", "s/h"}), st.Flags&^(unix.FAN_MARK_MOUNT|unix.FAN_MARK_FILESYSTEM)
		if p, ok := earlier(r, prev, "mark"); ok && p.Mask&^(unix.FAN_ONDIR|unix.FAN_EVENT_ON_CHILD) != 0 {
			st.Mask = p.Mask &^ (unix.FAN_ONDIR | unix.FAN_EVENT_ON_CHILD)
		}
	}
	if p, ok := ignoredDir(r, prev, g); ok && st.Flags&(unix.FAN_MARK_IGNORED_MASK|unix.FAN_MARK_IGNORE) == 0 && r.Intn(3) == 0 {
		st.Obj, st.Flags = p.Obj, unix.FAN_MARK_ADD
		st.Mask = p.Mask&^(unix.FAN_ONDIR|unix.FAN_EVENT_ON_CHILD) | unix.FAN_EVENT_ON_CHILD
	}
	if r.Intn(20) == 0 {
		st.Flags |= unix.FAN_MARK_EVICTABLE
	}
	if r.Intn(25) == 0 {
		st.Flags |= unix.FAN_MARK_ONLYDIR
	}
	if r.Intn(5) < 2 {
		st.Mask |= unix.FAN_ONDIR
	}
	if r.Intn(5) < 2 {
		st.Mask |= unix.FAN_EVENT_ON_CHILD
	}
	return st
}

// genRemove draws a FAN_MARK_REMOVE, most often of what an earlier step added.
func genRemove(r *rand.Rand, g int, prev []Step) Step {
	st := Step{Op: "mark", Group: g, Flags: unix.FAN_MARK_REMOVE, Obj: markObject(r), Mask: pick(r, fanEvents)}
	if p, ok := earlier(r, prev, "mark"); ok && r.Intn(10) < 7 {
		st.Obj, st.Mask = p.Obj, p.Mask&^(unix.FAN_ONDIR|unix.FAN_EVENT_ON_CHILD)
		st.Flags |= p.Flags & (unix.FAN_MARK_IGNORED_MASK | unix.FAN_MARK_MOUNT | unix.FAN_MARK_FILESYSTEM)
		if st.Mask == 0 {
			st.Mask = unix.FAN_OPEN
		}
	}
	if r.Intn(4) == 0 {
		st.Flags |= unix.FAN_MARK_IGNORED_MASK
	}
	return st
}

func genWatch(r *rand.Rand, g int, prev []Step) Step {
	st := Step{Op: "watch", Group: g, Obj: markObject(r)}
	if r.Intn(6) == 0 {
		st.Op = "rmwatch"
		if p, ok := earlier(r, prev, "watch"); ok {
			st.Obj = p.Obj
		}
		return st
	}
	if p, ok := earlier(r, prev, "watch", "mark"); ok && p.Obj != "" {
		switch r.Intn(6) {
		case 0, 1:
			st.Obj = p.Obj
		case 2, 3: // the parent or a child of a watched object: both see its events
			if kids := children[p.Obj]; len(kids) > 0 {
				st.Obj = pick(r, kids)
			} else {
				st.Obj = parentName(p.Obj)
			}
		}
	}
	st.Mask = pick(r, inEvents)
	if r.Intn(3) == 0 {
		st.Mask |= pick(r, inEvents)
	}
	if r.Intn(4) == 0 {
		st.Mask |= unix.IN_MOVE_SELF | unix.IN_DELETE_SELF
	}
	if r.Intn(3) == 0 {
		st.Mask |= unix.IN_MASK_ADD
	}
	if r.Intn(6) == 0 {
		st.Mask |= unix.IN_ONESHOT
	}
	if r.Intn(25) == 0 {
		st.Mask |= unix.IN_ONLYDIR
	}
	var own []Step
	for _, p := range prev {
		if p.Op == "watch" && p.Group == g {
			own = append(own, p)
		}
	}
	if len(own) > 0 && r.Intn(3) == 0 {
		// The parent or a child of this instance's own watch, for the
		// same events: both watches see the child's events.
		p := pick(r, own)
		if kids := children[p.Obj]; len(kids) > 0 {
			st.Obj = pick(r, kids)
		} else {
			st.Obj = parentName(p.Obj)
		}
		st.Mask = p.Mask &^ (unix.IN_MASK_ADD | unix.IN_ONESHOT)
	}
	if p, ok := ignoredDir(r, prev, g); ok && r.Intn(2) == 0 {
		st.Obj, st.Mask = p.Obj, p.Mask&(unix.IN_OPEN|unix.IN_ACCESS|unix.IN_MODIFY|unix.IN_CLOSE)
		if st.Mask == 0 {
			st.Mask = unix.IN_OPEN
		}
	}
	if r.Intn(4) == 0 {
		st.Mask |= unix.IN_EXCL_UNLINK
	}
	return st
}
