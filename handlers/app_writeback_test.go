package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/writeback"
)

// gitView is a fakeView that knows App apps/api, declaring 1.2.0 and having
// run 1.1.0 and 1.2.0.
type gitView struct{ *fakeView }

func (v gitView) Row(namespace, name string) (kubeview.AppRow, bool) {
	if namespace == "apps" && name == "api" {
		return kubeview.AppRow{Namespace: namespace, Name: name, Version: "1.2.0"}, true
	}
	return kubeview.AppRow{}, false
}

func (v gitView) LookupApp(namespace, name string) (*unstructured.Unstructured, error) {
	if namespace == "" { // an API route's lookup in every namespace
		namespace = "apps"
	}
	if _, ok := v.Row(namespace, name); !ok {
		return nil, kubeview.ErrAppNotFound
	}
	return appObject(name, "reg.example/acme/api:1.2.0"), nil
}

func (v gitView) History(namespace, name string) ([]kubeview.Release, error) {
	return []kubeview.Release{{Revision: 2, Version: "1.2.0", Image: "reg.example/acme/api:1.2.0"}, {Revision: 1, Version: "1.1.0", Image: "reg.example/acme/api:1.1.0"}}, nil
}

func appObject(name, image string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": name, "namespace": "apps"}, "spec": map[string]any{"image": image}}}
}

// desiredIn renders apps/api in environment env (nil env: nothing).
type desiredIn struct{ env string }

func (d desiredIn) Lookup(group, kind, namespace, name string) (envsource.Desired, bool) {
	if d.env == "" || group != "hanzo.ai" || kind != "App" || namespace != "apps" || name != "api" {
		return envsource.Desired{}, false
	}
	return envsource.Desired{Object: appObject("api", "reg.example/acme/api:1.2.0"), Environment: d.env, Repo: "file:///nonexistent/m.git", Ref: "main", Path: "overlays/" + d.env}, true
}

// fakeCommit stands in for writeback.Commit on an in-memory repository:
// it runs the request's Plan on the tree, applies the edits, runs Check on
// the edited tree and answers as Commit would (its own errors made opaque,
// as Commit redacts them), or fails with err.
type fakeCommit struct {
	mu   sync.Mutex
	tree fstest.MapFS
	err  error
	reqs []writeback.Request
	// changed are the files the last commit changed, with their content.
	changed map[string]string
	// history, when set, makes the tree Plan sees a writeback.FileHistory
	// of these revisions (newest first).
	history []writeback.Revision
}

func (f *fakeCommit) commit(ctx context.Context, req writeback.Request) (writeback.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	if f.err != nil {
		return writeback.Result{}, f.err
	}
	opaque := func(err error) error { return errors.New(err.Error()) }
	var tree fs.FS = f.tree
	if f.history != nil {
		tree = historyFS{f.tree, f.history}
	}
	edits, err := req.Plan(tree)
	if err != nil {
		return writeback.Result{}, opaque(err)
	}
	edited := fstest.MapFS{}
	for p, file := range f.tree {
		edited[p] = file
	}
	f.changed = map[string]string{}
	for _, e := range edits {
		cur, err := fs.ReadFile(edited, e.Target())
		if err != nil {
			return writeback.Result{}, opaque(err)
		}
		out, err := e.Apply(cur)
		if err != nil {
			return writeback.Result{}, opaque(err)
		}
		edited[e.Target()] = &fstest.MapFile{Data: out}
		f.changed[e.Target()] = string(out)
	}
	if err := req.Check(ctx, edited); err != nil {
		return writeback.Result{}, opaque(err)
	}
	msg := req.Message
	if req.Detail != nil {
		msg += "\n" + strings.Join(req.Detail(), "\n")
	}
	return writeback.Result{SHA: "0123456789abcdef0123456789abcdef01234567", Branch: req.Branch, Message: msg}, nil
}

func (f *fakeCommit) requests() []writeback.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]writeback.Request(nil), f.reqs...)
}

