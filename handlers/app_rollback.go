package handlers

import (
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/templates"
)

// maxBody bounds the body of a write request.
const maxBody = 4 << 10

// actor names the user in audit records (Events, log lines): the email
// and the subject, "alice@example.com (sub alice)", or the subject alone.
func actor(r *http.Request) string {
	id, ok := auth.FromContext(r.Context())
	if !ok {
		return "unknown"
	}
	return id.Actor().String()
}

// releaseError maps the release seam's errors to answers: a refusal keeps
// its public text and gets the status of its kind; anything else is left
// to the adapter (a 500).
func releaseError(err error) error {
	var ref *release.RefusalError
	if fe := freezeError(err); fe != err {
		return fe
	}
	switch {
	case errors.As(err, &ref):
		status, reason := refusalStatus(ref)
		return &httpError{Status: status, Reason: reason, Public: ref.Public}
	case errors.Is(err, kubeview.ErrAppNotFound):
		return notFound("app")
	}
	return err
}

// refusalStatus is the status and reason of a release refusal, by kind; a
// kind added later is a plain 400.
func refusalStatus(ref *release.RefusalError) (int, string) {
	switch {
	case errors.Is(ref, release.ErrInvalidVersion):
		return http.StatusBadRequest, "InvalidVersion"
	case errors.Is(ref, release.ErrNotInHistory):
		return http.StatusBadRequest, "NotInHistory"
	case errors.Is(ref, release.ErrConflict):
		return http.StatusConflict, "Conflict"
	case errors.Is(ref, release.ErrNotFound):
		return http.StatusNotFound, "NotFound"
	case errors.Is(ref, release.ErrBadInput):
		return http.StatusBadRequest, "InvalidInput"
	case errors.Is(ref, release.ErrNotOperable):
		return http.StatusUnprocessableEntity, "NotOperable"
	}
	return http.StatusBadRequest, "Refused"
}

