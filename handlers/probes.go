package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
)

// healthz: the process is up.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readiness is the answer of /readyz.
type readiness struct {
	Status string `json:"status"`
	// NotSynced names the reachable clusters whose caches have not synced.
	NotSynced []string `json:"notSynced,omitempty"`
	// Unreachable names the clusters whose apiserver does not answer (not
	// waited for, their rows are shown stale).
	Unreachable []string `json:"unreachable,omitempty"`
}

// decideReady is the readiness rule: every reachable cluster has synced,
// and at least one cluster has (an unreachable cluster is not waited for,
// but a console with no synced cluster has nothing to serve).
func decideReady(names []string, synced, reachable []bool) readiness {
	var rd readiness
	anySynced := false
	for i, n := range names {
		switch {
		case synced[i]:
			anySynced = true
		case !reachable[i]:
		default:
			rd.NotSynced = append(rd.NotSynced, n)
		}
		if !reachable[i] {
			rd.Unreachable = append(rd.Unreachable, n)
		}
	}
	rd.Status = "ready"
	if len(rd.NotSynced) > 0 || !anySynced {
		rd.Status = "caches not synced"
		if len(rd.NotSynced) == 0 {
			for i, n := range names {
				if !synced[i] {
					rd.NotSynced = append(rd.NotSynced, n)
				}
			}
		}
	}
	return rd
}

// readyz: ready once the informer caches of every reachable cluster have
// synced. The route is public (probes carry no login), so it answers the
// status only: which clusters are not synced or unreachable is the
// fleet's layout, kept for the log (a line each time it changes) and the
// metrics (deploy_web_cluster_reachable).
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	names := make([]string, len(s.clusters))
	synced := make([]bool, len(s.clusters))
	reachable := make([]bool, len(s.clusters))
	for i, c := range s.clusters {
		names[i], synced[i], reachable[i] = c.Name, c.View.Synced(), c.View.Status().Reachable
	}
	rd := decideReady(names, synced, reachable)
	if !s.multiCluster() {
		rd.NotSynced, rd.Unreachable = nil, nil // one cluster: the status says it all, as before clusters
	}
	s.logReadiness(rd)
	status := http.StatusOK
	if rd.Status != "ready" {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, readiness{Status: rd.Status})
}

// logReadiness logs the readiness detail of several clusters when it
// changes (with one cluster the probe's status says it all).
func (s *Server) logReadiness(rd readiness) {
	if !s.multiCluster() {
		return
	}
	detail := rd.Status + "|" + strings.Join(rd.NotSynced, ",") + "|" + strings.Join(rd.Unreachable, ",")
	s.readyMu.Lock()
	changed := detail != s.lastReady
	s.lastReady = detail
	s.readyMu.Unlock()
	if !changed || s.log == nil {
		return
	}
	level := slog.LevelInfo
	if rd.Status != "ready" || len(rd.Unreachable) > 0 {
		level = slog.LevelWarn
	}
	s.log.Log(context.Background(), level, "readiness", "status", rd.Status, "not_synced", rd.NotSynced, "unreachable", rd.Unreachable)
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
