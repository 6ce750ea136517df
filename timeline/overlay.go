package timeline

import "time"

// The freezes and auto-sync pauses that cover an App are not entries (a
// freeze of a whole environment names no App, and an entry per App it
// covers would cost a write per App): they are worked out as overlays when
// a timeline is read (package timeline/overlays) and drawn over the
// entries.

// The kinds of overlay.
const (
	OverlayFreeze = "freeze"
	OverlayPause  = "pause"
)

// Overlay is a freeze window or an auto-sync pause covering an App: from
// Start (inclusive) to End (exclusive).
type Overlay struct {
	Kind  string    `json:"kind"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Reason, By (who froze or paused) and Ticket (a freeze's link, http or
	// https, validated when it was stored) are what the freeze or pause says.
	Reason string `json:"reason"`
	By     string `json:"by,omitempty"`
	Ticket string `json:"ticket,omitempty"`
	// Ref is the freeze's id, or the environment paused.
	Ref string `json:"ref"`
	// Scope is what the freeze covers ("env=prod"), or the environment
	// paused.
	Scope string `json:"scope"`
	// Ended says a person ended it early (a pause resumed): End is then
	// when they did.
	Ended bool `json:"ended,omitempty"`
}
