package roles

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hanzoai/deploy-web/internal/scope"
)

// Options configure a Policy.
type Options struct {
	// Issuer, when set, is the only issuer whose people bindings match
	// (Principal.Issuer). The admin claim is auth's verdict and counts
	// regardless.
	Issuer string
	// AdminSource describes the admin claim for Explain and Because, for
	// example `the admin claim "groups" containing "superadmin"`;
	// "the admin claim" when empty.
	AdminSource string
}

// Policy maps people to roles. Build it once at start-up with Default or
// Load; it is immutable and safe for concurrent use. A nil *Policy acts as
// Default(Options{}): superadmins only.
type Policy struct {
	name     string // the roles file, "" without one
	bindings []Binding
	opts     Options
	byGroup  map[string][]int // group -> indexes of the bindings naming it
	byEmail  map[string][]int
}

// Default is the policy without a roles file: a superadmin (Principal.Admin)
// may do everything, anyone else nothing.
func Default(opts Options) *Policy {
	return newPolicy("", nil, opts)
}

func newPolicy(name string, bindings []Binding, opts Options) *Policy {
	p := &Policy{name: name, bindings: bindings, opts: opts, byGroup: map[string][]int{}, byEmail: map[string][]int{}}
	for i, b := range bindings {
		for _, g := range b.Groups {
			if !slices.Contains(p.byGroup[g], i) {
				p.byGroup[g] = append(p.byGroup[g], i)
			}
		}
		for _, e := range b.Emails {
			if !slices.Contains(p.byEmail[e], i) {
				p.byEmail[e] = append(p.byEmail[e], i)
			}
		}
	}
	return p
}

// orDefault returns p, or the default policy for a nil p.
func (p *Policy) orDefault() *Policy {
	if p == nil {
		return Default(Options{})
	}
	return p
}

// HasFile reports whether p came from a roles file (false: superadmins only).
func (p *Policy) HasFile() bool { return p != nil && p.name != "" }

// Allow is the one decision: may pr do a at t? It is For(pr).Allow(a, t).
func (p *Policy) Allow(pr Principal, a Action, t Target) Decision {
	return p.For(pr).Allow(a, t)
}

// Explain lists pr's roles and where each comes from; see Grants.Explain.
func (p *Policy) Explain(pr Principal) []Grant {
	return p.For(pr).Explain()
}

