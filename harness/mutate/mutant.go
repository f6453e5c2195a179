package mutate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Mutant is one single-line change of one source file.
type Mutant struct {
	// ID names the mutant stably: a hash of its file, function, operator,
	// the original and mutated line (blanks trimmed) and which of the
	// identical changes in the file it is, so it survives edits elsewhere
	// in the file (line numbers do not).
	ID string `json:"id"`
	// File is relative to the kernel tree, e.g. "fs/notify/mark.c".
	File string `json:"file"`
	Line int    `json:"line"`
	Func string `json:"func"`
	Op   string `json:"op"`
	// Orig and New are the whole line before and after.
	Orig string `json:"orig"`
	New  string `json:"new"`
	// Diff is the change as a unified diff with 3 lines of context.
	Diff string `json:"diff"`
}

// Where is "file:line".
func (m *Mutant) Where() string { return fmt.Sprintf("%s:%d", m.File, m.Line) }

// Generate returns every mutant of the file (rel is its path relative to the
// kernel tree, src its content), in line order. keep, when not nil, selects
// the lines to mutate (BASE=: the lines a patch changed).
func Generate(rel, src string, keep func(line int) bool) []Mutant {
	lines := Scan(src)
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.Text
	}
	var out []Mutant
	seen := map[string]int{}
	prev := ""
	for i, l := range lines {
		if !l.InBody || l.Directive || l.Func == "" {
			if !l.Directive {
				prev = ""
			}
			continue
		}
		p := prev
		if code := strings.TrimSpace(l.Code); code != "" {
			prev = code
		}
		if keep != nil && !keep(i+1) {
			continue
		}
		for _, e := range lineEdits(l, p) {
			key := strings.Join([]string{rel, l.Func, e.op, strings.TrimSpace(l.Text), strings.TrimSpace(e.new)}, "\x00")
			k := seen[key]
			seen[key]++
			sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d", key, k)))
			out = append(out, Mutant{
				ID:   hex.EncodeToString(sum[:5]),
				File: rel, Line: i + 1, Func: l.Func, Op: e.op,
				Orig: l.Text, New: e.new,
				Diff: unifiedDiff(rel, texts, i, e.new),
			})
		}
	}
	return out
}

// unifiedDiff is the one-line change of line i (0-based) to repl as `git
// diff` prints it.
func unifiedDiff(rel string, lines []string, i int, repl string) string {
	from := max(i-3, 0)
	to := min(i+4, len(lines))
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n@@ -%d,%d +%d,%d @@\n", rel, rel, from+1, to-from, from+1, to-from)
	for j := from; j < to; j++ {
		if j == i {
			fmt.Fprintf(&b, "-%s\n+%s\n", lines[j], repl)
			continue
		}
		fmt.Fprintf(&b, " %s\n", lines[j])
	}
	return b.String()
}

// SourceFiles lists the C files of fs/notify under the kernel tree ksrc
// (.c and .h, relative paths, sorted), dnotify left out.
func SourceFiles(ksrc string) ([]string, error) {
	var out []string
	root := filepath.Join(ksrc, "fs", "notify")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(ksrc, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "fs/notify/dnotify" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".c") || strings.HasSuffix(rel, ".h") {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("mutate: listing fs/notify in %s: %w", ksrc, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("mutate: no C file under %s", root)
	}
	sort.Strings(out)
	return out, nil
}

// GenerateTree returns every mutant of fs/notify in ksrc (dnotify left
// out). lines, when not nil, maps a file to the lines that may be mutated
// (BASE=): a file it does not name has none.
func GenerateTree(ksrc string, lines map[string]map[int]bool) ([]Mutant, error) {
	files, err := SourceFiles(ksrc)
	if err != nil {
		return nil, err
	}
	var out []Mutant
	for _, rel := range files {
		var keep func(int) bool
		if lines != nil {
			set := lines[rel]
			if len(set) == 0 {
				continue
			}
			keep = func(n int) bool { return set[n] }
		}
		b, err := os.ReadFile(filepath.Join(ksrc, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("mutate: %w", err)
		}
		out = append(out, Generate(rel, string(b), keep)...)
	}
	return out, nil
}

// Sample returns n mutants drawn from ms with a generator seeded by seed
// (the same ms, n and seed give the same sample), in the order drawn: the
// first k of a sample of n are the sample of k, so a run cut short after k
// mutants has run a random sample of all of ms, not of its first files.
// n <= 0 or n >= len(ms) returns all of them, in the order drawn too.
func Sample(ms []Mutant, n int, seed uint64) []Mutant {
	if n <= 0 || n >= len(ms) {
		n = len(ms)
	}
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	r := rand.New(rand.NewPCG(seed, 0x6673_6e73_7569_7465)) // "fsnsuite"
	r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	idx = idx[:n]
	out := make([]Mutant, n)
	for i, k := range idx {
		out[i] = ms[k]
	}
	return out
}

// Select returns the mutants of ms whose ID is in ids, in the order of ids (an id given twice runs once);
// an ID that names none is an error.
func Select(ms []Mutant, ids []string) ([]Mutant, error) {
	byID := map[string]*Mutant{}
	for i := range ms {
		byID[ms[i].ID] = &ms[i]
	}
	var out []Mutant
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue // one run per mutant (each has one results directory)
		}
		seen[id] = true
		m := byID[id]
		if m == nil {
			return nil, fmt.Errorf("mutate: no mutant %s in this source (fsnsuite mutants -list lists them)", id)
		}
		out = append(out, *m)
	}
	return out, nil
}
