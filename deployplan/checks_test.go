package deployplan

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hanzoai/deploy-web/envconfig"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	fieldpath "k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	commitA = "1111111111111111111111111111111111111111"
	commitB = "2222222222222222222222222222222222222222"
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
)

// ids writes each blocker as its id, then ":" and its affected list
// (comma-separated) when it has one.
func ids(bs []Blocker) []string {
	out := []string{}
	for _, b := range bs {
		s := b.ID
		if len(b.Affected) > 0 {
			s += ":" + strings.Join(b.Affected, ",")
		}
		out = append(out, s)
	}
	return out
}

func testCatalog(published bool) *Catalog {
	return &Catalog{Commit: commitA, Services: []CatalogService{
		{ID: "api", Image: "registry.example.com/acme/api:" + commitA, Digest: digestA, Published: published},
		{ID: "worker", Image: "registry.example.com/acme/worker", Digest: digestA, Published: true},
	}}
}

func TestSourceChecks(t *testing.T) {
	w := func(image string, env ...Env) []Workload {
		return []Workload{{Kind: "Deployment", Name: "api", Containers: []Container{{Name: "api", Image: image, Env: env}}}}
	}
	mirrors := envconfig.EnvMirrors{Image: []string{"IMAGE"}, Commit: []string{"GIT_COMMIT"}}
	img := "registry.example.com/acme/api:" + commitA
	tests := []struct {
		name      string
		workloads []Workload
		want      []string
	}{
		{"converged", w(img, Env{Name: "IMAGE", Value: img}, Env{Name: "GIT_COMMIT", Value: commitA}), []string{}},
		{"short commit tag", w("registry.example.com/acme/api:1111111"), []string{}},
		{"too short a tag", w("registry.example.com/acme/api:111"), []string{"tag-not-catalog-commit:Deployment/api/api"}},
		{"not in catalog", w("registry.example.com/acme/other:" + commitA), []string{"image-not-in-catalog:Deployment/api/api"}},
		{"docker hub normalisation", w("nginx:" + commitA), []string{"image-not-in-catalog:Deployment/api/api"}},
		{"wrong tag", w("registry.example.com/acme/api:" + commitB), []string{"tag-not-catalog-commit:Deployment/api/api"}},
		{"no tag", w("registry.example.com/acme/api"), []string{"tag-not-catalog-commit:Deployment/api/api"}},
		{"digest differs", w(img + "@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"), []string{"digest-not-catalog-digest:Deployment/api/api"}},
		{"env image mirror wrong", w(img, Env{Name: "IMAGE", Value: "registry.example.com/acme/api:old"}), []string{"env-mirror-image:Deployment/api/api/IMAGE"}},
		{"env commit mirror wrong", w(img, Env{Name: "GIT_COMMIT", Value: commitB}), []string{"env-mirror-commit:Deployment/api/api/GIT_COMMIT"}},
		{"env mirror from a ref", w(img, Env{Name: "GIT_COMMIT", FromRef: true}), []string{"env-mirror-unverifiable:Deployment/api/api/GIT_COMMIT"}},
		{"unrelated env ignored", w(img, Env{Name: "OTHER", Value: "x"}), []string{}},
		{"empty image", w(""), []string{"invalid-image:Deployment/api/api"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(SourceChecks(tt.workloads, testCatalog(true), mirrors))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SourceChecks ids (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("catalog tag not its commit", func(t *testing.T) {
		cat := testCatalog(true)
		cat.Services[0].Image = "registry.example.com/acme/api:v1"
		got := ids(SourceChecks(nil, cat, mirrors))
		if diff := cmp.Diff([]string{"tag-not-catalog-commit:catalog/api"}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func TestArtifactGates(t *testing.T) {
	img := "registry.example.com/acme/api:" + commitA
	api := []Workload{{Kind: "Deployment", Name: "api", Containers: []Container{{Name: "api", Image: img}}}}
	tests := []struct {
		name        string
		workloads   []Workload
		cat         func(*Catalog)
		expected    string
		want        []string
		publish     string
		deploy      string
		unpublished []string
	}{
		{name: "all good", workloads: api, expected: commitA, want: []string{}, publish: "published", deploy: commitA, unpublished: []string{}},
		{name: "unpublished in use", workloads: api, cat: func(c *Catalog) { c.Services[0].Published = false }, expected: commitA,
			want: []string{"unpublished:api"}, publish: "unpublished", deploy: commitA, unpublished: []string{"api"}},
		{name: "unpublished not in use is listed, not blocking", workloads: api, cat: func(c *Catalog) { c.Services[1].Published = false }, expected: commitA,
			want: []string{}, publish: "published", deploy: commitA, unpublished: []string{"worker"}},
		{name: "missing digest", workloads: api, cat: func(c *Catalog) { c.Services[0].Digest = "" }, expected: commitA,
			want: []string{"missing-digest:api"}, publish: "published", deploy: commitA, unpublished: []string{}},
		{name: "bad digest", workloads: api, cat: func(c *Catalog) { c.Services[0].Digest = "sha256:xyz" }, expected: commitA,
			want: []string{"missing-digest:api"}, publish: "published", deploy: commitA, unpublished: []string{}},
		{name: "skeleton workload image", workloads: []Workload{{Kind: "Job", Name: "m", Containers: []Container{{Name: "c", Image: "registry.example.com/acme/skeleton:" + commitA}}}},
			expected: commitA, want: []string{"skeleton-image:Job/m/c"}, publish: "none", deploy: commitA, unpublished: []string{}},
		{name: "skeleton catalog entry", workloads: api, cat: func(c *Catalog) { c.Services[0].Image = "registry.example.com/acme/api:placeholder" }, expected: commitA,
			want: []string{"skeleton-image:catalog/api"}, publish: "published", deploy: commitA, unpublished: []string{}},
		{name: "expected commit differs", workloads: api, expected: commitB,
			want: []string{"catalog-not-expected-commit", "tag-not-expected-commit:Deployment/api/api"}, publish: "published", deploy: commitA, unpublished: []string{}},
		{name: "mixed tags", workloads: append(append([]Workload{}, api...), Workload{Kind: "Deployment", Name: "w", Containers: []Container{{Name: "w", Image: "registry.example.com/acme/worker:" + commitB}}}),
			// The expected commit is the catalog's: SourceChecks reports the
			// tag once (tag-not-catalog-commit), not a second time here.
			expected: commitA, want: []string{}, publish: "published", deploy: "mixed", unpublished: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := testCatalog(true)
			if tt.cat != nil {
				tt.cat(cat)
			}
			plan, bs := ArtifactGates(tt.workloads, cat, tt.expected, []string{"skeleton", "placeholder"})
			if diff := cmp.Diff(tt.want, ids(bs)); diff != "" {
				t.Errorf("blockers (-want +got):\n%s", diff)
			}
			if plan.PublishStatus != tt.publish {
				t.Errorf("PublishStatus = %q, want %q", plan.PublishStatus, tt.publish)
			}
			if plan.DeployCommit != tt.deploy {
				t.Errorf("DeployCommit = %q, want %q", plan.DeployCommit, tt.deploy)
			}
			un := plan.UnpublishedServices
			if un == nil {
				un = []string{}
			}
			if diff := cmp.Diff(tt.unpublished, un); diff != "" {
				t.Errorf("UnpublishedServices (-want +got):\n%s", diff)
			}
		})
	}
}

func newObj(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}}
	if ns != "" {
		u.SetNamespace(ns)
	}
	return u
}

func TestBoundaryCheck(t *testing.T) {
	scope := func(gvk schema.GroupVersionKind) (bool, bool) {
		switch gvk.Kind {
		case "Namespace", "ClusterRole":
			return false, true
		case "Widget":
			return false, false
		}
		return true, true
	}
	objs := []*unstructured.Unstructured{
		newObj("apps/v1", "Deployment", "sample-dev", "ok"),
		newObj("v1", "ConfigMap", "", "defaulted"),
		newObj("v1", "ConfigMap", "other", "elsewhere"),
		newObj("v1", "Namespace", "", "sample-dev"),
		newObj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "admin"),
		newObj("example.com/v1", "Widget", "sample-dev", "w"),
	}
	got := ids(BoundaryCheck(objs, "sample-dev", scope))
	// One blocker per root cause: both cluster-scoped objects in one.
	want := []string{"cluster-scoped:Namespace/sample-dev,ClusterRole/admin", "outside-namespace:ConfigMap/elsewhere", "unknown-kind:Widget/w"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BoundaryCheck (-want +got):\n%s", diff)
	}
	if ns := objs[1].GetNamespace(); ns != "sample-dev" {
		t.Errorf("empty namespace defaulted to %q, want sample-dev", ns)
	}
}

func job(name, image string, suspend bool, uid string) *unstructured.Unstructured {
	u := newObj("batch/v1", "Job", "sample-dev", name)
	u.Object["spec"] = map[string]any{
		"suspend":  suspend,
		"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "run", "image": image}}}},
	}
	if uid != "" {
		u.SetUID(types.UID("uid-" + uid))
	}
	return u
}

func TestJobDecision(t *testing.T) {
	tests := []struct {
		name        string
		desired     *unstructured.Unstructured
		live        *unstructured.Unstructured
		allowlisted bool
		immutable   bool
		want        string
	}{
		{"absent", job("m", "img:2", true, ""), nil, true, false, JobNotFound},
		{"same image", job("m", "img:1", true, ""), job("m", "img:1", true, "1"), true, false, JobNotNeeded},
		{"same image, not allowlisted", job("m", "img:1", true, ""), job("m", "img:1", true, "1"), false, false, JobNotNeeded},
		{"changed, allowlisted, suspended", job("m", "img:2", true, ""), job("m", "img:1", true, "1"), true, true, JobPlanned},
		{"changed, not allowlisted", job("m", "img:2", true, ""), job("m", "img:1", true, "1"), false, true, JobBlockedNotAllowlisted},
		{"changed, live running", job("m", "img:2", true, ""), job("m", "img:1", false, "1"), true, true, JobBlockedNotSuspended},
		{"changed, desired not suspended", job("m", "img:2", false, ""), job("m", "img:1", true, "1"), true, true, JobBlockedNotSuspended},
		{"template changed but not image", job("m", "img:1", true, ""), job("m", "img:1", true, "1"), true, true, JobFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := JobDecision(tt.desired, tt.live, tt.allowlisted, tt.immutable)
			if got.Result != tt.want {
				t.Errorf("JobDecision().Result = %q (%s), want %q", got.Result, got.Reason, tt.want)
			}
			_, blocks := JobBlocker(got, "hint")
			wantBlock := tt.want == JobBlockedNotAllowlisted || tt.want == JobBlockedNotSuspended || tt.want == JobFailed
			if blocks != wantBlock {
				t.Errorf("JobBlocker blocks = %v, want %v", blocks, wantBlock)
			}
		})
	}
	got := JobDecision(job("m", "img:2", true, ""), job("m", "img:1", true, "7"), true, true)
	if got.OldImage != "img:1" || got.NewImage != "img:2" || got.OldUID != "uid-7" || !got.Suspended || got.Namespace != "sample-dev" {
		t.Errorf("JobDecision fields = %+v", got)
	}
}

func TestIsImmutableTemplate(t *testing.T) {
	gk := schema.GroupKind{Group: "batch", Kind: "Job"}
	immutable := apierrors.NewInvalid(gk, "m", fieldpath.ErrorList{fieldpath.Invalid(fieldpath.NewPath("spec", "template"), "x", "field is immutable")})
	other := apierrors.NewInvalid(gk, "m", fieldpath.ErrorList{fieldpath.Required(fieldpath.NewPath("spec", "template", "spec", "containers"), "")})
	tests := []struct {
		err  error
		want bool
	}{
		{immutable, true},
		{other, false},
		{apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "jobs"}, "m", errors.New("conflict")), false},
		{errors.New("spec.template: field is immutable"), false},
	}
	for i, tt := range tests {
		if got := IsImmutableTemplate(tt.err); got != tt.want {
			t.Errorf("%d: IsImmutableTemplate(%v) = %v, want %v", i, tt.err, got, tt.want)
		}
	}
}

func TestObjectAction(t *testing.T) {
	at := func(sec int64) *metav1.Time { tm := metav1.Unix(sec, 0); return &tm }
	fields := func(s string) *metav1.FieldsV1 { return metav1.NewFieldsV1(s) }
	rollout := metav1.ManagedFieldsEntry{Manager: "kubectl-rollout", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: at(20), FieldsType: "FieldsV1", FieldsV1: fields(`{"f:data":{"f:k":{}}}`)}
	ours := metav1.ManagedFieldsEntry{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Time: at(10), FieldsType: "FieldsV1", FieldsV1: fields(`{"f:data":{"f:k":{}}}`)}
	live := newObj("v1", "ConfigMap", "ns", "c")
	live.Object["data"] = map[string]any{"k": "v"}
	live.SetResourceVersion("5")
	live.SetGeneration(2)
	live.SetManagedFields([]metav1.ManagedFieldsEntry{ours, rollout})
	// Another resourceVersion and the apply's own timestamp: nothing
	// written that a user could see.
	same := live.DeepCopy()
	same.SetResourceVersion("6")
	later := ours
	later.Time = at(30)
	same.SetManagedFields([]metav1.ManagedFieldsEntry{rollout, later})
	changed := live.DeepCopy()
	changed.Object["data"] = map[string]any{"k": "w"}
	// kubectl rollout undo set the value deploy-web renders and took it
	// over: the apply only takes back shared ownership, but it writes.
	undone := live.DeepCopy()
	undone.SetManagedFields([]metav1.ManagedFieldsEntry{rollout, {Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Time: at(10), FieldsType: "FieldsV1", FieldsV1: fields(`{}`)}})
	tests := []struct {
		name      string
		live, dry *unstructured.Unstructured
		want      string
	}{
		{"create", nil, same, ActionCreate},
		{"unchanged (resourceVersion and managed-field times differ)", live, same, ActionUnchanged},
		{"update", live, changed, ActionUpdate},
		{"update (ownership only)", undone, live, ActionUpdate},
		{"no dry-run", live, nil, ActionUnknown},
	}
	for _, tt := range tests {
		if got := ObjectAction(tt.live, tt.dry); got != tt.want {
			t.Errorf("ObjectAction(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCheckApplyRequest(t *testing.T) {
	dev := &envconfig.Environment{Name: "dev"}
	prod := &envconfig.Environment{Name: "prod", Protected: true}
	ok := ApplyRequest{Env: "dev", ConfirmEnv: "dev", ConfirmedNonProduction: true}
	tests := []struct {
		name    string
		env     *envconfig.Environment
		req     ApplyRequest
		wantErr string
	}{
		{"confirmed", dev, ok, ""},
		{"protected", prod, ApplyRequest{Env: "prod", ConfirmEnv: "prod", ConfirmedNonProduction: true}, "protected"},
		{"no confirm-env", dev, ApplyRequest{Env: "dev", ConfirmedNonProduction: true}, "--confirm-env=dev"},
		{"wrong confirm-env", dev, ApplyRequest{Env: "dev", ConfirmEnv: "prod", ConfirmedNonProduction: true}, "does not match"},
		{"no non-production confirmation", dev, ApplyRequest{Env: "dev", ConfirmEnv: "dev"}, "--confirmed-non-production"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckApplyRequest(tt.env, tt.req)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckApplyRequest = %v, want nil", err)
				}
				return
			}
			var r *RefusalError
			if !errors.As(err, &r) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckApplyRequest = %v, want a RefusalError containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestConclude(t *testing.T) {
	d := &DeployApply{Objects: []ObjectPlan{{Action: ActionCreate}, {Action: ActionUnchanged}}}
	Conclude(d)
	if d.Conclusion.Status != StatusReady {
		t.Errorf("no blockers: status %q, want ready", d.Conclusion.Status)
	}
	d.RemainingBlockers = []Blocker{{ID: "b", Message: "m", UnblockHint: "h"}, {ID: "b", Message: "m", UnblockHint: "h"}}
	Conclude(d)
	if d.Conclusion.Status != StatusBlocked || len(d.RemainingBlockers) != 1 {
		t.Errorf("blockers: status %q with %d blockers, want blocked with 1 (deduplicated)", d.Conclusion.Status, len(d.RemainingBlockers))
	}
}

func TestParseImage(t *testing.T) {
	tests := []struct {
		in                string
		repo, tag, digest string
	}{
		{"nginx", "index.docker.io/library/nginx", "", ""},
		{"nginx:1.2", "index.docker.io/library/nginx", "1.2", ""},
		{"127.0.0.1:5000/acme/api:abc@" + digestA, "127.0.0.1:5000/acme/api", "abc", digestA},
		{"ghcr.io/acme/api@" + digestA, "ghcr.io/acme/api", "", digestA},
		{"localhost:5000/web", "localhost:5000/web", "", ""},
		{"localhost:5000/web:1.0.0", "localhost:5000/web", "1.0.0", ""},
		{"ghcr.io/acme/web:1.0.0@" + digestA, "ghcr.io/acme/web", "1.0.0", digestA},
		{"acme/web:v1.2.3", "index.docker.io/acme/web", "v1.2.3", ""},
	}
	for _, tt := range tests {
		got, err := ParseImage(tt.in)
		if err != nil {
			t.Fatalf("ParseImage(%q): %v", tt.in, err)
		}
		if got.Repository != tt.repo || got.Tag != tt.tag || got.Digest != tt.digest {
			t.Errorf("ParseImage(%q) = %+v, want %s %s %s", tt.in, got, tt.repo, tt.tag, tt.digest)
		}
	}
	for _, bad := range []string{"", "UPPER/web:1", "web:1:2"} {
		if got, err := ParseImage(bad); err == nil {
			t.Errorf("ParseImage(%q) = %+v, want an error", bad, got)
		}
	}
}
