package deployplan

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/actor"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/writeback"
)

// BenchmarkRollbackGit47 measures a rollback through git of the 47-object
// project (benchProject) on the real local control plane, its manifests
// served by git http-backend on loopback: one iteration is the write-back
// commit (fetch, edit of the kustomization's images: entry, push), the plan
// of the environment at the new head and the apply of exactly that plan
// (Reviewed), which rolls one Deployment out and waits for its health. The
// image tag alternates between the catalog commit and its 12-character
// prefix (both name the catalog commit), so every iteration changes one
// Deployment. Run it with
//
//	go test -run '^$' -bench BenchmarkRollbackGit47 -benchtime 3x ./deployplan/
func BenchmarkRollbackGit47(b *testing.B) {
	c := devcluster.ForTest(b, devcluster.Options{})
	kube := kubernetes.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	srv := gitservertest.New(b, benchFiles(), gitservertest.Options{})
	dir := b.TempDir()
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`environments:
  - name: shop
    cluster: {context: devcluster, kubeconfig: %q}
    namespace: shop
    source: {repo: %q, ref: main, path: m}
    catalog: catalog.json
    registry: {skip: true}
    writeBack: {mode: push}
`, c.Kubeconfig, srv.URL)), dir)
	if err != nil {
		b.Fatal(err)
	}
	env, _ := cfg.Env("shop")
	apply := func(rev *Reviewed) *Report {
		rep, err := Apply(ctx, env, ApplyOptions{
			Request:    ApplyRequest{Env: "shop", ConfirmEnv: "shop", ConfirmedNonProduction: true},
			ReportPath: filepath.Join(dir, "reports", "r.json"),
			Timeout:    2 * time.Minute,
			Reviewed:   rev,
		})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Status() != StatusApplied {
			b.Fatalf("apply: %s", rep.Summary())
		}
		return rep
	}
	apply(nil) // creates the objects: not measured
	branch, err := env.WriteBackBranch()
	if err != nil {
		b.Fatal(err)
	}
	tags := []string{commitA[:12], commitA}
	b.ResetTimer()
	for i := range b.N {
		res, err := writeback.Commit(ctx, writeback.Request{
			RepoURL: srv.URL, Branch: branch, Mode: envconfig.ModePush,
			Message: writeback.Message("rollback", "shop/svc00", tags[(i+1)%2], tags[i%2], actor.Actor{Email: "bench@example.invalid", Subject: "bench"}, "benchmark"),
			Edits:   []writeback.Edit{writeback.SetKustomizeImage{File: "m/kustomization.yaml", Name: "registry.example.com/shop/svc00", NewTag: tags[i%2]}},
			Limits:  writeback.EnvLimits(env),
		})
		if err != nil || res.NoChange {
			b.Fatalf("commit: %+v, %v", res, err)
		}
		plan, err := Plan(ctx, env, Options{})
		if err != nil || plan.Status() != StatusReady || plan.DeployApply.Source.Commit != res.SHA {
			b.Fatalf("plan of %s: %v %v", res.SHA, err, plan.Summary())
		}
		js, err := plan.JSON()
		if err != nil {
			b.Fatal(err)
		}
		rev, err := ReviewedPlan(js, "shop", "bench")
		if err != nil {
			b.Fatal(err)
		}
		rep := apply(rev)
		if rep.DeployApply.Source.Commit != res.SHA {
			b.Fatalf("applied %s, want %s", rep.DeployApply.Source.Commit, res.SHA)
		}
	}
}
