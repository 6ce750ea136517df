package handlers

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
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
	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/timeline/recordentries"
)

// operateIntegrationRoles: a viewer, a deployer without operate, an
// operator.
const operateIntegrationRoles = `bindings:
  - role: viewer
    groups: [viewers]
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
// viewer, a deployer without operate and a frozen namespace are refused
// with nothing changed; each action leaves one record and, through the
// records feed, an operate entry on web's timeline (its record id, the
// value before and after); a scale of the App that environment dev
// renders from git with self-heal is refused with nothing changed until
// dev's auto-sync is paused.
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
	// The timeline as serve feeds it from the records: the one feed of
	// records (audit/recordfeed) through recordentries.RecordEntries into a
	// real timeline store, which the handlers serve.
	tl, err := timeline.New(kube.CoreV1(), timeline.Options{Namespace: testAuditNS, IsLeader: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := tl.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("timeline: %v", err)
		}
	}()
	feed := recordfeed.New(store, recordfeed.Options{})
	toEntries := recordentries.NewRecordEntries(func(string, string, string) bool { return false })
	feed.Subscribe(recordfeed.Subscription{Name: "timeline", Backfill: timeline.DefaultMaxAge,
		Deliver: func(recs []audit.Record) { tl.Record(toEntries.Entries(recs)...) }})
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
		o.Timeline = tl
	})
	operator := auth.Identity{Subject: "otto", Email: "otto@example.com", Groups: auth.NewGroupList([]string{"operators"}), Expires: testNow.Add(time.Hour)}
	viewer := auth.Identity{Subject: "vera", Email: "vera@example.com", Groups: auth.NewGroupList([]string{"viewers"}), Expires: testNow.Add(time.Hour)}
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
		// The timeline's entry of a record (cmd/deploy-web's auditFeed,
		// fed by audit/recordfeed) is keyed on these fields of the record
		// read back from the store: an id, the App and its namespace, and
		// the value changed, before and after.
		if status == http.StatusOK && (r.ID == "" || r.Namespace != realNS || r.Action != action || r.Before == "" || r.After == "") {
			t.Errorf("record of %s %s = id %q, namespace %q, action %q, %q -> %q, want an id, %s, %s and the value before and after", action, ref, r.ID, r.Namespace, r.Action, r.Before, r.After, realNS, action)
		}
		if status == http.StatusOK {
			// Its timeline entry, as web's timeline API answers it once
			// the feed has passed.
			var last string
			deadline := time.Now().Add(2 * time.Minute)
			for {
				if err := feed.Pass(ctx); err != nil {
					t.Fatal(err)
				}
				// The test server's clock is testNow: the window is the
				// real clock's last hour.
				q := url.Values{"cluster": {"eu"}, "namespace": {realNS},
					"since": {time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}, "until": {time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}}
				tw := ts.do(t, request{method: http.MethodGet, target: "/v1/deploy/web/timeline?" + q.Encode(), admin: true})
				var page struct{ Entries []timeline.Entry }
				if tw.Code != http.StatusOK || json.Unmarshal(tw.Body.Bytes(), &page) != nil {
					t.Fatalf("GET web's timeline = %d %s", tw.Code, tw.Body)
				}
				if slices.ContainsFunc(page.Entries, func(e timeline.Entry) bool {
					return e.Ref == r.ID && e.Kind == timeline.KindOperate && e.From == r.Before && e.To == r.After
				}) {
					break
				}
				if last = tw.Body.String(); time.Now().After(deadline) {
					t.Fatalf("web's timeline has no operate entry of record %s (%s -> %s) within 2 minutes: %s", r.ID, r.Before, r.After, last)
				}
				time.Sleep(200 * time.Millisecond)
			}
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

	// Refused with nothing changed: a viewer, a deployer without operate,
	// a frozen namespace.
	act(viewer, workerRef, "scale", `{"replicas": 2}`, http.StatusForbidden)
	act(viewer, workerRef, "restart", ``, http.StatusForbidden)
	if d := worker(); *d.Spec.Replicas != 1 || d.Spec.Template.Annotations[appcr.RestartedAtAnnotation] != "" {
		t.Errorf("after a viewer's scale and restart the worker declares %d replicas, restartedAt %q, want 1 and none (nothing changed)",
			*d.Spec.Replicas, d.Spec.Template.Annotations[appcr.RestartedAtAnnotation])
	}
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

	// Self-heal: environment dev renders App web from a real git server
	// with autoSync.selfHeal. A scale of the App is refused (422, a
	// refused record, the replicas unchanged) until dev's auto-sync is
	// paused (a real pause record); then it is allowed.
	srv := gitservertest.New(t, map[string]string{
		"base/kustomization.yaml":         "resources: [web.yaml]\n",
		"base/web.yaml":                   gitopsApp("web", "1.0.0", 2),
		"overlays/dev/kustomization.yaml": "resources: [../../base]\nnamespace: " + realNS + "\n",
		"catalog.json":                    releasesCatalog("1.0.0", "1.0.0"),
	}, gitservertest.Options{})
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`environments:
  - name: dev
    cluster: {context: test}
    namespace: %s
    source: {repo: %q, ref: main, path: overlays/dev}
    catalog: catalog.json
    registry: {skip: true}
    autoSync: {enabled: true, selfHeal: true, interval: 15s}
