package devidp

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// app is the login, consent and logout app that Hydra sends browsers to,
// and the token hook Hydra calls on every token request.
type app struct {
	log   *slog.Logger
	admin adminAPI
	dir   *directory
	// hookPath is the token hook's path, with a random part only Hydra
	// knows ("" turns the hook off).
	hookPath string
}

// newApp returns the app's handler.
func newApp(log *slog.Logger, admin adminAPI, dir *directory, hookPath string) http.Handler {
	a := &app{log: log, admin: admin, dir: dir, hookPath: hookPath}
	return a.routes()
}

// routes is the app's one route table.
func (a *app) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /login", a.handle(a.loginShow))
	mux.Handle("POST /login", a.handle(a.loginSubmit))
	mux.Handle("GET /consent", a.handle(a.consentAccept))
	mux.Handle("GET /logout", a.handle(a.logoutAccept))
	mux.Handle("GET /logged-out", a.handle(a.loggedOutShow))
	mux.Handle("GET /{$}", a.handle(a.homeShow))
	if a.hookPath != "" {
		mux.HandleFunc("POST "+a.hookPath, a.tokenHook)
	}
	return mux
}

// handlerFunc is an app handler: it writes a response or returns an error
// for handle to render.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// appError is an error with the status and the message a browser may see.
// Err, when set, is for the log only.
type appError struct {
	Status int
	Public string
	Err    error
}

func (e *appError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("devidp: %d %s: %v", e.Status, e.Public, e.Err)
	}
	return fmt.Sprintf("devidp: %d %s", e.Status, e.Public)
}

func (e *appError) Unwrap() error { return e.Err }

// handle adapts a handlerFunc: it sets the headers every page carries and
// renders a returned error as an error page, logging only server errors.
func (a *app) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("Cache-Control", "no-store")
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("X-Frame-Options", "DENY")
		hdr.Set("Referrer-Policy", "no-referrer")
		// No form-action: browsers apply it to the redirects that follow a
		// form post, and the login form's answer redirects to Hydra.
		hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
		err := h(w, r)
		if err == nil {
			return
		}
		var ae *appError
		if !errors.As(err, &ae) {
			ae = &appError{Status: http.StatusInternalServerError, Public: "Something went wrong.", Err: err}
		}
		if ae.Status >= 500 {
			a.log.Error("devidp: request failed", "method", r.Method, "path", r.URL.Path, "status", ae.Status, "err", err)
		}
		a.render(w, ae.Status, errorPage, errorProps{Title: http.StatusText(ae.Status), Message: ae.Public})
	})
}

// render executes a page into a buffer first, so that a template error
// becomes a clean 500 rather than half a page.
func (a *app) render(w http.ResponseWriter, status int, name string, props any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, props); err != nil {
		a.log.Error("devidp: render page", "page", name, "err", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// homeShow answers GET / with a short explanation, for people who open the
// app directly.
func (a *app) homeShow(w http.ResponseWriter, r *http.Request) error {
	a.render(w, http.StatusOK, infoPage, infoProps{
		Title:   "deploy-web demo identity provider",
		Message: "This is the sign-in page of deploy-web's demo identity provider. Open deploy-web and sign in from there.",
	})
	return nil
}

// loggedOutShow answers GET /logged-out, Hydra's default page after logout.
func (a *app) loggedOutShow(w http.ResponseWriter, r *http.Request) error {
	a.render(w, http.StatusOK, infoPage, infoProps{
		Title:   "Signed out",
		Message: "You have been signed out of the demo identity provider.",
	})
	return nil
}
