package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/devcluster"
)

// TestRestoreSecretHashOrphansReserved walks issue 15's apply half on a
// real control plane: Secrets compared by hash, orphans and --prune, a
// capture kubectl accepts, a restore that restores, reserved names, and a
// report for every refused apply.
func TestRestoreSecretHashOrphansReserved(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: needs the local control plane")
	}
	c := devcluster.ForTest(t, devcluster.Options{})
	s := newSample(t)
	s.kube = kubernetes.NewForConfigOrDie(c.Config)
	s.dyn = dynamic.NewForConfigOrDie(c.Config)
	s.meta = metadata.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	if _, err := s.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.writeConfig(c.Kubeconfig)
	base := []string{"--config", s.cfgPath, "--env", "sample-dev"}
	applyArgs := append([]string{"apply", "--apply", "--confirm-env=sample-dev", "--confirmed-non-production", "--timeout", "2m"}, base...)
	plan := func(name string) (int, *deployplan.DeployApply) {
		t.Helper()
		p := filepath.Join(s.reports, name)
		code, _, _ := s.cli(append([]string{"apply", "--dry-run", "--write-report", p}, base...)...)
		return code, &s.readReport(p).DeployApply
	}
	action := func(d *deployplan.DeployApply, kind, name string) string {
		for _, o := range d.Objects {
			if o.Kind == kind && o.Name == name {
				return o.Action
			}
		}
		return "(absent)"
	}

	// Version 1: the sample plus a ConfigMap that version 2 drops.
	v1 := s.manifests("")
	v1["catalog.json"] = s.catalog()
	v1["deploy/dev/kustomization.yaml"] = "namespace: sample-dev\nresources:\n  - app.yaml\n  - jobs.yaml\n  - old.yaml\n"
	v1["deploy/dev/old.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old-config}\ndata: {K: v1}\n"
	s.commitFiles("v1", v1)
	if code, _, _ := s.cli(append(applyArgs, "--write-report", filepath.Join(s.reports, "v1.json"))...); code != 0 {
		t.Fatalf("apply v1 = %d, want 0", code)
	}
	s.waitDeploymentHealthy("api")

	t.Run("an applied Secret plans unchanged; a changed value would change", func(t *testing.T) {
		m, err := s.kube.CoreV1().Secrets(ns).Get(ctx, "api-secret", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h := m.Annotations[deployplan.SecretHashAnnotation]; !strings.HasPrefix(h, "sha256:") {
			t.Errorf("the applied Secret carries %s = %q, want a sha256", deployplan.SecretHashAnnotation, h)
		}
		code, d := plan("replan.json")
		if code != 0 {
			t.Fatalf("re-plan = %d", code)
		}
		for _, o := range d.Objects {
			if o.Action != deployplan.ActionUnchanged {
				t.Errorf("re-plan after the apply: %s/%s is %q, want unchanged", o.Kind, o.Name, o.Action)
			}
		}
		raw, _ := os.ReadFile(filepath.Join(s.reports, "replan.json"))
		if bytes.Contains(raw, []byte(m.Annotations[deployplan.SecretHashAnnotation])) {
			t.Error("the report carries the Secret's hash")
		}
	})

	// Version 2: another log level, 2 replicas, a new Secret value, and
	// old-config is no longer rendered.
	v2 := s.manifests("")
	v2["deploy/dev/app.yaml"] = strings.NewReplacer("LOG_LEVEL: info", "LOG_LEVEL: debug", "replicas: 1", "replicas: 2", "s3cr3t-value-never-printed", "s3cr3t-value-never-printed-2").Replace(v2["deploy/dev/app.yaml"])
	s.commitFiles("v2", v2)

	preDeploy, err := s.kube.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	preCM, _ := s.kube.CoreV1().ConfigMaps(ns).Get(ctx, "api-config", metav1.GetOptions{})
	var capture string

	t.Run("the plan lists the orphan and the changed Secret", func(t *testing.T) {
		code, d := plan("v2-plan.json")
		if code != 0 {
			t.Fatalf("plan v2 = %d", code)
		}
		if a := action(d, "Secret", "api-secret"); a != deployplan.ActionUpdate {
			t.Errorf("Secret with a changed value plans %q, want update", a)
		}
		if len(d.Orphans) != 1 || d.Orphans[0].Kind != "ConfigMap" || d.Orphans[0].Name != "old-config" || !strings.Contains(d.Orphans[0].Hint, "--prune") {
			t.Errorf("orphans = %+v, want ConfigMap/old-config with a hint", d.Orphans)
		}
		md, _ := os.ReadFile(filepath.Join(s.reports, "v2-plan.md"))
		if !strings.Contains(string(md), "## Orphans") || !strings.Contains(string(md), "old-config") {
			t.Errorf("the Markdown report does not list the orphan:\n%s", md)
		}
		_, out, _ := s.cli(append([]string{"apply", "--dry-run"}, base...)...)
		if !strings.Contains(out, "ORPHAN ConfigMap/old-config") {
			t.Errorf("the summary does not list the orphan:\n%s", out)
		}
	})

	t.Run("a protected environment refuses --prune, with a report", func(t *testing.T) {
		refused := filepath.Join(s.reports, "prod-prune.json")
		code, _, stderr := s.cli("apply", "--config", s.cfgPath, "--env", "sample-prod", "--apply", "--confirm-env=sample-prod", "--confirmed-non-production", "--prune", "--write-report", refused)
		if code != 2 || !strings.Contains(stderr, "protected") {
			t.Errorf("protected --prune = %d, want 2 saying protected", code)
		}
		if d := s.readReport(refused).DeployApply; d.Conclusion.Status != deployplan.StatusRefused || !strings.Contains(d.Conclusion.Summary, "protected") {
			t.Errorf("refusal report = %+v, want refused saying protected", d.Conclusion)
		}
		if _, err := s.kube.CoreV1().ConfigMaps(ns).Get(ctx, "old-config", metav1.GetOptions{}); err != nil {
			t.Errorf("old-config after a refused prune: %v", err)
		}
		if code, _, _ := s.cli(append([]string{"apply", "--dry-run", "--prune"}, base...)...); code != 2 {
			t.Errorf("--prune without --apply = %d, want 2", code)
		}
	})

	// sample-prod shares sample-dev's namespace: a prune is refused there,
	// since each one's objects would look like the other's orphans. A
	// config with sample-dev alone may prune.
	raw, _ := os.ReadFile(s.cfgPath)
	devOnly := filepath.Join(s.dir, "dev-only.yaml")
	os.WriteFile(devOnly, []byte(string(raw)[:strings.Index(string(raw), "  - name: sample-prod")]), 0o644)
	pruneArgs := []string{"apply", "--apply", "--confirm-env=sample-dev", "--confirmed-non-production", "--timeout", "2m", "--prune", "--config", devOnly, "--env", "sample-dev"}

	var postSecretRV string
	t.Run("apply --prune deletes the orphan after capturing it", func(t *testing.T) {
		before := s.snapshot()
		if code, _, stderr := s.cli(append(applyArgs, "--prune")...); code != 2 || !strings.Contains(stderr, "sample-prod write the same namespace") {
			t.Errorf("--prune with another environment in the namespace = %d (%s), want 2 naming it", code, stderr)
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("a refused prune changed the cluster")
		}
		// Another environment of the namespace (sample-b, as its apply
		// leaves its objects: field manager deploy-web, its marker) and an
		// object applied before the markers existed: neither is deleted.
		ssa := func(name string, ann map[string]string) {
			t.Helper()
			cm := corev1ac.ConfigMap(name, ns).WithData(map[string]string{"K": "v"})
			if ann != nil {
				cm = cm.WithAnnotations(ann)
			}
			if _, err := s.kube.CoreV1().ConfigMaps(ns).Apply(ctx, cm, metav1.ApplyOptions{FieldManager: deployplan.FieldManager}); err != nil {
				t.Fatal(err)
			}
		}
		ssa("b-config", map[string]string{deployplan.EnvironmentAnnotation: "sample-b"})
		ssa("legacy-config", nil)
		// A PVC sample-dev applied earlier: listed, never pruned.
		pvc := corev1ac.PersistentVolumeClaim("data", ns).WithAnnotations(map[string]string{deployplan.EnvironmentAnnotation: "sample-dev"}).
			WithSpec(corev1ac.PersistentVolumeClaimSpec().WithAccessModes(corev1.ReadWriteOnce).
				WithResources(corev1ac.VolumeResourceRequirements().WithRequests(corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")})))
		if _, err := s.kube.CoreV1().PersistentVolumeClaims(ns).Apply(ctx, pvc, metav1.ApplyOptions{FieldManager: deployplan.FieldManager}); err != nil {
			t.Fatal(err)
		}
		// More orphans than rendered objects: refused without --prune-many.
		var many []string
		for i := 0; i < 10; i++ {
			many = append(many, fmt.Sprintf("many-%d", i))
			ssa(many[i], map[string]string{deployplan.EnvironmentAnnotation: "sample-dev"})
		}
		before = s.snapshot()
		if code, _, stderr := s.cli(pruneArgs...); code != 2 || !strings.Contains(stderr, "--prune-many") {
			t.Errorf("--prune of 11 orphans = %d (%s), want 2 naming --prune-many", code, stderr)
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("a refused prune changed the cluster")
		}
		for _, name := range many {
			if _, err := s.kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Errorf("%s after a refused prune: %v", name, err)
			}
			s.kube.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
		}
		if old, err := s.kube.CoreV1().ConfigMaps(ns).Get(ctx, "old-config", metav1.GetOptions{}); err != nil || old.Annotations[deployplan.EnvironmentAnnotation] != "sample-dev" {
			t.Errorf("old-config as applied: %v %v, want the marker of sample-dev", old.GetAnnotations(), err)
		}
		p := filepath.Join(s.reports, "v2.json")
		if code, _, _ := s.cli(append(pruneArgs, "--write-report", p)...); code != 0 {
			t.Fatalf("apply v2 --prune = %d, want 0", code)
		}
		d := s.readReport(p).DeployApply
		if !strings.Contains(d.Conclusion.Summary, "1 orphan(s) pruned") {
			t.Errorf("summary = %q, want it to count the pruned orphan", d.Conclusion.Summary)
		}
		if len(d.Orphans) != 3 || d.Orphans[0].Name != "legacy-config" || d.Orphans[0].Result != deployplan.OrphanKept ||
			!strings.Contains(d.Orphans[0].Hint, "never deletes it") || d.Orphans[1].Name != "old-config" || d.Orphans[1].Result != deployplan.OrphanDeleted ||
			d.Orphans[2].Kind != "PersistentVolumeClaim" || d.Orphans[2].Result != deployplan.OrphanKept || !strings.Contains(d.Orphans[2].Hint, "delete it by hand") {
			t.Errorf("orphans after --prune = %+v, want legacy-config kept with a hint, old-config deleted and the PVC kept", d.Orphans)
		}
		if _, err := s.kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{}); err != nil {
			t.Errorf("the PVC after --prune: %v, want it kept", err)
		}
		s.kube.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "data", metav1.DeleteOptions{})
		for _, name := range []string{"b-config", "legacy-config"} {
			if _, err := s.kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Errorf("%s after sample-dev's --prune: %v, want it kept", name, err)
			}
			s.kube.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
		}
		if _, err := s.kube.CoreV1().ConfigMaps(ns).Get(ctx, "old-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("old-config after --prune: %v, want not found", err)
		}
		if d.GeneratedAt.Before(s.readReport(filepath.Join(s.reports, "v2-plan.json")).DeployApply.GeneratedAt) {
			t.Errorf("the applied report's generatedAt %s is not the apply's time", d.GeneratedAt)
		}
		capture = d.RollbackHint.PreApplyCapture
		// The apply recorded its capture's digest in the cluster before
		// its first change.
		rec, err := s.kube.CoreV1().ConfigMaps(ns).Get(ctx, deployplan.CaptureRecordName, metav1.GetOptions{})
		if dg := d.RollbackHint.PreApplyCaptureDigest; err != nil || !strings.HasPrefix(dg, "sha256:") || !strings.Contains(rec.Data["sample-dev"], dg) {
			t.Errorf("capture digest %q recorded as %v (%v), want it under sample-dev in ConfigMap %s", dg, rec.GetName(), err, deployplan.CaptureRecordName)
		}
		for _, h := range d.RollbackHint.DeploymentRollbacks {
			if strings.HasPrefix(h, "kubectl") && (!strings.Contains(h, "--kubeconfig "+c.Kubeconfig) || !strings.Contains(h, "--context devcluster")) {
				t.Errorf("rollback hint %q lacks the configured --kubeconfig and --context", h)
			}
		}
		sec, _ := s.kube.CoreV1().Secrets(ns).Get(ctx, "api-secret", metav1.GetOptions{})
		postSecretRV = sec.ResourceVersion
	})
	if capture == "" {
		t.Fatal("no capture")
	}

	t.Run("the capture is a folder kubectl applies, without Secrets", func(t *testing.T) {
		files, _ := filepath.Glob(filepath.Join(capture, "*"))
		var names []string
		for _, f := range files {
			names = append(names, filepath.Base(f))
			b, _ := os.ReadFile(f)
			if bytes.Contains(b, []byte("s3cr3t")) {
				t.Errorf("%s holds a Secret value", f)
			}
			if strings.Contains(f, "-secret-") {
				t.Errorf("the capture holds a Secret file: %s", f)
			}
		}
		joined := strings.Join(names, " ")
		for _, want := range []string{deployplan.CaptureIndexFile, deployplan.CaptureReadmeFile, "-configmap-old-config.json", "-deployment-api.json"} {
			if !strings.Contains(joined, want) {
				t.Errorf("capture files %v lack %s", names, want)
			}
		}
		readme, _ := os.ReadFile(filepath.Join(capture, deployplan.CaptureReadmeFile))
		if !strings.Contains(string(readme), "Secret/api-secret") || !strings.Contains(string(readme), "deploy-web restore") {
			t.Errorf("%s does not name the Secret to restore by hand or the restore command:\n%s", deployplan.CaptureReadmeFile, readme)
		}
		bins, err := devcluster.FindBinaries("")
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"apply", "--dry-run=server", "-f", capture},
			{"apply", "--server-side", "--field-manager=" + deployplan.FieldManager, "--dry-run=server", "-f", capture},
		} {
			out, err := exec.Command(bins.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig, "-n", ns}, args...)...).CombinedOutput()
			if err != nil {
				t.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
	})

	t.Run("restore puts the pre-apply state back and leaves Secrets alone", func(t *testing.T) {
		before := s.snapshot()
		dry := filepath.Join(s.reports, "restore-plan.json")
		if code, _, _ := s.cli(append([]string{"restore", "--dry-run", "--capture", capture, "--write-report", dry}, base...)...); code != 0 {
			t.Errorf("restore --dry-run = %d, want 0", code)
		}
		if d := s.readReport(dry).DeployApply; d.Mode != "restore-dry-run" || d.Conclusion.Status != deployplan.StatusReady || action(&d, "Deployment", "api") != deployplan.ActionUpdate || action(&d, "Service", "api") != deployplan.ActionUnchanged {
			t.Errorf("restore plan: mode %q, %+v, Deployment %q, Service %q; want ready, update and unchanged", d.Mode, d.Conclusion, action(&d, "Deployment", "api"), action(&d, "Service", "api"))
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("restore --dry-run changed the cluster")
		}
		r := filepath.Join(s.reports, "restore.json")
		if code, _, _ := s.cli(append([]string{"restore", "--capture", capture, "--confirm-env=sample-dev", "--confirmed-non-production", "--timeout", "2m", "--write-report", r}, base...)...); code != 0 {
			t.Fatalf("restore = %d, want 0", code)
		}
		d := s.readReport(r).DeployApply
		if d.Mode != "restore" || d.Conclusion.Status != deployplan.StatusApplied {
			t.Errorf("restore report: mode %q, %+v", d.Mode, d.Conclusion)
		}
		// What version 2 did not change is re-applied as it is: the
		// capture holds every field deploy-web owned, nothing less.
		for _, o := range d.Objects {
			want := "unchanged"
			switch o.Kind + "/" + o.Name {
			case "ConfigMap/api-config", "Deployment/api":
				want = "configured"
			case "ConfigMap/old-config":
				want = "created"
			}
			if o.Result != want {
				t.Errorf("restore of %s/%s: %q, want %q", o.Kind, o.Name, o.Result, want)
			}
		}
		warned := false
		for _, w := range d.Warnings {
			warned = warned || strings.Contains(w, "Secret api-secret")
		}
		if !warned {
			t.Errorf("the restore report does not name the Secret to restore by hand: %q", d.Warnings)
		}
		dep, _ := s.kube.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{})
		if !reflect.DeepEqual(dep.Spec, preDeploy.Spec) {
			a, _ := json.Marshal(preDeploy.Spec)
			b, _ := json.Marshal(dep.Spec)
			t.Errorf("Deployment spec after restore differs from before the apply:\nbefore %s\nafter  %s", a, b)
		}
		cm, _ := s.kube.CoreV1().ConfigMaps(ns).Get(ctx, "api-config", metav1.GetOptions{})
		if !reflect.DeepEqual(cm.Data, preCM.Data) {
			t.Errorf("ConfigMap data after restore = %v, want %v", cm.Data, preCM.Data)
		}
		old, err := s.kube.CoreV1().ConfigMaps(ns).Get(ctx, "old-config", metav1.GetOptions{})
		if err != nil || old.Data["K"] != "v1" {
			t.Errorf("the pruned old-config after restore: %v %v, want it back with K=v1", old, err)
		}
		sec, _ := s.kube.CoreV1().Secrets(ns).Get(ctx, "api-secret", metav1.GetOptions{})
		if sec.ResourceVersion != postSecretRV {
			t.Errorf("the restore touched the Secret (resourceVersion %s -> %s)", postSecretRV, sec.ResourceVersion)
		}
	})

	t.Run("a tampered capture is refused before anything is written", func(t *testing.T) {
		bad := t.TempDir()
		os.WriteFile(filepath.Join(bad, "a.json"), []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"kube-system"},"data":{"a":"b"}}`), 0o644)
		os.WriteFile(filepath.Join(bad, "b.json"), []byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"y"},"stringData":{"a":"b"}}`), 0o644)
		os.WriteFile(filepath.Join(bad, "c.json"), []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"deploy-web-apply","namespace":"sample-dev"}}`), 0o644)
		os.WriteFile(filepath.Join(bad, "e.json"), []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"not-indexed","namespace":"sample-dev"}}`), 0o644)
		// The index lists x (in another namespace) and the Lease, so the
		// boundary and kind checks are what refuse them.
		os.WriteFile(filepath.Join(bad, deployplan.CaptureIndexFile), []byte(`{"apiVersion":"v1","kind":"ConfigMap","namespace":"kube-system","name":"x","existed":true,"file":"a.json"}`+"\n"+
			`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","namespace":"sample-dev","name":"deploy-web-apply","existed":true,"file":"c.json"}`+"\n"), 0o644)
		before := s.snapshot()
		r := filepath.Join(s.reports, "restore-bad.json")
		code, _, stderr := s.cli(append([]string{"restore", "--capture", bad, "--confirm-env=sample-dev", "--confirmed-non-production", "--write-report", r}, base...)...)
		// One blocker per root cause, its message naming the object.
		for _, want := range []string{"BLOCKER outside-namespace: ConfigMap/x", "BLOCKER capture-secret: the capture holds Secret y", "BLOCKER capture-kind: the capture holds Lease/deploy-web-apply",
			"BLOCKER capture-unlisted: the capture holds ConfigMap/not-indexed", "BLOCKER capture-unrecorded: capture " + bad} {
			if !strings.Contains(stderr, want) {
				t.Errorf("restore of a tampered capture: stderr lacks %s", want)
			}
		}
		if code != 2 {
			t.Errorf("restore of a tampered capture = %d, want 2", code)
		}
		if d := s.readReport(r).DeployApply; d.Conclusion.Status != deployplan.StatusRefused {
			t.Errorf("refused restore report = %+v", d.Conclusion)
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("a refused restore changed the cluster")
		}
		// A real capture with an image nothing runs and the catalog does
		// not admit, and a ConfigMap the index says the apply created.
		evil := copyCapture(t, capture, func(data []byte) []byte {
			if strings.Contains(string(data), `"kind": "Deployment"`) {
				data = regexp.MustCompile(`"image": "[^"]*"`).ReplaceAll(data, []byte(`"image": "evil.example/miner:1"`))
			}
			return data
		})
		os.WriteFile(filepath.Join(evil, "999-configmap-new.json"), []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new-config","namespace":"sample-dev"}}`), 0o644)
		idx, _ := os.ReadFile(filepath.Join(evil, deployplan.CaptureIndexFile))
		os.WriteFile(filepath.Join(evil, deployplan.CaptureIndexFile), append(idx, []byte(`{"apiVersion":"v1","kind":"ConfigMap","namespace":"sample-dev","name":"new-config","existed":false}`+"\n")...), 0o644)
		code, _, stderr = s.cli(append([]string{"restore", "--capture", evil, "--confirm-env=sample-dev", "--confirmed-non-production"}, base...)...)
		if code != 2 || !strings.Contains(stderr, `BLOCKER capture-image`) || !strings.Contains(stderr, `"evil.example/miner:1"`) || !strings.Contains(stderr, "ConfigMap/new-config") || !strings.Contains(stderr, "BLOCKER capture-unrecorded") {
			t.Errorf("restore of a capture with a foreign image = %d (%s), want 2 with capture-image, capture-unlisted and capture-unrecorded blockers", code, stderr)
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("a refused restore changed the cluster")
		}
		os.Symlink("/etc/hostname", filepath.Join(bad, "d.json"))
		if code, _, stderr := s.cli(append([]string{"restore", "--capture", bad, "--confirm-env=sample-dev", "--confirmed-non-production"}, base...)...); code != 2 || !strings.Contains(stderr, "symlinks are not followed") {
			t.Errorf("restore of a capture with a symlink = %d (%s), want 2", code, stderr)
		}
		if code, _, _ := s.cli("restore", "--config", s.cfgPath, "--env", "sample-prod", "--capture", capture, "--confirm-env=sample-prod", "--confirmed-non-production"); code != 2 {
			t.Errorf("restore in a protected environment = %d, want 2", code)
		}
	})

	t.Run("a restore applies nothing its dry-run blocks, nor a capture no apply recorded", func(t *testing.T) {
		restore := func(dir string, dry bool, report string) (int, string, *deployplan.DeployApply) {
			t.Helper()
			args := append([]string{"restore", "--capture", dir, "--write-report", report}, base...)
			if dry {
				args = append(args, "--dry-run")
			} else {
				args = append(args, "--confirm-env=sample-dev", "--confirmed-non-production", "--timeout", "1m")
			}
			code, _, stderr := s.cli(args...)
			return code, stderr, &s.readReport(report).DeployApply
		}
		blockerIDs := func(d *deployplan.DeployApply) []string {
			var out []string
			for _, b := range d.RemainingBlockers {
				out = append(out, b.ID)
			}
			return out
		}
		// The reported hole: a Service with externalIPs and an index line
		// without namespace (and, second, one an apply could have written,
		// file and all): the dry-run blocks it, and so does the run.
		evilService := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"evil"},"spec":{"externalIPs":["10.96.0.1"],"ports":[{"port":80}]}}`
		for i, line := range []string{
			`{"apiVersion":"v1","kind":"Service","name":"evil","existed":true}`,
			`{"apiVersion":"v1","kind":"Service","name":"evil","existed":true,"file":"evil.json"}`,
		} {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "evil.json"), []byte(evilService), 0o644)
			os.WriteFile(filepath.Join(dir, deployplan.CaptureIndexFile), []byte(line+"\n"), 0o644)
			before := s.snapshot()
			code, _, d := restore(dir, true, filepath.Join(s.reports, fmt.Sprintf("evil-plan-%d.json", i)))
			if code != 3 || d.Conclusion.Status != deployplan.StatusBlocked || action(d, "Service", "evil") != deployplan.ActionBlocked || !slices.Contains(blockerIDs(d), "capture-unrecorded") {
				t.Errorf("restore --dry-run of the evil Service (index %s) = %d, %+v, blockers %v; want 3, blocked, capture-unrecorded", line, code, d.Conclusion, blockerIDs(d))
			}
			if i == 1 && !slices.Equal(blockerIDs(d), []string{"capture-unrecorded"}) {
				t.Errorf("blockers of a well-formed hand-made capture = %v, want capture-unrecorded alone", blockerIDs(d))
			}
			code, stderr, d := restore(dir, false, filepath.Join(s.reports, fmt.Sprintf("evil-%d.json", i)))
			if code != 2 || d.Conclusion.Status != deployplan.StatusRefused || !strings.Contains(stderr, "a hand-made capture must go through apply like any other source") {
				t.Errorf("restore of the evil Service (index %s) = %d, %+v; want 2, refused, saying a hand-made capture goes through apply", line, code, d.Conclusion)
			}
			if _, err := s.kube.CoreV1().Services(ns).Get(ctx, "evil", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("Service evil after a refused restore: %v, want not found", err)
			}
			if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("a refused restore changed the cluster")
			}
		}

		// The apply's own capture, an extra unindexed file added.
		extra := copyCapture(t, capture, func(data []byte) []byte { return data })
		os.WriteFile(filepath.Join(extra, "zzz-service-evil.json"), []byte(evilService), 0o644)
		if code, _, d := restore(extra, true, filepath.Join(s.reports, "extra-plan.json")); code != 3 || !slices.Contains(blockerIDs(d), "capture-unrecorded") || !slices.Contains(blockerIDs(d), "capture-unlisted") {
			t.Errorf("restore --dry-run of a capture with an extra file = %d, blockers %v; want 3 with capture-unrecorded and capture-unlisted", code, blockerIDs(d))
		}

		// The apply's own capture, its Deployment given an init container
		// of an image nothing runs and the catalog does not admit; even
		// with its digest recorded (as if an apply had written it), the
		// image blocks it.
		swapped := copyCapture(t, capture, func(data []byte) []byte {
			if !strings.Contains(string(data), `"kind": "Deployment"`) {
				return data
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			podSpec := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			podSpec["initContainers"] = []any{map[string]any{"name": "init", "image": "evil.example/miner:1"}}
			data, _ = json.MarshalIndent(m, "", "  ")
			return data
		})
		_, _, d := restore(swapped, true, filepath.Join(s.reports, "swapped-plan.json"))
		rec, err := s.kube.CoreV1().ConfigMaps(ns).Get(ctx, deployplan.CaptureRecordName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rec.Data["sample-dev"] += fmt.Sprintf(`{"digest":%q,"time":"2026-01-01T00:00:00Z","holder":"test","capture":%q}`+"\n", d.Source.CaptureDigest, swapped)
		if _, err := s.kube.CoreV1().ConfigMaps(ns).Update(ctx, rec, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		before := s.snapshot()
		code, _, d := restore(swapped, true, filepath.Join(s.reports, "swapped-plan-recorded.json"))
		found := false
		for _, b := range d.RemainingBlockers {
			found = found || b.ID == "capture-image" && slices.Contains(b.Affected, "Deployment/api/init") && strings.Contains(b.Message, "evil.example/miner:1")
		}
		if code != 3 || !found || slices.Contains(blockerIDs(d), "capture-unrecorded") {
			t.Errorf("restore --dry-run of a recorded capture with an uncatalogued init image = %d, blockers %+v; want 3 with capture-image for Deployment/api/init and no capture-unrecorded", code, d.RemainingBlockers)
		}
		if code, _, d := restore(swapped, false, filepath.Join(s.reports, "swapped.json")); code != 2 || d.Conclusion.Status != deployplan.StatusRefused {
			t.Errorf("restore of a capture with an uncatalogued init image = %d, %+v; want 2, refused", code, d.Conclusion)
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("a refused restore changed the cluster")
		}
		dep, _ := s.kube.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{})
		if len(dep.Spec.Template.Spec.InitContainers) != 0 {
			t.Errorf("the refused restore gave Deployment api init containers %v", dep.Spec.Template.Spec.InitContainers)
		}
	})

	t.Run("the lock Lease in a manifest blocks the plan and the apply writes nothing", func(t *testing.T) {
		v3 := s.manifests("")
		v3["deploy/dev/kustomization.yaml"] = "namespace: sample-dev\nresources:\n  - app.yaml\n  - jobs.yaml\n  - lease.yaml\n"
		v3["deploy/dev/lease.yaml"] = "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: deploy-web-apply}\nspec: {holderIdentity: me}\n"
		s.commitFiles("v3: a Lease named like the lock", v3)
		code, d := plan("lease-plan.json")
		if code != 3 {
			t.Errorf("plan with Lease deploy-web-apply = %d, want 3", code)
		}
		found := false
		for _, b := range d.RemainingBlockers {
			// One blocker per root cause: reserved-name, naming the Lease.
			found = found || b.ID == "reserved-name" && slices.Contains(b.Affected, "Lease/deploy-web-apply")
		}
		if !found {
			t.Errorf("blockers = %+v, want reserved-name affecting Lease/deploy-web-apply", d.RemainingBlockers)
		}
		before := s.snapshot()
		r := filepath.Join(s.reports, "lease-apply.json")
		if code, _, _ := s.cli(append(applyArgs, "--write-report", r)...); code != 2 {
			t.Errorf("apply with Lease deploy-web-apply = %d, want 2", code)
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the refused apply changed the cluster:\nbefore %v\nafter  %v", before, after)
		}
		d2 := s.readReport(r).DeployApply
		if d2.Conclusion.Status != deployplan.StatusRefused || len(d2.RemainingBlockers) == 0 {
			t.Errorf("refused apply report = %+v, blockers %d", d2.Conclusion, len(d2.RemainingBlockers))
		}
	})

	t.Run("a Secret value changed by hand plans update, not unchanged", func(t *testing.T) {
		sec, err := s.kube.CoreV1().Secrets(ns).Get(ctx, "api-secret", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sec.Data["password"] = []byte("changed-by-hand")
		if _, err := s.kube.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		_, d := plan("hand-edit.json")
		if a := action(d, "Secret", "api-secret"); a != deployplan.ActionUpdate {
			t.Errorf("a Secret whose value another manager wrote plans %q, want update", a)
		}
		// The report says who wrote the values (kubectl-edit), never the
		// value nor the key (managed fields name keys).
		raw, _ := os.ReadFile(filepath.Join(s.reports, "hand-edit.json"))
		if bytes.Contains(raw, []byte("changed-by-hand")) || bytes.Contains(raw, []byte("password")) || !bytes.Contains(raw, []byte("values written by kubectl-edit")) {
			t.Errorf("the report carries the hand-written value or its key, or does not say who wrote it:\n%s", raw)
		}
	})

	t.Run("an uncatalogued image in any pod template blocks the plan; unreadable containers are refused", func(t *testing.T) {
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "runners.example.com"},
			"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
				"names": map[string]any{"plural": "runners", "singular": "runner", "kind": "Runner", "listKind": "RunnerList"},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}}
		crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
		if _, err := s.dyn.Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			s.dyn.Resource(crds).Delete(context.Background(), "runners.example.com", metav1.DeleteOptions{})
		})
		runners := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "runners"}
		for start := time.Now(); ; time.Sleep(200 * time.Millisecond) {
			if _, err := s.dyn.Resource(runners).Namespace(ns).List(ctx, metav1.ListOptions{}); err == nil {
				break
			} else if time.Since(start) > time.Minute {
				t.Fatalf("CRD runners.example.com not served: %v", err)
			}
		}
		v4 := s.manifests("")
		v4["deploy/dev/kustomization.yaml"] = "namespace: sample-dev\nresources:\n  - app.yaml\n  - jobs.yaml\n  - workloads.yaml\n"
		v4["deploy/dev/workloads.yaml"] = `apiVersion: v1
