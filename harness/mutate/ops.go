package mutate

import (
	"regexp"
	"strconv"
	"strings"
)

// The operators. Each finds its sites in a line's masked code (SrcLine.Code)
// and returns the line with one site changed; a line with several sites
// gives one mutant per site.
const (
	// OpNegate: if (x) -> if (!x), if (!x) -> if (x), if (a == b) -> if (!(a == b)).
	OpNegate = "negate"
	// OpAndOr: && -> ||, || -> &&.
	OpAndOr = "andor"
	// OpRelational: < <-> <=, > <-> >=.
	OpRelational = "relational"
	// OpEquality: == <-> !=.
	OpEquality = "equality"
	// OpBitwise: binary & <-> |, &= <-> |=.
	OpBitwise = "bitwise"
	// OpDropFlag: A | B -> A (and -> B), x & ~B -> x.
	OpDropFlag = "dropflag"
	// OpReturn: return -EXXX; -> return 0;, return 0; -> return -EINVAL;.
	OpReturn = "return"
	// OpDeleteCall: a statement line that is just f(...); -> ;.
	OpDeleteCall = "delcall"
	// OpOffByOne: the constant of a comparison, N -> N+1 and N-1.
	OpOffByOne = "offbyone"
)

// Ops lists every operator, in the order Generate applies them.
var Ops = []string{OpNegate, OpAndOr, OpRelational, OpEquality, OpBitwise, OpDropFlag, OpReturn, OpDeleteCall, OpOffByOne}

type edit struct {
	op  string
	new string
}

// compileTime matches a statement evaluated by the compiler alone: a
// mutation there fails the build or changes nothing.
var compileTime = regexp.MustCompile(`^\s*(?:BUILD_BUG_ON[A-Z_]*|static_assert)\s*\(`)

// lineEdits returns every single-site mutation of one line; prev is the
// masked code of the line before it (blanks trimmed), which decides whether
// the line starts a statement.
func lineEdits(l SrcLine, prev string) []edit {
	if compileTime.MatchString(l.Code) {
		return nil
	}
	var out []edit
	add := func(op string, news []string) {
		for _, n := range news {
			if n != l.Text {
				out = append(out, edit{op, n})
			}
		}
	}
	add(OpNegate, negate(l))
	add(OpAndOr, andOr(l))
	add(OpRelational, relational(l))
	add(OpEquality, equality(l))
	add(OpBitwise, bitwise(l))
	add(OpDropFlag, dropFlag(l))
	add(OpReturn, returns(l))
	add(OpDeleteCall, deleteCall(l, prev))
	add(OpOffByOne, offByOne(l))
	return out
}

func splice(s string, from, to int, with string) string { return s[:from] + with + s[to:] }

