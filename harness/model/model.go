// Package model is the oracle of fanotify_ignore,
// fanotify_modify_clear and the scenario explorer (World): a model of how the
// kernel merges marks and ignore masks, written from fanotify_mark(2) and from
// the fs/notify source, never from a run's output. Every generated case takes
// its expected result from Kernel.Deliver; the API cases take their errno
// from MarkAdd.
//
// Sources (Linux 6.x; names of functions, not line numbers, since they move):
//   - fanotify_mark(2), FAN_MARK_IGNORED_MASK / FAN_MARK_IGNORE /
//     FAN_MARK_IGNORED_SURV_MODIFY / FAN_ONDIR / FAN_EVENT_ON_CHILD.
//   - fs/notify/fanotify/fanotify_user.c do_fanotify_mark(),
//     fanotify_events_supported(), fanotify_add_inode_mark(),
//     fanotify_may_update_existing_mark(), fanotify_mark_update_flags().
//   - include/linux/fsnotify_backend.h fsnotify_calc_mask(),
//     fsnotify_ignore_mask(), fsnotify_effective_ignore_mask(),
//     fsnotify_mask_applicable(), fsnotify_inode_watches_children().
//   - fs/notify/fsnotify.c __fsnotify_parent(), fsnotify(), send_to_group().
//   - fs/notify/fanotify/fanotify.c fanotify_group_event_mask().
//
// The model is the current kernel's (with 4f0b903ded72, e730558adffb and
// 635bc4def026, the last of which keeps a special file's read and write
// events from its parent: World.deliver). A fault that is the rule of a
// kernel without one of these fixes is listed in FaultFixes, so that a
// mismatch it explains names the missing commit.
package model

import (
	"golang.org/x/sys/unix"
)

// Event bits (FS_* in the kernel have the same values as FAN_*).
const (
	fsISDIR      = unix.FAN_ONDIR          // FS_ISDIR
	fsOnChild    = unix.FAN_EVENT_ON_CHILD // FS_EVENT_ON_CHILD
	fsEventFlags = fsISDIR | fsOnChild     // FANOTIFY_EVENT_FLAGS
	fsModify     = unix.FAN_MODIFY
	// direntEvents is ALL_FSNOTIFY_DIRENT_EVENTS (FANOTIFY_DIRENT_EVENTS).
	direntEvents = unix.FAN_CREATE | unix.FAN_DELETE | unix.FAN_MOVED_FROM | unix.FAN_MOVED_TO | unix.FAN_RENAME
	// allEvents is ALL_FSNOTIFY_EVENTS restricted to what this suite uses:
	// the event bits of a mask, without the two event flags.
	allEvents = 0x00ffffff | unix.FAN_OPEN_PERM | unix.FAN_ACCESS_PERM | unix.FAN_OPEN_EXEC_PERM
	// possOnChild is FS_EVENTS_POSS_ON_CHILD (include/linux/fsnotify_backend.h)
	// for the events this suite generates.
	possOnChild = unix.FAN_ACCESS | unix.FAN_MODIFY | unix.FAN_ATTRIB | unix.FAN_CLOSE_WRITE |
		unix.FAN_CLOSE_NOWRITE | unix.FAN_OPEN | unix.FAN_OPEN_EXEC |
		unix.FAN_OPEN_PERM | unix.FAN_ACCESS_PERM | unix.FAN_OPEN_EXEC_PERM
)

// Loc is where a mark is attached, relative to the object an event happens on.
type Loc int

// The four places a mark can be. The string forms are used in case names.
const (
	LocSelf   Loc = iota // inode mark on the object itself (FSNOTIFY_ITER_TYPE_INODE)
	LocParent            // inode mark on the object's parent directory (FSNOTIFY_ITER_TYPE_PARENT)
	LocMount             // FAN_MARK_MOUNT (FSNOTIFY_ITER_TYPE_VFSMOUNT)
	LocFS                // FAN_MARK_FILESYSTEM (FSNOTIFY_ITER_TYPE_SB)
)

var locNames = [...]string{"self", "parent", "mount", "fs"}

func (l Loc) String() string { return locNames[l] }