`, realNS, srv.URL)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	index := envsource.New(cfg, log, time.Hour)
	if err := index.Refresh(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, log, envrun.Options{RestConfig: rc.p.Cluster.Config, Events: kube.CoreV1(), ReportsDir: t.TempDir(),
		Store: planstore.New(kube.CoreV1(), testAuditNS, 50), Index: index, ApplyTimeout: 2 * time.Minute})
	pauses := autosync.NewPauses(kube.CoreV1(), testAuditNS, signtest.Keys(), time.Now)
	healed := newTestServer(t, newFakeView(nil), withAudit(store), func(o *Options) {
		o.Clusters = []Cluster{cl}
		o.Roles = policy
		o.Freezes = gate
		o.Environments, o.Desired, o.EnvClusters, o.AutoSync = runner, index, map[string]string{"dev": "eu"}, whyAutoSync{pauses}
	})
	appReplicas := func() int64 {
		n, _, _ := unstructured.NestedInt64(rc.app(t, "web").Object, "spec", "replicas")
		return n
	}
	healed.auth.id = &operator
	w := healed.do(t, request{method: http.MethodPost, target: apiActionIn("eu", realNS, appRef, "scale"), admin: true, body: `{"replicas": 3}`, header: map[string]string{"Content-Type": "application/json"}})
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "self-heal would put the replicas back") {
		t.Fatalf("scale of an App dev heals from git = %d %s, want 422 naming self-heal", w.Code, w.Body)
	}
	nRecords++
	eventually("the refused scale's record", func() bool { return len(records(t, store)) == nRecords })
	if r := records(t, store)[0]; r.Verb != audit.VerbOperate || r.Outcome != audit.OutcomeRefused || !strings.Contains(r.Message, "self-heal") {
		t.Errorf("record of the refused scale = %s %s %q, want a refused operate naming self-heal", r.Verb, r.Outcome, r.Message)
	}
	if n := appReplicas(); n != 2 {
		t.Errorf("after the refused scale the App declares %d replicas, want 2 (nothing changed)", n)
	}
	if _, err := pauses.Pause(ctx, "dev", "traffic spike", time.Now().Add(time.Hour), "otto@example.com"); err != nil {
		t.Fatal(err)
	}
	w = healed.do(t, request{method: http.MethodPost, target: apiActionIn("eu", realNS, appRef, "scale"), admin: true, body: `{"replicas": 3}`, header: map[string]string{"Content-Type": "application/json"}})
	if w.Code != http.StatusOK {
		t.Fatalf("scale with dev's auto-sync paused = %d %s, want 200", w.Code, w.Body)
	}
	if n := appReplicas(); n != 3 {
		t.Errorf("after the scale with auto-sync paused the App declares %d replicas, want 3", n)
	}
}
