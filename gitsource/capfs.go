package gitsource

import (
	"os"
	"sync"

	"github.com/go-git/go-billy/v5"
)

// CapFS is fs whose files fail a write once c.Max bytes were written to
// them in all (a *TooLargeError of c, Unit "bytes written"): the object
// store of a fetch, so no pack, index or ref writes past it.
func CapFS(fs billy.Filesystem, c Cap) billy.Filesystem {
	return &capFS{Filesystem: fs, c: &writeCap{c: c}}
}

// writeCap counts the bytes written to a fetch's object store.
type writeCap struct {
	mu      sync.Mutex
	written int64
	c       Cap
}

func (w *writeCap) add(n int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.written += int64(n)
	if w.written > w.c.Max {
		return w.c.over(w.written, "bytes written")
	}
	return nil
}

// capFS is a billy file system whose files fail a write past the cap.
type capFS struct {
	billy.Filesystem
	c *writeCap
}

func (f *capFS) Create(name string) (billy.File, error) {
	return f.wrap(f.Filesystem.Create(name))
}

func (f *capFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	return f.wrap(f.Filesystem.OpenFile(name, flag, perm))
}

func (f *capFS) TempFile(dir, prefix string) (billy.File, error) {
	return f.wrap(f.Filesystem.TempFile(dir, prefix))
}

func (f *capFS) Chroot(p string) (billy.Filesystem, error) {
	c, err := f.Filesystem.Chroot(p)
	if err != nil {
		return nil, err
	}
	return &capFS{Filesystem: c, c: f.c}, nil
}

func (f *capFS) wrap(file billy.File, err error) (billy.File, error) {
	if err != nil {
		return nil, err
	}
	return &capFile{File: file, c: f.c}, nil
}

type capFile struct {
	billy.File
	c *writeCap
}

func (f *capFile) Write(p []byte) (int, error) {
	if err := f.c.add(len(p)); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}
