package envsource

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
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/deployplan/helmrender"
	"github.com/hanzoai/deploy-web/envconfig"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const catalog = `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`

// fixture is a config with a local-folder environment ("local", namespace
// alpha) and a git environment ("gitenv", namespace beta, a file://
// repository on branch main), in that order.
type fixture struct {
	cfg     *envconfig.Config
	repoDir string
	repo    *git.Repository
	head    plumbing.Hash
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{}
	confDir := t.TempDir()
	writeFiles(t, confDir, map[string]string{
		"local/kustomization.yaml": "resources: [cm.yaml, shared.yaml, secret.yaml]\n" +
			"generatorOptions: {disableNameSuffixHash: true}\n" +
			"secretGenerator: [{name: generated, namespace: alpha, literals: [password=hunter2]}]\n",
		// No namespace: indexed in the environment's namespace (alpha).
		"local/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: local-cm}\ndata: {from: local}\n",
		// Rendered by both environments.
		"local/shared.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared, namespace: beta}\ndata: {from: local}\n" +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: both, namespace: gamma}\ndata: {from: local}\n",
		"local/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: plain, namespace: alpha}\nstringData: {token: s3cr3t}\n",
		"catalog.json":      catalog,
	})

	f.repoDir = t.TempDir()
	var err error
	f.repo, err = git.PlainInitWithOptions(f.repoDir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.commit(t, "first", map[string]string{
		"base/kustomization.yaml": "resources: [app.yaml]\n",
		"base/app.yaml":           "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec: {containers: [{name: api, image: 'registry.example.com/api:1.0.0'}]}\n",
		"overlays/x/kustomization.yaml": "namespace: beta\nresources: [../../base, shared.yaml]\n" +
			"secretGenerator: [{name: creds, literals: [password=hunter2]}]\n",
		"overlays/x/shared.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {from: git}\n" +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: both, namespace: gamma}\ndata: {from: git}\n",
		"catalog.json": catalog,
	})

	conf := `environments:
  - name: local
    cluster: {context: test}
    namespace: alpha
    source: {path: local}
    catalog: catalog.json
  - name: gitenv
    cluster: {context: test}
    namespace: beta
    source: {repo: "file://` + f.repoDir + `", ref: main, path: overlays/x}
    catalog: catalog.json
`
	f.cfg, err = envconfig.ParseConfig([]byte(conf), confDir)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) commit(t *testing.T, msg string, files map[string]string) {
	t.Helper()
	writeFiles(t, f.repoDir, files)
	wt, err := f.repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddGlob("."); err != nil {
		t.Fatal(err)
	}
	f.head, err = wt.Commit(msg, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
}

func refreshAll(t *testing.T, ix *Index) {
	t.Helper()
	for _, env := range []string{"local", "gitenv"} {
		if err := ix.Refresh(context.Background(), env); err != nil {
			t.Fatalf("Refresh(%s) = %v", env, err)
		}
	}
}

func TestLookup(t *testing.T) {
	f := newFixture(t)
	ix := New(f.cfg, nil, time.Hour)
	if _, ok := ix.Lookup("", "ConfigMap", "alpha", "local-cm"); ok {
		t.Fatal("Lookup before any render found something")
	}
	refreshAll(t, ix)

	d, ok := ix.Lookup("", "ConfigMap", "alpha", "local-cm")
	if !ok {
		t.Fatal("Lookup(local-cm) missed")
	}
	if d.Environment != "local" || d.Repo != "" || d.Ref != "" || d.Commit != "" || d.Path != "local" {
		t.Errorf("Lookup(local-cm) = %+v, want environment local, no repo, ref or commit, path local", d)
	}
	if d.Object.GetNamespace() != "alpha" {
		t.Errorf("local-cm namespace = %q, want the environment's (alpha)", d.Object.GetNamespace())
	}

	d, ok = ix.Lookup("apps", "Deployment", "beta", "api")
	if !ok {
		t.Fatal("Lookup(apps Deployment beta/api) missed")
	}
	want := Desired{Environment: "gitenv", Repo: "file://" + f.repoDir, Ref: "main", Commit: f.head.String(), Path: "overlays/x"}
	if d.Environment != want.Environment || d.Repo != want.Repo || d.Ref != want.Ref || d.Commit != want.Commit || d.Path != want.Path {
		t.Errorf("Lookup(api) = %+v, want %+v", d, want)
	}
	if img := d.Object.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"]; img != "registry.example.com/api:1.0.0" {
		t.Errorf("api image = %v", img)
	}
	if r, _ := d.Object.Object["spec"].(map[string]any)["replicas"].(int64); r != 2 {
		t.Errorf("api replicas = %#v, want int64 2", d.Object.Object["spec"].(map[string]any)["replicas"])
	}
	// The caller gets a copy.
	d.Object.SetName("changed")
	if d2, _ := ix.Lookup("apps", "Deployment", "beta", "api"); d2.Object.GetName() != "api" {
		t.Error("changing a looked-up object changed the index")
	}

	// Both environments render ConfigMap beta/shared: gitenv's namespace is
	// beta, so it wins although local comes first in the config.
	if d, ok := ix.Lookup("", "ConfigMap", "beta", "shared"); !ok || d.Environment != "gitenv" || d.Object.Object["data"].(map[string]any)["from"] != "git" {
		t.Errorf("Lookup(beta/shared) = %v %+v, want gitenv's", ok, d)
	}
	// gamma/both: neither environment's namespace, so in no index (local
	// renders it for gamma; gitenv's kustomization moves it to beta).
	if d, ok := ix.Lookup("", "ConfigMap", "gamma", "both"); ok {
		t.Errorf("Lookup(gamma/both) = %+v, want a miss: no environment owns gamma", d)
	}
	if d, ok := ix.Lookup("", "ConfigMap", "beta", "both"); !ok || d.Environment != "gitenv" {
		t.Errorf("Lookup(beta/both) = %v %+v, want gitenv's", ok, d)
	}

	for _, miss := range [][4]string{
		{"", "ConfigMap", "alpha", "nope"},
		{"", "ConfigMap", "beta", "local-cm"},      // wrong namespace
		{"apps", "ConfigMap", "alpha", "local-cm"}, // wrong group
		{"", "Deployment", "beta", "api"},          // wrong group (core)
		{"apps", "StatefulSet", "beta", "api"},     // wrong kind
	} {
		if d, ok := ix.Lookup(miss[0], miss[1], miss[2], miss[3]); ok {
			t.Errorf("Lookup(%q) = %+v, want a miss", miss, d)
		}
	}

	// Secrets are never indexed: neither a plain one nor generated ones.
	for _, s := range [][2]string{{"alpha", "plain"}, {"alpha", "generated"}} {
		if _, ok := ix.Lookup("", "Secret", s[0], s[1]); ok {
			t.Errorf("Secret %s/%s was indexed", s[0], s[1])
		}
	}
	for _, st := range ix.Status() {
		for k, o := range indexOf(ix, st.Environment) {
			if k.kind == "Secret" || strings.Contains(mustJSON(t, o), "hunter2") || strings.Contains(mustJSON(t, o), "s3cr3t") {
				t.Errorf("%s indexed %s", st.Environment, k)
			}
		}
	}

	st := ix.Status()
	if len(st) != 2 || st[0].Environment != "local" || st[1].Environment != "gitenv" {
		t.Fatalf("Status() = %+v, want local then gitenv", st)
	}
	if st[0].Objects != 1 || st[0].Outside != 2 || st[0].Error != "" || st[0].Rendered.IsZero() || st[0].Namespace != "alpha" {
		t.Errorf("Status(local) = %+v, want 1 object (the Secrets not counted), 2 outside alpha, no error", st[0])
	}
	for k := range indexOf(ix, "local") {
		if k.namespace != "alpha" {
			t.Errorf("local (namespace alpha) indexed %s", k)
		}
	}
	if st[1].Objects != 3 || st[1].Commit != f.head.String() || st[1].Repo != "file://"+f.repoDir || st[1].Ref != "main" || st[1].Path != "overlays/x" {
		t.Errorf("Status(gitenv) = %+v", st[1])
	}
}