// markFlags returns the fanotify_mark(2) type flag of a location.
func (l Loc) MarkFlags() uint {
	switch l {
	case LocMount:
		return unix.FAN_MARK_MOUNT
	case LocFS:
		return unix.FAN_MARK_FILESYSTEM
	}
	return 0 // FAN_MARK_INODE
}

// mark is the kernel's struct fsnotify_mark as far as this suite cares.
type Mark struct {
	Group       int // index of the group in the case
	Loc         Loc
	Mask        uint32 // mark->mask
	Ignore      uint32 // mark->ignore_mask
	IgnoreFlags bool   // FSNOTIFY_MARK_FLAG_HAS_IGNORE_FLAGS (FAN_MARK_IGNORE was used)
	Surv        bool   // FSNOTIFY_MARK_FLAG_IGNORED_SURV_MODIFY
	Evictable   bool   // FSNOTIFY_MARK_FLAG_NO_IREF

	// Used by World (the scenario model) only.
	Obj     string // the tree object of an inode mark ("" for mount/sb marks)
	Inotify bool   // an inotify watch (its Mask has FS_EVENT_ON_CHILD on a dir)
	Wd      int32  // the inotify watch descriptor
	Oneshot bool   // IN_ONESHOT (FSNOTIFY_MARK_FLAG_IN_ONESHOT)
	// ExclUnlink: IN_EXCL_UNLINK (FSNOTIFY_MARK_FLAG_EXCL_UNLINK).
	ExclUnlink bool
}

// MFlags is what fdinfo prints as mflags: fanotify_mark_user_flags()
// (fs/notify/fanotify/fanotify.h) maps the internal flags back to
// FAN_MARK_IGNORED_SURV_MODIFY, FAN_MARK_EVICTABLE and FAN_MARK_IGNORE.
func (m *Mark) MFlags() uint64 {
	var f uint64
	if m.Surv {
		f |= unix.FAN_MARK_IGNORED_SURV_MODIFY
	}
	if m.Evictable {
		f |= unix.FAN_MARK_EVICTABLE
	}
	if m.IgnoreFlags {
		f |= unix.FAN_MARK_IGNORE
	}
	return f
}

// target describes the object a fanotify_mark(2) call names.
type Target struct {
	Loc   Loc
	IsDir bool // the inode is a directory (inode marks only)
	// OpenForWrite: some task has the inode open for write
	// (fanotify_add_inode_mark: a non-surviving ignore mask is then silently not added).
	OpenForWrite bool
}

// MarkAdd applies one fanotify_mark(FAN_MARK_ADD|flags, mask) call of a group
// to the model, the way do_fanotify_mark() and fanotify_add_mark() do, and
// returns the errno the call must fail with (0 for success). m is the group's
// existing mark on that object, nil when there is none; the returned mark is
// the mark after the call (nil when none exists).
func MarkAdd(m *Mark, group int, flags uint, mask uint32, tg Target, dirFID bool) (*Mark, unix.Errno) {
	return Fixed.MarkAdd(m, group, flags, mask, tg, dirFID)
}

