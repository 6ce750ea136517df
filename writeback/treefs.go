package writeback

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// treeFS is a read-only fs.FS over a git tree, for Locate and the
// request's Plan and Check hooks. Symbolic links are never followed: Stat
// reports them (fs.ModeSymlink) and Open refuses them; a submodule is
// reported as an irregular file. A file over maxFile bytes (inflated) is
// refused before it is read.
type treeFS struct {
	st      storer.EncodedObjectStorer
	root    *object.Tree
	maxFile int64
	// commit is the fetched commit whose tree root is (FileRevisions
	// walks its history); nil for an edited tree.
	commit *object.Commit
}

// entryAt finds name (a valid fs path) in the tree, and the tree of a
// folder. What lies below a symbolic link or a file does not exist.
func (t *treeFS) entryAt(name string) (*object.TreeEntry, *object.Tree, error) {
	if name == "." {
		return &object.TreeEntry{Name: ".", Mode: filemode.Dir, Hash: t.root.Hash}, t.root, nil
	}
	parts := strings.Split(name, "/")
	e, i, err := treeLookup(t.st, t.root, parts)
	switch {
	case err != nil:
		return nil, nil, err
	case e == nil || i < len(parts)-1:
		return nil, nil, fs.ErrNotExist
	case e.Mode != filemode.Dir:
		return e, nil, nil
	}
	sub, err := object.GetTree(t.st, e.Hash)
	if err != nil {
		return nil, nil, fmt.Errorf("folder %s: %w", name, err)
	}
	return e, sub, nil
}

func (t *treeFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	e, _, err := t.entryAt(name)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return t.info(e)
}

// Lstat is Stat: links are never followed anyway (fs.ReadLinkFS).
func (t *treeFS) Lstat(name string) (fs.FileInfo, error) { return t.Stat(name) }

// ReadLink refuses: the target of a link is never used.
func (t *treeFS) ReadLink(name string) (string, error) {
	return "", &fs.PathError{Op: "readlink", Path: name, Err: errors.ErrUnsupported}
}

func (t *treeFS) info(e *object.TreeEntry) (fs.FileInfo, error) {
	fi := treeInfo{name: e.Name}
	switch e.Mode {
	case filemode.Dir:
		fi.mode = fs.ModeDir | 0o555
	case filemode.Regular, filemode.Deprecated:
		fi.mode = 0o444
	case filemode.Executable:
		fi.mode = 0o555
	case filemode.Symlink:
		fi.mode = fs.ModeSymlink | 0o777
	default: // a submodule
		fi.mode = fs.ModeIrregular
	}
	if fi.mode.IsRegular() {
		o, err := t.st.EncodedObject(plumbing.BlobObject, e.Hash)
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", e.Name, err)
		}
		fi.size = o.Size()
	}
	return fi, nil
}

// BlobHash is the git blob id of the regular file name ("" and false
// when there is none): what the file holds, whatever its size, without
// reading it.
func (t *treeFS) BlobHash(name string) (string, bool) {
	if !fs.ValidPath(name) {
		return "", false
	}
	e, _, err := t.entryAt(name)
	if err != nil || e == nil || (e.Mode != filemode.Regular && e.Mode != filemode.Executable) {
		return "", false
	}
	return e.Hash.String(), true
}

func (t *treeFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	e, sub, err := t.entryAt(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	fi, err := t.info(e)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	switch {
	case fi.IsDir():
		return &treeDir{fs: t, tree: sub, info: fi}, nil
	case !fi.Mode().IsRegular():
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("a symbolic link or a submodule, not a regular file")}
	case fi.Size() > t.maxFile:
		return nil, &fs.PathError{Op: "open", Path: name, Err: &TooLargeError{What: "file " + name, Limit: "MaxFileBytes", Max: t.maxFile}}
	}
	b, err := object.GetBlob(t.st, e.Hash)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	rc, err := b.Reader()
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &treeFile{rc: rc, r: io.LimitReader(rc, t.maxFile), info: fi}, nil
}

type treeInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (i treeInfo) Name() string       { return i.name }
func (i treeInfo) Size() int64        { return i.size }
func (i treeInfo) Mode() fs.FileMode  { return i.mode }
func (i treeInfo) ModTime() time.Time { return time.Time{} }
func (i treeInfo) IsDir() bool        { return i.mode.IsDir() }
func (i treeInfo) Sys() any           { return nil }

type treeFile struct {
	rc   io.Closer
	r    io.Reader
	info fs.FileInfo
}

func (f *treeFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *treeFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *treeFile) Close() error               { return f.rc.Close() }

type treeDir struct {
	fs   *treeFS
	tree *object.Tree
	info fs.FileInfo
	next int
}

func (d *treeDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *treeDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.Name(), Err: errors.New("is a directory")}
}
func (d *treeDir) Close() error { return nil }

func (d *treeDir) ReadDir(n int) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	for d.next < len(d.tree.Entries) && (n <= 0 || len(out) < n) {
		e := &d.tree.Entries[d.next]
		d.next++
		fi, err := d.fs.info(e)
		if err != nil {
			return out, err
		}
		out = append(out, fs.FileInfoToDirEntry(fi))
	}
	if n > 0 && len(out) == 0 {
		return nil, io.EOF
	}
	return out, nil
}
