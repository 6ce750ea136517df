package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/roles"
)

// freezeRoles: deployers deploy in the real cluster's namespace; admins
// are superadmins.
const freezeRoles = `bindings:
  - role: deployer
    groups: [deployers]
    scope: {namespaces: [shop]}
  - role: superadmin
    groups: [admins]
`

// TestFreezeOnRealCluster: on a real control plane with the operator and
// the freezes in their ConfigMap, a deployer may not create a freeze
// (403); a superadmin's freeze of namespace shop refuses the deployer's
// rollback and sync of the real App with the reason and the opening time
// (409 frozen) and the App is not touched; the deployer may not break
// the glass; the superadmin's break-glass rolls the App back; and once the
// freeze's end passes on the store's clock the deployer's sync goes
// through.
func TestFreezeOnRealCluster(t *testing.T) {
	rc, cl := startRealCluster(t, "eu", map[string][]string{"web": {"1.0.0", "1.1.0"}})
	ctx := context.Background()
	if _, err := rc.p.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "deploy-web"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clock := &freezeClock{now: time.Now().UTC().Truncate(time.Second)}
	gate := freeze.NewGate(freeze.NewStore(rc.p.Kube.CoreV1(), "deploy-web", signtest.Keys()).WithClock(clock.Now))
	policy, err := roles.Parse("roles.yaml", []byte(freezeRoles), roles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters, o.Roles, o.Freezes, o.Now = []Cluster{cl}, policy, gate, clock.Now
	})
	dee := auth.Identity{Subject: "dee", Email: "dee@example.com", Groups: auth.NewGroupList([]string{"deployers"}), Expires: time.Now().Add(time.Hour)}
	sam := auth.Identity{Subject: "sam", Email: "sam@example.com", Groups: auth.NewGroupList([]string{"admins"}), Expires: time.Now().Add(time.Hour)}
	send := func(id auth.Identity, method, target, body string) (int, string) {
		t.Helper()
		ts.auth.id = &id
		w := ts.do(t, request{method: method, target: target, admin: true, body: body, header: map[string]string{"Content-Type": "application/json"}})
		return w.Code, w.Body.String()
	}
	image := func() string {
		t.Helper()
		img, _, _ := unstructured.NestedString(rc.app(t, "web").Object, "spec", "image")
		return img
	}

	start, end := clock.Now().Add(-time.Minute), clock.Now().Add(time.Hour)
	body := `{"scope": {"namespaces": ["shop"]}, "start": "` + start.Format(time.RFC3339) + `", "end": "` + end.Format(time.RFC3339) + `", "reason": "release week", "ticket": "https://tickets.example.com/CHG-7"}`
	if code, out := send(dee, http.MethodPost, "/v1/deploy/freezes", body); code != http.StatusForbidden {
		t.Fatalf("deployer creates a freeze = %d %s, want 403", code, out)
	}
	code, out := send(sam, http.MethodPost, "/v1/deploy/freezes", body)
	if code != http.StatusCreated {
		t.Fatalf("superadmin creates a freeze = %d %s, want 201", code, out)
	}
	var f freezeJSON
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.p.Kube.CoreV1().ConfigMaps("deploy-web").Get(ctx, freeze.ConfigMapName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the freezes ConfigMap: %v", err)
	}
	before := image()
	opens := "frozen until " + end.UTC().Format("2006-01-02 15:04") + " UTC by sam@example.com (sub sam): release week (https://tickets.example.com/CHG-7)"
	for _, st := range []struct {
		name, target, body string
		id                 auth.Identity
		want               string
	}{
		{"deployer's rollback", "/v1/deploy/web/rollback?cluster=eu", `{"version": "1.0.0"}`, dee, opens},
		{"deployer's sync", "/v1/deploy/web/sync?cluster=eu", ``, dee, opens},
		{"deployer's break-glass", "/v1/deploy/web/rollback?cluster=eu", `{"version": "1.0.0", "breakGlass": {"reason": "hotfix"}}`, dee, "only a superadmin may break the glass: " + opens},
	} {
		code, out := send(st.id, http.MethodPost, st.target, st.body)
		var e struct{ Error, Reason string }
		_ = json.Unmarshal([]byte(out), &e)
		if code != http.StatusConflict || e.Reason != "frozen" || !strings.HasPrefix(e.Error, st.want) {
			t.Errorf("%s = %d %s, want 409 frozen %q", st.name, code, out, st.want)
		}
	}
	if got := image(); got != before {
		t.Fatalf("the App's image = %s after refused writes, want %s untouched", got, before)
	}

	code, out = send(sam, http.MethodPost, "/v1/deploy/web/rollback?cluster=eu", `{"version": "1.0.0", "breakGlass": {"reason": "CVE-2026-1 hotfix"}}`)
	if code != http.StatusOK || !strings.HasSuffix(image(), ":1.0.0") {
		t.Fatalf("superadmin's break-glass rollback = %d %s, image %s; want 200 and 1.0.0", code, out, image())
	}

	clock.set(end) // the freeze lapses by itself
	if code, out := send(dee, http.MethodPost, "/v1/deploy/web/sync?cluster=eu", ``); code != http.StatusOK {
		t.Errorf("deployer's sync at the freeze's end = %d %s, want 200", code, out)
	}
	if l, err := gate.Store().List(ctx); err != nil || len(l) != 1 || l[0].ID != f.ID || !l[0].End.Equal(f.End) {
		t.Errorf("freezes after the lapse = %+v (%v), want %s untouched", l, err, f.ID)
	}
}
