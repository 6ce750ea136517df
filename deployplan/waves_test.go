package deployplan

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/deploy-web/deployplan/helmrender"
)

// waveObj is an object of kind named name, with the given annotations.
func waveObj(apiVersion, kind, name string, ann map[string]string) *unstructured.Unstructured {
	u := labelled(apiVersion, kind, name, nil)
	u.SetNamespace("shop")
	if ann != nil {
		u.SetAnnotations(ann)
	}
	return u
}

func waveAnn(n string) map[string]string { return map[string]string{WaveAnnotation: n} }

func refs(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

// TestSortForApplyKindOrder: without annotations, objects apply in the
// one kind order (CRDs, Namespaces, RBAC and ServiceAccounts, ConfigMaps
// and Secrets, storage, Services, workloads, the rest), the render's
// order kept among objects of one group.
func TestSortForApplyKindOrder(t *testing.T) {
	objs := []*unstructured.Unstructured{
		waveObj("networking.k8s.io/v1", "Ingress", "web", nil),
		waveObj("apps/v1", "Deployment", "api", nil),
		waveObj("batch/v1", "Job", "migrate", nil),
		waveObj("v1", "Service", "api", nil),
		waveObj("v1", "ConfigMap", "b", nil),
		waveObj("rbac.authorization.k8s.io/v1", "RoleBinding", "rb", nil),
		waveObj("v1", "Secret", "a", nil),
		waveObj("v1", "ServiceAccount", "sa", nil),
		waveObj("v1", "PersistentVolumeClaim", "data", nil),
		waveObj("v1", "Namespace", "ns", nil),
		waveObj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "crd", nil),
		waveObj("hanzo.ai/v1", "App", "shop", nil),
	}
	sortForApply(objs, nil)
	want := []string{"CustomResourceDefinition/crd", "Namespace/ns", "RoleBinding/rb", "ServiceAccount/sa", "ConfigMap/b", "Secret/a",
		"PersistentVolumeClaim/data", "Service/api", "Deployment/api", "Job/migrate", "Ingress/web", "App/shop"}
	if diff := cmp.Diff(want, refs(objs)); diff != "" {
		t.Errorf("sortForApply order (-want +got):\n%s", diff)
	}
}

// TestSortForApplyWaves: the wave annotation orders objects between the
// kind groups (a ConfigMap of wave 1 after a Deployment of wave 0, a
// Service of wave -1 before everything of wave 0), kind order inside a
// wave; Helm hook phases come before waves.
func TestSortForApplyWaves(t *testing.T) {
	objs := []*unstructured.Unstructured{
		waveObj("v1", "ConfigMap", "late", waveAnn("1")),
		waveObj("apps/v1", "Deployment", "db", nil),
		waveObj("v1", "ConfigMap", "db", waveAnn("0")),
		waveObj("v1", "Service", "early", waveAnn("-1")),
		waveObj("apps/v1", "Deployment", "app", waveAnn("1")),
		waveObj("v1", "ConfigMap", "last", waveAnn("10")),
		waveObj("batch/v1", "Job", "pre", map[string]string{helmrender.HookAnnotation: "pre-install", WaveAnnotation: "5"}),
		waveObj("batch/v1", "Job", "post", map[string]string{helmrender.HookAnnotation: "post-upgrade"}),
	}
	sortForApply(objs, nil)
	want := []string{"Job/pre", "Service/early", "ConfigMap/db", "Deployment/db", "ConfigMap/late", "Deployment/app", "ConfigMap/last", "Job/post"}
	if diff := cmp.Diff(want, refs(objs)); diff != "" {
		t.Errorf("sortForApply order (-want +got):\n%s", diff)
	}
	got := wavePlans(wavesOf(objs, nil))
	wantPlans := []WavePlan{
		{Wave: 5, Hook: "pre", Objects: []string{"Job/pre"}, Workloads: []string{}},
		{Wave: -1, Objects: []string{"Service/early"}, Workloads: []string{}},
		{Wave: 0, Objects: []string{"ConfigMap/db", "Deployment/db"}, Workloads: []string{"Deployment/db"}},
		{Wave: 1, Objects: []string{"ConfigMap/late", "Deployment/app"}, Workloads: []string{"Deployment/app"}},
		{Wave: 10, Objects: []string{"ConfigMap/last"}, Workloads: []string{}},
		{Wave: 0, Hook: "post", Objects: []string{"Job/post"}, Workloads: []string{}},
	}
	if diff := cmp.Diff(wantPlans, got); diff != "" {
		t.Errorf("wavePlans (-want +got):\n%s", diff)
	}
}

