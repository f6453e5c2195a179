package model

import (
	"sort"
	"sync"
)

// The rules the model applies, by id, for the coverage figure: a run
// reports how many of them its scenarios exercised. Each id names the
// kernel function (or man page sentence) the rule comes from.
const (
	RuleCalcMaskIgnore        = "fsnotify_calc_mask: ignore mask in the object's interest (4f0b903ded72)"
	RuleIgnoreFlags           = "fsnotify_ignore_mask: FAN_MARK_IGNORE event flags decide"
	RuleIgnoreLegacy          = "fsnotify_ignore_mask: legacy ignore mask (dirs always, children with FAN_EVENT_ON_CHILD)"
	RuleIgnoreNotApplicable   = "fsnotify_effective_ignore_mask: ignore mask not applicable"
	RuleParentVisited         = "__fsnotify_parent: parent watches children and is interested"
	RuleParentNotVisited      = "__fsnotify_parent: parent marked but not visited"
	RuleNoInterest            = "fsnotify: no mark interested in the event"
	RuleModifyClears          = "send_to_group: FS_MODIFY clears a non-surviving ignore mask"
	RuleModifySurvives        = "send_to_group: FAN_MARK_IGNORED_SURV_MODIFY survives FS_MODIFY"
	RuleMarkNeedsOndir        = "fanotify_group_event_mask: mark without FAN_ONDIR skips a dir event"
	RuleMarkNeedsOnChild      = "fanotify_group_event_mask: parent mark without FAN_EVENT_ON_CHILD skips a child event"
	RuleIgnored               = "fanotify_group_event_mask: event ignored"
	RuleReported              = "fanotify_group_event_mask: event reported"
	RuleErrEvictableType      = "do_fanotify_mark: FAN_MARK_EVICTABLE on mount/sb is EINVAL"
	RuleErrIgnoreNotDir       = "fanotify_events_supported: FAN_MARK_IGNORE event flags on a non-dir is ENOTDIR"
	RuleErrIgnoreNeedsSurv    = "do_fanotify_mark: FAN_MARK_IGNORE needs SURV_MODIFY on dir/mount/sb"
	RuleIgnoreOpenForWrite    = "fanotify_add_inode_mark: non-surviving ignore mask not added while open for write"
	RuleErrExist              = "fanotify_may_update_existing_mark: EEXIST"
	RuleErrFidOnly            = "do_fanotify_mark: inode events need a FID group and no mount mark (EINVAL)"
	RuleErrNoMark             = "fanotify_remove_mark: ENOENT without a mark"
	RuleMarkDestroyed         = "fanotify_mark_remove_from_mask: mark destroyed when both masks are empty"
	RuleInotifyParent         = "fsnotify_handle_event: inotify parent watch gets the child's name"
	RuleInotifySelf           = "fsnotify_handle_event: inotify watch on the object itself"
	RuleInotifyMaskAdd        = "inotify_update_existing_watch: IN_MASK_ADD ors, else replaces"
	RuleInotifyOneshot        = "inotify_handle_inode_event: IN_ONESHOT destroys the watch (IN_IGNORED)"
	RuleInotifyRm             = "inotify_rm_watch: IN_IGNORED"
	RuleInotifyRmEinval       = "inotify_rm_watch: EINVAL for an unknown wd"
	RuleInotifyIsdir          = "inotify: IN_ISDIR on events of directories"
	RuleRename                = "fsnotify_move: FS_MOVED_FROM, FS_MOVED_TO, FS_MOVE_SELF"
	RuleRenameOverwrite       = "vfs_rename: an overwritten target gets FS_ATTRIB and FS_DELETE_SELF"
	RuleDirent                = "fsnotify_name: a dirent event on the directory with the entry's name"
	RuleDeleteSelf            = "fsnotify_inoderemove: FS_DELETE_SELF and the inode's marks go"
	RuleErrPermNotif          = "do_fanotify_mark: permission events in a FAN_CLASS_NOTIF group are EINVAL"
	RuleDFIDNoDir             = "fanotify_group_event_mask: a DIR_FID group without a directory to report gets no event"
	RuleErrOnlydir            = "FAN_MARK_ONLYDIR / IN_ONLYDIR on a non-directory is ENOTDIR"
	RuleParentMarkNotWatching = "fsnotify_iter_select_report_types: a parent mark not watching children is left out"
	RuleUnlinkedOpen          = "d_delete: an unlinked file held open gets FS_DELETE_SELF at the last dput, not at unlink"
	RuleInotifyExclUnlink     = "fsnotify_handle_inode_event: IN_EXCL_UNLINK drops events on an unlinked path"
	RuleInotifyCoalesce       = "inotify_merge: an event equal to the queue's tail is coalesced"
	RuleLink                  = "fsnotify_link: FS_ATTRIB on the inode (link count), FS_CREATE on the new directory"
	RulePermClassOrder        = "fsnotify_iter_select_report_types: permission events reach pre-content groups before content groups"
	RuleFifo                  = "vfs_read/vfs_write/do_dentry_open: a FIFO's open, read and write notify as a regular file's"
	RuleFanotifyRegDirOnly    = "fanotify_group_event_mask: an fd-reporting group gets no event on a file neither regular nor a directory"
	RuleSpecialNoParent       = "__fsnotify_parent: a special file's read/write FS_ACCESS/FS_MODIFY is no event on child (635bc4def026)"
)

