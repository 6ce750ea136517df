package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/buildtags"
	"github.com/hanzoai/deploy-web/objrules"
)

func TestJoinOptionalValue(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"--write-report", "out.json", "--env", "x"}, []string{"--write-report=out.json", "--env", "x"}},
		{[]string{"--write-report", "--env", "x"}, []string{"--write-report", "--env", "x"}},
		{[]string{"--env", "x", "--write-report"}, []string{"--env", "x", "--write-report"}},
		{[]string{"-write-report", "p"}, []string{"-write-report=p"}},
	}
	for _, tt := range tests {
		if got := joinOptionalValue(tt.in, "write-report"); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("joinOptionalValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestApplyUsageAndRefusals needs no cluster: each refusal exits 2 before
// anything is read.
func TestApplyUsageAndRefusals(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "deploy.yaml")
	os.WriteFile(cfg, []byte(`
environments:
  - {name: dev, cluster: {context: nowhere}, namespace: dev, source: {path: ./k}, catalog: c.json}
  - {name: prod, cluster: {context: nowhere}, namespace: prod, protected: true, source: {path: ./k}, catalog: c.json}
  - {name: lab, cluster: {context: nowhere}, namespace: lab, source: {path: ./k}, catalog: c.json, consoleNamespace: ""}
`), 0o644)
	badPlan := filepath.Join(dir, "bad-plan.json")
	os.WriteFile(badPlan, []byte(`{"x": 1}`), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no env", []string{"apply", "--config", cfg}, 2, "--env is required"},
		{"unknown env", []string{"apply", "--config", cfg, "--env", "qa"}, 2, "no environment \"qa\""},
		{"bad config", []string{"apply", "--config", filepath.Join(dir, "none.yaml"), "--env", "dev"}, 2, "read config"},
		{"both modes", []string{"apply", "--config", cfg, "--env", "dev", "--dry-run", "--apply"}, 2, "exclude each other"},
		{"force", []string{"apply", "--config", cfg, "--env", "dev", "--apply", "--confirm-env=dev", "--confirmed-non-production", "--force"}, 2, "--force asks for something"},
		{"force-push", []string{"apply", "--config", cfg, "--env", "dev", "--force-push"}, 2, "--force-push"},
		{"secret reads", []string{"apply", "--config", cfg, "--env", "dev", "--allow-secret-reads"}, 2, "--allow-secret-reads"},
		{"production flag", []string{"apply", "--config", cfg, "--env", "dev", "--production"}, 2, "--production"},
		{"protected", []string{"apply", "--config", cfg, "--env", "prod", "--apply", "--confirm-env=prod", "--confirmed-non-production"}, 2, "protected"},
		{"no confirmation", []string{"apply", "--config", cfg, "--env", "dev", "--apply"}, 2, "--confirm-env=dev"},
		{"wrong confirmation", []string{"apply", "--config", cfg, "--env", "dev", "--apply", "--confirm-env=prod", "--confirmed-non-production"}, 2, "does not match"},
		{"no non-production", []string{"apply", "--config", cfg, "--env", "dev", "--apply", "--confirm-env=dev"}, 2, "--confirmed-non-production"},
		{"unknown flag", []string{"apply", "--config", cfg, "--env", "dev", "--yolo"}, 2, "yolo"},
		{"plan without apply", []string{"apply", "--config", cfg, "--env", "dev", "--plan", badPlan}, 2, "--plan goes with --apply"},
		{"plan missing", []string{"apply", "--config", cfg, "--env", "dev", "--apply", "--confirm-env=dev", "--confirmed-non-production", "--plan", filepath.Join(dir, "none.json")}, 2, "no such file"},
		{"plan not a report", []string{"apply", "--config", cfg, "--env", "dev", "--apply", "--confirm-env=dev", "--confirmed-non-production", "--plan", badPlan}, 2, "not a valid report"},
		{"prune without apply", []string{"apply", "--config", cfg, "--env", "dev", "--prune"}, 2, "--prune goes with --apply"},
		{"restore without capture", []string{"restore", "--config", cfg, "--env", "dev", "--confirm-env=dev", "--confirmed-non-production"}, 2, "--capture DIR is required"},
		{"restore force", []string{"restore", "--config", cfg, "--env", "dev", "--capture", dir, "--force"}, 2, "--force asks for something"},
		{"restore protected", []string{"restore", "--config", cfg, "--env", "prod", "--capture", dir, "--confirm-env=prod", "--confirmed-non-production"}, 2, "protected"},
		{"restore no confirmation", []string{"restore", "--config", cfg, "--env", "dev", "--capture", dir}, 2, "--confirm-env=dev"},
		// consoleNamespace "": no freezes to read in a cluster that runs
		// no deploy-web, so the capture is read (the row below reads them).
		{"restore not a folder", []string{"restore", "--config", cfg, "--env", "lab", "--capture", cfg, "--confirm-env=lab", "--confirmed-non-production"}, 2, "is not a folder"},
		// The caller does not choose where the freezes are read.
		{"restore, freezes elsewhere", []string{"restore", "--config", cfg, "--env", "dev", "--capture", cfg, "--confirm-env=dev", "--confirmed-non-production", "--audit-namespace="}, 2, `--audit-namespace "" is not deploy-web's namespace in environment dev's cluster, "deploy-web"`},
		{"apply, freezes elsewhere", []string{"apply", "--config", cfg, "--env", "dev", "--apply", "--confirm-env=dev", "--confirmed-non-production", "--audit-namespace=empty"}, 2, `--audit-namespace "empty" is not deploy-web's namespace`},
		{"apply, records elsewhere with break-glass: the freezes are still read", []string{"apply", "--config", cfg, "--env", "dev", "--apply", "--confirm-env=dev", "--confirmed-non-production", "--audit-namespace=empty", "--break-glass", "hotfix"}, 2, "the freezes could not be read"},
		{"restore where the freezes cannot be read", []string{"restore", "--config", cfg, "--env", "dev", "--capture", cfg, "--confirm-env=dev", "--confirmed-non-production"}, 2, "the freezes could not be read"},
		{"apply where the freezes cannot be read", []string{"apply", "--config", cfg, "--env", "dev", "--apply", "--confirm-env=dev", "--confirmed-non-production"}, 2, "the freezes could not be read"},
		{"break-glass without apply", []string{"apply", "--config", cfg, "--env", "dev", "--break-glass", "hotfix"}, 2, "--break-glass goes with --apply"},
		{"restore dry-run with break-glass", []string{"restore", "--config", cfg, "--env", "dev", "--capture", dir, "--dry-run", "--break-glass", "hotfix"}, 2, "--break-glass goes without --dry-run"},
		{"validate a missing file", []string{"validate-report", filepath.Join(dir, "missing.json")}, 2, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errb)
			if code != tt.code {
				t.Errorf("run(%q) = %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String()+errb.String(), tt.want) {
				t.Errorf("run(%q) output lacks %q\nstdout: %s\nstderr: %s", tt.args, tt.want, out.String(), errb.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "reports")); err == nil {
		t.Error("a refusal wrote a reports folder")
	}
}

// sample is the integration fixture: a git repository, a registry with
// the images, a config and a cluster.
type sample struct {
	t        *testing.T
	dir      string
	repoDir  string
	repo     *git.Repository
	registry string
	digests  map[string]string
	commit   string // the artifact commit every image is tagged with
	cfgPath  string
	reports  string
	kube     kubernetes.Interface
	dyn      dynamic.Interface
	meta     metadata.Interface
	health   *httptest.Server
}

const ns = "sample-dev"

var services = []string{"api", "migrate", "seed", "report"}

func (s *sample) image(svc, tag string) string {
	return fmt.Sprintf("%s/acme/%s:%s", s.registry, svc, tag)
}

// manifests renders the sample's kustomize folder; extra is appended to
// the Deployment's pod spec.
func (s *sample) manifests(podExtra string) map[string]string {
	c := s.commit
	return map[string]string{
		"deploy/dev/kustomization.yaml": "namespace: sample-dev\nresources:\n  - app.yaml\n  - jobs.yaml\n",
		"deploy/dev/app.yaml": fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: api-config}
data: {LOG_LEVEL: info}
---
apiVersion: v1
kind: Secret
metadata: {name: api-secret}
stringData: {password: s3cr3t-value-never-printed}
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - name: api
          image: %s
          env:
            - {name: IMAGE, value: "%s"}
            - {name: GIT_COMMIT, value: "%s"}
%s`, s.image("api", c), s.image("api", c), c, podExtra),
		"deploy/dev/jobs.yaml": jobYAML("migrate", s.image("migrate", c)) + "---\n" + jobYAML("seed", s.image("seed", c)) + "---\n" + jobYAML("report", s.image("report", c)),
	}
}

func jobYAML(name, image string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: %s}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: run, image: %s}]
`, name, image)
}

func (s *sample) catalog(unpublished ...string) string {
	type svc struct {
		ID        string `json:"id"`
		Image     string `json:"image"`
		Digest    string `json:"digest"`
		Published bool   `json:"published"`
	}
	cat := struct {
		Commit   string `json:"commit"`
		Services []svc  `json:"services"`
	}{Commit: s.commit}
	for _, id := range services {
		pub := true
		for _, u := range unpublished {
			if u == id {
				pub = false
			}
		}
		cat.Services = append(cat.Services, svc{ID: id, Image: s.image(id, s.commit), Digest: s.digests[id], Published: pub})
	}
	b, _ := json.MarshalIndent(cat, "", "  ")
	return string(b)
}

// commitFiles writes files into the work tree and commits them on main.
func (s *sample) commitFiles(msg string, files map[string]string) string {
	s.t.Helper()
	wt, err := s.repo.Worktree()
	if err != nil {
		s.t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(s.repoDir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			s.t.Fatal(err)
		}
		if _, err := wt.Add(p); err != nil {
			s.t.Fatal(err)
		}
	}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: &object.Signature{Name: "test", Email: "test@example.com", When: time.Now()}})
	if err != nil {
		s.t.Fatal(err)
	}
	return h.String()
}

