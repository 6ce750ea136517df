package deployplan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestChanges(t *testing.T) {
	deployment := func(image, level string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "podinfo", "namespace": "dev", "resourceVersion": "7",
				"annotations": map[string]any{"example.com/owner": "team-a"}},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "podinfo", "image": image, "env": []any{
					map[string]any{"name": "PODINFO_UI_COLOR", "value": "#34577c"},
					map[string]any{"name": "LOG_LEVEL", "value": level},
				}},
			}}}},
			"status": map[string]any{"replicas": int64(2)},
		}}
	}
	live := deployment("ghcr.io/stefanprodan/podinfo:6.5.0", "info")
	after := deployment("ghcr.io/stefanprodan/podinfo:6.5.1", "debug")
	after.SetResourceVersion("8")
	unstructured.SetNestedField(after.Object, "team-b", "metadata", "annotations", "example.com/owner")
	unstructured.SetNestedField(after.Object, int64(3), "status", "replicas")

	got, omitted := Changes(live, after)
	want := []Change{
		{Path: `metadata.annotations["example.com/owner"]`, Old: "team-a", New: "team-b"},
		{Path: "spec.template.spec.containers[name=podinfo].env[name=LOG_LEVEL].value", Old: "info", New: "debug"},
		{Path: "spec.template.spec.containers[name=podinfo].image", Old: "ghcr.io/stefanprodan/podinfo:6.5.0", New: "ghcr.io/stefanprodan/podinfo:6.5.1"},
	}
	if diff := cmp.Diff(want, got); diff != "" || omitted != 0 {
		t.Errorf("Changes(tag and env var) (-want +got):\n%s omitted %d", diff, omitted)
	}
	if got, _ := Changes(live, live.DeepCopy()); len(got) != 0 {
		t.Errorf("Changes(unchanged) = %v, want none", got)
	}

	// An added env var is one change, its value compact JSON; a value past
	// MaxChangeValue is cut.
	added := live.DeepCopy()
	cs, _, _ := unstructured.NestedSlice(added.Object, "spec", "template", "spec", "containers")
	c := cs[0].(map[string]any)
	c["env"] = append(c["env"].([]any), map[string]any{"name": "BIG", "value": strings.Repeat("x", 500)})
	unstructured.SetNestedSlice(added.Object, cs, "spec", "template", "spec", "containers")
	got, _ = Changes(live, added)
	if len(got) != 1 || got[0].Path != "spec.template.spec.containers[name=podinfo].env[name=BIG]" || got[0].Old != "" ||
		!strings.HasPrefix(got[0].New, `{"name":"BIG"`) || len(got[0].New) > MaxChangeValue+len("…") {
		t.Errorf("Changes(an added env var) = %+v", got)
	}

	// A hostile value (terminal escapes, a newline) and a hostile list
	// name come out quoted.
	hostile := live.DeepCopy()
	cs, _, _ = unstructured.NestedSlice(hostile.Object, "spec", "template", "spec", "containers")
	c = cs[0].(map[string]any)
	c["env"] = []any{map[string]any{"name": "PODINFO_UI_COLOR", "value": "\x1b[2J\nREADY"}, map[string]any{"name": "X\x1b[1m", "value": "1"}, map[string]any{"name": "LOG_LEVEL", "value": "info"}}
	unstructured.SetNestedSlice(hostile.Object, cs, "spec", "template", "spec", "containers")
	got, _ = Changes(live, hostile)
	for _, ch := range got {
		if strings.ContainsAny(ch.Path+ch.Old+ch.New, "\x1b\n") {
			t.Errorf("Changes(hostile) = %+v, carries a control character", ch)
		}
	}
	if len(got) != 2 || got[1].New != `"\x1b[2J\nREADY"` || !strings.Contains(got[0].Path, `[name="X\x1b[1m"]`) {
		t.Errorf("Changes(hostile) = %+v, want both quoted", got)
	}

	// Many changes: MaxChanges kept, the rest counted.
	cm := func(n int, v string) *unstructured.Unstructured {
		u := newObj("v1", "ConfigMap", "dev", "big")
		data := map[string]any{}
		for i := 0; i < n; i++ {
			data[strings.Repeat("k", 1)+string(rune('a'+i%26))+strings.Repeat("z", i/26)] = v
		}
		u.Object["data"] = data
		return u
	}
	got, omitted = Changes(cm(30, "1"), cm(30, "2"))
	if len(got) != MaxChanges || omitted != 10 {
		t.Errorf("Changes(30 changed keys) = %d changes, %d omitted; want %d and 10", len(got), omitted, MaxChanges)
	}
}

