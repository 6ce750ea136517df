package textfmt

import "strings"

// Cut returns s, or its first max bytes (never half a UTF-8 sequence)
// followed by "…" when it is longer.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}
