package coverage

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Dnotify is the part of fs/notify reported apart: dnotify is not reachable
// through inotify or fanotify, so the suite does not aim at it.
const Dnotify = "fs/notify/dnotify/"

// InNotify reports whether a path is fs/notify without dnotify.
func InNotify(p string) bool {
	return strings.HasPrefix(p, "fs/notify/") && !strings.HasPrefix(p, Dnotify)
}

// InDnotify reports whether a path is under fs/notify/dnotify.
func InDnotify(p string) bool { return strings.HasPrefix(p, Dnotify) }

// Outside reports whether a path is outside fs/notify (headers such as
// include/linux/fsnotify_backend.h whose inline functions fs/notify uses).
func Outside(p string) bool { return !strings.HasPrefix(p, "fs/notify/") }

// FsnotifyHeader reports whether a path is one of include/linux/fsnotify*.h,
// the headers fs/notify shares with the rest of the kernel.
func FsnotifyHeader(p string) bool {
	return strings.HasPrefix(p, "include/linux/fsnotify") && strings.HasSuffix(p, ".h")
}

// Total sums the line and function counts of the files accepted by keep.
func (p *Profile) Total(keep func(string) bool) (lines, funcs Counts) {
	for _, name := range p.Paths(keep) {
		f := p.Files[name]
		lines = lines.Add(f.LineCounts())
		funcs = funcs.Add(f.FuncCounts())
	}
	return lines, funcs
}

// WriteSummary prints the per-file table: fs/notify without dnotify and its
// total, dnotify apart, then include/linux/fsnotify*.h and, in one row, the
// other headers outside fs/notify (the lines of their inline functions
// compiled into fs/notify's objects; not in the total).
func (p *Profile) WriteSummary(w io.Writer) error {
	type row struct {
		name         string
		lines, funcs Counts
	}
	var rows []row
	for _, name := range p.Paths(InNotify) {
		f := p.Files[name]
		rows = append(rows, row{name, f.LineCounts(), f.FuncCounts()})
	}
	l, fn := p.Total(InNotify)
	rows = append(rows, row{"fs/notify without dnotify", l, fn})
	if len(p.Paths(InNotify)) < len(p.Files) {
		rows = append(rows, row{}) // a blank line before what is apart
	}
	for _, name := range p.Paths(InDnotify) {
		f := p.Files[name]
		rows = append(rows, row{name + " (apart)", f.LineCounts(), f.FuncCounts()})
	}
	for _, name := range p.Paths(FsnotifyHeader) {
		f := p.Files[name]
		rows = append(rows, row{name + " (inlined, apart)", f.LineCounts(), f.FuncCounts()})
	}
	others := p.Paths(func(n string) bool { return Outside(n) && !FsnotifyHeader(n) })
	if len(others) > 0 {
		var l, fn Counts
		for _, name := range others {
			l = l.Add(p.Files[name].LineCounts())
			fn = fn.Add(p.Files[name].FuncCounts())
		}
		rows = append(rows, row{fmt.Sprintf("%d other headers (inlined, apart)", len(others)), l, fn})
	}
	width := len("file")
	for _, r := range rows {
		width = max(width, len(r.name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %11s  %7s  %9s  %7s\n", width, "file", "lines", "", "functions", "")
	for _, r := range rows {
		if r.name == "" {
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "%-*s  %11s  %5.1f %%  %9s  %5.1f %%\n", width, r.name,
			fmt.Sprintf("%d/%d", r.lines.Hit, r.lines.Total), r.lines.Percent(),
			fmt.Sprintf("%d/%d", r.funcs.Hit, r.funcs.Total), r.funcs.Percent())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteUnexecuted lists, per file accepted by keep, the functions never
// entered, with their line ranges.
func (p *Profile) WriteUnexecuted(w io.Writer, keep func(string) bool) (n int, err error) {
	var b strings.Builder
	for _, name := range p.Paths(keep) {
		var names []string
		for _, fn := range p.Files[name].SortedFuncs() {
			if fn.Count == 0 {
				boot := ""
				if fn.Boot > 0 {
					boot = ", ran at boot only"
				}
				names = append(names, fmt.Sprintf("%s (%d-%d%s)", fn.Name, fn.StartLine, fn.EndLine, boot))
			}
		}
		if len(names) == 0 {
			continue
		}
		n += len(names)
		fmt.Fprintf(&b, "  %s: %s\n", name, strings.Join(names, ", "))
	}
	_, err = io.WriteString(w, b.String())
	return n, err
}

// WriteFunctions prints every function of the files accepted by keep with
// its line coverage (lines run / instrumented lines gcov attributes to it)
// and its entry count.
func (p *Profile) WriteFunctions(w io.Writer, keep func(string) bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range p.Paths(keep) {
		f := p.Files[name]
		fmt.Fprintf(tw, "%s\t\t\t\t\n", name)
		for _, fn := range f.SortedFuncs() {
			c := f.FuncLines(fn.Name)
			mark := ""
			switch {
			case fn.Count == 0 && fn.Boot > 0:
				mark = "never executed (ran at boot only)"
			case fn.Count == 0:
				mark = "never executed"
			}
			fmt.Fprintf(tw, "  %s\t%d-%d\t%s\tentered %d\t%s\n", fn.Name, fn.StartLine, fn.EndLine, c, fn.Count, mark)
		}
	}
	return tw.Flush()
}

// WriteChanges prints every changed line with its status and a one-line
// verdict: how many of the patch's lines with code ran.
func WriteChanges(w io.Writer, checked []Checked, removals []Removal) error {
	var b strings.Builder
	var ran, code, outside int
	for _, c := range checked {
		detail := ""
		switch c.Status {
		case Executed:
			ran++
			code++
			detail = fmt.Sprintf(" (%d times, in %s)", c.Count, c.Func)
			if len(c.By) > 0 {
				detail = fmt.Sprintf(" (%d times, in %s; by %s)", c.Count, c.Func, ByString(c.By))
			}
		case NotExecuted:
			code++
			var d []string
			if c.Func != "" {
				d = append(d, "in "+c.Func)
			}
			if c.Boot > 0 {
				d = append(d, fmt.Sprintf("ran %d times at boot only", c.Boot))
			}
			if len(d) > 0 {
				detail = " (" + strings.Join(d, ", ") + ")"
			}
		case NotInstrumented:
			outside++
		}
		fmt.Fprintf(&b, "  %s:%d: %s%s: %s\n", c.Path, c.Line, c.Status, detail, strings.TrimSpace(c.Text))
	}
	for _, r := range removals {
		fmt.Fprintf(&b, "  %s: %d line(s) removed after line %d (nothing left to run)\n", r.Path, r.Lines, r.After)
	}
	switch {
	case len(checked) == 0 && len(removals) == 0:
		b.WriteString("  the patch changes no line of fs/notify or include/linux/fsnotify*.h\n")
	case code == 0:
		fmt.Fprintf(&b, "  verdict: none of the %d changed lines is instrumented code (%d outside the instrumented files)\n", len(checked), outside)
	default:
		fmt.Fprintf(&b, "  verdict: %d of the %d changed lines with code ran (%.1f %%); %d not executed; %d no code; %d not instrumented\n",
			ran, code, 100*float64(ran)/float64(code), code-ran, len(checked)-code-outside, outside)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