// manifestTree is a repository whose overlays/<env> put base/api.yaml's App
// api in namespace apps.
func manifestTree(overlayExtra string) fstest.MapFS {
	overlay := "resources: [../../base]\nnamespace: apps\n" + overlayExtra
	return fstest.MapFS{
		"base/kustomization.yaml":            {Data: []byte("resources: [api.yaml]\n")},
		"base/api.yaml":                      {Data: []byte("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: api\nspec:\n  image: reg.example/acme/api:1.2.0\n  replicas: 2\n")},
		"overlays/dev/kustomization.yaml":    {Data: []byte(overlay)},
		"overlays/plain/kustomization.yaml":  {Data: []byte(overlay)},
		"overlays/review/kustomization.yaml": {Data: []byte(overlay)},
		"catalog.json":                       {Data: []byte(twoReleasesCatalog)},
	}
}

// twoReleasesCatalog is a version-mode catalog listing api at 1.2.0 (what
// manifestTree runs) and 1.1.0 (the release a rollback returns to).
const twoReleasesCatalog = `{"mode": "version", "services": [
  {"id": "api", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "published": true},
  {"id": "api-1.1.0", "image": "reg.example/acme/api", "tag": "1.1.0", "digest": "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "published": true}]}
`

const gitEnvConfig = `
environments:
  - name: dev
    cluster: {context: test}
    namespace: apps
    source: {repo: %[1]q, ref: main, path: overlays/dev}
    catalog: catalog.json
    writeBack: {mode: push}
  - name: plain
    cluster: {context: test}
    namespace: apps
    source: {repo: %[1]q, ref: main, path: overlays/plain}
    catalog: catalog.json
  - name: review
    cluster: {context: test}
    namespace: apps
    protected: true
    source: {repo: %[1]q, ref: main, path: overlays/review}
    catalog: catalog.json
    writeBack: {mode: branch}
  - name: local
    cluster: {context: test}
    namespace: apps
    source: {path: m}
    catalog: catalog.json
`

// gitServer is a test server whose App apps/api is rendered by environment
// env ("" for none), with fc as the write-back.
func gitServer(t *testing.T, env string, fc *fakeCommit) (*testServer, *recordingReleaser) {
	t.Helper()
	dir := t.TempDir()
	gitservertest.WriteTree(t, dir, map[string]string{
		"m/kustomization.yaml": "resources: [cm.yaml]\n",
		"m/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api-config, labels: {app.kubernetes.io/instance: api}}\n",
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	})
	// The environments' repository (the fake write-back leaves it alone):
	// a run renders it, then waits on the cluster.
	files := map[string]string{"catalog.json": `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`}
	for p, f := range manifestTree("") {
		files[p] = string(f.Data)
	}
	repo := "file://" + gitservertest.New(t, files, gitservertest.Options{}).Bare
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(gitEnvConfig, repo)), dir)
	if err != nil {
		t.Fatal(err)
	}
	runner := hangingRunner(t, cfg)
	rel := &recordingReleaser{}
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{{Name: "in-cluster", View: gitView{newFakeView(nil)}, Release: rel}}
		o.Environments = runner
		o.Desired = desiredIn{env}
		o.GitCommit = fc.commit
	})
	return ts, rel
}

// hangingRunner is the engine of cfg over a cluster that never answers:
// a run it starts stays going until the test ends.
func hangingRunner(t *testing.T, cfg *envconfig.Config) *envrun.Runner {
	t.Helper()
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); hang.Close() })
	return envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10), ReportsDir: t.TempDir(),
		RestConfig: &rest.Config{Host: hang.URL, Timeout: 3 * time.Second}})
}

var jsonHeader = map[string]string{"Content-Type": "application/json"}

