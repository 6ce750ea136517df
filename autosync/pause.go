package autosync

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds of a pause.
const (
	// MaxPause is the longest a pause may last.
	MaxPause = 7 * 24 * time.Hour
	// MaxReasonBytes bounds a pause's reason.
	MaxReasonBytes = 200
	// maxByBytes bounds who paused or resumed.
	maxByBytes = 254
)

// Pause stops auto-sync and self-heal of one environment until Until,
// unless resumed earlier.
type Pause struct {
	Env    string    `json:"env"`
	Reason string    `json:"reason"`
	Until  time.Time `json:"until"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
	// ResumedBy and ResumedAt are set when a person ended the pause.
	ResumedBy string    `json:"resumedBy,omitempty"`
	ResumedAt time.Time `json:"resumedAt,omitzero"`
}

// Active reports whether p stops the loop at now: not resumed and not yet
// lapsed. A lapsed pause needs no write to end.
func (p Pause) Active(now time.Time) bool {
	return p.ResumedAt.IsZero() && now.Before(p.Until)
}

// activePause returns the active pause of env among ps.
func activePause(ps []Pause, env string, now time.Time) (Pause, bool) {
	for _, p := range ps {
		if p.Env == env && p.Active(now) {
			return p, true
		}
	}
	return Pause{}, false
}

// validate checks a new pause requested at now.
func (p Pause) validate(now time.Time) error {
	switch {
	case p.Env == "":
		return pauseErrorf("pause: the environment is empty")
	case strings.TrimSpace(p.Reason) == "":
		return pauseErrorf("pause %q: the reason is empty: say why auto-sync stops", p.Env)
	case len(p.Reason) > MaxReasonBytes:
		return pauseErrorf("pause %q: the reason has %d bytes, at most %d", p.Env, len(p.Reason), MaxReasonBytes)
	case !oneLine(p.Reason):
		return pauseErrorf("pause %q: the reason must be one line of printable text", p.Env)
	case p.By == "" || len(p.By) > maxByBytes || !oneLine(p.By):
		return pauseErrorf("pause %q: who pauses must be named (one line, at most %d bytes)", p.Env, maxByBytes)
	case p.Until.IsZero():
		return pauseErrorf("pause %q: the end (until) is required", p.Env)
	case !p.Until.After(now):
		return pauseErrorf("pause %q: until %s is not in the future", p.Env, p.Until.UTC().Format(time.RFC3339))
	case p.Until.Sub(now) > MaxPause:
		return pauseErrorf("pause %q: until %s is more than %s from now: pause for at most 7 days, then pause again", p.Env, p.Until.UTC().Format(time.RFC3339), MaxPause)
	}
	return nil
}

// PauseError is a pause refused for its own fields (validate): Public says
// which and why, in words a user may read.
type PauseError struct{ public string }

func (e *PauseError) Error() string { return "autosync: " + e.public }

// Public is the refusal in words a user may read.
func (e *PauseError) Public() string { return e.public }

func pauseErrorf(format string, a ...any) error {
	return &PauseError{public: fmt.Sprintf(format, a...)}
}

// oneLine reports whether s is valid UTF-8 with no control or format
// characters (no line break, no bidirectional override).
func oneLine(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}
