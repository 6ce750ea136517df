package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/objrules"
)

// replayNS is the namespace of the replay's environment.
const replayNS = "svc-dev"

// replayManifests is a typical service: a Deployment with a semver-tagged
// image and an env var, its HPA and Service, a Secret from stringData, a
// third-party image pinned by digest, and a ConfigMap that a later
// version drops (the orphan).
func replayManifests(image, logLevel, redis string, withOld bool) map[string]string {
	res := "  - app.yaml\n  - redis.yaml\n"
	files := map[string]string{}
	if withOld {
		res += "  - old.yaml\n"
		files["deploy/dev/old.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old-config}\ndata: {K: v1}\n"
	}
	files["deploy/dev/kustomization.yaml"] = "namespace: " + replayNS + "\nresources:\n" + res
	files["deploy/dev/app.yaml"] = fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: podinfo-token}
stringData: {token: t0ken-value-never-printed}
---
apiVersion: v1
kind: Service
metadata: {name: podinfo}
spec:
  selector: {app: podinfo}
  ports: [{name: http, port: 80, targetPort: 9898}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: podinfo}
spec:
  selector: {matchLabels: {app: podinfo}}
  template:
    metadata: {labels: {app: podinfo}}
    spec:
      containers:
        - name: podinfo
          image: %s
          env: [{name: PODINFO_LOG_LEVEL, value: %s}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: podinfo}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: podinfo}
  minReplicas: 2
  maxReplicas: 4
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]
`, image, logLevel)
	files["deploy/dev/redis.yaml"] = fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: redis}
spec:
  selector: {matchLabels: {app: redis}}
  template:
    metadata: {labels: {app: redis}}
    spec:
      containers: [{name: redis, image: %q}]
`, redis)
	return files
}

