package main

import (
	"context"
	"io"
	"log/slog"
)

// auditKey is the attribute every audit line carries, the user who acted:
// release's rollback and sync, envrun's plans and applies, and the
// handlers' writes refused before they reach release. Only audit lines
// carry it (TestDemoLogPrintsAuditLines holds release to it).
const auditKey = "user"

// newDemoLogger is the demo's terminal log: warnings and errors as before,
// plus every audit line at any level, so that a rollback, sync, plan or
// apply made in the browser shows who did what in the terminal. Request
// lines and the rest of the Info chatter stay out.
func newDemoLogger(w io.Writer, format string) *slog.Logger {
	return slog.New(auditOrLevel{next: newLogger(w, format, slog.LevelInfo).Handler(), min: slog.LevelWarn})
}

// auditOrLevel passes a record to next when it is at least min or is an
// audit line (it, or the logger it came through, has auditKey).
type auditOrLevel struct {
	next  slog.Handler
	min   slog.Level
	audit bool // the logger's own attributes hold auditKey
}

func (h auditOrLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h auditOrLevel) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < h.min && !h.audit && !hasAttr(r, auditKey) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h auditOrLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	audit := h.audit
	for _, a := range attrs {
		audit = audit || a.Key == auditKey
	}
	return auditOrLevel{next: h.next.WithAttrs(attrs), min: h.min, audit: audit}
}

func (h auditOrLevel) WithGroup(name string) slog.Handler {
	return auditOrLevel{next: h.next.WithGroup(name), min: h.min, audit: h.audit}
}

// hasAttr reports whether r has a top-level attribute key.
func hasAttr(r slog.Record, key string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == key
		return !found
	})
	return found
}