// TestChangesOwnership: after kubectl rollout undo put back the values
// deploy-web renders, the only change is the fields deploy-web takes back.
func TestChangesOwnership(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	rollout := entry("kubectl-rollout", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{}}}}}}}`)
	live := newObj("apps/v1", "Deployment", "dev", "app")
	live.SetManagedFields([]metav1.ManagedFieldsEntry{entry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:replicas":{}}}`), rollout})
	after := live.DeepCopy()
	after.SetManagedFields([]metav1.ManagedFieldsEntry{entry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{}}}}}}}`), rollout})
	got, _ := Changes(live, after)
	want := []Change{{Path: "managedFields[deploy-web (Apply, apps/v1)]", Old: "", New: "spec.template.spec.containers[name=app].image"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Changes(ownership only) (-want +got):\n%s", diff)
	}
	if a := ObjectAction(live, after); a != ActionUpdate {
		t.Errorf("ObjectAction(ownership only) = %q, want update", a)
	}
}

// TestChangesSecret: a Secret's values are one change, named by what is
// known of them; never a key or a value.
func TestChangesSecret(t *testing.T) {
	secret := func(ann map[string]string) *unstructured.Unstructured {
		u := newObj("v1", "Secret", "dev", "token")
		u.SetLabels(map[string]string{"app": "api"})
		if ann != nil {
			u.SetAnnotations(ann)
		}
		return u
	}
	applied := secret(map[string]string{SecretHashAnnotation: "sha256:" + strings.Repeat("1", 64)})
	rendered := secret(map[string]string{SecretHashAnnotation: "sha256:" + strings.Repeat("2", 64)})
	patched := secret(map[string]string{SecretWrittenByAnnotation: "kubectl-patch"})
	sameSecond := secret(map[string]string{SecretWrittenByAnnotation: "kubectl-edit", SecretAppliedAtAnnotation: "2026-12-02T01:00:00Z"})
	sameSecondAfter := secret(map[string]string{SecretWrittenByAnnotation: "kubectl-edit", SecretAppliedAtAnnotation: "2026-12-02T02:00:00Z"})
	if a := ObjectAction(sameSecond, sameSecondAfter); a != ActionUpdate {
		t.Errorf("ObjectAction(a Secret the dry-run writes) = %q, want update", a)
	}
	if a := ObjectAction(sameSecond, sameSecond.DeepCopy()); a != ActionUnchanged {
		t.Errorf("ObjectAction(a Secret the dry-run leaves) = %q, want unchanged", a)
	}
	relabeled := applied.DeepCopy()
	relabeled.SetLabels(map[string]string{"app": "api", "tier": "x"})
	tests := []struct {
		name        string
		live, after *unstructured.Unstructured
		want        []Change
	}{
		{"unchanged", applied, applied.DeepCopy(), nil},
		{"new values", applied, rendered, []Change{{Path: "data", Old: "values of another render (their hash differs)", New: "the rendered values (compared by hash, never read)"}}},
		{"written by hand", patched, applied, []Change{{Path: "data", Old: "values written by kubectl-patch after deploy-web's last apply", New: "the rendered values (compared by hash, never read)"}}},
		{"never applied", secret(nil), applied, []Change{{Path: "data", Old: "values not written by deploy-web", New: "the rendered values (compared by hash, never read)"}}},
		{"a label", applied, relabeled, []Change{{Path: "metadata.labels.tier", Old: "", New: "x"}}},
		// Written by hand within the second of the plan: the writer is
		// still the other manager (a tie), but the dry-run moved
		// deploy-web's write time, so the apply writes.
		{"written by hand this very second", sameSecond, sameSecondAfter, []Change{{Path: "data", Old: "values written by kubectl-edit after deploy-web's last apply", New: "the rendered values (compared by hash, never read)"}}},
	}
	for _, tt := range tests {
		got, _ := Changes(tt.live, tt.after)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Changes(%s) (-want +got):\n%s", tt.name, diff)
		}
		for _, c := range got {
			if strings.Contains(c.Old+c.New, "sha256:") {
				t.Errorf("Changes(%s) carries a hash: %+v", tt.name, c)
			}
		}
	}
}

// TestChangesInSummaryAndMarkdown: the terminal summary and the Markdown
// show each change as old -> new.
func TestChangesInSummaryAndMarkdown(t *testing.T) {
	r := sampleReport()
	r.DeployApply.Objects[0].Changes = []Change{{Path: "spec.template.spec.containers[name=api].image", Old: "x:6.5.0", New: "x:6.5.1"}, {Path: "metadata.labels.new", New: "y"}}
	r.DeployApply.Objects[0].ChangesOmitted = 3
	sum := r.Summary()
	for _, want := range []string{"update Deployment/api:", "spec.template.spec.containers[name=api].image: x:6.5.0 -> x:6.5.1", "metadata.labels.new: – -> y", "(3 more changed field(s)"} {
		if !strings.Contains(sum, want) {
			t.Errorf("Summary() lacks %q:\n%s", want, sum)
		}
	}
	md := r.Markdown()
	for _, want := range []string{"## Changes", "| Deployment/api | `spec.template.spec.containers[name=api].image` | `x:6.5.0` | `x:6.5.1` |", "| Deployment/api | 3 more |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown() lacks %q:\n%s", want, md)
		}
	}
	b, _ := r.JSON()
	if vs := ValidateReport(b); len(vs) != 0 {
		t.Errorf("ValidateReport(with changes) = %v, want none", vs)
	}
}

// TestHeadlineCountsOrphans: the conclusion and the summary's object line
// count the orphans a plan found.
func TestHeadlineCountsOrphans(t *testing.T) {
	r := &Report{}
	d := &r.DeployApply
	d.Objects = []ObjectPlan{{Kind: "Deployment", Name: "api", Action: ActionUnchanged}}
	d.Orphans = []Orphan{{Kind: "ConfigMap", Name: "old", Hint: "h"}, {Kind: "Service", Name: "old", Hint: "h"}}
	Conclude(d)
	if want := "ready: 0 of 1 object(s) would change, 0 template Job(s) would be replaced; 2 orphan(s)"; !strings.HasPrefix(d.Conclusion.Summary, want) {
		t.Errorf("Conclude(2 orphans) summary = %q, want it to start %q", d.Conclusion.Summary, want)
	}
	if sum := r.Summary(); !strings.Contains(sum, "objects: 1 (1 unchanged); orphans: 2\n") {
		t.Errorf("Summary() object line lacks the orphans:\n%s", sum)
	}
}

// TestChangesNewEnvVarIsOneChange: an env var the render adds is one
// change; deploy-web's own entry taking its fields is not a second
// (truncated) managedFields line, and ownership comes after the fields.
func TestChangesNewEnvVarIsOneChange(t *testing.T) {
	entry := func(fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	withEnv := func(names ...string) *unstructured.Unstructured {
		u := newObj("apps/v1", "Deployment", "dev", "app")
		var env []any
		for _, n := range names {
			env = append(env, map[string]any{"name": n, "value": "1"})
		}
		u.Object["spec"] = map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "env": env}}}}}
		return u
	}
	envFields := func(names ...string) string {
		var parts []string
		for _, n := range names {
			parts = append(parts, `"k:{\"name\":\"`+n+`\"}":{".":{},"f:name":{},"f:value":{}}`)
		}
		return `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:name":{},"f:env":{` + strings.Join(parts, ",") + `}}}}}}}`
	}
	live, after := withEnv("A"), withEnv("A", "B")
	live.SetManagedFields([]metav1.ManagedFieldsEntry{entry(envFields("A"))})
	after.SetManagedFields([]metav1.ManagedFieldsEntry{entry(envFields("A", "B"))})
	got, _ := Changes(live, after)
	if len(got) != 1 || !strings.Contains(got[0].Path, "env[name=B]") {
		t.Errorf("Changes(new env var) = %+v, want the one env change and no managedFields line", got)
	}
}

