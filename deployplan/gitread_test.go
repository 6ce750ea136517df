package deployplan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/hanzoai/deploy-web/envconfig"
)

// removeBlob deletes the loose object of file rel at HEAD from the
// repository in dir (a blob the fetch lost).
func removeBlob(t *testing.T, dir, rel string) {
	t.Helper()
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := repo.Head()
	c, _ := repo.CommitObject(head.Hash())
	tree, _ := c.Tree()
	f, err := tree.File(rel)
	if err != nil {
		t.Fatal(err)
	}
	h := f.Hash.String()
	if err := os.Remove(filepath.Join(dir, ".git", "objects", h[:2], h[2:])); err != nil {
		t.Fatal(err)
	}
}

// TestRenderGitReadsOnlyWhatTheBuildNeeds: a git source is read from the
// kustomize folder and what its kustomizations reference (an overlay, its
// base, a patch, a generator file) plus the catalog; a file over the byte
// limit and a lost blob elsewhere in the tree do not matter. A lost blob
// the build needs is named.
func TestRenderGitReadsOnlyWhatTheBuildNeeds(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"overlays/dev/kustomization.yaml":  "resources: [../../base]\npatches: [{path: replicas.yaml}]\nconfigMapGenerator: [{name: g, files: [conf/app.ini]}]\n",
		"overlays/dev/replicas.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {n: \"2\"}\n",
		"overlays/dev/conf/app.ini":        "a=b\n",
		"base/kustomization.yaml":          "resources: [cm.yaml]\n",
		"base/cm.yaml":                     okCM,
		"overlays/prod/kustomization.yaml": "resources: [../../base]\n",
		"docs/notes.md":                    "unrelated\n",
		"catalog.json":                     `{"commit": "` + commitA + `", "services": []}`,
	})
	big := strings.Repeat("x", 4096)
	writeFiles(t, dir, map[string]string{"assets/big.bin": big})
	commitAll(t, dir)
	removeBlob(t, dir, "docs/notes.md")
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "overlays/dev"}, Catalog: "catalog.json",
		// The files the build needs fit; the whole tree (big.bin) does not.
		Limits: envconfig.Limits{MaxRepoBytes: 1024, MaxRepoFiles: 6}}
	r, err := Render(context.Background(), env)
	if err != nil {
		t.Fatalf("Render = %v, want the overlay rendered from the files it needs", err)
	}
	if len(r.Objects) != 2 {
		t.Errorf("%d objects, want the ConfigMap and the generated one", len(r.Objects))
	}

	removeBlob(t, dir, "base/cm.yaml")
	_, err = Render(context.Background(), env)
	if err == nil || !strings.Contains(err.Error(), "read source file base/cm.yaml") || !strings.Contains(err.Error(), "is missing from the repository") {
		t.Errorf("Render with a lost needed blob = %v, want the file named", err)
	}
}

// TestRenderMessages: what a refused or broken kustomization says.
func TestRenderMessages(t *testing.T) {
	for _, tt := range []struct {
		name, kust, want string
	}{
		{"escape", "resources: [../../../../etc]\n", `resources entry "../../../../etc": the path leaves the repository`},
		{"escape to a file", "patches: [{path: ../../../etc/passwd}]\n", `patches entry "../../../etc/passwd": the path leaves the repository`},
		{"symlink to a file outside", "resources: [link.yaml]\n", "k/link.yaml is a symbolic link"},
		{"symlink to a folder", "resources: [linkdir]\n", "k/linkdir is a symbolic link"},
		{"missing resource", "resources: [nope.yaml]\n", `resources entry "nope.yaml": k/nope.yaml is not in the repository`},
		{"missing generator file", "configMapGenerator: [{name: g, files: [none.ini]}]\n", `configMapGenerator files entry "none.ini": k/none.ini is not in the repository`},
	} {
		for _, viaGit := range []bool{false, true} {
			name := tt.name + map[bool]string{false: " (folder)", true: " (git)"}[viaGit]
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				writeFiles(t, dir, map[string]string{"k/kustomization.yaml": tt.kust, "k/cm.yaml": okCM, "catalog.json": `{"commit": "` + commitA + `", "services": []}`})
				os.Symlink("/etc/hostname", filepath.Join(dir, "k/link.yaml"))
				os.Symlink("/etc", filepath.Join(dir, "k/linkdir"))
				env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "k"}, Catalog: "catalog.json", ConfigDir: dir}
				if viaGit {
					commitAll(t, dir)
					env = &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "k"}, Catalog: "catalog.json"}
				}
				_, err := Render(context.Background(), env)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Render = %v\nwant it to say %q", err, tt.want)
				}
				if strings.Contains(tt.name, "symlink") && !strings.Contains(err.Error(), "symlinks are not followed") {
					t.Errorf("Render = %v, want \"symlinks are not followed\"", err)
				}
				if strings.Contains(err.Error(), "doesn't exist") || strings.Contains(err.Error(), "/repo/") {
					t.Errorf("Render = %v: names the in-memory copy", err)
				}
			})
		}
	}
}
