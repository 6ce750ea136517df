package kubeview_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// checkRowJSON checks that every row of p written from its cached JSON is
// json.Marshal of the row, under its own cluster and under a hostile one.
func checkRowJSON(t *testing.T, p kubeview.Page) {
	t.Helper()
	if len(p.Encoded) != len(p.Rows) {
		t.Fatalf("Page: %d rows, %d encoded", len(p.Rows), len(p.Encoded))
	}
	for i := range p.Rows {
		for _, cluster := range []string{"", "eu-west", "<b>&\u2028\xff\"\\"} {
			p.Rows[i].Cluster = cluster
			want, err := json.Marshal(p.Rows[i])
			if err != nil {
				t.Fatal(err)
			}
			got, ok := p.AppendRowJSON(nil, i)
			if !ok || !bytes.Equal(got, want) {
				t.Errorf("AppendRowJSON(row %s, cluster %q) = %q, %v, want %q (json.Marshal)", p.Rows[i].Key(), cluster, got, ok, want)
			}
		}
	}
}

// TestRowJSONFollowsChanges checks the rows' cached JSON against
// json.Marshal with hostile images and messages, and again after an App
// and a Deployment changed: the cached bytes of a changed row are replaced
// with the row.
func TestRowJSONFollowsChanges(t *testing.T) {
	hostile := "<script>&\u2028\u2029\xff" + strings.Repeat("x", 70000)
	env := newTestEnv(t, []string{"prod"},
		fixApp{ns: "prod", name: "web"},
		fixApp{ns: "prod", name: "api", image: "registry.test/api:" + hostile},
		fixApp{ns: "prod", name: "lone", noDeployment: true, app: func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": "False", "message": hostile}}, "status", "conditions")
		}},
	)
	c := env.cache
	p, err := c.Applications(kubeview.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 3 {
		t.Fatalf("Applications() = %d rows, want 3", len(p.Rows))
	}
	checkRowJSON(t, p)

	ctx := t.Context()
	u, err := env.dyn.Resource(appcr.Resource).Namespace("prod").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	newImage := "registry.test/web:2.0.0" + hostile
	if err := unstructured.SetNestedField(u.Object, newImage, "spec", "image"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.dyn.Resource(appcr.Resource).Namespace("prod").Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitPage(t, c, kubeview.Query{}, "web declares 2.0.0", func(p kubeview.Page) bool {
		r, ok := findRow(p, "prod/web")
		return ok && r.Image == newImage
	})
	checkRowJSON(t, p)

	d, err := env.cs.AppsV1().Deployments("prod").Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: "False", Reason: "ProgressDeadlineExceeded", Message: hostile}}
	if _, err := env.cs.AppsV1().Deployments("prod").UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitPage(t, c, kubeview.Query{}, "api not ready", func(p kubeview.Page) bool {
		r, ok := findRow(p, "prod/api")
		return ok && r.Replicas.Ready == 0
	})
	checkRowJSON(t, p)
	// Pages of a filter and of a sort carry the same bytes.
	for _, q := range []kubeview.Query{{Search: "W"}, {Sort: kubeview.SortHealth, Limit: 2}, {Namespace: "prod", Health: objrules.HealthDegraded}} {
		p, err := c.Applications(q)
		if err != nil {
			t.Fatal(err)
		}
		checkRowJSON(t, p)
	}
}