// MarkAdd is the package-level MarkAdd under this kernel (its fault, its coverage).
func (k Kernel) MarkAdd(m *Mark, group int, flags uint, mask uint32, tg Target, dirFID bool) (*Mark, unix.Errno) {
	ignore := flags & (unix.FAN_MARK_IGNORED_MASK | unix.FAN_MARK_IGNORE)
	// do_fanotify_mark: "We don't allow FAN_MARK_IGNORE & FAN_MARK_IGNORED_MASK together".
	if ignore == unix.FAN_MARK_IGNORED_MASK|unix.FAN_MARK_IGNORE {
		return m, unix.EINVAL
	}
	// do_fanotify_mark: "Event flags (FAN_ONDIR, FAN_EVENT_ON_CHILD) have no
	// effect with FAN_MARK_IGNORED_MASK": they are dropped.
	if ignore == unix.FAN_MARK_IGNORED_MASK {
		mask &^= fsEventFlags
	}
	// do_fanotify_mark: evictable is only for inode marks (EINVAL).
	if flags&unix.FAN_MARK_EVICTABLE != 0 && tg.Loc != LocSelf && tg.Loc != LocParent && !k.faulty(FaultEvictableAnyType) {
		k.hit(RuleErrEvictableType)
		return m, unix.EINVAL
	}
	isInode := tg.Loc == LocSelf || tg.Loc == LocParent
	// fanotify_events_supported: with FAN_MARK_IGNORE (strict_dir_events),
	// dirent events and the event flags in the mask of a non-dir inode
	// (FANOTIFY_DIRONLY_EVENT_BITS): ENOTDIR (ceaf69f8eadc "fanotify: refine
	// the validation checks on non-dir inode mask", extended to
	// FAN_MARK_IGNORE when that came in 6.0).
	if ignore == unix.FAN_MARK_IGNORE && isInode && !tg.IsDir && mask&(fsEventFlags|direntEvents) != 0 {
		k.hit(RuleErrIgnoreNotDir)
		return m, unix.ENOTDIR
	}
	// do_fanotify_mark: "FAN_MARK_IGNORE requires SURV_MODIFY for
	// sb/mount/dir marks": EINVAL for mount/sb, EISDIR for a directory.
	if ignore == unix.FAN_MARK_IGNORE && flags&unix.FAN_MARK_IGNORED_SURV_MODIFY == 0 {
		if !isInode {
			k.hit(RuleErrIgnoreNeedsSurv)
			return m, unix.EINVAL
		}
		if tg.IsDir {
			k.hit(RuleErrIgnoreNeedsSurv)
			return m, unix.EISDIR
		}
	}
	// do_fanotify_mark: "Mask out FAN_EVENT_ON_CHILD flag for sb/mount/non-dir
	// marks"; a group reporting the parent fid registers for events with
	// parent/name info instead (not for ignore masks).
	if !isInode || !tg.IsDir {
		mask &^= fsOnChild
		if dirFID && ignore == 0 {
			mask |= fsOnChild
		}
	}
	// fanotify_add_inode_mark: a non-surviving ignore mask is not added while
	// the inode is open for write (the call still returns 0).
	if isInode && ignore != 0 && flags&unix.FAN_MARK_IGNORED_SURV_MODIFY == 0 && tg.OpenForWrite && !k.faulty(FaultIgnoreAddedOpenForWrite) {
		k.hit(RuleIgnoreOpenForWrite)
		return m, 0
	}
	orig := m
	if m == nil {
		// fanotify_add_new_mark: FAN_MARK_EVICTABLE creates a NO_IREF mark.
		m = &Mark{Group: group, Loc: tg.Loc, Evictable: flags&unix.FAN_MARK_EVICTABLE != 0}
	} else {
		cp := *m
		m = &cp
	}
	// fanotify_may_update_existing_mark (runs on new marks too, harmlessly).
	if flags&unix.FAN_MARK_EVICTABLE != 0 && !m.Evictable {
		k.hit(RuleErrExist)
		return orig, unix.EEXIST // non-evictable cannot be downgraded to evictable
	}
	if ignore == unix.FAN_MARK_IGNORED_MASK && m.IgnoreFlags {
		k.hit(RuleErrExist)
		return orig, unix.EEXIST // new ignore semantics cannot be downgraded to old
	}
	if ignore == unix.FAN_MARK_IGNORE && flags&unix.FAN_MARK_IGNORED_SURV_MODIFY == 0 && m.Surv {
		k.hit(RuleErrExist)
		return orig, unix.EEXIST // surviving ignore mask cannot be downgraded
	}
	// fanotify_mark_add_to_mask / fanotify_mark_update_flags.
	if ignore == 0 {
		m.Mask |= mask
	} else {
		m.Ignore |= mask
	}
	if ignore == unix.FAN_MARK_IGNORE {
		m.IgnoreFlags = true
	}
	if ignore != 0 && flags&unix.FAN_MARK_IGNORED_SURV_MODIFY != 0 {
		m.Surv = true
	}
	if isInode && flags&unix.FAN_MARK_EVICTABLE == 0 {
		m.Evictable = false // NO_IREF may be removed from a mark, never added
	}
	return m, 0
}

