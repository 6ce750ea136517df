package handlers

import (
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/templates"
)

// TestRefusalFloodIsRateLimited: once a person's refused writes pass the
// limit, their next write is answered 429 with Retry-After before it is
// tried, and nothing more is recorded; reads still work, and another
// person's writes are not held.
func TestRefusalFloodIsRateLimited(t *testing.T) {
	now := testNow
	lim := audit.NewLimiter(audit.RefusalLimit{Burst: 3, Every: time.Minute}, func() time.Time { return now })
	cs := fake.NewClientset()
	store, err := audit.New(cs.CoreV1(), metaOverTyped{cs}, audit.Options{Namespace: testAuditNS, Refusals: lim})
	if err != nil {
		t.Fatal(err)
	}
	view := newFakeView([]kubeview.AppRow{{Name: "web", Namespace: "apps"}})
	ts := newTestServer(t, newFakeView(nil), withAudit(store), func(o *Options) {
		o.Refusals = lim
		o.Clusters = []Cluster{{Name: "us", View: twinView{view}, Release: &recordingReleaser{}}}
	})
	refused := request{method: "POST", target: "/clusters/us/apps/apps/nope/rollback", admin: true,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: "version=1.2.0"}
	for i := range 3 {
		if w := ts.do(t, refused); w.Code != http.StatusNotFound {
			t.Fatalf("refused rollback %d: status %d, want 404", i+1, w.Code)
		}
	}
	before := len(records(t, store))
	w := ts.do(t, refused)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "60" || !strings.Contains(w.Body.String(), "too many of your writes were refused") {
		t.Errorf("the 4th refused rollback: status %d, Retry-After %q, body %s; want 429, 60 and the reason", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	if n := len(records(t, store)); n != before {
		t.Errorf("a rate-limited write left %d records, want %d (none more)", n, before)
	}
	if w := ts.do(t, request{target: "/audit", admin: true}); w.Code != http.StatusOK {
		t.Errorf("a read while held: status %d, want 200", w.Code)
	}
	now = now.Add(time.Minute)
	if w := ts.do(t, refused); w.Code != http.StatusNotFound {
		t.Errorf("a write a minute later: status %d, want it tried again (404)", w.Code)
	}
}

// TestTamperedFreezesRefuseWrites: freezes edited by hand (kubectl edit)
// refuse every write with the reason and the fix (503), and /freezes
// says so.
func TestTamperedFreezesRefuseWrites(t *testing.T) {
	cs := fake.NewClientset()
	fs := freeze.NewStore(cs.CoreV1(), "deploy-web", signtest.Keys()).WithClock(func() time.Time { return testNow })
	f := freeze.Freeze{Start: testNow.Add(-time.Hour), End: testNow.Add(time.Hour), Reason: "release week", Author: freeze.Author{Subject: "alice"}}
	f.Scope.Environments = []string{"prod"}
	if _, err := fs.Add(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("deploy-web").Get(t.Context(), freeze.ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[freeze.DataKey] = strings.Replace(cm.Data[freeze.DataKey], `"prod"`, `"nowhere"`, 1)
	if _, err := cs.CoreV1().ConfigMaps("deploy-web").Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	view := newFakeView([]kubeview.AppRow{{Name: "web", Namespace: "apps"}})
	rel := &recordingReleaser{}
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Freezes = freeze.NewGate(fs)
		o.Clusters = []Cluster{{Name: "us", View: twinView{view}, Release: rel}}
	})
	w := ts.do(t, request{method: "POST", target: "/clusters/us/apps/apps/web/sync", admin: true})
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "changed outside deploy-web") || !strings.Contains(w.Body.String(), "delete configmap deploy-web-freezes") {
		t.Errorf("sync over edited freezes: status %d, body %s; want 503 saying the freezes were changed outside deploy-web and the fix", w.Code, w.Body)
	}
	if len(rel.calls) != 0 {
		t.Errorf("sync over edited freezes reached the release seam %d times, want 0", len(rel.calls))
	}
	// The banner of the App and environment pages.
	var banner strings.Builder
	if err := templates.FreezeBanner(ts.srv.freezeBanner(t.Context(), roles.Target{Cluster: "us", Namespace: "apps", App: "web"})).Render(t.Context(), &banner); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(banner.String(), `data-testid="freeze-banner-tampered"`) || !strings.Contains(banner.String(), "changed outside deploy-web") {
		t.Errorf("the freeze banner over edited freezes does not say they were changed outside deploy-web:\n%s", banner.String())
	}
	page := ts.do(t, request{target: "/freezes", admin: true})
	if !strings.Contains(page.Body.String(), `data-testid="freezes-unreadable"`) || !strings.Contains(page.Body.String(), "changed outside deploy-web") {
		t.Errorf("/freezes over edited freezes does not say they were changed outside deploy-web:\n%s", page.Body)
	}
}
