package writeback

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/hanzoai/deploy-web/gitsource"
)

// Restore sets one path of the branch (a folder or a file) back to what it
// is at an earlier commit of the same repository: the folder's tree (its
// files added, changed and removed) or the file's blob, taken as git
// objects of that commit; nothing outside Path changes. The commit is
// fetched alone (depth 1) under the request's Limits; its objects are the
// repository's own, so the push sends the new folders above Path only.
type Restore struct {
	// Path is slash-separated, relative to the repository root, clean.
	Path string
	// Commit is the full hash of the commit whose Path the branch gets.
	Commit string
}

// fullHashRE is a full commit hash.
var fullHashRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

func checkRestore(r Restore) error {
	if !fullHashRE.MatchString(r.Commit) {
		return fmt.Errorf("writeback: restore %s: commit %q is not a full commit hash", r.Path, r.Commit)
	}
	if _, err := cleanTarget(r.Path); err != nil {
		return fmt.Errorf("writeback: restore: %v", err)
	}
	return nil
}

// RestoreError is a Restore that cannot be made: the commit does not hold
// the path (or holds it as something else than a folder or a regular
// file).
type RestoreError struct {
	Path, Commit, Reason string
}

func (e *RestoreError) Error() string {
	return fmt.Sprintf("writeback: %s at commit %s: %s", e.Path, e.Commit, e.Reason)
}

// fetchCommit fetches commit (depth 1) into st unless it is there.
func fetchCommit(ctx context.Context, rem *remote, st *filesystem.Storage, commit plumbing.Hash, lim Limits) error {
	if _, err := st.EncodedObject(plumbing.CommitObject, commit); err == nil {
		return nil
	}
	sess, err := gitsource.Open(ctx, rem.source())
	if err != nil {
		return fetchError(rem, "connect", err)
	}
	defer sess.Close()
	err = sess.Fetch(ctx, st, []plumbing.Hash{commit}, 1, gitsource.Limits{
		Pack:     gitsource.Cap{Max: lim.maxPackBytes(), Limit: "MaxPackBytes", What: "the fetched pack of " + rem.url},
		Inflated: gitsource.Cap{Max: lim.maxInflatedBytes(), Limit: "MaxInflatedBytes", What: "the fetched pack of " + rem.url + " (inflated)"},
	})
	if err != nil {
		return fetchError(rem, "fetch commit "+commit.String(), err)
	}
	if _, err := st.EncodedObject(plumbing.CommitObject, commit); err != nil {
		return &RestoreError{Commit: commit.String(), Reason: "the repository did not send this commit (it is not on any branch any more?)"}
	}
	return nil
}

// applyRestores sets each restore's path of root to its entry at its
// commit (fetched before) and returns the new root and the new trees.
func applyRestores(st storer.EncodedObjectStorer, root plumbing.Hash, rs []Restore) (plumbing.Hash, []plumbing.Hash, error) {
	var objs []plumbing.Hash
	for _, r := range rs {
		c, err := object.GetCommit(st, plumbing.NewHash(r.Commit))
		if err != nil {
			return root, nil, &RestoreError{Path: r.Path, Commit: r.Commit, Reason: "commit not fetched: " + err.Error()}
		}
		from, err := c.Tree()
		if err != nil {
			return root, nil, fmt.Errorf("writeback: tree of %s: %w", r.Commit, err)
		}
		parts := strings.Split(r.Path, "/")
		e, i, err := treeLookup(st, from, parts)
		switch {
		case err != nil:
			return root, nil, fmt.Errorf("writeback: restore %s: %w", r.Path, err)
		case e == nil || i < len(parts)-1:
			return root, nil, &RestoreError{Path: r.Path, Commit: r.Commit, Reason: "no such folder or file there"}
		case e.Mode != filemode.Dir && e.Mode != filemode.Regular && e.Mode != filemode.Executable:
			return root, nil, &RestoreError{Path: r.Path, Commit: r.Commit, Reason: "not a folder or a regular file there"}
		}
		tree, err := object.GetTree(st, root)
		if err != nil {
			return root, nil, fmt.Errorf("writeback: read the tree: %w", err)
		}
		var more []plumbing.Hash
		if root, more, err = setEntry(st, tree, parts, *e); err != nil {
			return root, nil, err
		}
		objs = append(objs, more...)
	}
	return root, objs, nil
}

// setEntry is tree with the entry at parts set to e (its name the last
// part), the folders on the way created when missing; a file or a link on
// the way is refused. It stores the new trees and returns the new root
// and every new tree.
func setEntry(st storer.EncodedObjectStorer, tree *object.Tree, parts []string, e object.TreeEntry) (plumbing.Hash, []plumbing.Hash, error) {
	entries := append([]object.TreeEntry{}, tree.Entries...)
	idx := -1
	for i := range entries {
		if entries[i].Name == parts[0] {
			idx = i
		}
	}
	var trees []plumbing.Hash
	if len(parts) == 1 {
		e.Name = parts[0]
		if idx >= 0 {
			entries[idx] = e
		} else {
			entries = append(entries, e)
		}
	} else {
		child := &object.Tree{}
		if idx >= 0 {
			if entries[idx].Mode != filemode.Dir {
				return plumbing.ZeroHash, nil, &EditError{File: strings.Join(parts, "/"), Reason: parts[0] + " is not a folder on the branch"}
			}
			var err error
			if child, err = object.GetTree(st, entries[idx].Hash); err != nil {
				return plumbing.ZeroHash, nil, fmt.Errorf("writeback: read folder %s: %w", parts[0], err)
			}
		}
		h, more, err := setEntry(st, child, parts[1:], e)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		trees = more
		if idx >= 0 {
			entries[idx].Hash = h
		} else {
			entries = append(entries, object.TreeEntry{Name: parts[0], Mode: filemode.Dir, Hash: h})
		}
	}
	// Git's order: a folder sorts as its name followed by "/".
	key := func(t object.TreeEntry) string {
		if t.Mode == filemode.Dir {
			return t.Name + "/"
		}
		return t.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	obj := st.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("writeback: encode a tree: %w", err)
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, nil, fmt.Errorf("writeback: store a tree: %w", err)
	}
	return h, append(trees, h), nil
}

// underRestore reports whether file is a restore's path or lies under it.
func underRestore(rs []Restore, file string) bool {
	for _, r := range rs {
		if file == r.Path || strings.HasPrefix(file, r.Path+"/") {
			return true
		}
	}
	return false
}

// changedFiles are the files of to that differ from from (added, changed
// or removed), sorted.
func changedFiles(from, to *object.Tree) ([]string, error) {
	changes, err := object.DiffTree(from, to)
	if err != nil {
		return nil, fmt.Errorf("writeback: compare the edited tree: %w", err)
	}
	out := make([]string, 0, len(changes))
	for _, ch := range changes {
		name := ch.To.Name
		if name == "" {
			name = ch.From.Name
		}
		out = append(out, path.Clean(name))
	}
	sort.Strings(out)
	return out, nil
}
