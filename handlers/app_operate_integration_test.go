package handlers

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/utils/ptr"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/roles"
)

// operateIntegrationRoles: a deployer without operate, an operator.
const operateIntegrationRoles = `bindings:
  - role: deployer
    groups: [deployers]
  - role: deployer
    groups: [operators]
    operate: true
`

// TestOperateOnRealCluster: the day-2 actions on a real control plane
// with the operator, through the handlers, the freezes and the audit
// store serve builds: a restart sets the pod template's restartedAt and
// replaces the pods; a scale changes a Deployment's replicas and the
// App's through its scale subresource (the operator then scales its
// Deployment); a suspend stops a CronJob; a delete removes one pod; a
// deployer without operate and a frozen namespace are refused with
// nothing changed; each action leaves one record.
func TestOperateOnRealCluster(t *testing.T) {
	rc, cl := startRealCluster(t, "eu", map[string][]string{"web": {"1.0.0"}})
	ctx := t.Context()
	kube := rc.p.Kube
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testAuditNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	store, err := audit.New(kube.CoreV1(), metadata.NewForConfigOrDie(platformtest.AdminConfig(rc.p.Cluster.Config)), audit.Options{Namespace: testAuditNS})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Start(ctx); err != nil {
		t.Fatal(err)
	}
	gate := freeze.NewGate(freeze.NewStore(kube.CoreV1(), testAuditNS, signtest.Keys()))
	policy, err := roles.Parse("roles.yaml", []byte(operateIntegrationRoles), roles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cl.Operations = cl.Release.(*release.Releaser)
	ts := newTestServer(t, newFakeView(nil), withAudit(store), func(o *Options) {
		o.Clusters = []Cluster{cl}
		o.Roles = policy
		o.Freezes = gate
	})
	operator := auth.Identity{Subject: "otto", Email: "otto@example.com", Groups: auth.NewGroupList([]string{"operators"}), Expires: testNow.Add(time.Hour)}
	deployer := auth.Identity{Subject: "dee", Email: "dee@example.com", Groups: auth.NewGroupList([]string{"deployers"}), Expires: testNow.Add(time.Hour)}

	// Children of App web the operator does not manage: a worker
	// Deployment and a CronJob, owned by the App (so in its tree).
	app := rc.app(t, "web")
	owner := []metav1.OwnerReference{{APIVersion: "hanzo.ai/v1", Kind: "App", Name: "web", UID: app.GetUID(), Controller: ptr.To(true)}}
	labels := map[string]string{appcr.InstanceLabel: "web", "app": "web-worker"}
	pod := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "w", Image: "ghcr.io/acme/worker:1.0.0"}}}}
	if _, err := kube.AppsV1().Deployments(realNS).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web-worker", Namespace: realNS, Labels: labels, OwnerReferences: owner},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: pod}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.BatchV1().CronJobs(realNS).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "web-nightly", Namespace: realNS, Labels: map[string]string{appcr.InstanceLabel: "web"}, OwnerReferences: owner},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "n", Image: "ghcr.io/acme/nightly:1.0.0"}}}}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const (
		depRef    = "apps:Deployment:" + realNS + ":web"
		workerRef = "apps:Deployment:" + realNS + ":web-worker"
		cronRef   = "batch:CronJob:" + realNS + ":web-nightly"
		appRef    = "hanzo.ai:App:" + realNS + ":web"
	)
	// eventually waits (generously) for ok.
	eventually := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 2 minutes", what)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	inTree := func(ref string) func() bool {
		return func() bool {
			tree, err := rc.view.Tree(realNS, "web")
			return err == nil && slices.ContainsFunc(tree.Nodes, func(n kubeview.TreeNode) bool { return n.Ref == ref })
		}
	}
	eventually("the worker and the CronJob in web's tree", func() bool { return inTree(workerRef)() && inTree(cronRef)() })
	workerPods := func() []corev1.Pod {
		l, err := kube.CoreV1().Pods(realNS).List(ctx, metav1.ListOptions{LabelSelector: "app=web-worker"})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	eventually("a worker pod", func() bool { return len(workerPods()) == 1 })

	nRecords := 0
	act := func(who auth.Identity, ref, action, body string, status int) []byte {
		t.Helper()
		ts.auth.id = &who
		w := ts.do(t, request{method: http.MethodPost, target: apiActionIn("eu", realNS, ref, action), admin: true, body: body, header: map[string]string{"Content-Type": "application/json"}})
		if w.Code != status {
			t.Fatalf("%s %s = %d %s, want %d", action, ref, w.Code, w.Body, status)
		}
		if status == http.StatusForbidden {
			return w.Body.Bytes() // refused by the route's role: no record
		}
		nRecords++
		eventually("record of "+action+" "+ref, func() bool { return len(records(t, store)) == nRecords })
		r := records(t, store)[0]
		want := audit.OutcomeSucceeded
		if status != http.StatusOK {
			want = audit.OutcomeRefused
		}
		if r.Verb != audit.VerbOperate || r.Outcome != want || r.Cluster != "eu" || r.App != "web" || r.Actor.Email != who.Email {
			t.Errorf("record of %s %s = %s %s in %s of %s by %s, want operate %s in eu of web by %s", action, ref, r.Verb, r.Outcome, r.Cluster, r.App, r.Actor.Email, want, who.Email)
		}
		return w.Body.Bytes()
	}
	worker := func() *appsv1.Deployment {
		d, err := kube.AppsV1().Deployments(realNS).Get(ctx, "web-worker", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	// Refused with nothing changed: a deployer without operate, a frozen
	// namespace.
	act(deployer, workerRef, "scale", `{"replicas": 2}`, http.StatusForbidden)
	f, err := gate.Store().Add(ctx, freeze.Freeze{Scope: scope.Scope{Namespaces: []string{realNS}}, Start: time.Now().Add(-time.Minute), End: time.Now().Add(time.Hour),
		Reason: "release week", Author: freeze.Author{Email: "root@example.com", Subject: "root"}})
	if err != nil {
		t.Fatal(err)
	}
	gate.Forget()
	if body := act(operator, workerRef, "scale", `{"replicas": 2}`, http.StatusConflict); !strings.Contains(string(body), "frozen") {
		t.Errorf("scale in a freeze = %s, want the freeze's refusal", body)
	}
	if n := *worker().Spec.Replicas; n != 1 {
		t.Errorf("after the refusals the worker declares %d replicas, want 1 (nothing changed)", n)
	}
	if _, err := gate.Store().Remove(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	gate.Forget()

	// Restart: the template's restartedAt is set and every pod is replaced.
	before := map[types.UID]bool{}
	for _, p := range workerPods() {
		before[p.UID] = true
	}
	var res operationResponse
	if err := json.Unmarshal(act(operator, workerRef, "restart", `{"reason": "stuck workers"}`, http.StatusOK), &res); err != nil {
		t.Fatal(err)
	}
	at := worker().Spec.Template.Annotations[appcr.RestartedAtAnnotation]
	if at == "" || res.After != at {
		t.Fatalf("after a restart the template's %s = %q, answer's after %q, want the same time", appcr.RestartedAtAnnotation, at, res.After)
	}
	if r := records(t, store)[0]; r.Reason != "stuck workers" || r.After != at || r.Action != "restart" {
		t.Errorf("restart record = %s %q -> %q (reason %q), want restart to %s, reason stuck workers", r.Action, r.Before, r.After, r.Reason, at)
	}
	eventually("the worker's pods replaced", func() bool {
		pods := workerPods()
		if len(pods) == 0 {
			return false
		}
		for _, p := range pods {
			if before[p.UID] || p.Annotations[appcr.RestartedAtAnnotation] != at {
				return false
			}
		}
		return true
	})

	// Scale a Deployment, and the App through its scale subresource.
	act(operator, workerRef, "scale", `{"replicas": 2}`, http.StatusOK)
	if n := *worker().Spec.Replicas; n != 2 {
		t.Errorf("after scale the worker declares %d replicas, want 2", n)
	}
	act(operator, appRef, "scale", `{"replicas": 2}`, http.StatusOK)
	if n, _, _ := unstructured.NestedInt64(rc.app(t, "web").Object, "spec", "replicas"); n != 2 {
		t.Errorf("after scale the App declares %d replicas, want 2", n)
	}
	eventually("the operator scaling web's Deployment to 2", func() bool {
		d, err := kube.AppsV1().Deployments(realNS).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Spec.Replicas != nil && *d.Spec.Replicas == 2
	})

	// Suspend stops the CronJob.
	act(operator, cronRef, "suspend", ``, http.StatusOK)
	cj, err := kube.BatchV1().CronJobs(realNS).Get(ctx, "web-nightly", metav1.GetOptions{})
	if err != nil || cj.Spec.Suspend == nil || !*cj.Spec.Suspend {
		t.Errorf("after suspend the CronJob's suspend = %v (%v), want true", cj.Spec.Suspend, err)
	}

	// Delete removes one pod (its ReplicaSet starts another).
	eventually("two worker pods", func() bool { return len(workerPods()) == 2 })
	victim := workerPods()[0]
	eventually("the pod in web's tree", inTree(":Pod:"+realNS+":"+victim.Name))
	act(operator, ":Pod:"+realNS+":"+victim.Name, "delete", ``, http.StatusOK)
	eventually("the pod deleted", func() bool {
		p, err := kube.CoreV1().Pods(realNS).Get(ctx, victim.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err) || (err == nil && (p.UID != victim.UID || p.DeletionTimestamp != nil))
	})
	for _, p := range workerPods() {
		if p.UID != victim.UID && p.DeletionTimestamp != nil {
			t.Errorf("pod %s is being deleted too, want only %s", p.Name, victim.Name)
		}
	}

	// The operator's own Deployment restarts too (its restartedAt is a
	// field the operator does not own, so it stays).
	act(operator, depRef, "restart", ``, http.StatusOK)
	eventually("web's template restartedAt kept through the operator's reconcile", func() bool {
		d, err := kube.AppsV1().Deployments(realNS).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Spec.Template.Annotations[appcr.RestartedAtAnnotation] != ""
	})
}
