package tap

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character that a terminal would obey instead
// of showing, or that an XML 1.0 document cannot hold, written as visible
// text: a C0 control other than tab (ESC becomes \x1b, NUL \x00, a carriage
// return inside a line \x0d), DEL (\x7f), a C1 control (U+0085 becomes
// \u0085), and each byte of invalid UTF-8 (\xff). A backslash is kept as it
// is (TAP's own escape, "\#", must survive). Text without such characters
// is returned unchanged, so escaping twice changes nothing more.
//
// Parse escapes every line it reads and Writer every line it writes: a
// diagnostic that quotes a guest console line or a process name reaches the
// terminal summary, junit.xml, KCIDB and the HTML report as this text.
func Escape(s string) string { return escapeFunc(s, needsEscape) }

// needsEscape is Escape's rule for a decoded character.
func needsEscape(r rune) bool {
	return (r < 0x20 && r != '\t') || (r >= 0x7f && r <= 0x9f) || bidiControl(r)
}

// bidiControl reports the format characters that reorder or hide text on a
// terminal or a page (Unicode's bidirectional embeddings, overrides and
// isolates, the marks, zero-width joiners): a diagnostic holding one could
// make "not ok" read as "ok".
func bidiControl(r rune) bool {
	return (r >= 0x200b && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0xfeff
}

// xmlForbidden reports whether XML 1.0 (section 2.2, Char) bars r from a
// document, even as a character reference: controls other than tab, newline
// and carriage return, the surrogates, U+FFFE and U+FFFF.
func xmlForbidden(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20:
		return true
	case r >= 0xd800 && r <= 0xdfff, r == 0xfffe, r == 0xffff:
		return true
	}
	return false
}

// XMLSafe is s with every character XML 1.0 forbids, every other control
// but newline and tab (Escape's set) and each byte of invalid UTF-8 written
// as Escape writes it: the text of every element and attribute of junit.xml
// goes through it.
func XMLSafe(s string) string {
	return escapeFunc(s, func(r rune) bool {
		if r == '\n' {
			return false
		}
		return needsEscape(r) || xmlForbidden(r)
	})
}

// escapeFunc writes each character of s for which bad is true, and each
// byte of invalid UTF-8, as \xNN (below U+0100 as one byte) or \uNNNN.
func escapeFunc(s string, bad func(rune) bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\t' && !bad('\t') {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || bad(r) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case bad(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case bad(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
