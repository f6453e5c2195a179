package mutate

import (
	"bytes"
	"regexp"
	"strings"
	"sync"

	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/tap"
)

// FirstKillWhy begins the Why of the one leaf a run stopped at its first
// killing leaf records (-first-kill); the leaf's own reason follows.
const FirstKillWhy = "the first leaf to fail that passed or skipped on the unmutated kernel: the run was stopped there (-first-kill)"

// killWatch reads the runner's TAP stream as it arrives and calls stop at
// the first result line of a leaf that passed or skipped on the unmutated
// kernel and fails now (a failure, a TIMEOUT or an ERROR; not a TODO or a
// SKIP): a regression the judge (runner.CompareResults) counts whatever
// the rest of the run does, so the mutant is killed, or crashed if the run
// would have gone on to break: the same score either way, for less time (a
// hung mutant whose hung case prints its TIMEOUT ends there, not at the VM
// timeout).
//
// A result line's path is built from the "# Subtest:" names of the
// enclosing blocks, each a tap Key, as runner.Leaves builds it; a
// candidate is then confirmed by parsing the stream so far (tap.Parse,
// runner.Leaves): the run stops only if that document has a failed leaf
// of that path. The baseline's verdict of a path is that of its last leaf
// (runner.CompareResults keeps the last of duplicate paths); a path the
// baseline does not have, or fails, never stops the run.
type killWatch struct {
	base map[string]string // leaf path -> "pass", "skip" or "fail" on the baseline
	stop func()

	mu    sync.Mutex
	all   []byte   // the stream so far, for the confirmation
	line  []byte   // the line being read
	stack []string // stack[d-1]: the name of the block whose lines are at depth d
	first *Leaf
}

// subtestHeader is a "# Subtest: NAME" line, as tap.Parse reads it.
var subtestHeader = regexp.MustCompile(`^#\s*Subtest:\s*(.*)$`)

// newKillWatch returns a watch against the baseline's leaves; stop is
// called once, from Write, at the first killing leaf.
func newKillWatch(base *runner.Results, stop func()) *killWatch {
	w := &killWatch{base: map[string]string{}, stop: stop}
	for _, l := range runner.Leaves(base.Root) {
		w.base[l.Path] = runner.ResultWord(l.Node.Status)
	}
	return w
}

// Write takes the stream in any chunks; it never fails (a watcher must not
// break the run it watches).
func (w *killWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range p {
		w.all = append(w.all, c)
		if c != '\n' {
			w.line = append(w.line, c)
			continue
		}
		w.readLine(string(w.line))
		w.line = w.line[:0]
	}
	return len(p), nil
}

// readLine follows the block structure and checks a failing result line.
func (w *killWatch) readLine(raw string) {
	if w.first != nil {
		return
	}
	l := tap.Escape(strings.TrimRight(raw, "\r"))
	body := strings.TrimLeft(l, " ")
	depth := (len(l) - len(body)) / 4
	if m := subtestHeader.FindStringSubmatch(body); m != nil {
		name := strings.TrimSpace(m[1])
		if depth < 1 {
			return
		}
		w.stack = w.stack[:min(depth-1, len(w.stack))]
		for len(w.stack) < depth-1 {
			w.stack = append(w.stack, "")
		}
		w.stack = append(w.stack, (&tap.Node{Name: name}).Key())
		return
	}
	n, ok := tap.ResultLine(body)
	if !ok {
		return
	}
	// The line ends the blocks nested below its depth.
	w.stack = w.stack[:min(depth, len(w.stack))]
	if !n.Status.Failed() || depth > len(w.stack) {
		return
	}
	path := strings.Join(append(append([]string(nil), w.stack[:depth]...), n.Key()), ".")
	before, ok := w.base[path]
	if !ok || before == "fail" || !w.confirmed(path) {
		return
	}
	why := FirstKillWhy
	if _, directive, ok := strings.Cut(body, " # "); ok {
		why += ": " + strings.TrimSpace(directive)
	}
	w.first = &Leaf{Path: path, Before: before, After: "fail", Why: why}
	if w.stop != nil {
		w.stop()
	}
}

// confirmed says whether the stream so far, parsed as a document, has a
// failed leaf at path.
func (w *killWatch) confirmed(path string) bool {
	root, err := tap.Parse(bytes.NewReader(w.all))
	if err != nil {
		return false
	}
	for _, l := range runner.Leaves(root) {
		if l.Path == path && l.Node.Status.Failed() {
			return true
		}
	}
	return false
}

// stream is what the watch has read.
func (w *killWatch) stream() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.all...)
}

// killed is the leaf the run was stopped at, nil when it was not.
func (w *killWatch) killed() *Leaf {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first
}