// Kernel selects which of the two fixes of the seed thread the model applies.
// The running kernel is expected to have both; a case whose result changes
// when one is turned off depends on it and names it (harness.Fix).
type Kernel struct {
	// ParentIgnoreFix: 4f0b903ded72 "fsnotify: fix merge with parent's
	// ignored mask": the object's interest mask includes the ignore mask.
	ParentIgnoreFix bool
	// ModifyOpt: 04e317ba72d0 "fsnotify: optimize FS_MODIFY events with no
	// ignored masks": a non-surviving ignore mask puts FS_MODIFY in the
	// object's interest mask, and fsnotify() no longer walks the marks of
	// every FS_MODIFY event.
	ModifyOpt bool
	// Fault, when not empty, names one rule of Faults that the model
	// deliberately gets wrong (the explorer's self-check of its power).
	Fault string
	// Cov, when set, records which rules the model applied (see Rules).
	Cov *Coverage
}

// Fixed is a kernel with both fixes: the one every case expects.
var Fixed = Kernel{ParentIgnoreFix: true, ModifyOpt: true}

// PreFix is a kernel that lacks one fix of the seed thread.
type PreFix struct {
	Kernel Kernel
	Fix    KernelFix
}

// PreFixes are the kernels without one of the two fixes. A case whose answer
// on one of them differs from Fixed's depends on its fix (harness.Case.Fix);
// a kernel that gives that kernel's answer may lack it (harness.T.KernelLacks).
var PreFixes = []PreFix{
	{Kernel{ParentIgnoreFix: false, ModifyOpt: true}, KernelFix{"4f0b903ded728c505850daf2914bfc08841f0ae6", "fsnotify: fix merge with parent's ignored mask"}},
	{Kernel{ParentIgnoreFix: true, ModifyOpt: false}, KernelFix{"04e317ba72d07901b03399b3d1525e83424df5b3", "fsnotify: optimize FS_MODIFY events with no ignored masks"}},
}

// faulty reports whether the named fault is switched on.
func (k Kernel) faulty(name string) bool { return k.Fault == name }

// hit records that rule id was applied.
func (k Kernel) hit(id string) {
	if k.Cov != nil {
		k.Cov.hit(id)
	}
}

// ignoredEvents is fsnotify_ignored_events(): the event bits of the ignore mask.
func ignoredEvents(m *Mark) uint32 { return m.Ignore & allEvents }

// CalcMask is fsnotify_calc_mask(): the mark's contribution to its object's
// interest mask (i_fsnotify_mask, mnt_fsnotify_mask, s_fsnotify_mask).
func (k Kernel) CalcMask(m *Mark) uint32 {
	mask := m.Mask
	if ignoredEvents(m) == 0 {
		return mask
	}
	// "Interest in FS_MODIFY may be needed for clearing ignore mask" (04e317ba72d0).
	if k.ModifyOpt && !m.Surv {
		mask |= fsModify
	}
	// "If mark is interested in ignoring events on children, the object must
	// show interest in those events for fsnotify_parent() to notice it" (4f0b903ded72).
	if k.ParentIgnoreFix && !k.faulty(FaultParentIgnoreNoInterest) {
		k.hit(RuleCalcMaskIgnore)
		mask |= m.Ignore
	}
	return mask
}

// ignoreMask is fsnotify_ignore_mask(): with FAN_MARK_IGNORE the event flags
// in the ignore mask decide; the legacy ignore mask always applies to
// directories and applies to children when the mark's own mask has
// FAN_EVENT_ON_CHILD.
func (k Kernel) ignoreMask(m *Mark) uint32 {
	im := m.Ignore
	if m.IgnoreFlags && !k.faulty(FaultIgnoreFlagAsLegacy) {
		k.hit(RuleIgnoreFlags)
		return im
	}
	k.hit(RuleIgnoreLegacy)
	if !k.faulty(FaultLegacyNotOnDir) {
		im |= fsISDIR
	}
	im &^= fsOnChild
	if k.faulty(FaultLegacyChildAlways) {
		return im | fsOnChild
	}
	im |= m.Mask & fsOnChild
	return im
}

