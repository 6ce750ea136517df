package handlers

import (
	"net/http"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/templates"
)

// me is what the roles make of the signed-in person: who they are, each
// role with its scope and where it comes from (roles Explain), and what
// every action comes to.
func (s *Server) me(r *http.Request) templates.Me {
	id, _ := auth.FromContext(r.Context())
	g := s.grantsOf(r.Context())
	m := templates.Me{Subject: id.Subject, Email: id.Email, EmailVerified: id.EmailVerified, Groups: id.Groups.Slice(),
		Roles: []templates.MeRole{}, Actions: []templates.MeAction{}}
	if m.Groups == nil {
		m.Groups = []string{}
	}
	for _, gr := range g.Explain() {
		where := "everywhere"
		if !gr.Scope.IsZero() {
			where = gr.Scope.String()
		}
		m.Roles = append(m.Roles, templates.MeRole{Role: string(gr.Role), Where: where, Logs: gr.Logs, Source: gr.Source, Via: gr.Via})
	}
	for _, a := range roles.Actions() {
		d := g.AllowSomewhere(a)
		m.Actions = append(m.Actions, templates.MeAction{Action: string(a), Allowed: d.Allowed,
			Everywhere: g.Allow(a, roles.Target{}).Allowed, Because: d.Because})
	}
	return m
}

// mePage serves GET /me.
func (s *Server) mePage(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, http.StatusOK, templates.MeView(templates.MePage{Layout: s.layout(r, "me", "Your access"), Me: s.me(r)}))
}

// apiMe serves GET /v1/deploy/me: the /me page as JSON.
func (s *Server) apiMe(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, s.me(r))
	return nil
}
