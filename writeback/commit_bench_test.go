package writeback

import (
	"context"
	"fmt"
	"github.com/hanzoai/deploy-web/envconfig"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/internal/actor"
)

// benchProject is a 47-object kustomize project (the shape of deployplan's
// BenchmarkPlan47): 12 Deployments, 12 Services, 12 ConfigMaps and 11
// NetworkPolicies, a catalog, and an images: entry per service.
func benchProject() map[string]string {
	files := map[string]string{}
	var res, images []string
	for i := range 12 {
		n := fmt.Sprintf("svc%02d", i)
		img := "registry.example.com/shop/" + n
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
          image: %[2]s:1.0.0
          ports: [{name: http, containerPort: 8080}]
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
			files["m/"+n+".yaml"] += fmt.Sprintf("---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: %s}\nspec: {podSelector: {}}\n", n)
		}
		res = append(res, "  - "+n+".yaml")
		images = append(images, fmt.Sprintf("  - {name: %s, newTag: \"1.0.0\"}", img))
	}
	files["m/kustomization.yaml"] = "resources:\n" + strings.Join(res, "\n") + "\nimages:\n" + strings.Join(images, "\n") + "\n"
	files["catalog.json"] = `{"commit": "1111111", "services": []}` + "\n"
	return files
}

// BenchmarkCommit47 is one write-back (shallow fetch, one images: edit,
// commit, push without force) on the 47-object project, against git
// http-backend on loopback and against a local bare repository:
//
//	go test -tags kustomize_disable_go_plugin_support -run '^$' -bench BenchmarkCommit47 -benchtime 20x ./writeback/
func BenchmarkCommit47(b *testing.B) {
	for _, transport := range []string{"http", "file"} {
		b.Run(transport, func(b *testing.B) {
			s := newGitServer(b, benchProject(), serverOptions{})
			url := s.url
			if transport == "file" {
				url = "file://" + s.bare
			}
			b.ResetTimer()
			for i := range b.N {
				req := Request{
					RepoURL: url, Branch: "main", Mode: envconfig.ModePush,
					Author:  Identity{Name: "bench", Email: "bench@example.invalid"},
					Message: Message("rollback", "svc03", "1.0.0", fmt.Sprintf("1.0.%d", i+1), actor.Actor{Email: "bench@example.invalid", Subject: "bench"}, "benchmark"),
					Edits:   []Edit{SetKustomizeImage{File: "m/kustomization.yaml", Name: "registry.example.com/shop/svc03", NewTag: fmt.Sprintf("1.0.%d", i+1)}},
					Limits:  Limits{Timeout: time.Minute},
				}
				res, err := Commit(context.Background(), req)
				if err != nil || res.NoChange {
					b.Fatalf("Commit = %+v, %v", res, err)
				}
			}
		})
	}
}