func newSample(t *testing.T) *sample {
	t.Helper()
	s := &sample{t: t, dir: t.TempDir(), digests: map[string]string{}, commit: "0123456789abcdef0123456789abcdef01234567"}
	s.reports = filepath.Join(s.dir, "reports")

	// A registry on loopback holding one image per service.
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	s.registry = strings.TrimPrefix(reg.URL, "http://")
	for _, id := range services {
		img, err := random.Image(128, 1)
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := name.ParseReference(s.image(id, s.commit))
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		s.digests[id] = d.String()
	}
	s.health = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(s.health.Close)

	// The manifest repository.
	s.repoDir = filepath.Join(s.dir, "repo")
	var err error
	if s.repo, err = git.PlainInit(s.repoDir, false); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *sample) writeConfig(kubeconfig string) {
	cfg := fmt.Sprintf(`environments:
  - name: sample-dev
    cluster: {context: devcluster, kubeconfig: %q}
    namespace: sample-dev
    source: {repo: "file://%s", ref: master, path: deploy/dev}
    catalog: catalog.json
    templateJobs: {allowlist: [migrate, seed]}
    envMirrors: {image: [IMAGE], commit: [GIT_COMMIT]}
    healthChecks:
      - {name: api, url: %q, required: true}
    registry: {hosts: [%q]}
  - name: sample-prod
    cluster: {context: devcluster, kubeconfig: %q}
    namespace: sample-dev
    protected: true
    source: {repo: "file://%s", ref: master, path: deploy/dev}
    catalog: catalog.json
    registry: {hosts: [%q]}
`, kubeconfig, s.repoDir, s.health.URL+"/healthz", s.registry, kubeconfig, s.repoDir, s.registry)
	s.cfgPath = filepath.Join(s.dir, "deploy.yaml")
	if err := os.WriteFile(s.cfgPath, []byte(cfg), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// cli runs the command in process and returns its exit code and output.
func (s *sample) cli(args ...string) (int, string, string) {
	s.t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code := run(ctx, args, &out, &errb)
	s.t.Logf("deploy-web %s -> %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	return code, out.String(), errb.String()
}

func (s *sample) readReport(path string) *deployplan.Report {
	s.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatal(err)
	}
	if vs := deployplan.ValidateReport(b); len(vs) > 0 {
		s.t.Errorf("report %s breaks the contract: %v", path, vs)
	}
	var r deployplan.Report
	if err := json.Unmarshal(b, &r); err != nil {
		s.t.Fatal(err)
	}
	return &r
}

var snapshotKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "secrets"}, {Version: "v1", Resource: "services"},
	{Group: "apps", Version: "v1", Resource: "deployments"}, {Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"},
}

// snapshot maps every object of the namespace (metadata only) to uid and
// resourceVersion; Deployments to uid and generation (their status moves);
// not the capture record (deployplan.CaptureRecordName).
func (s *sample) snapshot() map[string]string {
	s.t.Helper()
	out := map[string]string{}
	for _, gvr := range snapshotKinds {
		list, err := s.meta.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			s.t.Fatal(err)
		}
		for _, o := range list.Items {
			// The record of the captures is deploy-web's bookkeeping, as
			// the lock is: every apply adds its capture's digest.
			if gvr.Resource == "configmaps" && (o.Name == "kube-root-ca.crt" || o.Name == deployplan.CaptureRecordName) {
				continue
			}
			v := string(o.UID) + "@" + o.ResourceVersion
			if gvr.Resource == "deployments" {
				v = fmt.Sprintf("%s@gen%d", o.UID, o.Generation)
			}
			out[gvr.Resource+"/"+o.Name] = v
		}
	}
	return out
}

