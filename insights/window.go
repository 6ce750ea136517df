package insights

import (
	"fmt"
	"strings"
	"time"
)

// Window is the period the metrics cover, ending now: one of Windows.
type Window string

// The windows.
const (
	Window7d  Window = "7d"
	Window30d Window = "30d"
	Window90d Window = "90d"
	// DefaultWindow is the window of a query that names none.
	DefaultWindow = Window30d
)

// Windows lists every window, shortest first.
func Windows() []Window { return []Window{Window7d, Window30d, Window90d} }

// day is a calendar day's length, for the windows and their buckets.
const day = 24 * time.Hour

// Duration is the window's length.
func (w Window) Duration() time.Duration {
	switch w {
	case Window7d:
		return 7 * day
	case Window90d:
		return 90 * day
	}
	return 30 * day
}

// Bucket is the width of one bar of the window's charts: a day for 7
// and 30 days, six days (15 bars) for 90.
func (w Window) Bucket() time.Duration {
	if w == Window90d {
		return 6 * day
	}
	return day
}

// Valid reports whether w is one of Windows.
func (w Window) Valid() bool {
	for _, v := range Windows() {
		if w == v {
			return true
		}
	}
	return false
}

// QueryError is a query the metrics cannot answer: Field names the
// query parameter, Public says what to give instead (safe to show).
type QueryError struct {
	Field  string
	Public string
}

func (e *QueryError) Error() string { return "insights: " + e.Public }

// maxQueryEcho bounds how much of a bad value an error repeats.
const maxQueryEcho = 40

// ParseWindow reads a since= value: "" is DefaultWindow; anything but
// one of Windows is a *QueryError.
func ParseWindow(s string) (Window, error) {
	if s == "" {
		return DefaultWindow, nil
	}
	if w := Window(s); w.Valid() {
		return w, nil
	}
	names := make([]string, 0, len(Windows()))
	for _, w := range Windows() {
		names = append(names, string(w))
	}
	if len(s) > maxQueryEcho {
		s = s[:maxQueryEcho] + "..."
	}
	return "", &QueryError{Field: "since", Public: fmt.Sprintf("since: %q is not a window: give one of %s", s, strings.Join(names, ", "))}
}
