package handlers

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"strconv"
	"time"
)

// startSSE writes the headers of an event stream.
func startSSE(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
}

// writeEvent writes one server-sent event. data is meant to be one line;
// should it hold a CR or LF anyway, each piece goes on its own data: line
// (which clients join with "\n"), so no byte of data can end the event or
// start another field.
func writeEvent(w *bufio.Writer, event, id string, data []byte) {
	if event != "" {
		w.WriteString("event: ")
		w.WriteString(event)
		w.WriteByte('\n')
	}
	if id != "" {
		w.WriteString("id: ")
		w.WriteString(id)
		w.WriteByte('\n')
	}
	for {
		w.WriteString("data: ")
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			w.Write(data)
			w.WriteByte('\n')
			break
		}
		w.Write(data[:i])
		w.WriteByte('\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	w.WriteByte('\n')
}

// sseStream is an open event stream, shared by the log streams and the
// plan-run stream: a buffered writer (write events with writeEvent) and the
// response controller that flushes it under a write deadline.
type sseStream struct {
	*bufio.Writer
	rc      *http.ResponseController
	timeout time.Duration
}

// openSSE writes the headers of an event stream and returns its writer:
// size is the buffer; timeout bounds each flush, so a client that stops
// reading is dropped instead of holding the handler.
func openSSE(w http.ResponseWriter, size int, timeout time.Duration) *sseStream {
	rc := http.NewResponseController(w)
	startSSE(w)
	return &sseStream{Writer: bufio.NewWriterSize(w, size), rc: rc, timeout: timeout}
}

// flush sends what is buffered; an error means the client is gone (or
// stuck past the write timeout).
func (st *sseStream) flush() error {
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.timeout))
	if err := st.Flush(); err != nil {
		return err
	}
	return st.rc.Flush()
}

// heartbeat writes a comment, which clients ignore and which keeps proxies
// from closing an idle stream.
func (st *sseStream) heartbeat() { st.WriteString(": keep-alive\n\n") }

// retry tells EventSource how long to wait before it reconnects.
func (st *sseStream) retry(d time.Duration) {
	st.WriteString("retry: " + strconv.FormatInt(d.Milliseconds(), 10) + "\n\n")
}

// shutdownCtx is done when the server shuts down gracefully (Options.
// ShutdownCtx; never without one): every stream ends then, telling its
// client to reconnect to another replica.
func (s *Server) shutdownCtx() context.Context {
	if s.opts.ShutdownCtx == nil {
		return context.Background()
	}
	return s.opts.ShutdownCtx
}
