package deployplan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// TestHelmChartPlanApplyOnRealCluster plans and applies, on the real
// control plane, an environment whose source is a chart folder in a git
// repository, with a values file per environment: the chart is rendered
// for the cluster's own version, its pre-install hook is listed and
// applied first, the catalog and digest gates see its images; then a
// commit that changes the values file's tag plans as an update of the
// Deployment's image and applies.
func TestHelmChartPlanApplyOnRealCluster(t *testing.T) {
	const ns = "helm"
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{ns}})
	logFile := shimPATH(t)
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	d1 := pushImage(t, host+"/team/webapp:2.4.0")
	d2 := pushImage(t, host+"/team/webapp:2.5.0")

	dir := helmRepo(t)
	values := func(tag string, migrations bool) string {
		return fmt.Sprintf("image:\n  repository: %s/team/webapp\n  tag: %s\nreplicaCount: 1\nmigrations:\n  enabled: %v\n", host, tag, migrations)
	}
	catalog := func(tag, digest string) string {
		return fmt.Sprintf(`{"mode": "version", "services": [{"id": "webapp", "image": "%s/team/webapp", "tag": "%s", "digest": "%s", "published": true}]}`, host, tag, digest)
	}
	writeFiles(t, dir, map[string]string{"envs/dev/values.yaml": values("2.4.0", true), "catalog.json": catalog("2.4.0", d1)})
	commitAll(t, dir)
	cfgDir := t.TempDir()
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`environments:
  - name: dev
    cluster: {context: test}
    namespace: %s
    source:
      repo: file://%s
      ref: master
      path: charts/webapp
      helm: {releaseName: shop, valueFiles: [../../envs/dev/values.yaml]}
    catalog: catalog.json
    registry: {hosts: [%q]}
`, ns, dir, host)), filepath.Join(cfgDir, "environments.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	env, err := cfg.Env("dev")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opts := Options{RestConfig: p.Cluster.Config}

	rep, err := Plan(ctx, env, opts)
	if err != nil {
		t.Fatal(err)
	}
	d := rep.DeployApply
	if d.Conclusion.Status != StatusReady {
		t.Fatalf("plan status %q, blockers %+v", d.Conclusion.Status, d.RemainingBlockers)
	}
	if anyContains(d.Warnings, "rendered for Kubernetes") {
		t.Errorf("warnings = %q: the chart was not rendered for the cluster's version", d.Warnings)
	}
	hooks := map[string]string{}
	for _, o := range d.Objects {
		hooks[o.Kind+"/"+o.Name] = o.Hook
	}
	if hooks["Job/shop-webapp-migrate"] != "pre-install,pre-upgrade" || hooks["Deployment/shop-webapp"] != "" {
		t.Errorf("objects' hooks = %v, want the migrate Job listed as a pre-install hook", hooks)
	}
	if len(d.ArtifactPlan.Services) == 0 || d.ArtifactPlan.RegistryStatus != RegistryVerified {
		t.Errorf("artifactPlan = %+v, want the chart's image checked against the catalog and the registry", d.ArtifactPlan)
	}

	rep, err = Apply(ctx, env, ApplyOptions{Options: opts, Request: ApplyRequest{Env: "dev", ConfirmEnv: "dev", ConfirmedNonProduction: true},
		ReportPath: filepath.Join(t.TempDir(), "apply.json"), Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.DeployApply.Conclusion.Status; s != StatusApplied {
		t.Fatalf("apply status %q: %s", s, rep.DeployApply.Conclusion.Summary)
	}
	if first := rep.DeployApply.Objects; len(first) == 0 {
		t.Fatal("apply reported no objects")
	}
	dep, err := p.Kube.AppsV1().Deployments(ns).Get(ctx, "shop-webapp", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != host+"/team/webapp:2.4.0" {
		t.Errorf("live image = %q, want the chart's 2.4.0", img)
	}
	job, err := p.Kube.BatchV1().Jobs(ns).Get(ctx, "shop-webapp-migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the pre-install hook Job was not applied: %v", err)
	}
	if !job.CreationTimestamp.Time.After(time.Time{}) || job.CreationTimestamp.After(dep.CreationTimestamp.Time) {
		t.Errorf("hook Job created at %v, Deployment at %v: want the hook first", job.CreationTimestamp, dep.CreationTimestamp)
	}

	// The next version, through git: the values file's tag.
	writeFiles(t, dir, map[string]string{"envs/dev/values.yaml": values("2.5.0", false), "catalog.json": catalog("2.5.0", d2)})
	commitAll(t, dir)
	rep, err = Plan(ctx, env, opts)
	if err != nil {
		t.Fatal(err)
	}
	var change *Change
	for _, o := range rep.DeployApply.Objects {
		if o.Kind == "Deployment" && o.Name == "shop-webapp" {
			for i, c := range o.Changes {
				if strings.Contains(c.Path, "image") {
					change = &o.Changes[i]
				}
			}
			if o.Action != ActionUpdate {
				t.Errorf("Deployment action %q, want update", o.Action)
			}
		}
	}
	if change == nil || !strings.HasSuffix(change.Old, ":2.4.0") || !strings.HasSuffix(change.New, ":2.5.0") {
		t.Errorf("Deployment image change = %+v, want 2.4.0 -> 2.5.0", change)
	}
	rep, err = Apply(ctx, env, ApplyOptions{Options: opts, Request: ApplyRequest{Env: "dev", ConfirmEnv: "dev", ConfirmedNonProduction: true},
		ReportPath: filepath.Join(t.TempDir(), "apply2.json"), Timeout: 2 * time.Minute})
	if err != nil || rep.DeployApply.Conclusion.Status != StatusApplied {
		t.Fatalf("second apply = %v, %v", rep, err)
	}
	dep, err = p.Kube.AppsV1().Deployments(ns).Get(ctx, "shop-webapp", metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != host+"/team/webapp:2.5.0" {
		t.Errorf("live Deployment after the second apply = %v, %v; want 2.5.0", dep, err)
	}
	if b, err := os.ReadFile(logFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a program ran while rendering: %q (err %v)", b, err)
	}
}
