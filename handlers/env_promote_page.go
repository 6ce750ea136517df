package handlers

import (
	"context"
	"errors"
	"net/http"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/templates"
)

// promoteProps is the dialog of promoting app (every App when "") from
// source into target for the request's person: each App's gates, the
// button drawn from the same decision the POST makes, the requests.
func (s *Server) promoteProps(ctx context.Context, r *http.Request, target, source, app string) (templates.PromoteProps, int) {
	p := templates.PromoteProps{Layout: s.layout(r, "envs", "Promote to "+target), Target: target, Source: source, App: app,
		CSRF: auth.CSRFToken(ctx), Now: s.opts.Now()}
	status := http.StatusOK
	ask, err := s.ops.Gates(ctx, s.promoteRequest(ctx, target, source, app, ""))
	err = errOrNil(err)
	var he *httpError
	switch {
	case errors.As(err, &he) && he.Status < 500:
		p.Error, status = he.Public, he.Status
	case err != nil:
		s.log.Error("promotion dialog", "environment", target, "err", err)
		p.Error, status = "the promotion's gates could not be evaluated: see the server log", http.StatusInternalServerError
	default:
		p.Source, p.Protected, p.Decision = ask.Source.Name, ask.Target.Protected, ask.Decision
		for _, a := range ask.Apps {
			p.Apps = append(p.Apps, templates.PromoteApp{App: a.Name, From: a.Target.Version, To: a.Source.Version, Digest: a.Source.Digest, Gates: a.Gates})
		}
		p.CanSubmit = ask.Decision != gitops.Refuse
		p.Button = "Promote to " + target
		if ask.Decision == gitops.NeedsApproval || ask.Target.Protected {
			p.Button = "Request promotion to " + target
		}
	}
	p.Requests, p.RequestsError = s.promoteRequests(ctx, target)
	return p, status
}

// promoteRequests are target's requests as the dialog lists them, with
// Approve and Reject for an approver who did not ask.
func (s *Server) promoteRequests(ctx context.Context, target string) ([]templates.PromoteRequest, string) {
	if s.opts.Promotions == nil {
		return nil, "The promotion request store is not configured."
	}
	reqs, err := s.opts.Promotions.List(ctx, target)
	if err != nil {
		s.log.Warn("promotion requests unreadable", "environment", target, "err", err)
		if te, ok := cmstore.IsTampered(err); ok {
			return nil, "No request can be decided: " + te.Public() + "."
		}
		return nil, "The promotion requests could not be read from the cluster."
	}
	me := auditActor(ctx)
	mayApprove := s.allowed(ctx, roles.Approve, s.envTarget(target))
	var out []templates.PromoteRequest
	for _, r := range reqs {
		v := templates.PromoteRequest{Request: r, Versions: gitops.VersionsText(r.Apps)}
		if r.State == gitops.StatePending {
			switch {
			case gitops.SamePerson(r.Requester, me):
				v.NotYours = "yours: another approver decides it"
			case !mayApprove:
				v.NotYours = "an approver of " + target + " decides it"
			default:
				v.CanDecide = true
			}
		}
		out = append(out, v)
	}
	return out, ""
}

// envPromotePage serves GET /environments/{env}/promote?from=&app=.
func (s *Server) envPromotePage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p, status := s.promoteProps(r.Context(), r, r.PathValue("env"), q.Get("from"), q.Get("app"))
	return s.render(w, r, status, templates.PromoteView(p))
}

// envPromoteSubmit serves POST /environments/{env}/promote: the dialog's
// form; the page again with what it did.
func (s *Server) envPromoteSubmit(w http.ResponseWriter, r *http.Request) error {
	b, err := readPromote(r)
	if err != nil {
		return err
	}
	out, perr := s.promote(r.Context(), r.PathValue("env"), b.From, b.App, b.Reason)
	return s.renderPromoteResult(w, r, b.From, b.App, out, perr)
}

// envPromotionDecide serves POST /environments/{env}/promotions/{id}/approve
// and /reject.
func (s *Server) envPromotionDecide(approve bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := r.ParseForm(); err != nil {
			return badRequest("body: unreadable form")
		}
		out, err := s.decidePromotion(r.Context(), r.PathValue("env"), r.PathValue("id"), approve)
		app := ""
		if len(out.Apps) == 1 {
			app = out.Apps[0].App
		}
		return s.renderPromoteResult(w, r, out.Source, app, out, err)
	}
}

// renderPromoteResult draws the dialog after a promotion, an approval or a
// rejection: a refusal (a 4xx *httpError) in its words, else what it wrote.
func (s *Server) renderPromoteResult(w http.ResponseWriter, r *http.Request, source, app string, out promotionOutcome, err error) error {
	res := &templates.PromoteResult{}
	status := http.StatusOK
	var he *httpError
	switch {
	case errors.As(err, &he) && he.Status < 500:
		res.Refused, status = he.Public, he.Status
	case err != nil:
		return err
	case out.Request != nil && out.Request.State == gitops.StateRejected:
		res.Rejected = true
	case out.Request != nil && out.Request.State == gitops.StatePending:
		res.RequestID = out.Request.ID
	case out.Commit != nil:
		res.Branch, res.CompareURL, res.Commit, res.RunError = out.Commit.Branch, out.Commit.CompareURL, out.Commit.SHA, out.RunError
		if out.Run != nil {
			res.RunURL = out.Run.URL
		}
	}
	p, _ := s.promoteProps(r.Context(), r, r.PathValue("env"), source, app)
	p.Result = res
	return s.render(w, r, status, templates.PromoteView(p))
}
