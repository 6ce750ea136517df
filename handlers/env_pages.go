package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// EnvRunner runs the deploy engine for the console (implemented by envrun).
type EnvRunner interface {
	Config() *envconfig.Config
	Store() *planstore.Store
	Start(env, action, user, confirm, planID string) (*envrun.Run, error)
	Deploy(env string, d envrun.DeployRequest) (*envrun.Run, error)
	// StartAs is Start naming the actor of the apply's audit record.
	StartAs(who audit.Actor, env, action, user, confirm, planID string) (*envrun.Run, error)
	// StartWith is StartAs with a break-glass (through a freeze).
	StartWith(req envrun.StartRequest) (*envrun.Run, error)
	Get(id string) (*envrun.Run, bool)
}

func (s *Server) envRunner() (EnvRunner, error) {
	if s.opts.Environments == nil {
		return nil, &httpError{Status: http.StatusNotFound, Reason: "NoEnvironments", Public: "no environments are configured (start deploy-web with --environments)"}
	}
	return s.opts.Environments, nil
}

// pathEnv is the configured environment the route's {env} names (404
// when none is configured or it is not one of them).
func (s *Server) pathEnv(r *http.Request) (*envconfig.Environment, error) {
	er, err := s.envRunner()
	if err != nil {
		return nil, err
	}
	env, err := er.Config().Env(r.PathValue("env"))
	if err != nil {
		return nil, notFound("environment")
	}
	return env, nil
}

func (s *Server) summaryOf(e *envconfig.Environment) templates.EnvSummary {
	return templates.EnvSummary{Name: e.Name, Cluster: s.opts.EnvClusters[e.Name], Namespace: e.Namespace, Protected: e.Protected, Repo: envconfig.RedactURL(e.Source.Repo), Ref: e.Source.Ref, Path: e.Source.Path}
}

// envList serves GET /environments.
func (s *Server) envList(w http.ResponseWriter, r *http.Request) error {
	p := templates.EnvListPage{Layout: s.layout(r, "envs", "Environments")}
	if s.opts.Environments != nil {
		q, err := matrixQuery(r.URL.Query())
		if err != nil {
			return err
		}
		mv := s.matrixView(r.Context(), s.envMatrix(r.Context()), q)
		if isHTMX(r) {
			return s.render(w, r, http.StatusOK, templates.Matrix(mv))
		}
		p.Matrix = &mv
	}
	if s.opts.Environments != nil {
		for i := range s.opts.Environments.Config().Environments {
			e := &s.opts.Environments.Config().Environments[i]
			if !s.allowed(r.Context(), roles.View, s.envTarget(e.Name)) {
				continue // not the person's: not listed (its page answers 403)
			}
			sum := s.summaryOf(e)
			entries, err := s.opts.Environments.Store().List(r.Context(), e.Name)
			if err != nil {
				s.log.Warn("plan history unreadable", "err", err)
				p.HistoryError = "The plan history could not be read from the cluster; last plans are not shown."
			} else if len(entries) > 0 {
				sum.Last = &entries[0]
			}
			p.Envs = append(p.Envs, sum)
		}
	}
	return s.render(w, r, http.StatusOK, templates.EnvListView(p))
}

// envPage serves GET /environments/{env} and GET /environments/{env}/reports/{id}.
func (s *Server) envPage(w http.ResponseWriter, r *http.Request) error {
	er, err := s.envRunner()
	if err != nil {
		return err
	}
	env, err := er.Config().Env(r.PathValue("env"))
	if err != nil {
		return notFound("environment")
	}
	p := templates.EnvPage{Layout: s.layout(r, "envs", env.Name), Env: s.summaryOf(env), CSRF: auth.CSRFToken(r.Context()), Allowed: s.envAllowed(r.Context(), env.Name),
		Freeze: s.freezeBanner(r.Context(), s.envTarget(env.Name))}
	p.History, err = er.Store().List(r.Context(), env.Name)
	if err != nil {
		return &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "could not read the plan history from the cluster", Err: err}
	}
	id := r.PathValue("id")
	if id == "" && len(p.History) > 0 {
		id = p.History[0].ID
	}
	if id != "" {
		v, err := s.storedReport(r.Context(), env.Name, id)
		if err != nil {
			return err
		}
		p.Report = &v
		p.Apply = applyOffer(env, p.History, v.Entry, v.Report)
	}
	s.envSections(r, env, &p)
	return s.render(w, r, http.StatusOK, templates.EnvView(p))
}

