package main

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/revdiff"
)

// TestDiffOnRealCluster: two applies recorded with the audit store diff to
// what changed between them (from the stored manifests), and deploy-web
// diff renders a branch and a pull request head against live without
// writing anything or changing the environment, exiting 1 on changes and 0
// on none.
func TestDiffOnRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: needs the local control plane")
	}
	c := devcluster.ForTest(t, devcluster.Options{})
	s := newSample(t)
	s.kube = kubernetes.NewForConfigOrDie(c.Config)
	s.dyn = dynamic.NewForConfigOrDie(c.Config)
	s.meta = metadata.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	for _, n := range []string{ns, "deploy-web"} {
		if _, err := s.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s.writeConfig(c.Kubeconfig)
	base := []string{"--config", s.cfgPath, "--env", "sample-dev"}
	applyArgs := append([]string{"apply", "--apply", "--confirm-env=sample-dev", "--confirmed-non-production", "--timeout", "2m"}, base...)
	store, err := audit.New(s.kube.CoreV1(), s.meta, audit.Options{Namespace: "deploy-web"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := envconfig.LoadConfig(s.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	env, err := cfg.Env("sample-dev")
	if err != nil {
		t.Fatal(err)
	}
	// applyAndRecord applies the config's ref and stores the record the
	// console would: the manifests the apply's render made.
	applyAndRecord := func(rev string) audit.Record {
		t.Helper()
		// The report and the captures go to the test's folder.
		if code, _, _ := s.cli(append(applyArgs, "--write-report", filepath.Join(s.reports, rev+".json"))...); code != 0 {
			t.Fatalf("apply %s = %d, want 0", rev, code)
		}
		r, err := deployplan.Render(ctx, env)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := store.Append(ctx, audit.Record{Time: time.Now(), Actor: audit.Actor{Email: "alice@example.com"}, Verb: audit.VerbApply,
			Cluster: "devcluster", Environment: "sample-dev", Commit: r.Commit, Outcome: audit.OutcomeSucceeded, Manifests: r.Objects})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}

	v1 := s.manifests("")
	v1["catalog.json"] = s.catalog()
	s.commitFiles("v1", v1)
	recA := applyAndRecord("v1")
	s.waitDeploymentHealthy("api")

	v2 := s.manifests("")
	v2["deploy/dev/app.yaml"] = strings.NewReplacer("LOG_LEVEL: info", "LOG_LEVEL: debug", "replicas: 1", "replicas: 2",
		"s3cr3t-value-never-printed", "s3cr3t-value-never-printed-2").Replace(v2["deploy/dev/app.yaml"])
	s.commitFiles("v2", v2)
	recB := applyAndRecord("v2")

	t.Run("two records diff to what changed", func(t *testing.T) {
		a, err := store.Get(ctx, recA.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := store.Get(ctx, recB.ID)
		if err != nil {
			t.Fatal(err)
		}
		res, err := revdiff.Compare(a.Manifests, b.Manifests, revdiff.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range res.Resources {
			got[r.Kind+"/"+r.Name] = r.Summary()
		}
		want := map[string]string{"ConfigMap/api-config": "changed", "Secret/api-secret": "changed (hash)", "Deployment/api": "changed"}
		if len(got) != len(want) || res.Counts.Added+res.Counts.Removed != 0 {
			t.Fatalf("diff A..B = %v (counts %+v), want %v", got, res.Counts, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("diff A..B %s = %q, want %q", k, got[k], v)
			}
		}
		for _, r := range res.Resources {
			d := r.Unified()
			switch r.Kind {
			case "ConfigMap":
				if !strings.Contains(d, "-  LOG_LEVEL: info\n") || !strings.Contains(d, "+  LOG_LEVEL: debug\n") {
					t.Errorf("ConfigMap diff = %q, want -info +debug", d)
				}
			case "Deployment":
				if !strings.Contains(d, "-  replicas: 1\n") || !strings.Contains(d, "+  replicas: 2\n") {
					t.Errorf("Deployment diff = %q, want -1 +2 replicas", d)
				}
			}
		}
		md := revdiff.NewReport("sample-dev", a.ID, b.ID, "", res).Markdown()
		if strings.Contains(md, "s3cr3t") {
			t.Errorf("the diff of two records shows a Secret's value:\n%s", md)
		}
	})

	t.Run("a record and live", func(t *testing.T) {
		for _, tt := range []struct {
			rec  audit.Record
			want revdiff.Counts
		}{
			{recB, revdiff.Counts{Unchanged: 7}},             // live is what B applied
			{recA, revdiff.Counts{Changed: 3, Unchanged: 4}}, // the ConfigMap, the Secret (by hash), the replicas
		} {
			got, err := store.Get(ctx, tt.rec.ID)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := revdiff.CompareEnvironment(ctx, env, deployplan.Options{Kubeconfig: c.Kubeconfig},
				revdiff.Side{Name: got.ID, Objects: got.Manifests}, revdiff.LiveSide(), nil, revdiff.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Counts != tt.want || len(rep.Outside) != 0 {
				t.Errorf("diff %s..live = %+v (outside %v), want %+v", got.ID, rep.Counts, rep.Outside, tt.want)
			}
		}
	})

	// A branch and a pull request head that change the ConfigMap and add
	// one; master stays the environment's target.
	wt, err := s.repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("feature"), Create: true}); err != nil {
		t.Fatal(err)
	}
	v3 := map[string]string{
		"deploy/dev/app.yaml":           strings.Replace(v2["deploy/dev/app.yaml"], "LOG_LEVEL: debug", "LOG_LEVEL: trace", 1),
		"deploy/dev/extra.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\ndata: {K: v}\n",
		"deploy/dev/kustomization.yaml": "namespace: sample-dev\nresources:\n  - app.yaml\n  - jobs.yaml\n  - extra.yaml\n",
	}
	feature := s.commitFiles("feature", v3)
	if err := wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("master")}); err != nil {
		t.Fatal(err)
	}
	if err := s.repo.Storer.SetReference(plumbing.NewHashReference("refs/pull/7/head", plumbing.NewHash(feature))); err != nil {
		t.Fatal(err)
	}

	cfgBefore, err := os.ReadFile(s.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	before := s.snapshot()
	for _, ref := range []string{"feature", "pull/7"} {
		t.Run("compare to "+ref, func(t *testing.T) {
			code, out, _ := s.cli(append([]string{"diff", "--ref", ref}, base...)...)
			if code != 1 {
				t.Fatalf("diff --ref %s = %d, want 1 (changes)", ref, code)
			}
			for _, want := range []string{"**1 added, 1 changed, 0 removed**", "| ConfigMap/extra | sample-dev | added |", "| ConfigMap/api-config | sample-dev | changed |",
				"-  LOG_LEVEL: debug\n+  LOG_LEVEL: trace\n", "<details><summary>ConfigMap sample-dev/api-config: changed</summary>", "Commit `" + feature + "`"} {
				if !strings.Contains(out, want) {
					t.Errorf("diff --ref %s Markdown lacks %q:\n%s", ref, want, out)
				}
			}
			if strings.Contains(out, "s3cr3t") || strings.Contains(out, "Secret/api-secret") {
				t.Errorf("diff --ref %s shows the unchanged Secret or its value:\n%s", ref, out)
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		code, out, _ := s.cli(append([]string{"diff", "--ref", "feature", "--format", "json"}, base...)...)
		var rep revdiff.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("diff --format json = %v:\n%s", err, out)
		}
		if code != 1 || !rep.Changes || rep.Counts.Added != 1 || rep.Counts.Changed != 1 || rep.From != "live" || rep.To != "ref:feature" {
			t.Errorf("diff --format json = %d %+v, want 1 with 1 added, 1 changed, live to ref:feature", code, rep)
		}
	})
	t.Run("the target applied: no changes", func(t *testing.T) {
		code, out, _ := s.cli(append([]string{"diff", "--ref", "master"}, base...)...)
		if code != 0 || !strings.Contains(out, "No changes.") {
			t.Errorf("diff --ref master = %d, want 0 and No changes:\n%s", code, out)
		}
	})
	if after := s.snapshot(); !maps.Equal(before, after) {
		t.Errorf("a diff wrote to the cluster:\nbefore %v\nafter  %v", before, after)
	}
	if cfgAfter, _ := os.ReadFile(s.cfgPath); string(cfgAfter) != string(cfgBefore) {
		t.Error("a diff changed the config file")
	}
	if env.Source.Ref != "master" {
		t.Errorf("the environment's ref = %q after the diffs, want master", env.Source.Ref)
	}
	if h, _ := s.repo.Head(); h.Name() != plumbing.NewBranchReferenceName("master") {
		t.Errorf("the repository's HEAD = %s after the diffs, want master", h.Name())
	}
}
