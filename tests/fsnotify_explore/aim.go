package main

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// Directed scenarios. The undirected draw reaches most of the model's
// rules within a few seeds, but some only rarely, and one never (counted
// over seeds 1..2000 with every group kind, before these aims: the number
// of scenarios that applied the rule, and the first seed that did):
//
//	RuleIgnoreOpenForWrite  0  never: every operation of the actor opened
//	                           and closed its file within its step, so no
//	                           mark call met a file open for write
//	RuleInotifyExclUnlink  15  seed  99: an IN_EXCL_UNLINK watch and a later
//	                           unlinkrw of its object or a child, for an
//	                           event the watch asks for
//	RuleDFIDNoDir          16  seed 179: a DFID_NAME group, a mark for a
//	                           self event of a file (FAN_ATTRIB,
//	                           FAN_DELETE_SELF, FAN_MOVE_SELF), then that
//	                           file's unlink or rename
//	RuleInotifyOneshot     19  seed  41: an IN_ONESHOT watch, then an event
//	                           it asks for
//	RuleInotifyCoalesce    31  seed  32: two identical events in a row in
//	                           one instance (unlinkrw's two writes, watched)
//
// So every aimEvery-th seed is directed at one of these rules in turn
// (aimOf): its scenario is the one the seed draws anyway, with one more
// group, the aim's, and a prelude of that group's calls and the actor's
// operations put first, which applies the rule in the model. The prelude
// leaves the tree as it found it (a file it removes is one it created,
// "n" or "s/n"), and the other groups have no mark yet while it runs, so
// the drawn steps meet the same tree and give their groups what they gave
// them undirected; the aim's group then sees them too, with what the rule
// left behind (an ignore mask that is not there, a watch that is gone).
// A seed is still a scenario: the aim and the prelude are functions of
// the seed (and of the group kinds the kernel offers), never of what a run
// reached, so -seed N -n 1, -record and the regressions rows replay it.
type aim struct {
	rule string // the model rule (model.Rules) the prelude applies
	// kinds: the group kinds the aim's group may take; none of them
	// offered here: the seed is not directed.
	kinds []string
	// prelude returns the prelude's steps, g being the aim's group.
	prelude func(r *rand.Rand, g int) []Step
}

// aimEvery: one seed in aimEvery is directed.
const aimEvery = 4

// aims are the directed families, one per rarely reached rule.
var aims = []aim{
	{rule: model.RuleIgnoreOpenForWrite, kinds: []string{"notif", "fid", "content", "dfid_name", "pre_content"}, prelude: preludeOpenForWrite},
	{rule: model.RuleInotifyExclUnlink, kinds: []string{"inotify"}, prelude: preludeExclUnlink},
	{rule: model.RuleDFIDNoDir, kinds: []string{"dfid_name"}, prelude: preludeDFIDNoDir},
	{rule: model.RuleInotifyOneshot, kinds: []string{"inotify"}, prelude: preludeOneshot},
	{rule: model.RuleInotifyCoalesce, kinds: []string{"inotify"}, prelude: preludeCoalesce},
}

// aimOf returns the aim of a seed, given the group kinds on offer, and
// the kind of the aim's group; nil when the seed is not directed (or none
// of its aim's kinds is offered).
func aimOf(seed int64, kinds []string) (*aim, string) {
	if seed%aimEvery != 0 {
		return nil, ""
	}
	n := int64(len(aims))
	a := &aims[((seed/aimEvery)%n+n)%n]
	var offered []string
	for _, k := range a.kinds {
		if slices.Contains(kinds, k) {
			offered = append(offered, k)
		}
	}
	if len(offered) == 0 {
		return nil, ""
	}
	return a, offered[int(((seed/aimEvery/n)%int64(len(offered))+int64(len(offered)))%int64(len(offered)))]
}

// direct makes s, a seed's undirected scenario, directed at a: the aim's
// group of kind is added last, and the prelude put before the steps. Its
// own random choices come from a source of their own (preludeSource), so
// the drawn part stays what the seed drew.
func direct(s *Scenario, a *aim, kind string) {
	g := len(s.Groups)
	s.Aim = a.rule
	s.Groups = append(s.Groups, kind)
	s.Steps = append(a.prelude(rand.New(rand.NewSource(preludeSource(s.Seed))), g), s.Steps...)
}

// preludeSource is the seed of a prelude's own random choices.
func preludeSource(seed int64) int64 { return seed ^ 0x5eed_a1f0 }

// aimsOutOfReach returns the directed rules no offered group kind can aim
// at, with the kinds that could.
func aimsOutOfReach(kinds []string) map[string][]string {
	out := map[string][]string{}
	for _, a := range aims {
		if !slices.ContainsFunc(a.kinds, func(k string) bool { return slices.Contains(kinds, k) }) {
			out[a.rule] = a.kinds
		}
	}
	return out
}

// scratch returns a new file's name in dir ("." or "s"), which a prelude
// creates and removes again.
func scratch(dir string) string { return map[string]string{".": "n", "s": "s/n"}[dir] }

