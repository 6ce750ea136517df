package handlers

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/roles"
)

// promotionView is what the promotion workflow (gitops) reads from the
// handlers: the matrix's columns from the clusters' caches, the soak
// history from the timeline, the freezes, and the person's view right.
type promotionView struct{ s *Server }

func (v promotionView) Column(ctx context.Context, e *envconfig.Environment) (gitops.Column, []kubeview.AppRow) {
	return v.s.envColumn(ctx, e)
}

func (v promotionView) SoakHistory(ctx context.Context, col gitops.Column, app string, cur gitops.Cell, since, now time.Time) gitops.History {
	return v.s.soakHistory(ctx, col, app, cur, since, now)
}

func (v promotionView) FreezeState(ctx context.Context, env string) gitops.Freeze {
	return v.s.freezeState(ctx, env)
}

func (v promotionView) MayView(ctx context.Context, env string) bool {
	return v.s.allowed(ctx, roles.View, v.s.envTarget(env))
}

func (v promotionView) AppResource(e *envconfig.Environment) (cluster, group, kind string, ok bool) {
	c := v.s.envCluster(e)
	if c == nil {
		return "", "", "", false
	}
	return c.Name, c.AppGroup, c.AppKind, true
}

// freezeState asks the freezes (Options.Freezes, read fresh; nil: no
// freezes are configured) whether env is frozen now: the promotion's
// "target not frozen" gate.
func (s *Server) freezeState(ctx context.Context, env string) gitops.Freeze {
	if s.opts.Freezes == nil {
		return gitops.Freeze{}
	}
	fe, err := s.opts.Freezes.Status(ctx, s.freezeTarget(s.envTarget(env)))
	if err != nil || fe == nil {
		return gitops.Freeze{Configured: true, Err: err}
	}
	return gitops.Freeze{Configured: true, Frozen: true, Reason: fe.Freeze.Reason, Until: fe.OpensAt}
}

// promoteRequest is a promotion of app (every App of source when "") from
// source into target for the request's person, with what the roles say of
// them at the target.
func (s *Server) promoteRequest(ctx context.Context, target, source, app, reason string) gitops.PromoteRequest {
	d := s.grantsOf(ctx).Allow(roles.Promote, s.envTarget(target))
	return gitops.PromoteRequest{Target: target, Source: source, App: app, Reason: reason, Who: s.person(ctx), MayPromote: d.Allowed, Because: d.Because}
}

// promotionOutcome is a promotion's answer: what the workflow did, with
// the link to the plan it started.
type promotionOutcome struct {
	gitops.PromotionOutcome
	Run *runJSON `json:"run,omitempty"`
}

// promote requests or performs a promotion for the request's person
// (gitops.Service.Promote).
func (s *Server) promote(ctx context.Context, target, source, app, reason string) (promotionOutcome, error) {
	out, err := s.ops.Promote(ctx, s.promoteRequest(ctx, target, source, app, reason))
	return promotionOutcome{PromotionOutcome: out, Run: runOf(out.Run)}, errOrNil(err)
}

// decidePromotion approves or rejects request id of target for the
// request's person (an approver: the route's action).
func (s *Server) decidePromotion(ctx context.Context, target, id string, approve bool) (promotionOutcome, error) {
	out, err := s.ops.Decide(ctx, gitops.DecideRequest{Target: target, ID: id, Approve: approve, Who: s.person(ctx)})
	return promotionOutcome{PromotionOutcome: out, Run: runOf(out.Run)}, errOrNil(err)
}

// errOrNil is workflowError of err, nil for nil.
func errOrNil(err error) error {
	if err == nil {
		return nil
	}
	return workflowError(err)
}

// promoteBody is the JSON of POST /v1/deploy/environments/{env}/promotions.
type promoteBody struct {
	From   string `json:"from"`
	App    string `json:"app"`
	Reason string `json:"reason"`
}

// readPromote reads the body (JSON, or the dialog's form).
func readPromote(r *http.Request) (promoteBody, error) {
	var b promoteBody
	r.Body = http.MaxBytesReader(nil, r.Body, maxBody)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			return b, badRequest("body: want {\"from\": \"ENV\", \"app\": \"NAME\", \"reason\": \"...\"} (app: one App, or every App of from when empty; from and reason optional)")
		}
		if dec.Decode(&struct{}{}) != io.EOF {
			return b, badRequest("body: want one JSON object")
		}
	} else {
		if err := r.ParseForm(); err != nil {
			return b, badRequest("body: unreadable form")
		}
		b = promoteBody{From: r.PostForm.Get("from"), App: r.PostForm.Get("app"), Reason: r.PostForm.Get("reason")}
	}
	if len(b.Reason) > gitops.MaxReasonBytes {
		return b, badRequest("reason: at most %d bytes", gitops.MaxReasonBytes)
	}
	return b, nil
}

// promotionStatus is the status of a promotion's answer.
func promotionStatus(o promotionOutcome) int {
	if o.Request != nil && o.Request.State == gitops.StatePending {
		return http.StatusAccepted
	}
	return http.StatusOK
}

// apiPromote serves POST /v1/deploy/environments/{env}/promotions: a
// request (protected target: 202 with the request) or the promotion
// itself (200 with the commit and the plan).
func (s *Server) apiPromote(w http.ResponseWriter, r *http.Request) error {
	b, err := readPromote(r)
	if err != nil {
		return err
	}
	out, err := s.promote(r.Context(), r.PathValue("env"), b.From, b.App, b.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, promotionStatus(out), out)
	return nil
}

// apiPromotionApprove serves POST
// /v1/deploy/environments/{env}/promotions/{id}/approve.
func (s *Server) apiPromotionApprove(w http.ResponseWriter, r *http.Request) error {
	out, err := s.decidePromotion(r.Context(), r.PathValue("env"), r.PathValue("id"), true)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// apiPromotionReject serves POST
// /v1/deploy/environments/{env}/promotions/{id}/reject.
func (s *Server) apiPromotionReject(w http.ResponseWriter, r *http.Request) error {
	out, err := s.decidePromotion(r.Context(), r.PathValue("env"), r.PathValue("id"), false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