kind: ReplicationController
metadata: {name: rc}
spec:
  replicas: 1
  selector: {app: rc}
  template:
    metadata: {labels: {app: rc}}
    spec:
      containers: [{name: m, image: "evil.example/miner:1"}]
---
apiVersion: example.com/v1
kind: Runner
metadata: {name: r}
spec:
  workload:
    podSpec:
      containers: [{name: m, image: "evil.example/miner:2"}]
---
apiVersion: example.com/v1
kind: Runner
metadata: {name: unreadable}
spec:
  containers: "evil.example/miner:3"
`
		s.commitFiles("v4: uncatalogued images outside the usual kinds", v4)
		code, d := plan("pod-templates.json")
		var notInCatalog, unknown []string
		for _, b := range d.RemainingBlockers {
			switch b.ID {
			case "image-not-in-catalog":
				notInCatalog = b.Affected
			case "unknown-workload":
				unknown = b.Affected
			}
		}
		if code != 3 || d.Conclusion.Status != deployplan.StatusBlocked || !slices.Contains(notInCatalog, "ReplicationController/rc/m") || !slices.Contains(notInCatalog, "Runner/r/m") || !slices.Equal(unknown, []string{"Runner/unreadable"}) {
			t.Errorf("plan with uncatalogued images in a ReplicationController and a Runner = %d, %s; image-not-in-catalog %v, unknown-workload %v; want 3, blocked, both containers and Runner/unreadable", code, d.Conclusion.Status, notInCatalog, unknown)
		}
	})

}

// copyCapture copies the files of a capture into a new folder, each
// through edit, and returns the folder.
func copyCapture(t *testing.T, capture string, edit func(data []byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(capture, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("capture %s: %d files, %v", capture, len(files), err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), edit(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
