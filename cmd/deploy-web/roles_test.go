package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/roles"
)

// TestLoadRoles: without --roles the policy is the default (superadmins
// only); a good file gives a policy from it; a bad or missing file fails
// start-up with an error naming the file and the place in it.
func TestLoadRoles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "roles.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("bindings:\n  - {role: viewer, groups: [eng]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("bindings:\n  - {Role: viewer, groups: [eng]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := serveConfig{IssuerURL: "https://idp.example.com", AdminClaim: "groups", AdminValue: "superadmin"}

	p, err := loadRoles(cfg)
	if err != nil || p.HasFile() {
		t.Fatalf("loadRoles(no --roles) = file %v, %v; want the default policy", p.HasFile(), err)
	}
	if d := p.Allow(roles.Principal{Groups: []string{"eng"}}, roles.View, roles.Target{}); d.Allowed || !strings.Contains(d.Because, `the admin claim "groups" containing "superadmin"`) {
		t.Errorf("default policy: a non-admin's view = %+v, want a denial naming the admin claim", d)
	}

	cfg.Roles = good
	if p, err = loadRoles(cfg); err != nil || !p.HasFile() {
		t.Fatalf("loadRoles(%s) = file %v, %v; want the file's policy", good, p.HasFile(), err)
	}
	if d := p.Allow(roles.Principal{Groups: []string{"eng"}, Issuer: "https://idp.example.com"}, roles.View, roles.Target{}); !d.Allowed {
		t.Errorf("file policy: eng's view = %+v, want allowed", d)
	}
	if d := p.Allow(roles.Principal{Groups: []string{"eng"}, Issuer: "https://other.example.com"}, roles.View, roles.Target{}); d.Allowed {
		t.Errorf("file policy: eng's view from another issuer = %+v, want denied", d)
	}

	for _, path := range []string{bad, filepath.Join(dir, "missing.yaml")} {
		cfg.Roles = path
		if _, err := loadRoles(cfg); err == nil || !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Errorf("loadRoles(%s) error = %v, want one naming the file", path, err)
		}
	}
}
