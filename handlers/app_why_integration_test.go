package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/why"
)

// whyAutoSync is the auto-sync loop's state of dev over the real pauses
// store (the loop itself is not run: nothing applies behind the test).
type whyAutoSync struct{ pauses *autosync.Pauses }

func (w whyAutoSync) Status(ctx context.Context, env string) (autosync.Status, bool, error) {
	if env != "dev" {
		return autosync.Status{}, false, nil
	}
	st := autosync.Status{Enabled: true}
	ps, err := w.pauses.List(ctx)
	for _, p := range ps {
		if p.Env == env && p.Active(time.Now()) {
			st.Paused, st.PausedUntil, st.PauseReason, st.PausedBy = true, p.Until, p.Reason, p.By
		}
	}
	return st, true, err
}

func (w whyAutoSync) Pause(ctx context.Context, env, reason string, until time.Time, by string) (autosync.Pause, error) {
	return w.pauses.Pause(ctx, env, reason, until, by)
}

func (w whyAutoSync) Resume(ctx context.Context, env, by string) (autosync.Pause, error) {
	return w.pauses.Resume(ctx, env, by)
}

// TestWhyOnRealCluster: on the real control plane, with dev's manifests
// in a real git server, GET /v1/deploy/api/why answers nothing while api
// is live and healthy; a new commit not applied, with dev's auto-sync
// paused, a freeze, a waiting promotion and an apply's lock held, names
// each (freeze, paused, promotion, not-applied, locked, in that order)
// with its link; once the freeze ends, the pause is resumed, the request
// is rejected and the lock released, the apply of the crash-looping
// release fails: its commit is not live (with what the run said) and the
// Deployment is Degraded; and a healthy release applied leaves nothing. The app page's panel shows the same.
func TestWhyOnRealCluster(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{realNS, "deploy-web"}, Operator: true})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	view, err := kubeview.New(p.Kube, p.Dyn, log, kubeview.Options{Namespaces: []string{realNS}, ProbeInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	rc := &realCluster{name: "in-cluster", p: p, view: view}

	srv := gitservertest.New(t, map[string]string{
		"base/kustomization.yaml":         "resources: [api.yaml]\n",
		"base/api.yaml":                   gitopsApp("api", "1.0.0", 1),
		"overlays/dev/kustomization.yaml": "resources: [../../base]\nnamespace: " + realNS + "\n",
		"catalog.json":                    releasesCatalog("2.0.0", "1.0.0", "1.1.0", "1.2.0"),
	}, gitservertest.Options{})
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`environments:
  - name: dev
    cluster: {context: test}
    namespace: %s
    source: {repo: %q, ref: main, path: overlays/dev}
    catalog: catalog.json
    registry: {skip: true}
`, realNS, srv.URL)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	index := envsource.New(cfg, log, time.Hour)
	store := planstore.New(p.Kube.CoreV1(), "deploy-web", 50)
	runner := envrun.New(cfg, log, envrun.Options{RestConfig: p.Cluster.Config, Events: p.Kube.CoreV1(), ReportsDir: t.TempDir(),
		Store: store, Index: index, ApplyTimeout: 2 * time.Minute})
	gate := freeze.NewGate(freeze.NewStore(p.Kube.CoreV1(), "deploy-web", signtest.Keys()))
	pauses := autosync.NewPauses(p.Kube.CoreV1(), "deploy-web", signtest.Keys(), time.Now)
	promotions := promotion.NewStore(p.Kube.CoreV1(), "deploy-web", signtest.Keys())
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{{Name: "in-cluster", View: view}}
		o.Environments, o.Desired, o.EnvClusters = runner, index, map[string]string{"dev": "in-cluster"}
		o.EnvClusterConfig = func(*envconfig.Environment) (*rest.Config, error) { return p.Cluster.Config, nil }
		o.Freezes, o.AutoSync, o.Promotions, o.Now = gate, whyAutoSync{pauses}, promotions, time.Now
	})
	ask := func() why.Answer {
		t.Helper()
		w := ts.do(t, request{method: http.MethodGet, target: "/v1/deploy/api/why", admin: true})
		if w.Code != http.StatusOK {
			t.Fatalf("GET /v1/deploy/api/why = %d %s", w.Code, w.Body)
		}
		var a why.Answer
		if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	// waitUntil asks until ok holds of the answer (the caches and the
	// rollout catch up), generously.
	waitUntil := func(step string, ok func(why.Answer) bool) why.Answer {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for {
			a := ask()
			if ok(a) {
				return a
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: reasons %+v", step, a)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	// waitFor waits until the answer's kinds are want.
	waitFor := func(step string, want ...why.Kind) why.Answer {
		t.Helper()
		return waitUntil(step, func(a why.Answer) bool {
			got := make([]why.Kind, 0, len(a.Reasons))
			for _, r := range a.Reasons {
				got = append(got, r.Kind)
			}
			return fmt.Sprint(got) == fmt.Sprint(want)
		})
	}
	refresh := func() {
		t.Helper()
		if err := index.Refresh(ctx, "dev"); err != nil {
			t.Fatal(err)
		}
	}

	// Live and healthy: nothing.
	deployApplied(t, runner, "dev", envrun.TriggerSync)
	rc.waitSynced(t, "api", "1.0.0")
	refresh()
	if a := waitFor("live and healthy"); a.Desired != "1.0.0" || a.Live != "1.0.0" {
		t.Errorf("answer = desired %q live %q, want 1.0.0 and 1.0.0", a.Desired, a.Live)
	}

	// A commit not applied, with auto-sync paused, a freeze, a waiting
	// promotion and a lock held.
	srv.RemoteCommitFiles(map[string]string{"base/api.yaml": gitopsApp("api", "1.1.0", 1)}, "api 1.1.0")
	refresh()
	if _, err := pauses.Pause(ctx, "dev", "incident 42", time.Now().Add(time.Hour), "pat@example.com"); err != nil {
		t.Fatal(err)
	}
	f, err := gate.Store().Add(ctx, freeze.Freeze{Scope: scope.Scope{Environments: []string{"dev"}}, Start: time.Now().Add(-time.Minute), End: time.Now().Add(time.Hour),
		Reason: "release week", Author: freeze.Author{Email: "sam@example.com", Subject: "sam"}})
	if err != nil {
		t.Fatal(err)
	}
	gate.Forget()
	req, err := promotions.Create(ctx, promotion.Request{Target: "dev", Source: "ci", Apps: []promotion.AppVersion{{App: "api", Version: "1.2.0"}},
		Requester: audit.Actor{Email: "rae@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	holder, secs, renew := "ci@runner [apply 1]", int32(120), metav1.NewMicroTime(time.Now())
	if _, err := p.Kube.CoordinationV1().Leases(realNS).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: deployplan.LockName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &renew, RenewTime: &renew}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a := waitFor("held back", why.Freeze, why.Paused, why.Promotion, why.NotApplied, why.Locked)
	if a.Desired != "1.1.0" || a.Live != "1.0.0" {
		t.Errorf("answer = desired %q live %q, want 1.1.0 and 1.0.0", a.Desired, a.Live)
	}
	for i, want := range []struct{ text, link string }{
		{"by sam@example.com (sub sam): release week", "/environments/dev"},
		{"the auto-sync of dev is paused", "/environments/dev"},
		{"promotion " + req.ID + " of 1.2.0 from ci to dev waits", "/environments/dev/promote?app=api&from=ci"},
		{"of dev is not applied: dev runs", "/environments/dev"},
		{"holder ci@runner [apply 1]", "/environments/dev"},
	} {
		if r := a.Reasons[i]; !strings.Contains(r.Message, want.text) || r.Link != want.link {
			t.Errorf("reason %d = %q %q, want %q and link %q", i, r.Message, r.Link, want.text, want.link)
		}
	}
	page := ts.do(t, request{method: http.MethodGet, target: "/clusters/in-cluster/apps/" + realNS + "/api", admin: true})
	if body := page.Body.String(); page.Code != http.StatusOK || !strings.Contains(body, `data-testid="why-panel"`) || strings.Count(body, `data-testid="why-reason"`) != 5 {
		t.Errorf("app page = %d, want the why panel with 5 reasons", page.Code)
	}

	// Cleared: the freeze ends, the pause is resumed, the request
	// rejected, the lock released and the commit applied: nothing.
	if _, err := gate.Store().Remove(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	gate.Forget()
	if _, err := pauses.Resume(ctx, "dev", "pat@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := promotions.Decide(ctx, "dev", req.ID, promotion.StateRejected, audit.Actor{Email: "sam@example.com"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Kube.CoordinationV1().Leases(realNS).Delete(ctx, deployplan.LockName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deployApplied(t, runner, "dev", envrun.TriggerSync)
	rc.waitSynced(t, "api", "1.1.0")
	waitFor("cleared")

	// Someone edits the live App: its pods crash-loop and its rollout
	// passes a 2 s deadline, Degraded (and drifted from git).
	edit := func(patch string) {
		t.Helper()
		if _, err := p.Dyn.Resource(appcr.Resource).Namespace(realNS).Patch(ctx, "api", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
	}
	edit(`{"spec":{"progressDeadlineSeconds":2,"podLabels":{"` + devcluster.BehaviorLabel + `":"` + devcluster.BehaviorCrashLoop + `"}}}`)
	a = waitUntil("degraded", func(a why.Answer) bool {
		return len(a.Reasons) > 0 && a.Reasons[0].Kind == why.Health && strings.Contains(a.Reasons[0].Message, "Degraded")
	})
	if r := a.Reasons[0]; !strings.HasPrefix(r.Message, "Deployment api is Degraded") || !strings.Contains(r.Link, "Deployment") {
		t.Errorf("health reason = %q %q, want the Deployment and its link", r.Message, r.Link)
	}

	// Put back: nothing.
	edit(`{"spec":{"progressDeadlineSeconds":null,"podLabels":null}}`)
	waitFor("put back")
}
