package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/web/templates"
)

// handlerFunc is a handler that returns its error to the adapter.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// httpError is an error with the status and the message a user may see. Err
// is logged (for 5xx) and never sent.
type httpError struct {
	Status int
	Reason string // machine-readable, e.g. "BadRequest"
	Public string // safe for users
	Err    error
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter time.Duration
}

func (e *httpError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Public, e.Err)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Public)
}

func (e *httpError) Unwrap() error { return e.Err }

func badRequest(format string, args ...any) *httpError {
	return &httpError{Status: http.StatusBadRequest, Reason: "BadRequest", Public: fmt.Sprintf(format, args...)}
}

func notFound(what string) *httpError {
	return &httpError{Status: http.StatusNotFound, Reason: "NotFound", Public: what + " not found"}
}

// publicOf is what a user may read of err: the Public text of the first
// error in its chain that carries one (the typed errors of the packages
// below the handlers), else fallback. The text of any other error is for
// the log only.
func publicOf(err error, fallback string) string {
	var p interface{ Public() string }
	if errors.As(err, &p) {
		return p.Public()
	}
	return fallback
}

// adapt turns a handlerFunc into an http.Handler: a returned error becomes a
// JSON error on the API and an error page elsewhere; 5xx are logged with the
// cause, which never reaches the client.
func (s *Server) adapt(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := s.refusalWait(r)
		if err == nil {
			err = h(w, r)
		}
		if err == nil {
			return
		}
		var he *httpError
		if !errors.As(err, &he) {
			he = stateError(err)
		}
		if he == nil {
			he = &httpError{Status: http.StatusInternalServerError, Reason: "InternalError", Public: "internal error", Err: err}
		}
		if he.RetryAfter > 0 {
			w.Header().Set("Retry-After", retryAfter(he.RetryAfter))
		}
		if he.Status >= 500 {
			s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", he.Status, "err", he.Err, "request_id", requestID(r.Context()))
		}
		s.writeError(w, r, he.Status, he.Reason, he.Public)
	})
}

// writeError answers with a JSON error or an error page, by request kind.
func (s *Site) writeError(w http.ResponseWriter, r *http.Request, status int, reason, public string) {
	if wantsJSON(r) {
		writeJSON(w, status, map[string]string{"error": public, "reason": reason})
		return
	}
	p := templates.ErrorPage{Layout: s.layout(r, "", "Error"), Status: status, Title: http.StatusText(status), Message: public}
	if status == http.StatusForbidden {
		if id, ok := auth.FromContext(r.Context()); ok {
			p.SignedInAs = displayName(id)
			p.ByRole = reason == reasonForbidden
		}
	}
	p.Layout.Title = http.StatusText(status)
	if err := s.render(w, r, status, templates.ErrorView(p)); err != nil {
		s.log.Error("render error page", "err", err)
	}
}

// Deny renders an auth denial (auth.Denier).
func (s *Site) Deny(w http.ResponseWriter, r *http.Request, status int, reason string) {
	public := reason
	switch status {
	case http.StatusUnauthorized:
		switch reason {
		case auth.ReasonUnauthenticated:
			public = "Sign in to use deploy-web."
		case auth.ReasonSessionEnded:
			public = "You were signed out: the identity provider no longer accepts this session. Sign in again."
		default:
			public = "Sign-in failed: " + reason
		}
	case http.StatusForbidden:
		switch reason {
		case auth.ReasonNotAdmin:
			public = "Your account is not a deploy-web superadmin."
		case auth.ReasonNoRole:
			public = "Your account has no role in deploy-web: ask your platform team for one."
		}
	}
	if wantsJSON(r) {
		writeJSON(w, status, map[string]string{"error": public, "reason": reason})
		return
	}
	s.writeError(w, r, status, reason, public)
}

// render renders a component into a buffer first, so that a render error
// becomes a clean 500 instead of half a page.
func (s *Site) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		return fmt.Errorf("handlers: render: %w", err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	if err != nil {
		s.log.Debug("write response", "err", err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"internal error","reason":"InternalError"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// wantsJSON: the JSON API, or a client that prefers JSON.
func wantsJSON(r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		return true
	}
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/html")
}

// isHTMX reports whether r is an HTMX request for a fragment. A history
// restore (htmx re-fetching a pushed URL it has no snapshot of) also sends
// HX-Request but swaps the answer into <body>: it needs the full page.
func isHTMX(r *http.Request) bool {
	return r.Header.Get("HX-Request") == "true" && r.Header.Get("HX-History-Restore-Request") != "true"
}

func displayName(id auth.Identity) string {
	switch {
	case id.Name != "":
		return id.Name
	case id.Email != "":
		return id.Email
	}
	return id.Subject
}
