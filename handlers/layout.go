package handlers

import (
	"net/http"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/templates"
)

// layout fills the frame's props from the request's identity.
func (s *Site) layout(r *http.Request, nav, title string) templates.LayoutProps {
	p := templates.LayoutProps{Title: title, Nav: nav, Assets: s.assets.url, Style: s.assets.style}
	// The theme the person picked (app.js writes the cookie), drawn on
	// <html> so the first paint has it; anything else follows the system.
	if c, err := r.Cookie(templates.ThemeCookie); err == nil {
		p.Theme = c.Value
	}
	if id, ok := auth.FromContext(r.Context()); ok {
		p.User = displayName(id)
		p.CSRF = auth.CSRFToken(r.Context())
	}
	// The Audit entry by the decision of its route (GET /audit: Admin),
	// from the Grants authorize put in the request.
	if g, ok := r.Context().Value(grantsKey{}).(roles.Grants); ok {
		p.ShowAudit = g.AllowSomewhere(roles.Admin).Allowed
	}
	return p
}
