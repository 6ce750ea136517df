package handlers

import (
	"bufio"
	"bytes"
	"net/http"
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
