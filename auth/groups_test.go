package auth

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/roles"
)

// testRoles binds group "developers" to viewer and "deployers" to deployer.
const testRoles = `bindings:
  - role: viewer
    groups: [developers]
  - role: deployer
    groups: [deployers, "a,b"]
`

func testPolicy(t *testing.T) *roles.Policy {
	t.Helper()
	p, err := roles.Parse("roles.yaml", []byte(testRoles), roles.Options{})
	if err != nil {
		t.Fatalf("roles.Parse() error = %v", err)
	}
	return p
}

func withRoles(t *testing.T) func(*testIdP, *Config) {
	p := testPolicy(t)
	return func(_ *testIdP, c *Config) { c.Roles = p }
}

// TestGroupsClaimHostile: a hostile groups claim yields only its strings,
// the first roles.MaxGroups entries at most, never split or nested.
func TestGroupsClaimHostile(t *testing.T) {
	long := make([]any, roles.MaxGroups+5)
	for i := range long {
		long[i] = fmt.Sprintf("g%d", i)
	}
	for _, tt := range []struct {
		name  string
		claim any
		want  []string
	}{
		{"list", []any{"a", "b"}, []string{"a", "b"}},
		{"non-strings ignored", []any{"a", 7, true, nil, map[string]any{"x": "y"}, []any{"nested"}, "b"}, []string{"a", "b"}},
		{"one string", "a,b", []string{"a,b"}},
		{"a number", 42.0, nil},
		{"an object", map[string]any{"groups": []any{"a"}}, nil},
		{"missing", nil, nil},
		{"capped", long, func() []string {
			out := make([]string, roles.MaxGroups)
			for i := range out {
				out[i] = fmt.Sprintf("g%d", i)
			}
			return out
		}()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			claims := map[string]any{"groups": tt.claim}
			if tt.claim == nil {
				claims = map[string]any{}
			}
			if got := groupsClaim(claims, "groups"); !slices.Equal(got, tt.want) {
				t.Errorf("groupsClaim(%.80v) = %.80q, want %.80q", tt.claim, got, tt.want)
			}
		})
	}
}

// TestSessionGroups: a session keeps only the groups the roles file names,
// at most maxSessionGroupsBytes of them; without a roles file none.
func TestSessionGroups(t *testing.T) {
	withFile := &Auth{cfg: Config{GroupsClaim: "groups", Roles: testPolicy(t)}, log: slog.New(slog.DiscardHandler)}
	claims := map[string]any{"groups": []any{"other", "deployers", 5, "developers", "deployers", "a,b"}}
	if got, want := withFile.sessionGroups(claims), []string{"deployers", "developers", "a,b"}; !slices.Equal(got, want) {
		t.Errorf("sessionGroups(%v) = %q, want %q", claims, got, want)
	}
	without := &Auth{cfg: Config{GroupsClaim: "groups"}, log: slog.New(slog.DiscardHandler)}
	if got := without.sessionGroups(claims); len(got) != 0 {
		t.Errorf("sessionGroups without a roles file = %q, want none", got)
	}

	// Many long groups the file names: cut at the byte cap, in claim order.
	var yaml strings.Builder
	yaml.WriteString("bindings:\n  - role: viewer\n    groups:\n")
	var claim []any
	for i := range 40 {
		g := fmt.Sprintf("%02d-%s", i, strings.Repeat("x", 97))
		fmt.Fprintf(&yaml, "      - %q\n", g)
		claim = append(claim, g)
	}
	p, err := roles.Parse("big.yaml", []byte(yaml.String()), roles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	big := &Auth{cfg: Config{GroupsClaim: "groups", Roles: p}, log: slog.New(slog.DiscardHandler)}
	got := big.sessionGroups(map[string]any{"groups": claim})
	n := 0
	for _, g := range got {
		n += len(g)
	}
	if n > maxSessionGroupsBytes || len(got) != maxSessionGroupsBytes/100 || got[0] != claim[0] {
		t.Errorf("sessionGroups(40 groups of 100 bytes) kept %d groups, %d bytes, first %q; want %d groups, at most %d bytes, from the first",
			len(got), n, got[0], maxSessionGroupsBytes/100, maxSessionGroupsBytes)
	}
}

// TestGroupListRoundTrip: Identity.Groups gives back the groups it was
// built from.
func TestGroupListRoundTrip(t *testing.T) {
	for _, gs := range [][]string{nil, {"a"}, {"a,b", "c d", "CN=x,OU=y"}} {
		if got := NewGroupList(gs).Slice(); !slices.Equal(got, gs) {
			t.Errorf("NewGroupList(%q).Slice() = %q", gs, got)
		}
	}
}

// TestRequireWithRoles: with a roles file Require admits anyone holding a
// role (the routes decide each action) and carries their relevant groups,
// email verification and issuer; a person with no role gets 403
// ReasonNoRole. Without one (the existing tests) only superadmins enter.
func TestRequireWithRoles(t *testing.T) {
	t.Run("a viewer enters, with the groups the file names", func(t *testing.T) {
		env := newTestServer(t, withRoles(t))
		env.idp.set(func(p *testIdP) {
			p.claims = map[string]any{"groups": []any{"developers", 7, "unrelated"}, "email_verified": true}
		})
		env.mustLogin()
		resp := env.get("/apps")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /apps as a viewer: status = %d, want 200; body %s", resp.StatusCode, resp.body)
		}
		id := resp.echoed(t).Identity
		if id.Admin || !slices.Equal(id.Groups.Slice(), []string{"developers"}) || !id.EmailVerified || id.Issuer != env.idp.issuer() {
			t.Errorf("identity = %+v, want a non-admin with groups [developers], a verified email and issuer %s", id, env.idp.issuer())
		}
		if got := env.auth.cfg.Roles.Explain(id.Principal()); len(got) != 1 || got[0].Role != roles.Viewer {
			t.Errorf("Explain(identity) = %+v, want one viewer role", got)
		}
	})
	t.Run("no role: 403", func(t *testing.T) {
		env := newTestServer(t, withRoles(t))
		env.idp.set(func(p *testIdP) { p.claims = map[string]any{"groups": []any{"unrelated"}} })
		env.mustLogin()
		resp := env.get("/apps")
		if d := resp.denial(); resp.StatusCode != http.StatusForbidden || d.Reason != ReasonNoRole || d.Subject != "alice-sub" {
			t.Errorf("GET /apps with no role = %d %+v, want 403 %q naming the subject", resp.StatusCode, d, ReasonNoRole)
		}
	})
	t.Run("the admin claim is a superadmin with a file too", func(t *testing.T) {
		env := newTestServer(t, withRoles(t))
		env.mustLogin()
		if resp := env.get("/apps"); resp.StatusCode != http.StatusOK || !resp.echoed(t).Identity.Admin {
			t.Errorf("GET /apps as the admin claim's superadmin = %d, want 200 as admin", resp.StatusCode)
		}
	})
	t.Run("bearer: a deployer enters, no role is refused", func(t *testing.T) {
		env := newTestServer(t, withRoles(t))
		for _, tt := range []struct {
			groups     []any
			wantStatus int
		}{{[]any{"deployers"}, http.StatusOK}, {[]any{"nobody"}, http.StatusForbidden}} {
			claims := env.idp.defaultClaims()
			claims["groups"] = tt.groups
			resp := env.get("/v1/deploy/applications", "Authorization", "Bearer "+env.idp.sign(claims))
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("bearer with groups %v: status = %d, want %d; body %s", tt.groups, resp.StatusCode, tt.wantStatus, resp.body)
			}
		}
	})
}