// Rules lists every rule id, for the coverage denominator.
var Rules = []string{
	RuleCalcMaskIgnore, RuleIgnoreFlags, RuleIgnoreLegacy, RuleIgnoreNotApplicable,
	RuleParentVisited, RuleParentNotVisited, RuleNoInterest, RuleModifyClears,
	RuleModifySurvives, RuleMarkNeedsOndir, RuleMarkNeedsOnChild, RuleIgnored,
	RuleReported, RuleErrEvictableType, RuleErrIgnoreNotDir, RuleErrIgnoreNeedsSurv,
	RuleIgnoreOpenForWrite, RuleErrExist, RuleErrFidOnly, RuleErrNoMark, RuleMarkDestroyed,
	RuleInotifyParent, RuleInotifySelf, RuleInotifyMaskAdd, RuleInotifyOneshot,
	RuleInotifyRm, RuleInotifyRmEinval, RuleInotifyIsdir, RuleRename, RuleRenameOverwrite,
	RuleDirent, RuleDeleteSelf, RuleErrPermNotif, RuleDFIDNoDir, RuleErrOnlydir,
	RuleParentMarkNotWatching, RuleUnlinkedOpen, RuleInotifyExclUnlink, RuleInotifyCoalesce,
	RuleLink, RulePermClassOrder, RuleFifo, RuleFanotifyRegDirOnly, RuleSpecialNoParent,
}

// Coverage counts the rules a run applied and the distinct rule paths (the
// set of rules one scenario step went through).
type Coverage struct {
	mu    sync.Mutex
	rules map[string]int
	paths map[string]bool
	cur   []string
}

// NewCoverage returns an empty coverage record.
func NewCoverage() *Coverage {
	return &Coverage{rules: map[string]int{}, paths: map[string]bool{}}
}

func (c *Coverage) hit(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rules[id]++
	c.cur = append(c.cur, id)
}

// EndPath closes the current rule path (one step of a scenario).
func (c *Coverage) EndPath() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cur) == 0 {
		return
	}
	seen := map[string]bool{}
	var ids []string
	for _, id := range c.cur {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	key := ""
	for _, id := range ids {
		key += id + "\x00"
	}
	c.paths[key] = true
	c.cur = c.cur[:0]
}

// Counts returns how many distinct rules and rule paths were hit.
func (c *Coverage) Counts() (rules, paths int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.rules), len(c.paths)
}

// Missed lists the rules never applied.
func (c *Coverage) Missed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range Rules {
		if c.rules[r] == 0 {
			out = append(out, r)
		}
	}
	return out
}

