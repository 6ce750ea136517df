package handlers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/diffrender"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/web/templates"
)

func TestIncludeDrift(t *testing.T) {
	tests := []struct {
		param        string
		drifted, def bool
		want         bool
	}{
		{"", true, true, true},
		{"", true, false, false},
		{"", false, true, false},
		{"1", true, false, true},
		{"true", true, false, true},
		{"1", false, true, false}, // nothing to include
		{"0", true, true, false},
		{"false", true, true, false},
		{"<script>", true, true, true}, // anything else: the default
		{"<script>", true, false, false},
	}
	for _, tt := range tests {
		if got := includeDrift(tt.param, tt.drifted, tt.def); got != tt.want {
			t.Errorf("includeDrift(%q, %v, %v) = %v, want %v", tt.param, tt.drifted, tt.def, got, tt.want)
		}
	}
}

// driftedServer serves App web in namespace apps whose Deployment was
// edited by hand three times: kubectl scale took replicas from 2 to 5 (a
// field the desired state sets), kubectl label added tier=front and kubectl
// annotate a hostile note (fields it does not set). managedFields say who
// did what, as the API server records it.
func driftedServer(t *testing.T) *testServer {
	t.Helper()
	desired := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "apps", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"replicas": 2,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "ghcr.io/acme/web:1.0.0"}}},
			},
		},
	}
	lastApplied, _ := json.Marshal(desired)
	when := metav1.Now()
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: "dep-web",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "hanzo.ai/v1", Kind: "App", Name: "web", UID: "app-web", Controller: ptr.To(true)}},
			Labels:          map[string]string{"app": "web", "tier": "front"},
			Annotations:     map[string]string{appcr.LastAppliedAnnotation: string(lastApplied), "note": "<script>alert(1)</script>"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: objrules.DefaultOperatorManager, Operation: metav1.ManagedFieldsOperationUpdate, Time: &when, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{"f:app":{}}},"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`)},
				{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "scale", Time: &when, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)},
				{Manager: "kubectl-label", Operation: metav1.ManagedFieldsOperationUpdate, Time: &when, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:tier":{}}}}`)},
				{Manager: "kubectl-annotate", Operation: metav1.ManagedFieldsOperationUpdate, Time: &when, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:note":{}}}}`)},
			}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](5),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "ghcr.io/acme/web:1.0.0"}}},
			},
		},
	}
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": "web", "namespace": "apps", "uid": "app-web"},
		"spec":     map[string]any{"image": "ghcr.io/acme/web:1.0.0"},
	}}
	return realCacheServer(t, appcr.Resource, []runtime.Object{dep}, []runtime.Object{app})
}

// diffCells returns the text of the split diff's rows as "op|left|right".
func diffCells(t *testing.T, n *html.Node) []string {
	t.Helper()
	var out []string
	for _, tr := range byTag(oneByTestID(t, n, "diff"), "tr") {
		op := attr(tr, "data-op")
		if op == "" || op == "equal" {
			continue
		}
		var left, right string
		for _, td := range byTag(tr, "td") {
			switch {
			case strings.Contains(attr(td, "class"), "left"):
				left = text(td)
			case strings.Contains(attr(td, "class"), "right"):
				right = text(td)
			}
		}
		out = append(out, op+"|"+left+"|"+right)
	}
	return out
}

