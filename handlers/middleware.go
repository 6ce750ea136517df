package handlers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRequestBody bounds every request body: no form, JSON body or logout
// of this site comes near it.
const MaxRequestBody = 64 << 10

// bodyVerdict is what limitBody does with a request's body.
type bodyVerdict int

const (
	bodyEmpty     bodyVerdict = iota // nothing to read
	bodyRead                         // read it now, up to the cap
	bodyTooLarge                     // 413 without reading a byte
	bodyMultipart                    // 415 without reading a byte
)

// decideBody decides, from the headers alone, what happens to a request's
// body before anything parses it. A multipart body is refused whatever its
// size (no page of this site sends one, and parsing one spills to disk); a
// declared length over max is refused before a byte is read; an unknown
// length (chunked) is read up to max.
func decideBody(contentLength int64, contentType string, max int64) bodyVerdict {
	if isMultipart(contentType) {
		return bodyMultipart
	}
	switch {
	case contentLength > max:
		return bodyTooLarge
	case contentLength == 0:
		return bodyEmpty
	}
	return bodyRead
}

// isMultipart reports whether a Content-Type is multipart/*, also when it
// does not parse (a malformed multipart header is still refused).
func isMultipart(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	return strings.HasPrefix(mt, "multipart/")
}

// limitBody is the outermost guard on request bodies: it runs before the
// CSRF check, the logout handler or any form parsing. A body is refused
// (413, 415) or read whole into memory, at most max bytes, so nothing after
// it can read more or write a byte of it to disk.
func (s *Server) limitBody(max int64, next http.Handler) http.Handler {
	tooLarge := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close") // do not read the rest to reuse the connection
		s.writeError(w, r, http.StatusRequestEntityTooLarge, "RequestTooLarge",
			"the request body is larger than "+strconv.FormatInt(max>>10, 10)+" KiB")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch decideBody(r.ContentLength, r.Header.Get("Content-Type"), max) {
		case bodyMultipart:
			w.Header().Set("Connection", "close")
			s.writeError(w, r, http.StatusUnsupportedMediaType, "UnsupportedMediaType",
				"multipart bodies are not accepted: send a form (application/x-www-form-urlencoded) or JSON")
			return
		case bodyTooLarge:
			tooLarge(w, r)
			return
		case bodyRead:
			b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				tooLarge(w, r)
				return
			case err != nil:
				w.Header().Set("Connection", "close")
				s.writeError(w, r, http.StatusBadRequest, "BadRequest", "the request body could not be read")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			r.ContentLength = int64(len(b))
		}
		next.ServeHTTP(w, r)
	})
}

// securityHeaders sets the headers every answer carries. The CSP (csp, see
// contentSecurityPolicy) allows only the site's own scripts and styles and
// the one inline stylesheet by its hash: no inline script, no eval.
func securityHeaders(csp string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush for SSE.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// withRequestLog gives each request an id (X-Request-Id) and logs one line
// per request.
func (s *Server) withRequestLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		id := hex.EncodeToString(b)
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		rec := &statusRecorder{ResponseWriter: w}
		start := time.Now()
		next.ServeHTTP(rec, r)
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			return
		}
		s.log.Info("http", "method", r.Method, "path", r.URL.Path, "status", rec.status, "dur_ms", float64(time.Since(start).Microseconds())/1000, "request_id", id)
	})
}
