package deployplan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/hanzoai/deploy-web/envconfig"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Rendered is the output of kustomize for one environment.
type Rendered struct {
	// Objects are the rendered objects in kustomize's legacy order.
	Objects []*unstructured.Unstructured
	// Commit is the source commit ("" for a local folder outside git).
	Commit string
	// Origin describes the source: "repo@ref:path" or the folder.
	Origin string
	// Catalog is the artifact catalog read from the source (or from disk).
	Catalog *Catalog
	// CatalogPath says where the catalog was read.
	CatalogPath string
	// Warnings are what rendering Helm charts told (lookup, random values,
	// hooks left out, the Kubernetes version assumed).
	Warnings []string
	// Charts are the Helm charts rendered, in render order.
	Charts []ChartInfo
	// outside are the rendered objects an ObjectFilter left out: the
	// Apps the kept ones depend on are read there (depends.go), never
	// applied.
	outside []*unstructured.Unstructured
}

var fullHashRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Render reads the environment's source and renders it with kustomize. It
// writes nothing, runs no program and fetches nothing but the git source:
//   - the repository (a remote one fetched into a temporary object store
//     on disk under the environment's limits, removed after the render; a
//     local folder read from disk) is copied into
//     an in-memory file system, at most limits.maxRepoFiles files and
//     limits.maxRepoBytes bytes, symbolic links that leave it not followed;
//   - every kustomization it reaches is checked before kustomize runs
//     (checkKustomizations): remote references, absolute paths, paths out
//     of the repository, Helm and plugins are refused with a
//     *KustomizationError naming the file and the entry;
//   - every file read as YAML through that file system, and every inline
//     patch, is checked against its YAML budget first (budgetFS): a file
//     over it is a *TooComplexError naming it;
//   - a Helm chart (the environment's source.helm, or a kustomization's
//     helmCharts) is rendered in-process by helmrender from the in-memory
//     copy, never by a helm binary; a chart refused is a *ChartError;
//   - kustomize (krusty) runs on that in-memory file system with builtin
//     plugins only, Helm and exec functions disabled and loads restricted
//     to the kustomization root.
//
// It then loads the artifact catalog.
//
// Helm charts are rendered for the Kubernetes version of source.kubeVersion
// (or helmrender.DefaultKubeVersion); a plan or an apply asks the target
// cluster (renderWith).
func Render(ctx context.Context, env *envconfig.Environment) (*Rendered, error) {
	return renderWith(ctx, &renderSeam{env: env})
}

// renderWith renders the seam's environment.
func renderWith(ctx context.Context, rs *renderSeam) (*Rendered, error) {
	var r *Rendered
	var err error
	if rs.env.Source.Repo == "" {
		r, err = renderLocal(ctx, rs)
	} else {
		r, err = renderGit(ctx, rs)
	}
	if err != nil {
		return nil, err
	}
	r.Warnings = rs.warnings
	r.Charts = rs.charts
	return r, nil
}

// localRoot is the repository root of a local kustomize folder: the git
// work tree holding it, else the config file's folder when it holds it,
// else the folder itself. It also returns the work tree's HEAD commit.
// kustomize may read any file under the root into the rendered objects,
// so a folder holding the config file's folder, or a root holding a file
// deploy-web keeps secret (localSecrets), is refused with a *ConfigError.
func localRoot(env *envconfig.Environment, dir string) (root, commit string, err error) {
	root = dir
	found := false
	if repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true}); err == nil {
		if wt, err := repo.Worktree(); err == nil {
			if head, err := repo.Head(); err == nil {
				commit = head.Hash().String()
			}
			if r, err := filepath.EvalSymlinks(wt.Filesystem.Root()); err == nil && envconfig.Within(r, dir) {
				root, found = r, true
			}
		}
	}
	if env.ConfigDir != "" {
		cd := realPath(env.ConfigDir)
		if envconfig.Within(dir, cd) {
			return "", "", &envconfig.ConfigError{Field: "source.path", Message: fmt.Sprintf("the folder %s holds the config file's folder %s (which may hold the kubeconfig, the OIDC client secret and the session keys): keep the manifests in a folder of their own", dir, cd)}
		}
		if !found && envconfig.Within(cd, dir) {
			root = cd
		}
	}
	for _, p := range env.LocalSecrets() {
		rp := realPath(p)
		if _, err := os.Lstat(rp); err != nil {
			continue // nothing there to read
		}
		if envconfig.Within(root, rp) {
			return "", "", &envconfig.ConfigError{Field: "source.path", Message: fmt.Sprintf("the folder %s is read from %s, which holds %s, a file deploy-web keeps secret: keep the manifests and the secrets in separate folders", dir, root, rp)}
		}
	}
	return root, commit, nil
}

