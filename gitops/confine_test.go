package gitops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/writeback"
)

// memRunner is the environments' configuration, and runs that always
// start (the last one's request kept in *last when set).
type memRunner struct {
	cfg  *envconfig.Config
	last *envrun.DeployRequest
}

func (m memRunner) Config() *envconfig.Config { return m.cfg }
func (m memRunner) Deploy(env string, d envrun.DeployRequest) (*envrun.Run, error) {
	if m.last != nil {
		*m.last = d
	}
	return &envrun.Run{ID: env + "-1", Env: env}, nil
}
func (m memRunner) StartAs(audit.Actor, string, string, string, string, string) (*envrun.Run, error) {
	return nil, errors.New("not started")
}

// memCommit runs a request's Plan and Check on tree and says which files
// it would push (nothing is pushed when either refuses).
type memCommit struct {
	tree    fstest.MapFS
	changed map[string]string
}

func (m *memCommit) commit(ctx context.Context, req writeback.Request) (writeback.Result, error) {
	edits, err := req.Plan(m.tree)
	if err != nil {
		return writeback.Result{}, errors.New("plan refused")
	}
	edited := fstest.MapFS{}
	for p, f := range m.tree {
		edited[p] = f
	}
	changed := map[string]string{}
	for _, e := range edits {
		cur, err := fs.ReadFile(edited, e.Target())
		if err != nil {
			return writeback.Result{}, err
		}
		out, err := e.Apply(cur)
		if err != nil {
			return writeback.Result{}, err
		}
		edited[e.Target()] = &fstest.MapFile{Data: out}
		changed[e.Target()] = string(out)
	}
	if err := req.Check(ctx, edited); err != nil {
		return writeback.Result{}, errors.New("check refused")
	}
	m.changed = changed
	return writeback.Result{SHA: strings.Repeat("1", 40), Branch: req.Branch, Message: req.Message}, nil
}

// confineConfig: dev renders %[2]s, staging renders overlays/staging (on
// base/), both from one repository and branch.
const confineConfig = `
environments:
  - name: dev
    cluster: {context: test}
    namespace: apps
    catalog: /nonexistent/catalog.json
    source: {repo: "file:///nonexistent/m.git", ref: main, path: %[1]s}
    writeBack: {mode: push}
  - name: staging
    cluster: {context: test}
    namespace: apps
    catalog: /nonexistent/catalog.json
    source: {repo: "file:///nonexistent/m.git", ref: main, path: overlays/staging}
  - name: elsewhere
    cluster: {context: test}
    namespace: apps
    catalog: /nonexistent/catalog.json
    source: {repo: "file:///nonexistent/m.git", ref: other, path: overlays/staging}
`

