package devidp

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecideTokenHook(t *testing.T) {
	users := append(DefaultUsers(), User{Username: "gone", Password: "gone", Email: "gone@demo.local", Disabled: true})
	hook := func(sub string, grants ...string) tokenHookRequest {
		var r tokenHookRequest
		r.Session.IDToken.Subject = sub
		r.Request.GrantTypes = grants
		return r
	}
	for _, tt := range []struct {
		name       string
		req        tokenHookRequest
		wantStatus int
		wantGroups []string
	}{
		{"code exchange keeps the consent's claims", hook("admin", "authorization_code"), http.StatusNoContent, nil},
		{"refresh of an admin: current claims", hook("admin", "refresh_token"), http.StatusOK, []string{"superadmin"}},
		{"refresh of a viewer", hook("viewer", "refresh_token"), http.StatusOK, []string{"viewers"}},
		{"refresh of a disabled user", hook("gone", "refresh_token"), http.StatusForbidden, nil},
		{"refresh of an unknown subject", hook("root", "refresh_token"), http.StatusForbidden, nil},
		{"refresh without a subject", hook("", "refresh_token"), http.StatusForbidden, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, claims := decideTokenHook(users, tt.req)
			if status != tt.wantStatus {
				t.Fatalf("decideTokenHook(%+v) status = %d, want %d", tt.req, status, tt.wantStatus)
			}
			if tt.wantGroups == nil {
				if claims != nil {
					t.Errorf("claims = %v, want none", claims)
				}
				return
			}
			if diff := cmp.Diff(tt.wantGroups, claims["groups"]); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			if claims["email_verified"] != true {
				t.Errorf("email_verified = %v, want true", claims["email_verified"])
			}
		})
	}
}

// TestTokenHookRequestSubject reads the subject from the shape Hydra v2
// sends (session.id_token.subject, or its id_token_claims.sub).
func TestTokenHookRequestSubject(t *testing.T) {
	for _, body := range []string{
		`{"session":{"id_token":{"subject":"admin","id_token_claims":{"sub":"admin"}}},"request":{"grant_types":["refresh_token"]}}`,
		`{"session":{"id_token":{"id_token_claims":{"sub":"admin"}}},"request":{"grant_types":["refresh_token"]}}`,
	} {
		var r tokenHookRequest
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		if r.subject() != "admin" || !slices.Contains(r.Request.GrantTypes, "refresh_token") {
			t.Errorf("%s: subject %q, grants %v; want admin, refresh_token", body, r.subject(), r.Request.GrantTypes)
		}
	}
}

func TestDirectory(t *testing.T) {
	p := &IdP{dir: newDirectory(DefaultUsers())}
	snap := p.dir.snapshot()
	if err := p.SetGroups("admin", []string{"viewers"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Disable("viewer"); err != nil {
		t.Fatal(err)
	}
	if err := p.Disable("nobody"); err == nil {
		t.Errorf("Disable(nobody) = nil, want an error")
	}
	now := p.dir.snapshot()
	if a, _ := findUser(now, "admin"); !slices.Equal(a.Groups, []string{"viewers"}) {
		t.Errorf("admin's groups after SetGroups = %v, want [viewers]", a.Groups)
	}
	if v, _ := findUser(now, "viewer"); !v.Disabled {
		t.Errorf("viewer after Disable: Disabled = false, want true")
	}
	if a, _ := findUser(snap, "admin"); !slices.Equal(a.Groups, []string{"superadmin"}) {
		t.Errorf("an earlier snapshot changed: admin's groups = %v, want [superadmin]", a.Groups)
	}
}