// preludeOpenForWrite: group g marks what a write reports (a mount,
// filesystem or directory mark, or the file's own), then adds a
// non-surviving ignore mask for it to a file the actor holds open for
// write (markw): fanotify_add_inode_mark on 6.1, do_fanotify_mark on 7.3,
// add nothing while inode_is_open_for_write, and the call returns 0; so
// the close in the same step, and the next operation, are still reported.
// Half the time the same ignore mask is then added with
// FAN_MARK_IGNORED_SURV_MODIFY, which does go in while the file is open
// for write and hides the close of its own step.
func preludeOpenForWrite(r *rand.Rand, g int) []Step {
	file := pick(r, []string{"f", "g", "s/h"})
	report := Step{Op: "mark", Group: g, Flags: unix.FAN_MARK_ADD, Mask: unix.FAN_OPEN | unix.FAN_MODIFY | unix.FAN_CLOSE_WRITE}
	switch r.Intn(4) {
	case 0:
		report.Flags |= unix.FAN_MARK_MOUNT
	case 1:
		report.Flags |= unix.FAN_MARK_FILESYSTEM
	case 2:
		report.Obj, report.Mask = parentName(file), report.Mask|unix.FAN_EVENT_ON_CHILD
	default:
		report.Obj = file
	}
	ignored := pick(r, []uint32{unix.FAN_CLOSE_WRITE, unix.FAN_CLOSE_WRITE | unix.FAN_MODIFY, unix.FAN_OPEN | unix.FAN_CLOSE_WRITE | unix.FAN_MODIFY})
	// FAN_MARK_IGNORE without SURV_MODIFY is allowed on a non-directory
	// only (do_fanotify_mark); the legacy flavour anywhere.
	flavour := pick(r, []uint{unix.FAN_MARK_IGNORED_MASK, unix.FAN_MARK_IGNORE})
	out := []Step{report, {Op: "markw", Group: g, Flags: unix.FAN_MARK_ADD | flavour, Mask: ignored, Obj: file}}
	if r.Intn(2) == 0 {
		out = append(out, Step{Op: "markw", Group: g, Flags: unix.FAN_MARK_ADD | flavour | unix.FAN_MARK_IGNORED_SURV_MODIFY, Mask: ignored, Obj: file})
	}
	return append(out, Step{Op: pick(r, []string{"write", "read"}), Obj: file})
}

// preludeExclUnlink: an IN_EXCL_UNLINK watch on a directory for what an
// open file does (sometimes also one on the file, with or without the
// flag), then a new file in it unlinked while open and used (unlinkrw):
// the events after the unlink are dropped for the IN_EXCL_UNLINK watches
// (fsnotify_handle_inode_event; inotify(7) IN_EXCL_UNLINK), not for the
// others.
func preludeExclUnlink(r *rand.Rand, g int) []Step {
	dir := pick(r, []string{".", "s"})
	file := scratch(dir)
	out := []Step{
		{Op: "watch", Group: g, Obj: dir, Mask: unix.IN_EXCL_UNLINK | unix.IN_MODIFY | pick(r, []uint32{0, unix.IN_CLOSE_WRITE, unix.IN_OPEN | unix.IN_DELETE})},
		{Op: "create", Obj: file},
	}
	if r.Intn(2) == 0 {
		m := uint32(unix.IN_MODIFY | unix.IN_CLOSE_WRITE)
		if r.Intn(2) == 0 {
			m |= unix.IN_EXCL_UNLINK
		}
		out = append(out, Step{Op: "watch", Group: g, Obj: file, Mask: m})
	}
	return append(out, Step{Op: "unlinkrw", Obj: file})
}

// preludeDFIDNoDir: a FAN_REPORT_DFID_NAME group marks a new file (or the
// filesystem) for its self events, then the file is unlinked (the link
// count FAN_ATTRIB and FAN_DELETE_SELF, both fsnotify_inode), or renamed
// (FAN_MOVE_SELF) and then unlinked: with no directory to report, the group
// gets no event for them (fanotify_group_event_mask: "Do we have a
// directory inode to report?").
func preludeDFIDNoDir(r *rand.Rand, g int) []Step {
	file := scratch(pick(r, []string{".", "s"}))
	mark := Step{Op: "mark", Group: g, Flags: unix.FAN_MARK_ADD, Obj: file,
		Mask: unix.FAN_ATTRIB | unix.FAN_DELETE_SELF | unix.FAN_MOVE_SELF | pick(r, []uint32{0, unix.FAN_OPEN, unix.FAN_MODIFY})}
	if r.Intn(3) == 0 {
		mark.Flags, mark.Obj = mark.Flags|unix.FAN_MARK_FILESYSTEM, ""
	}
	out := []Step{{Op: "create", Obj: file}, mark}
	switch r.Intn(3) {
	case 0:
		return append(out, Step{Op: "unlink", Obj: file})
	case 1:
		return append(out, Step{Op: "unlinkrw", Obj: file})
	}
	to := scratch(map[string]string{"n": "s", "s/n": "."}[file])
	return append(out, Step{Op: "rename", Obj: file, To: to}, Step{Op: "unlink", Obj: to})
}

