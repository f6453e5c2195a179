package harness

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/envfault"
)

// stdoutWriter is the binary's stdout as the supervisor writes it: it keeps
// the first write error (a full disk, /dev/full, a closed pipe with SIGPIPE
// caught) and drops everything after it, so that the binary can say on
// stderr that its stream is incomplete and exit non-zero (run): an output
// that could not be written is never a pass.
type stdoutWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// Write passes p on until the first error; after it, it drops p. It reports
// success either way: what failed is said once, at the end.
func (s *stdoutWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return len(p), nil
	}
	if _, err := s.w.Write(p); err != nil {
		s.err = err
	}
	return len(p), nil
}

// Err is the first write error, nil when every write succeeded.
func (s *stdoutWriter) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// caseOutput is the case process's stdout as the supervisor receives it (a
// pipe): each byte goes on to the binary's stdout as it comes, and the
// supervisor learns which top-level result lines the case process wrote, so
// that a case whose result made it out before the process was killed (or
// died) is never reported twice, and a case whose result did not is.
type caseOutput struct {
	mu      sync.Mutex
	out     io.Writer
	partial []byte
	results map[int]outcome // by result number (case index + 1)
	// writing is when the write to out in progress began (UnixNano), 0
	// when none is: a reader of the binary's stdout that does not read (a
	// paused pager, a slow console) holds it, and the case process, whose
	// pipe then fills, blocks writing its results (writingFor).
	writing atomic.Int64
}

func newCaseOutput(out io.Writer) *caseOutput {
	return &caseOutput{out: out, results: map[int]outcome{}}
}

// resultLine matches a top-level TAP/KTAP result line (a nested block's are
// indented).
var resultLine = regexp.MustCompile(`^(not )?ok ([0-9]+)\b(.*)$`)

// Write forwards p and notes the result lines it completes; it always
// succeeds (a failed write to stdout is the stdoutWriter's to report).
func (c *caseOutput) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writing.Store(time.Now().UnixNano())
	c.out.Write(p)
	c.writing.Store(0)
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		if m := resultLine.FindSubmatch(c.partial[:i]); m != nil {
			n, _ := strconv.Atoi(string(m[2]))
			o := passed
			_, skip, isSkip := bytes.Cut(m[3], []byte(" # SKIP"))
			switch {
			case len(m[1]) > 0:
				o = failed
			case isSkip && envfault.IsReason(string(bytes.TrimSpace(skip))):
				o = envSkipped
			case isSkip:
				o = skipped
			}
			c.results[n] = o
		}
		c.partial = c.partial[i+1:]
	}
	return len(p), nil
}

// writingFor is how long the write of the case process's output to the
// binary's stdout has been going on, 0 when none is.
func (c *caseOutput) writingFor() time.Duration {
	if t := c.writing.Load(); t != 0 {
		return time.Since(time.Unix(0, t))
	}
	return 0
}

// result reports whether the case process wrote result number n, and which.
func (c *caseOutput) result(n int) (outcome, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.results[n]
	return o, ok
}

// endLine ends a line the case process left unfinished when it died, so
// that what the supervisor writes next starts a line of its own.
func (c *caseOutput) endLine() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.partial) > 0 {
		fmt.Fprintln(c.out)
		c.partial = nil
	}
}