// applicable is fsnotify_mask_applicable(): does a mask (or ignore mask) apply
// to an event on a directory / on a child reported to its watching parent?
func applicable(mask uint32, isDir, viaParent bool) bool {
	if isDir && mask&fsISDIR == 0 {
		return false
	}
	if viaParent && mask&fsOnChild == 0 {
		return false
	}
	return true
}

// effectiveIgnore is fsnotify_effective_ignore_mask().
func (k Kernel) effectiveIgnore(m *Mark, isDir, viaParent bool) uint32 {
	im := ignoredEvents(m)
	if im == 0 {
		return 0
	}
	if k.faulty(FaultIgnoreSameTypeOnly) && m.Loc != LocSelf && m.Loc != LocParent {
		return 0
	}
	if !isDir && !viaParent {
		return im
	}
	im = k.ignoreMask(m)
	if !applicable(im, isDir, viaParent) {
		k.hit(RuleIgnoreNotApplicable)
		return 0
	}
	return im & allEvents
}

// Deliver runs one event ev (a single event bit) on the object (a directory
// when isDir) through the model and returns, for each group index, the mask
// the group reports (0: no event). fid[g] says the group reports FIDs (then
// FAN_ONDIR is reported; fanotify_group_event_mask drops the event flags for
// fd groups). marks is updated in place: FS_MODIFY clears the non-surviving
// ignore masks of every mark it visits (send_to_group).
func (k Kernel) Deliver(marks []*Mark, ev uint32, isDir bool, fid map[int]bool) map[int]uint32 {
	return k.DeliverAs(marks, func(m *Mark) (Loc, bool) { return m.Loc, true }, ev, isDir, fid)
}

// visit is one mark that fsnotify() visits for an event, with the part it
// plays (FSNOTIFY_ITER_TYPE_*).
type visit struct {
	m    *Mark
	role Loc
}

// route is the part of __fsnotify_parent() and fsnotify() that decides which
// marks an event visits: it returns them per group, in group order of first
// appearance. Marks of every group (fanotify and inotify alike) make up the
// objects' interest masks, so one group's mark can make a parent visited for
// another.
func (k Kernel) route(marks []*Mark, role func(*Mark) (Loc, bool), ev uint32) (map[int][]visit, []int) {
	roles := map[*Mark]Loc{}
	var obj [4]uint32
	for _, m := range marks {
		r, ok := role(m)
		if !ok {
			continue
		}
		roles[m] = r
		obj[r] |= k.CalcMask(m)
	}
	// __fsnotify_parent: the parent is notified (and its marks visited, as
	// FSNOTIFY_ITER_TYPE_PARENT) only when it watches children
	// (fsnotify_inode_watches_children: FS_EVENT_ON_CHILD in its interest
	// mask) and is interested in this event ("parent_interested").
	pMask := obj[LocParent]
	parentVisited := pMask&fsOnChild != 0 && ev&pMask&possOnChild != 0
	if k.faulty(FaultPermSkipsParent) && ev&(unix.FAN_OPEN_PERM|unix.FAN_ACCESS_PERM) != 0 {
		parentVisited = false
	}
	if parentVisited {
		k.hit(RuleParentVisited)
	} else if pMask != 0 {
		k.hit(RuleParentNotVisited)
	}
	// fsnotify(): "return if none of the marks care about this type of
	// event"; before 04e317ba72d0 every FS_MODIFY went on to send_to_group.
	interest := obj[LocSelf] | obj[LocMount] | obj[LocFS]
	if parentVisited {
		interest |= pMask
	}
	if ev&interest == 0 && (k.ModifyOpt || ev != fsModify) {
		k.hit(RuleNoInterest)
		return nil, nil
	}
	groups := map[int][]visit{}
	var order []int
	for _, m := range marks {
		r, ok := roles[m]
		if !ok || (r == LocParent && !parentVisited) {
			continue
		}
		// fsnotify_iter_select_report_types: the parent watches children
		// and is interested, "But is *this mark* watching children?" A
		// parent mark with FS_EVENT_ON_CHILD neither in its mask nor in its
		// ignore mask is not reported to its group: it neither reports,
		// nor ignores, nor has its ignore mask cleared by FS_MODIFY
		// (e730558adffb "fsnotify: consistent behavior for parent not
		// watching children", extended to ignore masks in 6.0).
		if r == LocParent && !watchesChildren(m) && !k.visitsEveryParentMark() {
			k.hit(RuleParentMarkNotWatching)
			continue
		}
		if _, ok := groups[m.Group]; !ok {
			order = append(order, m.Group)
		}
		groups[m.Group] = append(groups[m.Group], visit{m, r})
	}
	return groups, order
}

