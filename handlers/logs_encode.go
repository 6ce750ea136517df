package handlers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/web/templates"
)

// streamEncoder frames a log stream's events for one kind of client.
type streamEncoder interface {
	// batch writes queued events in order; ids follows the lines written.
	batch(w *bufio.Writer, items []queued, ids *lineID) error
	// notice writes a status of the server's own (shutting down).
	notice(w *bufio.Writer, status, message string) error
	// end writes the last event: nothing more will come, do not reconnect.
	end(w *bufio.Writer, message string) error
	// refuse answers a stream that may not start (too many streams).
	refuse(s *Server, w http.ResponseWriter, r *http.Request, message string) error
}

func skippedMessage(n int) string {
	if n == 1 {
		return "1 line skipped: the client did not keep up"
	}
	return strconv.Itoa(n) + " lines skipped: the client did not keep up"
}

// jsonEvents is the API's framing: each line is one event whose data is
// one JSON object {"ts":...,"line":...} (the default "message" type);
// status, skipped and end events carry JSON objects too.
type jsonEvents struct{}

type skippedJSON struct {
	Skipped int    `json:"skipped"`
	Message string `json:"message"`
}

func (jsonEvents) batch(w *bufio.Writer, items []queued, ids *lineID) error {
	lastLine := -1
	for i, it := range items {
		if it.skipped == 0 && it.ev.Status == nil {
			lastLine = i
		}
	}
	for i, it := range items {
		var (
			event string
			v     any
			id    string
		)
		switch {
		case it.skipped > 0:
			event, v = "skipped", skippedJSON{it.skipped, skippedMessage(it.skipped)}
		case it.ev.Status != nil:
			event, v = "status", it.ev.Status
		default:
			l := it.ev.Line
			l.Line = validUTF8(l.Line)
			v = l
			ids.add(l.TS)
			if i == lastLine {
				id = ids.String()
			}
		}
		b, err := json.Marshal(v) // never a raw newline; <, >, & escaped
		if err != nil {
			return err
		}
		writeEvent(w, event, id, b)
	}
	return nil
}

func (jsonEvents) notice(w *bufio.Writer, status, message string) error {
	b, err := json.Marshal(kubeview.LogStatus{Status: status, Message: message})
	if err != nil {
		return err
	}
	writeEvent(w, "status", "", b)
	return nil
}

func (jsonEvents) end(w *bufio.Writer, message string) error {
	b, err := json.Marshal(kubeview.LogStatus{Status: kubeview.StatusDone, Message: message})
	if err != nil {
		return err
	}
	writeEvent(w, "end", "", b)
	return nil
}

func (jsonEvents) refuse(_ *Server, _ http.ResponseWriter, _ *http.Request, message string) error {
	return &httpError{Status: http.StatusTooManyRequests, Reason: "TooManyStreams", Public: message}
}

// htmlEvents is the viewer's framing for the htmx SSE extension: "lines"
// events carry rows of escaped HTML (templates.LogLines) to append, and
// "status" / "end" events the status line; each event's data is one line.
type htmlEvents struct {
	timestamps bool
}

// htmlChunk bounds the rows of one "lines" event.
const htmlChunk = 256

func (e htmlEvents) batch(w *bufio.Writer, items []queued, ids *lineID) error {
	rows := make([]templates.LogLineView, 0, min(len(items), htmlChunk))
	var buf bytes.Buffer
	flushRows := func() error {
		if len(rows) == 0 {
			return nil
		}
		buf.Reset()
		if err := templates.LogLines(rows).Render(context.Background(), &buf); err != nil {
			return fmt.Errorf("handlers: render log lines: %w", err)
		}
		writeEvent(w, "lines", ids.String(), oneLine(buf.Bytes()))
		rows = rows[:0]
		return nil
	}
	for _, it := range items {
		switch {
		case it.skipped > 0:
			rows = append(rows, templates.LogLineView{Kind: "skipped", Text: skippedMessage(it.skipped)})
		case it.ev.Status != nil:
			st := it.ev.Status
			rows = append(rows, templates.LogLineView{Kind: st.Status, Text: "— " + st.Message + " —"})
			if err := flushRows(); err != nil {
				return err
			}
			if err := e.status(w, "status", st.Status, st.Pod, st.Container, st.Message); err != nil {
				return err
			}
		default:
			rows = append(rows, lineView(it.ev.Line, e.timestamps))
			ids.add(it.ev.Line.TS)
		}
		if len(rows) >= htmlChunk {
			if err := flushRows(); err != nil {
				return err
			}
		}
	}
	return flushRows()
}

func (e htmlEvents) status(w *bufio.Writer, event, status, pod, container, message string) error {
	var buf bytes.Buffer
	if err := templates.LogStatusLine(status, pod, container, message).Render(context.Background(), &buf); err != nil {
		return fmt.Errorf("handlers: render log status: %w", err)
	}
	writeEvent(w, event, "", oneLine(buf.Bytes()))
	return nil
}

func (e htmlEvents) notice(w *bufio.Writer, status, message string) error {
	return e.batch(w, []queued{{ev: kubeview.LogEvent{Status: &kubeview.LogStatus{Status: status, Message: message}}}}, &lineID{})
}

func (e htmlEvents) end(w *bufio.Writer, message string) error {
	var buf bytes.Buffer
	if err := templates.LogLines([]templates.LogLineView{{Kind: "end", Text: "— " + message + " —"}}).Render(context.Background(), &buf); err != nil {
		return fmt.Errorf("handlers: render log lines: %w", err)
	}
	writeEvent(w, "lines", "", oneLine(buf.Bytes()))
	return e.status(w, "end", kubeview.StatusDone, "", "", message)
}

func (e htmlEvents) refuse(s *Server, w http.ResponseWriter, r *http.Request, message string) error {
	return s.endStream(w, r, e, message)
}

// validUTF8 replaces each run of invalid bytes with U+FFFD, as kubeview
// already does (the encoders do not rely on it).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// oneLine turns the CR and LF left in rendered HTML (only log text can
// hold them) into character references: the same text, on one line.
func oneLine(b []byte) []byte {
	if !bytes.ContainsAny(b, "\r\n") {
		return b
	}
	b = bytes.ReplaceAll(b, []byte("\r"), []byte("&#13;"))
	return bytes.ReplaceAll(b, []byte("\n"), []byte("&#10;"))
}
