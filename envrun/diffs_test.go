package envrun

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/diffrender"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// TestObjectDiffsStayInsideTheBoundary renders a ConfigMap in the
// environment's namespace and one in another namespace on the real control
// plane: the first is diffed against the live object, the second is not
// read at all, so nothing of another namespace reaches the history.
func TestObjectDiffsStayInsideTheBoundary(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"dev", "prod"}})
	ctx := context.Background()
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "dev"}, Data: map[string]string{"mode": "old"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "app-config", Namespace: "prod"}, Data: map[string]string{"DB_URL": "postgres://prod-secret-host"}},
	} {
		if _, err := p.Kube.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	files := map[string]string{
		"m/kustomization.yaml": "resources:\n  - settings.yaml\n  - other.yaml\n",
		"m/settings.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: dev\ndata:\n  mode: new\n",
		"m/other.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: prod\ndata:\n  DB_URL: x\n",
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := envconfig.ParseConfig([]byte("environments:\n  - name: dev\n    cluster: {context: test}\n    namespace: dev\n    source: {path: m}\n    catalog: catalog.json\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := cfg.Env("dev")
	rendered, err := deployplan.Render(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	rep := &deployplan.Report{}
	rep.DeployApply.Source.Commit = rendered.Commit
	rep.DeployApply.Objects = []deployplan.ObjectPlan{
		{Kind: "ConfigMap", Namespace: "dev", Name: "settings", Action: "update"},
		{Kind: "ConfigMap", Namespace: "prod", Name: "app-config", Action: "blocked"},
	}
	r := New(cfg, slog.New(slog.DiscardHandler), Options{RestConfig: p.Cluster.Config})
	diffs, inScope, err := r.objectDiffs(ctx, r.opts.RestConfig, env, rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 2 {
		t.Fatalf("objectDiffs = %d diffs, want 2", len(diffs))
	}
	// Only dev's settings is inside the apply boundary (the prod object is
	// blocked): it alone is what an apply writes, the audit record's
	// manifests.
	if len(inScope) != 1 || inScope[0].GetName() != "settings" {
		var names []string
		for _, o := range inScope {
			names = append(names, o.GetNamespace()+"/"+o.GetName())
		}
		t.Errorf("objectDiffs in scope = %v, want [settings]", names)
	}
	for _, d := range diffs {
		var text strings.Builder
		for _, h := range d.Hunks {
			for _, row := range h.Rows {
				text.WriteString(row.Left.Text + "|" + row.Right.Text + "\n")
			}
		}
		switch d.Namespace {
		case "dev":
			if d.Equal || !strings.Contains(text.String(), "mode: old") || !strings.Contains(text.String(), "mode: new") {
				t.Errorf("dev diff = %q, want mode old -> new", text.String())
			}
		case "prod":
			if d.Error == "" || len(d.Hunks) != 0 || strings.Contains(text.String(), "prod-secret-host") {
				t.Errorf("prod diff = %+v, want it not read (outside the boundary)", d)
			}
		}
	}
}

// TestDecodeDiffsDirection: a stored diff in diffrender's direction reads
// as stored; one stored before the direction was fixed (the rendered
// manifest on the left) reads turned around; an unknown direction fails.
func TestDecodeDiffsDirection(t *testing.T) {
	now := diffrender.Compute("mode: old\n", "mode: new\n") // live -> rendered
	old := diffrender.Compute("mode: new\n", "mode: old\n") // rendered -> live, as once stored
	enc := func(d ObjectDiff) []byte {
		b, err := json.Marshal([]ObjectDiff{d})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want := []ObjectDiff{{Kind: "ConfigMap", Name: "settings", Added: 1, Removed: 1, Hunks: now.Hunks(3), Direction: DirectionLiveDesired}}
	for name, b := range map[string][]byte{
		"current": enc(want[0]),
		"legacy":  enc(ObjectDiff{Kind: "ConfigMap", Name: "settings", Added: 1, Removed: 1, Hunks: old.Hunks(3)}),
	} {
		got, err := DecodeDiffs(b)
		if err != nil {
			t.Fatalf("%s: DecodeDiffs: %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: DecodeDiffs mismatch (-want +got):\n%s", name, diff)
		}
	}
	added := diffrender.Compute("", "a\nb\n")
	legacy, err := DecodeDiffs(enc(ObjectDiff{Kind: "ConfigMap", Name: "new", NoLive: true, Removed: 2, Hunks: diffrender.Compute("a\nb\n", "").Hunks(3)}))
	if err != nil || legacy[0].Added != 2 || legacy[0].Removed != 0 || !cmp.Equal(legacy[0].Hunks, added.Hunks(3)) {
		t.Errorf("legacy new object = %+v, %v; want 2 added lines on the right", legacy, err)
	}
	if _, err := DecodeDiffs(enc(ObjectDiff{Direction: "sideways"})); err == nil {
		t.Error("DecodeDiffs accepted an unknown direction")
	}
}
