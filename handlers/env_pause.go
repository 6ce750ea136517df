package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/templates"
)

// pauseRequest is the body of POST /v1/deploy/environments/{env}/pause:
// a reason and either an end (until, RFC 3339) or a duration ("8h").
type pauseRequest struct {
	Reason string `json:"reason"`
	Until  string `json:"until"`
	For    string `json:"for"`
}

// pauseUntil decides a pause's end from until (RFC 3339) or forText (a
// Go duration), exactly one of them, at now. The bounds (in the future,
// at most autosync.MaxPause) are the store's.
func pauseUntil(until, forText string, now time.Time) (time.Time, error) {
	until, forText = strings.TrimSpace(until), strings.TrimSpace(forText)
	switch {
	case until != "" && forText != "":
		return time.Time{}, errors.New("give until or for, not both")
	case until != "":
		t, err := time.Parse(time.RFC3339, until)
		if err != nil {
			return time.Time{}, fmt.Errorf("until %q: want a time such as 2026-12-02T18:00:00Z", until)
		}
		return t, nil
	case forText != "":
		d, err := time.ParseDuration(forText)
		if err != nil || d <= 0 {
			return time.Time{}, fmt.Errorf("for %q: want a duration such as 8h (at most %s)", forText, autosync.MaxPause)
		}
		return now.Add(d), nil
	}
	return time.Time{}, errors.New("give the pause's end: until (RFC 3339) or for (a duration such as 8h, at most 168h)")
}

// autoSyncEnv resolves the environment of a pause or resume request, and
// the loop that runs it.
func (s *Server) autoSyncEnv(r *http.Request) (*deployplan.Environment, AutoSyncState, error) {
	env, err := s.pathEnv(r)
	if err != nil {
		return nil, nil, err
	}
	if s.opts.AutoSync == nil {
		return nil, nil, noAutoSync(env.Name)
	}
	if _, ok, _ := s.opts.AutoSync.Status(r.Context(), env.Name); !ok {
		return nil, nil, noAutoSync(env.Name)
	}
	return env, s.opts.AutoSync, nil
}

func noAutoSync(env string) *httpError {
	return &httpError{Status: http.StatusConflict, Reason: "NoAutoSync",
		Public: "environment " + env + " has no auto-sync (autoSync.enabled in the environments file): there is nothing to pause or resume"}
}

// pauseError maps the store's refusal of a pause or resume to an answer.
func pauseError(err error) error {
	switch {
	case errors.Is(err, autosync.ErrNotPaused):
		return &httpError{Status: http.StatusConflict, Reason: "NotPaused", Public: strings.TrimPrefix(err.Error(), "autosync: ")}
	case strings.HasPrefix(err.Error(), "autosync: pause") || strings.HasPrefix(err.Error(), "autosync: resume"):
		// validate's refusals: the request's own fields.
		return &httpError{Status: http.StatusUnprocessableEntity, Reason: "BadPause", Public: strings.TrimPrefix(err.Error(), "autosync: ")}
	}
	return &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "the pauses could not be written to the cluster; nothing changed", Err: err}
}

// doPause pauses env for reason until until, by the request's person, and
// records it (refused attempts included).
func (s *Server) doPause(r *http.Request, env *deployplan.Environment, as AutoSyncState, reason string, until time.Time, perr error) (autosync.Pause, error) {
	start := time.Now()
	var p autosync.Pause
	err := perr
	if err == nil {
		p, err = as.Pause(r.Context(), env.Name, reason, until, actor(r))
		if err != nil {
			err = pauseError(err)
		}
	} else {
		err = badRequest("%s", err.Error())
	}
	s.recordPause(r, audit.VerbPause, env, start, reason, p, err)
	return p, err
}

// doResume resumes env by the request's person and records it.
func (s *Server) doResume(r *http.Request, env *deployplan.Environment, as AutoSyncState) (autosync.Pause, error) {
	start := time.Now()
	p, err := as.Resume(r.Context(), env.Name, actor(r))
	if err != nil {
		err = pauseError(err)
	}
	s.recordPause(r, audit.VerbResume, env, start, p.Reason, p, err)
	return p, err
}

// recordPause writes the audit record of a pause or resume.
func (s *Server) recordPause(r *http.Request, verb audit.Verb, env *deployplan.Environment, start time.Time, reason string, p autosync.Pause, err error) {
	rec := audit.Record{Time: start, Duration: audit.Duration(time.Since(start)), Actor: auditActor(r.Context()), Verb: verb,
		Cluster: env.ClusterName(s.opts.EnvClusters), Environment: env.Name, Namespace: env.Namespace, Blockers: []string{}, Outcome: audit.OutcomeSucceeded}
	switch verb {
	case audit.VerbPause:
		rec.Message = pauseMessage(env.Name, p.Until, reason)
	default:
		rec.Message = fmt.Sprintf("auto-sync of %s resumed (paused by %s: %s)", env.Name, p.By, reason)
	}
	var he *httpError
	if errors.As(err, &he) {
		rec.Outcome, rec.Message = audit.OutcomeRefused, he.Public
		if he.Status >= 500 {
			rec.Outcome = audit.OutcomeFailed
		}
	}
	appendRecord(r.Context(), s.opts.Audit, rec)
}

