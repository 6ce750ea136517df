package deployplan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/envconfig"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

func cmObj(name, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "dev"},
		"data":     map[string]any{"k": value},
	}}
}

func TestRenderedDigest(t *testing.T) {
	a, b := cmObj("a", "1"), cmObj("b", "2")
	d1, err := RenderedDigest([]*unstructured.Unstructured{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if !validDigest(d1) {
		t.Fatalf("RenderedDigest = %q, want sha256:<hex>", d1)
	}
	d2, _ := RenderedDigest([]*unstructured.Unstructured{b, a})
	if d1 != d2 {
		t.Errorf("RenderedDigest depends on the order: %s vs %s", d1, d2)
	}
	d3, _ := RenderedDigest([]*unstructured.Unstructured{a, cmObj("b", "3")})
	if d3 == d1 {
		t.Errorf("RenderedDigest did not change with a value: %s", d3)
	}
	d4, _ := RenderedDigest([]*unstructured.Unstructured{a})
	if d4 == d1 {
		t.Errorf("RenderedDigest did not change when an object went away")
	}
}

func TestCheckReviewed(t *testing.T) {
	objs := []*unstructured.Unstructured{cmObj("a", "1")}
	digest, _ := RenderedDigest(objs)
	now := &Rendered{Objects: objs, Commit: "1111111111111111111111111111111111111111"}
	tests := []struct {
		name string
		rev  *Reviewed
		want string // "" means accepted
	}{
		{"no review asked", nil, ""},
		{"unchanged", &Reviewed{PlanID: "p1", SourceCommit: now.Commit, RenderedDigest: digest}, ""},
		{"commit moved", &Reviewed{PlanID: "p1", SourceCommit: "2222222222222222222222222222222222222222", RenderedDigest: digest}, SourceMovedReason},
		{"objects moved", &Reviewed{PlanID: "p1", SourceCommit: now.Commit, RenderedDigest: "sha256:" + strings.Repeat("0", 64)}, SourceMovedReason},
		{"old plan without digest", &Reviewed{PlanID: "p1", SourceCommit: now.Commit}, "records no rendered digest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckReviewed(tt.rev, now)
			if tt.want == "" {
				if err != nil {
					t.Errorf("CheckReviewed = %v, want nil", err)
				}
				return
			}
			var ref *RefusalError
			if !errors.As(err, &ref) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckReviewed = %v, want a refusal naming %q", err, tt.want)
			}
		})
	}
}

func TestReviewedPlan(t *testing.T) {
	ready, _ := sampleReport().JSON()
	applied := sampleReport()
	applied.DeployApply.Mode = "apply"
	appliedJSON, _ := applied.JSON()
	blocked := sampleReport()
	blocked.DeployApply.RemainingBlockers = []Blocker{{ID: "x", Message: "m", UnblockHint: "h"}}
	Conclude(&blocked.DeployApply)
	blocked.DeployApply.ManualCommands = nil
	blockedJSON, _ := blocked.JSON()
	tests := []struct {
		name string
		data []byte
		env  string
		want string
	}{
		{"ready plan", ready, "sample-dev", ""},
		{"other environment", ready, "prod", "not \"prod\""},
		{"an apply report", appliedJSON, "sample-dev", "not a plan"},
		{"blocked", blockedJSON, "sample-dev", "not ready"},
		{"not a report", []byte(`{"x":1}`), "sample-dev", "not a valid report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev, err := ReviewedPlan(tt.data, tt.env, "plan.json")
			if tt.want == "" {
				if err != nil || rev.RenderedDigest == "" || rev.SourceCommit != commitB {
					t.Errorf("ReviewedPlan = %+v, %v; want the plan's commit and digest", rev, err)
				}
				return
			}
			var ref *RefusalError
			if !errors.As(err, &ref) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReviewedPlan = %v, want a refusal naming %q", err, tt.want)
			}
		})
	}
}

// TestApplyRefusesAStalePlan: an apply whose reviewed plan no longer
// matches the source is refused after rendering, before the cluster is
// contacted (the cluster here does not exist) and with nothing written.
func TestApplyRefusesAStalePlan(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"m/kustomization.yaml": "resources:\n  - cm.yaml\n",
		"m/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n",
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := envconfig.ParseConfig([]byte("environments:\n  - {name: dev, cluster: {context: test}, namespace: dev, source: {path: m}, catalog: catalog.json}\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := cfg.Env("dev")
	r, err := Render(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := RenderedDigest(r.Objects)
	rev := &Reviewed{PlanID: "p1", SourceCommit: r.Commit, RenderedDigest: digest}
	// The source moves after the review.
	if err := os.WriteFile(filepath.Join(dir, "m/cm.yaml"), []byte(strings.Replace(files["m/cm.yaml"], "a: b", "a: c", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	reports := filepath.Join(dir, "reports")
	opts := ApplyOptions{
		Options:  Options{RestConfig: &rest.Config{Host: "https://127.0.0.1:1"}},
		Request:  ApplyRequest{Env: "dev", ConfirmEnv: "dev", ConfirmedNonProduction: true},
		Reviewed: rev, ReportPath: filepath.Join(reports, "r.json"),
		BeforeWrite: func(context.Context, string) { t.Error("a stale apply reached a write") },
	}
	rep, err := Apply(context.Background(), env, opts)
	var ref *RefusalError
	if rep != nil || !errors.As(err, &ref) || !strings.Contains(ref.Reason, SourceMovedReason) {
		t.Fatalf("Apply of a stale plan = %v, %v; want the refusal %q", rep, err, SourceMovedReason)
	}
	if _, err := os.Stat(reports); !os.IsNotExist(err) {
		t.Errorf("a refused apply wrote %s (%v)", reports, err)
	}
	// The same review of the current source passes the check and goes on
	// to the cluster, which does not answer: a blocked plan, not a stale one.
	r, _ = Render(context.Background(), env)
	rev.RenderedDigest, _ = RenderedDigest(r.Objects)
	_, err = Apply(context.Background(), env, opts)
	if !errors.As(err, &ref) || strings.Contains(ref.Reason, SourceMovedReason) || !strings.Contains(ref.Reason, "cluster-unreachable") {
		t.Errorf("Apply of a current plan = %v, want it past the review check (refused as blocked by cluster-unreachable)", err)
	}
}