// matchParen returns the index of the ')' closing the '(' at open in code,
// or -1 when it is not on the line.
func matchParen(code string, open int) int {
	depth := 0
	for i := open; i < len(code); i++ {
		switch code[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

var (
	ifKeyword = regexp.MustCompile(`\bif\s*\(`)
	// simpleOperand is an operand that needs no parentheses after '!':
	// a name, a member chain, a call, each optionally negated.
	simpleOperand = regexp.MustCompile(`^!?[A-Za-z_][A-Za-z0-9_]*(?:(?:->|\.)[A-Za-z_][A-Za-z0-9_]*)*(?:\([^()]*(?:\([^()]*\)[^()]*)*\))?$`)
)

// negate inverts the condition of each `if (...)` whose parentheses close
// on the line.
func negate(l SrcLine) []string {
	var out []string
	for _, m := range ifKeyword.FindAllStringIndex(l.Code, -1) {
		open := m[1] - 1
		end := matchParen(l.Code, open)
		if end < 0 {
			continue
		}
		cond := strings.TrimSpace(l.Text[open+1 : end])
		if cond == "" {
			continue
		}
		code := strings.TrimSpace(l.Code[open+1 : end])
		var neg string
		switch {
		case strings.HasPrefix(code, "!(") && matchParen(code, 1) == len(code)-1:
			// if (!(a & b)) -> if ((a & b))
			neg = strings.TrimSpace(cond[1:])
		case strings.HasPrefix(cond, "!") && simpleOperand.MatchString(code):
			neg = strings.TrimSpace(cond[1:])
		case simpleOperand.MatchString(code):
			neg = "!" + cond
		default:
			neg = "!(" + cond + ")"
		}
		out = append(out, splice(l.Text, open+1, end, neg))
	}
	return out
}

func andOr(l SrcLine) []string {
	var out []string
	c := l.Code
	for i := 0; i+1 < len(c); i++ {
		switch {
		case c[i] == '&' && c[i+1] == '&':
			out = append(out, splice(l.Text, i, i+2, "||"))
			i++
		case c[i] == '|' && c[i+1] == '|':
			out = append(out, splice(l.Text, i, i+2, "&&"))
			i++
		}
	}
	return out
}

// relational swaps < and <=, > and >=, leaving shifts (<<, >>, <<=, >>=)
// and the arrow (->) alone.
func relational(l SrcLine) []string {
	var out []string
	c := l.Code
	at := func(i int) byte {
		if i < 0 || i >= len(c) {
			return 0
		}
		return c[i]
	}
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if ch != '<' && ch != '>' {
			continue
		}
		if at(i-1) == ch || at(i+1) == ch || (ch == '>' && at(i-1) == '-') {
			continue
		}
		if at(i+1) == '=' {
			out = append(out, splice(l.Text, i, i+2, string(ch)))
			i++
			continue
		}
		out = append(out, splice(l.Text, i, i+1, string(ch)+"="))
	}
	return out
}

func equality(l SrcLine) []string {
	var out []string
	c := l.Code
	for i := 0; i+1 < len(c); i++ {
		if c[i+1] != '=' {
			continue
		}
		prev := byte(0)
		if i > 0 {
			prev = c[i-1]
		}
		next := byte(0)
		if i+2 < len(c) {
			next = c[i+2]
		}
		switch {
		case c[i] == '=' && next != '=' && !strings.ContainsRune("=!<>+-*/%&|^", rune(prev)):
			out = append(out, splice(l.Text, i, i+2, "!="))
			i++
		case c[i] == '!' && next != '=':
			out = append(out, splice(l.Text, i, i+2, "=="))
			i++
		}
	}
	return out
}

// prevToken returns the last non-blank character before i and, when it
// ends an identifier, that identifier.
func prevToken(c string, i int) (byte, string) {
	j := i - 1
	for j >= 0 && (c[j] == ' ' || c[j] == '\t') {
		j--
	}
	if j < 0 {
		return 0, ""
	}
	if !isIdent(c[j]) {
		return c[j], ""
	}
	k := j
	for k >= 0 && isIdent(c[k]) {
		k--
	}
	return c[j], c[k+1 : j+1]
}

// binaryContext reports whether the operator at i follows an operand (so a
// '&' there is "and", not "address of"): an identifier that is not a
// keyword, a number, ')' that does not close a cast ("(type *)"), or ']'.
func binaryContext(c string, i int) bool {
	p, word := prevToken(c, i)
	switch {
	case word != "":
		switch word {
		case "return", "sizeof", "case", "typeof", "else", "do":
			return false
		}
		return true
	case p == ']':
		return true
	case p == ')':
		j := strings.LastIndexByte(c[:i], ')') - 1
		for j >= 0 && c[j] == ' ' {
			j--
		}
		return j < 0 || c[j] != '*'
	}
	return false
}

// bitwise swaps binary & and |, and &= and |=.
func bitwise(l SrcLine) []string {
	var out []string
	c := l.Code
	at := func(i int) byte {
		if i < 0 || i >= len(c) {
			return 0
		}
		return c[i]
	}
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if ch != '&' && ch != '|' {
			continue
		}
		if at(i+1) == ch || at(i-1) == ch {
			continue
		}
		other := "|"
		if ch == '|' {
			other = "&"
		}
		if at(i+1) == '=' {
			out = append(out, splice(l.Text, i, i+1, other))
			continue
		}
		if ch == '&' && !binaryContext(c, i) {
			continue
		}
		out = append(out, splice(l.Text, i, i+1, other))
	}
	return out
}

var (
	// flagChain is two or more all-caps names (flags, masks) joined by |.
	flagChain = regexp.MustCompile(`\b[A-Z][A-Z0-9_]*(?:\s*\|\s*[A-Z][A-Z0-9_]*\b)+`)
	flagName  = regexp.MustCompile(`[A-Z][A-Z0-9_]*`)
	// clearFlag is "& ~NAME" or "& ~(...)" (not "&= ~": that is a statement).
	clearFlag = regexp.MustCompile(`\s*&\s*~\s*(?:[A-Za-z_][A-Za-z0-9_]*|\([^()]*\))`)
)

// dropFlag drops one flag from a mask expression: each name of an
// "A | B | C" chain in turn, and each "& ~B" clear.
func dropFlag(l SrcLine) []string {
	var out []string
	for _, m := range flagChain.FindAllStringIndex(l.Code, -1) {
		// Not a chain ending in '=' ("A | B =") or inside a larger |
		// expression on a lowercase operand ("x | A | B": the chain
		// starts mid-expression): both stay mutable, the chain's own
		// names are what is dropped.
		names := flagName.FindAllStringIndex(l.Code[m[0]:m[1]], -1)
		for k, nm := range names {
			from, to := m[0]+nm[0], m[0]+nm[1]
			// Remove the name and the '|' joining it to a neighbour.
			if k == 0 {
				to = m[0] + names[1][0]
			} else {
				from = m[0] + names[k-1][1]
			}
			out = append(out, splice(l.Text, from, to, ""))
		}
	}
	c := l.Code
	for _, m := range clearFlag.FindAllStringIndex(c, -1) {
		amp := strings.IndexByte(c[m[0]:m[1]], '&') + m[0]
		if amp > 0 && c[amp-1] == '&' || amp+1 < len(c) && (c[amp+1] == '&' || c[amp+1] == '=') {
			continue
		}
		if !binaryContext(c, amp) {
			continue
		}
		out = append(out, splice(l.Text, m[0], m[1], ""))
	}
	return out
}

var (
	returnErrno = regexp.MustCompile(`\breturn\s+-E[A-Z0-9]+\s*;`)
	returnZero  = regexp.MustCompile(`\breturn\s+0\s*;`)
)

// returns swaps a returned errno for 0 and a returned 0 for -EINVAL.
func returns(l SrcLine) []string {
	var out []string
	for _, m := range returnErrno.FindAllStringIndex(l.Code, -1) {
		out = append(out, splice(l.Text, m[0], m[1], "return 0;"))
	}
	for _, m := range returnZero.FindAllStringIndex(l.Code, -1) {
		out = append(out, splice(l.Text, m[0], m[1], "return -EINVAL;"))
	}
	return out
}

var callStmt = regexp.MustCompile(`^(\s*)([A-Za-z_][A-Za-z0-9_]*)\s*\(.*\)\s*;\s*$`)

// noDelete are calls whose deletion changes nothing the suite can see by
// construction (logging, assertions, tracing) and statement-like macros.
var noDelete = regexp.MustCompile(`^(?:pr_[a-z_]+|printk|dev_[a-z]+|WARN[A-Z_]*|BUG[A-Z_]*|VM_BUG_ON|lockdep_[a-z_]+|might_sleep|might_lock|trace_[a-z0-9_]+|BUILD_BUG_ON[A-Z_]*|static_assert|kmemleak_[a-z_]+|return|if|while|for|switch|sizeof)$`)

// afterStatement matches the end of a line after which a new statement
// starts: ';', '{', '}', a label's ':', "else", or the header of an if, for
// or while whose parentheses close on that line.
var (
	afterStatement = regexp.MustCompile(`(?:[;{}:]|\belse)$`)
	controlHeader  = regexp.MustCompile(`^(?:}\s*)?(?:else\s+)?(?:if|for|while)\s*\(`)
)

// startsStatement reports whether a line whose previous code line is prev
// (blanks trimmed; "" at the top of a body) starts a statement, not the tail
// of an expression.
func startsStatement(prev string) bool {
	if prev == "" || afterStatement.MatchString(prev) {
		return true
	}
	if m := controlHeader.FindStringIndex(prev); m != nil {
		return matchParen(prev, m[1]-1) == len(prev)-1
	}
	return false
}

// deleteCall turns a line that is exactly one call statement, "f(...);"
// with its parentheses closing on the line, into ";".
func deleteCall(l SrcLine, prev string) []string {
	if !startsStatement(prev) {
		return nil
	}
	m := callStmt.FindStringSubmatchIndex(l.Code)
	if m == nil {
		return nil
	}
	name := l.Code[m[4]:m[5]]
	if noDelete.MatchString(name) {
		return nil
	}
	open := strings.IndexByte(l.Code[m[5]:], '(') + m[5]
	end := matchParen(l.Code, open)
	if end < 0 || strings.TrimSpace(l.Code[end+1:]) != ";" {
		return nil
	}
	return []string{l.Text[:m[3]] + ";"}
}

// cmpConst is a comparison with a constant on its right: a limit (an
// integer literal or an all-caps name after <, <=, > or >=) or an integer
// literal after == or !=.
var cmpConst = regexp.MustCompile(`[<>]=?\s*(\d+|[A-Z][A-Z0-9_]*)\b|[=!]=\s*(\d+)\b`)

// offByOne moves the constant of a comparison by one either way.
func offByOne(l SrcLine) []string {
	var out []string
	c := l.Code
	for _, m := range cmpConst.FindAllStringSubmatchIndex(c, -1) {
		op := m[0]
		// Not a shift (<< N, >> N), an arrow or a compound assignment.
		if op > 0 && (c[op-1] == c[op] || c[op-1] == '-' || c[op] == '=' && strings.ContainsRune("=!<>+-*/%&|^", rune(c[op-1]))) {
			continue
		}
		from, to := m[2], m[3]
		if from < 0 {
			from, to = m[4], m[5]
		}
		tok := l.Text[from:to]
		if n, err := strconv.Atoi(tok); err == nil {
			if n > 0 {
				out = append(out, splice(l.Text, from, to, strconv.Itoa(n-1)))
			}
			out = append(out, splice(l.Text, from, to, strconv.Itoa(n+1)))
			continue
		}
		out = append(out, splice(l.Text, from, to, "("+tok+" - 1)"), splice(l.Text, from, to, "("+tok+" + 1)"))
	}
	return out
}
