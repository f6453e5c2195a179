package runner

import (
	"bufio"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Binary is one test program the runner drives.
type Binary struct {
	// Name is the TAP name of the binary's block (the runtest tag, or the file name).
	Name string
	// Path is the executable.
	Path string
	// Args are extra arguments (from a runtest line), placed after the
	// runner's pass-through flags so that they win.
	Args []string
	// Verbatim runs Path with Args alone, without the runner's
	// pass-through flags: a runtest line naming a program that is not one
	// of ours (sh -c '...', a script, a program of another suite), which
	// would take a -timeout or -strict put before its arguments for its
	// own option or operand.
	Verbatim bool
	// Skip, when set, is why the binary is not run: its block is a skip
	// with this reason (a runtest line naming a perf binary that the VM
	// runner left out of the guest).
	Skip string
}

// IsPerf reports whether b is a perf binary: those run alone, after all others.
func (b Binary) IsPerf() bool { return strings.HasPrefix(b.Name, "perf_") }

// Discover lists the executables in dir, sorted by name, leaving out self (the
// runner's own executable), hidden files, directories, and perf_* binaries
// unless perf is true.
func Discover(dir, self string, perf bool) ([]Binary, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing test binaries: %w", err)
	}
	selfInfo, _ := os.Stat(self)
	var bins []Binary
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p) // follow symlinks
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		if selfInfo != nil && os.SameFile(fi, selfInfo) {
			continue
		}
		b := Binary{Name: name, Path: p}
		if b.IsPerf() && !perf {
			continue
		}
		bins = append(bins, b)
	}
	return bins, nil
}

// validTag is what a runtest tag may be: it names the binary's TAP block, its
// log files and its CI history (LTP's own tags look like "fanotify01" or
// "cve-2017-7308").
var validTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// ReadRuntest parses an LTP runtest file: one "<tag> <command> [args...]" per
// line, blank lines and comment lines (first non-blank character '#')
// ignored. The command and its arguments are split as a shell splits words,
// so `sh -c "a b"` gives sh the two arguments -c and "a b" (quotes, and
// backslash escapes outside single quotes). A tag outside [A-Za-z0-9_.-] is
// an error. A command without a slash is looked up in dirs first, then in
// $PATH; a command that cannot be found is kept as is, so that running it
// reports the error in the stream. A command that is not one of our test
// binaries (known by its Go build info, as ListCases knows them) is run
// Verbatim: the runner's pass-through flags (-timeout, -strict, -run, -v,
// -format, -exit) are for our binaries only, and put before the arguments of
// `sh -c '...'` they would be sh's.
func ReadRuntest(r io.Reader, dirs []string) ([]Binary, error) {
	sc := bufio.NewScanner(r)
	var bins []Binary
	seen := map[string]int{}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := splitWords(line)
		if err != nil {
			return nil, fmt.Errorf("runtest line %d: %w", n, err)
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("runtest line %d: want \"<tag> <command> [args]\", got %q", n, line)
		}
		if !validTag.MatchString(f[0]) {
			return nil, fmt.Errorf("runtest line %d: tag %q: want letters, digits, '_', '.' or '-'", n, f[0])
		}
		if prev, dup := seen[f[0]]; dup {
			return nil, fmt.Errorf("runtest line %d: tag %q already used on line %d", n, f[0], prev)
		}
		seen[f[0]] = n
		p := resolve(f[1], dirs)
		bins = append(bins, Binary{Name: f[0], Path: p, Args: f[2:], Verbatim: !isOurs(p)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading runtest file: %w", err)
	}
	return bins, nil
}

// isOurs reports whether path is a Go program of this module (a test binary
// or the runner): one that takes the runner's pass-through flags.
func isOurs(path string) bool {
	bi, err := buildinfo.ReadFile(path)
	return err == nil && bi.Main.Path == ourModule
}

// SkipCommands marks each binary whose command is named (by its base name)
// in names as skipped with reason, instead of run. The VM runner's guest
// uses it for the runtest lines naming a perf binary it left out of the
// guest (harness/vm.LeftOutEnv): without it such a line is a failure to
// start a program that is not there.
func SkipCommands(bins []Binary, names []string, reason string) []Binary {
	out := slices.Clone(bins)
	for i, b := range out {
		if slices.Contains(names, filepath.Base(b.Path)) {
			out[i].Skip = reason
		}
	}
	return out
}

// splitWords splits a command line into words as sh does for quotes and
// backslashes (no expansion of variables, globs or other shell syntax).
// An unquoted '#' at the start of a word begins a comment.
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			return words, nil
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' quote in %q", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" quote in %q", s)
			}
			inWord = true
		case c == '\\':
			if i+1 < len(s) {
				i++
				w.WriteByte(s[i])
			}
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

func resolve(cmd string, dirs []string) string {
	if strings.Contains(cmd, "/") {
		return cmd
	}
	for _, d := range dirs {
		p := filepath.Join(d, cmd)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(cmd); err == nil {
		return p
	}
	return cmd
}

// Filter keeps the binaries whose name matches re (all when re is nil) and,
// unless perf is true, drops perf_* binaries.
func Filter(bins []Binary, re *regexp.Regexp, perf bool) []Binary {
	var out []Binary
	for _, b := range bins {
		if re != nil && !re.MatchString(b.Name) {
			continue
		}
		if b.IsPerf() && !perf {
			continue
		}
		out = append(out, b)
	}
	return out
}

// Order returns bins with the perf binaries moved, in their order, after all
// the others: they are run last and alone.
func Order(bins []Binary) []Binary {
	out := slices.Clone(bins)
	slices.SortStableFunc(out, func(a, b Binary) int {
		switch {
		case a.IsPerf() == b.IsPerf():
			return 0
		case a.IsPerf():
			return 1
		}
		return -1
	})
	return out
}
