package deployplan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/capread"
)

// linkReasonGit is why a symbolic link in a git tree is not read.
const linkReasonGit = "a symbolic link: symlinks are not followed"

// memRoot is where a repository's files live in the in-memory file system
// kustomize renders from.
const memRoot = "/repo"

// repoFS is a repository copied into memory: kustomize reads only these
// files, never the disk or the network, each under its YAML budget.
type repoFS struct {
	fs *budgetFS
	// links maps the in-memory path of each symbolic link that was not
	// copied to the reason (for a clear error when a kustomization needs it).
	links map[string]string
	// linkTargets maps the in-memory path of each symbolic link that was
	// copied as its target file (a local folder's link inside it) to the
	// target's in-memory path: a chart refuses a link that leaves it.
	linkTargets map[string]string
	// what names the repository in errors.
	what string
}

// repoBudget counts files and bytes against the limits.
type repoBudget struct {
	what     string
	maxBytes int64
	maxFiles int
	bytes    int64
	files    int
}

func (b *repoBudget) add(size int64) error {
	b.files++
	b.bytes += size
	if b.files > b.maxFiles {
		return &TooLargeError{What: b.what, Limit: "limits.maxRepoFiles", Max: int64(b.maxFiles), Read: int64(b.files), Unit: "files"}
	}
	if b.bytes > b.maxBytes {
		return &TooLargeError{What: b.what, Limit: "limits.maxRepoBytes", Max: b.maxBytes, Read: b.bytes, Unit: "bytes"}
	}
	return nil
}

func newRepoFS(ctx context.Context, what string, lim envconfig.Limits) *repoFS {
	return &repoFS{fs: newBudgetFS(ctx, lim), links: map[string]string{}, linkTargets: map[string]string{}, what: what}
}

func (r *repoFS) write(rel string, data []byte) error {
	p := path.Join(memRoot, rel)
	if err := r.fs.MkdirAll(path.Dir(p)); err != nil {
		return err
	}
	return r.fs.WriteFile(p, data)
}

// repoFSFromDir copies a folder on disk into memory (without .git). A
// symbolic link to a file inside the folder is copied as that file; a link
// that leaves the folder, or to a folder, is not followed.
func repoFSFromDir(ctx context.Context, root string, lim envconfig.Limits) (*repoFS, error) {
	r := newRepoFS(ctx, root, lim)
	b := &repoBudget{what: root, maxBytes: lim.MaxRepoBytesOrDefault(), maxFiles: lim.MaxRepoFilesOrDefault()}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("deployplan: source folder: %w", err)
	}
	err = filepath.WalkDir(realRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(realRoot, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		src := p
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				r.links[path.Join(memRoot, rel)] = "a broken symbolic link (symlinks are not followed)"
				return nil
			}
			if !envconfig.Within(realRoot, target) {
				r.links[path.Join(memRoot, rel)] = "a symbolic link that leaves the repository (" + root + "): symlinks are not followed"
				return nil
			}
			st, err := os.Stat(target)
			if err != nil {
				return err
			}
			if !st.Mode().IsRegular() {
				r.links[path.Join(memRoot, rel)] = "a symbolic link to a folder: symlinks are not followed"
				return nil
			}
			src = target
			if trel, err := filepath.Rel(realRoot, target); err == nil {
				r.linkTargets[path.Join(memRoot, rel)] = path.Join(memRoot, filepath.ToSlash(trel))
			}
		} else if !d.Type().IsRegular() {
			return nil // devices, sockets, pipes
		}
		st, err := os.Stat(src)
		if err != nil {
			return err
		}
		if err := b.add(st.Size()); err != nil {
			return err
		}
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, st.Size()))
		if err != nil {
			return err
		}
		return r.write(rel, data)
	})
	if err != nil {
		var tl *TooLargeError
		if errors.As(err, &tl) {
			return nil, err
		}
		return nil, fmt.Errorf("deployplan: read source folder %s: %w", root, err)
	}
	return r, nil
}

// readBounded reads at most max bytes of a file, refusing a larger one.
func readBounded(name string, max int64) ([]byte, error) { return capread.File(name, max) }

// repoFSFromFS copies a read-only file system (a repository's tree, the
// root being the repository root) into memory under the limits. Symbolic
// links and anything but regular files are not copied; a link is
// remembered for a clear error when a kustomization needs it.
func repoFSFromFS(ctx context.Context, fsys fs.FS, what string, lim envconfig.Limits) (*repoFS, error) {
	r := newRepoFS(ctx, what, lim)
	b := &repoBudget{what: what, maxBytes: lim.MaxRepoBytesOrDefault(), maxFiles: lim.MaxRepoFilesOrDefault()}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			r.links[path.Join(memRoot, p)] = linkReasonGit
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if err := b.add(fi.Size()); err != nil {
			return err
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, fi.Size()+1))
		if err != nil {
			return err
		}
		if int64(len(data)) > fi.Size() {
			return fmt.Errorf("%s grew while it was read", p)
		}
		return r.write(p, data)
	})
	if err != nil {
		var tl *TooLargeError
		if errors.As(err, &tl) {
			return nil, err
		}
		return nil, fmt.Errorf("deployplan: read %s: %w", what, err)
	}
	return r, nil
}
