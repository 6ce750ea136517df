package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/web/paths"
)

// fakeRecords is a RecordReader over records in memory.
type fakeRecords map[string]audit.Record

func (f fakeRecords) Get(_ context.Context, id string) (audit.Record, error) {
	if r, ok := f[id]; ok {
		return r, nil
	}
	return audit.Record{}, fmt.Errorf("%w: %s", audit.ErrNotFound, id)
}

func manifest(t *testing.T, y map[string]any) *unstructured.Unstructured {
	t.Helper()
	return &unstructured.Unstructured{Object: y}
}

func diffRecords(t *testing.T) fakeRecords {
	cm := func(v string) *unstructured.Unstructured {
		return manifest(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cfg", "namespace": "staging"}, "data": map[string]any{"page": v}})
	}
	sec := func(hash string) *unstructured.Unstructured {
		return manifest(t, map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "db", "namespace": "staging", "annotations": map[string]any{deployplan.SecretHashAnnotation: hash}}})
	}
	ok := &audit.Chain{OK: true}
	return fakeRecords{
		"a": {ID: "a", Environment: "dev", Chain: ok, Manifests: []*unstructured.Unstructured{cm("old"), sec("sha256:1")}},
		"b": {ID: "b", Environment: "dev", Chain: ok, Manifests: []*unstructured.Unstructured{cm("<script>alert(1)</script>"), sec("sha256:2"),
			manifest(t, map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "api", "namespace": "staging"}})}},
		"other": {ID: "other", Environment: "prod", Chain: ok},
		"edited": {ID: "edited", Environment: "dev", Chain: &audit.Chain{OK: false, Reason: "its manifests were changed"},
			Objects: []audit.Object{{Kind: "ConfigMap", Name: "cfg"}}},
	}
}

func envDiffServer(t *testing.T, records RecordReader) *testServer {
	t.Helper()
	ts := envServer(t, fake.NewClientset())
	ts.srv.opts.RecordReader = records
	return ts
}

