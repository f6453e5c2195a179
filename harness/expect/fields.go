package expect

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/fsnsuite/fsnsuite/harness/fanotify"
)

// A mismatch report opens with what changed, field by field, before the two
// lists and the go-cmp diff: a developer's first read is the count or the
// mask, not the pid of a kworker. Fields are ordered by fieldRank: counts
// (a record's error_count, a range's count, how many events or records)
// first, then masks, then the values that say what happened (errno, record
// type, offset), then which object (fsid, handle, inode, wd, cookie), then
// who (pid, pidfd), then names, paths and descriptors.

// fieldRank orders differing fields; a field not listed ranks with the
// objects (3).
var fieldRank = map[string]int{
	"error_count": 0, "count": 0, "records": 0,
	"mask":  1,
	"error": 2, "type": 2, "offset": 2,
	"fsid": 3, "handle_type": 3, "handle": 3, "dev": 3, "ino": 3, "wd": 3, "cookie": 3, "mnt_id": 3,
	"pid": 4, "pidfd": 4, "pidfd_pid": 4, "pidfd_thread": 4,
	"name": 5, "path": 5, "fd": 5,
}

// fieldDiff is one field that differs between a wanted and a received event.
type fieldDiff struct {
	path      string // "info[1] ERROR error_count", "mask", "pid"
	leaf      string // the field's own name, for its rank
	got, want string
}

func (d fieldDiff) rank() int {
	if r, ok := fieldRank[d.leaf]; ok {
		return r
	}
	return 3
}

func (d fieldDiff) String() string { return fmt.Sprintf("%s %s, want %s", d.path, d.got, d.want) }

// diffFields lists every field in which got differs from want (two values
// of one struct type), walking nested structs, arrays and slices (a slice of
// another length is one difference, "records 1, want 2", and its common
// elements are compared too), ordered by rank and then as the fields are
// declared. Equal values give nil.
func diffFields(want, got any) []fieldDiff {
	var out []fieldDiff
	walkDiff(&out, "", "", reflect.ValueOf(want), reflect.ValueOf(got))
	sort.SliceStable(out, func(i, j int) bool { return out[i].rank() < out[j].rank() })
	return out
}

var infoType = reflect.TypeOf(fanotify.Info{})

func walkDiff(out *[]fieldDiff, path, leaf string, w, g reflect.Value) {
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + " " + name
	}
	switch w.Kind() {
	case reflect.Struct:
		for i := 0; i < w.NumField(); i++ {
			f := w.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name := snake(f.Name)
			walkDiff(out, join(name), name, w.Field(i), g.Field(i))
		}
		return
	case reflect.Slice:
		name := leaf
		if w.Type().Elem() == infoType {
			name = "records"
		}
		if w.Len() != g.Len() {
			*out = append(*out, fieldDiff{path: join2(path, leaf, name), leaf: "records", got: fmt.Sprint(g.Len()), want: fmt.Sprint(w.Len())})
		}
		for i := 0; i < min(w.Len(), g.Len()); i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			if w.Type().Elem() == infoType {
				wi, gi := w.Index(i).Interface().(fanotify.Info), g.Index(i).Interface().(fanotify.Info)
				t := fanotify.InfoTypeString(wi.Type)
				if gi.Type != wi.Type {
					t = fanotify.InfoTypeString(gi.Type) + " (want " + t + ")"
				}
				p += " " + t
			}
			walkDiff(out, p, leaf, w.Index(i), g.Index(i))
		}
		return
	}
	if reflect.DeepEqual(w.Interface(), g.Interface()) {
		return
	}
	*out = append(*out, fieldDiff{path: path, leaf: leaf, got: show(g), want: show(w)})
}

// join2 names a slice's length: "info records" for the records of an event.
func join2(path, leaf, name string) string {
	if name == leaf {
		return path + " length"
	}
	return path + " " + name
}

// show renders one field's value: symbolic where the type says how (masks),
// quoted for strings.
func show(v reflect.Value) string {
	if s, ok := v.Interface().(fmt.Stringer); ok {
		return s.String()
	}
	if v.Kind() == reflect.String {
		return fmt.Sprintf("%q", v.String())
	}
	return fmt.Sprint(v.Interface())
}

