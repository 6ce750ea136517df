package deployplan

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hanzoai/deploy-web/envconfig"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
)

// treeReader copies into memory only what a render of a git source needs:
// the kustomization of the kustomize folder (source.path), every file and
// folder its path entries name (kustEntries: the same list the checker
// checks), transitively through bases and components, and the catalog. The
// rest of the tree is never read, so a large repository, or a missing blob
// elsewhere in it, does not matter. Each file is counted against the limits
// before it is read. Symbolic links are not followed: they are recorded so
// the checker names them.
type treeReader struct {
	root  *object.Tree
	rfs   *repoFS
	b     *repoBudget
	dirs  map[string]bool
	files map[string]bool
}

// repoFSForRender reads kdir's kustomizations and what they reference, and
// the files named in extra (repository-relative paths), from tree.
func repoFSForRender(ctx context.Context, tree *object.Tree, what string, lim envconfig.Limits, kdir string, extra ...string) (*repoFS, error) {
	r := &treeReader{root: tree, rfs: newRepoFS(ctx, what, lim), dirs: map[string]bool{}, files: map[string]bool{},
		b: &repoBudget{what: what, maxBytes: lim.MaxRepoBytesOrDefault(), maxFiles: lim.MaxRepoFilesOrDefault()}}
	for _, f := range extra {
		if err := r.file(f); err != nil {
			return nil, err
		}
	}
	if err := r.dir(kdir); err != nil {
		return nil, err
	}
	return r.rfs, nil
}

