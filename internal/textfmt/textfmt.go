// Package textfmt holds the few text helpers that the pages
// (web/templates) and the reports share, so that a missing value and a long
// commit or digest read the same everywhere, and Clean, the one rule for
// text people type and other people read (no bidi controls, no
// zero-width characters).
package textfmt

// Dash stands for a missing value: an en dash.
const Dash = "–"

// OrDash returns s, or Dash when s is empty.
func OrDash(s string) string {
	if s == "" {
		return Dash
	}
	return s
}

// ShortSHA returns the first 12 characters of a commit SHA; a shorter value
// is returned whole (Dash when empty).
func ShortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return OrDash(s)
}

// ShortDigest returns the first 19 characters of an image digest
// ("sha256:" and 12 hex digits) followed by "…"; a shorter value is returned
// whole (Dash when empty).
func ShortDigest(s string) string {
	if len(s) > 19 {
		return s[:19] + "…"
	}
	return OrDash(s)
}