// TestChangesFormatCharacters: a value, a list element's name, an added
// object (compact JSON) and a field manager from the cluster that carry
// U+202E (or a zero-width character) come out with it escaped, so a
// change reads as it is written.
func TestChangesFormatCharacters(t *testing.T) {
	live := newObj("v1", "ConfigMap", "dev", "cfg")
	live.Object["data"] = map[string]any{"file": "report.txt"}
	live.Object["spec"] = map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(80)}}}
	after := live.DeepCopy()
	after.Object["data"] = map[string]any{"file": "gnp\u202e.exe"}
	after.Object["spec"] = map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(80)},
		map[string]any{"name": "adm\u202ein", "port": int64(81), "note": "a\u200bb"}}}
	got, _ := Changes(live, after)
	want := []Change{
		{Path: "data.file", Old: "report.txt", New: `"gnp\u202e.exe"`},
		{Path: `spec.ports[name="adm\u202ein"]`, New: `{"name":"adm\u202ein","note":"a\u200bb","port":81}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Changes(values with format characters) (-want +got):\n%s", diff)
	}
	for _, ch := range got {
		if strings.ContainsAny(ch.Path+ch.Old+ch.New, "\u202e\u200b") {
			t.Errorf("Changes() = %+v, carries a format character", ch)
		}
	}
	if got := ownerName(metav1.ManagedFieldsEntry{Manager: "kubectl\u202e", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "sc\u202eale"}); got != `"kubectl\u202e" (Update, "sc\u202eale")` {
		t.Errorf("ownerName(format characters) = %q, want them escaped", got)
	}
}
