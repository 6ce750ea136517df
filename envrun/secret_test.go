package envrun

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/planstore"
)

// lockedBuffer is a log sink safe for the runs' goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

func waitDone(t *testing.T, run *Run) Snapshot {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !run.Snapshot().Done {
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not end: %q", run.ID, run.Snapshot().Steps)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return run.Snapshot()
}

// TestConsoleApplyKeepsNoSecretValue: on the real control plane, a Secret
// created the way kubectl apply creates it (its value in the
// last-applied-configuration annotation) and a manifest Secret of the same
// name go through a console plan and apply; no file the runs write, no
// history ConfigMap, no audit Event and no log line holds either value.
func TestConsoleApplyKeepsNoSecretValue(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"dev", "deploy-web"}})
	ctx := context.Background()
	const live, manifest = "live-marker-2b7e151628aed2a6", "manifest-marker-3c4fcf098815"
	lastApplied := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"api-secret","namespace":"dev"},"stringData":{"token":"` + live + `"}}`
	if _, err := p.Kube.CoreV1().Secrets("dev").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "api-secret", Labels: map[string]string{"app": "api"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": lastApplied}},
		StringData: map[string]string{"token": live},
	}, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"m/kustomization.yaml": "namespace: dev\nresources:\n  - objects.yaml\n",
		"m/objects.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: new\n---\n" +
			"apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-secret\nstringData:\n  password: " + manifest + "\n",
		"catalog.json": `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := envconfig.ParseConfig([]byte("environments:\n  - {name: dev, cluster: {context: test}, namespace: dev, source: {path: m}, catalog: catalog.json, registry: {skip: true}}\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	reports := t.TempDir()
	store := planstore.New(p.Kube.CoreV1(), "deploy-web", 10)
	r := New(cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Options{
		RestConfig: p.Cluster.Config, ReportsDir: reports, Store: store, Events: p.Kube.CoreV1(), ApplyTimeout: time.Minute,
	})

	plan, err := r.Start("dev", ActionPlan, "alice", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ps := waitDone(t, plan)
	if ps.Report == nil || ps.Report.Status() != deployplan.StatusReady {
		t.Fatalf("plan = %+v (err %v), want ready", ps.Report, ps.Err)
	}
	apply, err := r.Start("dev", ActionApply, "alice", "dev", ps.Entry.ID)
	if err != nil {
		t.Fatal(err)
	}
	as := waitDone(t, apply)
	if as.Report == nil || as.Report.Status() != deployplan.StatusApplied {
		t.Fatalf("apply = %v (err %v, refusal %q), want applied", as.Report, as.Err, as.Refusal)
	}

	forbidden := []string{live, manifest, base64.StdEncoding.EncodeToString([]byte(live)), base64.StdEncoding.EncodeToString([]byte(manifest)), "last-applied-configuration"}
	check := func(where string, b []byte) {
		t.Helper()
		for _, f := range forbidden {
			if bytes.Contains(b, []byte(f)) {
				t.Errorf("%s holds %q", where, f)
			}
		}
	}
	var captured []string
	indexed := false
	filepath.Walk(reports, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(path)
			check(path, b)
			if strings.HasSuffix(path, "-secret-api-secret.json") {
				captured = append(captured, path)
			}
			if filepath.Base(path) == deployplan.CaptureIndexFile && bytes.Contains(b, []byte(`"name":"api-secret"`)) {
				indexed = true
			}
		}
		return nil
	})
	if len(captured) != 0 || !indexed {
		t.Errorf("captures of the live Secret = %v (indexed %t), want none, named in the index (a restore never writes Secrets)", captured, indexed)
	}
	cms, err := p.Kube.CoreV1().ConfigMaps("deploy-web").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		raw, _ := json.Marshal(cm)
		check("ConfigMap deploy-web/"+cm.Name, raw)
	}
	entries, err := store.List(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("history entries = %d, want the plan and the apply", len(entries))
	}
	for _, e := range entries {
		_, hf, err := store.Get(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(hf["report.json"]) == 0 {
			t.Errorf("history %s keeps no report", e.ID)
		}
		for name, b := range hf {
			check("history "+e.ID+"/"+name, b)
		}
	}
	evs, err := p.Kube.CoreV1().Events("dev").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		check("event "+ev.Name, []byte(ev.Message))
	}
	check("the server log", logs.Bytes())
	for _, d := range as.Diffs {
		if d.Kind == "Secret" && !d.Hidden {
			t.Errorf("the Secret's diff is shown: %+v", d)
		}
	}
}
