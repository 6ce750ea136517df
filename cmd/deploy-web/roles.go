package main

import (
	"fmt"

	"github.com/hanzoai/deploy-web/roles"
)

// loadRoles is the roles policy of --roles: the default (superadmins only,
// by the admin claim) without a file; a bad file fails start-up, naming the
// file and the place in it.
func loadRoles(cfg serveConfig) (*roles.Policy, error) {
	opts := roles.Options{
		Issuer:      cfg.IssuerURL,
		AdminSource: fmt.Sprintf("the admin claim %q containing %q", cfg.AdminClaim, cfg.AdminValue),
	}
	if cfg.Roles == "" {
		return roles.Default(opts), nil
	}
	return roles.Load(cfg.Roles, opts)
}
