package writeback

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// edited is the result of applyEdits.
type edited struct {
	// root is the new root tree.
	root plumbing.Hash
	// files are the files whose content changed, in edit order.
	files []string
	// objects are the new blobs and trees (the commit comes later).
	objects []plumbing.Hash
}

// applyEdits applies edits to base's files and stores the new blobs and
// trees. Each edit's file must exist in base as a regular (or executable)
// file, reached through folders only: a symbolic link or a submodule at the
// end or on the way is an *EditError. Only the files the edits name are
// read (each at most maxFile bytes) or written; modes are kept.
func applyEdits(st storer.EncodedObjectStorer, base *object.Tree, edits []Edit, maxFile int64) (edited, error) {
	type file struct {
		orig, cur []byte
	}
	files := map[string]*file{}
	var order []string
	for _, e := range edits {
		p := e.Target()
		if _, err := cleanTarget(p); err != nil {
			return edited{}, &EditError{File: p, Reason: err.Error()}
		}
		f, ok := files[p]
		if !ok {
			b, err := readTreeFile(st, base, p, maxFile)
			if err != nil {
				return edited{}, err
			}
			f = &file{orig: b, cur: b}
			files[p] = f
			order = append(order, p)
		}
		out, err := e.Apply(f.cur)
		if err != nil {
			var ee *EditError
			if errors.As(err, &ee) {
				return edited{}, err
			}
			return edited{}, &EditError{File: p, Reason: err.Error()}
		}
		if int64(len(out)) > maxFile {
			return edited{}, &EditError{File: p, Reason: fmt.Sprintf("the edited file has %d bytes, more than Limits.MaxFileBytes (%d)", len(out), maxFile)}
		}
		f.cur = out
	}
	res := edited{root: base.Hash}
	blobs := map[string]plumbing.Hash{}
	for _, p := range order {
		f := files[p]
		if bytes.Equal(f.orig, f.cur) {
			continue
		}
		h, err := storeBlob(st, f.cur)
		if err != nil {
			return edited{}, err
		}
		blobs[p] = h
		res.files = append(res.files, p)
		res.objects = append(res.objects, h)
	}
	if len(blobs) == 0 {
		return res, nil
	}
	root, trees, err := rewriteTree(st, base, blobs)
	if err != nil {
		return edited{}, err
	}
	res.root = root
	res.objects = append(res.objects, trees...)
	return res, nil
}

// treeLookup walks parts through root, one folder at a time. It returns
// the entry of the last part, or the first entry on the way that is not a
// folder (a file, a symbolic link, a submodule) with its index in parts;
// nil when a part is missing.
func treeLookup(st storer.EncodedObjectStorer, root *object.Tree, parts []string) (*object.TreeEntry, int, error) {
	cur := root
	for i, name := range parts {
		var e *object.TreeEntry
		for j := range cur.Entries {
			if cur.Entries[j].Name == name {
				e = &cur.Entries[j]
				break
			}
		}
		if e == nil || i == len(parts)-1 || e.Mode != filemode.Dir {
			return e, i, nil
		}
		sub, err := object.GetTree(st, e.Hash)
		if err != nil {
			return nil, i, fmt.Errorf("read folder %s: %w", strings.Join(parts[:i+1], "/"), err)
		}
		cur = sub
	}
	return nil, 0, nil
}

// readTreeFile reads the regular file at p (a clean relative path) of
// root; a symbolic link or a submodule at the end or on the way is
// refused.
func readTreeFile(st storer.EncodedObjectStorer, root *object.Tree, p string, maxFile int64) ([]byte, error) {
	fail := func(format string, a ...any) error {
		return &EditError{File: p, Reason: fmt.Sprintf(format, a...)}
	}
	parts := strings.Split(p, "/")
	e, i, err := treeLookup(st, root, parts)
	if err != nil {
		return nil, fail("%v", err)
	}
	at := strings.Join(parts[:i+1], "/")
	switch {
	case e == nil:
		return nil, fail("no such file on the branch: an edit changes an existing file only")
	case e.Mode == filemode.Symlink:
		return nil, fail("%s is a symbolic link: deploy-web writes regular files only, never through a link", at)
	case e.Mode == filemode.Submodule:
		return nil, fail("%s is a submodule: deploy-web writes regular files of this repository only", at)
	case i < len(parts)-1:
		return nil, fail("%s is not a folder", at)
	case e.Mode == filemode.Dir:
		return nil, fail("is a folder, not a file")
	}
	o, err := st.EncodedObject(plumbing.BlobObject, e.Hash)
	if err != nil {
		return nil, fail("read: %v", err)
	}
	if o.Size() > maxFile {
		return nil, fail("%d bytes, more than Limits.MaxFileBytes (%d)", o.Size(), maxFile)
	}
	r, err := o.Reader()
	if err != nil {
		return nil, fail("read: %v", err)
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, maxFile))
}

func storeBlob(st storer.EncodedObjectStorer, b []byte) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(b)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("writeback: store a blob: %w", err)
	}
	if _, err := w.Write(b); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("writeback: store a blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("writeback: store a blob: %w", err)
	}
	h, err := st.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("writeback: store a blob: %w", err)
	}
	return h, nil
}

// rewriteTree is tree with the files of blobs (paths relative to tree,
// which readTreeFile found there) pointing at their new blobs. It stores
// the new trees and returns the new root and every new tree.
func rewriteTree(st storer.EncodedObjectStorer, tree *object.Tree, blobs map[string]plumbing.Hash) (plumbing.Hash, []plumbing.Hash, error) {
	sub := map[string]map[string]plumbing.Hash{}
	entries := append([]object.TreeEntry{}, tree.Entries...)
	for p, h := range blobs {
		dir, rest, nested := strings.Cut(p, "/")
		if !nested {
			for i := range entries {
				if entries[i].Name == p {
					entries[i].Hash = h
				}
			}
			continue
		}
		if sub[dir] == nil {
			sub[dir] = map[string]plumbing.Hash{}
		}
		sub[dir][rest] = h
	}
	var trees []plumbing.Hash
	for i := range entries {
		m, ok := sub[entries[i].Name]
		if !ok {
			continue
		}
		child, err := object.GetTree(st, entries[i].Hash)
		if err != nil {
			return plumbing.ZeroHash, nil, fmt.Errorf("writeback: read folder %s: %w", entries[i].Name, err)
		}
		h, more, err := rewriteTree(st, child, m)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		entries[i].Hash = h
		trees = append(trees, more...)
	}
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
