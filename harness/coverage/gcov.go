// Package coverage turns gcov's line data for a kernel's fs/notify into the
// report `make coverage` prints: per-file and per-function line coverage, the
// never-executed functions, and, for a patch, whether each line it changed was
// executed.
//
// The input is gcov's JSON intermediate format (gcc >= 9: `gcov --json-format
// --stdout`), one document per object file; Profile merges them, keyed by the
// source path relative to the kernel tree. The kernel side (building with
// GCOV_PROFILE, reading /sys/kernel/debug/gcov in the guest) is in
// scripts/coverage and harness/vm.
package coverage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// Line is one instrumented source line.
type Line struct {
	// Count is how many times the line ran (summed over object files that
	// contain it, e.g. a header's inline function).
	Count int64
	// Boot is, in a profile made by Since, how many times the line ran
	// before the baseline snapshot (at boot, before the runner started).
	Boot int64
	// Func is the function the line belongs to ("" when gcov names none).
	Func string
	// By is, where the run took a snapshot after each binary
	// (AttributeBinaries), how many times the line ran during each.
	By map[string]int64
}

// Func is one instrumented function.
type Func struct {
	Name      string
	StartLine int
	EndLine   int
	// Count is how many times the function was entered (summed over
	// object files).
	Count int64
	// Boot is, in a profile made by Since, how many times the function was
	// entered before the baseline snapshot.
	Boot int64
}

// File is the coverage of one source file.
type File struct {
	// Path is relative to the kernel source tree, e.g. "fs/notify/mark.c".
	Path  string
	Lines map[int]*Line
	Funcs map[string]*Func
}

// Profile is the merged coverage of every object file given to Add.
type Profile struct {
	Files map[string]*File
}

// NewProfile returns an empty profile.
func NewProfile() *Profile { return &Profile{Files: map[string]*File{}} }

// gcovDoc is the part of gcov's JSON format (format_version "1", gcc 9 to
// 14) that the report needs.
type gcovDoc struct {
	FormatVersion string `json:"format_version"`
	Cwd           string `json:"current_working_directory"`
	DataFile      string `json:"data_file"`
	Files         []struct {
		File  string `json:"file"`
		Lines []struct {
			LineNumber   int    `json:"line_number"`
			Count        int64  `json:"count"`
			FunctionName string `json:"function_name"`
		} `json:"lines"`
		Functions []struct {
			Name           string `json:"name"`
			StartLine      int    `json:"start_line"`
			EndLine        int    `json:"end_line"`
			ExecutionCount int64  `json:"execution_count"`
		} `json:"functions"`
	} `json:"files"`
}

// Add reads every gcov JSON document in r (gcov prints one per data file)
// and merges it into p. rel maps a source path as gcov names it (absolute,
// or relative to the compilation directory, which Add joins first) to the
// path relative to the kernel tree; a file for which rel returns false is
// left out (e.g. a header outside the tree).
func (p *Profile) Add(r io.Reader, rel func(string) (string, bool)) error {
	dec := json.NewDecoder(r)
	docs := 0
	for {
		var d gcovDoc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("coverage: gcov JSON document %d: %w", docs+1, err)
		}
		docs++
		if d.FormatVersion == "" {
			return fmt.Errorf("coverage: gcov JSON document %d (%s) has no format_version: not gcov --json-format output", docs, d.DataFile)
		}
		for _, f := range d.Files {
			src := f.File
			if !path.IsAbs(src) && d.Cwd != "" {
				src = path.Join(d.Cwd, src)
			}
			src = path.Clean(src)
			name, ok := rel(src)
			if !ok {
				continue
			}
			file := p.Files[name]
			if file == nil {
				file = &File{Path: name, Lines: map[int]*Line{}, Funcs: map[string]*Func{}}
				p.Files[name] = file
			}
			for _, l := range f.Lines {
				if have := file.Lines[l.LineNumber]; have != nil {
					have.Count += l.Count
					if have.Func == "" {
						have.Func = l.FunctionName
					}
					continue
				}
				file.Lines[l.LineNumber] = &Line{Count: l.Count, Func: l.FunctionName}
			}
			for _, fn := range f.Functions {
				if have := file.Funcs[fn.Name]; have != nil {
					have.Count += fn.ExecutionCount
					continue
				}
				file.Funcs[fn.Name] = &Func{Name: fn.Name, StartLine: fn.StartLine, EndLine: fn.EndLine, Count: fn.ExecutionCount}
			}
		}
	}
	if docs == 0 {
		return errors.New("coverage: no gcov JSON document in the input")
	}
	return nil
}