func TestRollbackThroughGitAPI(t *testing.T) {
	t.Run("writeBack push: commit and run", func(t *testing.T) {
		fc := &fakeCommit{tree: manifestTree("")}
		ts, rel := gitServer(t, "dev", fc)
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader,
			body: `{"version": "1.1.0", "reason": "5xx since 1.2.0\n<script>alert(1)</script>"}`})
		if w.Code != http.StatusOK {
			t.Fatalf("POST rollback: status = %d, body %s", w.Code, w.Body)
		}
		var res rollbackResponse
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res.Commit == nil || res.Commit.Short != "0123456789ab" || res.Commit.Branch != "main" || res.Environment != "dev" || res.From != "1.2.0" || res.To != "1.1.0" {
			t.Errorf("POST rollback = %s, want the commit on main, dev, 1.2.0 -> 1.1.0", w.Body)
		}
		if res.Run == nil || !strings.HasPrefix(res.Run.URL, "/environments/dev/runs/dev-") {
			t.Errorf("POST rollback run = %+v, want a run of dev", res.Run)
		}
		if got := rel.got(); len(got) != 0 {
			t.Errorf("the live App was patched (%v): a rollback through git never patches it", got)
		}
		reqs := fc.requests()
		if len(reqs) != 1 {
			t.Fatalf("write-backs = %d, want 1", len(reqs))
		}
		req := reqs[0]
		if !strings.HasPrefix(req.RepoURL, "file:///") || req.Branch != "main" || req.Mode != envconfig.ModePush || req.Action != "rollback" || req.Version != "1.1.0" {
			t.Errorf("request = %+v, want dev's repository, main, push, rollback 1.1.0", req)
		}
		for _, want := range []string{"apps/api", "1.2.0", "1.1.0", testIdentity.Email, testIdentity.Subject, "5xx since 1.2.0"} {
			if !strings.Contains(req.Message, want) {
				t.Errorf("commit message %q does not name %q", req.Message, want)
			}
		}
		// base/api.yaml is rendered by plain and review too (same
		// repository and branch): dev's rollback overrides the version in
		// its own overlay and leaves base/ alone.
		if got := fc.changed["overlays/dev/kustomization.yaml"]; !strings.Contains(got, "value: reg.example/acme/api:1.1.0") || len(fc.changed) != 1 {
			t.Errorf("changed files = %v, want overlays/dev/kustomization.yaml alone with an override of the App at 1.1.0", fc.changed)
		}
	})

	t.Run("a run already going: the commit and why no run", func(t *testing.T) {
		fc := &fakeCommit{tree: manifestTree("")}
		ts, _ := gitServer(t, "dev", fc)
		first := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0"}`})
		if first.Code != http.StatusOK || !strings.Contains(first.Body.String(), `"run"`) {
			t.Fatalf("first rollback = %d %s, want a run", first.Code, first.Body)
		}
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0"}`})
		var res rollbackResponse
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || w.Code != http.StatusOK || res.Commit == nil || res.Run != nil || !strings.Contains(res.RunError, "already running") {
			t.Errorf("rollback while a run of dev is going = %d %s, want the commit, no run and why", w.Code, w.Body)
		}
	})

	t.Run("images: entry that reaches spec.image", func(t *testing.T) {
		fc := &fakeCommit{tree: manifestTree("images: [{name: reg.example/acme/api, newTag: 1.2.0}]\nconfigurations: [images.yaml]\n")}
		fc.tree["overlays/dev/images.yaml"] = &fstest.MapFile{Data: []byte("images:\n  - {path: spec/image, kind: App}\n")}
		ts, _ := gitServer(t, "dev", fc)
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0"}`})
		if w.Code != http.StatusOK {
			t.Fatalf("POST rollback: status = %d, body %s", w.Code, w.Body)
		}
		if got := fc.changed["overlays/dev/kustomization.yaml"]; !strings.Contains(got, "newTag: 1.1.0") || len(fc.changed) != 1 {
			t.Errorf("changed files = %v, want the images: entry alone at 1.1.0", fc.changed)
		}
	})

	t.Run("the overlay's own override is edited in place", func(t *testing.T) {
		fc := &fakeCommit{tree: manifestTree("patches:\n  - target: {kind: App, name: api}\n    patch: |\n      - op: add\n        path: /spec/image\n        value: reg.example/acme/api:1.2.0\n")}
		ts, _ := gitServer(t, "dev", fc)
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0"}`})
		got := fc.changed["overlays/dev/kustomization.yaml"]
		if w.Code != http.StatusOK || len(fc.changed) != 1 || !strings.Contains(got, "value: reg.example/acme/api:1.1.0") || strings.Count(got, "/spec/image") != 1 {
			t.Errorf("POST rollback with dev's own override = %d, changed %v; want the one override at 1.1.0", w.Code, fc.changed)
		}
	})

	t.Run("another patch overrides the edit: 422, nothing pushed", func(t *testing.T) {
		fc := &fakeCommit{tree: manifestTree("patches:\n  - patch: |\n      apiVersion: hanzo.ai/v1\n      kind: App\n      metadata: {name: api}\n      spec: {image: reg.example/acme/api:1.2.0}\n")}
		ts, _ := gitServer(t, "dev", fc)
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0"}`})
		if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "a patch sets App api") {
			t.Errorf("POST rollback with a patch on spec.image: status = %d, body %s; want 422 naming the patch", w.Code, w.Body)
		}
	})

	t.Run("no writeBack: 409, nothing written", func(t *testing.T) {
		fc := &fakeCommit{tree: manifestTree("")}
		ts, rel := gitServer(t, "plain", fc)
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0"}`})
		if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "environment plain renders apps/api from git") || !strings.Contains(w.Body.String(), "writeBack") {
			t.Errorf("POST rollback without writeBack: status = %d, body %s; want 409 saying why", w.Code, w.Body)
		}
		if len(fc.requests()) != 0 || len(rel.got()) != 0 {
			t.Errorf("writes = %d commits, %v patches; want none", len(fc.requests()), rel.got())
		}
	})

	t.Run("review branch: no run", func(t *testing.T) {
		fc := &fakeCommit{tree: manifestTree("")}
		ts, _ := gitServer(t, "review", fc)
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0"}`})
		var res rollbackResponse
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || w.Code != http.StatusOK || res.Commit == nil || res.Run != nil {
			t.Errorf("POST rollback (mode branch) = %d %s, want the commit and no run", w.Code, w.Body)
		}
		if reqs := fc.requests(); len(reqs) != 1 || reqs[0].Mode != envconfig.ModeBranch {
			t.Errorf("write-backs = %+v, want one in mode branch", reqs)
		}
	})

	t.Run("not in history: 400, nothing written", func(t *testing.T) {
		fc := &fakeCommit{tree: manifestTree("")}
		ts, _ := gitServer(t, "dev", fc)
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "0.9.0"}`})
		if w.Code != http.StatusBadRequest || len(fc.requests()) != 0 {
			t.Errorf("POST rollback to 0.9.0: status = %d (%d commits), want 400 and no commit", w.Code, len(fc.requests()))
		}
	})

	t.Run("push refused", func(t *testing.T) {
		fc := &fakeCommit{err: &writeback.RefusedError{Repo: "r", Branch: "main", Status: "pre-receive hook declined", Remote: "main is protected"}}
		ts, _ := gitServer(t, "dev", fc)
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0"}`})
		if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "main is protected") || strings.Contains(w.Body.String(), `"run"`) {
			t.Errorf("POST rollback, push refused: status = %d, body %s; want 409 with the hook's message and no run", w.Code, w.Body)
		}
	})

	t.Run("not rendered: the CR patch", func(t *testing.T) {
		fc := &fakeCommit{tree: manifestTree("")}
		ts, rel := gitServer(t, "", fc)
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0"}`})
		if w.Code != http.StatusOK || len(fc.requests()) != 0 || len(rel.got()) != 1 {
			t.Errorf("POST rollback of an App no environment renders: status = %d, %d commits, patches %v; want today's patch", w.Code, len(fc.requests()), rel.got())
		}
	})
}

