// Package expect compares the events a case received with the events it
// expected, in order, and reports a mismatch the way a kernel developer wants
// to read it: what was done, what changed (every differing field of each
// event, counts and masks before pids, names and descriptors), the whole
// wanted list, the whole received list (symbolic masks), and a go-cmp diff
// of the two.
package expect

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"github.com/fsnsuite/fsnsuite/harness/limits"
	"github.com/fsnsuite/fsnsuite/harness/ownproc"
	"golang.org/x/sys/unix"
)

// TB is the part of harness.T (or testing.T) the helpers need.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// None is the expectation "no event at all", for readability at call sites.
var None []fanotify.Event

// FanotifyEqual compares wanted and received fanotify events in order. The
// event fd number is never compared (it is arbitrary), nor which descriptor
// a PIDFD record's pidfd is (every descriptor compares as 0; a negative
// FAN_NOPIDFD or -errno is compared as it is); Dev and Ino are compared only
// where the wanted event sets them. It returns the report ("" when equal).
func FanotifyEqual(got, want []fanotify.Event) string {
	norm := make([]fanotify.Event, len(got))
	for i, g := range got {
		g.Fd = 0
		if i < len(want) && want[i].Ino == 0 && want[i].Dev == 0 {
			g.Dev, g.Ino = 0, 0
		}
		g.Info = anyPidfd(g.Info)
		norm[i] = g
	}
	w := make([]fanotify.Event, len(want))
	for i, e := range want {
		e.Fd = 0
		e.Info = anyPidfd(e.Info)
		w[i] = e
	}
	return report(norm, w, cmp.Transformer("mask", func(m fanotify.Mask) string { return m.String() }))
}

// anyPidfd returns info with every PIDFD record's descriptor (>= 0) as 0,
// copying the slice when it changes one.
func anyPidfd(info []fanotify.Info) []fanotify.Info {
	var out []fanotify.Info
	for i, r := range info {
		if r.Type == unix.FAN_EVENT_INFO_TYPE_PIDFD && r.Pidfd > 0 {
			if out == nil {
				out = append([]fanotify.Info(nil), info...)
			}
			out[i].Pidfd = 0
		}
	}
	if out == nil {
		return info
	}
	return out
}

// longList is the length above which a mismatch report shows the
// neighbourhood of the first difference instead of both whole lists (queue
// overflow cases compare thousands of events).
const longList = 40