func (s *sample) getJob(name string) *unstructured.Unstructured {
	s.t.Helper()
	u, err := s.dyn.Resource(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get job %s: %v", name, err)
	}
	return u
}

func jobImage(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	return cs[0].(map[string]any)["image"].(string)
}

// seed stands for the previous deploy: deploy-web applied older images.
func (s *sample) seed() {
	s.t.Helper()
	ctx := context.Background()
	old := map[string]string{"migrate": s.image("migrate", "oldoldo"), "seed": s.image("seed", "oldoldo"), "report": s.image("report", s.commit)}
	for _, j := range []string{"migrate", "seed", "report"} {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(jobYAML(j, old[j])), &u.Object); err != nil {
			s.t.Fatal(err)
		}
		u.SetNamespace(ns)
		u.SetAnnotations(map[string]string{deployplan.EnvironmentAnnotation: "sample-dev"}) // as deploy-web's apply stamps it
		if _, err := s.dyn.Resource(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}).Namespace(ns).Apply(ctx, j, &u, metav1.ApplyOptions{FieldManager: deployplan.FieldManager}); err != nil {
			s.t.Fatal(err)
		}
	}
}

func (s *sample) waitDeploymentHealthy(name string) {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		d, err := s.kube.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && objrules.DeploymentHealth(d).Status == objrules.HealthHealthy {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("deployment %s not healthy: %v", name, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestPlanApplyScenarios walks the scenarios on a real control
// plane against a git repository built here.
func TestPlanApplyScenarios(t *testing.T) {
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
	s.seed()

	files := s.manifests("")
	files["catalog.json"] = s.catalog("api")
	s.commitFiles("sample: api not yet published", files)
	report := filepath.Join(s.reports, "plan.json")
	base := []string{"--config", s.cfgPath, "--env", "sample-dev"}

	t.Run("source-plan sees the unpublished entry offline and says it proves nothing", func(t *testing.T) {
		// What the artifact gates can see without the cluster (here an
		// unpublished service) is a divergence of source-plan too.
		code, out, _ := s.cli(append([]string{"source-plan", "--check"}, base...)...)
		if code != 3 || !strings.Contains(out, "DIVERGENCE unpublished") || !strings.Contains(out, "proves nothing about the registry or the cluster") {
			t.Errorf("source-plan --check = %d, want 3 with the unpublished divergence and the disclaimer:\n%s", code, out)
		}
	})

	t.Run("blocked by an unpublished catalog entry", func(t *testing.T) {
		code, _, _ := s.cli(append([]string{"apply", "--dry-run", "--write-report", report}, base...)...)
		if code != 3 {
			t.Errorf("blocked plan exit = %d, want 3", code)
		}
		r := s.readReport(report)
		d := r.DeployApply
		if d.Conclusion.Status != deployplan.StatusBlocked {
			t.Fatalf("status = %q, want blocked", d.Conclusion.Status)
		}
		if len(d.RemainingBlockers) != 1 || d.RemainingBlockers[0].ID != "unpublished" || !slices.Equal(d.RemainingBlockers[0].Affected, []string{"api"}) {
			t.Errorf("blockers = %+v, want only unpublished (api)", d.RemainingBlockers)
		}
		if d.ArtifactPlan.PublishStatus != "unpublished" || d.ArtifactPlan.RegistryStatus != "verified" {
			t.Errorf("artifactPlan = %+v", d.ArtifactPlan)
		}
		for _, cmd := range d.ManualCommands {
			if strings.Contains(cmd, "--apply") {
				t.Errorf("blocked plan offers %q", cmd)
			}
		}
		if code, _, _ := s.cli(append([]string{"apply", "--dry-run", "--expect-blocked"}, base...)...); code != 0 {
			t.Errorf("--expect-blocked on a blocked plan = %d, want 0", code)
		}
		if code, _, _ := s.cli("validate-report", report); code != 0 {
			t.Errorf("validate-report = %d, want 0", code)
		}
		if _, err := os.Stat(strings.TrimSuffix(report, ".json") + ".md"); err != nil {
			t.Errorf("no Markdown report: %v", err)
		}
	})

	files["catalog.json"] = s.catalog()
	s.commitFiles("sample: api published", map[string]string{"catalog.json": files["catalog.json"]})

	t.Run("fixed catalog: ready", func(t *testing.T) {
		code, out, _ := s.cli(append([]string{"apply", "--dry-run", "--write-report", report}, base...)...)
		if code != 0 {
			t.Fatalf("ready plan exit = %d, want 0", code)
		}
		if strings.Contains(out, "s3cr3t") {
			t.Error("the summary prints a Secret value")
		}
		d := s.readReport(report).DeployApply
		if d.Conclusion.Status != deployplan.StatusReady {
			t.Fatalf("status = %q (%+v), want ready", d.Conclusion.Status, d.RemainingBlockers)
		}
		results := map[string]string{}
		for _, j := range d.TemplateJobReplacements {
			results[j.Job] = j.Result
		}
		want := map[string]string{"migrate": deployplan.JobPlanned, "seed": deployplan.JobPlanned, "report": deployplan.JobNotNeeded}
		for k, v := range want {
			if results[k] != v {
				t.Errorf("job %s: %q, want %q", k, results[k], v)
			}
		}
		hasApply := false
		for _, cmd := range d.ManualCommands {
			hasApply = hasApply || strings.Contains(cmd, "--apply")
		}
		if !hasApply {
			t.Errorf("ready plan has no apply command: %q", d.ManualCommands)
		}
		if len(d.ServicePlan) != 1 || d.ServicePlan[0].ServiceID != "api" {
			t.Errorf("servicePlan = %+v", d.ServicePlan)
		}
		if code, _, _ := s.cli(append([]string{"apply", "--dry-run", "--expect-blocked"}, base...)...); code == 0 {
			t.Error("--expect-blocked on a ready plan exits 0")
		}
		raw, _ := os.ReadFile(report)
		if bytes.Contains(raw, []byte("s3cr3t")) {
			t.Error("the report stores a Secret value")
		}
	})

	applyArgs := append([]string{"apply", "--apply", "--confirm-env=sample-dev", "--confirmed-non-production", "--timeout", "2m"}, base...)

	t.Run("refusals touch nothing", func(t *testing.T) {
		before := s.snapshot()
		prodReports := filepath.Join(s.dir, "prod-reports", "r.json")
		code, _, stderr := s.cli("apply", "--config", s.cfgPath, "--env", "sample-prod", "--apply", "--confirm-env=sample-prod", "--confirmed-non-production", "--write-report", prodReports)
		if code != 2 || !strings.Contains(stderr, "protected") {
			t.Errorf("protected apply = %d (%s), want 2 naming protected", code, stderr)
		}
		if code, _, _ := s.cli(append(applyArgs, "--force")...); code != 2 {
			t.Errorf("--force = %d, want 2", code)
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("a protected or forced apply changed the cluster:\nbefore %v\nafter  %v", before, after)
		}
		// Someone else holds the lock.
		holder, secs, now := "alice@ops-box pid 4242", int32(120), metav1.NewMicroTime(time.Now())
		if _, err := s.kube.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: deployplan.LockName},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		before = s.snapshot()
		code, _, stderr = s.cli(append(applyArgs, "--write-report", filepath.Join(s.reports, "locked.json"))...)
		if code != 2 || !strings.Contains(stderr, "alice@ops-box pid 4242") || !strings.Contains(stderr, "since") {
			t.Errorf("apply under a held lock = %d (%s), want 2 naming the holder and since when", code, stderr)
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("a refused apply changed the cluster:\nbefore %v\nafter  %v", before, after)
		}
		// A refused apply still writes the report it was asked for: refused, and why.
		if d := s.readReport(prodReports).DeployApply; d.Conclusion.Status != deployplan.StatusRefused || !strings.Contains(d.Conclusion.Summary, "protected") {
			t.Errorf("the protected refusal's report = %+v, want refused saying protected", d.Conclusion)
		}
		if d := s.readReport(filepath.Join(s.reports, "locked.json")).DeployApply; d.Conclusion.Status != deployplan.StatusRefused || !strings.Contains(d.Conclusion.Summary, "alice@ops-box") {
			t.Errorf("the lock refusal's report = %+v, want refused naming the holder", d.Conclusion)
		}
		if err := s.kube.CoordinationV1().Leases(ns).Delete(ctx, deployplan.LockName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("an apply of a stale plan is refused and touches nothing", func(t *testing.T) {
		// The ready plan above is `report`; the source moves after it.
		s.commitFiles("sample: a note", map[string]string{"NOTES.md": "moved on\n"})
		before := s.snapshot()
		stale := filepath.Join(s.reports, "stale-apply.json")
		code, _, stderr := s.cli(append(applyArgs, "--plan", report, "--write-report", stale)...)
		if code != 2 || !strings.Contains(stderr, deployplan.SourceMovedReason) {
			t.Errorf("apply --plan of a stale plan = %d (%s), want 2 saying %q", code, stderr, deployplan.SourceMovedReason)
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("a stale apply changed the cluster:\nbefore %v\nafter  %v", before, after)
		}
		if d := s.readReport(stale).DeployApply; d.Conclusion.Status != deployplan.StatusRefused || !strings.Contains(d.Conclusion.Summary, deployplan.SourceMovedReason) {
			t.Errorf("a stale apply's report = %+v, want refused saying the source moved", d.Conclusion)
		}
		// Plan again: the new plan is what the next apply applies.
		if code, _, _ := s.cli(append([]string{"apply", "--dry-run", "--write-report", report}, base...)...); code != 0 {
			t.Fatalf("re-plan = %d, want 0", code)
		}
	})

	// A Secret of the same name as the manifest's, created as kubectl apply
	// creates it: its last-applied annotation holds a value (the marker).
	// The apply captures it; no file may hold the marker.
	const marker = "kubectl-applied-marker-5e1d7b"
	lastApplied := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"api-secret","namespace":"sample-dev"},"stringData":{"marker":"` + marker + `"}}`
	if _, err := s.kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "api-secret", Labels: map[string]string{"app": "api"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": lastApplied}},
		StringData: map[string]string{"marker": marker},
	}, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}

	applyReport := filepath.Join(s.reports, "apply.json")
	t.Run("apply replaces the allowlisted Jobs only", func(t *testing.T) {
		oldJobs := map[string]*unstructured.Unstructured{}
		for _, j := range []string{"migrate", "seed", "report"} {
			oldJobs[j] = s.getJob(j)
		}
		code, _, _ := s.cli(append(applyArgs, "--plan", report, "--write-report", applyReport)...)
		if code != 0 {
			t.Fatalf("apply --plan of the ready plan = %d, want 0", code)
		}
		d := s.readReport(applyReport).DeployApply
		if d.Conclusion.Status != deployplan.StatusApplied {
			t.Fatalf("status = %q: %s", d.Conclusion.Status, d.Conclusion.Summary)
		}
		for _, j := range []string{"migrate", "seed"} {
			now := s.getJob(j)
			if now.GetUID() == oldJobs[j].GetUID() {
				t.Errorf("job %s keeps uid %s, want a new one", j, now.GetUID())
			}
			if got, want := jobImage(now), s.image(j, s.commit); got != want {
				t.Errorf("job %s image = %s, want %s", j, got, want)
			}
		}
		rep := s.getJob("report")
		if rep.GetUID() != oldJobs["report"].GetUID() || rep.GetResourceVersion() != oldJobs["report"].GetResourceVersion() {
			t.Errorf("the Job that is not allowlisted was touched")
		}
		got := map[string]deployplan.JobReplacement{}
		for _, j := range d.TemplateJobReplacements {
			got[j.Job] = j
		}
		if got["migrate"].Result != deployplan.JobReplaced || got["seed"].Result != deployplan.JobReplaced || got["migrate"].NewUID == "" {
			t.Errorf("replacements = %+v", d.TemplateJobReplacements)
		}
		if got["report"].Result != deployplan.JobNotNeeded || got["report"].Allowlisted {
			t.Errorf("report job = %+v, want not_needed and not allowlisted", got["report"])
		}
		for _, gvr := range []schema.GroupVersionResource{{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "services"}, {Group: "apps", Version: "v1", Resource: "deployments"}} {
			if _, err := s.dyn.Resource(gvr).Namespace(ns).Get(ctx, "api"+map[string]string{"configmaps": "-config"}[gvr.Resource], metav1.GetOptions{}); err != nil {
				t.Errorf("%s api: %v", gvr.Resource, err)
			}
		}
		capture := d.RollbackHint.PreApplyCapture
		idx, err := os.ReadFile(filepath.Join(capture, deployplan.CaptureIndexFile))
		if err != nil {
			t.Fatalf("no capture index: %v", err)
		}
		if !strings.Contains(string(idx), `"name":"migrate"`) {
			t.Errorf("capture index lacks the migrate Job:\n%s", idx)
		}
		matches, _ := filepath.Glob(filepath.Join(capture, "*-job-migrate.json"))
		if len(matches) != 1 {
			t.Fatalf("capture of job migrate: %v", matches)
		}
		b, _ := os.ReadFile(matches[0])
		if !strings.Contains(string(b), "oldoldo") {
			t.Errorf("capture of migrate lacks the old image:\n%s", b)
		}
		secretFiles, _ := filepath.Glob(filepath.Join(capture, "*-secret-api-secret.json"))
		if len(secretFiles) != 0 {
			t.Errorf("capture of the live Secret: %v, want none (a restore never writes Secrets)", secretFiles)
		}
		walked := 0
		filepath.Walk(s.reports, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				walked++
				b, _ := os.ReadFile(p)
				for _, v := range []string{"s3cr3t", marker, base64.StdEncoding.EncodeToString([]byte(marker)), "last-applied-configuration"} {
					if bytes.Contains(b, []byte(v)) {
						t.Errorf("%s stores a Secret value (%q)", p, v)
					}
				}
			}
			return nil
		})
		if walked < 4 {
			t.Errorf("walked %d files under %s, want the reports and the capture", walked, s.reports)
		}
		if _, err := s.kube.CoordinationV1().Leases(ns).Get(ctx, deployplan.LockName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the lock is still there after the apply: %v", err)
		}
		// A restore of this capture would replace the two Jobs back to
		// their old images, as an apply replaces template Jobs.
		rp := filepath.Join(s.dir, "restore-plan", "r.json")
		if code, _, _ := s.cli(append([]string{"restore", "--dry-run", "--capture", capture, "--write-report", rp}, base...)...); code != 0 {
			t.Errorf("restore --dry-run of the capture = %d, want 0", code)
		}
		rd := s.readReport(rp).DeployApply
		restoreJobs := map[string]deployplan.JobReplacement{}
		for _, j := range rd.TemplateJobReplacements {
			restoreJobs[j.Job] = j
		}
		for _, j := range []string{"migrate", "seed"} {
			if r := restoreJobs[j]; r.Result != deployplan.JobPlanned || !strings.Contains(r.NewImage, "oldoldo") {
				t.Errorf("restore plan of Job %s = %+v, want planned back to the old image", j, r)
			}
		}
		if r := restoreJobs["report"]; r.Result != deployplan.JobNotNeeded {
			t.Errorf("restore plan of Job report = %+v, want not_needed", r)
		}
	})

	t.Run("a second apply changes nothing", func(t *testing.T) {
		s.waitDeploymentHealthy("api")
		before := s.snapshot()
		second := filepath.Join(s.reports, "apply2.json")
		if code, _, _ := s.cli(append(applyArgs, "--write-report", second)...); code != 0 {
			t.Fatalf("second apply = %d, want 0", code)
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the second apply changed the cluster:\nbefore %v\nafter  %v", before, after)
		}
		d := s.readReport(second).DeployApply
		for _, o := range d.Objects {
			if o.Result != "unchanged" {
				t.Errorf("%s/%s: result %q, want unchanged", o.Kind, o.Name, o.Result)
			}
		}
		for _, j := range d.TemplateJobReplacements {
			if j.Result != deployplan.JobNotNeeded {
				t.Errorf("job %s: %q, want not_needed", j.Job, j.Result)
			}
		}
	})

	t.Run("a stalled apply whose lock was taken over stops and never deletes the new holder's lock", func(t *testing.T) {
		cfg, err := envconfig.LoadConfig(s.cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		env, _ := cfg.Env("sample-dev")
		req := deployplan.ApplyRequest{Env: env.Name, ConfirmEnv: env.Name, ConfirmedNonProduction: true}
		// stallAt returns a BeforeWrite hook that stalls the first write
		// until resume is closed, telling stalled what it was about to do.
		stallAt := func(stalled chan<- string, resume <-chan struct{}) func(context.Context, string) {
			var once sync.Once
			return func(_ context.Context, what string) {
				once.Do(func() { stalled <- what; <-resume })
			}
		}
		type result struct {
			rep *deployplan.Report
			err error
		}
		holderNow := func() string {
			l, err := s.kube.CoordinationV1().Leases(ns).Get(ctx, deployplan.LockName, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("read the lock: %v", err)
			}
			return *l.Spec.HolderIdentity
		}

		aStalled, aResume, aDone := make(chan string, 1), make(chan struct{}), make(chan result, 1)
		aReport := filepath.Join(s.reports, "stalled-a.json")
		go func() {
			rep, err := deployplan.Apply(ctx, env, deployplan.ApplyOptions{Request: req, ReportPath: aReport, Timeout: 2 * time.Minute,
				Holder: "apply-a", LockDuration: 10 * time.Minute, BeforeWrite: stallAt(aStalled, aResume)})
			aDone <- result{rep, err}
		}()
		t.Logf("apply A stalled before %s", <-aStalled)
		holderA := holderNow()
		if !strings.HasPrefix(holderA, "apply-a [apply ") {
			t.Fatalf("lock holder = %q, want apply A's unique id", holderA)
		}
		aBefore, err := os.ReadFile(aReport)
		if err != nil {
			t.Fatalf("apply A wrote no report before its first write: %v", err)
		}

		// B starts after A's lock expired (B's clock is 30 minutes on).
		bStalled, bResume, bDone := make(chan string, 1), make(chan struct{}), make(chan result, 1)
		bReport := filepath.Join(s.reports, "takeover-b.json")
		go func() {
			rep, err := deployplan.Apply(ctx, env, deployplan.ApplyOptions{Options: deployplan.Options{Now: func() time.Time { return time.Now().Add(30 * time.Minute) }},
				Request: req, ReportPath: bReport, Timeout: 2 * time.Minute, Holder: "apply-b", BeforeWrite: stallAt(bStalled, bResume)})
			bDone <- result{rep, err}
		}()
		select {
		case what := <-bStalled:
			t.Logf("apply B took the lock over and stalled before %s", what)
		case r := <-bDone:
			close(aResume)
			t.Fatalf("apply B did not take over the expired lock: %v, %v", r.rep, r.err)
		}
		holderB := holderNow()
		if !strings.HasPrefix(holderB, "apply-b [apply ") {
			t.Fatalf("lock holder after the takeover = %q, want apply B", holderB)
		}

		// A resumes: it must stop before writing, with a clear error, and
		// leave B's lock alone.
		close(aResume)
		a := <-aDone
		var lost *deployplan.LockLostError
		if !errors.As(a.err, &lost) || a.rep != nil || lost.Now != holderB || lost.Holder != holderA {
			status := "no report"
			if a.rep != nil {
				status = a.rep.Status() + ": " + a.rep.DeployApply.Conclusion.Summary
			}
			t.Fatalf("apply A after the takeover = %s, %v; want no report and a LockLostError naming %q", status, a.err, holderB)
		}
		if !strings.Contains(a.err.Error(), "lost the lock") {
			t.Errorf("apply A's error = %q, want it to say it lost the lock", a.err)
		}
		if got := holderNow(); got != holderB {
			t.Errorf("after apply A stopped the lock is held by %q, want apply B's %q", got, holderB)
		}
		if aAfter, _ := os.ReadFile(aReport); !bytes.Equal(aAfter, aBefore) {
			t.Errorf("apply A wrote its report after it lost the lock")
		}

		close(bResume)
		b := <-bDone
		if b.err != nil || b.rep.Status() != deployplan.StatusApplied {
			t.Fatalf("apply B = %v; want applied", b.err)
		}
		if _, err := s.kube.CoordinationV1().Leases(ns).Get(ctx, deployplan.LockName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("apply B's lock is still there after it finished: %v", err)
		}
	})

	t.Run("a Job not allowlisted whose image changes blocks the plan", func(t *testing.T) {
		jobs := jobYAML("migrate", s.image("migrate", s.commit)) + "---\n" + jobYAML("seed", s.image("seed", s.commit)) + "---\n" + jobYAML("report", s.image("seed", s.commit))
		s.commitFiles("sample: the report job runs another image", map[string]string{"deploy/dev/jobs.yaml": jobs})
		before := s.snapshot()
		blocked := filepath.Join(s.reports, "not-allowlisted.json")
		if code, _, _ := s.cli(append([]string{"apply", "--dry-run", "--write-report", blocked}, base...)...); code != 3 {
			t.Errorf("plan = %d, want 3", code)
		}
		d := s.readReport(blocked).DeployApply
		if len(d.RemainingBlockers) != 1 || d.RemainingBlockers[0].ID != "job-not-allowlisted" || !slices.Equal(d.RemainingBlockers[0].Affected, []string{"Job/report"}) {
			t.Errorf("blockers = %+v, want job-not-allowlisted (Job/report)", d.RemainingBlockers)
		}
		if code, _, stderr := s.cli(append(applyArgs, "--write-report", blocked)...); code != 2 || !strings.Contains(stderr, "blocked") {
			t.Errorf("apply of a blocked plan = %d, want 2", code)
		}
		if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("a blocked apply changed the cluster")
		}
	})

	t.Run("kill -9 mid-apply leaves the capture and no success", func(t *testing.T) {
		// A Deployment that can never schedule keeps the apply waiting for health.
		f := s.manifests("      nodeSelector: {no-such-node: \"true\"}\n")
		s.commitFiles("sample: unschedulable api", f)
		bin := filepath.Join(s.dir, "deploy-web")
		if out, err := exec.Command("go", "build", "-tags", buildtags.Tags, "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		killed := filepath.Join(s.reports, "killed.json")
		cmd := exec.Command(bin, append(applyArgs, "--write-report", killed)...)
		stderr, _ := cmd.StderrPipe()
		cmd.Stdout = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stderr)
		seen := false
		timer := time.AfterFunc(3*time.Minute, func() { cmd.Process.Kill() })
		defer timer.Stop()
		for sc.Scan() {
			t.Logf("child: %s", sc.Text())
			if strings.Contains(sc.Text(), "waiting for workload health") {
				seen = true
				break
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		go io.Copy(io.Discard, stderr)
		cmd.Wait()
		if !seen {
			t.Fatal("the child never reached the health wait")
		}
		d := s.readReport(killed).DeployApply
		if d.Conclusion.Status == deployplan.StatusApplied {
			t.Errorf("a killed apply's report claims success: %+v", d.Conclusion)
		}
		if !strings.Contains(d.Conclusion.Summary, "has not finished") {
			t.Errorf("summary = %q, want it to say the apply has not finished", d.Conclusion.Summary)
		}
		if _, err := os.Stat(filepath.Join(d.RollbackHint.PreApplyCapture, deployplan.CaptureIndexFile)); err != nil {
			t.Errorf("no capture after kill -9: %v", err)
		}
		// The dead apply's lock is still held until it expires: a new apply is refused, naming it.
		code, _, stderr2 := s.cli(append(applyArgs, "--write-report", filepath.Join(s.reports, "after-kill.json"))...)
		if code != 2 || !strings.Contains(stderr2, fmt.Sprintf("pid %d", cmd.Process.Pid)) {
			t.Errorf("apply after kill -9 = %d (%s), want 2 naming pid %d", code, stderr2, cmd.Process.Pid)
		}
	})
}
