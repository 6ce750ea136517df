package writeback

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/hanzoai/deploy-web/internal/actor"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Caps of a commit message's parts.
const (
	maxSubjectRunes = 120
	maxFieldRunes   = 200
	maxReasonRunes  = 2000
	maxReasonLines  = 30
)

// Message formats the commit message of a version change: a one-line
// subject "deploy-web: <action> <app> <from> -> <to>", then who asked
// (who.String: "ada@example.com (sub u-1)") and the reason, quoted line by line ("> "). Every
// value is hostile: fields are made one line (control characters become
// spaces) and capped, the reason keeps its line breaks only inside the
// quote and is capped in runes and lines. Empty values read "–".
func Message(action, app, from, to string, who actor.Actor, reason string) string {
	f := func(s string) string {
		s = oneLine(s, maxFieldRunes)
		if s == "" {
			return "–"
		}
		return s
	}
	subject := oneLine(fmt.Sprintf("deploy-web: %s %s %s -> %s", f(action), f(app), f(from), f(to)), maxSubjectRunes)
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "%s of %s from %s to %s, by %s.\n", f(action), f(app), f(from), f(to), f(who.String()))
	b.WriteString("\nReason:\n")
	for _, l := range reasonLines(reason) {
		b.WriteString("> ")
		b.WriteString(l)
		b.WriteString("\n")
	}
	return b.String()
}

// maxDetailLines caps the lines Request.Detail adds to a message.
const maxDetailLines = 50

// withDetail is msg (ending in a line break) with lines added as a
// paragraph: each made one line of at most maxFieldRunes runes, at most
// maxDetailLines of them, and none past maxMessageBytes.
func withDetail(msg string, lines []string) string {
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString("\n")
	n := 0
	for _, l := range lines {
		if l = oneLine(l, maxFieldRunes); l == "" {
			continue
		}
		if n == maxDetailLines || b.Len()+len(l)+len("[…]\n")+1 > maxMessageBytes {
			b.WriteString("[…]\n")
			break
		}
		b.WriteString(l)
		b.WriteString("\n")
		n++
	}
	if n == 0 {
		return msg
	}
	return b.String()
}

// oneLine makes s a single line of at most n runes: format characters
// (bidi controls, zero-width) removed (textfmt.Clean), control characters
// and other line separators spaces, runs of spaces one space.
func oneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == unicode.ReplacementChar {
			return ' '
		}
		return r
	}, textfmt.Clean(s, false))
	return capRunes(strings.Join(strings.Fields(s), " "), n)
}

// reasonLines is the reason as at most maxReasonLines one-line lines of at
// most maxReasonRunes runes in all; "–" when empty.
func reasonLines(reason string) []string {
	reason = capRunes(strings.ReplaceAll(reason, "\r\n", "\n"), maxReasonRunes)
	var out []string
	for _, l := range strings.FieldsFunc(reason, func(r rune) bool { return r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' }) {
		if l = oneLine(l, maxReasonRunes); l == "" {
			continue
		}
		if len(out) == maxReasonLines {
			out = append(out, "[…]")
			break
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return []string{"–"}
	}
	return out
}