// report compares two ordered event lists and renders what changed (every
// differing field, counts and masks first: changed), both whole lists and a
// go-cmp diff when they differ ("" when equal). nil and empty both mean "no
// event".
func report[E fmt.Stringer](got, want []E, opts ...cmp.Option) string {
	if len(got) == 0 && len(want) == 0 {
		return ""
	}
	// Fast path: lists equal field by field are equal under opts too (the
	// options only change how masks are shown), and reflect is much faster
	// than cmp on the thousands of events of a queue-overflow case.
	if reflect.DeepEqual(got, want) {
		return ""
	}
	if len(got) > longList || len(want) > longList {
		return reportLong(got, want, opts...)
	}
	diff := cmp.Diff(want, got, opts...)
	if diff == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(changed(got, want, opts...))
	b.WriteString("  want: " + List(want) + "\n")
	b.WriteString("  got:  " + List(got) + "\n")
	b.WriteString("  diff (-want +got):\n")
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// reportLong reports both lengths, the first differing index, two events of
// context either side of it in each list, and the diff of that one event.
func reportLong[E fmt.Stringer](got, want []E, opts ...cmp.Option) string {
	first := -1
	for i := 0; i < max(len(got), len(want)); i++ {
		if i >= len(got) || i >= len(want) || !cmp.Equal(want[i], got[i], opts...) {
			first = i
			break
		}
	}
	if first < 0 {
		return ""
	}
	window := func(evs []E) string {
		var parts []string
		for i := max(0, first-2); i < min(len(evs), first+3); i++ {
			parts = append(parts, fmt.Sprintf("[%d] %s", i, evs[i]))
		}
		if len(parts) == 0 {
			return "(nothing at this index)"
		}
		return strings.Join(parts, "\n        ")
	}
	var b strings.Builder
	if first < len(got) && first < len(want) {
		var fs []string
		for _, d := range diffFields(want[first], got[first]) {
			fs = append(fs, d.String())
		}
		if len(fs) > 0 {
			fmt.Fprintf(&b, "  changed: [%d] %s\n", first, strings.Join(fs, "; "))
		}
	}
	fmt.Fprintf(&b, "  want %d events, got %d; first difference at index %d\n", len(want), len(got), first)
	b.WriteString("  want: " + window(want) + "\n")
	b.WriteString("  got:  " + window(got) + "\n")
	if first < len(got) && first < len(want) {
		b.WriteString(fmt.Sprintf("  diff of [%d] (-want +got):\n", first))
		for _, l := range strings.Split(strings.TrimRight(cmp.Diff(want[first], got[first], opts...), "\n"), "\n") {
			b.WriteString("    " + l + "\n")
		}
	}
	return b.String()
}

// List renders an event list the way the reports do: "[0] FAN_OPEN ..." one
// per line, or "no event".
func List[E fmt.Stringer](evs []E) string {
	if len(evs) == 0 {
		return "no event"
	}
	var parts []string
	for i, e := range evs {
		parts = append(parts, fmt.Sprintf("[%d] %s", i, e))
	}
	return strings.Join(parts, "\n        ")
}

// check fails t with the report r, if any, headed by what was done.
func check(t TB, did, r string) bool {
	t.Helper()
	if r == "" {
		return true
	}
	t.Errorf("events differ\n  did:  %s\n%s", did, strings.TrimRight(r, "\n"))
	return false
}

// Interferer is the part of harness.T that records a comparison left
// undecided because other programs' events made every difference: the case
// becomes a skip "undecided: events from another process (...) interfered"
// (a failure with -strict) unless something else fails it.
type Interferer interface {
	Interfered(report, procs string)
}

// FSWatcher is a TB that can tell which other programs are using the
// filesystem under test right now (harness.T: ownproc.WatchFS on its
// filesystem). An inotify difference (inotify events carry no pid) is
// undecided instead of failed when, just after it, another program is seen
// using that filesystem and t is an Interferer.
type FSWatcher interface {
	OthersOnFS() ([]ownproc.Process, error)
}

// verdict is a fanotify comparison's outcome: the report ("" when equal),
// the other programs' processes whose events got holds, and whether dropping
// their events leaves exactly the wanted list.
type verdict struct {
	report    string
	procs     []ownproc.Process
	explained bool
	// pidless: the difference is among inotify events, which name no
	// process; only a watch of the filesystem afterwards (FSWatcher) can
	// say whether another program was using it.
	pidless bool
}

// fanotifyVerdict compares got with want (FanotifyEqual) and, when they
// differ, names the processes outside the suite (ownproc.Foreign) behind any
// received event. Only fanotify events carry a pid: an inotify difference
// is never put down to another program (inotify(7): no pid at all).
func fanotifyVerdict(got, want []fanotify.Event) verdict {
	v := verdict{report: FanotifyEqual(got, want)}
	if v.report == "" {
		return v
	}
	seen := map[int]bool{}
	var own []fanotify.Event
	for _, e := range got {
		p, foreign := ownproc.Foreign(e.Pid)
		if !foreign {
			own = append(own, e)
			continue
		}
		if !seen[p.Pid] {
			seen[p.Pid] = true
			v.procs = append(v.procs, p)
		}
	}
	if len(v.procs) > 0 {
		v.report += "  events from another process: " + procList(v.procs) + "\n"
		// Only a process still there, outside the suite's process tree,
		// explains a difference: a pid that exited may have been one of
		// the suite's own short-lived children that nothing recorded (an
		// actor's exec'd program), and a kernel bug must not read as
		// interference.
		alive := true
		for _, p := range v.procs {
			alive = alive && !p.Gone
		}
		v.explained = alive && FanotifyEqual(own, want) == ""
		if !alive && FanotifyEqual(own, want) == "" {
			v.report += "  (a pid that exited cannot be told from the suite's own short-lived children: counted as a failure, not as interference)\n"
		}
	}
	return v
}

// procList joins processes for a report: "pid 4123 comm updatedb, pid 4200 gone".
func procList(ps []ownproc.Process) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.String())
	}
	return strings.Join(parts, ", ")
}