// realPath is p with its symbolic links resolved, or p when that fails
// (it does not exist).
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func renderLocal(ctx context.Context, rs *renderSeam) (*Rendered, error) {
	env := rs.env
	dir := env.Resolve(env.Source.Path)
	real, err := filepath.Abs(dir)
	if err == nil {
		real, err = filepath.EvalSymlinks(real)
	}
	if err != nil {
		return nil, fmt.Errorf("deployplan: source folder %s: %w", dir, err)
	}
	root, commit, err := localRoot(env, real)
	if err != nil {
		return nil, fmt.Errorf("deployplan: environment %s: %w", env.Name, err)
	}
	rfs, err := repoFSFromDir(ctx, root, env.Limits)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return nil, fmt.Errorf("deployplan: source folder %s: %w", dir, err)
	}
	objs, err := rs.render(ctx, rfs, path.Join(memRoot, filepath.ToSlash(rel)))
	if err != nil {
		return nil, err
	}
	r := &Rendered{Objects: objs, Origin: dir, Commit: commit}
	r.CatalogPath = env.Resolve(env.Catalog)
	data, err := readBounded(r.CatalogPath, maxCatalogBytes)
	if err != nil {
		return nil, fmt.Errorf("deployplan: read catalog: %w", err)
	}
	if r.Catalog, err = ParseCatalog(data); err != nil {
		return nil, err
	}
	return r, nil
}