func TestRollbackThroughGitPage(t *testing.T) {
	fc := &fakeCommit{tree: manifestTree("")}
	ts, _ := gitServer(t, "dev", fc)
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"}
	w := ts.do(t, request{method: "POST", target: "/clusters/in-cluster/apps/apps/api/rollback", admin: true, header: form,
		body: "version=1.1.0&reason=%3Cscript%3Ealert(1)%3C%2Fscript%3E"})
	if w.Code != http.StatusOK {
		t.Fatalf("POST rollback page: status = %d, body %s", w.Code, w.Body)
	}
	doc := parseHTML(t, w.Body.String())
	if got := text(oneByTestID(t, doc, "commit-sha")); got != "0123456789ab" {
		t.Errorf("commit-sha = %q, want 0123456789ab", got)
	}
	if href := attr(oneByTestID(t, doc, "commit-run"), "href"); !strings.HasPrefix(href, "/environments/dev/runs/dev-") {
		t.Errorf("commit-run href = %q, want the run page", href)
	}
	if strings.Contains(w.Body.String(), "<script>alert") {
		t.Errorf("the page holds the reason's markup unescaped")
	}
	if reqs := fc.requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Message, "<script>alert(1)</script>") {
		t.Errorf("write-backs = %d, want one quoting the form's reason", len(reqs))
	}

	// The confirmation asks for a reason and says the rollback goes
	// through git.
	w = ts.get(t, "/clusters/in-cluster/apps/apps/api/rollback?version=1.1.0", htmxHeader)
	confirm := parseHTML(t, w.Body.String())
	if n := byTestID(confirm, "rollback-reason"); len(n) != 1 || attr(n[0], "name") != "reason" {
		t.Errorf("the confirmation has %d reason fields, want one named reason", len(n))
	}
	if got := text(oneByTestID(t, confirm, "rollback-through-git")); !strings.Contains(got, "environment dev's repository") {
		t.Errorf("the confirmation says %q, want it naming dev's repository", got)
	}

	// A refusal is shown in place, with its reason: at the confirmation
	// already, and on a POST.
	ts2, _ := gitServer(t, "plain", &fakeCommit{})
	w = ts2.get(t, "/clusters/in-cluster/apps/apps/api/rollback?version=1.1.0", htmxHeader)
	if n := byTestID(parseHTML(t, w.Body.String()), "confirm-rollback"); len(n) != 0 || !strings.Contains(w.Body.String(), "configure writeBack") {
		t.Errorf("the confirmation of a rollback without writeBack = %s, want the refusal and no confirm button", w.Body)
	}
	w = ts2.do(t, request{method: "POST", target: "/clusters/in-cluster/apps/apps/api/rollback", admin: true, header: form, body: "version=1.1.0"})
	if w.Code != http.StatusConflict || !strings.Contains(text(oneByTestID(t, parseHTML(t, w.Body.String()), "action-error")), "configure writeBack") {
		t.Errorf("POST rollback page without writeBack: status = %d, body %s; want 409 with the reason", w.Code, w.Body)
	}
}

