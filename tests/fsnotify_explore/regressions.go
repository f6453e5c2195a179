package main

import (
	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// regression is a fixed scenario: a shrunk mismatch pasted from the
// explorer's output (its case row), or the shrunk witness of a model fault.
type regression struct {
	Name string
	Doc  string
	// Witness names the model fault this scenario tells apart from the
	// correct rule (TestWitnesses checks that it still does): on a kernel,
	// the row fails exactly when the kernel follows that wrong rule.
	Witness string
	// Fix is the kernel commit the expectation depends on, if any.
	Fix      *harness.Fix
	Scenario Scenario
}

// regressions: one witness per model fault, each the explorer's own shrunk
// output (model fault against the correct model), so the power measured by
// -model-fault stays in the suite whatever the generator draws later.
var regressions = []regression{
	{
		Name:    "witness_parent_ignore_not_in_interest",
		Doc:     "a parent's FAN_MARK_IGNORE mask with FAN_EVENT_ON_CHILD hides a child's event from a filesystem mark (fsnotify_calc_mask counts the ignore mask, 4f0b903ded72)",
		Witness: model.FaultParentIgnoreNoInterest,
		Fix:     &harness.Fix{Commit: "4f0b903ded72", Subject: "fsnotify: fix merge with parent's ignored mask"},
		Scenario: Scenario{Seed: 73, Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x441, Mask: 0x8000010, Obj: "s"}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORED_SURV_MODIFY|FAN_MARK_IGNORE, FAN_CLOSE_NOWRITE|FAN_EVENT_ON_CHILD, s)
			{Op: "mark", Group: 0, Flags: 0x101, Mask: 0x10, Obj: ""},       // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_FILESYSTEM, FAN_CLOSE_NOWRITE, <fs root>)
			{Op: "read", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "s/h"},       // actor read s/h
		}}},
	{
		Name:    "witness_ignore_flag_as_legacy",
		Doc:     "FAN_MARK_IGNORE's own FAN_EVENT_ON_CHILD makes it apply to children (fsnotify_ignore_mask, fanotify_mark(2) FAN_MARK_IGNORE)",
		Witness: model.FaultIgnoreFlagAsLegacy,
		Scenario: Scenario{Seed: 73, Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x441, Mask: 0x8000010, Obj: "s"}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORED_SURV_MODIFY|FAN_MARK_IGNORE, FAN_CLOSE_NOWRITE|FAN_EVENT_ON_CHILD, s)
			{Op: "mark", Group: 0, Flags: 0x101, Mask: 0x10, Obj: ""},       // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_FILESYSTEM, FAN_CLOSE_NOWRITE, <fs root>)
			{Op: "read", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "s/h"},       // actor read s/h
		}}},
	{
		Name:    "witness_legacy_ignore_not_on_dir",
		Doc:     "a legacy ignore mask applies to events on the directory itself, FAN_ONDIR or not (fanotify_mark(2) FAN_MARK_IGNORED_MASK)",
		Witness: model.FaultLegacyNotOnDir,
		Scenario: Scenario{Seed: 212, Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x1, Mask: 0x40000020, Obj: "."}, // g0 fanotify_mark(FAN_MARK_ADD, FAN_OPEN|FAN_ONDIR, .)
			{Op: "mark", Group: 0, Flags: 0x61, Mask: 0x20, Obj: "."},      // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORED_MASK|FAN_MARK_IGNORED_SURV_MODIFY, FAN_OPEN, .)
			{Op: "opendir", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "."},     // actor opendir .
		}}},
	{
		Name:    "witness_legacy_ignore_child_without_on_child",
		Doc:     "a parent's legacy ignore mask without FAN_EVENT_ON_CHILD does not hide a child's event, though another group's watch makes the parent visited",
		Witness: model.FaultLegacyChildAlways,
		Scenario: Scenario{Seed: 286, Groups: []string{"inotify", "fid"}, Steps: []Step{
			{Op: "mark", Group: 1, Flags: 0x21, Mask: 0x20, Obj: "."}, // g1 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORED_MASK, FAN_OPEN, .)
			{Op: "mark", Group: 1, Flags: 0x1, Mask: 0x20, Obj: "g"},  // g1 fanotify_mark(FAN_MARK_ADD, FAN_OPEN, g)
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x20, Obj: "."}, // g0 inotify_add_watch(., IN_OPEN)
			{Op: "write", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "g"},  // actor write g
		}}},
	{
		Name:    "witness_ignore_only_same_mark_type",
		Doc:     "an ignore mask of a mount mark hides what another mark of the group reports (fanotify_group_event_mask merges all marks)",
		Witness: model.FaultIgnoreSameTypeOnly,
		Scenario: Scenario{Seed: 73, Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x11, Mask: 0x20, Obj: ""}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_MOUNT, FAN_OPEN, <mount root>)
			{Op: "mark", Group: 0, Flags: 0x31, Mask: 0x20, Obj: ""}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_MOUNT|FAN_MARK_IGNORED_MASK, FAN_OPEN, <mount root>)
			{Op: "read", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "g"},  // actor read g
		}}},
	{
		Name:    "witness_modify_clears_surviving_ignore",
		Doc:     "FS_MODIFY clears the mount mark's legacy ignore mask but not the filesystem mark's surviving one (send_to_group)",
		Witness: model.FaultModifyClearsSurv,
		Scenario: Scenario{Seed: 207, Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x11, Mask: 0x20, Obj: ""},  // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_MOUNT, FAN_OPEN, <mount root>)
			{Op: "mark", Group: 0, Flags: 0x161, Mask: 0x20, Obj: ""}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORED_MASK|FAN_MARK_IGNORED_SURV_MODIFY|FAN_MARK_FILESYSTEM, FAN_OPEN, <fs root>)
			{Op: "mark", Group: 0, Flags: 0x31, Mask: 0x20, Obj: ""},  // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_MOUNT|FAN_MARK_IGNORED_MASK, FAN_OPEN, <mount root>)
			{Op: "write", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "g"},  // actor write g
			{Op: "write", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "g"},  // actor write g
		}}},
	{
		Name:    "witness_modify_never_clears_ignore",
		Doc:     "FS_MODIFY clears a non-surviving ignore mask of a file (send_to_group; fanotify_mark(2) FAN_MARK_IGNORED_SURV_MODIFY)",
		Witness: model.FaultModifyNeverClears,
		Scenario: Scenario{Seed: 481, Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x11, Mask: 0x10, Obj: ""},   // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_MOUNT, FAN_CLOSE_NOWRITE, <mount root>)
			{Op: "mark", Group: 0, Flags: 0x401, Mask: 0x10, Obj: "f"}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORE, FAN_CLOSE_NOWRITE, f)
			{Op: "write", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "f"},   // actor write f
			{Op: "read", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "f"},    // actor read f
		}}},
	{
		Name:    "witness_parent_mark_reports_without_on_child",
		Doc:     "a parent watched for children through another group's FAN_EVENT_ON_CHILD mark: this group's parent mark without it still gets no child event (fsnotify_mask_applicable)",
		Witness: model.FaultParentNeedsNoOnChild,
		Scenario: Scenario{Seed: 36, Groups: []string{"notif", "notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x1, Mask: 0x8000000, Obj: "."}, // g0 fanotify_mark(FAN_MARK_ADD, FAN_EVENT_ON_CHILD, .)
			{Op: "mark", Group: 1, Flags: 0x1, Mask: 0x20, Obj: "."},      // g1 fanotify_mark(FAN_MARK_ADD, FAN_OPEN, .)
			{Op: "read", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "f"},       // actor read f
		}}},
	{
		Name:    "witness_dir_event_without_ondir",
		Doc:     "a filesystem mark without FAN_ONDIR gets no event on a directory (fanotify_mark(2) FAN_ONDIR)",
		Witness: model.FaultOndirNotNeeded,
		Scenario: Scenario{Seed: 10, Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x101, Mask: 0x20, Obj: ""},  // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_FILESYSTEM, FAN_OPEN, <fs root>)
			{Op: "opendir", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "s"}, // actor opendir s
		}}},
	{
		Name:    "witness_fid_group_drops_ondir",
		Doc:     "a FID group reports FAN_ONDIR with a directory's event (fanotify_group_event_mask)",
		Witness: model.FaultFIDDropsOndir,
		Scenario: Scenario{Seed: 57, Groups: []string{"fid"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x11, Mask: 0x40000020, Obj: ""}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_MOUNT, FAN_OPEN|FAN_ONDIR, <mount root>)
			{Op: "opendir", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "s"},     // actor opendir s
		}}},
	{
		Name:    "witness_evictable_on_mount_allowed",
		Doc:     "FAN_MARK_EVICTABLE on a mount mark is EINVAL (fanotify_mark(2))",
		Witness: model.FaultEvictableAnyType,
		Scenario: Scenario{Seed: 35, Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x231, Mask: 0x8000000, Obj: ""}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_MOUNT|FAN_MARK_IGNORED_MASK|FAN_MARK_EVICTABLE, FAN_EVENT_ON_CHILD, <mount root>)
		}}},
	{
		Name:    "witness_inode_events_allowed_on_fd_group",
		Doc:     "FAN_ATTRIB on a group reporting fds is EINVAL (fanotify_mark(2))",
		Witness: model.FaultFidOnlyEventsOnFd,
		Scenario: Scenario{Seed: 8, Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x21, Mask: 0x4, Obj: "s/h"}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORED_MASK, FAN_ATTRIB, s/h)
		}}},
	{
		Name:    "witness_inotify_mask_add_replaces",
		Doc:     "IN_MASK_ADD adds to the watch mask instead of replacing it (inotify(7))",
		Witness: model.FaultInotifyMaskAddReplaces,
		Scenario: Scenario{Seed: 98, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x1, Obj: "s/h"},        // g0 inotify_add_watch(s/h, IN_ACCESS)
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x20000000, Obj: "s/h"}, // g0 inotify_add_watch(s/h, IN_MASK_ADD)
			{Op: "read", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "s/h"},         // actor read s/h
		}}},
	{
		Name:    "witness_inotify_oneshot_stays",
		Doc:     "an IN_ONESHOT watch goes after one event, with IN_IGNORED (inotify(7))",
		Witness: model.FaultInotifyOneshotStays,
		Scenario: Scenario{Seed: 7, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x80000020, Obj: "f"}, // g0 inotify_add_watch(f, IN_OPEN|IN_ONESHOT)
			{Op: "read", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "f"},         // actor read f
		}}},
	{
		Name:    "witness_inotify_child_event_to_parent_only",
		Doc:     "a watched child and its watched parent both get the child's event (inotify(7))",
		Witness: model.FaultInotifyParentOnly,
		Scenario: Scenario{Seed: 234, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x4, Obj: "s/h"}, // g0 inotify_add_watch(s/h, IN_ATTRIB)
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x4, Obj: "s"},   // g0 inotify_add_watch(s, IN_ATTRIB)
			{Op: "chmod", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "s/h"}, // actor chmod s/h
		}}},
	{
		Name:    "witness_remove_keeps_empty_mark",
		Doc:     "removing the last bits of a mark destroys it: the next removal is ENOENT (fanotify_mark(2))",
		Witness: model.FaultRemoveKeepsEmptyMark,
		Scenario: Scenario{Seed: 93, Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x21, Mask: 0x20, Obj: "f"}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORED_MASK, FAN_OPEN, f)
			{Op: "mark", Group: 0, Flags: 0x22, Mask: 0x20, Obj: "f"}, // g0 fanotify_mark(FAN_MARK_REMOVE|FAN_MARK_IGNORED_MASK, FAN_OPEN, f)
			{Op: "mark", Group: 0, Flags: 0x22, Mask: 0x20, Obj: "f"}, // g0 fanotify_mark(FAN_MARK_REMOVE|FAN_MARK_IGNORED_MASK, FAN_OPEN, f)
		}}},
	{
		Name:    "witness_rename_keeps_old_parent",
		Doc:     "a file renamed (over another) from an unwatched directory into a watched one reports to its new parent (__d_move: fsnotify_update_flags; inotify(7))",
		Witness: model.FaultRenameStaleParent,
		Scenario: Scenario{Seed: 424, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x20, Obj: "."},            // g0 inotify_add_watch(., IN_OPEN)
			{Op: "rename", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "s/h", To: "g"}, // actor rename s/h -> g
			{Op: "write", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "g"},             // actor write g
		}}},
	{
		Name:    "witness_rename_without_move_self",
		Doc:     "a renamed file's own watch reports IN_MOVE_SELF (fsnotify_move; inotify(7))",
		Witness: model.FaultRenameNoMoveSelf,
		Scenario: Scenario{Seed: 194, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x800, Obj: "s/h"},           // g0 inotify_add_watch(s/h, IN_MOVE_SELF)
			{Op: "rename", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "s/h", To: "s/n"}, // actor rename s/h -> s/n
		}}},
	{
		Name:    "witness_perm_events_skip_parent",
		Doc:     "a directory's FAN_ACCESS_PERM|FAN_EVENT_ON_CHILD mark gets its child's read as a permission event (fanotify_mark(2) FAN_EVENT_ON_CHILD; FS_EVENTS_POSS_ON_CHILD)",
		Witness: model.FaultPermSkipsParent,
		Scenario: Scenario{Seed: 481, Groups: []string{"content"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x1, Mask: 0x8020000, Obj: "s"}, // g0 fanotify_mark(FAN_MARK_ADD, FAN_ACCESS_PERM|FAN_EVENT_ON_CHILD, s)
			{Op: "read", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "s/h"},     // actor read s/h
		}}},
	{
		Name:    "witness_parent_mark_not_watching_children_visited",
		Doc:     "a child's write does not clear the legacy ignore mask of its parent's mark without FAN_EVENT_ON_CHILD, though another group's mark makes the parent watch children (fsnotify_iter_select_report_types, e730558adffb)",
		Witness: model.FaultParentNotWatchingVisited,
		Fix:     &harness.Fix{Commit: "e730558adffb", Subject: "fsnotify: consistent behavior for parent not watching children"},
		Scenario: Scenario{Seed: 469, Groups: []string{"pre_content", "notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x101, Mask: 0x40000020, Obj: ""}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_FILESYSTEM, FAN_OPEN|FAN_ONDIR, <fs root>)
			{Op: "mark", Group: 0, Flags: 0x21, Mask: 0x20, Obj: "."},       // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORED_MASK, FAN_OPEN, .)
			{Op: "mark", Group: 1, Flags: 0x1, Mask: 0x8000000, Obj: "."},   // g1 fanotify_mark(FAN_MARK_ADD, FAN_EVENT_ON_CHILD, .)
			{Op: "write", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "f"},        // actor write f
			{Op: "opendir", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "."},      // actor opendir .
		}}},
	{
		Name:    "witness_dfid_name_reports_file_self_events",
		Doc:     "a FAN_REPORT_DFID_NAME group gets no FAN_DELETE_SELF of a file overwritten by a rename: no directory to report (fanotify_group_event_mask)",
		Witness: model.FaultDFIDFileSelfEvents,
		Scenario: Scenario{Seed: 131, Groups: []string{"dfid_name"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x101, Mask: 0x400, Obj: ""},           // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_FILESYSTEM, FAN_DELETE_SELF, <fs root>)
			{Op: "rename", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "g", To: "s/h"}, // actor rename g -> s/h
		}}},
	{
		Name:    "witness_excl_unlink_ignored",
		Doc:     "a directory watch with IN_EXCL_UNLINK gets no event of a child used through an open file after its unlink (inotify(7) IN_EXCL_UNLINK; fsnotify_handle_inode_event: d_unlinked)",
		Witness: model.FaultExclUnlinkIgnored,
		Scenario: Scenario{Seed: 10, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x4000008, Obj: "."}, // g0 inotify_add_watch(., IN_CLOSE_WRITE|IN_EXCL_UNLINK)
			{Op: "unlinkrw", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "f"},    // actor unlinkrw f
		}}},
	{
		Name:    "witness_unlinked_child_not_to_parent",
		Doc:     "a directory watch without IN_EXCL_UNLINK still gets the events of a child used through an open file after its unlink (inotify(7) IN_EXCL_UNLINK: \"by default ... events are generated for children even after they have been unlinked\")",
		Witness: model.FaultUnlinkedNotToParent,
		Scenario: Scenario{Seed: 62, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x8, Obj: "."},    // g0 inotify_add_watch(., IN_CLOSE_WRITE)
			{Op: "unlinkrw", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "g"}, // actor unlinkrw g
		}}},
	{
		Name:    "witness_delete_self_at_unlink_while_open",
		Doc:     "a file unlinked while open keeps its watch until the last close: IN_CLOSE_WRITE, then IN_DELETE_SELF's IN_IGNORED (d_delete leaves the inode to the last dput -> fsnotify_inoderemove)",
		Witness: model.FaultDeleteSelfAtUnlink,
		Scenario: Scenario{Seed: 10, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x8, Obj: "f"},    // g0 inotify_add_watch(f, IN_CLOSE_WRITE)
			{Op: "unlinkrw", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "f"}, // actor unlinkrw f
		}}},
	{
		Name:    "witness_inotify_no_coalesce",
		Doc:     "two successive identical IN_MODIFY of one child are coalesced into one event (inotify(7); inotify_merge, event_compare)",
		Witness: model.FaultInotifyNoCoalesce,
		Scenario: Scenario{Seed: 62, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x2, Obj: "."},    // g0 inotify_add_watch(., IN_MODIFY)
			{Op: "unlinkrw", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "g"}, // actor unlinkrw g
		}}},
	{
		Name:    "witness_link_without_attrib",
		Doc:     "link(2) reports IN_ATTRIB to the inode's own watch: its link count changed (fsnotify_link -> fsnotify_link_count)",
		Witness: model.FaultLinkNoAttrib,
		Scenario: Scenario{Seed: 187, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x4, Obj: "g"},         // g0 inotify_add_watch(g, IN_ATTRIB)
			{Op: "link", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "g", To: "n"}, // actor link g -> n
		}}},
	{
		Name:    "witness_perm_class_order_reversed",
		Doc:     "a FAN_CLASS_PRE_CONTENT group is offered a permission event before a FAN_CLASS_CONTENT group (fanotify(7) FAN_CLASS_PRE_CONTENT; fsnotify_iter_select_report_types, fsnotify_compare_groups)",
		Witness: model.FaultPermClassOrderReversed,
		Scenario: Scenario{Seed: 55, Groups: []string{"content", "pre_content"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x11, Mask: 0x20000, Obj: "."}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_MOUNT, FAN_ACCESS_PERM, <mount root>)
			{Op: "mark", Group: 1, Flags: 0x11, Mask: 0x20000, Obj: "."}, // g1 fanotify_mark(FAN_MARK_ADD|FAN_MARK_MOUNT, FAN_ACCESS_PERM, <mount root>)
			{Op: "read", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "f"},      // actor read f
		}}},
	{
		Name:    "witness_inotify_coalesce_not_successive",
		Doc:     "an event identical to one queued earlier but not to the queue's tail is not coalesced: a parent's and a child's watch of one instance alternate (inotify_merge compares with the last event; inotify(7) \"successive\")",
		Witness: model.FaultInotifyCoalesceAny,
		Scenario: Scenario{Seed: 285, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x2, Obj: "."},    // g0 inotify_add_watch(., IN_MODIFY)
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x2, Obj: "f"},    // g0 inotify_add_watch(f, IN_MODIFY)
			{Op: "unlinkrw", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "f"}, // actor unlinkrw f (open O_RDWR, unlink, read 1 byte, write twice, close)
		}}},
	{
		Name:    "witness_special_file_access_to_parent",
		Doc:     "a directory watch for IN_ACCESS gets no IN_ACCESS of a FIFO in it read through the FIFO (__fsnotify_parent: parent interest in ACCESS/MODIFY does not apply to special files, 635bc4def026)",
		Witness: model.FaultSpecialAccessToParent,
		Fix:     &harness.Fix{Commit: "635bc4def026", Subject: "fsnotify: do not generate ACCESS/MODIFY events on child for special files"},
		Scenario: Scenario{Seed: 74, Special: true, Groups: []string{"inotify"}, Steps: []Step{
			{Op: "watch", Group: 0, Flags: 0x0, Mask: 0x1, Obj: "."}, // g0 inotify_add_watch(., IN_ACCESS)
			{Op: "fifo", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "p"},  // actor fifo p (open O_RDWR, write a byte, read it back, close)
		}}},
	{
		Name:    "witness_special_file_parent_ignore_not_applied",
		Doc:     "a directory's FAN_MARK_IGNORE mask for FAN_MODIFY with FAN_EVENT_ON_CHILD does not hide a FIFO's write from a filesystem mark: the parent's marks are not visited for it (__fsnotify_parent, 635bc4def026)",
		Witness: model.FaultSpecialAccessToParent,
		Fix:     &harness.Fix{Commit: "635bc4def026", Subject: "fsnotify: do not generate ACCESS/MODIFY events on child for special files"},
		Scenario: Scenario{Seed: 74, Special: true, Groups: []string{"fid"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x441, Mask: 0x8000002, Obj: "."}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORED_SURV_MODIFY|FAN_MARK_IGNORE, FAN_MODIFY|FAN_EVENT_ON_CHILD, .)
			{Op: "mark", Group: 0, Flags: 0x101, Mask: 0x2, Obj: ""},        // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_FILESYSTEM, FAN_MODIFY, <fs root>)
			{Op: "fifo", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "p"},         // actor fifo p (open O_RDWR, write a byte, read it back, close)
		}}},
	{
		Name:    "witness_special_file_modify_keeps_parent_ignore",
		Doc:     "a FIFO's write does not clear its directory mark's non-surviving ignore mask: the FIFO's FAN_CLOSE_WRITE stays ignored (send_to_group clears ignore masks of visited marks only; __fsnotify_parent, 635bc4def026)",
		Witness: model.FaultSpecialAccessToParent,
		Fix:     &harness.Fix{Commit: "635bc4def026", Subject: "fsnotify: do not generate ACCESS/MODIFY events on child for special files"},
		Scenario: Scenario{Seed: 74, Special: true, Groups: []string{"fid"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x1, Mask: 0x8000008, Obj: "."}, // g0 fanotify_mark(FAN_MARK_ADD, FAN_CLOSE_WRITE|FAN_EVENT_ON_CHILD, .)
			{Op: "mark", Group: 0, Flags: 0x21, Mask: 0x8, Obj: "."},      // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_IGNORED_MASK, FAN_CLOSE_WRITE, .)
			{Op: "fifo", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "p"},       // actor fifo p (open O_RDWR, write a byte, read it back, close)
		}}},
	{
		Name:    "witness_fd_group_gets_fifo_events",
		Doc:     "a fanotify group reporting fds gets no event of a FIFO, not even FAN_OPEN through a filesystem mark (fanotify_group_event_mask: \"Path type events are only relevant for files and dirs\")",
		Witness: model.FaultFdGroupFifoEvents,
		Scenario: Scenario{Seed: 7, Special: true, Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x101, Mask: 0x20, Obj: ""}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_FILESYSTEM, FAN_OPEN, <fs root>)
			{Op: "fifo", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "p"},   // actor fifo p (open O_RDWR, write a byte, read it back, close)
		}}},
	{
		Name:    "witness_fifo_read_write_silent",
		Doc:     "a FID group's mount mark for FAN_MODIFY gets a FIFO's write (vfs_write -> fsnotify_modify after pipe_write, as for a regular file; only the parent is left out: 635bc4def026)",
		Witness: model.FaultFifoReadWriteSilent,
		Scenario: Scenario{Seed: 252, Special: true, Groups: []string{"fid"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x11, Mask: 0x2, Obj: ""}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_MOUNT, FAN_MODIFY, <mount root>)
			{Op: "fifo", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "p"}, // actor fifo p (open O_RDWR, write a byte, read it back, close)
		}}},
	{
		Name:    "witness_ignore_added_while_open_for_write",
		Doc:     "a non-surviving ignore mask is not added to a file open for write, and the call returns 0: the close of the writer is still reported (fanotify_add_inode_mark on 6.1, do_fanotify_mark on 7.3: inode_is_open_for_write)",
		Witness: model.FaultIgnoreAddedOpenForWrite,
		Scenario: Scenario{Seed: 20, Special: true, Groups: []string{"fid"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: unix.FAN_MARK_ADD | unix.FAN_MARK_FILESYSTEM, Mask: unix.FAN_CLOSE_WRITE},
			{Op: "markw", Group: 0, Flags: unix.FAN_MARK_ADD | unix.FAN_MARK_IGNORED_MASK, Mask: unix.FAN_CLOSE_WRITE, Obj: "g"},
		}}},
	{
		Name: "special_file_dfid_name_gets_parent",
		Doc:  "a FAN_REPORT_DFID_NAME group's filesystem mark gets a FIFO's read and write with its directory's fid and its name: the group wants the parent (__fsnotify_parent parent_needed; do_fanotify_mark gives its marks FAN_EVENT_ON_CHILD), though since 635bc4def026 the parent is not interested",
		Scenario: Scenario{Seed: 74, Special: true, Groups: []string{"dfid_name"}, Steps: []Step{
			{Op: "mark", Group: 0, Flags: 0x101, Mask: 0x3, Obj: ""}, // g0 fanotify_mark(FAN_MARK_ADD|FAN_MARK_FILESYSTEM, FAN_ACCESS|FAN_MODIFY, <fs root>)
			{Op: "fifo", Group: 0, Flags: 0x0, Mask: 0x0, Obj: "p"},  // actor fifo p (open O_RDWR, write a byte, read it back, close)
		}}},
}