// TestRecheckNoRoleLeft: with a roles file, a person whose groups no longer
// give any role is signed out at the re-check; one who changed role but
// still has one stays.
func TestRecheckNoRoleLeft(t *testing.T) {
	const recheck = time.Minute
	for _, tt := range []struct {
		name    string
		now     []any
		signOut bool
	}{
		{"viewer to deployer: stays", []any{"deployers"}, false},
		{"no role left: signed out", []any{"unrelated"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestServer(t, withRoles(t), func(_ *testIdP, c *Config) { c.SessionRecheck = recheck })
			env.idp.set(func(p *testIdP) { p.claims = map[string]any{"groups": []any{"developers"}} })
			env.mustLogin()
			env.idp.set(func(p *testIdP) { p.claims = map[string]any{"groups": tt.now} })
			env.clock.Advance(recheck + time.Second)
			resp := env.get("/apps")
			if got := resp.StatusCode == http.StatusUnauthorized && resp.denial().Reason == ReasonSessionEnded; got != tt.signOut {
				t.Fatalf("GET /apps at the re-check = %d (reason %q), signed out %v, want %v", resp.StatusCode, resp.denial().Reason, got, tt.signOut)
			}
			if tt.signOut {
				if !strings.Contains(env.logs.String(), reasonNoRoleLeft) {
					t.Errorf("log lacks %q:\n%s", reasonNoRoleLeft, env.logs.String())
				}
				return
			}
			if got := resp.echoed(t).Identity.Groups.Slice(); !slices.Equal(got, []string{"deployers"}) {
				t.Errorf("groups after the re-check = %q, want [deployers]", got)
			}
		})
	}
}

// TestRolesWithHydra: through the demo's real IdP (Ory Hydra and devidp's
// logins), the groups claim reaches the roles: the viewer and the deployer
// enter with their group and no admin, the guest (a group no binding
// names) is refused with ReasonNoRole, and the admin claim still makes a
// superadmin.
func TestRolesWithHydra(t *testing.T) {
	policy, err := roles.Parse("roles.yaml", []byte("bindings:\n  - {role: viewer, groups: [viewers]}\n  - {role: deployer, groups: [deployers]}\n"), roles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := newHydraEnv(t, time.Hour, func(c *Config) { c.Roles = policy })
	for _, tt := range []struct {
		user       string
		wantStatus int
		wantGroups []string
		wantAdmin  bool
	}{
		{"viewer", http.StatusOK, []string{"viewers"}, false},
		{"deployer", http.StatusOK, []string{"deployers"}, false},
		{"admin", http.StatusOK, nil, true},
		{"guest", http.StatusForbidden, nil, false},
	} {
		resp, _ := e.signIn(e.browser(), tt.user, tt.user)
		if resp.StatusCode != tt.wantStatus {
			t.Errorf("sign in %s: status %d, want %d: %.300s", tt.user, resp.StatusCode, tt.wantStatus, resp.body)
			continue
		}
		if tt.wantStatus != http.StatusOK {
			if d := resp.denial(); d.Reason != ReasonNoRole {
				t.Errorf("sign in %s: denial %+v, want %q", tt.user, d, ReasonNoRole)
			}
			continue
		}
		id := resp.echoed(t).Identity
		if !slices.Equal(id.Groups.Slice(), tt.wantGroups) || id.Admin != tt.wantAdmin || !id.EmailVerified || id.Issuer != e.idp.IssuerURL {
			t.Errorf("sign in %s: identity %+v, want groups %q, admin %v, a verified email and issuer %s", tt.user, id, tt.wantGroups, tt.wantAdmin, e.idp.IssuerURL)
		}
	}
}
