package deployplan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
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
}

// maxRepoFile bounds one file copied out of a repository (kustomize inputs
// are small; this keeps a stray binary from filling memory).
const maxRepoFile = 16 << 20

var fullHashRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Render reads the environment's source, renders it with kustomize (krusty,
// in memory, builtin plugins only, loads restricted to the kustomization
// root) and loads the artifact catalog. It writes nothing.
func Render(ctx context.Context, env *Environment) (*Rendered, error) {
	if env.Source.Repo == "" {
		return renderLocal(env)
	}
	return renderGit(ctx, env)
}

func renderLocal(env *Environment) (*Rendered, error) {
	dir := env.resolve(env.Source.Path)
	objs, err := kustomize(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	r := &Rendered{Objects: objs, Origin: dir}
	// The commit of the enclosing repository, when there is one.
	if repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true}); err == nil {
		if head, err := repo.Head(); err == nil {
			r.Commit = head.Hash().String()
		}
	}
	r.CatalogPath = env.resolve(env.Catalog)
	data, err := os.ReadFile(r.CatalogPath)
	if err != nil {
		return nil, fmt.Errorf("deployplan: read catalog: %w", err)
	}
	if r.Catalog, err = ParseCatalog(data); err != nil {
		return nil, err
	}
	return r, nil
}

func renderGit(ctx context.Context, env *Environment) (*Rendered, error) {
	src := env.Source
	repo, err := openRepo(ctx, env)
	if err != nil {
		return nil, err
	}
	hash, err := resolveRef(repo, src.Ref)
	if err != nil {
		return nil, fmt.Errorf("deployplan: source %s: ref %q: %w", redactURL(src.Repo), src.Ref, err)
	}
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return nil, fmt.Errorf("deployplan: source commit %s: %w", hash, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("deployplan: source tree %s: %w", hash, err)
	}
	fs := filesys.MakeFsInMemory()
	const root = "/src"
	err = tree.Files().ForEach(func(f *object.File) error {
		if f.Mode != filemode.Regular && f.Mode != filemode.Executable {
			return nil // symlinks and submodules are not followed
		}
		if f.Size > maxRepoFile {
			return nil
		}
		rd, err := f.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		data, err := io.ReadAll(io.LimitReader(rd, maxRepoFile))
		if err != nil {
			return err
		}
		p := path.Join(root, f.Name)
		if err := fs.MkdirAll(path.Dir(p)); err != nil {
			return err
		}
		return fs.WriteFile(p, data)
	})
	if err != nil {
		return nil, fmt.Errorf("deployplan: read source tree: %w", err)
	}
	kdir := path.Join(root, path.Clean("/"+filepath.ToSlash(src.Path)))
	objs, err := kustomize(fs, kdir)
	if err != nil {
		return nil, err
	}
	r := &Rendered{
		Objects: objs,
		Commit:  hash.String(),
		Origin:  fmt.Sprintf("%s@%s:%s", redactURL(src.Repo), src.Ref, src.Path),
	}
	if filepath.IsAbs(env.Catalog) {
		r.CatalogPath = env.Catalog
		data, err := os.ReadFile(env.Catalog)
		if err != nil {
			return nil, fmt.Errorf("deployplan: read catalog: %w", err)
		}
		r.Catalog, err = ParseCatalog(data)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	cp := path.Clean(filepath.ToSlash(env.Catalog))
	r.CatalogPath = fmt.Sprintf("%s@%s:%s", redactURL(src.Repo), hash.String()[:12], cp)
	f, err := tree.File(cp)
	if err != nil {
		return nil, fmt.Errorf("deployplan: catalog %s not in the repository at %s: %w", cp, hash.String()[:12], err)
	}
	data, err := f.Contents()
	if err != nil {
		return nil, fmt.Errorf("deployplan: read catalog: %w", err)
	}
	if r.Catalog, err = ParseCatalog([]byte(data)); err != nil {
		return nil, err
	}
	return r, nil
}

// openRepo opens a local repository in place (read-only use), or clones a
// remote one into memory: shallow for a branch or tag, full for a commit.
func openRepo(ctx context.Context, env *Environment) (*git.Repository, error) {
	src := env.Source
	if local, ok := localRepoPath(src.Repo); ok {
		repo, err := git.PlainOpen(local)
		if err != nil {
			return nil, fmt.Errorf("deployplan: open repository %s: %w", local, err)
		}
		return repo, nil
	}
	opts := &git.CloneOptions{URL: src.Repo, Tags: git.NoTags}
	if src.TokenEnv != "" {
		tok := os.Getenv(src.TokenEnv)
		if tok == "" {
			return nil, fmt.Errorf("deployplan: source.tokenEnv: $%s is empty", src.TokenEnv)
		}
		opts.Auth = &githttp.BasicAuth{Username: "x-access-token", Password: tok}
	}
	if fullHashRE.MatchString(src.Ref) {
		repo, err := git.CloneContext(ctx, memory.NewStorage(), nil, opts)
		if err != nil {
			return nil, fmt.Errorf("deployplan: clone %s: %w", redactURL(src.Repo), err)
		}
		return repo, nil
	}
	var firstErr error
	for _, rn := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(src.Ref), plumbing.NewTagReferenceName(src.Ref)} {
		o := *opts
		o.ReferenceName, o.SingleBranch, o.Depth = rn, true, 1
		repo, err := git.CloneContext(ctx, memory.NewStorage(), nil, &o)
		if err == nil {
			return repo, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("deployplan: clone %s at %q: %w", redactURL(src.Repo), src.Ref, firstErr)
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
// commit hash or HEAD.
func resolveRef(repo *git.Repository, ref string) (plumbing.Hash, error) {
	candidates := []string{ref, "refs/heads/" + ref, "refs/remotes/origin/" + ref, "refs/tags/" + ref}
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

// redactURL drops user info from a URL so a token never reaches a report.
func redactURL(u string) string {
	if i := strings.Index(u, "://"); i > 0 {
		rest := u[i+3:]
		if at := strings.Index(rest, "@"); at >= 0 && at < strings.IndexAny(rest+"/", "/") {
			return u[:i+3] + rest[at+1:]
		}
	}
	return u
}

func kustomize(fs filesys.FileSystem, dir string) ([]*unstructured.Unstructured, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	m, err := krusty.MakeKustomizer(opts).Run(fs, dir)
	if err != nil {
		return nil, fmt.Errorf("deployplan: kustomize build %s: %w", dir, err)
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