// TestWavesOfSteps: a wave is written kind group by kind group, the
// objects of one group in one step.
func TestWavesOfSteps(t *testing.T) {
	objs := []*unstructured.Unstructured{
		waveObj("v1", "ConfigMap", "a", nil), waveObj("v1", "Secret", "b", nil),
		waveObj("v1", "Service", "c", nil), waveObj("apps/v1", "Deployment", "d", nil),
		waveObj("apps/v1", "StatefulSet", "e", nil), waveObj("v1", "ConfigMap", "f", waveAnn("2")),
	}
	sortForApply(objs, nil)
	ws := wavesOf(objs, nil)
	var got [][][]string
	for _, w := range ws {
		var steps [][]string
		for _, s := range w.steps {
			steps = append(steps, refs(s))
		}
		got = append(got, steps)
	}
	want := [][][]string{
		{{"ConfigMap/a", "Secret/b"}, {"Service/c"}, {"Deployment/d", "StatefulSet/e"}},
		{{"ConfigMap/f"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("wavesOf steps (-want +got):\n%s", diff)
	}
	if got := wavesOf(nil, nil); len(got) != 0 {
		t.Errorf("wavesOf(nil, nil) = %v, want none", got)
	}
}

// TestWaveCheck: a wave annotation that is not an integer, or beyond
// MaxWave either side, is a plan blocker naming the object; integers in
// range are not.
func TestWaveCheck(t *testing.T) {
	tests := []struct {
		value string
		want  string // in the message; "" for no blocker
	}{
		{"0", ""}, {"-3", ""}, {"1000", ""}, {"-1000", ""}, {"+2", ""},
		{"1.5", "not an integer"}, {"one", "not an integer"}, {"", "not an integer"}, {" 1", "not an integer"},
		{"1001", "out of range"}, {"-1001", "out of range"}, {"99999999999999999999", "not an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			bs := WaveCheck([]*unstructured.Unstructured{waveObj("v1", "ConfigMap", "fine", nil), waveObj("apps/v1", "Deployment", "api", waveAnn(tt.value))})
			if tt.want == "" {
				if len(bs) != 0 {
					t.Fatalf("WaveCheck(%q) = %+v, want no blocker", tt.value, bs)
				}
				return
			}
			if len(bs) != 1 || bs[0].ID != "wave-annotation" || !strings.Contains(bs[0].Message, "Deployment/api") || !strings.Contains(bs[0].Message, tt.want) {
				t.Fatalf("WaveCheck(%q) = %+v, want one wave-annotation blocker naming Deployment/api: %s", tt.value, bs, tt.want)
			}
			if len(bs[0].Affected) != 1 || bs[0].Affected[0] != "Deployment/api" {
				t.Errorf("affected = %v, want [Deployment/api]", bs[0].Affected)
			}
		})
	}
	long := strings.Repeat("x", 500)
	bs := WaveCheck([]*unstructured.Unstructured{waveObj("v1", "ConfigMap", "c", waveAnn(long))})
	if len(bs) != 1 || len(bs[0].Message) > 200 {
		t.Errorf("a long annotation's blocker = %+v, want one, its value cut", bs)
	}
}

// TestPruneOrder: orphans are deleted in the reverse of the apply's kind
// order.
func TestPruneOrder(t *testing.T) {
	orphans := []Orphan{{Kind: "ConfigMap", Name: "c"}, {Kind: "Service", Name: "s"}, {Kind: "Deployment", Name: "d"}, {Kind: "Ingress", Name: "i"}, {Kind: "ServiceAccount", Name: "sa"}}
	var got []string
	for _, i := range pruneOrder(orphans) {
		got = append(got, orphans[i].Kind)
	}
	want := []string{"Ingress", "Deployment", "Service", "ConfigMap", "ServiceAccount"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pruneOrder (-want +got):\n%s", diff)
	}
}

// TestReportListsWaves: the terminal summary and the Markdown list the
// waves with their results; a single wave that applied is not listed in
// the summary.
func TestReportListsWaves(t *testing.T) {
	rep := &Report{}
	rep.DeployApply.Waves = []WavePlan{
		{Wave: 0, Objects: []string{"Deployment/db"}, Workloads: []string{"Deployment/db"}, Result: WaveUnhealthy, Message: "not healthy after 5s: Deployment/db is Progressing"},
		{Wave: 1, Objects: []string{"ConfigMap/app"}, Result: WaveNotStarted, Message: "wave 0 did not get healthy"},
	}
	s := rep.Summary()
	for _, want := range []string{"wave 0: Deployment/db (then waits for Deployment/db) -> unhealthy: not healthy after 5s", "wave 1: ConfigMap/app -> not-started: wave 0 did not get healthy"} {
		if !strings.Contains(s, want) {
			t.Errorf("Summary() lacks %q:\n%s", want, s)
		}
	}
	md := rep.Markdown()
	if !strings.Contains(md, "## Waves") || !strings.Contains(md, "| wave 1 | ConfigMap/app | – | not-started: wave 0 did not get healthy |") {
		t.Errorf("Markdown() lacks the waves:\n%s", md)
	}
	one := &Report{}
	one.DeployApply.Waves = []WavePlan{{Wave: 0, Objects: []string{"ConfigMap/a"}, Result: WaveApplied}}
	if s := one.Summary(); strings.Contains(s, "wave 0") {
		t.Errorf("Summary() of one applied wave lists it:\n%s", s)
	}
}

// TestRenewFreshShared: writes that ask for a renewal while one is under
// way share the next one: each gets the result of a renewal that started
// after it asked, and six writes make two renewals, not six.
func TestRenewFreshShared(t *testing.T) {
	kube := fake.NewClientset(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: LockName, Namespace: "shop"}})
	var mu sync.Mutex
	updates := 0
	first, release := make(chan struct{}), make(chan struct{})
	kube.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		updates++
		n := updates
		mu.Unlock()
		if n == 1 {
			close(first)
			<-release
		}
		return false, nil, nil
	})
	cur, err := kube.CoordinationV1().Leases("shop").Get(context.Background(), LockName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l := &lease{kube: kube, ns: "shop", holder: "me", duration: time.Minute, cur: cur}
	ctx := context.Background()
	errs := make(chan error, 6)
	go func() { errs <- l.renewFresh(ctx, time.Now) }()
	<-first // the first renewal is under way: the next five must wait for another
	for range 5 {
		go func() { errs <- l.renewFresh(ctx, time.Now) }()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		l.sharedMu.Lock()
		n := len(l.waiting)
		l.sharedMu.Unlock()
		if n == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers queued, want 5", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	for range 6 {
		if err := <-errs; err != nil {
			t.Errorf("renewFresh() = %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if updates != 2 {
		t.Errorf("%d Lease updates for 6 writes, want 2 (one under way, one shared by the five that asked during it)", updates)
	}
}