// repoFSForChart reads the chart folder chartDir (every file under it) and
// the values files (relative to it) from tree, with the files named in
// extra.
func repoFSForChart(ctx context.Context, tree *object.Tree, what string, lim envconfig.Limits, chartDir string, valueFiles []string, extra ...string) (*repoFS, error) {
	r := &treeReader{root: tree, rfs: newRepoFS(ctx, what, lim), dirs: map[string]bool{}, files: map[string]bool{},
		b: &repoBudget{what: what, maxBytes: lim.MaxRepoBytesOrDefault(), maxFiles: lim.MaxRepoFilesOrDefault()}}
	for _, f := range extra {
		if err := r.file(f); err != nil {
			return nil, err
		}
	}
	if err := r.tree(chartDir); err != nil {
		return nil, err
	}
	for _, v := range valueFiles {
		if isRemoteRef(v) || path.IsAbs(v) || strings.HasPrefix(v, `\`) {
			continue // refused by valuesFile
		}
		if err := r.file(path.Join(chartDir, v)); err != nil {
			return nil, err
		}
	}
	return r.rfs, nil
}

// tree copies every file under the folder rel (a chart), recording the
// symbolic links in it.
func (r *treeReader) tree(rel string) error {
	e, ok, err := r.enter(r.dirs, rel)
	if !ok || e.mode != filemode.Dir {
		return err
	}
	if err := r.rfs.fs.MkdirAll(path.Join(memRoot, rel)); err != nil {
		return err
	}
	t := r.root
	if rel != "." && rel != "" {
		if t, err = r.root.Tree(rel); err != nil {
			return fmt.Errorf("deployplan: read source folder %s in %s: %w", rel, r.rfs.what, err)
		}
	}
	for _, ent := range t.Entries {
		p := path.Join(rel, ent.Name)
		switch ent.Mode {
		case filemode.Dir:
			err = r.tree(p)
		case filemode.Symlink:
			r.rfs.links[path.Join(memRoot, p)] = linkReasonGit
		default:
			err = r.file(p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// treeEntry is what lookup found at a path.
type treeEntry struct {
	found bool
	mode  filemode.FileMode
	// link is the path of a symbolic link on the way (the entry itself or
	// a folder above it), "" when there is none.
	link string
}

// lookup walks rel (clean, relative) through the tree, one folder at a
// time, stopping at a symbolic link. A folder object missing from the
// fetched pack is an error naming the folder.
func (r *treeReader) lookup(rel string) (treeEntry, error) {
	if rel == "." || rel == "" {
		return treeEntry{found: true, mode: filemode.Dir}, nil
	}
	cur := r.root
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		var e *object.TreeEntry
		for j := range cur.Entries {
			if cur.Entries[j].Name == name {
				e = &cur.Entries[j]
				break
			}
		}
		p := strings.Join(parts[:i+1], "/")
		switch {
		case e == nil:
			return treeEntry{}, nil
		case e.Mode == filemode.Symlink:
			return treeEntry{found: true, mode: e.Mode, link: p}, nil
		case i == len(parts)-1:
			return treeEntry{found: true, mode: e.Mode}, nil
		case e.Mode != filemode.Dir:
			return treeEntry{}, nil
		}
		next, err := cur.Tree(name)
		if err != nil {
			return treeEntry{}, fmt.Errorf("deployplan: read source folder %s in %s: %w", p, r.rfs.what, err)
		}
		cur = next
	}
	return treeEntry{}, nil
}

// enter marks rel as seen and looks it up; ok is false when there is
// nothing to read: seen before, above the root, missing, or a symbolic
// link (recorded, never followed).
func (r *treeReader) enter(seen map[string]bool, rel string) (e treeEntry, ok bool, err error) {
	if seen[rel] || rel == ".." || strings.HasPrefix(rel, "../") {
		return treeEntry{}, false, nil
	}
	seen[rel] = true
	e, err = r.lookup(rel)
	if err != nil || !e.found {
		return e, false, err
	}
	if e.link != "" {
		r.rfs.links[path.Join(memRoot, e.link)] = linkReasonGit
		return e, false, nil
	}
	return e, true, nil
}

// file copies the regular file rel into memory (once).
func (r *treeReader) file(rel string) error {
	e, ok, err := r.enter(r.files, rel)
	if !ok {
		return err
	}
	if e.mode != filemode.Regular && e.mode != filemode.Executable {
		return nil // a folder where a file is expected, a submodule: kustomize says
	}
	f, err := r.root.File(rel)
	if err != nil {
		// The tree lists the file but its blob is not in the repository
		// (a lost object, an incomplete fetch).
		blob := ""
		if te, ferr := r.root.FindEntry(rel); ferr == nil {
			blob = " " + te.Hash.String()
		}
		return fmt.Errorf("deployplan: read source file %s in %s: its content (blob%s) is missing from the repository: %w", rel, r.rfs.what, blob, err)
	}
	if err := r.b.add(f.Size); err != nil {
		return err
	}
	rd, err := f.Reader()
	if err != nil {
		return fmt.Errorf("deployplan: read source file %s in %s: %w", rel, r.rfs.what, err)
	}
	data, err := io.ReadAll(io.LimitReader(rd, f.Size))
	rd.Close()
	if err != nil {
		return fmt.Errorf("deployplan: read source file %s in %s: %w", rel, r.rfs.what, err)
	}
	return r.rfs.write(rel, data)
}

// dir copies the kustomization of folder rel and everything it references.
func (r *treeReader) dir(rel string) error {
	e, ok, err := r.enter(r.dirs, rel)
	if !ok {
		return err
	}
	if e.mode != filemode.Dir {
		return r.file(rel) // a resource file
	}
	if err := r.rfs.fs.MkdirAll(path.Join(memRoot, rel)); err != nil {
		return err
	}
	var kf string
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		p := path.Join(rel, n)
		if err := r.file(p); err != nil {
			return err
		}
		if r.rfs.fs.Exists(path.Join(memRoot, p)) {
			kf = p
			break
		}
	}
	if kf == "" {
		return nil // the checker says there is no kustomization
	}
	data, err := r.rfs.fs.ReadFile(path.Join(memRoot, kf))
	if err != nil {
		return err
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return nil // the checker reports it with the file
	}
	trees, files := kustEntries(&k)
	if err := r.helmCharts(rel, &k); err != nil {
		return err
	}
	for _, list := range []struct {
		entries []kustEntry
		read    func(string) error
	}{{files, r.file}, {trees, r.dir}} {
		for _, ent := range list.entries {
			if isRemoteRef(ent.value) || path.IsAbs(ent.value) || strings.HasPrefix(ent.value, `\`) {
				continue // refused by the checker
			}
			if err := list.read(path.Join(rel, ent.value)); err != nil {
				return err
			}
		}
	}
	return nil
}

// helmCharts copies the chart folders and values files the helmCharts
// entries of the kustomization in folder rel name (checkHelm checks them).
func (r *treeReader) helmCharts(rel string, k *types.Kustomization) error {
	if len(k.HelmCharts) == 0 {
		return nil
	}
	home := defaultChartHome
	if k.HelmGlobals != nil && k.HelmGlobals.ChartHome != "" {
		home = k.HelmGlobals.ChartHome
	}
	if isRemoteRef(home) || path.IsAbs(home) {
		return nil
	}
	for _, hc := range k.HelmCharts {
		if hc.Name == "" || hc.Repo != "" {
			continue
		}
		dirs := []string{path.Join(rel, home, hc.Name)}
		if hc.Version != "" {
			dirs = append(dirs, path.Join(rel, home, hc.Name+"-"+hc.Version, hc.Name))
		}
		for _, d := range dirs {
			if err := r.tree(d); err != nil {
				return err
			}
		}
		for _, f := range append([]string{hc.ValuesFile}, hc.AdditionalValuesFiles...) {
			if f == "" || isRemoteRef(f) || path.IsAbs(f) {
				continue
			}
			if err := r.file(path.Join(rel, f)); err != nil {
				return err
			}
		}
	}
	return nil
}
