package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/operator"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/release"
)

// The example overlay's names.
const (
	overlay     = "overlays/example"
	ownNS       = "deploy-web"
	saName      = "deploy-web"
	environment = "staging"
)

var (
	platformNS = []string{"storefront", "payments"}
	sa         = "system:serviceaccount:" + ownNS + ":" + saName
)

// installed is the example overlay applied to a fresh control plane, with
// the App CRD and the platform and environment namespaces.
type installed struct {
	c       *devcluster.Cluster
	admin   kubernetes.Interface
	adminDy dynamic.Interface
}

func (in *installed) kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(in.c.Kubectl, append([]string{"--kubeconfig", in.c.Kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// install starts the control plane and applies the overlay: first a
// server-side dry-run (which must change nothing), then for real.
func install(t *testing.T) *installed {
	t.Helper()
	c := devcluster.ForTest(t, devcluster.Options{})
	in := &installed{c: c, admin: kubernetes.NewForConfigOrDie(c.Config), adminDy: dynamic.NewForConfigOrDie(c.Config)}
	ctx := t.Context()
	if err := operator.InstallCRD(ctx, apiextensionsclient.NewForConfigOrDie(c.Config)); err != nil {
		t.Fatal(err)
	}
	// The platform and environment namespaces are the platform's, not
	// deploy-web's; deploy-web's own namespace is created like docs/install.md
	// says, so that the server-side dry-run can check what goes into it.
	for _, ns := range append(slices.Clone(platformNS), environment, ownNS) {
		if _, err := in.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := in.kubectl(t, "apply", "--server-side", "--dry-run=server", "-k", overlay); err != nil {
		t.Fatalf("kubectl apply --server-side --dry-run=server -k %s: %v\n%s", overlay, err, out)
	}
	if _, err := in.admin.CoreV1().ServiceAccounts(ownNS).Get(ctx, saName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after the dry-run, get serviceaccount %s = %v, want not found (a dry-run creates nothing)", saName, err)
	}
	out, err := in.kubectl(t, "apply", "--server-side", "-k", overlay)
	if err != nil {
		t.Fatalf("kubectl apply --server-side -k %s: %v\n%s", overlay, err, out)
	}
	t.Logf("kubectl apply --server-side -k %s:\n%s", overlay, out)
	// The Deployment is admitted as written (probes, security context).
	dep, err := in.admin.AppsV1().Deployments(ownNS).Get(ctx, "deploy-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *dep.Spec.Replicas != 2 {
		t.Errorf("replicas = %d, want 2", *dep.Spec.Replicas)
	}
	ctr := dep.Spec.Template.Spec.Containers[0]
	if sc := ctr.SecurityContext; sc == nil || !*sc.ReadOnlyRootFilesystem || !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container securityContext = %+v, want read-only root, non-root, no escalation, all capabilities dropped", ctr.SecurityContext)
	}
	if ctr.ReadinessProbe == nil || ctr.ReadinessProbe.HTTPGet.Path != "/readyz" || ctr.LivenessProbe == nil || ctr.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes = %+v / %+v, want readiness /readyz and liveness /healthz", ctr.ReadinessProbe, ctr.LivenessProbe)
	}
	if ctr.Resources.Limits.Memory().IsZero() || ctr.Resources.Requests.Cpu().IsZero() {
		t.Errorf("resources = %+v, want requests and limits", ctr.Resources)
	}
	return in
}

// canI asks the apiserver (SubjectAccessReview through kubectl auth can-i
// --as) whether the service account may do verb on resource in ns ("" for
// every namespace). resource is "pods", "leases/NAME" (one object) or
// "pods:log" (a subresource).
func (in *installed) canI(t *testing.T, verb, resource, ns string) bool {
	t.Helper()
	args := []string{"auth", "can-i", verb}
	if res, sub, ok := strings.Cut(resource, ":"); ok {
		args = append(args, res, "--subresource="+sub)
	} else {
		args = append(args, resource) // "resource" or "resource/name"
	}
	args = append(args, "--as="+sa)
	if ns == "" {
		args = append(args, "--all-namespaces")
	} else {
		args = append(args, "-n", ns)
	}
	out, err := in.kubectl(t, args...)
	switch strings.TrimSpace(out) {
	case "yes":
		return true
	case "no":
		return false
	}
	t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	return false
}

// registryResources is the kind registry as RBAC resources ("deployments.apps").
func registryResources() []string {
	var out []string
	for _, k := range kubeview.Kinds() {
		r := k.Resource
		if k.Group != "" {
			r += "." + k.Group
		}
		out = append(out, r)
	}
	return out
}

// applyResources are the kinds the plan engine renders and applies.
var applyResources = []string{
	"deployments.apps", "statefulsets.apps", "daemonsets.apps", "services", "configmaps", "serviceaccounts",
	"persistentvolumeclaims", "ingresses.networking.k8s.io", "horizontalpodautoscalers.autoscaling",
	"poddisruptionbudgets.policy", "jobs.batch", "cronjobs.batch", "apps.hanzo.ai",
}

// TestServiceAccountRights checks the installed RBAC with SubjectAccessReview:
// everything the features need is allowed, Secrets are denied everywhere,
// workloads cannot be written in the platform namespaces, and nothing is
// granted outside the platform and environment namespaces.
func TestServiceAccountRights(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	in := install(t)

	type check struct {
		verb, resource, ns string
		want               bool
	}
	var checks []check
	allow := func(verbs []string, resources []string, namespaces ...string) {
		for _, ns := range namespaces {
			for _, r := range resources {
				for _, v := range verbs {
					checks = append(checks, check{v, r, ns, true})
				}
			}
		}
	}
	deny := func(verbs []string, resources []string, namespaces ...string) {
		for _, ns := range namespaces {
			for _, r := range resources {
				for _, v := range verbs {
					checks = append(checks, check{v, r, ns, false})
				}
			}
		}
	}
	read := []string{"get", "list", "watch"}
	writes := []string{"create", "update", "patch", "delete", "deletecollection"}
	everywhere := append(slices.Clone(platformNS), environment, ownNS, "kube-system", "default", "")

	// Needed: the caches, logs, rollback and sync, audit Events.
	allow(read, append(registryResources(), "events", "apps.hanzo.ai"), platformNS...)
	allow([]string{"get"}, []string{"pods:log"}, platformNS...)
	allow([]string{"patch"}, []string{"apps.hanzo.ai"}, platformNS...)
	allow([]string{"create"}, []string{"events"}, platformNS...)
	for _, ns := range append(slices.Clone(platformNS), environment) {
		checks = append(checks, check{"get", "namespaces/" + ns, "", true})
	}
	// Needed by the plan / apply engine, in the environment's namespace.
	allow(append(slices.Clone(read), "create", "patch"), applyResources, environment)
	allow([]string{"delete"}, []string{"jobs.batch"}, environment)
	allow([]string{"create"}, []string{"leases.coordination.k8s.io"}, environment)
	allow([]string{"get", "update", "delete"}, []string{"leases.coordination.k8s.io/deploy-web-apply"}, environment)

	// Never: Secrets, anywhere, by any verb, but get of the one Secret of
	// notification credentials, by name.
	deny(append(slices.Clone(read), writes...), []string{"secrets"}, everywhere...)
	allow([]string{"get"}, []string{"secrets/deploy-web-notify"}, ownNS)
	deny(append([]string{"list", "watch"}, writes...), []string{"secrets/deploy-web-notify"}, ownNS)
	deny([]string{"get"}, []string{"secrets/deploy-web-notify"}, append(slices.Clone(platformNS), environment, "kube-system", "default")...)
	deny([]string{"get"}, []string{"secrets/deploy-web-session"}, ownNS)
	// The notification sender's Lease.
	allow([]string{"get", "update", "watch"}, []string{"leases.coordination.k8s.io/deploy-web-notify"}, ownNS)
	// No workload writes in the platform namespaces (the operator does
	// them); Apps are only patched there, never created, replaced or deleted.
	deny(writes, []string{"deployments.apps", "replicasets.apps", "pods", "services", "configmaps", "jobs.batch"}, platformNS...)
	deny(writes, []string{"deployments.apps", "replicasets.apps", "pods", "services", "jobs.batch"}, ownNS)
	// In its own namespace, only the plan history and audit ConfigMaps
	// (stream heads are updated, the index watches), the records' Events
	// and the audit retention Lease.
	allow([]string{"get", "list", "watch", "create", "update", "delete"}, []string{"configmaps"}, ownNS)
	deny([]string{"patch", "deletecollection"}, []string{"configmaps"}, ownNS)
	allow([]string{"create"}, []string{"events", "leases.coordination.k8s.io"}, ownNS)
	allow([]string{"get", "update", "watch"}, []string{"leases.coordination.k8s.io/deploy-web-audit-retention"}, ownNS)
	allow([]string{"get", "update", "watch"}, []string{"leases.coordination.k8s.io/deploy-web-timeline"}, ownNS)
	deny([]string{"get", "update", "delete"}, []string{"leases.coordination.k8s.io/some-other-lease"}, ownNS)
	deny([]string{"delete", "patch"}, []string{"leases.coordination.k8s.io/deploy-web-audit-retention"}, ownNS)
	deny([]string{"create", "update", "delete"}, []string{"apps.hanzo.ai"}, platformNS...)
	deny([]string{"create"}, []string{"pods:exec", "pods:portforward", "pods:attach", "serviceaccounts:token"}, everywhere...)
	deny([]string{"create", "update", "patch"}, []string{"leases.coordination.k8s.io"}, platformNS...)
	deny([]string{"update", "delete"}, []string{"leases.coordination.k8s.io/some-other-lease"}, environment)
	// Nothing outside the platform and environment namespaces, nor
	// cluster-wide, nor in its own namespace beyond the history.
	deny(read, append(registryResources(), "events", "apps.hanzo.ai"), "kube-system", "default", "")
	deny(read, slices.DeleteFunc(append(registryResources(), "events", "apps.hanzo.ai"), func(r string) bool { return r == "configmaps" }), ownNS)
	deny([]string{"list", "watch"}, []string{"namespaces"}, "")
	checks = append(checks, check{"get", "namespaces/kube-system", "", false}, check{"get", "namespaces/" + ownNS, "", false})
	deny([]string{"create", "update", "patch", "escalate", "bind"}, []string{"roles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io"}, everywhere...)
	deny([]string{"impersonate"}, []string{"users", "groups", "serviceaccounts"}, "")

	for _, c := range checks {
		if got := in.canI(t, c.verb, c.resource, c.ns); got != c.want {
			where := "in namespace " + c.ns
			if c.ns == "" {
				where = "cluster-wide"
			}
			t.Errorf("%s can %s %s %s = %v, want %v", sa, c.verb, c.resource, where, got, c.want)
		}
	}
	t.Logf("%d access checks", len(checks))
}

// saConfig mints a token for the service account (TokenRequest) and returns
// a client config that uses it instead of the admin's credentials.
func (in *installed) saConfig(t *testing.T) *rest.Config {
	t.Helper()
	exp := int64(3600)
	tr, err := in.admin.CoreV1().ServiceAccounts(ownNS).CreateToken(t.Context(), saName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(in.c.Config)
	cfg.BearerToken = tr.Status.Token
	cfg.UserAgent = "deploy-web-rbac-test"
	return cfg
}

// lockedLog collects log lines.
type lockedLog struct {
	ch chan struct{}
	b  bytes.Buffer
}

func newLockedLog() *lockedLog { return &lockedLog{ch: make(chan struct{}, 1)} }

func (l *lockedLog) Write(p []byte) (int, error) {
	l.ch <- struct{}{}
	defer func() { <-l.ch }()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.ch <- struct{}{}
	defer func() { <-l.ch }()
	return l.b.String()
}

// TestDashboardFlowsWithServiceAccountToken runs every dashboard flow with
// the service account's token instead of the admin's: the caches (list),
// the tree, a resource (cached and fetched live), pod logs, a rollback and a
// sync (with the reference operator, as admin, converging), and the plan
// engine's server-side dry-run and apply in the environment's namespace.
// A missing permission fails it; so does any right it should not have.
func TestDashboardFlowsWithServiceAccountToken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	in := install(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	// The reference operator runs as admin in the platform namespaces.
	quiet := slog.New(slog.DiscardHandler)
	op, err := operator.New(in.admin, in.adminDy, quiet, operator.Options{Namespaces: platformNS})
	if err != nil {
		t.Fatal(err)
	}
	opDone := make(chan struct{})
	go func() { defer close(opDone); _ = op.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-opDone })

	// The dashboard's clients, with the service account's token.
	cfg := in.saConfig(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)

	// Start-up: the platform namespaces can be checked.
	for _, ns := range platformNS {
		if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("service account: get namespace %s = %v", ns, err)
		}
	}

	logs := newLockedLog()
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	view, err := kubeview.New(cs, dyn, log, kubeview.Options{Namespaces: platformNS})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	if err := view.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}

	// Apps, as admin: web with two releases, ledger with one.
	apps := func(ns string) dynamic.ResourceInterface { return in.adminDy.Resource(appcr.Resource).Namespace(ns) }
	for _, a := range []struct{ ns, name, image string }{
		{"storefront", "web", "ghcr.io/acme/web:1.0.0"},
		{"payments", "ledger", "ghcr.io/acme/ledger:2.0.0"},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hanzo.ai/v1", "kind": "App",
			"metadata": map[string]any{"name": a.name, "namespace": a.ns},
			"spec":     map[string]any{"image": a.image, "replicas": int64(2), "host": a.name + ".example.com"},
		}}
		if _, err := apps(a.ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitSynced(ctx, t, view, "storefront", "web", "1.0.0")
	if _, err := apps("storefront").Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"image":"ghcr.io/acme/web:1.1.0"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSynced(ctx, t, view, "storefront", "web", "1.1.0")
	waitSynced(ctx, t, view, "payments", "ledger", "2.0.0")

	// List: every informer synced and readable, no warning.
	st := view.Status()
	if !st.Synced || len(st.Warnings) > 0 {
		t.Errorf("Status() = %+v, want synced with no warnings", st)
	}
	for _, s := range view.InformerStates() {
		if !s.Synced || s.Forbidden {
			t.Errorf("informer %s/%s = %+v, want synced and readable", s.Namespace, s.Kind, s)
		}
	}
	page, err := view.Applications(kubeview.Query{})
	if err != nil || page.Matched != 2 {
		t.Errorf("Applications() = %d rows, %v; want 2", page.Matched, err)
	}

	// Tree and resources: each node, from the cache and fetched live.
	tree, err := view.Tree("storefront", "web")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, n := range tree.Nodes {
		kinds[n.Kind] = true
		ref, err := kubeview.ParseRef(n.Ref, "hanzo.ai", "App")
		if err != nil {
			t.Errorf("ParseRef(%q) = %v", n.Ref, err)
			continue
		}
		if _, _, err := view.Object(ctx, "storefront", "web", ref); err != nil {
			t.Errorf("Object(%s) = %v", n.Ref, err)
		}
		if n.Kind == "App" {
			continue
		}
		if live, err := view.FetchLive(ctx, "storefront", "web", ref); err != nil || live == nil {
			t.Errorf("FetchLive(%s) = %v, %v", n.Ref, live, err)
		}
	}
	for _, k := range []string{"App", "Deployment", "ReplicaSet", "Pod", "Service", "Ingress"} {
		if !kinds[k] {
			t.Errorf("tree of web has no %s: %v", k, kinds)
		}
	}

	// Logs: GetLogs of the newest running pod.
	res, err := kubeview.NewLogs(view, cs.CoreV1()).Read(ctx, kubeview.LogQuery{Namespace: "storefront", App: "web"})
	if err != nil || len(res.Lines) == 0 {
		t.Errorf("logs of web = %d lines (reason %q), %v; want lines", len(res.Lines), res.Reason, err)
	}

	// Rollback and sync through the release seam, with the token.
	rel := release.New(dyn, cs.CoreV1(), appcr.Resource, view.HistoryImages, log)
	rb, err := rel.Rollback(ctx, "storefront", "web", "1.0.0", "alice@example.com")
	if err != nil || !rb.Changed {
		t.Fatalf("Rollback(web, 1.0.0) = %+v, %v; want changed", rb, err)
	}
	waitSynced(ctx, t, view, "storefront", "web", "1.0.0")
	sy, err := rel.Sync(ctx, "payments", "ledger", "alice@example.com")
	if err != nil {
		t.Fatalf("Sync(ledger) = %v", err)
	}
	waitFor(ctx, t, "ledger's sync handled", func() bool {
		u, err := apps("payments").Get(ctx, "ledger", metav1.GetOptions{})
		handled, _, _ := unstructured.NestedString(u.Object, "status", "syncRequestedAt")
		return err == nil && handled == sy.RequestedAt
	})
	// The audit Events were written (release only logs a failure to).
	for _, e := range []struct{ ns, app, reason string }{{"storefront", "web", release.ReasonRollback}, {"payments", "ledger", release.ReasonSync}} {
		evs, err := in.admin.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + e.app + ",reason=" + e.reason})
		if err != nil || len(evs.Items) != 1 || !strings.Contains(evs.Items[0].Message, "alice@example.com") {
			t.Errorf("%s events on %s = %v, %v; want one naming alice", e.reason, e.app, evs, err)
		}
	}

	// And the denials are real requests refused, not only can-i answers.
	_, err = cs.CoreV1().Secrets(ownNS).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("service account: list secrets in %s = %v, want forbidden", ownNS, err)
	}
	_, err = cs.AppsV1().Deployments("storefront").Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("service account: patch deployment web = %v, want forbidden", err)
	}

	planInEnvironment(ctx, t, in, cfg)
	auditWithToken(ctx, t, cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))

	if out := logs.String(); strings.Contains(out, "forbidden") || strings.Contains(out, "not readable") || strings.Contains(out, "audit event not recorded") || strings.Contains(out, "audit: ") {
		t.Errorf("the dashboard logged a permission problem:\n%s", out)
	}
}

