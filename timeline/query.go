package timeline

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Query returns the entries of one App that overlap [since, until)
// (an entry folded over a span counts from Time to Last), oldest first,
// the time axis' order. A zero since or until leaves that side open.
// It waits for the shards to be loaded, or ctx.
func (s *Store) Query(ctx context.Context, app App, since, until time.Time) ([]Entry, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	oldest := s.opts.Now().Add(-s.lim.MaxAge)
	if since.Before(oldest) {
		since = oldest
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := s.logs[app]
	if l == nil {
		return nil, nil
	}
	var out []Entry
	for i := range l.entries {
		e := &l.entries[i]
		if e.lastAt() < since.UnixMilli() || !until.IsZero() && e.at >= until.UnixMilli() {
			continue
		}
		out = append(out, e.entry(app))
	}
	return out, nil
}

func (s *Store) wait(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("timeline: the timeline is not loaded yet: %w", ctx.Err())
	}
}

// Filter selects entries across the fleet. Empty fields match everything.
type Filter struct {
	Cluster, Namespace, App string
	// Kinds keeps entries of these kinds only.
	Kinds []Kind
	// Since (inclusive) and Until (exclusive) bound the entries' Time.
	Since, Until time.Time
	// Limit is the page size: DefaultLimit when 0, at most MaxLimit.
	Limit int
	// Continue is the Page.Continue of the previous page.
	Continue string
	// Visible, when set, keeps the entries of the Apps it accepts only
	// (those the reader may see); it is asked once per App.
	Visible func(App) bool
}

// Page sizes of Fleet.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
	// maxContinueBytes bounds a continue token (it comes from a URL).
	maxContinueBytes = 2048
)

// FleetPage is one page of entries, newest first; Continue is empty on
// the last page.
type FleetPage struct {
	Entries  []Entry `json:"entries"`
	Continue string  `json:"continue,omitempty"`
}

// cursor is the position after the last entry of a page: its sort key.
type cursor struct {
	T int64  `json:"t"`
	C string `json:"c"`
	N string `json:"n"`
	A string `json:"a"`
	K Kind   `json:"k"`
	F string `json:"f"`
	O string `json:"o"`
	R string `json:"r"`
}

func cursorOf(app App, e *rec) cursor {
	return cursor{T: e.at, C: app.Cluster, N: app.Namespace, A: app.Name, K: e.kind.kind(), F: e.from, O: e.to, R: e.ref}
}

// compareFleet orders the feed: newest first, then by App, then (for
// entries of one App at one instant) in reverse of the App's own order.
func compareFleet(a, b cursor) int {
	return cmp.Or(cmp.Compare(b.T, a.T), cmp.Compare(a.C, b.C), cmp.Compare(a.N, b.N), cmp.Compare(a.A, b.A),
		cmp.Compare(b.K, a.K), cmp.Compare(b.F, a.F), cmp.Compare(b.O, a.O), cmp.Compare(b.R, a.R))
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c) // a struct of strings and an int: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads a continue token, which comes from a client.
func decodeCursor(s string) (cursor, error) {
	var c cursor
	if len(s) > maxContinueBytes {
		return c, fmt.Errorf("timeline: continue token of %d bytes (at most %d): start again without it", len(s), maxContinueBytes)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return c, fmt.Errorf("timeline: continue token is not one this server made: start again without it")
	}
	return c, nil
}

// Fleet returns one page of the fleet's entries matching f, newest first.
// A continue token that is not one Fleet made is an error.
func (s *Store) Fleet(ctx context.Context, f Filter) (FleetPage, error) {
	if err := s.wait(ctx); err != nil {
		return FleetPage{}, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	var after *cursor
	if f.Continue != "" {
		c, err := decodeCursor(f.Continue)
		if err != nil {
			return FleetPage{}, err
		}
		after = &c
	}
	since := f.Since
	if oldest := s.opts.Now().Add(-s.lim.MaxAge); since.Before(oldest) {
		since = oldest
	}
	sinceMs, untilMs := since.UnixMilli(), f.Until.UnixMilli()
	kind := func(Kind) bool { return true }
	if len(f.Kinds) > 0 {
		kind = func(k Kind) bool { return slices.Contains(f.Kinds, k) }
	}
	type cand struct {
		app App
		e   *rec
		c   cursor
	}
	// cands is the best limit+1 entries so far, in feed order: one more
	// than a page, to know whether another page follows.
	cands := make([]cand, 0, limit+1)
	s.mu.RLock()
	defer s.mu.RUnlock()
	for app, l := range s.logs {
		if f.Cluster != "" && app.Cluster != f.Cluster || f.Namespace != "" && app.Namespace != f.Namespace || f.App != "" && app.Name != f.App ||
			f.Visible != nil && !f.Visible(app) {
			continue
		}
		// An App's entries, newest first, come in feed order: once one
		// ranks after the worst candidate of a full list, so do the rest.
		for i := len(l.entries) - 1; i >= 0; i-- {
			e := &l.entries[i]
			if e.at < sinceMs {
				break
			}
			if !f.Until.IsZero() && e.at >= untilMs || !kind(e.kind.kind()) {
				continue
			}
			c := cursorOf(app, e)
			if after != nil && compareFleet(c, *after) <= 0 {
				continue
			}
			if len(cands) == limit+1 && compareFleet(c, cands[limit].c) >= 0 {
				break
			}
			at, _ := slices.BinarySearchFunc(cands, c, func(x cand, c cursor) int { return compareFleet(x.c, c) })
			if len(cands) == limit+1 {
				cands = cands[:limit]
			}
			cands = slices.Insert(cands, at, cand{app, e, c})
		}
	}
	var page FleetPage
	for _, c := range cands[:min(len(cands), limit)] {
		page.Entries = append(page.Entries, c.e.entry(c.app))
	}
	if len(cands) > limit {
		page.Continue = encodeCursor(cands[limit-1].c)
	}
	return page, nil
}