// visitsEveryParentMark: the faults that get a parent mark without
// FS_EVENT_ON_CHILD wrong need it visited to show (as a kernel without
// e730558adffb visits it).
func (k Kernel) visitsEveryParentMark() bool {
	return k.faulty(FaultParentNotWatchingVisited) || k.faulty(FaultLegacyChildAlways) || k.faulty(FaultParentNeedsNoOnChild)
}

// watchesChildren: FS_EVENT_ON_CHILD in the mark's mask or in its
// fsnotify_ignore_mask() (a legacy ignore mask takes it from the mask).
func watchesChildren(m *Mark) bool {
	return m.Mask&fsOnChild != 0 || (m.IgnoreFlags && m.Ignore&fsOnChild != 0)
}

// clearOnModify is send_to_group's "clear ignored on inode modification":
// FS_MODIFY empties the non-surviving ignore mask of every mark it visits.
func (k Kernel) clearOnModify(vs []visit, ev uint32) {
	if ev != fsModify || k.faulty(FaultModifyNeverClears) {
		return
	}
	for _, v := range vs {
		if v.m.Ignore == 0 {
			continue
		}
		if !v.m.Surv || k.faulty(FaultModifyClearsSurv) {
			k.hit(RuleModifyClears)
			v.m.Ignore = 0
		} else {
			k.hit(RuleModifySurvives)
		}
	}
}

// fanotifyMask is send_to_group + fanotify_group_event_mask() for one
// fanotify group: the mask it reports (0: none).
func (k Kernel) fanotifyMask(vs []visit, ev uint32, isDir, fid bool) uint32 {
	k.clearOnModify(vs, ev)
	var marksMask, ignored uint32
	for _, v := range vs {
		viaParent := v.role == LocParent
		ignored |= k.effectiveIgnore(v.m, isDir, viaParent)
		if k.faulty(FaultOndirNotNeeded) && !viaParent {
			marksMask |= v.m.Mask
			continue
		}
		if k.faulty(FaultParentNeedsNoOnChild) && viaParent && applicable(v.m.Mask, isDir, false) {
			marksMask |= v.m.Mask
			continue
		}
		if !applicable(v.m.Mask, isDir, viaParent) {
			if isDir && v.m.Mask&fsISDIR == 0 {
				k.hit(RuleMarkNeedsOndir)
			} else {
				k.hit(RuleMarkNeedsOnChild)
			}
			continue
		}
		marksMask |= v.m.Mask
	}
	eventMask := ev
	if isDir {
		eventMask |= fsISDIR
	}
	if eventMask&marksMask&ignored != 0 {
		k.hit(RuleIgnored)
	}
	test := eventMask & marksMask &^ ignored
	if test&allEvents == 0 {
		return 0
	}
	k.hit(RuleReported)
	if fid && !k.faulty(FaultFIDDropsOndir) {
		return test &^ fsOnChild // FAN_EVENT_ON_CHILD is never reported
	}
	return test &^ fsEventFlags
}

// DeliverAs is Deliver for an event on another object than the one the
// marks' locations are named after: role gives, for each mark, the part it
// plays for this event (LocSelf: the object's own inode mark, LocParent: its
// parent's, LocMount, LocFS), or false when the mark is not on any object
// the event concerns (an inode mark on another file).
func (k Kernel) DeliverAs(marks []*Mark, role func(*Mark) (Loc, bool), ev uint32, isDir bool, fid map[int]bool) map[int]uint32 {
	groups, order := k.route(marks, role, ev)
	out := map[int]uint32{}
	for _, g := range order {
		if m := k.fanotifyMask(groups[g], ev, isDir, fid[g]); m != 0 {
			out[g] = m
		}
	}
	return out
}
