package deployplan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hanzoai/deploy-web/envconfig"
)

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var renderFiles = map[string]string{
	"k/kustomization.yaml": "namespace: dev\nresources: [cm.yaml]\nsecretGenerator: [{name: s, literals: [password=hunter2]}]\n",
	"k/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {n: \"1\"}\n",
	"catalog.json":         `{"commit": "` + commitA + `", "services": []}`,
}

func TestRenderLocalAndGit(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, renderFiles)
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "k"}, Catalog: "catalog.json", ConfigDir: dir}
	r, err := Render(context.Background(), env)
	if err != nil {
		t.Fatalf("Render(local) = %v", err)
	}
	if len(r.Objects) != 2 || r.Catalog.Commit != commitA || r.Commit != "" {
		t.Fatalf("Render(local) = %d objects, catalog %q, commit %q", len(r.Objects), r.Catalog.Commit, r.Commit)
	}

	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	wt.AddGlob(".")
	h, err := wt.Commit("one", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.CreateTag("v1", h, nil); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"k/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c2}\n"})
	wt.AddGlob(".")
	h2, _ := wt.Commit("two", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	for _, tt := range []struct {
		ref, wantCommit, wantCM string
	}{
		{"master", h2.String(), "c2"},
		{"v1", h.String(), "c"},
		{h.String(), h.String(), "c"},
	} {
		env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: tt.ref, Path: "k"}, Catalog: "catalog.json"}
		r, err := Render(context.Background(), env)
		if err != nil {
			t.Fatalf("Render(git %s) = %v", tt.ref, err)
		}
		if r.Commit != tt.wantCommit {
			t.Errorf("Render(git %s).Commit = %s, want %s", tt.ref, r.Commit, tt.wantCommit)
		}
		var names []string
		for _, o := range r.Objects {
			names = append(names, o.GetKind()+"/"+o.GetName())
		}
		if !strings.Contains(strings.Join(names, " "), "ConfigMap/"+tt.wantCM+" ") && !strings.HasSuffix(strings.Join(names, " "), "ConfigMap/"+tt.wantCM) {
			t.Errorf("Render(git %s) objects = %v, want ConfigMap/%s", tt.ref, names, tt.wantCM)
		}
	}
	env = &envconfig.Environment{Name: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "nope", Path: "k"}, Catalog: "catalog.json"}
	if _, err := Render(context.Background(), env); err == nil {
		t.Error("Render(unknown ref) = nil error")
	}
	// Local folder inside a repository: the commit is HEAD's.
	env = &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "k"}, Catalog: "catalog.json", ConfigDir: dir}
	if r, err := Render(context.Background(), env); err != nil || r.Commit != h2.String() {
		t.Errorf("Render(local in git) commit = %v, %v; want %s", r, err, h2)
	}
}