// planInEnvironment runs the plan engine with the service account: a
// server-side dry-run plan, then an apply (lock Lease, server-side apply),
// then a second apply that replaces an allowlisted suspended template Job
// (delete + create). No step may be forbidden.
func planInEnvironment(ctx context.Context, t *testing.T, in *installed, cfg *rest.Config) {
	t.Helper()
	dir := t.TempDir()
	commit := strings.Repeat("3f9c2e1a", 5)
	digest := "sha256:" + strings.Repeat("ab", 32)
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("deploy.yaml", fmt.Sprintf(`environments:
  - name: %[1]s
    cluster: {context: test}
    namespace: %[1]s
    source: {path: manifests}
    catalog: catalog.json
    templateJobs: {allowlist: [migrate]}
    registry: {skip: true}
`, environment))
	write("catalog.json", fmt.Sprintf(`{"commit": %q, "services": [
  {"id": "api", "image": "registry.example.com/acme/api:%[1]s", "digest": %[2]q, "published": true},
  {"id": "migrate", "image": "registry.example.com/acme/migrate:%[1]s", "digest": %[2]q, "published": true},
  {"id": "migrate2", "image": "registry.example.com/acme/migrate2:%[1]s", "digest": %[2]q, "published": true}]}`, commit, digest))
	write("manifests/kustomization.yaml", "namespace: "+environment+"\nresources: [app.yaml]\n")
	manifests := func(jobImage string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: api}
data: {LOG_LEVEL: info}
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports: [{port: 80, targetPort: 8080}]
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
      containers: [{name: api, image: "registry.example.com/acme/api:%[1]s"}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: "registry.example.com/acme/%[2]s:%[1]s"}]
