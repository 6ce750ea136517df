package deployplan

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hanzoai/deploy-web/envconfig"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func labelled(apiVersion, kind, name string, labels map[string]string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetName(name)
	o.SetLabels(labels)
	return o
}

func TestAppObjects(t *testing.T) {
	inst := "app.kubernetes.io/instance"
	r := &Rendered{Origin: "repo@main:dev", Objects: []*unstructured.Unstructured{
		labelled("hanzo.ai/v1", "App", "api", nil),
		labelled("hanzo.ai/v1", "App", "worker", nil),
		labelled("v1", "ConfigMap", "api-config", map[string]string{inst: "api"}),
		labelled("v1", "ConfigMap", "worker-config", map[string]string{inst: "worker"}),
		labelled("v1", "ConfigMap", "shared", nil),
		labelled("other.example/v1", "App", "api", nil),
	}}
	tests := []struct {
		group, kind, name string
		want              []string
	}{
		{"hanzo.ai", "App", "api", []string{"App/api", "ConfigMap/api-config"}},
		{"hanzo.ai", "App", "worker", []string{"App/worker", "ConfigMap/worker-config"}},
	}
	for _, tt := range tests {
		got, err := AppObjects(tt.group, tt.kind, tt.name).only(r)
		if err != nil {
			t.Fatalf("AppObjects(%s).only = %v", tt.name, err)
		}
		var names []string
		for _, o := range got.Objects {
			names = append(names, o.GetKind()+"/"+o.GetName())
		}
		if !slices.Equal(names, tt.want) {
			t.Errorf("AppObjects(%s, %s, %s).only = %v, want %v", tt.group, tt.kind, tt.name, names, tt.want)
		}
	}
	if _, err := AppObjects("hanzo.ai", "App", "nope").only(r); err == nil || !strings.Contains(err.Error(), "no object for App nope") {
		t.Errorf("AppObjects(nope).only = %v, want an error naming the App", err)
	}
	if got, _ := (*ObjectFilter)(nil).only(r); got != r {
		t.Errorf("nil filter: only = %p, want r itself", got)
	}
}

func TestApplyPruneWithOnlyRefused(t *testing.T) {
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "/nonexistent"}}
	_, err := Apply(context.Background(), env, ApplyOptions{Options: Options{Only: AppObjects("hanzo.ai", "App", "api")}, Prune: true,
		Request: ApplyRequest{Env: "dev", ConfirmEnv: "dev", ConfirmedNonProduction: true}})
	var ref *RefusalError
	if !errors.As(err, &ref) || !strings.Contains(ref.Reason, "prune is refused") {
		t.Errorf("Apply(Only, Prune) = %v, want a refusal of the prune", err)
	}
}

func TestRenderFS(t *testing.T) {
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "https://git.example/m.git", Ref: "main", Path: "overlays/dev"}}
	tree := fstest.MapFS{
		"base/kustomization.yaml":         {Data: []byte("resources: [cm.yaml]\n")},
		"base/cm.yaml":                    {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n")},
		"overlays/dev/kustomization.yaml": {Data: []byte("resources: [../../base]\nnamespace: dev\n")},
	}
	objs, err := RenderFS(context.Background(), env, tree)
	if err != nil || len(objs) != 1 || objs[0].GetNamespace() != "dev" {
		t.Fatalf("RenderFS = %v, %v, want ConfigMap c in dev", objs, err)
	}

	// A symbolic link is never followed, even to a file of the tree.
	linked := fstest.MapFS{
		"base/kustomization.yaml":         {Data: []byte("resources: [cm.yaml]\n")},
		"base/cm.yaml":                    {Data: []byte("secret.txt"), Mode: fs.ModeSymlink},
		"overlays/dev/kustomization.yaml": {Data: []byte("resources: [../../base]\n")},
	}
	if _, err := RenderFS(context.Background(), env, linked); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("RenderFS(symlinked resource) = %v, want an error naming the symbolic link", err)
	}

	env.Limits.MaxRepoFiles = 2
	if _, err := RenderFS(context.Background(), env, tree); err == nil || !strings.Contains(err.Error(), "limits.maxRepoFiles") {
		t.Errorf("RenderFS(3 files, maxRepoFiles 2) = %v, want a TooLargeError", err)
	}
}

func TestApplyReviewedScope(t *testing.T) {
	api := AppObjects("hanzo.ai", "App", "api")
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "/nonexistent"}}
	req := ApplyRequest{Env: "dev", ConfirmEnv: "dev", ConfirmedNonProduction: true}
	tests := []struct {
		name     string
		reviewed string // Reviewed.Only
		only     *ObjectFilter
		want     string // a substring of the refusal
	}{
		{"a narrowed plan, a whole apply", api.Name, nil, "covers " + api.Name + " only"},
		{"a whole plan, a narrowed apply", "", api, "covers the whole environment"},
		{"another App's plan", AppObjects("hanzo.ai", "App", "worker").Name, api, "covers App worker"},
	}
	for _, tt := range tests {
		_, err := Apply(context.Background(), env, ApplyOptions{Options: Options{Only: tt.only}, Request: req,
			Reviewed: &Reviewed{PlanID: "p1", SourceCommit: commitA, RenderedDigest: "sha256:" + strings.Repeat("0", 64), Only: tt.reviewed}})
		var ref *RefusalError
		if !errors.As(err, &ref) || !strings.Contains(ref.Reason, tt.want) {
			t.Errorf("Apply(%s) = %v, want a refusal containing %q", tt.name, err, tt.want)
		}
	}
	// The same scope passes the check (and fails later, at the render of
	// a folder that does not exist).
	_, err := Apply(context.Background(), env, ApplyOptions{Options: Options{Only: api}, Request: req, Reviewed: &Reviewed{PlanID: "p1", Only: api.Name}})
	var ref *RefusalError
	if errors.As(err, &ref) {
		t.Errorf("Apply(same scope) = refusal %q, want it to pass the scope check", ref.Reason)
	}
}
