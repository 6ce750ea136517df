package deployplan

import (
	"context"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hanzoai/deploy-web/envconfig"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestValidateRef(t *testing.T) {
	tests := []struct {
		ref  string
		want string // "" for valid, else a part of the error
	}{
		{"main", ""},
		{"feature/new-api_2", ""},
		{"v1.2.3", ""},
		{"0123456789abcdef0123456789abcdef01234567", ""},
		{"pull/12", ""},
		{"", "empty"},
		{"-main", "starts with '-'"},
		{"--upload-pack=touch /tmp/x", "starts with '-'"},
		{"main..evil", "holds '..'"},
		{"a/../b", "holds '..'"},
		{"HEAD~1", `holds "~"`},
		{"main^", `holds "^"`},
		{"main@{1}", `holds "@"`},
		{"a:b", `holds ":"`},
		{"a b", `holds " "`},
		{"a\nb", `holds "\n"`},
		{"feat*", `holds "*"`},
		{"a//b", "empty path component"},
		{"/main", "empty path component"},
		{"main/", "empty path component"},
		{"main.", "ends with '.'"},
		{"a/.hidden", `starts with "."`},
		{"a/-x", `starts with "-"`},
		{"main.lock", "ends with .lock"},
		{"pull/abc", "pull/N, N digits only"},
		{"pull/1/head", "pull/N, N digits only"},
		{"pull/01", "pull/N, N digits only"},
		{"refs/heads/main", "not a full ref"},
		{"HEAD", "not a full ref"},
		{strings.Repeat("a", MaxRefBytes+1), "longer than"},
	}
	for _, tt := range tests {
		err := ValidateRef(tt.ref)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("ValidateRef(%q) = %v, want nil", tt.ref, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "deployplan: ref ")):
			t.Errorf("ValidateRef(%q) = %v, want an error with %q", tt.ref, err, tt.want)
		}
	}
}

func TestAtRef(t *testing.T) {
	env := &envconfig.Environment{Name: "prod", Namespace: "web", Source: envconfig.Source{Repo: "https://git.example/r.git", Ref: "main", Path: "k"}}
	got, err := AtRef(env, "pull/3")
	if err != nil {
		t.Fatal(err)
	}
	if got.Source.Ref != "pull/3" || env.Source.Ref != "main" || got == env {
		t.Errorf("AtRef = %q (env %q), want a copy at pull/3 and env unchanged at main", got.Source.Ref, env.Source.Ref)
	}
	if _, err := AtRef(env, "main..x"); err == nil {
		t.Error("AtRef(main..x) = nil error, want the ref refused")
	}
	local := &envconfig.Environment{Name: "dev", Source: envconfig.Source{Path: "k"}}
	if _, err := AtRef(local, "main"); err == nil || !strings.Contains(err.Error(), "set source.repo") {
		t.Errorf("AtRef(local source) = %v, want an error saying to set source.repo", err)
	}
}

// TestRenderPullRequestHead renders pull/N, a commit on no branch that
// only refs/pull/N/head names (as GitHub keeps a pull request), over HTTP
// and from a local repository, at a copy of the environment.
func TestRenderPullRequestHead(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k/kustomization.yaml": "resources: [cm.yaml]\n",
		"k/cm.yaml":            okCM,
		"catalog.json":         `{"commit": "` + commitA + `", "services": []}`,
	})
	master := commitAll(t, dir)
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"k/cm.yaml": strings.Replace(okCM, `"1"`, `"2"`, 1)})
	if _, err := wt.Add("k/cm.yaml"); err != nil {
		t.Fatal(err)
	}
	pr, err := wt.Commit("pr", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	// master back where it was: the pull request's commit is on no branch.
	if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("master"), plumbing.NewHash(master))); err != nil {
		t.Fatal(err)
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference("refs/pull/3/head", pr)); err != nil {
		t.Fatal(err)
	}
	ts := gitHTTPServer(t, dir)
	for _, src := range []string{ts.URL + "/repo.git", "file://" + dir} {
		env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: src, Ref: "master", Path: "k"}, Catalog: "catalog.json"}
		tests := []struct {
			ref, commit, value string
			wantErr            bool
		}{
			{"master", master, "1", false},
			{"pull/3", pr.String(), "2", false},
			{"pull/4", "", "", true},
		}
		for _, tt := range tests {
			at, err := AtRef(env, tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Render(context.Background(), at)
			if tt.wantErr {
				if err == nil {
					t.Errorf("Render(%s at %s) = commit %s, want an error", src, tt.ref, r.Commit)
				}
				continue
			}
			if err != nil {
				t.Fatalf("Render(%s at %s) = %v", src, tt.ref, err)
			}
			v, _, _ := unstructured.NestedString(r.Objects[0].Object, "data", "n")
			if r.Commit != tt.commit || v != tt.value {
				t.Errorf("Render(%s at %s) = commit %s, n=%q; want %s, %q", src, tt.ref, r.Commit, v, tt.commit, tt.value)
			}
		}
		if env.Source.Ref != "master" {
			t.Errorf("the environment's ref = %q after rendering refs, want master", env.Source.Ref)
		}
	}
}