// TestResourceDiffDirectionAndDrift: the panel's diff reads live (left,
// before) to desired (right, after); the fields changed outside the
// operator show on the live side by default, and ?drift=0 (the toggle)
// leaves them out; the toggles keep the choice in their links, and an
// HTMX request gets the panel alone.
func TestResourceDiffDirectionAndDrift(t *testing.T) {
	ts := driftedServer(t)
	base := "/clusters/in-cluster/apps/apps/web/resource/apps:Deployment:apps:web?tab=diff"

	body := ts.get(t, base, nil).Body.String()
	if strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the hand-written annotation is not escaped in the diff")
	}
	page := parseHTML(t, body)
	heads := byTag(oneByTestID(t, page, "diff"), "th")
	if len(heads) != 2 || text(heads[0]) != "Live" || text(heads[1]) != "Desired" {
		t.Errorf("diff columns = %v, want Live, Desired", heads)
	}
	want := []string{"delete|annotations:|", "delete|note: <script>alert(1)</script>|", "delete|tier: front|", "change|replicas: 5|replicas: 2"}
	if diff := cmp.Diff(want, diffCells(t, page)); diff != "" {
		t.Errorf("default diff rows mismatch (-want +got):\n%s", diff)
	}
	toggle := oneByTestID(t, page, "diff-drift")
	if attr(toggle, "aria-pressed") != "true" || !strings.Contains(attr(toggle, "hx-get"), "drift=0") {
		t.Errorf("drift toggle = pressed %q, hx-get %q; want pressed, linking to drift=0", attr(toggle, "aria-pressed"), attr(toggle, "hx-get"))
	}
	if split := oneByTestID(t, page, "diff-split"); !strings.Contains(attr(split, "href"), "drift=1") {
		t.Errorf("side-by-side link %q forgets the drift choice", attr(split, "href"))
	}
	oneByTestID(t, page, "diff-drift-note")

	// The toggle off: the desired fields only; an HTMX request for the
	// panel gets the panel alone.
	w := ts.get(t, base+"&drift=0", map[string]string{"HX-Request": "true", "HX-Target": "panel"})
	frag := parseHTML(t, w.Body.String())
	if len(byTestID(frag, "tree")) != 0 || len(byTestID(frag, "resource-panel")) != 1 {
		t.Errorf("HTMX panel request: want the panel fragment alone")
	}
	if diff := cmp.Diff([]string{"change|replicas: 5|replicas: 2"}, diffCells(t, frag)); diff != "" {
		t.Errorf("diff rows with drift=0 mismatch (-want +got):\n%s", diff)
	}
	if toggle := oneByTestID(t, frag, "diff-drift"); attr(toggle, "aria-pressed") != "false" || !strings.Contains(attr(toggle, "href"), "drift=1") {
		t.Errorf("drift toggle with drift=0 = pressed %q, href %q; want not pressed, linking to drift=1", attr(toggle, "aria-pressed"), attr(toggle, "href"))
	}
	if len(byTestID(frag, "diff-drift-note")) != 0 {
		t.Error("drift note shown with drift=0")
	}
	// The tabs keep the choice: Summary and back to Diff shows the same diff.
	for _, tab := range []string{"summary", "manifest", "diff", "events"} {
		link := oneByTestID(t, frag, "tab-"+tab)
		if !strings.Contains(attr(link, "href"), "drift=0") || !strings.Contains(attr(link, "hx-get"), "drift=0") {
			t.Errorf("tab %s with drift=0 links to href %q, hx-get %q; want drift=0 kept", tab, attr(link, "href"), attr(link, "hx-get"))
		}
	}

	// The inline view reads the same way: "−" live, "+" desired.
	inline := ts.get(t, base+"&mode=unified", nil).Body.String()
	if !strings.Contains(inline, "replicas: 5") || strings.Index(inline, "replicas: 5") > strings.Index(inline, "replicas: 2") {
		t.Errorf("inline diff: want the live replicas: 5 before the desired replicas: 2")
	}

	// The JSON: desired fields only unless ?drift=true; unified text from
	// live ("-") to desired ("+").
	for _, tt := range []struct {
		query      string
		wantDrift  bool
		wantInText []string
	}{
		{"", false, []string{"-  replicas: 5\n+  replicas: 2\n"}},
		{"?drift=true", true, []string{"-    tier: front\n", "-  replicas: 5\n+  replicas: 2\n"}},
	} {
		var got resourceResponse
		w := ts.get(t, "/v1/deploy/web/resource/apps:Deployment:apps:web"+tt.query, nil)
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("GET resource%s = %d %s", tt.query, w.Code, w.Body)
		}
		if got.Diff.IncludesDrift != tt.wantDrift || strings.Contains(got.Diff.Unified, "tier") != tt.wantDrift {
			t.Errorf("resource%s: includesDrift %v, unified %q; want drift %v", tt.query, got.Diff.IncludesDrift, got.Diff.Unified, tt.wantDrift)
		}
		for _, s := range tt.wantInText {
			if !strings.Contains(got.Diff.Unified, s) {
				t.Errorf("resource%s: unified %q lacks %q", tt.query, got.Diff.Unified, s)
			}
		}
		if len(got.Drift) != 3 {
			t.Errorf("resource%s: drift = %+v, want replicas, the label and the annotation", tt.query, got.Drift)
		}
	}
	if w := ts.get(t, "/v1/deploy/web/resource/apps:Deployment:apps:web", nil); w.Code != http.StatusOK {
		t.Errorf("GET resource = %d", w.Code)
	}
}

// TestChangeRows: each planned object gets its diff (or none), in the one
// direction: live on the left, the planned manifest on the right.
func TestChangeRows(t *testing.T) {
	d := diffrender.Compute("mode: old\n", "mode: new\n")
	objs := []deployplan.ObjectPlan{
		{Kind: "ConfigMap", Namespace: "dev", Name: "settings", Action: "update"},
		{Kind: "Secret", Namespace: "dev", Name: "creds", Action: "update"},
		{Kind: "ConfigMap", Namespace: "dev", Name: "nodiff", Action: "create"},
		{Kind: "ConfigMap", Namespace: "prod", Name: "settings", Action: "blocked"},
	}
	diffs := []envrun.ObjectDiff{
		{Kind: "ConfigMap", Namespace: "dev", Name: "settings", Added: 1, Removed: 1, Hunks: d.Hunks(3), Direction: envrun.DirectionLiveDesired},
		{Kind: "Secret", Namespace: "dev", Name: "creds", Hidden: true},
		{Kind: "ConfigMap", Namespace: "prod", Name: "settings", Error: "outside the environment's apply boundary: not read"},
	}
	rows := changeRows(objs, diffs)
	if len(rows) != 4 {
		t.Fatalf("changeRows = %d rows, want 4", len(rows))
	}
	v := rows[0].Diff.View
	if v.Before != "Live" || v.After != "Planned" || v.Added != 1 || v.Removed != 1 || len(v.Hunks) != 1 {
		t.Fatalf("settings diff = %+v, want Live -> Planned, +1 -1, one hunk", v)
	}
	wantRow := templates.DiffRow{Op: "change", LeftNum: 1, LeftText: "mode: old", RightNum: 1, RightText: "mode: new"}
	if diff := cmp.Diff([]templates.DiffRow{wantRow}, v.Hunks[0].Rows); diff != "" {
		t.Errorf("settings rows mismatch (-want +got):\n%s", diff)
	}
	if r := rows[1].Diff; r == nil || !r.Hidden || len(r.View.Hunks) != 0 {
		t.Errorf("secret row = %+v, want hidden without rows", r)
	}
	if rows[2].Diff != nil {
		t.Errorf("object without a diff = %+v, want nil", rows[2].Diff)
	}
	if r := rows[3].Diff; r == nil || r.Error == "" {
		t.Errorf("blocked object = %+v, want its error", r)
	}
}