// Model faults: each names one plausible wrong rule (Kernel.Fault). With a
// fault on, the model no longer agrees with a correct kernel, and the
// explorer must notice: that is its measured power.
const (
	FaultParentIgnoreNoInterest   = "parent_ignore_not_in_interest"
	FaultIgnoreFlagAsLegacy       = "ignore_flag_as_legacy"
	FaultLegacyNotOnDir           = "legacy_ignore_not_on_dir"
	FaultLegacyChildAlways        = "legacy_ignore_child_without_on_child"
	FaultIgnoreSameTypeOnly       = "ignore_only_same_mark_type"
	FaultModifyClearsSurv         = "modify_clears_surviving_ignore"
	FaultModifyNeverClears        = "modify_never_clears_ignore"
	FaultParentNeedsNoOnChild     = "parent_mark_reports_without_on_child"
	FaultOndirNotNeeded           = "dir_event_without_ondir"
	FaultFIDDropsOndir            = "fid_group_drops_ondir"
	FaultEvictableAnyType         = "evictable_on_mount_allowed"
	FaultFidOnlyEventsOnFd        = "inode_events_allowed_on_fd_group"
	FaultInotifyMaskAddReplaces   = "inotify_mask_add_replaces"
	FaultInotifyOneshotStays      = "inotify_oneshot_stays"
	FaultInotifyParentOnly        = "inotify_child_event_to_parent_only"
	FaultRemoveKeepsEmptyMark     = "remove_keeps_empty_mark"
	FaultRenameStaleParent        = "rename_keeps_old_parent"
	FaultRenameNoMoveSelf         = "rename_without_move_self"
	FaultPermSkipsParent          = "perm_events_skip_parent"
	FaultDFIDFileSelfEvents       = "dfid_name_reports_file_self_events"
	FaultParentNotWatchingVisited = "parent_mark_not_watching_children_visited"
	FaultExclUnlinkIgnored        = "excl_unlink_ignored"
	FaultUnlinkedNotToParent      = "unlinked_child_not_to_parent"
	FaultDeleteSelfAtUnlink       = "delete_self_at_unlink_while_open"
	FaultInotifyNoCoalesce        = "inotify_no_coalesce"
	FaultInotifyCoalesceAny       = "inotify_coalesce_not_successive"
	FaultLinkNoAttrib             = "link_without_attrib"
	FaultPermClassOrderReversed   = "perm_class_order_reversed"
	FaultSpecialAccessToParent    = "special_file_access_to_parent"
	FaultFdGroupFifoEvents        = "fd_group_gets_fifo_events"
	FaultFifoReadWriteSilent      = "fifo_read_write_silent"
	FaultIgnoreAddedOpenForWrite  = "ignore_added_while_open_for_write"
)

// Fault describes one model fault.
type Fault struct {
	Name   string
	Family string // the rule family of issue 12 it belongs to
	Doc    string // the wrong rule it plants
}

// KernelFix is a kernel commit, by its id (12 digits or all 40) and subject.
type KernelFix struct{ Commit, Subject string }

// FaultFixes maps the faults that are the rule of a kernel without a fix to
// that fix: the explorer names it when the fault explains a mismatch (the
// kernel lacks the fix; the case fails, as any kernel bug's).
var FaultFixes = map[string]KernelFix{
	FaultParentIgnoreNoInterest:   {"4f0b903ded72", "fsnotify: fix merge with parent's ignored mask"},
	FaultParentNotWatchingVisited: {"e730558adffb", "fsnotify: consistent behavior for parent not watching children"},
	FaultSpecialAccessToParent:    {"635bc4def026", "fsnotify: do not generate ACCESS/MODIFY events on child for special files"},
}

