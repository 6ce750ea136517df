package handlers

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"

	"github.com/a-h/templ"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/static"
)

// assets serves the embedded static files with content-hash URLs, so they
// can be cached forever and still change with each release. It also holds
// the stylesheet every page inlines and the Content-Security-Policy that
// allows exactly that stylesheet.
type assets struct {
	hash map[string]string // file name -> short content hash
	// style is the <style> element in every page's head: app.css, whole.
	style templ.Component
	// csp is the Content-Security-Policy of every answer; its style-src
	// carries the sha256 of the inlined stylesheet and nothing inline else.
	csp string
}

// inlineStyle is the stylesheet inlined in every page's <head>, so a cold
// browser paints the first row without waiting for a render-blocking
// request. It is all of app.css: every rule of it can apply at first paint
// on some page or width (the phone layout of the fleet is at its end), and
// loading a part late would make pages jump.
const inlineStyle = "app.css"

// contentSecurityPolicy is the policy of every answer: only the site's own
// scripts (no inline script, no eval), and the site's own stylesheets plus
// the one inline stylesheet whose text hashes to styleHash. No
// 'unsafe-inline' anywhere.
func contentSecurityPolicy(styleHash string) string {
	return "default-src 'self'; script-src 'self'; style-src 'self' '" + styleHash + "'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
}

// cspHash is a CSP source expression's hash of an inline element's text.
func cspHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

func newAssets() (*assets, error) {
	a := &assets{hash: map[string]string{}}
	css, err := fs.ReadFile(static.FS, inlineStyle)
	if err != nil {
		return nil, fmt.Errorf("handlers: static assets: %w", err)
	}
	if strings.Contains(strings.ToLower(string(css)), "</style") {
		return nil, errors.New("handlers: static assets: " + inlineStyle + " contains </style and cannot be inlined")
	}
	a.style = templ.Raw("<style>" + string(css) + "</style>")
	a.csp = contentSecurityPolicy(cspHash(string(css)))
	err = fs.WalkDir(static.FS, ".", func(path string, d fs.DirEntry, err error) error {
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
