package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"

	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/static"
)

// assets serves the embedded static files with content-hash URLs, so they
// can be cached forever and still change with each release.
type assets struct {
	hash map[string]string // file name -> short content hash
}

func newAssets() (*assets, error) {
	a := &assets{hash: map[string]string{}}
	err := fs.WalkDir(static.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(static.FS, path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		a.hash[path] = hex.EncodeToString(sum[:6])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("handlers: static assets: %w", err)
	}
	return a, nil
}

// url returns the cache-busting URL of a static file.
func (a *assets) url(name string) string {
	return paths.WithQuery(paths.Static(name), url.Values{"v": {a.hash[name]}})
}

// static serves GET /static/{file}.
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	h, ok := s.assets.hash[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.URL.Query().Get("v") == h {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	http.ServeFileFS(w, r, static.FS, name)
}