// snake turns a Go field name into the report's: ErrorCount -> error_count,
// MntID -> mnt_id.
func snake(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 && (unicode.IsLower(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]))) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// changed renders what differs between two event lists, first thing in a
// mismatch report: the number of events when it differs, then, for each
// received event that stands where a different wanted one does, every
// differing field (fieldRank order), then the wanted events not received and
// the received ones not wanted. The lists are aligned on their equal events
// (a longest common subsequence), so one missing event does not make every
// later one "differ"; between two equal ones, the unequal events are paired
// in order with the wanted events they differ from least (pairGap). "" when
// the lists are equal.
func changed[E fmt.Stringer](got, want []E, opts ...cmp.Option) string {
	var lines []string
	if len(got) != len(want) {
		lines = append(lines, fmt.Sprintf("event count %d, want %d", len(got), len(want)))
	}
	pairs, missing, extra := align(got, want, opts...)
	for _, p := range pairs {
		var fs []string
		for _, d := range diffFields(want[p[1]], got[p[0]]) {
			fs = append(fs, d.String())
		}
		if len(fs) == 0 {
			// equal but for what opts ignore: nothing to name
			continue
		}
		at := fmt.Sprintf("[%d]", p[0])
		if p[0] != p[1] {
			at = fmt.Sprintf("[%d] (want [%d])", p[0], p[1])
		}
		lines = append(lines, at+" "+strings.Join(fs, "; "))
	}
	for _, i := range missing {
		lines = append(lines, fmt.Sprintf("want [%d] not received: %s", i, want[i]))
	}
	for _, j := range extra {
		lines = append(lines, fmt.Sprintf("got [%d] not wanted: %s", j, got[j]))
	}
	if len(lines) == 0 {
		return ""
	}
	return "  changed: " + strings.Join(lines, "\n           ") + "\n"
}

// unpairedCost is what leaving an event unpaired costs in pairGap, against
// the number of differing fields of a pair: a received event is paired with
// the wanted one it differs from in fewest fields, and left over rather than
// paired with one it differs from in more than this many.
const unpairedCost = 3

// pairGap pairs, in order, the unequal received (gs) and wanted (ws) events
// between two equal ones, at the least total cost (diffs(g, w) differing
// fields per pair, unpairedCost per event left over): an edit distance.
func pairGap(gs, ws []int, diffs func(g, w int) int) (pairs [][2]int, extra, missing []int) {
	n, m := len(gs), len(ws)
	if n == 0 || m == 0 {
		return nil, gs, ws
	}
	c := make([][]int, n+1)
	for i := range c {
		c[i] = make([]int, m+1)
	}
	for i := n; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			switch {
			case i == n:
				c[i][j] = (m - j) * unpairedCost
			case j == m:
				c[i][j] = (n - i) * unpairedCost
			default:
				c[i][j] = min(diffs(gs[i], ws[j])+c[i+1][j+1], unpairedCost+c[i+1][j], unpairedCost+c[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case c[i][j] == diffs(gs[i], ws[j])+c[i+1][j+1]:
			pairs = append(pairs, [2]int{gs[i], ws[j]})
			i++
			j++
		case c[i][j] == unpairedCost+c[i+1][j]:
			extra = append(extra, gs[i])
			i++
		default:
			missing = append(missing, ws[j])
			j++
		}
	}
	return pairs, append(extra, gs[i:]...), append(missing, ws[j:]...)
}

// align matches got with want on equal events (longest common subsequence)
// and pairs the unequal ones between two matches (pairGap): pairs holds
// (got index, want index) of events that differ; missing the wanted events
// left over, extra the received ones.
func align[E any](got, want []E, opts ...cmp.Option) (pairs [][2]int, missing, extra []int) {
	n, m := len(got), len(want)
	eq := func(i, j int) bool { return cmp.Equal(want[j], got[i], opts...) }
	// l[i][j]: LCS length of got[i:] and want[j:].
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if eq(i, j) {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var gGap, wGap []int
	flush := func() {
		p, x, y := pairGap(gGap, wGap, func(i, j int) int { return len(diffFields(want[j], got[i])) })
		pairs, extra, missing = append(pairs, p...), append(extra, x...), append(missing, y...)
		gGap, wGap = nil, nil
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case eq(i, j) && l[i][j] == l[i+1][j+1]+1:
			flush()
			i++
			j++
		case l[i+1][j] >= l[i][j+1]:
			gGap = append(gGap, i)
			i++
		default:
			wGap = append(wGap, j)
			j++
		}
	}
	for ; i < n; i++ {
		gGap = append(gGap, i)
	}
	for ; j < m; j++ {
		wGap = append(wGap, j)
	}
	flush()
	return pairs, missing, extra
}