// RelevantGroups returns the groups of a claim that some binding names,
// in claim order without repeats (of the first MaxGroups): what a session
// needs to keep of a long groups claim to decide the same later.
func (p *Policy) RelevantGroups(groups []string) []string {
	p = p.orDefault()
	var out []string
	for _, g := range claimGroups(groups) {
		if len(p.byGroup[g]) > 0 && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// claimGroups is the part of a groups claim that is read: the first
// MaxGroups entries.
func claimGroups(groups []string) []string {
	if len(groups) > MaxGroups {
		return groups[:MaxGroups]
	}
	return groups
}

// For resolves pr's bindings once, for the many decisions of one request
// (every button of a page, every row of the fleet).
func (p *Policy) For(pr Principal) Grants {
	p = p.orDefault()
	g := Grants{policy: p, admin: pr.Admin}
	if p.opts.Issuer != "" && pr.Issuer != p.opts.Issuer {
		return g
	}
	via := map[int]string{}
	for _, grp := range claimGroups(pr.Groups) {
		if grp == "" || len(grp) > MaxNameBytes {
			continue
		}
		for _, i := range p.byGroup[grp] {
			if _, ok := via[i]; !ok {
				via[i] = "group " + strconv.Quote(grp)
			}
		}
	}
	if email := strings.TrimSpace(pr.Email); pr.EmailVerified && email != "" && len(email) <= MaxNameBytes {
		for _, i := range p.byEmail[email] {
			if _, ok := via[i]; !ok {
				via[i] = "email " + strconv.Quote(email)
			}
		}
	}
	for i, v := range via {
		g.matches = append(g.matches, match{binding: i, via: v})
	}
	slices.SortFunc(g.matches, func(a, b match) int { return a.binding - b.binding })
	return g
}

// Grants are one person's matched bindings under a Policy.
type Grants struct {
	policy  *Policy
	admin   bool
	matches []match // in file order
}

// match is a binding that names the person, and how.
type match struct {
	binding int
	via     string // `group "x"` or `email "x"`
}

// Allow decides whether the person may do a at t: a superadmin (the admin
// claim or a superadmin binding) may do everything but read secret values;
// otherwise the first binding, in file order, whose role grants a and
// whose scope covers t allows it. Anything else is a denial, whose Because
// says which roles would allow it and which the person has.
func (g Grants) Allow(a Action, t Target) Decision {
	return g.decide(a, func(s scope.Scope) bool { return s.Covers(t) }, "at "+t.String())
}

// AllowSomewhere decides whether the person may do a anywhere at all
// (whatever the scope): for links and pages that list many targets, each of
// which is then decided by Allow (the fleet shows the rows Allow(View)
// allows).
func (g Grants) AllowSomewhere(a Action) Decision {
	return g.decide(a, func(scope.Scope) bool { return true }, "anywhere")
}

func (g Grants) decide(a Action, inScope func(scope.Scope) bool, where string) Decision {
	p := g.policy.orDefault()
	switch {
	case !a.Known():
		return Decision{Because: fmt.Sprintf("unknown action %q", a)}
	case a == SecretValues:
		return Decision{Because: "secret values are never shown, to anyone"}
	case g.admin:
		return Decision{Allowed: true, Role: Superadmin, Because: "superadmin through " + p.adminSource()}
	}
	for _, m := range g.matches {
		b := p.bindings[m.binding]
		if grants(b.Role, b.Logs, b.Operate, a) && inScope(b.Scope) {
			because := fmt.Sprintf("%s through %s (%s)", b.Role, p.bindingName(m.binding), m.via)
			if !b.Scope.IsZero() {
				because += " in " + b.Scope.String()
			}
			return Decision{Allowed: true, Role: b.Role, Because: because}
		}
	}
	return Decision{Because: p.denial(a, where, g.matches)}
}

// denial explains a refusal: what a needs and what the person has.
func (p *Policy) denial(a Action, where string, matches []match) string {
	var need []string
	for _, r := range rolesFor(a) {
		need = append(need, string(r))
	}
	msg := fmt.Sprintf("%s %s needs %s", a, where, strings.Join(need, " or "))
	switch a {
	case Logs:
		msg += " with logs: true"
	case Operate:
		msg += " with operate: true"
	}
	if !p.HasFile() {
		return msg + "; without a roles file only superadmins (" + p.adminSource() + ") may use deploy-web"
	}
	if len(matches) == 0 {
		return msg + "; you have no role in " + p.name
	}
	const shown = 5
	var have []string
	for i, m := range matches {
		if i == shown {
			have = append(have, fmt.Sprintf("and %d more", len(matches)-shown))
			break
		}
		b := p.bindings[m.binding]
		where := "everywhere"
		if !b.Scope.IsZero() {
			where = "in " + b.Scope.String()
		}
		have = append(have, fmt.Sprintf("%s %s (%s)", b.Role, where, p.bindingName(m.binding)))
	}
	return msg + "; you have " + strings.Join(have, ", ")
}

func (p *Policy) adminSource() string {
	if p.opts.AdminSource != "" {
		return p.opts.AdminSource
	}
	return "the admin claim"
}

// bindingName names binding i for people: "roles.yaml bindings[2]".
func (p *Policy) bindingName(i int) string {
	return p.name + " bindings[" + strconv.Itoa(i) + "]"
}

// Grant is one role a person holds and where it comes from.
type Grant struct {
	Role Role `json:"role"`
	// Scope is where the role applies (zero: everywhere).
	Scope scope.Scope `json:"scope,omitzero"`
	// Logs: the role may read logs inside Scope.
	Logs bool `json:"logs"`
	// Operate: the role may take day-2 actions (restart, scale, ...)
	// inside Scope.
	Operate bool `json:"operate"`
	// Source is the binding ("roles.yaml bindings[2]") or the admin claim.
	Source string `json:"source"`
	// Via is what matched: `group "team-shop"`, `email "a@example.com"`,
	// or "" for the admin claim.
	Via string `json:"via,omitempty"`
}

// Explain lists the person's roles, the admin claim first, then the
// bindings in file order; empty for a person with none (who may do
// nothing).
func (g Grants) Explain() []Grant {
	p := g.policy.orDefault()
	var out []Grant
	if g.admin {
		out = append(out, Grant{Role: Superadmin, Logs: true, Operate: true, Source: p.adminSource()})
	}
	for _, m := range g.matches {
		b := p.bindings[m.binding]
		out = append(out, Grant{Role: b.Role, Scope: b.Scope, Logs: b.Logs || b.Role == Superadmin, Operate: b.Operate || b.Role == Superadmin, Source: p.bindingName(m.binding), Via: m.via})
	}
	return out
}
