package mutate

import (
	"bytes"
	"strings"
	"sync"

	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/tap"
)

// FirstKillWhy is the Why of the one leaf a run stopped at its first
// failing leaf records (-first-kill).
const FirstKillWhy = "the first leaf to fail that passed or skipped on the unmutated kernel: the run was stopped there (-first-kill)"

// killWatch reads the runner's TAP stream as it arrives and calls stop at
// the first result line of a leaf that passed or skipped on the unmutated
// kernel and fails now (a failure, a TIMEOUT or an ERROR; not a TODO or a
// SKIP): the judge would call the mutant killed for that leaf whatever the
// rest of the run did, so the rest is not worth its minutes (a hung
// mutant's case TIMEOUT ends its run there, not at the VM timeout).
// Leaf paths are built as runner.Leaves builds them: the "# Subtest:"
// names of the enclosing blocks, then the line's own, each a tap Key. A
// line whose path the baseline does not have never stops the run.
type killWatch struct {
	base map[string]string // leaf path -> "pass" or "skip" on the baseline
	stop func()

	mu    sync.Mutex
	buf   []byte
	stack []string // stack[d-1]: the name of the block at depth d
	first *Leaf
}

func newKillWatch(base *runner.Results, stop func()) *killWatch {
	w := &killWatch{base: map[string]string{}, stop: stop}
	for _, l := range runner.Leaves(base.Root) {
		if word := runner.ResultWord(l.Node.Status); word != "fail" {
			w.base[l.Path] = word
		}
	}
	return w
}

// Write takes the stream in any chunks; it never fails (a watcher must not
// break the run it watches).
func (w *killWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *killWatch) line(l string) {
	if w.first != nil {
		return
	}
	body := strings.TrimLeft(l, " ")
	depth := (len(l) - len(body)) / 4
	if name, ok := strings.CutPrefix(body, "# Subtest:"); ok {
		if depth < 1 {
			return
		}
		if len(w.stack) > depth-1 {
			w.stack = w.stack[:depth-1]
		}
		for len(w.stack) < depth-1 {
			w.stack = append(w.stack, "")
		}
		w.stack = append(w.stack, (&tap.Node{Name: strings.TrimSpace(name)}).Key())
		return
	}
	n, ok := tap.ResultLine(body)
	if !ok || !n.Status.Failed() || depth > len(w.stack) {
		return
	}
	path := strings.Join(append(append([]string(nil), w.stack[:depth]...), n.Key()), ".")
	before, ok := w.base[path]
	if !ok {
		return
	}
	w.first = &Leaf{Path: path, Before: before, After: "fail", Why: FirstKillWhy}
	w.stop()
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
