package gitops

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/freeze"
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

// TestFreezeErrorBreakGlassReason: a break-glass refused for its reason
// says so (from the typed refusal, not the error's text); a refusal of
// another kind does not.
func TestFreezeErrorBreakGlassReason(t *testing.T) {
	fe := &freeze.FrozenError{Action: freeze.Apply, Freeze: freeze.Freeze{ID: "fz-1", Reason: "release week", Author: freeze.Author{Subject: "alice"}}}
	var e *Error
	err := FreezeError(fmt.Errorf("envrun: %w", &freeze.BreakGlassReasonError{Problem: errors.New("break-glass reason: required"), Frozen: fe}))
	if !errors.As(err, &e) || e.Reason != ReasonFrozen || !strings.HasPrefix(e.Public, "break-glass needs a reason (one line, at most 500 bytes): frozen until") {
		t.Errorf("FreezeError(a break-glass without a reason) = %v, want a refusal saying the break-glass needs a reason", err)
	}
	err = FreezeError(fmt.Errorf("envrun: the break-glass reason was fine: %w", fe))
	if !errors.As(err, &e) || strings.Contains(e.Public, "needs a reason") || !strings.HasPrefix(e.Public, "frozen until") {
		t.Errorf("FreezeError(frozen, whatever the error's text) = %v, want the freeze's words alone", err)
	}
}
