package handlers

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

func TestDecideBody(t *testing.T) {
	const max = 100
	for _, tt := range []struct {
		name   string
		length int64
		ctype  string
		want   bodyVerdict
	}{
		{"no body", 0, "", bodyEmpty},
		{"small form", 40, "application/x-www-form-urlencoded", bodyRead},
		{"at the cap", max, "application/json", bodyRead},
		{"one byte over", max + 1, "application/x-www-form-urlencoded", bodyTooLarge},
		{"10 MB", 10 << 20, "application/x-www-form-urlencoded", bodyTooLarge},
		{"unknown length", -1, "application/x-www-form-urlencoded", bodyRead},
		{"multipart", 40, "multipart/form-data; boundary=x", bodyMultipart},
		{"multipart, no body", 0, "multipart/form-data; boundary=x", bodyMultipart},
		{"multipart over the cap", 10 << 20, "multipart/form-data; boundary=x", bodyMultipart},
		{"multipart upper case", 40, "Multipart/Mixed; boundary=x", bodyMultipart},
		{"multipart malformed", 40, "multipart/form-data; boundary", bodyMultipart},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := decideBody(tt.length, tt.ctype, max); got != tt.want {
				t.Errorf("decideBody(%d, %q, %d) = %d, want %d", tt.length, tt.ctype, max, got, tt.want)
			}
		})
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestBodyLimit: an oversized or multipart body is refused before anything
// (Require, the CSRF check, logout) sees the request, having read at most
// the cap; a small body reaches the route intact.
func TestBodyLimit(t *testing.T) {
	big := bytes.Repeat([]byte("a"), 10<<20)
	for _, tt := range []struct {
		name       string
		target     string
		body       []byte
		length     int64 // -1: unknown (chunked)
		ctype      string
		api        bool
		wantStatus int
		maxRead    int64
		wantRoute  bool
	}{
		{"10 MB form to logout", "/auth/logout", big, int64(len(big)), "application/x-www-form-urlencoded", false, http.StatusRequestEntityTooLarge, 0, false},
		{"10 MB form to a protected route", "/clusters/in-cluster/apps/storefront/web/sync", big, int64(len(big)), "application/x-www-form-urlencoded", false, http.StatusRequestEntityTooLarge, 0, false},
		{"10 MB JSON to the API", "/v1/deploy/web/rollback", big, int64(len(big)), "application/json", true, http.StatusRequestEntityTooLarge, 0, false},
		{"10 MB chunked", "/auth/logout", big, -1, "application/x-www-form-urlencoded", false, http.StatusRequestEntityTooLarge, MaxRequestBody + 1, false},
		{"multipart to logout", "/auth/logout", []byte("--x\r\n\r\n--x--"), 13, "multipart/form-data; boundary=x", false, http.StatusUnsupportedMediaType, 0, false},
		{"multipart 10 MB", "/clusters/in-cluster/apps/storefront/web/sync", big, int64(len(big)), "multipart/form-data; boundary=x", false, http.StatusUnsupportedMediaType, 0, false},
		{"small form", "/auth/logout", []byte("csrf_token=x"), 12, "application/x-www-form-urlencoded", false, http.StatusOK, 12, true},
		{"small chunked form", "/auth/logout", []byte("csrf_token=x"), -1, "application/x-www-form-urlencoded", false, http.StatusOK, 12, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, newFakeView(testRows()))
			body := &countingReader{r: bytes.NewReader(tt.body)}
			r := httptest.NewRequest(http.MethodPost, tt.target, body)
			r.ContentLength = tt.length
			r.Header.Set("Content-Type", tt.ctype)
			r.Header.Set(testUserHeader, "admin")
			if !tt.api {
				r.Header.Set("Accept", "text/html")
			}
			w := httptest.NewRecorder()
			ts.handler.ServeHTTP(w, r)
			if w.Code != tt.wantStatus {
				t.Errorf("POST %s: status = %d, want %d; body %.200s", tt.target, w.Code, tt.wantStatus, w.Body.String())
			}
			if got := body.n.Load(); got > tt.maxRead {
				t.Errorf("POST %s: %d body bytes read, want at most %d", tt.target, got, tt.maxRead)
			}
			required, _ := ts.auth.counts()
			reached := required > 0 || strings.Contains(w.Body.String(), "fake-logout")
			if reached != tt.wantRoute {
				t.Errorf("POST %s: reached the route = %v, want %v", tt.target, reached, tt.wantRoute)
			}
			if tt.wantStatus != http.StatusOK {
				if tt.api && !strings.Contains(w.Header().Get("Content-Type"), "application/json") {
					t.Errorf("POST %s: Content-Type = %q, want a JSON error", tt.target, w.Header().Get("Content-Type"))
				}
				if w.Header().Get("Connection") != "close" {
					t.Errorf("POST %s: Connection = %q, want close", tt.target, w.Header().Get("Connection"))
				}
			}
		})
	}
}

// TestBodyLimitOverTheWire sends a 10 MB form and a 10 MB multipart body to
// logout through a real connection: each is answered 413 / 415, and nothing
// is written to the temporary folder (where multipart parsing would spill).
func TestBodyLimitOverTheWire(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ts := newTestServer(t, newFakeView(testRows()))
	srv := httptest.NewServer(ts.handler)
	t.Cleanup(srv.Close)
	big := bytes.Repeat([]byte("a"), 10<<20)
	for _, tt := range []struct {
		ctype string
		want  int
	}{
		{"application/x-www-form-urlencoded", http.StatusRequestEntityTooLarge},
		{"multipart/form-data; boundary=xyz", http.StatusUnsupportedMediaType},
	} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/auth/logout", bytes.NewReader(big))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", tt.ctype)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("POST /auth/logout (%s): %v", tt.ctype, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("POST /auth/logout (%s): status = %d, want %d", tt.ctype, resp.StatusCode, tt.want)
		}
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("temporary folder holds %d entries after the refused uploads, want none (first %q)", len(entries), entries[0].Name())
	}
	if required, _ := ts.auth.counts(); required != 0 {
		t.Errorf("Require saw %d requests, want 0", required)
	}
}