// Since returns what ran between two snapshots of the same kernel's
// counters: p (the later one) minus base, line by line and function by
// function, with base's counts kept in Boot. gcov counters only grow, so a
// negative difference means the snapshots are not of one run: an error.
func (p *Profile) Since(base *Profile) (*Profile, error) {
	out := NewProfile()
	for name, f := range p.Files {
		b := base.Files[name]
		nf := &File{Path: name, Lines: map[int]*Line{}, Funcs: map[string]*Func{}}
		for n, l := range f.Lines {
			nl := *l
			if b != nil && b.Lines[n] != nil {
				nl.Boot = b.Lines[n].Count
				nl.Count -= nl.Boot
			}
			if nl.Count < 0 {
				return nil, fmt.Errorf("coverage: %s:%d ran %d times at the start and %d at the end: the snapshots are not of one run", name, n, nl.Boot, l.Count)
			}
			nf.Lines[n] = &nl
		}
		for n, fn := range f.Funcs {
			nfn := *fn
			if b != nil && b.Funcs[n] != nil {
				nfn.Boot = b.Funcs[n].Count
				nfn.Count -= nfn.Boot
			}
			if nfn.Count < 0 {
				return nil, fmt.Errorf("coverage: %s: %s entered %d times at the start and %d at the end: the snapshots are not of one run", name, n, nfn.Boot, fn.Count)
			}
			nf.Funcs[n] = &nfn
		}
		out.Files[name] = nf
	}
	return out, nil
}

// WithBoot returns the profile's counts with the baseline added back (what
// ran from boot to the end), for figures measured without a baseline.
func (p *Profile) WithBoot() *Profile {
	out := NewProfile()
	for name, f := range p.Files {
		nf := &File{Path: name, Lines: map[int]*Line{}, Funcs: map[string]*Func{}}
		for n, l := range f.Lines {
			nf.Lines[n] = &Line{Count: l.Count + l.Boot, Func: l.Func}
		}
		for n, fn := range f.Funcs {
			nf.Funcs[n] = &Func{Name: fn.Name, StartLine: fn.StartLine, EndLine: fn.EndLine, Count: fn.Count + fn.Boot}
		}
		out.Files[name] = nf
	}
	return out
}

// TreeRel returns a rel function for Add: paths under root (the source tree
// the kernel was built from) become relative to it; others are left out.
func TreeRel(root string) func(string) (string, bool) {
	root = path.Clean(root)
	return func(p string) (string, bool) {
		r, ok := strings.CutPrefix(p, root+"/")
		return r, ok
	}
}

// Counts is a covered/total pair.
type Counts struct {
	Hit, Total int
}

// Add returns the sum of c and o.
func (c Counts) Add(o Counts) Counts { return Counts{c.Hit + o.Hit, c.Total + o.Total} }

// String prints "hit/total pct %", or "-" for nothing instrumented.
func (c Counts) String() string {
	if c.Total == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d %5.1f %%", c.Hit, c.Total, c.Percent())
}

// Percent is 100*Hit/Total (0 when Total is 0).
func (c Counts) Percent() float64 {
	if c.Total == 0 {
		return 0
	}
	return 100 * float64(c.Hit) / float64(c.Total)
}

// LineCounts counts f's instrumented lines and those that ran.
func (f *File) LineCounts() Counts {
	var c Counts
	for _, l := range f.Lines {
		c.Total++
		if l.Count > 0 {
			c.Hit++
		}
	}
	return c
}

// FuncCounts counts f's functions and those that were entered.
func (f *File) FuncCounts() Counts {
	var c Counts
	for _, fn := range f.Funcs {
		c.Total++
		if fn.Count > 0 {
			c.Hit++
		}
	}
	return c
}

// FuncLines counts the instrumented lines gcov attributes to the function
// name and those that ran.
func (f *File) FuncLines(name string) Counts {
	var c Counts
	for _, l := range f.Lines {
		if l.Func != name {
			continue
		}
		c.Total++
		if l.Count > 0 {
			c.Hit++
		}
	}
	return c
}

// SortedFuncs returns f's functions in source order.
func (f *File) SortedFuncs() []*Func {
	fs := make([]*Func, 0, len(f.Funcs))
	for _, fn := range f.Funcs {
		fs = append(fs, fn)
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].StartLine != fs[j].StartLine {
			return fs[i].StartLine < fs[j].StartLine
		}
		return fs[i].Name < fs[j].Name
	})
	return fs
}

// Paths returns the profile's file paths accepted by keep, sorted.
func (p *Profile) Paths(keep func(string) bool) []string {
	var ps []string
	for name := range p.Files {
		if keep == nil || keep(name) {
			ps = append(ps, name)
		}
	}
	sort.Strings(ps)
	return ps
}
