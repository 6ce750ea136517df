package deployplan

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
)

// TestSourceHead reads the branch head of a repository on a git smart
// HTTP server and of the same repository on disk (file://), moving with a
// new commit; a missing branch and a folder source are answered.
func TestSourceHead(t *testing.T) {
	srv := gitservertest.New(t, map[string]string{"m/kustomization.yaml": "resources: []\n"}, gitservertest.Options{})
	for _, tc := range []struct {
		name, repo, ref string
		want            func() string
		wantErr         string
	}{
		{"http", srv.URL, "main", func() string { return srv.Head("main") }, ""},
		{"file", "file://" + srv.Bare, "main", func() string { return srv.Head("main") }, ""},
		{"a missing branch over http", srv.URL, "nope", nil, `ref "nope"`},
		{"a missing branch on disk", "file://" + srv.Bare, "nope", nil, `ref "nope"`},
		{"a folder", "", "", func() string { return "" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &envconfig.Environment{Name: "dev", Source: envconfig.Source{Repo: tc.repo, Ref: tc.ref, Path: "m"}}
			for round := range 2 {
				got, err := SourceHead(context.Background(), env)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("SourceHead(%s@%s) error = %v, want %q", tc.repo, tc.ref, err, tc.wantErr)
					}
					return
				}
				if want := tc.want(); err != nil || got != want {
					t.Fatalf("SourceHead(%s@%s) round %d = %q, %v; want %q", tc.repo, tc.ref, round, got, err, want)
				}
				if tc.repo == "" {
					return
				}
				srv.RemoteCommit("m/kustomization.yaml", fmt.Sprintf("resources: [] # %s %d\n", tc.name, round)) // the head moves
			}
		})
	}
}

// TestForceObjects keeps the objects it names, never a Secret.
func TestForceObjects(t *testing.T) {
	obj := func(kind, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		u.SetName(name)
		return u
	}
	f := ForceObjects([]string{"ConfigMap/api-config", "Secret/creds", "ConfigMap/api-config"})
	for _, tc := range []struct {
		o    *unstructured.Unstructured
		want bool
	}{
		{obj("ConfigMap", "api-config"), true},
		{obj("ConfigMap", "other"), false},
		{obj("Deployment", "api-config"), false},
		{obj("Secret", "creds"), false},
	} {
		if got := f.Keep(tc.o); got != tc.want {
			t.Errorf("ForceObjects(...).Keep(%s) = %v, want %v", ObjectRef(tc.o), got, tc.want)
		}
	}
	if want := "forced (self-heal): ConfigMap/api-config, Secret/creds"; f.Name != want {
		t.Errorf("ForceObjects(...).Name = %q, want %q", f.Name, want)
	}
}
