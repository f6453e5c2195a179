package expect

import (
	"sort"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/fanotify"
)

// FID is the FID record an event on path must carry (fanotify.FIDOf: statfs
// fsid and name_to_handle_at handle); an error stops the case.
func FID(t FatalTB, path string) fanotify.Info {
	t.Helper()
	i, err := fanotify.FIDOf(path)
	if err != nil {
		t.Fatalf("expected record: %v", err)
	}
	return i
}

// DFIDName is the DFID_NAME record of entry name in directory dir
// (fanotify.DFIDNameOf); an error stops the case.
func DFIDName(t FatalTB, dir, name string) fanotify.Info {
	t.Helper()
	i, err := fanotify.DFIDNameOf(dir, name)
	if err != nil {
		t.Fatalf("expected record: %v", err)
	}
	return i
}

// MarkKinds fails t unless the kinds of g's marks in /proc/self/fdinfo are
// exactly want: the kinds sorted and joined by commas ("inode,mount"), or
// "none". The kernel promises no order of fdinfo lines, hence the sort. when
// says at which point of the case the check is made.
func MarkKinds(t FatalTB, when string, g *fanotify.Group, want string) bool {
	t.Helper()
	ms, err := g.Marks()
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	var k []string
	for _, m := range ms {
		k = append(k, string(m.Kind))
	}
	sort.Strings(k)
	got := strings.Join(k, ",")
	if got == "" {
		got = "none"
	}
	if got != want {
		t.Errorf("%s: group marks (fdinfo) are %s, want %s", when, got, want)
		return false
	}
	return true
}
