package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/planstore"
)

// TestSelfHealPutsBackKubectlScale: issue 29's demo step, "kubectl scale
// of a self-healed object is put back", on the real control plane with
// the operator: App api of an auto-synced, self-healing environment is
// scaled with kubectl scale app/api (the App's scale subresource); the
// drift model sees spec.replicas taken by kubectl, and self-heal
// puts the count of git back (the App, then the operator's Deployment),
// with one record naming App/api's spec.replicas.
func TestSelfHealPutsBackKubectlScale(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"dev", "deploy-web"}, Operator: true})
	const app = "apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: api\nspec:\n  image: ghcr.io/acme/api:1.0.0\n  replicas: 2\n"
	srv := gitservertest.New(t, map[string]string{
		"m/kustomization.yaml": "resources: [api.yaml]\n",
		"m/api.yaml":           app,
		"catalog.json": `{"mode": "version", "commit": "0123456789abcdef0123456789abcdef01234567", "services": [
  {"id": "api", "image": "ghcr.io/acme/api", "tag": "1.0.0", "digest": "sha256:` + strings.Repeat("a", 64) + `", "published": true}]}`,
	}, gitservertest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	records := &auditRecords{}
	as, _ := runAutoSyncReplica(ctx, t, p, autoSyncDevConfig(t, srv.URL), planstore.New(p.Kube.CoreV1(), "deploy-web", 50), records, "replica-a", nil)

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(4 * time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				records.mu.Lock()
				defer records.mu.Unlock()
				t.Fatalf("timed out waiting for %s; records %+v", what, records.recs)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	apps := p.Dyn.Resource(appcr.Resource).Namespace("dev")
	replicas := func() (spec, deployment int64) {
		a, err := apps.Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			return -1, -1
		}
		spec, _, _ = unstructured.NestedInt64(a.Object, "spec", "replicas")
		d, err := p.Kube.AppsV1().Deployments("dev").Get(ctx, "api", metav1.GetOptions{})
		if err != nil || d.Spec.Replicas == nil {
			return spec, -1
		}
		return spec, int64(*d.Spec.Replicas)
	}
	succeeded := func(verb audit.Verb) int {
		n := 0
		for _, r := range records.find(verb, "") {
			if r.Outcome == audit.OutcomeSucceeded {
				n++
			}
		}
		return n
	}

	// The head goes live: api runs 2 replicas, as git says.
	waitFor("the first auto-sync", func() bool { return succeeded(audit.VerbAutoSync) > 0 })
	waitFor("api at 2 replicas", func() bool { s, d := replicas(); return s == 2 && d == 2 })

	// kubectl scale app/api --replicas=5, the demo's command: kubectl
	// writes through the App's scale subresource.
	out, err := exec.CommandContext(ctx, p.Cluster.Kubectl, "--kubeconfig", p.Cluster.Kubeconfig, "-n", "dev", "scale", "app/api", "--replicas=5").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "scaled") {
		t.Fatalf("kubectl scale app/api --replicas=5: %v\n%s", err, out)
	}
	// The scale is drift of spec.replicas by kubectl, as the plan's
	// and the self-heal's drift model reads it.
	live, err := apps.Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	drift := objrules.Drift(live.GetKind(), live.GetManagedFields(), func() map[string]any { return live.Object },
		objrules.DriftRules{OperatorManagers: []string{deployplan.FieldManager}})
	if len(drift) != 1 || drift[0].Path != "spec.replicas" || drift[0].Manager != "kubectl" || drift[0].Live != "5" {
		t.Errorf("drift of App api after kubectl scale = %+v, want spec.replicas = 5 by kubectl", drift)
	}

	// Self-heal puts the count back, with a record of what it healed.
	as.loop.Wake("dev")
	waitFor("a self-heal", func() bool { return succeeded(audit.VerbSelfHeal) > 0 })
	heal := records.find(audit.VerbSelfHeal, "")[0]
	if !strings.Contains(heal.Message, "App/api") || !strings.Contains(heal.Message, "spec.replicas") {
		t.Errorf("self-heal record message %q, want it to name App/api's spec.replicas", heal.Message)
	}
	waitFor("api back at 2 replicas", func() bool { s, d := replicas(); return s == 2 && d == 2 })
	live, err = apps.Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := objrules.Drift(live.GetKind(), live.GetManagedFields(), func() map[string]any { return live.Object },
		objrules.DriftRules{OperatorManagers: []string{deployplan.FieldManager}}); len(d) != 0 {
		t.Errorf("drift of App api after the self-heal = %+v, want none", d)
	}
	if n := succeeded(audit.VerbSelfHeal); n != 1 {
		t.Errorf("self-heal records = %d, want 1", n)
	}
}