// preludeOneshot: an IN_ONESHOT watch, then an operation that sends it an
// event it asks for (an open of the object, or of a child of a watched
// directory): the watch reports it and IN_IGNORED, and is gone
// (inotify_handle_inode_event; inotify(7) IN_ONESHOT); later steps meet no
// watch there.
func preludeOneshot(r *rand.Rand, g int) []Step {
	obj := pick(r, []string{".", "s", "f", "s/h"})
	st := Step{Op: "watch", Group: g, Obj: obj, Mask: unix.IN_ONESHOT | unix.IN_OPEN | pick(r, []uint32{0, unix.IN_CLOSE_NOWRITE, unix.IN_ACCESS | unix.IN_MODIFY})}
	if r.Intn(3) == 0 {
		st.Mask |= unix.IN_MASK_ADD
	}
	act := Step{Op: "read", Obj: obj}
	if isDirName[obj] {
		act.Op = "opendir"
		if r.Intn(2) == 0 {
			// a child's open: the directory watch's event, with its name
			act = Step{Op: "read", Obj: pick(r, children[obj][:1])}
		}
	}
	return []Step{st, act}
}

// preludeCoalesce: a watch for IN_MODIFY on a new file or on its
// directory, then the file unlinked while open and written twice
// (unlinkrw): the two identical IN_MODIFY events follow each other in the
// instance's queue, and the second is coalesced into the first
// (inotify_merge; inotify(7): "If successive output inotify events ... are
// identical ... they are coalesced").
func preludeCoalesce(r *rand.Rand, g int) []Step {
	dir := pick(r, []string{".", "s"})
	file := scratch(dir)
	watch := Step{Op: "watch", Group: g, Obj: dir, Mask: unix.IN_MODIFY | pick(r, []uint32{0, unix.IN_CLOSE_WRITE, unix.IN_ACCESS})}
	if r.Intn(2) == 0 {
		watch.Obj = file
		return []Step{{Op: "create", Obj: file}, watch, {Op: "unlinkrw", Obj: file}}
	}
	return []Step{watch, {Op: "create", Obj: file}, {Op: "unlinkrw", Obj: file}}
}

// ruleFeatures are the model rules only scenarios with a mark flag a
// kernel may lack apply: a scenario with the flag is not run there
// (unsupported).
var ruleFeatures = []struct {
	rule string
	f    *feature.Feature
}{
	{model.RuleErrEvictableType, feature.MarkEvictable},
	{model.RuleIgnoreFlags, feature.MarkIgnore},
	{model.RuleErrIgnoreNotDir, feature.MarkIgnore},
	{model.RuleErrIgnoreNeedsSurv, feature.MarkIgnore},
}

// outOfReach returns the model rules no scenario can apply here, with why:
// a group kind or a mark flag this kernel and filesystem lack.
func outOfReach(kinds []string) map[string]string {
	out := map[string]string{}
	for r, ks := range aimsOutOfReach(kinds) {
		out[r] = "needs a " + strings.Join(ks, " or ") + " group"
	}
	if !slices.Contains(kinds, "content") && !slices.Contains(kinds, "pre_content") {
		out[model.RulePermClassOrder] = "needs a content or pre_content group"
	}
	for _, rf := range ruleFeatures {
		if err := rf.f.Check(); err != nil && feature.IsSkip(err) {
			out[rf.rule] = err.Error()
		}
	}
	return out
}

// missedWithin lists the rules within reach (not in away) cov never saw.
func missedWithin(cov *model.Coverage, away map[string]string) []string {
	var out []string
	for _, r := range cov.Missed() {
		if _, ok := away[r]; !ok {
			out = append(out, r)
		}
	}
	return out
}

// reachedAway counts the rules of away that cov saw all the same.
func reachedAway(cov *model.Coverage, away map[string]string) int {
	n := len(away)
	for _, r := range cov.Missed() {
		if _, ok := away[r]; ok {
			n--
		}
	}
	return n
}

// rulesLine is the TAP note on rule coverage: "rules reached 44/44", then
// the rules not reached, by name, and those out of reach here, with why.
func rulesLine(cov *model.Coverage, away map[string]string) string {
	rules, _ := cov.Counts()
	line := fmt.Sprintf("rules reached %d/%d", rules, len(model.Rules))
	if missed := missedWithin(cov, away); len(missed) > 0 {
		line += "; not reached: " + quoteAll(missed)
	}
	var far []string
	for _, r := range model.Rules {
		if why, ok := away[r]; ok && slices.Contains(cov.Missed(), r) {
			far = append(far, fmt.Sprintf("%q (%s)", r, why))
		}
	}
	if len(far) > 0 {
		line += fmt.Sprintf("; out of reach here (%d): %s", len(far), strings.Join(far, "; "))
	}
	return line
}

// quoteAll quotes each rule name and joins them.
func quoteAll(rules []string) string {
	q := make([]string, len(rules))
	for i, r := range rules {
		q[i] = strconv.Quote(r)
	}
	return strings.Join(q, ", ")
}