func TestSyncFromGit(t *testing.T) {
	fc := &fakeCommit{tree: manifestTree("")}
	ts, rel := gitServer(t, "local", fc)
	w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/sync", admin: true})
	if w.Code != http.StatusOK {
		t.Fatalf("POST sync: status = %d, body %s", w.Code, w.Body)
	}
	var res syncResponse
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Environment != "local" || res.Run == nil || !strings.HasPrefix(res.Run.ID, "local-") || res.Commit == nil {
		t.Errorf("POST sync = %s, want environment local, a run and the commit", w.Body)
	}
	if len(rel.got()) != 0 || len(fc.requests()) != 0 {
		t.Errorf("POST sync of a git App: nudges %v, commits %d; want neither", rel.got(), len(fc.requests()))
	}
	// The run is going (its cluster never answers here): a second sync is
	// refused and starts nothing.
	w = ts.do(t, request{method: "POST", target: "/clusters/in-cluster/apps/apps/api/sync", admin: true, header: htmxHeader})
	if w.Code != http.StatusConflict || !strings.Contains(text(oneByTestID(t, parseHTML(t, w.Body.String()), "action-error")), "already running") {
		t.Errorf("second POST sync page: status = %d, body %s; want 409 saying a run is going", w.Code, w.Body)
	}

	// An App no environment renders keeps the operator nudge.
	ts2, rel2 := gitServer(t, "", fc)
	if w := ts2.do(t, request{method: "POST", target: "/v1/deploy/api/sync", admin: true}); w.Code != http.StatusOK || len(rel2.got()) != 1 {
		t.Errorf("POST sync of an App no environment renders: status = %d, nudges %v; want one nudge", w.Code, rel2.got())
	}
}
