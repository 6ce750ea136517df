package handlers

import (
	"context"
	"errors"
	"net/http"

	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/promcheck"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// envPromoteChecks serves GET /environments/{env}/promote/checks?from=&app=:
// a matrix cell's soak and checks state of promoting app from from into
// env, from the promotion's own gates (gitops.Service.Gates, its checks
// cached per minute). The matrix loads it as a fragment, so its paint
// never waits for Prometheus; the gates are bounded by promcheck.Timeout
// together. A refusal to evaluate is the fragment's text, not an error
// page (the cell shows it).
func (s *Server) envPromoteChecks(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p := templates.MatrixChecksProps{Target: r.PathValue("env"), Source: q.Get("from"), App: q.Get("app")}
	if p.App == "" {
		return badRequest("app: required")
	}
	p.URL = paths.EnvPromote(p.Target, p.Source, p.App)
	ctx, cancel := context.WithTimeout(r.Context(), promcheck.Timeout)
	defer cancel()
	ask, err := s.ops.Gates(ctx, s.promoteRequest(ctx, p.Target, p.Source, p.App, ""))
	err = errOrNil(err)
	var he *httpError
	switch {
	case errors.As(err, &he) && he.Status < 500:
		p.Error = he.Public
	case err != nil:
		s.log.Error("matrix checks", "environment", p.Target, "err", err)
		p.Error = "the promotion's gates could not be evaluated: see the server log"
	case len(ask.Apps) == 1:
		a := ask.Apps[0]
		p.Checks = a.Checks
		for _, g := range a.Gates {
			switch g.ID {
			case gitops.GateSoak:
				p.Soak = g
			case gitops.GateChecks:
				p.Gate = g
			}
		}
	}
	return s.render(w, r, http.StatusOK, templates.MatrixChecks(p))
}
