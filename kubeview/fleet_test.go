package kubeview_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// rowView is the part of a row the fleet tests compare.
type rowView struct {
	Health        objrules.HealthStatus
	Sync          kubeview.SyncStatus
	Version       string
	Running       string
	Replicas      kubeview.Replicas
	HasDeployment bool
}

func viewOf(r kubeview.AppRow) rowView {
	return rowView{r.Health.Status, r.Sync.Status, r.Version, r.RunningSummary(), r.Replicas, r.HasDeployment}
}

func img(name, tag string) string { return "registry.test/" + name + ":" + tag }

func TestApplicationsRows(t *testing.T) {
	tests := []struct {
		name        string
		fix         fixApp
		want        rowView
		wantHealth  string // substring of the health message
		wantSync    string // substring of the sync message
		wantDeploys time.Time
	}{
		{
			name: "healthy and synced",
			fix:  fixApp{ns: "prod", name: "web", extras: true},
			want: rowView{objrules.HealthHealthy, kubeview.SyncSynced, "1.2.0", "1.2.0 (3)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 3, Available: 3}, true},
		},
		{
			name: "same name in another platform namespace is another row",
			fix:  fixApp{ns: "stage", name: "web", image: img("web", "1.3.0")},
			want: rowView{objrules.HealthHealthy, kubeview.SyncSynced, "1.3.0", "1.3.0 (3)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 3, Available: 3}, true},
		},
		{
			name: "rollout in progress runs two versions",
			fix: fixApp{ns: "prod", name: "api", replicas: 3,
				versions: []fixVersion{{image: img("api", "1.1.0"), ready: 2}, {image: img("api", "1.2.0"), ready: 1}},
				dep: func(d *appsv1.Deployment) {
					d.Status.Conditions[1].Reason = "ReplicaSetUpdated"
				}},
			want:       rowView{objrules.HealthProgressing, kubeview.SyncOutOfSync, "1.2.0", "1.1.0 (2) -> 1.2.0 (1)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 1, Available: 3}, true},
			wantHealth: "apps/Deployment:prod/api",
			wantSync:   "1 of 3 replicas updated",
		},
		{
			name: "declared image differs from the template",
			fix: fixApp{ns: "prod", name: "billing", image: img("billing", "1.3.0"),
				versions: []fixVersion{{image: img("billing", "1.2.0"), ready: 3}}},
			want:     rowView{objrules.HealthHealthy, kubeview.SyncOutOfSync, "1.3.0", "1.2.0 (3)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 3, Available: 3}, true},
			wantSync: "the App declares registry.test/billing:1.3.0",
		},
		{
			name:       "paused Deployment",
			fix:        fixApp{ns: "prod", name: "batch", dep: func(d *appsv1.Deployment) { d.Spec.Paused = true }},
			want:       rowView{objrules.HealthSuspended, kubeview.SyncSynced, "1.2.0", "1.2.0 (3)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 3, Available: 3}, true},
			wantHealth: "apps/Deployment:prod/batch",
		},
		{
			name:       "no Deployment",
			fix:        fixApp{ns: "prod", name: "ghost", noDeployment: true},
			want:       rowView{objrules.HealthMissing, kubeview.SyncUnknown, "1.2.0", "", kubeview.Replicas{}, false},
			wantHealth: "apps/Deployment:prod/ghost does not exist",
			wantSync:   "no Deployment",
		},
		{
			name: "progress deadline exceeded",
			fix: fixApp{ns: "prod", name: "stuck", replicas: 3,
				versions: []fixVersion{{image: img("stuck", "1.1.0"), ready: 3}, {image: img("stuck", "1.2.0"), notReady: 1}},
				dep: func(d *appsv1.Deployment) {
					d.Status.Conditions[1] = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
						Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "stuck" has timed out progressing.`}
				}},
			want:       rowView{objrules.HealthDegraded, kubeview.SyncOutOfSync, "1.2.0", "1.1.0 (3) -> 1.2.0 (0)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 1, Available: 3}, true},
			wantHealth: "apps/Deployment:prod/stuck",
		},
		{
			name:        "children without ownerReference matched by name",
			fix:         fixApp{ns: "prod", name: "legacy", orphan: true},
			want:        rowView{objrules.HealthHealthy, kubeview.SyncSynced, "1.2.0", "1.2.0 (3)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 3, Available: 3}, true},
			wantDeploys: fixT0,
		},
		{
			name: "Deployment of the same name controlled by another owner is not a child",
			fix: fixApp{ns: "prod", name: "hijacked", each: func(o runtime.Object) {
				if d, ok := o.(*appsv1.Deployment); ok {
					d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: "hijacked", UID: "uid-rollout", Controller: new(true)}}
				}
			}},
			want:       rowView{objrules.HealthMissing, kubeview.SyncUnknown, "1.2.0", "", kubeview.Replicas{}, false},
			wantHealth: "does not exist",
		},
		{
			name: "App CR reports a failure",
			fix: fixApp{ns: "prod", name: "broken", app: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{
					"type": "Ready", "status": "False", "reason": "ReconcileFailed", "message": "quota exceeded",
				}}, "status", "conditions")
			}},
			want:       rowView{objrules.HealthDegraded, kubeview.SyncSynced, "1.2.0", "1.2.0 (3)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 3, Available: 3}, true},
			wantHealth: "hanzo.ai/App:prod/broken",
		},
		{
			name:       "App CR generation not observed",
			fix:        fixApp{ns: "prod", name: "pending", app: func(u *unstructured.Unstructured) { u.SetGeneration(2) }},
			want:       rowView{objrules.HealthProgressing, kubeview.SyncSynced, "1.2.0", "1.2.0 (3)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 3, Available: 3}, true},
			wantHealth: "operator has not observed generation 2",
		},
		{
			name: "degraded depth-1 child (HPA) makes the App Degraded",
			fix: fixApp{ns: "prod", name: "scaler", extras: true, each: func(o runtime.Object) {
				if h, ok := o.(*autoscalingv2.HorizontalPodAutoscaler); ok {
					h.Status.Conditions[1] = autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.ScalingActive,
						Status: corev1.ConditionFalse, Reason: "FailedGetResourceMetric", Message: "no metrics"}
				}
			}},
			want:       rowView{objrules.HealthDegraded, kubeview.SyncSynced, "1.2.0", "1.2.0 (3)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 3, Available: 3}, true},
			wantHealth: "autoscaling/HorizontalPodAutoscaler:prod/scaler (no metrics)",
		},
		{
			name: "pods do not count: a crashing pod does not make the App Degraded",
			fix: fixApp{ns: "prod", name: "flaky",
				each: func(o runtime.Object) {
					if p, ok := o.(*corev1.Pod); ok && strings.HasSuffix(p.Name, "-00000") {
						crashLoop(p)
					}
				},
				// Even a crashing pod owned by the App itself.
				extra: func(f fixApp) []runtime.Object {
					p := &corev1.Pod{
						ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.name + "-debug", OwnerReferences: f.owner(), Labels: f.labels()},
						Spec:       f.podSpec(img(f.name, "1.2.0")),
						Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady}},
							ContainerStatuses: []corev1.ContainerStatus{{Name: f.name}}},
					}
					crashLoop(p)
					return []runtime.Object{p}
				}},
			// The fixture's Deployment status still says 3 ready: only the
			// pod changed, and the row counts ready pods for the version.
			want: rowView{objrules.HealthHealthy, kubeview.SyncSynced, "1.2.0", "1.2.0 (2)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 3, Available: 3}, true},
		},
	}

	fixtures := make([]fixApp, 0, len(tests)+1)
	for _, tt := range tests {
		fixtures = append(fixtures, tt.fix)
	}
	// An App outside the platform namespaces, and a Secret named after an
	// App: neither may show up.
	intruder := fixApp{ns: "kube-system", name: "intruder"}
	fixtures = append(fixtures, intruder)
	apps, objs := fixObjects(fixtures)
	objs = append(objs, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web", Labels: map[string]string{appcr.InstanceLabel: "web"}},
		StringData: map[string]string{"password": "hunter2"},
	})
	env := startCache(t.Context(), t, newTestClientset(objs...), newTestDynamic(apps...), []string{"prod", "stage"})
	rows := rowsByKey(t, env.cache)

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := rows[tt.fix.key()]
			if !ok {
				t.Fatalf("Applications(Query{}) has no row %s", tt.fix.key())
			}
			if diff := cmp.Diff(tt.want, viewOf(got)); diff != "" {
				t.Errorf("row %s mismatch (-want +got):\n%s", tt.fix.key(), diff)
			}
			if !strings.Contains(got.Health.Message, tt.wantHealth) {
				t.Errorf("row %s Health.Message = %q, want it to contain %q", tt.fix.key(), got.Health.Message, tt.wantHealth)
			}
			if !strings.Contains(got.Sync.Message, tt.wantSync) {
				t.Errorf("row %s Sync.Message = %q, want it to contain %q", tt.fix.key(), got.Sync.Message, tt.wantSync)
			}
			if !tt.wantDeploys.IsZero() && !got.LastDeployed.Equal(tt.wantDeploys) {
				t.Errorf("row %s LastDeployed = %v, want %v", tt.fix.key(), got.LastDeployed, tt.wantDeploys)
			}
		})
	}

	t.Run("one row per App in the platform namespaces", func(t *testing.T) {
		if len(rows) != len(tests) {
			t.Errorf("Applications(Query{}) has %d rows, want %d", len(rows), len(tests))
		}
		if _, ok := rows[intruder.key()]; ok {
			t.Errorf("Applications(Query{}) has a row for %s, outside the platform namespaces", intruder.key())
		}
	})

	t.Run("counts match the rows", func(t *testing.T) {
		p, err := env.cache.Applications(kubeview.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(recount(p.Rows), nonZero(p.Counts)); diff != "" {
			t.Errorf("Page.Counts mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("no Secret", func(t *testing.T) {
		for _, k := range kubeview.Kinds() {
			if k.Kind == "Secret" || k.Resource == "secrets" {
				t.Errorf("Kinds() has %+v, want no Secret", k)
			}
		}
		if k, ok := kubeview.LookupKind("", "Secret"); ok {
			t.Errorf(`LookupKind("", "Secret") = %+v, true, want false`, k)
		}
		for _, a := range env.cs.Actions() {
			if a.GetResource().Resource == "secrets" {
				t.Errorf("the cache made a request on secrets: %s %s", a.GetVerb(), a.GetResource())
			}
		}
	})
}

// crashLoop makes a pod's first container crash in a loop: Degraded by
// itself.
func crashLoop(p *corev1.Pod) {
	p.Spec.RestartPolicy = corev1.RestartPolicyAlways
	p.Status.Conditions[0].Status = corev1.ConditionFalse
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s"}}
	if h, _ := objrules.HealthOf(p); h.Status != objrules.HealthDegraded {
		panic("crashLoop: pod health " + string(h.Status))
	}
}

// TestApplicationsFollowEvents changes the fake cluster after the cache
// synced and checks that rows and counts follow, one row at a time.
func TestApplicationsFollowEvents(t *testing.T) {
	web := fixApp{ns: "prod", name: "web"}
	api := fixApp{ns: "prod", name: "api"}
	ghost := fixApp{ns: "prod", name: "ghost", noDeployment: true}
	other := fixApp{ns: "stage", name: "worker"}
	env := newTestEnv(t, []string{"prod", "stage"}, web, api, ghost, other)
	ctx := t.Context()
	c := env.cache

	page := func(t *testing.T) kubeview.Page {
		t.Helper()
		p, err := c.Applications(kubeview.Query{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	checkCounts := func(t *testing.T, p kubeview.Page, want kubeview.Counts) {
		t.Helper()
		if diff := cmp.Diff(want, nonZero(p.Counts)); diff != "" {
			t.Errorf("Page.Counts mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(recount(p.Rows), nonZero(p.Counts)); diff != "" {
			t.Errorf("Page.Counts differ from a recount of the rows (-recount +counts):\n%s", diff)
		}
	}
	counts := func(total int, health map[objrules.HealthStatus]int, sync map[kubeview.SyncStatus]int) kubeview.Counts {
		return kubeview.Counts{Total: total, Health: health, Sync: sync}
	}

	checkCounts(t, page(t), counts(4,
		map[objrules.HealthStatus]int{objrules.HealthHealthy: 3, objrules.HealthMissing: 1},
		map[kubeview.SyncStatus]int{kubeview.SyncSynced: 3, kubeview.SyncUnknown: 1}))

	t.Run("Deployment status update changes one row", func(t *testing.T) {
		before := page(t)
		changed := c.Changed()
		d, err := env.cs.AppsV1().Deployments("prod").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d.Status.UpdatedReplicas = 1
		d.Status.Conditions[1] = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}
		if _, err := env.cs.AppsV1().Deployments("prod").UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatal("Changed() not closed within 10s of a Deployment update")
		}
		p := waitPage(t, c, kubeview.Query{}, "web Degraded", func(p kubeview.Page) bool {
			r, ok := findRow(p, web.key())
			return ok && r.Health.Status == objrules.HealthDegraded
		})
		if got, want := p.Version, before.Version+1; got != want {
			t.Errorf("Page.Version = %d, want %d (one row changed, nothing recomputed else)", got, want)
		}
		r, _ := findRow(p, web.key())
		if got, want := r.Sync.Status, kubeview.SyncOutOfSync; got != want {
			t.Errorf("row %s Sync.Status = %s, want %s", web.key(), got, want)
		}
		for _, old := range before.Rows {
			if old.Key() == web.key() {
				continue
			}
			got, ok := findRow(p, old.Key())
			if !ok {
				t.Errorf("row %s disappeared", old.Key())
				continue
			}
			if diff := cmp.Diff(old, got); diff != "" {
				t.Errorf("row %s changed (-before +after):\n%s", old.Key(), diff)
			}
		}
		checkCounts(t, p, counts(4,
			map[objrules.HealthStatus]int{objrules.HealthHealthy: 2, objrules.HealthDegraded: 1, objrules.HealthMissing: 1},
			map[kubeview.SyncStatus]int{kubeview.SyncSynced: 2, kubeview.SyncOutOfSync: 1, kubeview.SyncUnknown: 1}))
	})

	t.Run("pod losing readiness lowers the running count", func(t *testing.T) {
		pods, err := env.cs.CoreV1().Pods("prod").List(ctx, metav1.ListOptions{LabelSelector: appcr.InstanceLabel + "=api"})
		if err != nil || len(pods.Items) != 3 {
			t.Fatalf("List(pods of api) = %d pods, %v, want 3", len(pods.Items), err)
		}
		pod := pods.Items[0]
		pod.Status.Conditions[0].Status = corev1.ConditionFalse
		if _, err := env.cs.CoreV1().Pods("prod").UpdateStatus(ctx, &pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPage(t, c, kubeview.Query{}, `api running "1.2.0 (2)"`, func(p kubeview.Page) bool {
			r, ok := findRow(p, api.key())
			return ok && r.RunningSummary() == "1.2.0 (2)"
		})
	})

	t.Run("creating the missing Deployment heals the App", func(t *testing.T) {
		healed := ghost
		healed.noDeployment = false
		for _, o := range healed.objects() {
			var err error
			switch o := o.(type) {
			case *appsv1.Deployment:
				_, err = env.cs.AppsV1().Deployments("prod").Create(ctx, o, metav1.CreateOptions{})
			case *appsv1.ReplicaSet:
				_, err = env.cs.AppsV1().ReplicaSets("prod").Create(ctx, o, metav1.CreateOptions{})
			case *corev1.Pod:
				_, err = env.cs.CoreV1().Pods("prod").Create(ctx, o, metav1.CreateOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		p := waitPage(t, c, kubeview.Query{}, "ghost Healthy with 3 ready pods", func(p kubeview.Page) bool {
			r, ok := findRow(p, ghost.key())
			return ok && r.Health.Status == objrules.HealthHealthy && r.RunningSummary() == "1.2.0 (3)"
		})
		r, _ := findRow(p, ghost.key())
		if diff := cmp.Diff(rowView{objrules.HealthHealthy, kubeview.SyncSynced, "1.2.0", "1.2.0 (3)", kubeview.Replicas{Desired: 3, Ready: 3, Updated: 3, Available: 3}, true}, viewOf(r)); diff != "" {
			t.Errorf("row %s mismatch (-want +got):\n%s", ghost.key(), diff)
		}
		checkCounts(t, p, counts(4,
			map[objrules.HealthStatus]int{objrules.HealthHealthy: 3, objrules.HealthDegraded: 1},
			map[kubeview.SyncStatus]int{kubeview.SyncSynced: 3, kubeview.SyncOutOfSync: 1}))
	})

	t.Run("App spec change is seen", func(t *testing.T) {
		u, err := env.dyn.Resource(appcr.Resource).Namespace("stage").Get(ctx, "worker", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedField(u.Object, img("worker", "2.0.0"), "spec", "image"); err != nil {
			t.Fatal(err)
		}
		if _, err := env.dyn.Resource(appcr.Resource).Namespace("stage").Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := waitPage(t, c, kubeview.Query{}, "worker OutOfSync", func(p kubeview.Page) bool {
			r, ok := findRow(p, other.key())
			return ok && r.Sync.Status == kubeview.SyncOutOfSync
		})
		r, _ := findRow(p, other.key())
		if got, want := r.Version, "2.0.0"; got != want {
			t.Errorf("row %s Version = %q, want %q", other.key(), got, want)
		}
	})

	// An App deleted and created again between two passes of the fleet is
	// one update: only its creation time differs.
	t.Run("App creation time change is seen", func(t *testing.T) {
		u, err := env.dyn.Resource(appcr.Resource).Namespace("stage").Get(ctx, "worker", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created := metav1.NewTime(fixT0.Add(24 * time.Hour))
		u.SetCreationTimestamp(created)
		if _, err := env.dyn.Resource(appcr.Resource).Namespace("stage").Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPage(t, c, kubeview.Query{}, "worker Created "+created.UTC().Format(time.RFC3339), func(p kubeview.Page) bool {
			r, ok := findRow(p, other.key())
			return ok && r.Created.Equal(created.Time)
		})
	})

	t.Run("facet counts follow the other filters", func(t *testing.T) {
		all := page(t)
		queries := []kubeview.Query{
			{Namespace: "stage"},
			{Health: objrules.HealthDegraded},
			{Sync: kubeview.SyncSynced, Limit: 1},
			{Search: "nothing-matches"},
			{Sort: kubeview.SortHealth, Offset: 3, Limit: 1},
		}
		for _, q := range queries {
			p, err := c.Applications(q)
			if err != nil {
				t.Fatalf("Applications(%+v) error = %v", q, err)
			}
			if p.Counts.Fleet != all.Counts.Fleet {
				t.Errorf("Applications(%+v).Counts.Fleet = %d, want %d", q, p.Counts.Fleet, all.Counts.Fleet)
			}
			// Each facet counts the rows that pass every other filter.
			facet := func(q kubeview.Query) kubeview.Query { q.Offset, q.Limit, q.Sort = 0, 0, ""; return q }
			hq, sq := facet(q), facet(q)
			hq.Health, sq.Sync = "", ""
			hp, _ := c.Applications(hq)
			sp, _ := c.Applications(sq)
			want := recount(hp.Rows)
			want.Sync = recount(sp.Rows).Sync
			want.Total = p.Counts.Total
			if diff := cmp.Diff(want, nonZero(p.Counts)); diff != "" {
				t.Errorf("Applications(%+v).Counts mismatch (-want +got):\n%s", q, diff)
			}
		}
	})

	t.Run("deleting an App removes its row", func(t *testing.T) {
		if err := env.dyn.Resource(appcr.Resource).Namespace("prod").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		p := waitPage(t, c, kubeview.Query{}, "web gone", func(p kubeview.Page) bool {
			_, ok := findRow(p, web.key())
			return !ok
		})
		checkCounts(t, p, counts(3,
			map[objrules.HealthStatus]int{objrules.HealthHealthy: 3},
			map[kubeview.SyncStatus]int{kubeview.SyncSynced: 2, kubeview.SyncOutOfSync: 1}))
	})

	t.Run("a new App adds a row", func(t *testing.T) {
		fresh := fixApp{ns: "stage", name: "fresh", noDeployment: true}
		if _, err := env.dyn.Resource(appcr.Resource).Namespace("stage").Create(ctx, fresh.appObject(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := waitPage(t, c, kubeview.Query{}, "fresh appears", func(p kubeview.Page) bool {
			_, ok := findRow(p, fresh.key())
			return ok
		})
		checkCounts(t, p, counts(4,
			map[objrules.HealthStatus]int{objrules.HealthHealthy: 3, objrules.HealthMissing: 1},
			map[kubeview.SyncStatus]int{kubeview.SyncSynced: 2, kubeview.SyncOutOfSync: 1, kubeview.SyncUnknown: 1}))
	})
}

// TestWaitForSyncEndsWithContext checks that WaitForSync gives up with its
// context.
func TestWaitForSyncEndsWithContext(t *testing.T) {
	c, err := kubeview.New(newTestClientset(), newTestDynamic(), discardLogger(), kubeview.Options{Namespaces: []string{"prod"}, ProbeInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// Not started: it never syncs.
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := c.WaitForSync(ctx); err == nil {
		t.Errorf("WaitForSync() of a cache never started = nil, want an error")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		ns   []string
	}{
		{"no namespaces", nil},
		{"duplicate namespace", []string{"prod", "prod"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := kubeview.New(newTestClientset(), newTestDynamic(), discardLogger(), kubeview.Options{Namespaces: tt.ns}); err == nil {
				t.Errorf("New(Namespaces: %q) error = nil, want an error", tt.ns)
			}
		})
	}
}