// TestRollbackStaysInItsEnvironment: dev and staging share base/. With
// an overlay of its own, dev's rollback commits only under overlays/dev
// (an override of the App's spec.image) and staging's render is as it
// was; where dev renders base/ itself, no override is possible: refused
// naming staging and its App, nothing pushed. An environment of another
// branch is not a neighbour.
func TestRollbackStaysInItsEnvironment(t *testing.T) {
	tree := func() fstest.MapFS {
		return fstest.MapFS{
			"base/kustomization.yaml":             {Data: []byte("resources: [api.yaml]\n")},
			"base/api.yaml":                       {Data: []byte("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: api\nspec:\n  image: reg.example/acme/api:1.2.0\n")},
			"overlays/dev/kustomization.yaml":     {Data: []byte("resources: [../../base]\n")},
			"overlays/staging/kustomization.yaml": {Data: []byte("resources: [../../base]\n")},
		}
	}
	desired := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": "api", "namespace": "apps"}, "spec": map[string]any{"image": "reg.example/acme/api:1.2.0"}}}
	for _, tt := range []struct {
		name, devPath string
		// want is the refusal ("" none); file the one file pushed.
		want, file string
	}{
		{"an overlay of its own", "overlays/dev", "", "overlays/dev/kustomization.yaml"},
		{"dev renders the shared base", "base", "would change what other environments of the same repository and branch deploy: staging (hanzo.ai/App apps/api)", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(confineConfig, tt.devPath)), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			env, _ := cfg.Env("dev")
			mc := &memCommit{tree: tree()}
			svc := New(Options{Commit: mc.commit, Runs: memRunner{cfg: cfg}})
			res, err := svc.Rollback(t.Context(), RollbackRequest{Env: env, App: App{Group: "hanzo.ai", Kind: "App", Namespace: "apps", Name: "api"},
				Desired: desired, From: "1.2.0", History: []string{"1.1.0", "1.2.0"}, Version: "1.1.0", Who: Person{Actor: audit.Actor{Email: "ada@example.com", Subject: "ada"}}})
			if tt.want != "" {
				var e *Error
				if !errors.As(err, &e) || e.Kind != KindUnprocessable || e.Reason != "ReachesOtherEnvironments" || !strings.Contains(e.Public, tt.want) || strings.Contains(e.Public, "elsewhere") {
					t.Fatalf("Rollback = %v, want a ReachesOtherEnvironments refusal containing %q", err, tt.want)
				}
				if mc.changed != nil {
					t.Errorf("a refused rollback pushed %v", mc.changed)
				}
				return
			}
			if err != nil || res.Run == nil {
				t.Fatalf("Rollback = %+v, %v; want the commit and its run", res, err)
			}
			if got := mc.changed[tt.file]; len(mc.changed) != 1 || !strings.Contains(got, "value: reg.example/acme/api:1.1.0") {
				t.Errorf("pushed %v, want %s alone with the override", mc.changed, tt.file)
			}
		})
	}
}

// TestRollbackReachIsTheRole: a caller who may not apply the whole
// environment gets a run of the App and its own objects only; one who may
// gets the whole environment's. A catalog move that changes another App
// the caller may not roll back is refused naming it (mayMove).
func TestRollbackReachIsTheRole(t *testing.T) {
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(confineConfig, "overlays/dev")), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env, _ := cfg.Env("dev")
	desired := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": "api", "namespace": "apps"}, "spec": map[string]any{"image": "reg.example/acme/api:1.2.0"}}}
	for _, tt := range []struct {
		name     string
		mayApply bool
		wantOnly string
	}{
		{"an App-scoped deployer", false, "api"},
		{"a deployer of the environment", true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mc := &memCommit{tree: fstest.MapFS{
				"base/kustomization.yaml":         {Data: []byte("resources: [api.yaml]\n")},
				"base/api.yaml":                   {Data: []byte("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: api\nspec:\n  image: reg.example/acme/api:1.2.0\n")},
				"overlays/dev/kustomization.yaml": {Data: []byte("resources: [../../base]\n")},
			}}
			var last envrun.DeployRequest
			svc := New(Options{Commit: mc.commit, Runs: memRunner{cfg: cfg, last: &last}})
			_, err := svc.Rollback(t.Context(), RollbackRequest{Env: env, App: App{Group: "hanzo.ai", Kind: "App", Namespace: "apps", Name: "api"},
				Desired: desired, From: "1.2.0", History: []string{"1.1.0", "1.2.0"}, Version: "1.1.0", MayApplyEnv: tt.mayApply})
			if err != nil {
				t.Fatal(err)
			}
			if last.Only != tt.wantOnly || tt.wantOnly != "" && (last.OnlyKind != "App" || last.OnlyGroup != "hanzo.ai") {
				t.Errorf("the run's request = %+v, want Only %q", last, tt.wantOnly)
			}
		})
	}
	moved := []MovedApp{{Namespace: "apps", Name: "api"}, {Namespace: "apps", Name: "worker"}}
	req := RollbackRequest{App: App{Namespace: "apps", Name: "api"}, Version: commitA[:12], MayRollback: func(ns, name string) bool { return name == "api" }}
	var e *Error
	if err := mayMove(req, moved); !errors.As(err, &e) || e.Kind != KindForbidden || !strings.Contains(e.Public, "apps/worker") {
		t.Errorf("mayMove (worker not the caller's) = %v, want a 403 naming apps/worker", err)
	}
	req.MayRollback = func(string, string) bool { return true }
	if err := mayMove(req, moved); err != nil {
		t.Errorf("mayMove (every App the caller's) = %v, want nil", err)
	}
}
