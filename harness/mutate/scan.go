// Package mutate is the mutation analysis of `make mutants`: it plants one
// small fault at a time in the C source of fs/notify (Generate, the
// operators in ops.go), draws a seeded sample of them (Sample), and judges
// what the correctness suite did on each mutated kernel against the
// unmutated one (Judge): killed, survived, crashed or hung, not covered.
// Run (run.go) applies, builds and runs each mutant; Report (report.go)
// writes the text report and mutants.json.
//
// The C "parser" is line-based: Scan masks comments and the contents of
// string and character literals, marks preprocessor lines (and their
// continuations) and tracks braces to know which lines lie inside a
// function body and which function that is. Operators only look at those
// lines, and only at their masked text, so a comment, a string or a macro
// definition is never mutated.
package mutate

import (
	"regexp"
	"strings"
)

// SrcLine is one source line as the scanner sees it.
type SrcLine struct {
	// Text is the line as written (without its newline).
	Text string
	// Code is Text with comments blanked out and the contents of string
	// and character literals replaced by '_' (same length, same columns).
	Code string
	// Func is the function whose body the line lies in, "" outside any.
	Func string
	// InBody is true for a line that starts inside a function body.
	InBody bool
	// Directive is true for a preprocessor line or a continuation of one.
	Directive bool
}

// Scan splits a C source into lines and classifies them (see SrcLine).
func Scan(src string) []SrcLine {
	texts := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	lines := make([]SrcLine, len(texts))
	const (
		normal = iota
		block
	)
	state := normal
	cont := false // the previous line was a directive ending in '\'
	depth := 0
	fn := ""
	var header strings.Builder // top-level text since the last ';', '}' or directive
	for i, t := range texts {
		l := &lines[i]
		l.Text = t
		code := []byte(t)
		// Comments and literals first, whatever the line is.
		for j := 0; j < len(code); j++ {
			c := code[j]
			if state == block {
				if c == '*' && j+1 < len(code) && code[j+1] == '/' {
					code[j], code[j+1] = ' ', ' '
					j++
					state = normal
					continue
				}
				code[j] = ' '
				continue
			}
			switch {
			case c == '/' && j+1 < len(code) && code[j+1] == '*':
				code[j], code[j+1] = ' ', ' '
				j++
				state = block
			case c == '/' && j+1 < len(code) && code[j+1] == '/':
				for k := j; k < len(code); k++ {
					code[k] = ' '
				}
				j = len(code)
			case c == '"' || c == '\'':
				k := j + 1
				for ; k < len(code) && code[k] != c; k++ {
					if code[k] == '\\' && k+1 < len(code) {
						code[k] = '_'
						k++
					}
					code[k] = '_'
				}
				j = k
			}
		}
		l.Code = string(code)
		trimmed := strings.TrimSpace(l.Code)
		l.Directive = cont || strings.HasPrefix(trimmed, "#")
		if l.Directive {
			cont = strings.HasSuffix(strings.TrimRight(t, " \t"), `\`)
			if depth == 0 {
				header.Reset()
			}
			l.Func = fn
			l.InBody = fn != "" && depth > 0
			continue
		}
		l.InBody = fn != "" && depth > 0
		l.Func = fn
		for j := 0; j < len(code); j++ {
			c := code[j]
			switch c {
			case '{':
				if depth == 0 {
					if name, ok := funcHeader(header.String()); ok {
						fn = name
					}
					header.Reset()
				}
				depth++
			case '}':
				if depth > 0 {
					depth--
				}
				if depth == 0 {
					fn = ""
					header.Reset()
				}
			case ';':
				if depth == 0 {
					header.Reset()
				}
			default:
				if depth == 0 {
					header.WriteByte(c)
				}
			}
		}
		if depth == 0 {
			header.WriteByte(' ')
		}
	}
	return lines
}

var (
	identBeforeParen = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*\($`)
	syscallDefine    = regexp.MustCompile(`^(?:COMPAT_)?SYSCALL_DEFINE\d$`)
	firstArg         = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)`)
)

// funcHeader decides whether the top-level text before a '{' is a
// function's header and returns the function's name: the identifier before
// the first top-level '(' (for SYSCALL_DEFINEn(name, ...), "sys_name"). An
// initializer (a top-level '='), a struct, union or enum body (no '(') or a
// header that does not end in ')' or an identifier (an attribute such as
// __releases(x) ends in ')') is not a function.
func funcHeader(h string) (string, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return "", false
	}
	last := h[len(h)-1]
	if last != ')' && !isIdent(last) {
		return "", false
	}
	paren := 0
	open := -1
	for i := 0; i < len(h); i++ {
		switch h[i] {
		case '(':
			if paren == 0 && open < 0 {
				open = i
			}
			paren++
		case ')':
			paren--
		case '=':
			if paren == 0 {
				return "", false
			}
		}
	}
	if open < 0 {
		return "", false
	}
	m := identBeforeParen.FindStringSubmatch(h[:open+1])
	if m == nil {
		return "", false
	}
	name := m[1]
	if syscallDefine.MatchString(name) {
		if a := firstArg.FindStringSubmatch(h[open+1:]); a != nil {
			return "sys_" + a[1], true
		}
	}
	return name, true
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