// TestReplayTrialOnRealCluster replays issue 27's trial on a service of
// the project's own shape, through the command line on a real control
// plane: plan, apply, a change (tag and env var), hand edits (a Secret
// patched by another field manager, kubectl scale through the scale
// subresource, a Service made a LoadBalancer and put back), an ownership
// move (kubectl rollout undo), an orphan, prune and restore. At each step
// the plan's action of every object is what the apply then records
// (update -> configured, unchanged -> unchanged), and the messages say
// what happened.
func TestReplayTrialOnRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: needs the local control plane")
	}
	c := devcluster.ForTest(t, devcluster.Options{})
	s := newSample(t)
	s.kube = kubernetes.NewForConfigOrDie(c.Config)
	s.dyn = dynamic.NewForConfigOrDie(c.Config)
	s.meta = metadata.NewForConfigOrDie(c.Config)
	ctx := context.Background()

	push := func(ref string) string {
		t.Helper()
		img, err := random.Image(128, 1)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := name.ParseReference(ref)
		if err := remote.Write(r, img); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		return d.String()
	}
	podinfo := func(tag string) string { return s.registry + "/stefanprodan/podinfo:" + tag }
	d650, d651 := push(podinfo("6.5.0")), push(podinfo("6.5.1"))
	redis := s.registry + "/library/redis:7.4@" + push(s.registry+"/library/redis:7.4")
	catalog := func(tag, digest string) string {
		return fmt.Sprintf(`{"mode": "version", "services": [{"id": "podinfo", "image": %q, "tag": %q, "digest": %q, "published": true}],
 "thirdParty": [{"image": %q}]}`, s.registry+"/stefanprodan/podinfo", tag, digest, redis)
	}
	version := func(msg, tag, digest, level string, withOld bool) {
		files := replayManifests(podinfo(tag), level, redis, withOld)
		files["catalog.json"] = catalog(tag, digest)
		s.commitFiles(msg, files)
	}
	cfg := fmt.Sprintf(`environments:
  - name: svc-dev
    cluster: {context: devcluster, kubeconfig: %q}
    namespace: %s
    source: {repo: "file://%s", ref: master, path: deploy/dev}
    catalog: catalog.json
    registry: {hosts: [%q]}
`, c.Kubeconfig, replayNS, s.repoDir, s.registry)
	s.cfgPath = filepath.Join(s.dir, "deploy.yaml")
	if err := os.WriteFile(s.cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--config", s.cfgPath, "--env", "svc-dev"}
	step := 0
	// plan writes a plan report and returns it with the summary printed.
	plan := func(wantCode int) (*deployplan.DeployApply, string) {
		t.Helper()
		step++
		p := filepath.Join(s.reports, fmt.Sprintf("plan-%02d.json", step))
		code, out, _ := s.cli(append([]string{"apply", "--dry-run", "--write-report", p}, base...)...)
		if code != wantCode {
			t.Fatalf("plan %d = %d, want %d", step, code, wantCode)
		}
		return &s.readReport(p).DeployApply, out
	}
	// apply applies the plan just made and checks that every object's
	// result is the plan's action: the one comparison decides both.
	apply := func(planned *deployplan.DeployApply, extra ...string) (*deployplan.DeployApply, string, string) {
		t.Helper()
		step++
		p := filepath.Join(s.reports, fmt.Sprintf("apply-%02d.json", step))
		args := append(append([]string{"apply", "--apply", "--confirm-env=svc-dev", "--confirmed-non-production", "--timeout", "3m", "--write-report", p}, extra...), base...)
		code, out, _ := s.cli(args...)
		if code != 0 {
			t.Fatalf("apply %d = %d, want 0", step, code)
		}
		d := &s.readReport(p).DeployApply
		want := map[string]string{deployplan.ActionCreate: "created", deployplan.ActionUpdate: "configured", deployplan.ActionUnchanged: "unchanged"}
		for _, po := range planned.Objects {
			for _, ao := range d.Objects {
				if ao.Kind == po.Kind && ao.Name == po.Name && ao.Result != want[po.Action] {
					t.Errorf("step %d: %s/%s planned %q but the apply recorded %q", step, po.Kind, po.Name, po.Action, ao.Result)
				}
			}
		}
		return d, out, p
	}
	obj := func(d *deployplan.DeployApply, kind, name string) deployplan.ObjectPlan {
		t.Helper()
		for _, o := range d.Objects {
			if o.Kind == kind && o.Name == name {
				return o
			}
		}
		t.Fatalf("no %s/%s in the report", kind, name)
		return deployplan.ObjectPlan{}
	}
	unchanged := func(what string, d *deployplan.DeployApply) {
		t.Helper()
		for _, o := range d.Objects {
			if o.Action != deployplan.ActionUnchanged {
				t.Errorf("%s: %s/%s plans %q, want unchanged (changes %+v)", what, o.Kind, o.Name, o.Action, o.Changes)
			}
		}
	}
	kubectl := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, c.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig, "-n", replayNS}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
	}
	healthy := func(name string) {
		t.Helper()
		waitFor(t, "Deployment "+name+" to be healthy", func() bool {
			dep, err := s.kube.AppsV1().Deployments(replayNS).Get(ctx, name, metav1.GetOptions{})
			return err == nil && objrules.DeploymentHealth(dep).Status == objrules.HealthHealthy
		})
	}

	version("v1: podinfo 6.5.0", "6.5.0", d650, "info", true)

	// 1. The namespace does not exist yet: one blocker, its root cause.
	d, _ := plan(3)
	if len(d.RemainingBlockers) != 1 || d.RemainingBlockers[0].ID != "namespace-missing" || len(d.RemainingBlockers[0].Affected) != len(d.Objects) {
		t.Errorf("plan without the namespace: blockers %+v, want only namespace-missing naming all %d objects", d.RemainingBlockers, len(d.Objects))
	}
	if _, err := s.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: replayNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// 2. First apply: everything is created; its capture holds no file,
	// so nothing offers kubectl apply -f of it; the next plan does not go
	// over the apply's report.
	d, _ = plan(0)
	got, out, applyReport := apply(d)
	capDir := got.RollbackHint.PreApplyCapture
	readme, err := os.ReadFile(filepath.Join(capDir, deployplan.CaptureReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(readme), "apply --server-side") || !strings.Contains(string(readme), "Nothing to re-apply") {
		t.Errorf("RESTORE.txt of a first apply offers a kubectl apply of no file:\n%s", readme)
	}
	for _, c := range got.RollbackHint.DeploymentRollbacks {
		if strings.Contains(c, "apply --server-side") {
			t.Errorf("rollback hint of a first apply: %q", c)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "next:") && strings.Contains(line, "--write-report "+applyReport) {
			t.Errorf("a next: hint writes over the apply's report: %q", line)
		}
	}
	healthy("podinfo")
	healthy("redis")
	// The HPA scales podinfo to its minimum through the scale subresource.
	waitFor(t, "the HPA to scale podinfo to 2", func() bool {
		dep, err := s.kube.AppsV1().Deployments(replayNS).Get(ctx, "podinfo", metav1.GetOptions{})
		return err == nil && dep.Spec.Replicas != nil && *dep.Spec.Replicas == 2
	})

	// 3. Nothing changed: the plan converges at once, the HPA's scaling is
	// no drift, and the apply agrees.
	d, _ = plan(0)
	unchanged("re-plan after the first apply", d)
	if dr := obj(d, "Deployment", "podinfo").Drift; len(dr) != 0 {
		t.Errorf("the HPA's scaling reads as drift: %+v", dr)
	}
	apply(d)

	// 4. A tag and an env var change: the plan shows before and after.
	version("v2: podinfo 6.5.1, debug logs", "6.5.1", d651, "debug", true)
	d, out = plan(0)
	o := obj(d, "Deployment", "podinfo")
	wantChanges := map[string][2]string{
		"spec.template.spec.containers[name=podinfo].image":                             {podinfo("6.5.0"), podinfo("6.5.1")},
		"spec.template.spec.containers[name=podinfo].env[name=PODINFO_LOG_LEVEL].value": {"info", "debug"},
	}
	for _, ch := range o.Changes {
		if w, ok := wantChanges[ch.Path]; ok {
			if ch.Old != w[0] || ch.New != w[1] {
				t.Errorf("change %s: %q -> %q, want %q -> %q", ch.Path, ch.Old, ch.New, w[0], w[1])
			}
			delete(wantChanges, ch.Path)
		}
	}
	if o.Action != deployplan.ActionUpdate || len(wantChanges) != 0 {
		t.Errorf("Deployment podinfo: %q with changes %+v; missing %v", o.Action, o.Changes, wantChanges)
	}
	if !strings.Contains(out, podinfo("6.5.0")+" -> "+podinfo("6.5.1")) || !strings.Contains(out, "PODINFO_LOG_LEVEL].value: info -> debug") {
		t.Errorf("the summary does not show before and after:\n%s", out)
	}
	apply(d)
	healthy("podinfo")

	// 5. A hand edit of the Secret by another field manager: the plan says
	// who wrote it (never the value), the apply writes it back, and the
	// next plan has settled.
	// (Planned at once: within the second of the edit too.)
	kubectl("patch", "secret", "podinfo-token", "-p", `{"stringData":{"token":"x"}}`)
	d, out = plan(0)
	sec := obj(d, "Secret", "podinfo-token")
	if sec.Action != deployplan.ActionUpdate || len(sec.Changes) != 1 || !strings.Contains(sec.Changes[0].Old, "kubectl-patch") {
		t.Errorf("Secret after kubectl patch: %q, changes %+v; want update naming kubectl-patch", sec.Action, sec.Changes)
	}
	if strings.Contains(out, "t0ken-value") || strings.Contains(out, `"x"`) {
		t.Errorf("the summary carries a Secret value:\n%s", out)
	}
	apply(d)
	d, _ = plan(0)
	unchanged("re-plan after the Secret was written back", d)
	apply(d)

	// 6. kubectl scale through the scale subresource of a Deployment no
	// HPA scales is drift, though the API server records no manager; a
	// Service made a LoadBalancer and put back leaves no stale field.
	kubectl("scale", "deployment/redis", "--replicas=2")
	kubectl("patch", "service", "podinfo", "-p", `{"spec":{"type":"LoadBalancer"}}`)
	kubectl("patch", "service", "podinfo", "-p", `{"spec":{"type":"ClusterIP"}}`)
	d, _ = plan(0)
	rd := obj(d, "Deployment", "redis").Drift
	if len(rd) != 1 || rd[0].Path != "spec.replicas" || rd[0].Live != "2" || rd[0].Manager != objrules.UnrecordedScaleManager {
		t.Errorf("redis after kubectl scale: drift %+v, want spec.replicas = 2 with no manager recorded", rd)
	}
	for _, f := range obj(d, "Service", "podinfo").Drift {
		if strings.Contains(f.Path, "allocateLoadBalancerNodePorts") || strings.Contains(f.Path, "nodePort") {
			t.Errorf("Service put back still reports %s", f.Path)
		}
	}
	kubectl("scale", "deployment/redis", "--replicas=1")

	// 7. kubectl rollout undo takes the image and env var to another
	// manager (kubectl): the conflict names them and what to run.
	kubectl("rollout", "undo", "deployment/podinfo")
	d, _ = plan(3)
	var conflict *deployplan.Blocker
	for i, b := range d.RemainingBlockers {
		if strings.HasPrefix(b.ID, "field-conflict") {
			conflict = &d.RemainingBlockers[i]
		}
	}
	if conflict == nil || !strings.Contains(conflict.Message, `.spec.template.spec.containers[name="podinfo"].image owned by kubectl (update)`) ||
		!strings.Contains(conflict.UnblockHint, "--field-manager=deploy-web --force-conflicts") {
		t.Errorf("after rollout undo: blockers %+v, want a field conflict naming the image, kubectl (rollout undo's manager) and the command", d.RemainingBlockers)
	}
	// Undo again: the values are the rendered ones, but kubectl owns
	// them. The plan says the apply takes ownership back (update),
	// the apply records configured, and then it has settled.
	kubectl("rollout", "undo", "deployment/podinfo")
	healthy("podinfo")
	d, _ = plan(0)
	o = obj(d, "Deployment", "podinfo")
	owns := false
	for _, ch := range o.Changes {
		owns = owns || (strings.HasPrefix(ch.Path, "managedFields[deploy-web") && strings.Contains(ch.New, "env[name=PODINFO_LOG_LEVEL].value"))
	}
	if o.Action != deployplan.ActionUpdate || !owns {
		t.Errorf("after the ownership move: podinfo %q, changes %+v; want update taking the fields back", o.Action, o.Changes)
	}
	apply(d)
	d, _ = plan(0)
	unchanged("re-plan after the ownership move", d)

	// 8. v3 drops the ConfigMap: an orphan, counted in the headline;
	// prune deletes it.
	version("v3: old-config goes", "6.5.1", d651, "debug", false)
	d, out = plan(0)
	if len(d.Orphans) != 1 || !strings.Contains(d.Conclusion.Summary, "1 orphan(s)") || !strings.Contains(out, "orphans: 1") {
		t.Errorf("orphan: %+v, summary %q; want one, counted in the headline", d.Orphans, d.Conclusion.Summary)
	}
	got, _, _ = apply(d, "--prune")
	if len(got.Orphans) != 1 || got.Orphans[0].Result != deployplan.OrphanDeleted {
		t.Errorf("prune: orphans %+v, want old-config deleted", got.Orphans)
	}
	pruneCapture := got.RollbackHint.PreApplyCapture

	// 9. Restore the capture of the prune: old-config is back, and the
	// restore's next: hints plan again instead of repeating the restore.
	restoreReport := filepath.Join(s.reports, "restore.json")
	code, out, _ := s.cli(append([]string{"restore", "--capture", pruneCapture, "--confirm-env=svc-dev", "--confirmed-non-production", "--timeout", "2m", "--write-report", restoreReport}, base...)...)
	if code != 0 {
		t.Fatalf("restore = %d, want 0", code)
	}
	if _, err := s.kube.CoreV1().ConfigMaps(replayNS).Get(ctx, "old-config", metav1.GetOptions{}); err != nil {
		t.Errorf("old-config after the restore: %v", err)
	}
	for _, c := range s.readReport(restoreReport).DeployApply.ManualCommands {
		if strings.Contains(c, "restore") || strings.Contains(c, "--write-report "+restoreReport) {
			t.Errorf("after a restore, next: %q (repeats the restore or writes over its report)", c)
		}
	}
	if !strings.Contains(out, "next: deploy-web apply") {
		t.Errorf("the restore's summary offers no plan next:\n%s", out)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
