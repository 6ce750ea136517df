package handlers

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/web/templates"
)

// readSyncRequest reads a sync's optional body: {"breakGlass": {"reason":
// "..."}} (JSON; an empty body is none) or breakGlassReason=... (form),
// and returns the request carrying it (withBreakGlass at App a).
func (s *Server) readSyncRequest(r *http.Request, a appRef) (*http.Request, error) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	var reason string
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/json" {
		var body struct {
			BreakGlass *breakGlassJSON `json:"breakGlass"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		switch err := dec.Decode(&body); {
		case err == io.EOF:
		case err != nil || dec.Decode(&struct{}{}) != io.EOF:
			return r, badRequest("body: want nothing, or {\"breakGlass\": {\"reason\": \"...\"}}")
		case body.BreakGlass != nil:
			reason = body.BreakGlass.Reason
		}
	} else {
		if err := r.ParseForm(); err != nil {
			return r, badRequest("body: unreadable form")
		}
		reason = r.PostForm.Get(breakGlassField)
	}
	return r.WithContext(s.withBreakGlass(r.Context(), s.appTarget(a), reason)), nil
}

// apiSync serves POST /v1/deploy/{name}/sync.
func (s *Server) apiSync(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.releaser(nil); err != nil {
		return err
	}
	app, err := s.resolveApp(r, "")
	if err != nil {
		s.auditRefusal(r, "sync", err)
		return err
	}
	rel, err := s.releaser(app.c)
	if err != nil {
		return err
	}
	if r, err = s.readSyncRequest(r, app); err != nil {
		s.auditRefusal(r, "sync", err)
		return err
	}
	if g := s.renderedBy(app); g != nil {
		out, err := s.syncFromGit(r, app, g)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, syncResponse{Cluster: app.Cluster(), SyncResult: release.SyncResult{App: app.Name, Namespace: app.Namespace, RequestedAt: s.opts.Now().UTC().Format(time.RFC3339Nano)},
			Environment: out.Environment, Commit: out.Commit, Run: out.Run})
		return nil
	}
	res, err := rel.Sync(r.Context(), app.Namespace, app.Name, actor(r))
	if err != nil {
		return releaseError(err)
	}
	writeJSON(w, http.StatusOK, syncResponse{Cluster: app.Cluster(), SyncResult: res})
	return nil
}

// syncFromGit is the sync of an App an environment renders
// (gitops.Service.Sync): one run that plans the environment at its branch
// head and applies the App and its own objects only. The commit is the one
// the console last rendered; the run's report names the one applied.
func (s *Server) syncFromGit(r *http.Request, app appRef, g *gitRendered) (gitOutcome, error) {
	res, err := s.ops.Sync(r.Context(), gitops.SyncRequest{Env: g.env, App: workflowApp(app), Commit: g.desired.Commit, Who: s.person(r.Context()),
		BreakGlass: breakGlassOf(r.Context()).bg})
	var ge *gitops.Error
	switch {
	case errors.As(err, &ge) && (ge.Reason == gitops.ReasonFrozen || ge.Reason == "FreezesUnreadable"):
		// envrun recorded the refusal (its apply record); log it only.
		s.log.Info("sync", "user", actor(r), "app", app.Name, "cluster", app.Cluster(), "environment", g.env.Name, "outcome", "refused", "err", err.Error(), "request_id", requestID(r.Context()))
		return gitOutcome{}, workflowError(err)
	case err != nil:
		err = workflowError(err)
		s.auditRefusal(r, "sync", err)
		return gitOutcome{}, err
	}
	out := gitOutcome{Environment: res.Environment, Run: runOf(res.Run), Commit: res.Commit}
	s.log.Info("sync", "user", actor(r), "app", app.Name, "cluster", app.Cluster(), "namespace", app.Namespace, "environment", g.env.Name,
		"commit", g.desired.Commit, "run", res.Run.ID, "outcome", "started", "request_id", requestID(r.Context()))
	return out, nil
}

// appSync serves POST /clusters/{cluster}/apps/{namespace}/{name}/sync.
func (s *Server) appSync(w http.ResponseWriter, r *http.Request) error {
	app, err := s.resolveApp(r, "")
	if err != nil {
		s.auditRefusal(r, "sync", err)
		return err
	}
	ns, name := app.Namespace, app.Name
	rel, err := s.releaser(app.c)
	if err != nil {
		return err
	}
	if r, err = s.readSyncRequest(r, app); err != nil {
		s.auditRefusal(r, "sync", err)
		return err
	}
	if g := s.renderedBy(app); g != nil {
		out, err := s.syncFromGit(r, app, g)
		var he *httpError
		switch {
		case errors.As(err, &he) && he.Status < 500:
			a := templates.ActionView{AppCluster: app.Cluster(), AppNamespace: ns, AppName: name, Kind: "error", Error: he.Public}
			return s.render(w, r, actionStatus(he.Status), templates.ActionResult(a))
		case err != nil:
			return err
		}
		gv := gitActionView(out)
		gv.NoChange = false // a sync commits nothing: it shows the branch head
		a := templates.ActionView{AppCluster: app.Cluster(), AppNamespace: ns, AppName: name, Kind: "success", Git: gv,
			Message: "Syncing " + name + " from git: environment " + out.Environment + " is planned at the head of " + out.Commit.Branch + " and " + name + "'s objects alone are applied."}
		return s.render(w, r, http.StatusOK, templates.ActionResult(a))
	}
	res, err := rel.Sync(r.Context(), ns, name, actor(r))
	var he *httpError
	switch {
	case errors.As(releaseError(err), &he) && he.Status < 500:
		a := templates.ActionView{AppCluster: app.Cluster(), AppNamespace: ns, AppName: name, Kind: "error", Error: he.Public}
		return s.render(w, r, actionStatus(he.Status), templates.ActionResult(a))
	case err != nil:
		return releaseError(err)
	}
	a := templates.ActionView{AppCluster: app.Cluster(), AppNamespace: ns, AppName: name, Kind: "success", Message: "Sync requested at " + res.RequestedAt + ": the operator reconciles " + name + "."}
	return s.render(w, r, http.StatusOK, templates.ActionResult(a))
}