func TestEnvDiffRecords(t *testing.T) {
	ts := envDiffServer(t, diffRecords(t))
	w := ts.get(t, paths.APIEnvDiff("dev", url.Values{"from": {"a"}, "to": {"b"}}), nil)
	if w.Code != 200 {
		t.Fatalf("GET diff a..b = %d %s", w.Code, w.Body)
	}
	var rep struct {
		From, To  string
		Changes   bool
		Counts    map[string]int
		Resources []struct{ Kind, Name, Status, Summary, Diff string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.From != "a" || rep.To != "b" || !rep.Changes || rep.Counts["added"] != 1 || rep.Counts["changed"] != 2 {
		t.Fatalf("diff a..b = %+v, want from a to b, 1 added, 2 changed", rep)
	}
	got := map[string]string{}
	for _, r := range rep.Resources {
		got[r.Kind] = r.Summary
		if r.Kind == "ConfigMap" && (!strings.Contains(r.Diff, "-  page: old\n") || !strings.Contains(r.Diff, "+  page: <script>alert(1)</script>\n")) {
			t.Errorf("ConfigMap diff = %q, want -old +new (from on the left)", r.Diff)
		}
	}
	if want := map[string]string{"ConfigMap": "changed", "Secret": "changed (hash)", "Service": "added"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("diff a..b summaries = %v, want %v", got, want)
	}
	if strings.Contains(w.Body.String(), "sha256:") {
		t.Errorf("diff JSON holds a Secret's hash: %s", w.Body)
	}

	page := ts.get(t, paths.EnvDiff("dev", url.Values{"from": {"a"}, "to": {"b"}}), nil)
	body := page.Body.String()
	if page.Code != 200 || !strings.Contains(body, `data-testid="diff-resource"`) || !strings.Contains(body, "changed (hash)") {
		t.Fatalf("diff page = %d, want the resources:\n%s", page.Code, body)
	}
	if strings.Contains(body, "<script>alert(1)") || !strings.Contains(body, "&lt;script&gt;alert(1)") {
		t.Error("diff page does not escape a manifest's text")
	}
	if strings.Contains(body, "sha256:") {
		t.Error("diff page holds a Secret's hash")
	}
	unified := ts.get(t, paths.EnvDiff("dev", url.Values{"from": {"a"}, "to": {"b"}, "mode": {"unified"}}), nil)
	if !strings.Contains(unified.Body.String(), `class="diff unified"`) {
		t.Error("diff page with mode=unified is not inline")
	}
}

func TestEnvDiffRefusals(t *testing.T) {
	store, err := audit.New(fake.NewClientset().CoreV1(), nil, audit.Options{Namespace: "deploy-web"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		records RecordReader
		q       url.Values
		code    int
		want    string
	}{
		{"unknown record", diffRecords(t), url.Values{"from": {"nope"}, "to": {"b"}}, 404, "not found"},
		{"another environment's record", diffRecords(t), url.Values{"from": {"other"}, "to": {"b"}}, 404, "not found"},
		{"edited record", diffRecords(t), url.Values{"from": {"edited"}, "to": {"b"}}, 409, "failed its chain check"},
		{"both live", diffRecords(t), url.Values{"from": {"live"}, "to": {"live"}}, 400, "both live"},
		{"from a ref", diffRecords(t), url.Values{"from": {"ref:main"}, "to": {"live"}}, 400, "cannot be a ref"},
		{"revision syntax", diffRecords(t), url.Values{"from": {"live"}, "to": {"ref:main~1"}}, 400, `holds \"~\"`},
		{"option injection", diffRecords(t), url.Values{"from": {"live"}, "to": {"ref:--upload-pack=x"}}, 400, "starts with '-'"},
		{"dot dot", diffRecords(t), url.Values{"from": {"live"}, "to": {"ref:a..b"}}, 400, "holds '..'"},
		{"pull not digits", diffRecords(t), url.Values{"from": {"live"}, "to": {"ref:pull/1x"}}, 400, "pull/N"},
		{"local source has no refs", diffRecords(t), url.Values{"from": {"live"}, "to": {"ref:main"}}, 502, "set source.repo"},
		{"too long", diffRecords(t), url.Values{"from": {strings.Repeat("a", 300)}, "to": {"b"}}, 400, "longer than"},
		{"no to", diffRecords(t), url.Values{"from": {"a"}}, 400, "to is required"},
		{"malformed record id", store, url.Values{"from": {"a/../b"}, "to": {"live"}}, 400, "is not a record id"},
		{"unknown record in the store", store, url.Values{"from": {"0123456789abcdef-0000000001"}, "to": {"live"}}, 404, "not found"},
		{"no history", nil, url.Values{"from": {"a"}, "to": {"b"}}, 503, "not configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := envDiffServer(t, tt.records)
			w := ts.get(t, paths.APIEnvDiff("dev", tt.q), nil)
			if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.want) {
				t.Errorf("GET diff %v = %d %s, want %d with %q", tt.q, w.Code, w.Body, tt.code, tt.want)
			}
			page := ts.get(t, paths.EnvDiff("dev", tt.q), nil)
			if page.Code != tt.code {
				t.Errorf("GET diff page %v = %d, want %d", tt.q, page.Code, tt.code)
			}
		})
	}
}

func TestEnvDiffRoutes(t *testing.T) {
	ts := envDiffServer(t, diffRecords(t))
	for path, code := range map[string]int{
		"/v1/deploy/environments/dev/other":             404,
		"/v1/deploy/environments/nope/diff?from=a&to=b": 404,
		paths.EnvDiff("dev", nil):                       200,
		paths.EnvDiff("nope", nil):                      404,
	} {
		if w := ts.get(t, path, nil); w.Code != code {
			t.Errorf("GET %s = %d, want %d", path, w.Code, code)
		}
	}
	// The environment page offers the Compare to box, a plain GET form to
	// the diff page.
	if body := ts.get(t, paths.Env("dev"), nil).Body.String(); !strings.Contains(body, `data-testid="compare-box"`) || !strings.Contains(body, `action="/environments/dev/diff"`) {
		t.Error("the environment page has no Compare to form posting to its diff page")
	}
	// The Compare to box: ref fills to with from live.
	w := ts.get(t, paths.EnvDiff("dev", url.Values{"from": {"live"}, "ref": {"main..x"}}), nil)
	if w.Code != 400 || !strings.Contains(w.Body.String(), `value="ref:main..x"`) {
		t.Errorf("Compare to main..x = %d, want 400 with the form filled:\n%s", w.Code, w.Body)
	}
}

// TestEnvDiffLimited: a user's diffs in progress are bounded; one more is
// a 429 before any record or ref is read.
func TestEnvDiffLimited(t *testing.T) {
	ts := envDiffServer(t, diffRecords(t))
	var held []func()
	for range diffsPerUser {
		release, refusal := ts.srv.diffs.acquire(testIdentity.Subject)
		if release == nil {
			t.Fatalf("acquire = %q, want a slot", refusal)
		}
		held = append(held, release)
	}
	for _, path := range []string{paths.APIEnvDiff("dev", url.Values{"from": {"a"}, "to": {"b"}}), paths.EnvDiff("dev", url.Values{"from": {"a"}, "to": {"b"}})} {
		if w := ts.get(t, path, nil); w.Code != 429 {
			t.Errorf("GET %s with %d diffs in progress = %d, want 429", path, diffsPerUser, w.Code)
		}
	}
	for _, release := range held {
		release()
	}
	if w := ts.get(t, paths.APIEnvDiff("dev", url.Values{"from": {"a"}, "to": {"b"}}), nil); w.Code != 200 {
		t.Errorf("GET diff after the slots were released = %d, want 200", w.Code)
	}
}
