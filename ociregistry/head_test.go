package ociregistry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHeadContactsListedHostsOnly: with no list, or a list without the
// image's host, Head asks nothing (no request reaches the registry) and
// says why; a listed host is asked; a reference that does not parse is
// never asked.
func TestHeadContactsListedHostsOnly(t *testing.T) {
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer ts.Close()
	host := strings.TrimPrefix(ts.URL, "http://")
	digest := "sha256:" + strings.Repeat("0", 64)
	lookups := []Lookup{{Repository: host + "/acme/api", Digest: digest}, {Repository: host + "/acme/api", Digest: "not-a-digest"}}
	for _, tt := range []struct {
		name     string
		listed   func(string) bool
		want     func(Result) bool
		wantHits bool
	}{
		{"no list", nil, func(r Result) bool { return r.NoList }, false},
		{"not listed", func(string) bool { return false }, func(r Result) bool { return r.NotListed }, false},
		{"listed", func(h string) bool { return h == host }, func(r Result) bool { return r.Status == http.StatusNotFound }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hits.Store(0)
			rs := Head(context.Background(), lookups, Options{Listed: tt.listed, Insecure: true})
			if len(rs) != 2 || !tt.want(rs[0]) || rs[0].Host != host {
				t.Fatalf("Head(%s) = %+v, want the first result %s of host %s", tt.name, rs, tt.name, host)
			}
			if !rs[1].BadRef {
				t.Errorf("Head(a bad digest) = %+v, want BadRef", rs[1])
			}
			if got := hits.Load() > 0; got != tt.wantHits {
				t.Errorf("Head(%s): the registry was asked = %v, want %v", tt.name, got, tt.wantHits)
			}
		})
	}
}
