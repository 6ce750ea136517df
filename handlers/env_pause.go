package handlers

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/gitops"
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

// autoSyncEnv resolves the environment of a pause or resume request: one
// the auto-sync loop runs.
func (s *Server) autoSyncEnv(r *http.Request) (*envconfig.Environment, error) {
	env, err := s.pathEnv(r)
	if err != nil {
		return nil, err
	}
	if s.opts.AutoSync == nil {
		return nil, workflowError(gitops.NoAutoSync(env.Name))
	}
	if _, ok, _ := s.opts.AutoSync.Status(r.Context(), env.Name); !ok {
		return nil, workflowError(gitops.NoAutoSync(env.Name))
	}
	return env, nil
}

// doPause pauses env (gitops.Service.Pause), which records it.
func (s *Server) doPause(r *http.Request, env *envconfig.Environment, reason, until, forText string) (autosync.Pause, error) {
	p, err := s.ops.Pause(r.Context(), gitops.PauseRequest{Env: env, Cluster: env.ClusterName(s.opts.EnvClusters), Reason: reason, Until: until, For: forText, Who: s.person(r.Context())})
	return p, errOrNil(err)
}

// doResume resumes env (gitops.Service.Resume), which records it.
func (s *Server) doResume(r *http.Request, env *envconfig.Environment) (autosync.Pause, error) {
	p, err := s.ops.Resume(r.Context(), gitops.ResumeRequest{Env: env, Cluster: env.ClusterName(s.opts.EnvClusters), Who: s.person(r.Context())})
	return p, errOrNil(err)
}

// envPauseForm serves POST /environments/{env}/pause (the page's form:
// reason, for) and answers with the GitOps panel.
func (s *Server) envPauseForm(w http.ResponseWriter, r *http.Request) error {
	env, err := s.autoSyncEnv(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	if _, err := s.doPause(r, env, r.PostForm.Get("reason"), "", r.PostForm.Get("for")); err != nil {
		return err
	}
	return s.gitOpsPanel(w, r, env)
}

// envResumeForm serves POST /environments/{env}/resume.
func (s *Server) envResumeForm(w http.ResponseWriter, r *http.Request) error {
	env, err := s.autoSyncEnv(r)
	if err != nil {
		return err
	}
	if _, err := s.doResume(r, env); err != nil {
		return err
	}
	return s.gitOpsPanel(w, r, env)
}

// apiEnvPause serves POST /v1/deploy/environments/{env}/pause.
func (s *Server) apiEnvPause(w http.ResponseWriter, r *http.Request) error {
	env, err := s.autoSyncEnv(r)
	if err != nil {
		return err
	}
	var body pauseRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || dec.Decode(&struct{}{}) != io.EOF {
		return badRequest(`body: want {"reason": "...", "until": "RFC 3339"} or {"reason": "...", "for": "8h"}`)
	}
	p, err := s.doPause(r, env, body.Reason, body.Until, body.For)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// apiEnvResume serves DELETE /v1/deploy/environments/{env}/pause.
func (s *Server) apiEnvResume(w http.ResponseWriter, r *http.Request) error {
	env, err := s.autoSyncEnv(r)
	if err != nil {
		return err
	}
	p, err := s.doResume(r, env)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// gitOpsPanel renders env's GitOps panel (the fragment, or after a pause
// or resume).
func (s *Server) gitOpsPanel(w http.ResponseWriter, r *http.Request, env *envconfig.Environment) error {
	return s.render(w, r, http.StatusOK, templates.GitOpsPanel(s.gitOpsView(r, env)))
}

// gitOpsView is gitOpsOf with what the person may do.
func (s *Server) gitOpsView(r *http.Request, env *envconfig.Environment) templates.GitOpsProps {
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
