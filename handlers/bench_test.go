package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// benchRows is a fleet of n apps in a mix of states, two versions running
// in every fifth.
func benchRows(n int) []kubeview.AppRow {
	healths := []objrules.HealthStatus{objrules.HealthHealthy, objrules.HealthHealthy, objrules.HealthHealthy, objrules.HealthProgressing, objrules.HealthDegraded}
	syncs := []kubeview.SyncStatus{kubeview.SyncSynced, kubeview.SyncSynced, kubeview.SyncSynced, kubeview.SyncOutOfSync, kubeview.SyncUnknown}
	rows := make([]kubeview.AppRow, n)
	for i := range rows {
		name := fmt.Sprintf("service-%04d", i)
		version := fmt.Sprintf("1.%d.0", i%7)
		r := kubeview.AppRow{
			Name: name, Namespace: []string{"apps", "infra"}[i%2],
			Image: "ghcr.io/hanzoai/" + name + ":" + version, Version: version,
			Running:  []kubeview.VersionCount{{Version: version, Image: "ghcr.io/hanzoai/" + name + ":" + version, Ready: 3}},
			Health:   objrules.Health{Status: healths[i%len(healths)]},
			Sync:     kubeview.Sync{Status: syncs[i%len(syncs)]},
			Replicas: kubeview.Replicas{Desired: 3, Ready: 3, Updated: 3, Available: 3}, HasDeployment: true,
			LastDeployed: testNow.Add(-time.Duration(i) * time.Minute),
			Created:      testNow.Add(-time.Duration(i) * time.Hour),
		}
		if r.Health.Status != objrules.HealthHealthy {
			r.Health.Message = "Deployment " + name + ": 1 of 3 updated replicas are available"
			r.Sync.Message = "running 1.0.0, declared " + version
		}
		if i%5 == 0 {
			r.Running = append([]kubeview.VersionCount{{Version: "1.0.0", Image: "ghcr.io/hanzoai/" + name + ":1.0.0", Ready: 1}}, r.Running...)
		}
		rows[i] = r
	}
	return rows
}

func benchServe(b *testing.B, header map[string]string) {
	view := newFakeView(benchRows(100))
	view.page.Matched = 1000
	ts := newTestServer(b, view)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set(testUserHeader, "admin")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	ts.handler.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		b.Fatalf("GET /: status = %d, want %d", w.Code, http.StatusOK)
	}
	b.SetBytes(int64(w.Body.Len()))
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		ts.handler.ServeHTTP(w, r)
	}
}

// BenchmarkHomePage renders the whole application list page of 100 rows
// through the handler stack (request id, security headers, auth, render).
func BenchmarkHomePage(b *testing.B) { benchServe(b, nil) }

// BenchmarkFragment renders the HTMX #fleet-results fragment of 100 rows.
func BenchmarkFragment(b *testing.B) { benchServe(b, htmxHeader) }