// envSections fills the sections every full environment page draws below
// its plan (GitOps, audit trail, notifications), whatever the page shows
// of its plans: a stored report or a run.
func (s *Server) envSections(r *http.Request, env *envconfig.Environment, p *templates.EnvPage) {
	history := s.envHistory(r.Context(), env.Name)
	history.Rollback = s.envRollbackOffers(r, env, history.Records)
	p.Audit = &history
	p.GitOps = s.gitOpsView(r, env)
	p.Notifications = s.notificationsSection(r.Context(), envNotifyPlace(env.Name))
	whyPanel := s.envWhyPanel(r.Context(), env)
	p.Why = &whyPanel
}

// applyOffer decides whether the page offers Apply for the report shown:
// only for an unprotected environment, a finished ready plan, and only the
// environment's latest plan (the rule the runner enforces on the POST,
// envrun.LatestPlan). The form then carries that plan's id.
func applyOffer(env *envconfig.Environment, history []planstore.Entry, shown planstore.Entry, rep *deployplan.Report) *templates.ApplyOffer {
	if env.Protected || rep == nil || shown.ID == "" || shown.Action != envrun.ActionPlan ||
		rep.DeployApply.Mode != "dry-run" || rep.Status() != deployplan.StatusReady {
		return nil
	}
	if _, err := envrun.LatestPlan(history, env.Name, shown.ID); err != nil {
		return nil
	}
	return &templates.ApplyOffer{PlanID: shown.ID, SourceCommit: rep.DeployApply.Source.Commit, RenderedDigest: rep.DeployApply.Source.RenderedDigest}
}

// storedReport reads a report of env from the history.
func (s *Server) storedReport(ctx context.Context, env, id string) (templates.ReportView, error) {
	e, files, err := s.opts.Environments.Store().Get(ctx, id)
	if errors.Is(err, planstore.ErrNotFound) || err == nil && e.Environment != env {
		return templates.ReportView{}, notFound("report")
	}
	if err != nil {
		return templates.ReportView{}, err
	}
	if files["report.json"] == nil {
		return templates.ReportView{Env: env, Entry: e}, nil // a run that failed before it had a report
	}
	var rep deployplan.Report
	if err := json.Unmarshal(files["report.json"], &rep); err != nil {
		return templates.ReportView{}, fmt.Errorf("handlers: stored report %s: %w", id, err)
	}
	diffs, err := envrun.DecodeDiffs(files["diffs.json"])
	if err != nil {
		return templates.ReportView{}, err
	}
	v := templates.ReportView{Env: env, Entry: e, Report: &rep, Changes: changeRows(rep.DeployApply.Objects, diffs), JSONURL: paths.EnvReportJSON(env, id)}
	if files["diffs.json"] == nil {
		v.DiffNote = "No per-object diffs were kept for this run."
	}
	return v, nil
}