func renderGit(ctx context.Context, rs *renderSeam) (*Rendered, error) {
	env := rs.env
	src := env.Source
	repo, cleanup, err := openRepo(ctx, env)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	hash, err := resolveRef(repo, src.Ref)
	if err != nil {
		return nil, fmt.Errorf("deployplan: source %s: ref %q: %w", envconfig.RedactURL(src.Repo), src.Ref, err)
	}
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return nil, fmt.Errorf("deployplan: source commit %s: %w", hash, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("deployplan: source tree %s: %w", hash, err)
	}
	origin := fmt.Sprintf("%s@%s:%s", envconfig.RedactURL(src.Repo), src.Ref, src.Path)
	kdir := path.Join(memRoot, path.Clean("/"+filepath.ToSlash(src.Path)))
	// Only the kustomize folder, what it references and the catalog are
	// read from the tree.
	var extra []string
	cp, inRepo := env.CatalogInRepo()
	if inRepo {
		extra = append(extra, cp)
	}
	what := fmt.Sprintf("repository %s at %s", envconfig.RedactURL(src.Repo), hash.String()[:12])
	var rfs *repoFS
	if h := src.Helm; h != nil {
		rfs, err = repoFSForChart(ctx, tree, what, env.Limits, relRepo(kdir), h.ValueFiles, extra...)
	} else {
		rfs, err = repoFSForRender(ctx, tree, what, env.Limits, relRepo(kdir), extra...)
	}
	if err != nil {
		return nil, err
	}
	objs, err := rs.render(ctx, rfs, kdir)
	if err != nil {
		return nil, err
	}
	r := &Rendered{Objects: objs, Commit: hash.String(), Origin: origin}
	if !inRepo {
		r.CatalogPath = env.Catalog
		data, err := readBounded(env.Catalog, maxCatalogBytes)
		if err != nil {
			return nil, fmt.Errorf("deployplan: read catalog: %w", err)
		}
		r.Catalog, err = ParseCatalog(data)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	r.CatalogPath = fmt.Sprintf("%s@%s:%s", envconfig.RedactURL(src.Repo), hash.String()[:12], cp)
	mp := path.Join(memRoot, cp)
	if reason, ok := rfs.links[mp]; ok {
		return nil, fmt.Errorf("deployplan: catalog %s is %s", cp, reason)
	}
	if !rfs.fs.Exists(mp) || rfs.fs.IsDir(mp) {
		return nil, fmt.Errorf("deployplan: catalog %s not in the repository at %s", cp, hash.String()[:12])
	}
	// JSON, decoded by encoding/json (no aliases, bounded by
	// maxCatalogBytes): not a YAML file of the render's budget.
	data, err := rfs.fs.FileSystem.ReadFile(mp)
	if err != nil {
		return nil, fmt.Errorf("deployplan: read catalog: %w", err)
	}
	if r.Catalog, err = ParseCatalog(data); err != nil {
		return nil, err
	}
	return r, nil
}

// renderFS checks the kustomizations reachable from dir, renders their
// Helm charts, then renders dir. A file over its YAML budget (or a render
// abandoned at its deadline) is the error whatever kustomize made of it.
func renderFS(ctx context.Context, rfs *repoFS, dir string) ([]*unstructured.Unstructured, error) {
	return (&renderSeam{}).render(ctx, rfs, dir)
}

// openRepo opens a local repository in place (read-only use), or fetches a
// remote one into a temporary object store on disk (fetchRemote); cleanup
// removes that store once the caller is done with the repository.
func openRepo(ctx context.Context, env *envconfig.Environment) (repo *git.Repository, cleanup func(), err error) {
	src := env.Source
	if local, ok := localRepoPath(src.Repo); ok {
		repo, err := git.PlainOpen(local)
		if err != nil {
			return nil, nil, fmt.Errorf("deployplan: open repository %s: %w", local, err)
		}
		return repo, func() {}, nil
	}
	return fetchRemote(ctx, src, env.Limits)
}

func localRepoPath(u string) (string, bool) {
	if strings.HasPrefix(u, "file://") {
		return strings.TrimPrefix(u, "file://"), true
	}
	if strings.HasPrefix(u, "/") {
		return u, true
	}
	return "", false
}

// resolveRef finds ref as a branch (local or remote-tracking), a tag, a
// commit hash, HEAD or pull/N (refs/pull/N/head, as fetchRemote records
// it).
func resolveRef(repo *git.Repository, ref string) (plumbing.Hash, error) {
	candidates := []string{ref, "refs/heads/" + ref, "refs/remotes/origin/" + ref, "refs/tags/" + ref}
	if head, ok := pullHead(ref); ok {
		candidates = []string{head}
	}
	var firstErr error
	for _, c := range candidates {
		h, err := repo.ResolveRevision(plumbing.Revision(c))
		if err == nil {
			return *h, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if head, err := repo.Head(); err == nil && (ref == "HEAD" || strings.HasSuffix(head.Name().String(), "/"+ref)) {
		return head.Hash(), nil
	}
	return plumbing.ZeroHash, firstErr
}

func kustomize(fs filesys.FileSystem, dir string) ([]*unstructured.Unstructured, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	// Builtin plugins only (statically linked), Helm off, no exec or
	// container functions, no network for functions.
	opts.PluginConfig = types.DisabledPluginConfig()
	m, err := krusty.MakeKustomizer(opts).Run(fs, dir)
	if err != nil {
		// Paths in the in-memory copy ("/repo/k/x.yaml") are shown relative
		// to the repository ("k/x.yaml").
		msg := strings.ReplaceAll(err.Error(), "'"+memRoot+"/", "'")
		msg = strings.ReplaceAll(msg, memRoot+"/", "")
		return nil, fmt.Errorf("deployplan: kustomize build %s: %s", relRepo(dir), msg)
	}
	var out []*unstructured.Unstructured
	for _, r := range m.Resources() {
		// Through JSON, so numbers are int64/float64 as client-go expects.
		b, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("deployplan: kustomize output %s: %w", r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			return nil, fmt.Errorf("deployplan: kustomize output %s: %w", r.CurId(), err)
		}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, errors.New("deployplan: kustomize output has an object without kind or name")
		}
		out = append(out, u)
	}
	return out, nil
}

// RenderFS renders the environment's kustomize folder (source.path) from
// fsys, a repository tree whose root is the repository root (an edited
// tree a write-back is about to push), with the same checks and limits as
// Render. The catalog is not read: only the objects are returned.
func RenderFS(ctx context.Context, env *envconfig.Environment, fsys fs.FS) ([]*unstructured.Unstructured, error) {
	rfs, err := repoFSFromFS(ctx, fsys, "the edited tree of "+envconfig.RedactURL(env.Source.Repo), env.Limits)
	if err != nil {
		return nil, err
	}
	return (&renderSeam{env: env}).render(ctx, rfs, path.Join(memRoot, path.Clean("/"+filepath.ToSlash(env.Source.Path))))
}
