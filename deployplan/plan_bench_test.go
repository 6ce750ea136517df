package deployplan

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/envconfig"
)

// benchProject writes a 47-object kustomize project (the size of the large
// public project of issue 15): 12 Deployments, 12 Services, 12 ConfigMaps
// and 11 NetworkPolicies, images in a commit-mode catalog.
func benchProject(b testing.TB, dir string) {
	writeFiles(b, dir, benchFiles())
}

// benchFiles are benchProject's files: the kustomization in m/, the catalog
// at the root.
func benchFiles() map[string]string {
	var res []string
	files := map[string]string{}
	var services []string
	for i := range 12 {
		n := fmt.Sprintf("svc%02d", i)
		img := "registry.example.com/shop/" + n + ":" + commitA
		services = append(services, fmt.Sprintf(`{"id": %q, "image": %q, "digest": %q, "published": true}`, n, img, digestA))
		files["m/"+n+".yaml"] = fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers:
        - name: main
          image: %[2]s
          ports: [{name: http, containerPort: 8080}]
          envFrom: [{configMapRef: {name: %[1]s}}]
---
apiVersion: v1
kind: Service
metadata: {name: %[1]s}
spec:
  selector: {app: %[1]s}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: %[1]s}
data: {LOG_LEVEL: info, PORT: "8080"}
`, n, img)
		if i < 11 {
			files["m/"+n+".yaml"] += fmt.Sprintf(`---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: %[1]s}
spec:
  podSelector: {matchLabels: {app: %[1]s}}
  ingress: [{from: [{podSelector: {}}]}]
`, n)
		}
		res = append(res, "  - "+n+".yaml")
	}
	files["m/kustomization.yaml"] = "resources:\n" + strings.Join(res, "\n") + "\n"
	files["catalog.json"] = fmt.Sprintf(`{"commit": %q, "services": [%s]}`, commitA, strings.Join(services, ",\n"))
	return files
}

// BenchmarkPlan47 plans (dry-run) and applies with nothing to change a
// 47-object project on the real local control plane. Run it with
//
//	go test -run '^$' -bench BenchmarkPlan47 -benchtime 5x ./deployplan/
//
// (BENCHMARKS.md records the figures). The first apply, which creates the
// objects and waits for the Deployments, is not measured.
func BenchmarkPlan47(b *testing.B) {
	c := devcluster.ForTest(b, devcluster.Options{})
	kube := kubernetes.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	benchProject(b, dir)
	// Through the kubeconfig file, as the command line does (client-go's
	// default rate limits apply unless the engine sets its own).
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf("environments:\n  - {name: shop, cluster: {context: devcluster, kubeconfig: %q}, namespace: shop, source: {path: m}, catalog: catalog.json, registry: {skip: true}}\n", c.Kubeconfig)), dir)
	if err != nil {
		b.Fatal(err)
	}
	env, _ := cfg.Env("shop")
	apply := func() *Report {
		rep, err := Apply(ctx, env, ApplyOptions{
			Options:    Options{},
			Request:    ApplyRequest{Env: "shop", ConfirmEnv: "shop", ConfirmedNonProduction: true},
			ReportPath: filepath.Join(dir, "reports", "r.json"),
			Timeout:    2 * time.Minute,
		})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Status() != StatusApplied {
			b.Fatalf("apply: %s", rep.Summary())
		}
		return rep
	}
	first := apply()
	if n := len(first.DeployApply.Objects); n != 47 {
		b.Fatalf("%d objects, want 47", n)
	}
	b.Run("dry-run", func(b *testing.B) {
		for range b.N {
			rep, err := Plan(ctx, env, Options{})
			if err != nil || rep.Status() != StatusReady {
				b.Fatalf("plan: %v %v", err, rep.Summary())
			}
		}
	})
	b.Run("no-op-apply", func(b *testing.B) {
		for range b.N {
			apply()
		}
	})
}
