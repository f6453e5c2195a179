package coverage

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Change is one line a patch added or modified, numbered in the new file.
type Change struct {
	Path string // relative to the tree, e.g. "fs/notify/mark.c"
	Line int
	Text string
}

// Removal counts the lines a patch removed from a file without adding any in
// their place (a pure deletion: no line of the new file to look up).
type Removal struct {
	Path  string
	After int // the new file's line the deletion follows (0: at the top)
	Lines int
}

// ParseDiff reads a unified diff (`git diff` output, any -U) and returns the
// lines it adds, in diff order, and the pure deletions. Paths are the "+++ b/"
// side with the "b/" prefix removed; a deleted file ("+++ /dev/null") has no
// new lines.
func ParseDiff(r io.Reader) ([]Change, []Removal, error) {
	var (
		changes  []Change
		removals []Removal
		file     string
		newLine  int  // next line number in the new file
		inHunk   bool // inside a hunk
		oldLeft  int  // old-side lines left in the hunk
		newLeft  int  // new-side lines left in the hunk
		removed  int  // "-" lines of the current change block
		added    int  // "+" lines of the current change block
	)
	// A change block is a run of "+" and "-" lines between context lines;
	// one with no "+" line is a pure deletion.
	flush := func() {
		if removed > 0 && added == 0 && file != "" {
			removals = append(removals, Removal{Path: file, After: newLine - 1, Lines: removed})
		}
		removed, added = 0, 0
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		s := sc.Text()
		if inHunk && (oldLeft > 0 || newLeft > 0) {
			switch {
			case strings.HasPrefix(s, "+"):
				changes = append(changes, Change{Path: file, Line: newLine, Text: s[1:]})
				newLine++
				newLeft--
				added++
			case strings.HasPrefix(s, "-"):
				removed++
				oldLeft--
			case strings.HasPrefix(s, " ") || s == "":
				flush()
				newLine++
				oldLeft--
				newLeft--
			case strings.HasPrefix(s, `\`): // "\ No newline at end of file"
			default:
				return nil, nil, fmt.Errorf("coverage: diff line %d: unexpected %q inside a hunk", n, s)
			}
			if oldLeft <= 0 && newLeft <= 0 {
				flush()
				inHunk = false
			}
			continue
		}
		switch {
		case strings.HasPrefix(s, `\`):
		case strings.HasPrefix(s, "diff "):
			file, inHunk = "", false
		case strings.HasPrefix(s, "+++ "):
			p := strings.TrimPrefix(s, "+++ ")
			if i := strings.IndexByte(p, '\t'); i >= 0 {
				p = p[:i]
			}
			switch {
			case p == "/dev/null":
				file = ""
			case strings.HasPrefix(p, "b/"):
				file = p[2:]
			default:
				file = p
			}
		case strings.HasPrefix(s, "@@ "):
			o, nw, start, err := parseHunkHeader(s)
			if err != nil {
				return nil, nil, fmt.Errorf("coverage: diff line %d: %w", n, err)
			}
			inHunk, oldLeft, newLeft, newLine = true, o, nw, start
			removed, added = 0, 0
			if nw == 0 {
				// "+c,0": the deletion follows line c of the new file.
				newLine = start + 1
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("coverage: reading the diff: %w", err)
	}
	if inHunk && (oldLeft > 0 || newLeft > 0) {
		return nil, nil, fmt.Errorf("coverage: the diff ends inside a hunk of %s (%d old and %d new lines missing)", file, oldLeft, newLeft)
	}
	return changes, removals, nil
}

// parseHunkHeader reads "@@ -a[,b] +c[,d] @@ ..." and returns b, d and c.
func parseHunkHeader(s string) (oldLines, newLines, newStart int, err error) {
	f := strings.Fields(s)
	if len(f) < 4 || f[0] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") || f[3] != "@@" {
		return 0, 0, 0, fmt.Errorf("malformed hunk header %q", s)
	}
	_, oldLines, err1 := parseRange(f[1][1:])
	newStart, newLines, err2 := parseRange(f[2][1:])
	if err1 != nil || err2 != nil {
		return 0, 0, 0, fmt.Errorf("malformed hunk header %q", s)
	}
	return oldLines, newLines, newStart, nil
}

// parseRange reads "start[,count]" (count 1 when absent).
func parseRange(s string) (start, count int, err error) {
	a, b, found := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil {
		return 0, 0, err
	}
	count = 1
	if found {
		if count, err = strconv.Atoi(b); err != nil {
			return 0, 0, err
		}
	}
	return start, count, nil
}

// Status says what the suite did with a changed line.
type Status int

// The statuses of a changed line.
const (
	// Executed: the line ran at least once.
	Executed Status = iota
	// NotExecuted: the line is instrumented and never ran.
	NotExecuted
	// NoCode: the file is instrumented but gcov has no record for the
	// line (a comment, a declaration, a blank line, a brace).
	NoCode
	// NotInstrumented: the file has no coverage data at all (outside
	// fs/notify, or a header whose inline code only runs in
	// uninstrumented files).
	NotInstrumented
)

func (s Status) String() string {
	switch s {
	case Executed:
		return "executed"
	case NotExecuted:
		return "NOT EXECUTED"
	case NoCode:
		return "no code"
	case NotInstrumented:
		return "not instrumented"
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// Checked is a changed line and what the suite did with it.
type Checked struct {
	Change
	Status Status
	Count  int64  // times run, for Executed
	Boot   int64  // times run before the baseline (Profile.Since)
	Func   string // the function gcov attributes the line to, if any
	// By is how often it ran during each binary (per-binary snapshots).
	By map[string]int64
}

// Check looks every change up in the profile.
func (p *Profile) Check(changes []Change) []Checked {
	out := make([]Checked, 0, len(changes))
	for _, c := range changes {
		k := Checked{Change: c, Status: NotInstrumented}
		if f := p.Files[c.Path]; f != nil {
			k.Status = NoCode
			if l := f.Lines[c.Line]; l != nil {
				k.Func = l.Func
				k.Count, k.Boot, k.By = l.Count, l.Boot, l.By
				k.Status = NotExecuted
				if l.Count > 0 {
					k.Status = Executed
				}
			}
		}
		out = append(out, k)
	}
	return out
}
