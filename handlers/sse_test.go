package handlers

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestSSEStream(t *testing.T) {
	w := httptest.NewRecorder()
	st := openSSE(w, 4096, time.Second)
	st.retry(2 * time.Second)
	writeEvent(st.Writer, "step", "7", []byte("a\r\nb"))
	st.heartbeat()
	if err := st.flush(); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if got, want := w.Header().Get("Content-Type"), "text/event-stream; charset=utf-8"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	if got, want := w.Body.String(), "retry: 2000\n\nevent: step\nid: 7\ndata: a\ndata: b\n\n: keep-alive\n\n"; got != want {
		t.Errorf("stream = %q, want %q", got, want)
	}
}