// readRollback reads {"version": "...", "reason": "...", "breakGlass":
// {"reason": "..."}} (JSON) or version=...&reason=...&breakGlassReason=...
// (form); the reason is optional (it goes into the commit message of a
// rollback through git), and so is the break-glass (a superadmin's reason
// to roll back through a freeze).
func readRollback(r *http.Request) (version, reason, breakGlass string, err error) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		var body struct {
			Version    string          `json:"version"`
			Reason     string          `json:"reason"`
			BreakGlass *breakGlassJSON `json:"breakGlass"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			return "", "", "", badRequest("body: want {\"version\": \"MAJOR.MINOR.PATCH\", \"reason\": \"...\", \"breakGlass\": {\"reason\": \"...\"}} (reason and breakGlass optional)")
		}
		if dec.Decode(&struct{}{}) != io.EOF {
			return "", "", "", badRequest("body: want one JSON object")
		}
		if body.BreakGlass != nil {
			breakGlass = body.BreakGlass.Reason
		}
		return body.Version, body.Reason, breakGlass, nil
	}
	if err := r.ParseForm(); err != nil {
		return "", "", "", badRequest("body: unreadable form")
	}
	if _, ok := r.PostForm["version"]; !ok {
		return "", "", "", badRequest("version: missing")
	}
	return r.PostForm.Get("version"), r.PostForm.Get("reason"), r.PostForm.Get(breakGlassField), nil
}

// releaser is the write seam of a cluster (nil: any cluster's, to answer
// 503 before resolving the App when no cluster has one).
func (s *Server) releaser(c *Cluster) (Releaser, error) {
	readOnly := &httpError{Status: http.StatusServiceUnavailable, Reason: "ReadOnly", Public: "this deploy-web is read-only: rollback and sync are not configured"}
	if c == nil {
		for _, c := range s.clusters {
			if c.Release != nil {
				return c.Release, nil
			}
		}
		return nil, readOnly
	}
	if c.Release == nil {
		return nil, readOnly
	}
	return c.Release, nil
}

// rollbackResponse is the JSON of a rollback: release's answer and the
// cluster it wrote to; for an App an environment renders, the environment,
// the commit and the run that applies it (runError says why none started).
type rollbackResponse struct {
	Cluster string `json:"cluster"`
	release.Result
	Environment string      `json:"environment,omitempty"`
	Commit      *commitJSON `json:"commit,omitempty"`
	// Catalog and Moved: a rollback in a commit-mode catalog moves the
	// catalog and every App at its commit (the one asked for included).
	Catalog  *catalogMoveJSON `json:"catalog,omitempty"`
	Moved    []movedJSON      `json:"moved,omitempty"`
	Run      *runJSON         `json:"run,omitempty"`
	RunError string           `json:"runError,omitempty"`
}

// syncResponse is the JSON of a sync request; for an App an environment
// renders, the environment, the commit the console last rendered of its
// branch, and the run that plans and applies the App.
type syncResponse struct {
	Cluster string `json:"cluster"`
	release.SyncResult
	Environment string      `json:"environment,omitempty"`
	Commit      *commitJSON `json:"commit,omitempty"`
	Run         *runJSON    `json:"run,omitempty"`
}

// auditRefusal logs a write refused before it reached the release seam
// (which logs every attempt it sees), so every refusal after
// authentication leaves a line naming the user.
func (s *Server) auditRefusal(r *http.Request, action string, err error) {
	if err == nil {
		return
	}
	s.log.Info(action, "user", actor(r), "app", r.PathValue("name"), "cluster", cmp.Or(r.PathValue("cluster"), r.URL.Query().Get("cluster")), "namespace", cmp.Or(r.PathValue("namespace"), r.URL.Query().Get("namespace")), "outcome", "refused", "err", err.Error(), "request_id", requestID(r.Context()))
	s.recordRefusal(r, action, err)
}

// readRollbackRequest resolves a rollback's App and its cluster's write
// seam and reads the body; a refusal after authentication is recorded
// (auditRefusal), as for every write.
//
// The request it returns carries the body's break-glass (withBreakGlass):
// use it for the rollback.
func (s *Server) readRollbackRequest(r *http.Request) (_ *http.Request, app appRef, rel Releaser, version, reason string, err error) {
	if app, err = s.resolveApp(r, ""); err != nil {
		s.auditRefusal(r, "rollback", err)
		return r, appRef{}, nil, "", "", err
	}
	if rel, err = s.releaser(app.c); err != nil {
		return r, appRef{}, nil, "", "", err
	}
	var breakGlass string
	if version, reason, breakGlass, err = readRollback(r); err != nil {
		s.auditRefusal(r, "rollback", err)
		return r, appRef{}, nil, "", "", err
	}
	return r.WithContext(s.withBreakGlass(r.Context(), s.appTarget(app), breakGlass)), app, rel, version, reason, nil
}

// apiRollback serves POST /v1/deploy/{name}/rollback.
func (s *Server) apiRollback(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.releaser(nil); err != nil {
		return err
	}
	r, app, rel, version, reason, err := s.readRollbackRequest(r)
	if err != nil {
		return err
	}
	ns, name := app.Namespace, app.Name
	if g := s.renderedBy(app); g != nil {
		res, out, err := s.rollbackThroughGit(r, app, g, version, reason)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, rollbackResponse{Cluster: app.Cluster(), Result: res, Environment: out.Environment, Commit: out.Commit, Catalog: out.Catalog, Moved: out.Moved, Run: out.Run, RunError: out.RunError})
		return nil
	}
	res, err := rel.Rollback(r.Context(), ns, name, version, actor(r))
	if err != nil {
		return releaseError(err)
	}
	writeJSON(w, http.StatusOK, rollbackResponse{Cluster: app.Cluster(), Result: res})
	return nil
}

// rollbackThroughGit is the rollback of an App an environment renders
// (gitops.Service.Rollback): refused without writeBack, else committed
// and applied. Every outcome is logged with the user.
func (s *Server) rollbackThroughGit(r *http.Request, app appRef, g *gitRendered, version, reason string) (release.Result, gitOutcome, error) {
	ctx := r.Context()
	history, err := historyVersions(app)
	if err != nil {
		err = releaseError(err)
		s.auditRefusal(r, "rollback", err)
		return release.Result{}, gitOutcome{}, err
	}
	row, _ := app.c.View.Row(app.Namespace, app.Name)
	t := s.appTarget(app)
	t.Environment = g.env.Name // the environment that renders it, as envrun's check sees it
	slot := breakGlassOf(ctx)
	res, err := s.ops.Rollback(ctx, gitops.RollbackRequest{Env: g.env, App: workflowApp(app), Desired: g.desired.Object, From: row.Version, History: history,
		Version: version, Reason: reason, Who: s.person(ctx), FreezeTarget: s.freezeTarget(t), BreakGlass: slot.bg,
		MayApplyEnv: s.allowed(ctx, roles.Apply, s.envTarget(g.env.Name)),
		MayRollback: func(namespace, name string) bool {
			return s.allowed(ctx, roles.Rollback, roles.Target{Cluster: app.Cluster(), Environment: g.env.Name, Namespace: namespace, App: name})
		}})
	if res.Override != nil {
		slot.override = res.Override
	}
	if err != nil {
		err = workflowError(err)
		s.auditRefusal(r, "rollback", err)
		return res.Result, gitOutcome{}, err
	}
	out := rollbackOutcome(res)
	run := ""
	if out.Run != nil {
		run = out.Run.ID
	}
	s.log.Info("rollback", "user", actor(r), "app", app.Name, "cluster", app.Cluster(), "namespace", app.Namespace, "environment", g.env.Name,
		"from", res.From, "to", res.To, "commit", out.Commit.SHA, "branch", out.Commit.Branch, "noChange", out.Commit.NoChange, "run", run, "outcome", "committed", "request_id", requestID(ctx))
	return res.Result, out, nil
}

// rollbackConfirm serves GET /clusters/{cluster}/apps/{namespace}/{name}/rollback?version=V:
// the confirmation that names from -> to.
func (s *Server) rollbackConfirm(w http.ResponseWriter, r *http.Request) error {
	app, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	ns, name := app.Namespace, app.Name
	version := r.URL.Query().Get("version")
	row, _ := app.c.View.Row(ns, name)
	a := templates.ActionView{AppCluster: app.Cluster(), AppNamespace: ns, AppName: name, Kind: "confirm-rollback", From: row.Version, To: version, CSRF: auth.CSRFToken(r.Context()),
		Freeze: s.breakGlassState(r.Context(), s.appTarget(app))}
	history, err := historyVersions(app)
	if err != nil {
		return releaseError(err)
	}
	var ref *release.RefusalError
	g := s.renderedBy(app)
	var env *envconfig.Environment
	if g != nil {
		env = g.env
	}
	if err := gitops.RollbackGate(env, version, history); errors.As(err, &ref) {
		a.Kind, a.Error = "error", ref.Public
	} else if err != nil {
		return err
	} else if version == row.Version {
		a.Kind, a.Message = "info", name+" already declares "+version+": nothing to roll back."
	} else if g != nil {
		// The same decision the POST takes, shown before it is asked for.
		switch gitops.DecideWrite(g.env) {
		case gitops.WriteRefused:
			a.Kind, a.Error = "error", gitops.NoWriteBack(g.env.Name, ns, name).Public
		case gitops.WriteCommitApply:
			a.Through = "deploy-web commits the version to environment " + g.env.Name + "'s repository, then plans and applies it."
		case gitops.WriteCommitOnly:
			a.Through = "deploy-web pushes a review branch to environment " + g.env.Name + "'s repository; the environment changes once it is merged."
		}
		if a.Through != "" && gitops.CommitTagRollback(g.env, version) {
			a.CatalogMove = s.catalogMovePreview(app, g, version)
		}
	}
	return s.render(w, r, http.StatusOK, templates.ActionResult(a))
}

// appRollback serves POST /clusters/{cluster}/apps/{namespace}/{name}/rollback (form).
func (s *Server) appRollback(w http.ResponseWriter, r *http.Request) error {
	r, app, rel, version, reason, err := s.readRollbackRequest(r)
	if err != nil {
		return err
	}
	ns, name := app.Namespace, app.Name
	a := templates.ActionView{AppCluster: app.Cluster(), AppNamespace: ns, AppName: name, To: version}
	if g := s.renderedBy(app); g != nil {
		res, out, err := s.rollbackThroughGit(r, app, g, version, reason)
		var he *httpError
		switch {
		case err == nil:
			a.Kind, a.From, a.Git = "success", res.From, gitActionView(out)
			a.Message = "Rolling " + name + " back from " + textfmt.OrDash(res.From) + " to " + res.To + " through git (environment " + out.Environment + ")."
			if out.Run == nil && out.RunError == "" {
				a.Message = "Committed the rollback of " + name + " to " + res.To + " on review branch " + out.Commit.Branch + ": environment " + out.Environment + " changes once it is merged."
			}
		case errors.As(err, &he) && he.Status < 500:
			a.Kind, a.Error = "error", he.Public
			return s.render(w, r, actionStatus(he.Status), templates.ActionResult(a))
		default:
			return err
		}
		return s.render(w, r, http.StatusOK, templates.ActionResult(a))
	}
	res, err := rel.Rollback(r.Context(), ns, name, version, actor(r))
	var he *httpError
	switch {
	case err == nil && res.Changed:
		a.Kind, a.From, a.Message = "success", res.From, "Rolling "+name+" back from "+res.From+" to "+res.To+". The operator rolls the Deployment out; watch the health and sync above."
	case err == nil:
		a.Kind, a.Message = "info", name+" already declares "+version+": nothing changed."
	case errors.As(releaseError(err), &he) && he.Status < 500:
		// A refusal: shown in place of the confirmation (htmx swaps 409
		// and 422, see the layout's htmx-config).
		a.Kind, a.Error = "error", he.Public
		return s.render(w, r, actionStatus(he.Status), templates.ActionResult(a))
	default:
		return err
	}
	return s.render(w, r, http.StatusOK, templates.ActionResult(a))
}

// actionStatus is the status an action's refusal is rendered with: htmx
// swaps 409 and 422 (see the layout's htmx-config), so a 400 becomes 422.
func actionStatus(status int) int {
	if status == http.StatusBadRequest {
		return http.StatusUnprocessableEntity
	}
	return status
}

// gitActionView is the commit and run of a write through git, for the
// action result.
func gitActionView(out gitOutcome) *templates.GitAction {
	g := &templates.GitAction{Environment: out.Environment, RunError: out.RunError}
	if c := out.Commit; c != nil {
		g.Short, g.Subject, g.Branch, g.CompareURL, g.NoChange = c.Short, firstLine(c.Message), c.Branch, c.CompareURL, c.NoChange
	}
	if out.Run != nil {
		g.RunID, g.RunURL = out.Run.ID, out.Run.URL
	}
	if c := out.Catalog; c != nil {
		g.Catalog, g.CatalogFrom, g.CatalogTo = c.Path, c.From, c.To
		for _, m := range out.Moved {
			g.Moved = append(g.Moved, templates.MovedApp{Namespace: m.Namespace, Name: m.App, From: m.From, To: m.To})
		}
	}
	return g
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// historyVersions returns the versions an App has run.
func historyVersions(a appRef) ([]string, error) {
	h, err := a.c.View.History(a.Namespace, a.Name)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(h))
	for i, r := range h {
		out[i] = r.Version
	}
	return out, nil
}
