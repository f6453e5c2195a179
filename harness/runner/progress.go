package runner

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/fsnsuite/fsnsuite/tap"
)

// progress shows one line per binary. Live (a terminal of its own),
// finished binaries are printed once, in the order they finish, and the
// lines of the running ones plus a "waiting" count are redrawn in place below
// them every tick, so the view never needs more screen lines than -j+1. On a
// Screen (the terminal the TAP stream is written to as well) only the lines
// of the running binaries and the count are shown, as the Screen's view
// below the stream, whose result lines say how each binary ended. Not live,
// it prints one plain line as each binary finishes, with no escape codes.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	screen  *Screen
	live    bool
	rows    []*row
	drawn   int    // transient lines drawn at the bottom
	pending []*row // finished, not yet printed
	stopc   chan struct{}
	wg      sync.WaitGroup
	timeout time.Duration // a running binary's -timeout, for "left"
}

type row struct {
	name             string
	state            string
	started          time.Time
	elapsed          time.Duration
	pass, fail, skip int
}

func newProgress(w io.Writer, live bool, screen *Screen, bins []Binary, timeout time.Duration) *progress {
	p := &progress{w: w, screen: screen, live: screen != nil || live && w != nil, stopc: make(chan struct{}), timeout: timeout}
	for _, b := range bins {
		p.rows = append(p.rows, &row{name: b.Name, state: "waiting"})
	}
	return p
}

func (p *progress) start() {
	if !p.live {
		return
	}
	p.wg.Go(func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			p.mu.Lock()
			p.redrawLocked()
			p.mu.Unlock()
			select {
			case <-t.C:
			case <-p.stopc:
				return
			}
		}
	})
}

func (p *progress) stop() {
	close(p.stopc)
	p.wg.Wait()
	if p.screen != nil {
		p.screen.SetView(nil) // the summary follows the stream
		return
	}
	if p.live {
		p.mu.Lock()
		p.redrawLocked()
		p.mu.Unlock()
	}
}

func (p *progress) running(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rows[i].state = "running"
	p.rows[i].started = time.Now()
}

func (p *progress) done(i int, o *Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rows[i]
	r.elapsed = o.Elapsed
	switch o.Node.Status {
	case tap.StatusPass:
		r.state = "PASS"
	case tap.StatusSkip:
		r.state = "SKIP"
	case tap.StatusTimeout:
		r.state = "TIMEOUT"
	default:
		r.state = "FAIL"
	}
	c := o.Stream.Counts()
	r.pass, r.skip = c[tap.StatusPass]+c[tap.StatusXFail]+c[tap.StatusTodo], c[tap.StatusSkip]
	r.fail = c[tap.StatusFail] + c[tap.StatusTimeout] + c[tap.StatusError] + c[tap.StatusMissing]
	switch {
	case p.screen != nil:
	case p.live:
		p.pending = append(p.pending, r)
	case p.w != nil:
		fmt.Fprintln(p.w, r.text())
	}
}

func (r *row) text() string {
	el := r.elapsed
	if r.state == "running" {
		el = time.Since(r.started)
	}
	s := fmt.Sprintf("%-7s %-28s %4d ok %4d fail %4d skip", r.state, r.name, r.pass, r.fail, r.skip)
	if r.state != "waiting" {
		s += fmt.Sprintf(" %8.1fs", el.Seconds())
	}
	return s
}

func (p *progress) redrawLocked() {
	if p.screen != nil {
		p.screen.SetView(p.viewLocked())
		return
	}
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn) // back to the first transient line
	}
	for _, r := range p.pending {
		b.WriteString("\r\x1b[2K" + r.text() + "\n")
	}
	p.pending = nil
	view := p.viewLocked()
	for _, l := range view {
		b.WriteString("\r\x1b[2K" + l + "\n")
	}
	p.drawn = len(view)
	b.WriteString("\x1b[J") // clear what an earlier, taller view left below
	io.WriteString(p.w, b.String())
}

// viewLocked is the transient part of the view: a line per running binary
// (with the time it has left before the runner's -timeout kills it) and,
// while some wait, how many wait and how many are done.
func (p *progress) viewLocked() []string {
	var view []string
	waiting := 0
	for _, r := range p.rows {
		switch r.state {
		case "running":
			line := r.text()
			if p.timeout > 0 {
				line += fmt.Sprintf(" (%.0fs left before timeout)", max(0, (p.timeout-time.Since(r.started)).Seconds()))
			}
			view = append(view, line)
		case "waiting":
			waiting++
		}
	}
	if waiting > 0 {
		view = append(view, fmt.Sprintf("%d waiting, %d of %d done", waiting, len(p.rows)-waiting-p.runningLocked(), len(p.rows)))
	}
	return view
}

// counter returns a writer that counts the top-level result lines of binary
// i's stream as they arrive, for the live view.
func (p *progress) counter(i int) io.Writer {
	if !p.live {
		return nil
	}
	return &lineCounter{p: p, r: p.rows[i]}
}

type lineCounter struct {
	p    *progress
	r    *row
	part []byte
}

// Write counts the complete lines in b (keeping a partial one for later).
func (c *lineCounter) Write(b []byte) (int, error) {
	c.part = append(c.part, b...)
	for {
		i := bytes.IndexByte(c.part, '\n')
		if i < 0 {
			break
		}
		line := string(c.part[:i])
		c.part = c.part[i+1:]
		c.p.mu.Lock()
		switch {
		case strings.HasPrefix(line, "not ok"):
			c.r.fail++
		case strings.HasPrefix(line, "ok") && strings.Contains(strings.ToUpper(line), "# SKIP"):
			c.r.skip++
		case strings.HasPrefix(line, "ok"):
			c.r.pass++
		}
		c.p.mu.Unlock()
	}
	return len(b), nil
}

func (p *progress) runningLocked() int {
	n := 0
	for _, r := range p.rows {
		if r.state == "running" {
			n++
		}
	}
	return n
}