// decide reports v as check does, except that a difference every part of
// which is another program's events is recorded as undecided (Interferer)
// when t can: then it returns true, the case's own events being as wanted.
func decide(t TB, did string, v verdict) bool {
	t.Helper()
	if v.report == "" {
		return true
	}
	if it, ok := t.(Interferer); ok && v.explained {
		it.Interfered(fmt.Sprintf("events differ, only by events of other programs\n  did:  %s\n%s", did, strings.TrimRight(v.report, "\n")), procList(v.procs))
		return true
	}
	if it, ok := t.(Interferer); ok && v.pidless {
		if w, ok := t.(FSWatcher); ok {
			procs, err := w.OthersOnFS()
			if err != nil {
				v.report += "  (could not watch the filesystem for other programs: " + err.Error() + ")\n"
			} else if len(procs) > 0 {
				it.Interfered(fmt.Sprintf("inotify events differ, and other programs were using files on this filesystem just after (inotify events carry no pid: the difference may be theirs)\n  did:  %s\n%s  other programs: %s", did, v.report, procList(procs)), procList(procs))
				return true
			}
		}
	}
	return check(t, did, v.report)
}

// Fanotify fails t with a readable report when got differs from want. did
// describes the setup and the operations in one line. Received events whose
// pid belongs to a process outside the suite are named; when leaving them
// out makes the lists equal, and t is an Interferer, the comparison is
// undecided instead of failed.
func Fanotify(t TB, did string, got, want []fanotify.Event) bool {
	t.Helper()
	v := fanotifyVerdict(got, want)
	if v.report != "" && countMask(got, func(e fanotify.Event) bool { return uint64(e.Mask)&unix.FAN_Q_OVERFLOW != 0 }) >
		countMask(want, func(e fanotify.Event) bool { return uint64(e.Mask)&unix.FAN_Q_OVERFLOW != 0 }) {
		v.report += "  " + limits.Overflow("fanotify", len(got)) + "\n"
		v.explained = false
	}
	return decide(t, did, v)
}

// countMask counts the events of evs that match.
func countMask[E any](evs []E, match func(E) bool) int {
	n := 0
	for _, e := range evs {
		if match(e) {
			n++
		}
	}
	return n
}

// Quiet is the window of the suite's one "quiet" check: after a case's
// last step, listen on every queue the case reads for this long and fail on
// anything that arrives. Events a syscall causes are queued before it returns
// (fsnotify() calls the backend's handler synchronously), so the window only
// guards against events from elsewhere or deferred work: long enough for a
// late event to show on an idle machine, short enough for hundreds of cases.
// Between steps a case does not wait: it drains the queue after the call
// returned and compares the list (with no event, where none is expected);
// that is a drain, never called "quiet" (so are the final checks of the
// generated fanotify_ignore and fanotify_modify_clear cases, hundreds of them).
const Quiet = 30 * time.Millisecond

// Listener is one queue a quiet check listens on (OnFanotify, OnInotify).
type Listener struct {
	name    string
	collect func(d time.Duration) (verdict, error)
}

// OnFanotify listens on group g, named name in the report ("" for none).
// Any permission event that arrives is allowed (and reported), so that no
// process stays blocked on it.
func OnFanotify(name string, g *fanotify.Group) Listener {
	return Listener{name: name, collect: func(d time.Duration) (verdict, error) {
		got, err := g.Collect(d)
		if aerr := g.Answer(got, fanotify.Allow); err == nil {
			err = aerr
		}
		return fanotifyVerdict(got, nil), err
	}}
}

// OnInotify listens on instance in, named name in the report ("" for none).
func OnInotify(name string, in *inotify.Instance) Listener {
	return Listener{name: name, collect: func(d time.Duration) (verdict, error) {
		got, err := in.Collect(d)
		r := InotifyEqual(got, nil)
		return verdict{report: r, pidless: r != "" && (overflowed(got, nil) || othersCouldAdd(got, nil))}, err
	}}
}

