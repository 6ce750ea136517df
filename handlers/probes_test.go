package handlers

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProbes(t *testing.T) {
	view := newFakeView(testRows())
	view.synced = false
	ts := newTestServer(t, view)
	check := func(target string, wantStatus int, want map[string]string) {
		t.Helper()
		w := ts.do(t, request{target: target})
		if w.Code != wantStatus {
			t.Errorf("GET %s: status = %d, want %d", target, w.Code, wantStatus)
		}
		var got map[string]string
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("GET %s: body %q: %v", target, w.Body, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET %s: body mismatch (-want +got):\n%s", target, diff)
		}
	}
	check("/healthz", http.StatusOK, map[string]string{"status": "ok"})
	check("/readyz", http.StatusServiceUnavailable, map[string]string{"status": "caches not synced"})
	view.setSynced(true)
	check("/readyz", http.StatusOK, map[string]string{"status": "ready"})
	check("/healthz", http.StatusOK, map[string]string{"status": "ok"})
	if req, _ := ts.auth.counts(); req != 0 {
		t.Errorf("probes: Require saw %d requests, want 0", req)
	}
	if logs := ts.log.String(); logs != "" {
		t.Errorf("probes: log = %q, want no request lines for probes", logs)
	}
}
