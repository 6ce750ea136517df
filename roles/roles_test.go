package roles

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/internal/scope"
)

// testFile binds one group per role, each scoped to prod (the deployer to
// the web-* Apps of prod), and a second viewer group with logs.
const testFile = `
bindings:
  - role: viewer
    groups: [viewers]
    scope: {environments: [prod]}
  - role: viewer
    groups: [log-viewers]
    scope: {environments: [prod]}
    logs: true
  - role: deployer
    groups: [deployers]
    scope: {environments: [prod], apps: ["web-*"]}
  - role: approver
    groups: [approvers]
    scope: {environments: [prod]}
  - role: superadmin
    groups: [admins]
  - role: deployer
    emails: [dana@example.com]
    scope: {clusters: [eu-1]}
  - role: deployer
    groups: [operators]
    scope: {environments: [prod]}
    operate: true
`

func mustParse(t *testing.T, data string, opts Options) *Policy {
	t.Helper()
	p, err := Parse("roles.yaml", []byte(data), opts)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

// TestAllowEveryRoleActionScope walks every role, every action, inside and
// outside the role's scope.
func TestAllowEveryRoleActionScope(t *testing.T) {
	p := mustParse(t, testFile, Options{})
	inside := Target{Cluster: "eu-1", Environment: "prod", Namespace: "shop", App: "web-1"}
	outsideEnv := Target{Cluster: "eu-1", Environment: "dev", Namespace: "shop", App: "web-1"}
	outsideApp := Target{Cluster: "eu-1", Environment: "prod", Namespace: "shop", App: "api"}
	unknownEnv := Target{Cluster: "eu-1", Namespace: "shop", App: "web-1"}

	// What each group may do inside its scope, written out from the
	// package doc's table (not computed from the code under test).
	allowedInside := map[string][]Action{
		"viewers":     {View},
		"log-viewers": {View, Logs},
		"deployers":   {View, Plan, Apply, Sync, Rollback, Promote, Notify},
		"approvers":   {View, Approve},
		"admins":      {View, Logs, Plan, Apply, Sync, Rollback, Promote, Approve, Notify, Freeze, Pause, Operate, BreakGlass, Admin},
		// A deployer has no operate unless its binding says operate: true.
		"operators": {View, Plan, Apply, Sync, Rollback, Promote, Notify, Operate},
		"nobody":    {},
	}
	wantRole := map[string]Role{"operators": Deployer, "viewers": Viewer, "log-viewers": Viewer, "deployers": Deployer, "approvers": Approver, "admins": Superadmin}
	for group, allowed := range allowedInside {
		pr := Principal{Subject: "s-" + group, Groups: []string{group}}
		for _, a := range Actions() {
			for _, tc := range []struct {
				name string
				t    Target
				want bool
			}{
				{"inside", inside, slices.Contains(allowed, a)},
				// Outside the scope only the unscoped superadmin may act.
				{"other env", outsideEnv, group == "admins" && slices.Contains(allowed, a)},
				{"other app", outsideApp, slices.Contains(allowed, a) && (group == "admins" || group != "deployers")},
				{"env unknown", unknownEnv, group == "admins" && slices.Contains(allowed, a)},
			} {
				d := p.Allow(pr, a, tc.t)
				if d.Allowed != tc.want {
					t.Errorf("%s: Allow(%s, %s, %v) = %+v, want allowed %v", tc.name, group, a, tc.t, d, tc.want)
					continue
				}
				if d.Allowed && d.Role != wantRole[group] {
					t.Errorf("%s: Allow(%s, %s).Role = %q, want %q", tc.name, group, a, d.Role, wantRole[group])
				}
				if !d.Allowed && d.Role != "" {
					t.Errorf("%s: denied Allow(%s, %s).Role = %q, want none", tc.name, group, a, d.Role)
				}
				if d.Because == "" {
					t.Errorf("%s: Allow(%s, %s).Because is empty", tc.name, group, a)
				}
			}
		}
	}
}

func TestAllowDefaultIsSuperadminOnly(t *testing.T) {
	admin := Principal{Subject: "a", Groups: []string{"superadmin"}, Admin: true}
	other := Principal{Subject: "b", Email: "b@example.com", EmailVerified: true, Groups: []string{"viewers", "admins"}}
	var nilPolicy *Policy
	for name, p := range map[string]*Policy{"Default": Default(Options{AdminSource: `groups "superadmin"`}), "nil": nilPolicy} {
		for _, a := range Actions() {
			t.Run(fmt.Sprintf("%s/%s", name, a), func(t *testing.T) {
				if got, want := p.Allow(admin, a, Target{}).Allowed, a != SecretValues; got != want {
					t.Errorf("Allow(admin, %s) = %v, want %v", a, got, want)
				}
				d := p.Allow(other, a, Target{Environment: "prod"})
				if d.Allowed {
					t.Errorf("Allow(non-admin, %s) = %+v, want denied", a, d)
				}
				if a != SecretValues && !strings.Contains(d.Because, "without a roles file only superadmins") {
					t.Errorf("Allow(non-admin, %s).Because = %q, want it to say only superadmins may", a, d.Because)
				}
			})
		}
		if p.HasFile() {
			t.Errorf("%s.HasFile() = true, want false", name)
		}
	}
}

func TestAdminClaimStaysSuperadminWithAFile(t *testing.T) {
	p := mustParse(t, testFile, Options{AdminSource: `the admin claim "groups" containing "superadmin"`})
	d := p.Allow(Principal{Subject: "x", Admin: true}, Freeze, Target{Environment: "dev"})
	want := Decision{Allowed: true, Role: Superadmin, Because: `superadmin through the admin claim "groups" containing "superadmin"`}
	if d != want {
		t.Errorf("Allow(admin claim, freeze) = %+v, want %+v", d, want)
	}
}

func TestAllowBecause(t *testing.T) {
	p := mustParse(t, testFile, Options{})
	tests := []struct {
		name string
		pr   Principal
		a    Action
		t    Target
		want Decision
	}{
		{"deployer allowed", Principal{Groups: []string{"deployers"}}, Apply, Target{Environment: "prod", App: "web-1"},
			Decision{Allowed: true, Role: Deployer, Because: `deployer through roles.yaml bindings[2] (group "deployers") in env=prod app=web-*`}},
		{"superadmin binding", Principal{Groups: []string{"admins"}}, Pause, Target{},
			Decision{Allowed: true, Role: Superadmin, Because: `superadmin through roles.yaml bindings[4] (group "admins")`}},
		{"viewer may not apply", Principal{Groups: []string{"viewers"}}, Apply, Target{Environment: "prod", App: "web-1"},
			Decision{Because: `apply at env=prod app=web-1 needs deployer or superadmin; you have viewer in env=prod (roles.yaml bindings[0])`}},
		{"logs need the flag", Principal{Groups: []string{"viewers"}}, Logs, Target{Environment: "prod"},
			Decision{Because: `logs at env=prod needs viewer or deployer or approver or superadmin with logs: true; you have viewer in env=prod (roles.yaml bindings[0])`}},
		{"operate needs the flag, not the deployer role", Principal{Groups: []string{"deployers"}}, Operate, Target{Environment: "prod", App: "web-1"},
			Decision{Because: `operate at env=prod app=web-1 needs viewer or deployer or approver or superadmin with operate: true; you have deployer in env=prod app=web-* (roles.yaml bindings[2])`}},
		{"operate through operate: true", Principal{Groups: []string{"operators"}}, Operate, Target{Environment: "prod", App: "web-1"},
			Decision{Allowed: true, Role: Deployer, Because: `deployer through roles.yaml bindings[6] (group "operators") in env=prod`}},
		{"no role", Principal{Groups: []string{"strangers"}}, View, Target{Environment: "prod"},
			Decision{Because: `view at env=prod needs viewer or deployer or approver or superadmin; you have no role in roles.yaml`}},
		{"secret values", Principal{Admin: true}, SecretValues, Target{},
			Decision{Because: "secret values are never shown, to anyone"}},
		{"unknown action", Principal{Admin: true}, Action("delete"), Target{},
			Decision{Because: `unknown action "delete"`}},
	}
	for _, tt := range tests {
		if got := p.Allow(tt.pr, tt.a, tt.t); got != tt.want {
			t.Errorf("%s: Allow = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestAllowFirstBindingInFileOrder(t *testing.T) {
	p := mustParse(t, testFile, Options{})
	// Both viewer bindings allow view; the first one is named.
	d := p.Allow(Principal{Groups: []string{"log-viewers", "viewers"}}, View, Target{Environment: "prod"})
	if !strings.Contains(d.Because, "bindings[0]") {
		t.Errorf("Allow(view).Because = %q, want bindings[0] (file order, not claim order)", d.Because)
	}
	// Logs: only the second allows it.
	d = p.Allow(Principal{Groups: []string{"log-viewers", "viewers"}}, Logs, Target{Environment: "prod"})
	if !d.Allowed || !strings.Contains(d.Because, "bindings[1]") {
		t.Errorf("Allow(logs) = %+v, want allowed through bindings[1]", d)
	}
}

func TestAllowSomewhere(t *testing.T) {
	p := mustParse(t, testFile, Options{})
	tests := []struct {
		groups []string
		a      Action
		want   bool
	}{
		{[]string{"viewers"}, View, true},
		{[]string{"viewers"}, Logs, false},
		{[]string{"deployers"}, Promote, true},
		{[]string{"deployers"}, Approve, false},
		{[]string{"approvers"}, Approve, true},
		{[]string{"approvers"}, Freeze, false},
		{[]string{"admins"}, Freeze, true},
		{[]string{"strangers"}, View, false},
	}
	for _, tt := range tests {
		if got := p.For(Principal{Groups: tt.groups}).AllowSomewhere(tt.a); got.Allowed != tt.want {
			t.Errorf("AllowSomewhere(%v, %s) = %+v, want allowed %v", tt.groups, tt.a, got, tt.want)
		}
	}
}

func TestHostileClaims(t *testing.T) {
	p := mustParse(t, testFile+`
  - role: viewer
    groups: ["cn=ops,ou=groups,dc=example"]
`, Options{})
	many := make([]string, MaxGroups)
	for i := range many {
		many[i] = fmt.Sprintf("junk-%d", i)
	}
	lastRead := slices.Clone(many)
	lastRead[MaxGroups-1] = "admins"
	tests := []struct {
		name string
		pr   Principal
		a    Action
		t    Target
		want bool
	}{
		{"group with commas is not split", Principal{Groups: []string{"viewers,admins"}}, View, Target{Environment: "prod"}, false},
		{"group with commas padded", Principal{Groups: []string{" admins"}}, View, Target{}, false},
		{"DN group matches exactly", Principal{Groups: []string{"cn=ops,ou=groups,dc=example"}}, View, Target{}, true},
		{"part of a DN does not match", Principal{Groups: []string{"cn=ops"}}, View, Target{}, false},
		{"group case differs", Principal{Groups: []string{"Admins"}}, View, Target{}, false},
		{"group past MaxGroups is not read", Principal{Groups: append(slices.Clone(many), "admins")}, Admin, Target{}, false},
		{"last group read counts", Principal{Groups: lastRead}, Admin, Target{}, true},
		{"overlong group ignored", Principal{Groups: []string{strings.Repeat("a", MaxNameBytes+1)}}, View, Target{}, false},
		{"empty group matches nothing", Principal{Groups: []string{""}}, View, Target{Environment: "prod"}, false},
		{"empty email matches nothing", Principal{Email: "", EmailVerified: true}, View, Target{Cluster: "eu-1"}, false},
		{"verified email", Principal{Email: "dana@example.com", EmailVerified: true}, Apply, Target{Cluster: "eu-1"}, true},
		{"email trimmed", Principal{Email: " dana@example.com\n", EmailVerified: true}, Apply, Target{Cluster: "eu-1"}, true},
		{"unverified email", Principal{Email: "dana@example.com"}, Apply, Target{Cluster: "eu-1"}, false},
		{"email case differs", Principal{Email: "Dana@example.com", EmailVerified: true}, Apply, Target{Cluster: "eu-1"}, false},
		{"email as a group", Principal{Groups: []string{"dana@example.com"}}, Apply, Target{Cluster: "eu-1"}, false},
		{"group as an email", Principal{Email: "admins", EmailVerified: true}, View, Target{}, false},
	}
	for _, tt := range tests {
		if got := p.Allow(tt.pr, tt.a, tt.t); got.Allowed != tt.want {
			t.Errorf("%s: Allow(%s, %v) = %+v, want allowed %v", tt.name, tt.a, tt.t, got, tt.want)
		}
	}
}

func TestIssuer(t *testing.T) {
	p := mustParse(t, testFile, Options{Issuer: "https://idp.example"})
	if d := p.Allow(Principal{Groups: []string{"admins"}, Issuer: "https://other.example"}, View, Target{}); d.Allowed {
		t.Errorf("Allow(other issuer) = %+v, want denied", d)
	}
	if d := p.Allow(Principal{Groups: []string{"admins"}, Issuer: "https://idp.example"}, View, Target{}); !d.Allowed {
		t.Errorf("Allow(configured issuer) = %+v, want allowed", d)
	}
}

func TestExplain(t *testing.T) {
	p := mustParse(t, testFile, Options{AdminSource: "the admin claim"})
	got := p.Explain(Principal{Admin: true, Email: "dana@example.com", EmailVerified: true, Groups: []string{"approvers", "log-viewers", "nope"}})
	want := []Grant{
		{Role: Superadmin, Logs: true, Operate: true, Source: "the admin claim"},
		{Role: Viewer, Scope: scope.Scope{Environments: []string{"prod"}}, Logs: true, Source: "roles.yaml bindings[1]", Via: `group "log-viewers"`},
		{Role: Approver, Scope: scope.Scope{Environments: []string{"prod"}}, Source: "roles.yaml bindings[3]", Via: `group "approvers"`},
		{Role: Deployer, Scope: scope.Scope{Clusters: []string{"eu-1"}}, Source: "roles.yaml bindings[5]", Via: `email "dana@example.com"`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Explain (-want +got):\n%s", diff)
	}
	if got := p.Explain(Principal{Groups: []string{"nope"}}); len(got) != 0 {
		t.Errorf("Explain(no role) = %v, want none", got)
	}
}

func TestRelevantGroups(t *testing.T) {
	p := mustParse(t, testFile, Options{})
	got := p.RelevantGroups([]string{"x", "admins", "y", "viewers", "admins"})
	if diff := cmp.Diff([]string{"admins", "viewers"}, got); diff != "" {
		t.Errorf("RelevantGroups (-want +got):\n%s", diff)
	}
	// Deciding on the relevant groups alone gives the same answers.
	full := Principal{Groups: []string{"x", "deployers", "y"}}
	kept := Principal{Groups: p.RelevantGroups(full.Groups)}
	for _, a := range Actions() {
		tg := Target{Environment: "prod", App: "web-2"}
		if g, k := p.Allow(full, a, tg), p.Allow(kept, a, tg); g != k {
			t.Errorf("Allow(%s) on all groups = %+v, on relevant groups = %+v", a, g, k)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"empty", ``, "roles: roles.yaml: empty file"},
		{"a list", `- role: viewer`, "not a mapping"},
		{"no bindings", `bindings: []`, "bindings: empty"},
		{"unknown top key", "bindings: []\nversion: 1", "version: unknown key"},
		{"key case", "bindings:\n- Role: viewer\n  groups: [a]", "bindings[0].Role: unknown key (keys are case-sensitive"},
		{"top key case", "Bindings:\n- role: viewer\n  groups: [a]", "Bindings: unknown key"},
		{"unknown binding key", "bindings:\n- role: viewer\n  group: [a]", "bindings[0].group: unknown key"},
		{"unknown scope key", "bindings:\n- role: viewer\n  groups: [a]\n  scope: {envs: [prod]}", "bindings[0].scope.envs: unknown key"},
		{"scope key case", "bindings:\n- role: viewer\n  groups: [a]\n  scope: {Apps: [web]}", "bindings[0].scope.Apps: unknown key"},
		{"duplicate key", "bindings:\n- role: viewer\n  role: superadmin\n  groups: [a]", "not valid YAML"},
		{"wrong type", "bindings:\n- role: viewer\n  groups: a", "bindings.groups: is a string, want a list"},
		{"unknown role", "bindings:\n- role: admin\n  groups: [a]", `bindings[0].role: "admin" is not a role`},
		{"names nobody", "bindings:\n- role: viewer", "bindings[0]: names nobody"},
		{"empty lists name nobody", "bindings:\n- role: viewer\n  groups: []\n  emails: []", "bindings[0]: names nobody"},
		{"empty group", "bindings:\n- role: viewer\n  groups: ['']", "bindings[0].groups[0]: empty"},
		{"padded group", "bindings:\n- role: viewer\n  groups: [' a']", "bindings[0].groups[0]: \" a\" has leading or trailing white space"},
		{"control character", "bindings:\n- role: viewer\n  groups: [\"a\\u0007\"]", "control character"},
		{"format character in a group", "bindings:\n- role: viewer\n  groups: [\"ad\\u202emin\"]", `bindings[0].groups[0]: "ad\u202emin" has a format character`},
		{"format character in an email", "bindings:\n- role: viewer\n  emails: [\"a\\u200b@b.example\"]", `bindings[0].emails[0]: "a\u200b@b.example" has a format character`},
		{"format character in a key", "bindings:\n- role: viewer\n  \"gro\\u202eups\": [a]", `bindings[0]."gro\u202eups": unknown key`},
		{"format character in a selector", "bindings:\n- role: viewer\n  groups: [a]\n  scope: {apps: [\"we\\u202eb\"]}", `bindings[0].scope.apps[0]: selector "we\u202eb" has a format character`},
		{"overlong group", "bindings:\n- role: viewer\n  groups: [" + strings.Repeat("a", MaxNameBytes+1) + "]", "bindings[0].groups[0]: 1025 bytes"},
		{"not an email", "bindings:\n- role: viewer\n  emails: [dana]", "bindings[0].emails[0]: \"dana\" is not an email address"},
		{"two @", "bindings:\n- role: viewer\n  emails: [a@b@c]", "is not an email address"},
		{"space in email", "bindings:\n- role: viewer\n  emails: [\"a b@c\"]", "is not an email address"},
		{"scoped superadmin", "bindings:\n- role: superadmin\n  groups: [a]\n  scope: {environments: [dev]}", "bindings[0].scope: a superadmin binding is unscoped"},
		{"bad selector", "bindings:\n- role: viewer\n  groups: [a]\n  scope: {apps: ['web?']}", "roles: roles.yaml: bindings[0].scope.apps[0]: selector \"web?\""},
		{"too large", "#" + strings.Repeat("x", MaxFileBytes), "larger than"},
	}
	for _, tt := range tests {
		_, err := Parse("roles.yaml", []byte(tt.data), Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Parse = %v, want an error containing %q", tt.name, err, tt.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "roles: roles.yaml: ") {
			t.Errorf("%s: Parse = %v, want the prefix roles: roles.yaml: ", tt.name, err)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "roles.yaml")
	if err := os.WriteFile(path, []byte(testFile), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path, Options{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !p.HasFile() {
		t.Errorf("HasFile() = false, want true")
	}
	if d := p.Allow(Principal{Groups: []string{"approvers"}}, Approve, Target{Environment: "prod"}); !d.Allowed || !strings.Contains(d.Because, path+" bindings[3]") {
		t.Errorf("Allow(approve) = %+v, want allowed through %s bindings[3]", d, path)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml"), Options{}); err == nil || !strings.HasPrefix(err.Error(), "roles: --roles: ") {
		t.Errorf("Load(missing) = %v, want a roles: --roles: error", err)
	}
}
