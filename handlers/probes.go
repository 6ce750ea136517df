package handlers

import (
	"net/http"
	"strings"
)

// healthz: the process is up.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz: ready only once the informer caches have synced.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if !s.fleet.Synced() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "caches not synced"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// notFound answers every URL the route table does not know, and a GET to a
// POST-only route with 405.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost && s.m != nil {
		post := r.Clone(r.Context())
		post.Method = http.MethodPost
		if _, pattern := s.m.Handler(post); strings.HasPrefix(pattern, "POST ") {
			w.Header().Set("Allow", http.MethodPost)
			return &httpError{Status: http.StatusMethodNotAllowed, Reason: "MethodNotAllowed", Public: r.Method + " is not allowed here: use POST"}
		}
	}
	return notFound("page " + r.URL.Path)
}
