package kubeview

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCutMessage: an event's message is kept whole up to maxEventMessage
// bytes; a longer one (the apiserver takes about a megabyte) is cut there,
// "…" marking the cut, and stays valid UTF-8 when the cut falls inside a
// multi-byte character.
func TestCutMessage(t *testing.T) {
	whole := strings.Repeat("a", maxEventMessage)
	if got := cutMessage(whole); got != whole {
		t.Errorf("cutMessage of %d bytes changed it (len %d)", len(whole), len(got))
	}
	// "é" is two bytes: at an odd offset the cut splits one.
	long := "x" + strings.Repeat("é", 1<<19)
	got := cutMessage(long)
	if !strings.HasSuffix(got, "…") || len(got) > maxEventMessage+len("…") || len(got) < maxEventMessage-4 {
		t.Errorf("cutMessage of %d bytes = %d bytes ending %q, want about %d and a \"…\"", len(long), len(got), got[max(0, len(got)-8):], maxEventMessage)
	}
	if !utf8.ValidString(got) {
		t.Errorf("cutMessage cut inside a character: invalid UTF-8")
	}
}