// envReportJSON serves GET /environments/{env}/reports/{id}/json: the
// report as a download.
func (s *Server) envReportJSON(w http.ResponseWriter, r *http.Request) error {
	er, err := s.envRunner()
	if err != nil {
		return err
	}
	env := r.PathValue("env")
	e, files, err := er.Store().Get(r.Context(), r.PathValue("id"))
	if errors.Is(err, planstore.ErrNotFound) || err == nil && e.Environment != env {
		return notFound("report")
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="deploy-report-%s.json"`, e.ID))
	_, _ = w.Write(files["report.json"])
	return nil
}

// envStart serves POST /environments/{env}/plan and /apply: it starts the
// run and answers with its progress panel (streamed over SSE).
func (s *Server) envStart(action string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		er, err := s.envRunner()
		if err != nil {
			return err
		}
		envName := r.PathValue("env")
		if _, err := er.Config().Env(envName); err != nil {
			return notFound("environment")
		}
		if err := r.ParseForm(); err != nil {
			return badRequest("unreadable form")
		}
		confirm := strings.TrimSpace(r.PostForm.Get("confirm"))
		planID := strings.TrimSpace(r.PostForm.Get("plan"))
		bg := breakGlassOf(s.withBreakGlass(r.Context(), s.envTarget(envName), r.PostForm.Get(breakGlassField))).bg
		run, err := er.StartWith(envrun.StartRequest{Who: auditActor(r.Context()), Env: envName, Action: action, User: actor(r),
			Confirm: confirm, PlanID: planID, BreakGlass: bg})
		var ref *deployplan.RefusalError
		var he *httpError
		switch {
		case errors.As(err, &ref):
			return s.render(w, r, http.StatusUnprocessableEntity, templates.RunPanel(templates.RunPanelProps{Env: envName, Action: action, Refusal: ref.Reason}))
		case errors.As(freezeError(err), &he) && he.Status < 500:
			return s.render(w, r, he.Status, templates.RunPanel(templates.RunPanelProps{Env: envName, Action: action, Refusal: he.Public}))
		case errors.Is(err, envrun.ErrBusy):
			return s.render(w, r, http.StatusConflict, templates.RunPanel(templates.RunPanelProps{Env: envName, Action: action, Refusal: "a plan or apply of " + envName + " is already running; wait for it to finish"}))
		case errors.Is(err, envrun.ErrStopping):
			return s.render(w, r, http.StatusServiceUnavailable, templates.RunPanel(templates.RunPanelProps{Env: envName, Action: action, Refusal: "this replica is shutting down: nothing was started; press again and another replica takes it"}))
		case err != nil:
			return err
		}
		return s.render(w, r, http.StatusOK, templates.RunPanel(s.runView(r.Context(), run)))
	}
}

// runView builds the panel of a run.
func (s *Server) runView(ctx context.Context, run *envrun.Run) templates.RunPanelProps {
	snap := run.Snapshot()
	v := templates.RunPanelProps{Env: run.Env, ID: run.ID, Action: run.Action, User: run.User, Steps: snap.Steps, Done: snap.Done,
		StreamURL: paths.EnvRunStream(run.Env, run.ID), URL: paths.EnvRun(run.Env, run.ID), Refusal: snap.Refusal}
	if snap.Err != nil && snap.Refusal == "" {
		v.Error = "the " + run.Action + " failed: " + publicRunError(snap.Err, run.ID)
	}
	if snap.Done && snap.Report != nil {
		rv := templates.ReportView{Env: run.Env, Entry: snap.Entry, Report: snap.Report, Changes: changeRows(snap.Report.DeployApply.Objects, snap.Diffs)}
		if snap.Entry.ID != "" {
			rv.JSONURL = paths.EnvReportJSON(run.Env, snap.Entry.ID)
		}
		if snap.DiffErr != nil {
			rv.DiffNote = "Per-object diffs are not available: " + publicRunError(snap.DiffErr, run.ID)
		}
		v.Report = &rv
	}
	if snap.Done && s.opts.Environments != nil {
		if h, err := s.opts.Environments.Store().List(ctx, run.Env); err == nil {
			v.History = h
			if v.History == nil {
				v.History = []planstore.Entry{}
			}
			if env, err := s.opts.Environments.Config().Env(run.Env); err == nil && !env.Protected && s.envAllowed(ctx, run.Env).Apply {
				v.ApplyArea = &templates.ApplyAreaView{Env: run.Env, CSRF: auth.CSRFToken(ctx), OOB: true, Freeze: s.envAllowed(ctx, run.Env).Freeze,
					Offer: applyOffer(env, h, snap.Entry, snap.Report)}
			}
		}
	}
	return v
}

// publicRunError is what a user sees of a failed run: a configuration
// mistake as the engine words it (it names a field, never a secret), else a
// fixed sentence; the whole error is in the server log with the run id.
func publicRunError(err error, runID string) string {
	var cfgErr *envconfig.ConfigError
	if errors.As(err, &cfgErr) {
		return cfgErr.Error()
	}
	return "it could not reach the source, the cluster or the registry; the server log has the details (run " + runID + ")"
}

// envRun serves GET /environments/{env}/runs/{id}: the run's panel (for
// HTMX) or the environment page with it.
func (s *Server) envRun(w http.ResponseWriter, r *http.Request) error {
	er, err := s.envRunner()
	if err != nil {
		return err
	}
	run, ok := er.Get(r.PathValue("id"))
	if !ok || run.Env != r.PathValue("env") {
		return notFound("run (runs are kept in memory by the replica that started them; finished ones are in the history)")
	}
	if isHTMX(r) {
		return s.render(w, r, http.StatusOK, templates.RunPanel(s.runView(r.Context(), run)))
	}
	env, err := er.Config().Env(run.Env)
	if err != nil {
		return notFound("environment")
	}
	p := templates.EnvPage{Layout: s.layout(r, "envs", env.Name), Env: s.summaryOf(env), CSRF: auth.CSRFToken(r.Context()), Allowed: s.envAllowed(r.Context(), env.Name),
		Freeze: s.freezeBanner(r.Context(), s.envTarget(env.Name))}
	var herr error
	if p.History, herr = er.Store().List(r.Context(), env.Name); herr != nil {
		s.log.Warn("plan history unreadable", "environment", env.Name, "err", herr)
	}
	rv := s.runView(r.Context(), run)
	if rv.ApplyArea != nil {
		// A full page draws the Apply control in its header, not out of band.
		p.Apply, rv.ApplyArea = rv.ApplyArea.Offer, nil
	}
	// Nor its history: the page has it beside the run (out of band, a
	// second copy would be drawn in the run's place, with the same ids).
	rv.History = nil
	p.Run = &rv
	s.envSections(r, env, &p)
	return s.render(w, r, http.StatusOK, templates.EnvView(p))
}

// envRunStream serves GET /environments/{env}/runs/{id}/stream: the run's
// steps as SSE events ("step": one escaped <li> per event; "done" at the
// end), with heartbeats, until the run ends or the client goes away.
func (s *Server) envRunStream(w http.ResponseWriter, r *http.Request) error {
	er, err := s.envRunner()
	if err != nil {
		return err
	}
	run, ok := er.Get(r.PathValue("id"))
	if !ok || run.Env != r.PathValue("env") {
		return notFound("run")
	}
	// A client that stops reading for 10s is dropped instead of holding
	// this goroutine until the run ends.
	st := openSSE(w, 4096, 10*time.Second)
	bw, flush := st.Writer, st.flush
	shutdown := s.shutdownCtx()
	sent := 0
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	for {
		snap := run.Snapshot()
		for _, step := range snap.Steps[sent:] {
			var li bytes.Buffer
			if err := templates.RunStep(step).Render(r.Context(), &li); err != nil {
				return fmt.Errorf("handlers: render step: %w", err)
			}
			// writeEvent splits any CR or LF into data lines: a step's text
			// can never end the event or add a field.
			writeEvent(bw, "step", "", li.Bytes())
		}
		sent = len(snap.Steps)
		if snap.Done {
			writeEvent(bw, "done", "", []byte("done"))
			_ = flush()
			return nil
		}
		if err := flush(); err != nil {
			return nil
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-shutdown.Done():
			// Graceful shutdown: the browser reconnects to another replica.
			st.retry(time.Second)
			_ = flush()
			return nil
		case <-snap.Changed:
		case <-heartbeat.C:
			st.heartbeat()
		}
	}
}
