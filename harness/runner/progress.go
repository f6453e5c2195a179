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

// progress shows one line per binary. Live (a terminal: a Screen), the
// lines of the running binaries plus a "waiting" count are the Screen's
// view, redrawn in place every tick, erased before each redraw and cut to
// the terminal's width, so the view never needs more screen lines than -j+1
// and leaves nothing behind. When the Screen carries the TAP stream as well
// (stdout and stderr one terminal), the stream's result lines say how each
// binary ended; otherwise (stdout redirected) a line per finished binary is
// printed above the view, once, in the order they finish. Not live, it
// prints that line as each binary finishes, with no escape codes but the
// verdict's colour when asked for.
type progress struct {
	mu         sync.Mutex
	w          io.Writer // not live: where the plain lines go
	screen     *Screen   // live: the terminal the view is drawn on
	ownScreen  bool      // the screen was made here (closed by stop)
	printsDone bool      // a line per finished binary goes above the view
	live       bool
	colour     bool
	rows       []*row
	nameWidth  int
	stopc      chan struct{}
	wg         sync.WaitGroup
	timeout    time.Duration // a running binary's -timeout, for "of 300s"
}

type row struct {
	name             string
	state            string
	started          time.Time
	elapsed          time.Duration
	pass, fail, skip int
	reported         int // ok cases whose figures no gate decided
}

func newProgress(opt Options, bins []Binary) *progress {
	p := &progress{w: opt.Progress, screen: opt.Screen, colour: opt.Colour, stopc: make(chan struct{}), timeout: opt.Timeout}
	switch {
	case p.screen != nil:
		p.printsDone = opt.Out != io.Writer(opt.Screen)
	case opt.Live && opt.Progress != nil:
		p.screen, p.ownScreen, p.printsDone = NewScreen(opt.Progress, nil), true, true
	}
	p.live = p.screen != nil
	for _, b := range bins {
		p.rows = append(p.rows, &row{name: b.Name, state: "waiting"})
		p.nameWidth = max(p.nameWidth, len(b.Name))
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
			p.screen.SetView(p.viewLocked())
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
	if !p.live {
		return
	}
	p.screen.SetView(nil) // the summary follows
	if p.ownScreen {
		p.screen.Close()
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
	switch {
	case o.notRun():
		r.state = "not run"
	case o.Node.Status == tap.StatusPass:
		r.state = "PASS"
	case o.Node.Status == tap.StatusSkip:
		r.state = "SKIP"
	case o.Node.Status == tap.StatusTimeout:
		r.state = "TIMEOUT"
	default:
		r.state = "FAIL"
	}
	c := countLeaves(o.Stream)
	r.pass, r.fail, r.skip, r.reported = c.pass, c.fail, c.skip, c.reported
	switch {
	case o.notRun():
		// An interrupt kept it from starting: the summary names these
		// together, and the screen keeps its rows for the summary.
	case p.live && p.printsDone:
		p.screen.Print(r.text(p.nameWidth, 0, p.colour))
	case !p.live && p.w != nil:
		fmt.Fprintln(p.w, r.text(p.nameWidth, 0, p.colour))
	}
}

// text is the row's line: its state (coloured when colour), name, counts and
// time; a running binary's time is followed by its -timeout ("of 300s").
func (r *row) text(nameWidth int, timeout time.Duration, colour bool) string {
	el := r.elapsed
	if r.state == "running" {
		el = time.Since(r.started)
	}
	s := fmt.Sprintf("%s %-*s %4d ok %4d fail %4d skip", paint(fmt.Sprintf("%-7s", r.state), colour), nameWidth, r.name, r.pass, r.fail, r.skip)
	if r.reported > 0 {
		s += fmt.Sprintf(" %4d reported", r.reported)
	}
	if r.state != "waiting" && r.state != "not run" {
		s += fmt.Sprintf(" %6.1fs", el.Seconds())
	}
	if r.state == "running" && timeout > 0 {
		s += fmt.Sprintf(" of %ss", seconds(timeout))
	}
	return s
}

// viewLocked is the transient part of the view: a line per running binary
// (with the runner's -timeout that will kill it: "12.5s of 300s") and,
// while some wait, how many wait and how many are done.
func (p *progress) viewLocked() []string {
	var view []string
	waiting := 0
	for _, r := range p.rows {
		switch r.state {
		case "running":
			view = append(view, r.text(p.nameWidth, p.timeout, p.colour))
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
	p        *progress
	r        *row
	part     []byte
	reported bool // the result line to come is of a case reported, not gated
}

// Write counts the complete lines in b (keeping a partial one for later):
// an ok line after a "reported, not gated:" diagnostic counts as reported,
// as in the closing summary, not as ok.
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
		case strings.HasPrefix(line, "# "+tap.ReportedMarker):
			c.reported = true
		case strings.HasPrefix(line, "not ok"):
			c.r.fail++
			c.reported = false
		case strings.HasPrefix(line, "ok") && strings.Contains(strings.ToUpper(line), "# SKIP"):
			c.r.skip++
			c.reported = false
		case strings.HasPrefix(line, "ok") && c.reported:
			c.r.reported++
			c.reported = false
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