func indexOf(ix *Index, env string) map[objKey]any {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := map[objKey]any{}
	for _, st := range ix.envs {
		if st.env.Name == env {
			for k, o := range st.objects {
				out[k] = o.Object
			}
		}
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	if err := jsonEncode(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRefreshNewCommitAndBrokenRender(t *testing.T) {
	f := newFixture(t)
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, nil))
	ix := New(f.cfg, log, time.Hour)
	refreshAll(t, ix)
	first := f.head

	// A new commit on main: Refresh picks it up.
	f.commit(t, "scale", map[string]string{
		"base/app.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  replicas: 5\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n    spec: {containers: [{name: api, image: 'registry.example.com/api:1.1.0'}]}\n",
	})
	if d, _ := ix.Lookup("apps", "Deployment", "beta", "api"); d.Commit != first.String() {
		t.Fatalf("before Refresh: commit %s, want the first %s", d.Commit, first)
	}
	if err := ix.Refresh(context.Background(), "gitenv"); err != nil {
		t.Fatal(err)
	}
	d, ok := ix.Lookup("apps", "Deployment", "beta", "api")
	if !ok || d.Commit != f.head.String() || d.Object.Object["spec"].(map[string]any)["replicas"] != int64(5) {
		t.Fatalf("after Refresh: %v commit %s replicas %v, want commit %s replicas 5", ok, d.Commit, d.Object.Object["spec"].(map[string]any)["replicas"], f.head)
	}
	good := f.head

	// A broken kustomization: the last good render stays, the error shows.
	f.commit(t, "break", map[string]string{"overlays/x/kustomization.yaml": "namespace: beta\nresources: [../../base, missing.yaml]\n"})
	err := ix.Refresh(context.Background(), "gitenv")
	if err == nil {
		t.Fatal("Refresh of a broken kustomization succeeded")
	}
	d, ok = ix.Lookup("apps", "Deployment", "beta", "api")
	if !ok || d.Commit != good.String() || d.Object.Object["spec"].(map[string]any)["replicas"] != int64(5) {
		t.Errorf("after a broken render: %v commit %s, want the last good render (%s)", ok, d.Commit, good)
	}
	st := ix.Status()[1]
	if st.Error == "" || !strings.Contains(st.Error, "missing.yaml") || st.Commit != good.String() || st.Objects != 3 || !st.Attempted.After(st.Rendered) {
		t.Errorf("Status(gitenv) after a broken render = %+v, want the error, the last good commit and its 3 objects", st)
	}
	logMu.Lock()
	if !strings.Contains(logs.String(), "render environment") || !strings.Contains(logs.String(), "env=gitenv") {
		t.Errorf("the render error was not logged:\n%s", logs.String())
	}
	logMu.Unlock()
	if ix.Status()[0].Error != "" {
		t.Error("the other environment reports an error")
	}

	// Fixed again: the error clears.
	f.commit(t, "fix", map[string]string{"overlays/x/kustomization.yaml": "namespace: beta\nresources: [../../base]\n"})
	if err := ix.Refresh(context.Background(), "gitenv"); err != nil {
		t.Fatal(err)
	}
	if st := ix.Status()[1]; st.Error != "" || st.Commit != f.head.String() || st.Objects != 1 {
		t.Errorf("Status(gitenv) after a fix = %+v", st)
	}
	// local renders beta/shared too, but beta is not local's namespace.
	if d, ok := ix.Lookup("", "ConfigMap", "beta", "shared"); ok {
		t.Errorf("beta/shared = %+v after gitenv stopped rendering it, want a miss (local does not own beta)", d)
	}

	if err := ix.Refresh(context.Background(), "nope"); err == nil {
		t.Error("Refresh of an unknown environment succeeded")
	}
}

func TestRunAndConcurrentUse(t *testing.T) {
	f := newFixture(t)
	ix := New(f.cfg, nil, 20*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ix.Run(ctx); close(done) }()

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				ix.Lookup("apps", "Deployment", "beta", "api")
				ix.Status()
				_ = ix.Refresh(ctx, "gitenv")
			}
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := ix.Status()
		if !st[0].Rendered.IsZero() && !st[1].Rendered.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Run never rendered both environments: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Then again, every interval.
	before := ix.Status()[0].Rendered
	for ix.Status()[0].Rendered.Equal(before) {
		if time.Now().After(deadline) {
			t.Fatal("Run did not render again after its interval")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	wg.Wait()
	if _, ok := ix.Lookup("apps", "Deployment", "beta", "api"); !ok {
		t.Error("Lookup missed after Run")
	}
	for _, st := range ix.Status() {
		if st.Error != "" {
			t.Errorf("%s: error %q (a cancelled render must not be recorded as a failure)", st.Environment, st.Error)
		}
	}
}

// TestRedaction: the status and the lookups show a repository through
// envconfig.RedactURL; a password holding "@" leaves no byte behind.
func TestRedaction(t *testing.T) {
	cfg, err := envconfig.ParseConfig([]byte(`environments:
  - name: remote
    cluster: {context: test}
    namespace: beta
    source: {repo: "https://deploy:ghp_top@secret@git.example.com/acme/m.git", ref: main, path: k}
    catalog: catalog.json
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ix := New(cfg, nil, time.Hour)
	ix.render = func(context.Context, *envconfig.Environment) (*deployplan.Rendered, error) {
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
		return &deployplan.Rendered{Commit: "abc", Objects: []*unstructured.Unstructured{cm}}, nil
	}
	if err := ix.Refresh(context.Background(), "remote"); err != nil {
		t.Fatal(err)
	}
	for _, st := range ix.Status() {
		if strings.Contains(st.Repo, "secret") || st.Repo != "https://git.example.com/acme/m.git" {
			t.Errorf("Status().Repo = %q", st.Repo)
		}
	}
	d, ok := ix.Lookup("", "ConfigMap", "beta", "c")
	if !ok || d.Repo != "https://git.example.com/acme/m.git" || d.Commit != "abc" {
		t.Errorf("Lookup = %v %+v, want the redacted repo", ok, d)
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func jsonEncode(b *bytes.Buffer, v any) error { return json.NewEncoder(b).Encode(v) }

// TestRefreshDeadlineFreesTheEnvironment: a render that never returns (it
// ignores its context) cannot hold the environment: Refresh fails at the
// render deadline. Nor can renders pile up behind it: while it runs no
// other render starts (of this environment or another), each Refresh
// fails at its deadline saying so, and once it returns the next render
// runs.
func TestRefreshDeadlineFreesTheEnvironment(t *testing.T) {
	f := newFixture(t)
	ix := New(f.cfg, nil, time.Hour)
	ix.timeout = 50 * time.Millisecond
	stuck := make(chan struct{})
	var running, most atomic.Int32
	ix.render = func(ctx context.Context, env *envconfig.Environment) (*deployplan.Rendered, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			if m := most.Load(); n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		if env.Name == "gitenv" {
			<-stuck
			return nil, errors.New("released")
		}
		return deployplan.Render(ctx, env)
	}
	err := ix.Refresh(context.Background(), "gitenv")
	if err == nil || !strings.Contains(err.Error(), "render did not finish within 50ms") {
		t.Fatalf("Refresh of a stuck render = %v, want the render deadline", err)
	}
	if st := ix.Status()[1]; !strings.Contains(st.Error, "did not finish") {
		t.Errorf("Status(gitenv).Error = %q, want the deadline", st.Error)
	}
	for _, env := range []string{"gitenv", "local"} {
		err := ix.Refresh(context.Background(), env)
		if err == nil || !strings.Contains(err.Error(), "render did not start within 50ms: an earlier render") {
			t.Errorf("Refresh(%s) behind a stuck render = %v, want it refused at the deadline", env, err)
		}
	}
	close(stuck)
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := ix.Refresh(context.Background(), "local")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Refresh(local) after the stuck render returned = %v, want it rendered", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if m := most.Load(); m != 1 {
		t.Errorf("renders at once = %d, want 1", m)
	}
}

// TestBackgroundRenderShowsYAMLTooComplex: a commit adding the alias bomb
// of issue 26 to the overlay's resources is refused by the background
// renderer (as the console runs it) with yaml-too-complex naming the file;
// the last good render stays.
func TestBackgroundRenderShowsYAMLTooComplex(t *testing.T) {
	f := newFixture(t)
	ix := New(f.cfg, nil, time.Hour)
	refreshAll(t, ix)
	good := f.head
	bomb := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  l0: &l0 [a,a,a,a,a,a,a,a,a]\n"
	for i := 1; i < 5; i++ {
		bomb += fmt.Sprintf("  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 9), ","))
	}
	f.commit(t, "bomb", map[string]string{"overlays/x/bomb.yaml": bomb,
		"overlays/x/kustomization.yaml": "namespace: beta\nresources: [../../base, shared.yaml, bomb.yaml]\n"})
	err := ix.Refresh(context.Background(), "gitenv")
	want := "overlays/x/bomb.yaml is too complex to decode (yaml-too-complex): aliases expand it to 74,749 nodes from 67 as written (74,682 added by aliases"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Refresh(bomb commit) = %v, want %q", err, want)
	}
	if st := ix.Status()[1]; !strings.Contains(st.Error, want) || st.Commit != good.String() {
		t.Errorf("Status(gitenv) = %+v, want the error and the last good commit", st)
	}
}

// TestBackgroundRenderRefusesRemoteBases is the console's side of the
// reported exploit: a commit whose overlay names a remote base with an
// injected --upload-pack. The background renderer (Run, as the console
// runs it) records a clear error and keeps the last good render; nothing
// runs (recording git, ssh and sh shims first on PATH) and the proof file
// never appears.
func TestBackgroundRenderRefusesRemoteBases(t *testing.T) {
	shims := t.TempDir()
	execLog := filepath.Join(t.TempDir(), "exec.log")
	for _, name := range []string{"git", "ssh", "sh", "bash", "helm"} {
		script := "#!/bin/sh\necho " + name + " \"$@\" >> " + execLog + "\nexit 1\n"
		if err := os.WriteFile(filepath.Join(shims, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", shims+string(os.PathListSeparator)+os.Getenv("PATH"))
	if p, _ := exec.LookPath("git"); p != filepath.Join(shims, "git") {
		t.Fatalf("LookPath(git) = %q, want the shim", p)
	}
	proof := filepath.Join(t.TempDir(), "proof")

	f := newFixture(t)
	ix := New(f.cfg, nil, 10*time.Millisecond)
	refreshAll(t, ix)
	good := f.head
	entry := "file:///x?ref=--upload-pack=touch%20" + proof
	f.commit(t, "exploit", map[string]string{"overlays/x/kustomization.yaml": "namespace: beta\nresources:\n- ../../base\n- \"" + entry + "\"\n"})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ix.Run(ctx); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	var st EnvStatus
	for {
		st = ix.Status()[1]
		if st.Error != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Run never reported the exploit commit: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	want := `overlays/x/kustomization.yaml: resources entry "` + entry + `": remote resources are not supported: vendor the base into the repository`
	if !strings.Contains(st.Error, want) || st.Commit != good.String() {
		t.Errorf("Status(gitenv) = %+v, want the error %q and the last good commit", st, want)
	}
	if d, ok := ix.Lookup("apps", "Deployment", "beta", "api"); !ok || d.Commit != good.String() {
		t.Errorf("Lookup(api) = %v %+v, want the last good render", ok, d)
	}
	if b, err := os.ReadFile(execLog); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a program ran while rendering: %q", b)
	}
	if _, err := os.Stat(proof); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the injected command ran: %s exists", proof)
	}
}

// TestHeadAndObjects: Head reads the branch head without a render (it
// moves ahead of the indexed commit until the next Refresh) and keeps it
// in Status; a local folder has none; Objects lists the indexed objects,
// Secrets left out, as copies.
func TestHeadAndObjects(t *testing.T) {
	f := newFixture(t)
	ix := New(f.cfg, nil, time.Hour)
	refreshAll(t, ix)
	indexed := f.head
	f.commit(t, "next", map[string]string{"overlays/x/shared.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {from: next}\n"})

	h, err := ix.Head(context.Background(), "gitenv")
	if err != nil || h != f.head.String() {
		t.Fatalf("Head(gitenv) = %q, %v; want the new head %s", h, err, f.head)
	}
	if st := ix.Status()[1]; st.Head != f.head.String() || st.Commit != indexed.String() || st.HeadRead.IsZero() {
		t.Errorf("Status(gitenv) = head %q commit %q read %s; want head %s ahead of the indexed %s", st.Head, st.Commit, st.HeadRead, f.head, indexed)
	}
	if h, err := ix.Head(context.Background(), "local"); err != nil || h != "" {
		t.Errorf("Head(local) = %q, %v; want no head for a folder source", h, err)
	}
	if _, err := ix.Head(context.Background(), "nope"); err == nil {
		t.Error("Head(nope) = nil error, want an unknown environment refused")
	}

	var got []string
	for _, o := range ix.Objects("gitenv") {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	if want := []string{"ConfigMap/both", "ConfigMap/shared", "Deployment/api"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Objects(gitenv) = %v, want %v (sorted, no Secret)", got, want)
	}
	objs := ix.Objects("gitenv")
	objs[0].SetName("changed")
	if again := ix.Objects("gitenv"); again[0].GetName() != "both" {
		t.Errorf("Objects returned the index's own object: a change to it shows as %q", again[0].GetName())
	}
}

// TestChartRendersWithoutACluster: the index asks no cluster, so a Helm
// chart renders for source.kubeVersion, else for the default version with
// a warning in Status; the render does not fail.
func TestChartRendersWithoutACluster(t *testing.T) {
	confDir := t.TempDir()
	writeFiles(t, confDir, map[string]string{
		"chart/Chart.yaml":          "apiVersion: v2\nname: web\nversion: 0.1.0\nkubeVersion: \">=1.25.0-0\"\n",
		"chart/templates/kube.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube}\ndata:\n  version: {{ .Capabilities.KubeVersion.Version | quote }}\n",
		"catalog.json":              catalog,
	})
	cfg, err := envconfig.ParseConfig([]byte(`environments:
  - name: dflt
    cluster: {context: test}
    namespace: alpha
    source: {path: chart, helm: {releaseName: web}}
    catalog: catalog.json
  - name: pinned
    cluster: {context: test}
    namespace: beta
    source: {path: chart, helm: {releaseName: web}, kubeVersion: v1.31.0}
    catalog: catalog.json
`), confDir)
	if err != nil {
		t.Fatal(err)
	}
	ix := New(cfg, slog.New(slog.DiscardHandler), time.Hour)
	for _, tt := range []struct{ env, ns, version, warning string }{
		{"dflt", "alpha", helmrender.DefaultKubeVersion, "rendered for Kubernetes " + helmrender.DefaultKubeVersion + ": no cluster answered"},
		{"pinned", "beta", "v1.31.0", ""},
	} {
		if err := ix.Refresh(context.Background(), tt.env); err != nil {
			t.Fatalf("Refresh(%s) = %v, want the chart rendered", tt.env, err)
		}
		d, ok := ix.Lookup("", "ConfigMap", tt.ns, "kube")
		if got, _, _ := unstructured.NestedString(d.Object.Object, "data", "version"); !ok || got != tt.version {
			t.Errorf("%s: the chart saw Kubernetes %q (found %v), want %s", tt.env, got, ok, tt.version)
		}
		var st EnvStatus
		for _, s := range ix.Status() {
			if s.Environment == tt.env {
				st = s
			}
		}
		switch {
		case tt.warning == "" && len(st.Warnings) > 0:
			t.Errorf("%s: warnings %q, want none", tt.env, st.Warnings)
		case tt.warning != "" && (len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], tt.warning)):
			t.Errorf("%s: warnings %q, want one containing %q", tt.env, st.Warnings, tt.warning)
		}
	}
}
