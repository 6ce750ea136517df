package deployplan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// pushImage pushes a small random image to ref and returns its digest.
func pushImage(t *testing.T, ref string) string {
	t.Helper()
	img, err := random.Image(128, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, _ := img.Digest()
	return d.String()
}

// TestPlanCatalogModesOnRealCluster plans, on the real control plane and
// against a registry on loopback, a project whose images are tagged with
// versions plus a third-party image pinned by digest: a version-mode
// catalog makes it ready (every digest HEAD-checked, the third-party one
// included), a commit-mode catalog blocks it with one blocker naming every
// container, a catalog whose commit is a version is a config error. Then
// hand edits by other field managers show up as objects[].drift, and
// deploy-web's own fields do not.
func TestPlanCatalogModesOnRealCluster(t *testing.T) {
	const ns = "modes"
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{ns}})
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	apiDigest := pushImage(t, host+"/acme/api:6.14.1")
	redisDigest := pushImage(t, host+"/library/redis:7.4")

	dir := t.TempDir()
	deploy := func(name, image string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
      containers:
        - name: main
          image: %s
          env: [{name: APP_VERSION, value: "6.14.1"}]
`, name, name, name, image)
	}
	writeFiles(t, dir, map[string]string{
		"m/kustomization.yaml": "resources:\n  - api.yaml\n  - redis.yaml\n  - svc.yaml\n",
		"m/api.yaml":           deploy("api", host+"/acme/api:6.14.1"),
		"m/redis.yaml":         strings.Replace(deploy("redis", host+"/library/redis:7.4@"+redisDigest), "        env: [{name: APP_VERSION, value: \"6.14.1\"}]\n", "", 1),
		"m/svc.yaml":           "apiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec:\n  selector: {app: api}\n  ports: [{name: http, port: 80, targetPort: 8080}]\n",
	})
	versionCat := fmt.Sprintf(`{"mode": "version", "services": [
  {"id": "api", "image": "%s/acme/api", "tag": "6.14.1", "digest": "%s", "published": true}],
 "thirdParty": [{"image": "%s/library/redis:7.4@%s"}]}`, host, apiDigest, host, redisDigest)
	commitCat := fmt.Sprintf(`{"commit": "%s", "services": [
  {"id": "api", "image": "%s/acme/api", "digest": "%s", "published": true}],
 "thirdParty": [{"image": "%s/library/redis@%s"}]}`, commitA, host, apiDigest, host, redisDigest)
	writeFiles(t, dir, map[string]string{"version.json": versionCat, "commit.json": commitCat, "bad.json": `{"commit": "6.14.1", "services": []}`})
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`environments:
  - {name: v, cluster: {context: test}, namespace: modes, source: {path: m}, catalog: version.json, envMirrors: {commit: [APP_VERSION]}, registry: {hosts: [%[1]q]}}
  - {name: c, cluster: {context: test}, namespace: modes, source: {path: m}, catalog: commit.json, envMirrors: {commit: [APP_VERSION]}, registry: {hosts: [%[1]q]}}
  - {name: bad, cluster: {context: test}, namespace: modes, source: {path: m}, catalog: bad.json}
`, host)), dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{RestConfig: p.Cluster.Config}
	ctx := context.Background()
	env := func(n string) *envconfig.Environment {
		e, err := cfg.Env(n)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}

	t.Run("version mode with a third-party image is ready", func(t *testing.T) {
		rep, err := Plan(ctx, env("v"), opts)
		if err != nil {
			t.Fatal(err)
		}
		d := rep.DeployApply
		if d.Conclusion.Status != StatusReady {
			t.Fatalf("status %q, blockers %+v", d.Conclusion.Status, d.RemainingBlockers)
		}
		a := d.ArtifactPlan
		if a.CatalogMode != CatalogModeVersion || a.RegistryStatus != RegistryVerified || a.DeployCommit != "6.14.1" || a.CatalogCommit != "" {
			t.Errorf("artifactPlan = %+v", a)
		}
		var third *ArtifactService
		for i := range a.Services {
			if a.Services[i].ThirdParty {
				third = &a.Services[i]
			}
		}
		if third == nil || third.Registry != RegistryPresent || third.Digest != redisDigest || !third.InUse {
			t.Errorf("third-party service = %+v, want present in the registry", third)
		}
		if md := rep.Markdown(); !strings.Contains(md, "Catalog mode: **version**") || !strings.Contains(md, "(third party)") {
			t.Errorf("markdown does not show the catalog mode and the third-party image")
		}
		b, _ := rep.JSON()
		if vs := ValidateReport(b); len(vs) != 0 {
			t.Errorf("report violations: %v", vs)
		}
		var raw map[string]any
		json.Unmarshal(b, &raw)
		port := raw["deployApply"].(map[string]any)["servicePlan"].([]any)[0].(map[string]any)["ports"].([]any)[0].(map[string]any)["targetPort"]
		if port != float64(8080) {
			t.Errorf("servicePlan targetPort = %#v, want the number 8080", port)
		}
	})

	t.Run("commit mode with version tags: one blocker", func(t *testing.T) {
		rep, err := Plan(ctx, env("c"), opts)
		if err != nil {
			t.Fatal(err)
		}
		d := rep.DeployApply
		var got []string
		for _, b := range d.RemainingBlockers {
			got = append(got, b.ID)
		}
		if !slices.Equal(got, []string{"env-mirror-commit", "tag-not-catalog-commit"}) {
			t.Fatalf("blockers %v, want env-mirror-commit and tag-not-catalog-commit", got)
		}
		tag := d.RemainingBlockers[1]
		if !slices.Equal(tag.Affected, []string{"Deployment/api/main"}) || !strings.Contains(tag.UnblockHint, `"mode": "version"`) ||
			strings.Contains(tag.UnblockHint, `commit "`) || strings.Contains(tag.UnblockHint, "commit 6.14.1") {
			t.Errorf("blocker %+v", tag)
		}
	})

	t.Run("a version as the catalog commit is a config error", func(t *testing.T) {
		_, err := Plan(ctx, env("bad"), opts)
		var ce *envconfig.ConfigError
		if !errors.As(err, &ce) || ce.Field != "catalog.commit" {
			t.Errorf("Plan = %v, want a *ConfigError on catalog.commit", err)
		}
		_, err = SourcePlan(ctx, env("bad"), opts)
		if !errors.As(err, &ce) {
			t.Errorf("SourcePlan = %v, want a *ConfigError", err)
		}
	})

	t.Run("drift: fields other managers changed", func(t *testing.T) {
		// deploy-web's apply, as Apply does it.
		r, err := Render(ctx, env("v"))
		if err != nil {
			t.Fatal(err)
		}
		cl, err := newClients(p.Cluster.Config)
		if err != nil {
			t.Fatal(err)
		}
		cl.env = env("v").Name // the marker, as Apply stamps it
		for _, o := range r.Objects {
			o.SetNamespace(ns)
			if _, err := cl.apply(ctx, o, false); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := Plan(ctx, env("v"), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range rep.DeployApply.Objects {
			if len(o.Drift) != 0 || o.Action != ActionUnchanged {
				t.Errorf("%s/%s after deploy-web's own apply: action %s, drift %+v; want unchanged, none", o.Kind, o.Name, o.Action, o.Drift)
			}
		}
		// kubectl annotate and kubectl edit (Updates by other managers).
		deps := p.Kube.AppsV1().Deployments(ns)
		if _, err := deps.Patch(ctx, "api", types.MergePatchType, []byte(`{"metadata":{"annotations":{"owner":"ops"}}}`), metav1.PatchOptions{FieldManager: "kubectl-annotate"}); err != nil {
			t.Fatal(err)
		}
		if _, err := deps.Patch(ctx, "redis", types.StrategicMergePatchType, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"main","env":[{"name":"EXTRA_FLAG","value":"1"}]}]}}}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		rep, err = Plan(ctx, env("v"), opts)
		if err != nil {
			t.Fatal(err)
		}
		drift := map[string][]string{}
		for _, o := range rep.DeployApply.Objects {
			for _, f := range o.Drift {
				drift[o.Kind+"/"+o.Name] = append(drift[o.Kind+"/"+o.Name], f.Path+" by "+f.Manager+" ("+f.Operation+") = "+f.Live)
			}
		}
		want := map[string][]string{
			"Deployment/api":   {`metadata.annotations.owner by kubectl-annotate (Update) = "ops"`},
			"Deployment/redis": {`spec.template.spec.containers[name=main].env[name=EXTRA_FLAG] by kubectl-edit (Update) = {"name":"EXTRA_FLAG","value":"1"}`},
		}
		if fmt.Sprint(drift) != fmt.Sprint(want) {
			t.Errorf("drift = %v\nwant %v", drift, want)
		}
		if s := rep.Summary(); !strings.Contains(s, "drift Deployment/api metadata.annotations.owner") {
			t.Errorf("summary does not show the drift:\n%s", s)
		}
		if md := rep.Markdown(); !strings.Contains(md, "## Changed outside deploy-web") || !strings.Contains(md, "kubectl-edit") {
			t.Errorf("markdown does not show the drift")
		}
		b, _ := rep.JSON()
		if vs := ValidateReport(b); len(vs) != 0 {
			t.Errorf("report violations: %v", vs)
		}
	})
}
