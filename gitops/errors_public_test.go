package gitops

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/promotion"
)

// TestCatalogUnreadablePublic: a catalog that does not read is refused
// naming its mistake (deployplan's *CatalogError), never with the
// package's prefix.
func TestCatalogUnreadablePublic(t *testing.T) {
	env := &envconfig.Environment{Name: "dev", Source: envconfig.Source{Repo: "file:///m.git", Ref: "main", Path: "dev"}, Catalog: "catalog.json"}
	tree := fstest.MapFS{"catalog.json": {Data: []byte(`{"services": []}`)}}
	err := checkCatalogAdmits(tree, env, "App", "api", "reg.example/api:1.0.0")
	var ce *catalogError
	if !errors.As(err, &ce) || !strings.Contains(ce.msg, "catalog.commit: required") || strings.Contains(ce.msg, "deployplan:") {
		t.Errorf("checkCatalogAdmits(no commit) = %v, want a *catalogError naming catalog.commit without a package prefix", err)
	}
}

// TestDecideErrorPublic: a decision refused because another person
// decided first says so in promotion's public words.
func TestDecideErrorPublic(t *testing.T) {
	var e *Error
	if !errors.As(decideError(&promotion.DecidedError{State: promotion.StateApproved}), &e) ||
		e.Public != "the request is already approved: another person decided it first" {
		t.Errorf("decideError(approved) = %v, want the public text without a prefix", e)
	}
}