// QuietAll listens on every listener at once for d (one window, not one per
// queue) and fails t for each queue on which anything arrived.
func QuietAll(t TB, did string, d time.Duration, ls ...Listener) bool {
	t.Helper()
	type result struct {
		v   verdict
		err error
	}
	res := make([]result, len(ls))
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].v, res[i].err = l.collect(d)
		}()
	}
	wg.Wait()
	ok := true
	for i, l := range ls {
		what := did
		if l.name != "" {
			what += "; " + l.name
		}
		if res[i].err != nil {
			t.Errorf("%s: reading events: %v", what, res[i].err)
			ok = false
			continue
		}
		if !decide(t, fmt.Sprintf("%s; then nothing more within %v", what, d), res[i].v) {
			ok = false
		}
	}
	return ok
}

// FanotifyQuiet listens on g for d and fails t if anything arrives
// (QuietAll with one listener).
func FanotifyQuiet(t TB, did string, g *fanotify.Group, d time.Duration) bool {
	t.Helper()
	return QuietAll(t, did, d, OnFanotify("", g))
}

// InotifyQuiet listens on in for d and fails t if anything arrives
// (QuietAll with one listener).
func InotifyQuiet(t TB, did string, in *inotify.Instance, d time.Duration) bool {
	t.Helper()
	return QuietAll(t, did, d, OnInotify("", in))
}

// NormalizeCookies replaces each distinct non-zero cookie by its order of
// first appearance (1, 2, …), so a wanted list can say "these two events
// share a cookie" without knowing the kernel's value.
func NormalizeCookies(evs []inotify.Event) []inotify.Event {
	seen := map[uint32]uint32{}
	out := make([]inotify.Event, len(evs))
	for i, e := range evs {
		if e.Cookie != 0 {
			n, ok := seen[e.Cookie]
			if !ok {
				n = uint32(len(seen) + 1)
				seen[e.Cookie] = n
			}
			e.Cookie = n
		}
		out[i] = e
	}
	return out
}

// InotifyEqual compares inotify events in order after NormalizeCookies on
// the received list; wanted cookies are written as 1, 2, … by pairing.
func InotifyEqual(got, want []inotify.Event) string {
	return report(NormalizeCookies(got), want, cmp.Transformer("mask", func(m inotify.Mask) string { return m.String() }))
}

// Inotify fails t with a readable report when got differs from want.
func Inotify(t TB, did string, got, want []inotify.Event) bool {
	t.Helper()
	// Another program's events can fill the queue too: an overflow is
	// explained, and still undecided while another program is seen.
	v := verdict{report: InotifyEqual(got, want)}
	if v.report != "" {
		over := overflowed(got, want)
		if over {
			v.report += "  " + limits.Overflow("inotify", len(got)) + "\n"
		}
		v.pidless = over || othersCouldAdd(got, want)
	}
	return decide(t, did, v)
}

// othersCouldAdd reports whether got is want with events added that another
// program reading the same files could have caused: opens, reads and
// closes without writing (of files or directories), or a repeat of a wanted
// event (another program's event between two equal ones stops inotify
// merging them). A missing or changed event, a create, a move, a cookie or a
// name no such program explains.
func othersCouldAdd(got, want []inotify.Event) bool {
	const reading = unix.IN_OPEN | unix.IN_ACCESS | unix.IN_CLOSE_NOWRITE
	i := 0
	for _, e := range got {
		if i < len(want) && InotifyEqual([]inotify.Event{e}, want[i:i+1]) == "" {
			i++
			continue
		}
		m := uint32(e.Mask) &^ unix.IN_ISDIR
		repeat := false
		for _, w := range want[:i] {
			repeat = repeat || InotifyEqual([]inotify.Event{e}, []inotify.Event{w}) == ""
		}
		if !repeat && (m == 0 || m&^reading != 0) {
			return false
		}
	}
	return i == len(want)
}

// overflowed reports whether got holds more IN_Q_OVERFLOW events than want.
func overflowed(got, want []inotify.Event) bool {
	return countMask(got, func(e inotify.Event) bool { return uint32(e.Mask)&unix.IN_Q_OVERFLOW != 0 }) >
		countMask(want, func(e inotify.Event) bool { return uint32(e.Mask)&unix.IN_Q_OVERFLOW != 0 })
}
