package handlers

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// envRollbackBody is the body of POST
// /v1/deploy/environments/{env}/rollback.
type envRollbackBody struct {
	To         string          `json:"to"`
	Reason     string          `json:"reason"`
	BreakGlass *breakGlassJSON `json:"breakGlass"`
}

// readEnvRollback reads {"to": "<record id>", "reason": "...",
// "breakGlass": {"reason": "..."}} (JSON) or to=&reason=&breakGlassReason=
// (form).
func readEnvRollback(r *http.Request) (envRollbackBody, string, error) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	var b envRollbackBody
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/json" {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil || dec.Decode(&struct{}{}) != io.EOF {
			return b, "", badRequest(`body: want {"to": "<record id>", "reason": "...", "breakGlass": {"reason": "..."}} (reason and breakGlass optional)`)
		}
		bg := ""
		if b.BreakGlass != nil {
			bg = b.BreakGlass.Reason
		}
		if b.To == "" {
			return b, "", badRequest("to: missing (the id of the apply record to roll back to)")
		}
		return b, bg, nil
	}
	if err := r.ParseForm(); err != nil {
		return b, "", badRequest("body: unreadable form")
	}
	b.To, b.Reason = r.PostForm.Get("to"), r.PostForm.Get("reason")
	if b.To == "" {
		return b, "", badRequest("to: missing (the id of the apply record to roll back to)")
	}
	return b, r.PostForm.Get(breakGlassField), nil
}

// envRollbackResponse is the JSON of an environment rollback.
type envRollbackResponse struct {
	gitops.EnvRollbackResult
	Run *runJSON `json:"run,omitempty"`
}

// doEnvRollback reads the request and calls gitops.Service.EnvRollback;
// every refusal after authentication is logged and recorded by the
// service.
func (s *Server) doEnvRollback(r *http.Request) (gitops.EnvRollbackResult, error) {
	env, err := s.pathEnv(r)
	if err != nil {
		return gitops.EnvRollbackResult{}, err
	}
	body, bg, err := readEnvRollback(r)
	if err != nil {
		s.auditRefusal(r, "rollback", err)
		return gitops.EnvRollbackResult{}, err
	}
	t := s.envTarget(env.Name)
	ctx := s.withBreakGlass(r.Context(), t, bg)
	slot := breakGlassOf(ctx)
	res, err := s.ops.EnvRollback(ctx, gitops.EnvRollbackRequest{Env: env, Cluster: env.ClusterName(s.opts.EnvClusters), To: body.To, Reason: body.Reason,
		Who: s.person(ctx), FreezeTarget: s.freezeTarget(t), BreakGlass: slot.bg})
	if err != nil {
		return res, workflowError(err)
	}
	run := ""
	if res.Run != nil {
		run = res.Run.ID
	}
	s.log.Info("environment rollback", "user", actor(r), "environment", env.Name, "record", body.To, "recordCommit", res.RecordCommit,
		"commit", res.Commit.SHA, "branch", res.Commit.Branch, "noChange", res.NoChange, "run", run, "request_id", requestID(ctx))
	return res, nil
}

// apiEnvRollback serves POST /v1/deploy/environments/{env}/rollback.
func (s *Server) apiEnvRollback(w http.ResponseWriter, r *http.Request) error {
	res, err := s.doEnvRollback(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, envRollbackResponse{EnvRollbackResult: res, Run: runOf(res.Run)})
	return nil
}

// envRollbackForm serves POST /environments/{env}/rollback (the History
// row's confirmation) and answers with the result in its place.
func (s *Server) envRollbackForm(w http.ResponseWriter, r *http.Request) error {
	res, err := s.doEnvRollback(r)
	p := templates.EnvRollbackProps{Env: r.PathValue("env"), To: res.Record}
	var he *httpError
	switch {
	case err == nil:
		p.Kind, p.Git = "success", gitActionView(gitOutcome{Environment: res.Environment, Commit: res.Commit, Run: runOf(res.Run), RunError: res.RunError})
		p.RecordCommit = res.RecordCommit
	case errors.As(err, &he) && he.Status < 500:
		p.Kind, p.Error = "error", he.Public
		return s.render(w, r, actionStatus(he.Status), templates.EnvRollback(p))
	default:
		return err
	}
	return s.render(w, r, http.StatusOK, templates.EnvRollback(p))
}

// envRollbackConfirm serves GET /environments/{env}/rollback?to=<id>:
// the confirmation, which says what the commit will do (the decision the
// POST takes, shown before it is asked for).
func (s *Server) envRollbackConfirm(w http.ResponseWriter, r *http.Request) error {
	env, err := s.pathEnv(r)
	if err != nil {
		return err
	}
	to := r.URL.Query().Get("to")
	p := templates.EnvRollbackProps{Env: env.Name, To: to, Kind: "confirm", CSRF: auth.CSRFToken(r.Context()),
		Freeze: s.breakGlassState(r.Context(), s.envTarget(env.Name))}
	rec, err := s.envRollbackRecord(r, env, to)
	switch {
	case err != nil:
		p.Kind, p.Error = "error", gitops.PublicOf(err, "the record could not be read")
	default:
		p.RecordCommit, p.RecordTime, p.RecordBy = rec.Commit, rec.Time, rec.Actor.String()
		switch gitops.DecideWrite(env) {
		case gitops.WriteRefused:
			p.Kind, p.Error = "error", "environment "+env.Name+" has no writeBack: configure it (docs/gitops.md) so a rollback can commit to its repository"
		case gitops.WriteCommitApply:
			p.Through = "deploy-web commits environment " + env.Name + "'s folder as it was at that commit to its repository, then plans and applies it."
		case gitops.WriteCommitOnly:
			p.Through = "deploy-web pushes a review branch that sets environment " + env.Name + "'s folder as it was at that commit; the environment changes once it is merged."
		}
	}
	return s.render(w, r, http.StatusOK, templates.EnvRollback(p))
}

// envRollbackRecord reads record id for the confirmation, refused as the
// rollback would refuse it (gitops.EnvRollbackRecord).
func (s *Server) envRollbackRecord(r *http.Request, env *envconfig.Environment, id string) (audit.Record, error) {
	if s.opts.RecordReader == nil {
		return audit.Record{}, &gitops.Error{Kind: gitops.KindUnavailable, Public: "the audit records are not configured: there is no record to roll back to"}
	}
	var rec audit.Record
	var err error
	if audit.ValidID(id) {
		rec, err = s.opts.RecordReader.Get(r.Context(), id)
	}
	return rec, gitops.EnvRollbackRecord(env.Name, id, rec, err)
}

// envRollbackOffers are the History rows of environment env that offer a
// rollback, by record id (their confirmation's URL): none unless the
// person may roll env back and it has a writeBack; a row offers it when
// gitops.EnvRollbackRecord takes its record (the same decision as the
// POST): the newest too, which the branch may have moved away from.
func (s *Server) envRollbackOffers(r *http.Request, env *envconfig.Environment, recs []audit.Record) map[string]string {
	if s.opts.RecordReader == nil || gitops.DecideWrite(env) == gitops.WriteRefused || !s.allowed(r.Context(), roles.Rollback, s.envTarget(env.Name)) {
		return nil
	}
	out := map[string]string{}
	for _, rec := range recs {
		if gitops.EnvRollbackRecord(env.Name, rec.ID, rec, nil) == nil {
			out[rec.ID] = paths.EnvRollbackTo(env.Name, rec.ID)
		}
	}
	return out
}