// Faults lists every fault, one or more per rule family.
var Faults = []Fault{
	{FaultParentIgnoreNoInterest, "parent merge of ignore masks", "a parent's ignore mask is not in its interest mask (kernel without 4f0b903ded72)"},
	{FaultIgnoreFlagAsLegacy, "legacy vs FAN_MARK_IGNORE flavour", "FAN_MARK_IGNORE treated as the legacy ignore mask (event flags in it ignored)"},
	{FaultLegacyNotOnDir, "legacy vs FAN_MARK_IGNORE flavour", "the legacy ignore mask does not apply to events on directories"},
	{FaultLegacyChildAlways, "legacy vs FAN_MARK_IGNORE flavour", "a parent's legacy ignore mask applies to children without FAN_EVENT_ON_CHILD"},
	{FaultIgnoreSameTypeOnly, "mark-type precedence", "an ignore mask of a mount/sb mark does not apply to events reported by other mark types"},
	{FaultModifyClearsSurv, "SURV_MODIFY / FS_MODIFY clearing", "FS_MODIFY also clears a surviving ignore mask"},
	{FaultModifyNeverClears, "SURV_MODIFY / FS_MODIFY clearing", "FS_MODIFY never clears an ignore mask"},
	{FaultParentNeedsNoOnChild, "parent-watched delivery", "a visited parent's mark reports a child's event without FAN_EVENT_ON_CHILD in its mask (the parent is watched for another group)"},
	{FaultOndirNotNeeded, "parent-watched delivery", "a mark reports events on directories without FAN_ONDIR"},
	{FaultFIDDropsOndir, "event reporting", "a FID group does not report FAN_ONDIR"},
	{FaultEvictableAnyType, "mark API errno", "FAN_MARK_EVICTABLE accepted on mount and filesystem marks"},
	{FaultFidOnlyEventsOnFd, "mark API errno", "FAN_ATTRIB accepted on an fd-reporting group and on a mount mark"},
	{FaultInotifyMaskAddReplaces, "inotify watches", "IN_MASK_ADD replaces the watch mask"},
	{FaultInotifyOneshotStays, "inotify watches", "an IN_ONESHOT watch survives its first event"},
	{FaultInotifyParentOnly, "parent-watched delivery", "with the parent and the child watched by one inotify instance, only the parent gets the event"},
	{FaultRemoveKeepsEmptyMark, "mark API errno", "a mark whose masks become empty stays (no ENOENT on the next removal)"},
	{FaultRenameStaleParent, "parent-watched delivery", "after a rename, a child's events still go to its old parent's marks (a stale parent-watched flag)"},
	{FaultRenameNoMoveSelf, "renames", "a rename does not report FS_MOVE_SELF on the moved inode"},
	{FaultPermSkipsParent, "permission events", "FAN_OPEN_PERM/FAN_ACCESS_PERM of a child never reach its parent's FAN_EVENT_ON_CHILD mark (\"FAN_OPEN_PERM remains unvalidated\", seed 004)"},
	{FaultParentNotWatchingVisited, "parent merge of ignore masks", "a parent mark without FAN_EVENT_ON_CHILD is visited for a child's event when another mark makes the parent watch children, so a child's FS_MODIFY clears its ignore mask (kernel without e730558adffb)"},
	{FaultExclUnlinkIgnored, "unlinked children", "IN_EXCL_UNLINK has no effect: an unlinked child's events through an open file still reach the watch"},
	{FaultUnlinkedNotToParent, "unlinked children", "an unlinked child's events through an open file no longer reach its (former) parent's marks and watches"},
	{FaultDeleteSelfAtUnlink, "unlinked children", "unlink(2) of a file held open reports FS_DELETE_SELF (and drops the inode's marks) at once, not at the last close"},
	{FaultInotifyNoCoalesce, "event merging", "inotify does not coalesce an event identical to the tail of the queue (inotify(7): identical successive events are coalesced)"},
	{FaultInotifyCoalesceAny, "event merging", "inotify drops an event identical to any event still queued, not only to the queue's tail (inotify_merge compares with the last event only; inotify(7): \"successive\" events)"},
	{FaultLinkNoAttrib, "hardlinks", "link(2) reports no FS_ATTRIB on the inode (its link count changed: fsnotify_link -> fsnotify_link_count)"},
	{FaultPermClassOrderReversed, "permission class order", "a permission event reaches FAN_CLASS_CONTENT groups before FAN_CLASS_PRE_CONTENT groups"},
	{FaultSpecialAccessToParent, "special files", "a FIFO's read and write (FS_ACCESS, FS_MODIFY through its path) are events on child: its parent's marks and watches get them, and are visited (kernel without 635bc4def026)"},
	{FaultFdGroupFifoEvents, "special files", "a fanotify group reporting fds gets the events of a FIFO (fanotify_group_event_mask: \"Path type events are only relevant for files and dirs\")"},
	{FaultFifoReadWriteSilent, "special files", "a FIFO's read and write report no FS_ACCESS/FS_MODIFY at all, not even to its own marks and watches (vfs_read/vfs_write notify after pipe_read/pipe_write as for a regular file)"},
	{FaultIgnoreAddedOpenForWrite, "SURV_MODIFY / FS_MODIFY clearing", "a non-surviving ignore mask is added to an inode open for write (fanotify_add_inode_mark on 6.1, do_fanotify_mark on 7.3: not while inode_is_open_for_write)"},
	{FaultDFIDFileSelfEvents, "event reporting", "a FAN_REPORT_DFID_NAME group (without FAN_REPORT_FID) reports FS_DELETE_SELF/FS_MOVE_SELF of a file, which has no directory to report, with the file's FID"},
}

// FaultNames returns the fault names, in list order.
func FaultNames() []string {
	var out []string
	for _, f := range Faults {
		out = append(out, f.Name)
	}
	return out
}

// IsFault reports whether name is a known fault.
func IsFault(name string) bool {
	for _, f := range Faults {
		if f.Name == name {
			return true
		}
	}
	return false
}
