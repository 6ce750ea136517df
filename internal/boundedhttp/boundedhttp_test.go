package boundedhttp

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestCapBodies reads answers at, and one byte over, the cap: the first
// reads whole, the second fails with the caller's error.
func TestCapBodies(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", len(r.URL.Path)-1))
	}))
	defer ts.Close()
	errOver := errors.New("over the cap")
	c := &http.Client{Transport: CapBodies(Transport(5*time.Second), 4, func() error { return errOver })}
	for _, tt := range []struct {
		path    string
		wantErr error
	}{
		{"/1234", nil},
		{"/12345", errOver},
	} {
		resp, err := c.Get(ts.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("read %s (%d bytes, cap 4) = %q, %v; want error %v", tt.path, len(tt.path)-1, b, err, tt.wantErr)
		}
	}
}

// TestTransportHeaderDeadline: a server that never answers is given up at
// the header deadline, not waited for.
func TestTransportHeaderDeadline(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer ts.Close()
	defer close(release)
	c := &http.Client{Transport: Transport(200 * time.Millisecond)}
	start := time.Now()
	_, err := c.Get(ts.URL)
	if err == nil {
		t.Fatal("Get(never-answering server) = nil error, want the header deadline")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Get(never-answering server) took %s, want about 200ms", d)
	}
}