// envPauseForm serves POST /environments/{env}/pause (the page's form:
// reason, for) and answers with the GitOps panel.
func (s *Server) envPauseForm(w http.ResponseWriter, r *http.Request) error {
	env, as, err := s.autoSyncEnv(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	until, perr := pauseUntil("", r.PostForm.Get("for"), s.opts.Now())
	if _, err := s.doPause(r, env, as, strings.TrimSpace(r.PostForm.Get("reason")), until, perr); err != nil {
		return err
	}
	return s.gitOpsPanel(w, r, env)
}

// envResumeForm serves POST /environments/{env}/resume.
func (s *Server) envResumeForm(w http.ResponseWriter, r *http.Request) error {
	env, as, err := s.autoSyncEnv(r)
	if err != nil {
		return err
	}
	if _, err := s.doResume(r, env, as); err != nil {
		return err
	}
	return s.gitOpsPanel(w, r, env)
}

// apiEnvPause serves POST /v1/deploy/environments/{env}/pause.
func (s *Server) apiEnvPause(w http.ResponseWriter, r *http.Request) error {
	env, as, err := s.autoSyncEnv(r)
	if err != nil {
		return err
	}
	var body pauseRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || dec.Decode(&struct{}{}) != io.EOF {
		return badRequest(`body: want {"reason": "...", "until": "RFC 3339"} or {"reason": "...", "for": "8h"}`)
	}
	until, perr := pauseUntil(body.Until, body.For, s.opts.Now())
	p, err := s.doPause(r, env, as, strings.TrimSpace(body.Reason), until, perr)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// apiEnvResume serves DELETE /v1/deploy/environments/{env}/pause.
func (s *Server) apiEnvResume(w http.ResponseWriter, r *http.Request) error {
	env, as, err := s.autoSyncEnv(r)
	if err != nil {
		return err
	}
	p, err := s.doResume(r, env, as)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// gitOpsPanel renders env's GitOps panel (the fragment, or after a pause
// or resume).
func (s *Server) gitOpsPanel(w http.ResponseWriter, r *http.Request, env *deployplan.Environment) error {
	return s.render(w, r, http.StatusOK, templates.GitOpsPanel(s.gitOpsView(r, env)))
}

// gitOpsView is gitOpsOf with what the person may do.
func (s *Server) gitOpsView(r *http.Request, env *deployplan.Environment) templates.GitOpsProps {
	p := s.gitOpsOf(r.Context(), env)
	p.CanPause = s.allowed(r.Context(), roles.Pause, s.envTarget(env.Name))
	p.CSRF, p.Now = auth.CSRFToken(r.Context()), s.opts.Now()
	return p
}

// envGitOps serves GET /environments/{env}/gitops, the panel's refresh.
func (s *Server) envGitOps(w http.ResponseWriter, r *http.Request) error {
	env, err := s.pathEnv(r)
	if err != nil {
		return err
	}
	return s.gitOpsPanel(w, r, env)
}

// apiEnvironments serves GET /v1/deploy/environments: the GitOps state of
// every environment the person may view, or with view=matrix the matrix
// of versions across them (apiEnvMatrix).
func (s *Server) apiEnvironments(w http.ResponseWriter, r *http.Request) error {
	switch view := r.URL.Query().Get("view"); view {
	case "":
	case "matrix":
		return s.apiEnvMatrix(w, r)
	default:
		return badRequest("view %q is not known: leave it out for the environments' GitOps state, or ask for view=matrix", view)
	}
	er, err := s.envRunner()
	if err != nil {
		return err
	}
	out := []gitOpsJSON{}
	for i := range er.Config().Environments {
		e := &er.Config().Environments[i]
		if !s.allowed(r.Context(), roles.View, s.envTarget(e.Name)) {
			continue
		}
		out = append(out, gitOpsToJSON(e, s.opts.EnvClusters[e.Name], s.gitOpsOf(r.Context(), e)))
	}
	writeJSON(w, http.StatusOK, map[string]any{"environments": out})
	return nil
}

// apiEnvironment serves GET /v1/deploy/environments/{env} (through
// apiDeployPair: ServeMux refuses the pattern beside /v1/deploy/{name}/tree).
func (s *Server) apiEnvironment(w http.ResponseWriter, r *http.Request, name string) error {
	er, err := s.envRunner()
	if err != nil {
		return err
	}
	e, err := er.Config().Env(name)
	if err != nil {
		return notFound("environment")
	}
	writeJSON(w, http.StatusOK, gitOpsToJSON(e, s.opts.EnvClusters[e.Name], s.gitOpsOf(r.Context(), e)))
	return nil
}

// apiDeployPair serves GET /v1/deploy/{name}/{sub}: the GitOps state of
// environment sub when name is "environments", else a 404. An App's
// two-segment routes (tree, logs) are more specific and take their own
// URLs; an environment named "tree" or "logs" is read from the list.
func (s *Server) apiDeployPair(w http.ResponseWriter, r *http.Request) error {
	if r.PathValue("name") == "environments" {
		return s.apiEnvironment(w, r, r.PathValue("sub"))
	}
	return s.notFound(w, r)
}