`, commit, jobImage)
	}
	write("manifests/app.yaml", manifests("migrate"))
	conf, err := envconfig.LoadConfig(filepath.Join(dir, "deploy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	env, err := conf.Env(environment)
	if err != nil {
		t.Fatal(err)
	}
	opts := deployplan.Options{RestConfig: cfg, ConfigPath: filepath.Join(dir, "deploy.yaml")}
	noForbidden := func(what string, rep *deployplan.Report) {
		t.Helper()
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		// An apiserver denial reads `... is forbidden: User "system:serviceaccount:..." cannot ...`.
		if s := string(b); strings.Contains(s, "is forbidden") || strings.Contains(s, sa) || strings.Contains(s, "cannot read") {
			t.Errorf("%s: the report mentions a permission problem:\n%s", what, b)
		}
	}

	rep, err := deployplan.Plan(ctx, env, opts)
	if err != nil {
		t.Fatalf("Plan() = %v", err)
	}
	noForbidden("plan", rep)
	// The console keeps its history in deploy-web's namespace; keep 1, so
	// the second save prunes (delete).
	store := planstore.New(kubernetes.NewForConfigOrDie(cfg).CoreV1(), ownNS, 1)
	for i := range 2 {
		report, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Save(ctx, planstore.Entry{Environment: environment, Action: "plan", Conclusion: "ready", User: "alice@example.com"}, map[string][]byte{"report.json": report}); err != nil {
			t.Fatalf("planstore Save #%d = %v", i+1, err)
		}
	}
	if entries, err := store.List(ctx, environment); err != nil || len(entries) != 1 {
		t.Errorf("planstore List = %d entries, %v; want 1 (pruned)", len(entries), err)
	} else if _, _, err := store.Get(ctx, entries[0].ID); err != nil {
		t.Errorf("planstore Get = %v", err)
	}
	if rep.DeployApply.Conclusion.Status != deployplan.StatusReady {
		t.Errorf("plan conclusion = %+v, blockers %+v; want ready", rep.DeployApply.Conclusion, rep.DeployApply.RemainingBlockers)
	}
	if _, err := in.admin.AppsV1().Deployments(environment).Get(ctx, "api", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the plan, get deployment api = %v, want not found (a plan writes nothing)", err)
	}

	apply := func(what string) {
		t.Helper()
		rep, err := deployplan.Apply(ctx, env, deployplan.ApplyOptions{Options: opts,
			Request:    deployplan.ApplyRequest{Env: environment, ConfirmEnv: environment, ConfirmedNonProduction: true},
			ReportPath: filepath.Join(dir, "reports", what+".json"), Timeout: 90 * time.Second})
		if err != nil {
			var refusal *deployplan.RefusalError
			if errors.As(err, &refusal) && rep != nil {
				t.Fatalf("%s refused: %v; blockers %+v", what, err, rep.DeployApply.RemainingBlockers)
			}
			t.Fatalf("%s = %v", what, err)
		}
		noForbidden(what, rep)
		if got := rep.DeployApply.Conclusion.Status; got != deployplan.StatusApplied {
			t.Errorf("%s conclusion = %+v, want applied", what, rep.DeployApply.Conclusion)
		}
	}
	apply("apply")
	if _, err := in.admin.AppsV1().Deployments(environment).Get(ctx, "api", metav1.GetOptions{}); err != nil {
		t.Errorf("after the apply, get deployment api = %v", err)
	}
	before, err := in.admin.BatchV1().Jobs(environment).Get(ctx, "migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write("manifests/app.yaml", manifests("migrate2"))
	apply("apply-job-replacement")
	after, err := in.admin.BatchV1().Jobs(environment).Get(ctx, "migrate", metav1.GetOptions{})
	if err != nil || after.UID == before.UID {
		t.Errorf("template Job migrate after the second apply: %v (uid %s, was %s), want replaced", err, after.GetUID(), before.UID)
	}
	if _, err := in.admin.CoordinationV1().Leases(environment).Get(ctx, deployplan.LockName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the apply lock after the applies: %v, want released", err)
	}
}

func waitSynced(ctx context.Context, t *testing.T, view *kubeview.Cache, ns, name, version string) {
	t.Helper()
	waitFor(ctx, t, fmt.Sprintf("%s/%s Synced at %s", ns, name, version), func() bool {
		row, ok := view.Row(ns, name)
		return ok && row.Version == version && row.Sync.Status == kubeview.SyncSynced && row.RunningSummary() == version+" (2)"
	})
}

func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
