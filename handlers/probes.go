package handlers

import "net/http"

// healthz: the process is up.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz: ready only once the informer caches have synced.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if !s.view.Synced() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "caches not synced"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// notFound answers every URL the route table does not know.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) error {
	return notFound("page " + r.URL.Path)
}
