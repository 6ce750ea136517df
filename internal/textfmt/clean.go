package textfmt

import (
	"strings"
	"unicode"
)

// Clean is text that people type and other people read (a reason, a
// ticket, a commit message or author, an audit record's text) without the
// characters that make it read otherwise than it is written:
//
//   - Unicode format characters (category Cf) are removed: the bidi
//     controls U+202A–U+202E and U+2066–U+2069 (which turn "gnp.exe" into
//     what reads "exe.png"), the zero-width U+200B–U+200F, U+2060, U+FEFF,
//     U+061C, the tag characters, and the rest of Cf;
//   - control characters (category Cc) become a space, except a line
//     break when lines is true (a field that keeps lines: "\r\n" and a
//     lone '\r' become '\n'), and so do U+2028 and U+2029 (line and
//     paragraph separators: '\n' when lines is true);
//   - invalid UTF-8 becomes U+FFFD.
//
// Nothing else changes (no trimming, no collapsing of spaces), so Clean
// of clean text is that text, and Clean(Clean(s)) == Clean(s). It is the
// one rule (STYLE 23): each kind of text passes through it where it
// enters (writeback, freeze, the pause store, the promotion store, audit).
func Clean(s string, lines bool) string {
	if isClean(s, lines) {
		return s
	}
	if lines {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.Is(unicode.Cf, r):
			return -1
		case lines && (r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029'):
			return '\n'
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			return ' '
		}
		return r
	}, s)
}

// isClean reports whether Clean would return s unchanged (the common
// case, without an allocation).
func isClean(s string, lines bool) bool {
	for i, r := range s {
		switch {
		case r == unicode.ReplacementChar:
			if !strings.HasPrefix(s[i:], "\uFFFD") {
				return false // invalid UTF-8
			}
		case r == '\n':
			if !lines {
				return false
			}
		case r < 0x20 || r >= 0x7f && r < 0xa0 || r == '\u2028' || r == '\u2029' || r >= 0xad && unicode.Is(unicode.Cf, r):
			return false
		}
	}
	return true
}

// Hidden reports whether r is a character Clean removes or replaces
// other than invalid UTF-8: a control character (category Cc), a format
// character (category Cf: U+202E and friends) or a line or paragraph
// separator. A name that must be matched byte for byte (a selector, a
// group) is refused when it holds one, instead of being cleaned.
func Hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}
