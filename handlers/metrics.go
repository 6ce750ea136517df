package handlers

import (
	"net/http"
	"strings"
	"time"
)

// Metrics receives the HTTP layer's measurements (implemented by package
// metrics). The route is the route table's pattern, never the raw path.
type Metrics interface {
	ObserveRequest(route string, status int, d time.Duration)
	StreamOpened()
	StreamClosed()
}

// instrument measures one route of the table: its duration by pattern and
// status, or, when the handler answers with a server-sent-event stream, the
// stream as open until the handler returns. It wraps the auth middleware
// too, so denials are measured under the route they were aimed at.
func (s *Server) instrument(pattern string, h http.Handler) http.Handler {
	m := s.opts.Metrics
	if m == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mw := &meteredWriter{ResponseWriter: w, m: m}
		start := time.Now()
		defer func() {
			if mw.stream {
				m.StreamClosed()
				return
			}
			status := mw.status
			if status == 0 {
				status = http.StatusOK
			}
			m.ObserveRequest(pattern, status, time.Since(start))
		}()
		h.ServeHTTP(mw, r)
	})
}

// meteredWriter notes the status and whether the answer is an event stream.
type meteredWriter struct {
	http.ResponseWriter
	m      Metrics
	status int
	stream bool
}

func (w *meteredWriter) started(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		w.stream = true
		w.m.StreamOpened()
	}
}

func (w *meteredWriter) WriteHeader(code int) {
	if code >= 200 { // 1xx informational answers are not the status
		w.started(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *meteredWriter) Write(b []byte) (int, error) {
	w.started(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// FlushError flushes (http.ResponseController finds it); a flush before any
// write sends the headers, so it starts the answer.
func (w *meteredWriter) FlushError() error {
	w.started(http.StatusOK)
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush is http.Flusher for handlers that assert it.
func (w *meteredWriter) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController reach the other controls (write
// deadlines) of the underlying writer.
func (w *meteredWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
