package deployplan

import (
	"context"
	"github.com/hanzoai/deploy-web/envconfig"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHealthCheckOnly2xxPasses: a health check passes on a 2xx answer of
// its URL only. A service answering its health URL with a redirect (to a
// page of its own host that answers 200, or to another host) fails, with
// the deployment's own client or one that would follow redirects, and the
// redirect's target is never asked.
func TestHealthCheckOnly2xxPasses(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	defer other.Close()
	var landed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			landed.Add(1)
			return
		}
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		switch r.URL.Query().Get("to") {
		case "same":
			w.Header().Set("Location", "/ok")
		case "other":
			w.Header().Set("Location", other.URL+"/ok")
		}
		w.WriteHeader(code)
	}))
	defer srv.Close()

	tests := []struct {
		path string
		want bool
	}{
		{"/200", true},
		{"/204", true},
		{"/299", true},
		{"/301?to=same", false},
		{"/302?to=same", false},
		{"/303?to=other", false},
		{"/307?to=same", false},
		{"/308?to=other", false},
		{"/304", false},
		{"/404", false},
		{"/500", false},
	}
	clients := map[string]*http.Client{"default": nil, "following": {Timeout: 5 * time.Second}}
	for cname, client := range clients {
		for _, tt := range tests {
			landed.Store(0)
			elsewhere.Store(0)
			hc := envconfig.HealthCheck{Name: "api", URL: srv.URL + tt.path, Required: true}
			rs := runHealthChecks(context.Background(), []envconfig.HealthCheck{hc}, client, 5*time.Second)
			if len(rs) != 1 || rs[0].OK != tt.want {
				t.Errorf("%s client: health check %s = %+v, want OK %v", cname, tt.path, rs, tt.want)
				continue
			}
			if n := landed.Load() + elsewhere.Load(); n != 0 {
				t.Errorf("%s client: health check %s followed its redirect (%d requests to the target)", cname, tt.path, n)
			}
			if strings.Contains(tt.path, "?to=") && !strings.Contains(rs[0].Message, "a redirect") {
				t.Errorf("%s client: health check %s message = %q, want it to say it is a redirect", cname, tt.path, rs[0].Message)
			}
		}
	}
	if clients["following"].CheckRedirect != nil {
		t.Errorf("runHealthChecks changed the caller's client")
	}
}
