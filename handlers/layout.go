package handlers

import (
	"net/http"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/web/templates"
)

// layout fills the frame's props from the request's identity.
func (s *Site) layout(r *http.Request, nav, title string) templates.LayoutProps {
	p := templates.LayoutProps{Title: title, Nav: nav, Assets: s.assets.url, Style: s.assets.style}
	if id, ok := auth.FromContext(r.Context()); ok {
		p.User = displayName(id)
		p.CSRF = auth.CSRFToken(r.Context())
	}
	return p
}
