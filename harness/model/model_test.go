package model

import (
	"testing"

	"golang.org/x/sys/unix"
)

// These check the rule function against sentences of fanotify_mark(2) and
// the two commits of the seed thread, independently of any kernel run.

func add(t *testing.T, m *Mark, flags uint, mask uint32, tg Target) *Mark {
	t.Helper()
	nm, errno := MarkAdd(m, 0, flags|tg.Loc.MarkFlags(), mask, tg, false)
	if errno != 0 {
		t.Fatalf("MarkAdd(%#x, %#x): %v", flags, mask, errno)
	}
	return nm
}

var (
	file   = Target{Loc: LocSelf}
	dir    = Target{Loc: LocSelf, IsDir: true}
	parent = Target{Loc: LocParent, IsDir: true}
	mount  = Target{Loc: LocMount}
)

const surv = unix.FAN_MARK_IGNORED_SURV_MODIFY

func TestRuleSentences(t *testing.T) {
	open := uint32(unix.FAN_OPEN)
	for _, tc := range []struct {
		name  string
		k     Kernel
		marks func() []*Mark
		isDir bool
		ev    uint32
		want  bool
	}{
		{
			// fanotify_mark(2) FAN_MARK_IGNORED_MASK: the legacy ignore mask of
			// a parent applies to children only with FAN_EVENT_ON_CHILD in the mark's mask.
			name: "legacy_parent_without_onchild_does_not_apply", k: Fixed, ev: open,
			marks: func() []*Mark {
				return []*Mark{add(t, nil, 0, open, mount),
					add(t, nil, unix.FAN_MARK_IGNORED_MASK|surv, open, parent)}
			},
			want: true,
		},
		{
			name: "legacy_parent_with_onchild_applies", k: Fixed, ev: open,
			marks: func() []*Mark {
				p := add(t, nil, 0, unix.FAN_EVENT_ON_CHILD, parent)
				return []*Mark{add(t, nil, 0, open, mount), add(t, p, unix.FAN_MARK_IGNORED_MASK|surv, open, parent)}
			},
			want: false,
		},
		{
			// 4f0b903ded72: without it the parent is not visited (its mask lacks the event).
			name: "legacy_parent_with_onchild_without_4f0b", k: Kernel{ModifyOpt: true}, ev: open,
			marks: func() []*Mark {
				p := add(t, nil, 0, unix.FAN_EVENT_ON_CHILD, parent)
				return []*Mark{add(t, nil, 0, open, mount), add(t, p, unix.FAN_MARK_IGNORED_MASK|surv, open, parent)}
			},
			want: true,
		},
		{
			name: "ignore_parent_onchild_applies", k: Fixed, ev: open,
			marks: func() []*Mark {
				return []*Mark{add(t, nil, 0, open, mount),
					add(t, nil, unix.FAN_MARK_IGNORE|surv, open|unix.FAN_EVENT_ON_CHILD, parent)}
			},
			want: false,
		},
		{
			// The legacy ignore mask always applies to events on directories.
			name: "legacy_applies_to_dir", k: Fixed, ev: open, isDir: true,
			marks: func() []*Mark {
				return []*Mark{add(t, nil, 0, open|unix.FAN_ONDIR, mount),
					add(t, nil, unix.FAN_MARK_IGNORED_MASK|surv, open, mount)}
			},
			want: false,
		},
		{
			// FAN_MARK_IGNORE: events on directories are ignored only with FAN_ONDIR.
			name: "ignore_without_ondir_not_on_dir", k: Fixed, ev: open, isDir: true,
			marks: func() []*Mark {
				return []*Mark{add(t, nil, 0, open|unix.FAN_ONDIR, mount),
					add(t, nil, unix.FAN_MARK_IGNORE|surv, open, dir)}
			},
			want: true,
		},
		{
			// Without FAN_MARK_IGNORED_SURV_MODIFY the ignore mask is cleared
			// by the modify event itself, which is then reported.
			name: "non_surviving_cleared_by_modify", k: Fixed, ev: unix.FAN_MODIFY,
			marks: func() []*Mark {
				m := add(t, nil, 0, unix.FAN_MODIFY, file)
				return []*Mark{add(t, m, unix.FAN_MARK_IGNORED_MASK, unix.FAN_MODIFY, file)}
			},
			want: true,
		},
		{
			name: "surviving_ignores_modify", k: Fixed, ev: unix.FAN_MODIFY,
			marks: func() []*Mark {
				m := add(t, nil, 0, unix.FAN_MODIFY, file)
				return []*Mark{add(t, m, unix.FAN_MARK_IGNORED_MASK|surv, unix.FAN_MODIFY, file)}
			},
			want: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.k.Deliver(tc.marks(), tc.ev, tc.isDir, map[int]bool{})[0] != 0
			if got != tc.want {
				t.Errorf("reported = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMarkAddErrno(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags uint
		mask  uint32
		tg    Target
		want  unix.Errno
	}{
		{"ignore_dir_no_surv", unix.FAN_MARK_IGNORE, unix.FAN_OPEN, dir, unix.EISDIR},
		{"ignore_mount_no_surv", unix.FAN_MARK_IGNORE, unix.FAN_OPEN, mount, unix.EINVAL},
		{"ignore_flags_on_file", unix.FAN_MARK_IGNORE | surv, unix.FAN_OPEN | unix.FAN_ONDIR, file, unix.ENOTDIR},
		{"both_flavours", unix.FAN_MARK_IGNORE | unix.FAN_MARK_IGNORED_MASK, unix.FAN_OPEN, file, unix.EINVAL},
		{"ignore_file_no_surv", unix.FAN_MARK_IGNORE, unix.FAN_OPEN, file, 0},
	} {
		if _, got := MarkAdd(nil, 0, tc.flags|tc.tg.Loc.MarkFlags(), tc.mask, tc.tg, false); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	m := add(t, nil, unix.FAN_MARK_IGNORE|surv, unix.FAN_OPEN, file)
	if _, got := MarkAdd(m, 0, unix.FAN_MARK_IGNORED_MASK, unix.FAN_OPEN, file, false); got != unix.EEXIST {
		t.Errorf("legacy after FAN_MARK_IGNORE: got %v, want EEXIST", got)
	}
	if _, got := MarkAdd(m, 0, unix.FAN_MARK_IGNORE, unix.FAN_OPEN, file, false); got != unix.EEXIST {
		t.Errorf("FAN_MARK_IGNORE dropping SURV_MODIFY: got %v, want EEXIST", got)
	}
	l := add(t, nil, unix.FAN_MARK_IGNORED_MASK|surv, unix.FAN_OPEN, file)
	if nm, got := MarkAdd(l, 0, unix.FAN_MARK_IGNORED_MASK, unix.FAN_OPEN, file, false); got != 0 || !nm.Surv {
		t.Errorf("legacy dropping SURV_MODIFY: got %v, surv %v; want success, still surviving", got, nm.Surv)
	}
}
