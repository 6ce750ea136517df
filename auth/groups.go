package auth

import (
	"strings"

	"github.com/hanzoai/deploy-web/roles"
)

// maxSessionGroupsBytes bounds the groups a session keeps (the sum of their
// lengths), so a session still fits in a cookie next to the refresh token
// and the admin claim. Groups past it are dropped, in claim order: the
// person has fewer roles (fail closed) until the roles file names fewer of
// their groups.
const maxSessionGroupsBytes = 1024

// ReasonNoRole is the denial of Require, with a roles file, for a person who
// holds no role at all (neither the admin claim nor a binding).
const ReasonNoRole = "forbidden: no role in deploy-web"

// reasonNoRoleLeft is the re-check's sign-out reason, with a roles file,
// for a person who had a role and has none left.
const reasonNoRoleLeft = "no role left"

// groupsClaim returns the groups of claims[name]: a list's string entries
// (anything else in it is ignored) or a single string, the first
// roles.MaxGroups entries of the claim at most.
func groupsClaim(claims map[string]any, name string) []string {
	var out []string
	switch v := claims[name].(type) {
	case string:
		out = []string{v}
	case []string:
		out = v[:min(len(v), roles.MaxGroups)]
	case []any:
		for _, e := range v[:min(len(v), roles.MaxGroups)] {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// sessionGroups returns what a session keeps of a person's groups claim:
// the groups the roles file names (none without one), at most
// maxSessionGroupsBytes of them.
func (a *Auth) sessionGroups(claims map[string]any) []string {
	rel := a.cfg.Roles.RelevantGroups(groupsClaim(claims, a.cfg.GroupsClaim))
	n := 0
	for i, g := range rel {
		if n+len(g) > maxSessionGroupsBytes {
			a.log.Warn("auth: the person's groups that the roles file names are too many for a session: the rest are dropped",
				"kept", i, "dropped", len(rel)-i, "max_bytes", maxSessionGroupsBytes)
			return rel[:i]
		}
		n += len(g)
	}
	return rel
}

// GroupList is a list of groups that keeps Identity comparable: the groups
// joined by NUL, which no group a session keeps contains (they are the
// roles file's, and roles refuses control characters in a group).
type GroupList string

// NewGroupList returns the GroupList of gs (tests build identities with it).
func NewGroupList(gs []string) GroupList {
	return GroupList(strings.Join(gs, "\x00"))
}

// Slice returns the groups, in order (nil for none).
func (l GroupList) Slice() []string {
	if l == "" {
		return nil
	}
	return strings.Split(string(l), "\x00")
}

// withRoleClaims returns id with the claims only roles reads (the email's
// verification, the relevant groups, the issuer), with a roles file; without
// one the Identity is exactly what it was before roles (superadmins only,
// decided by Admin).
func (a *Auth) withRoleClaims(id Identity, verified bool, groups []string, issuer string) Identity {
	if a.cfg.Roles.HasFile() {
		id.EmailVerified, id.Groups, id.Issuer = verified, NewGroupList(groups), issuer
	}
	return id
}

// Principal is the person as package roles sees them.
func (id Identity) Principal() roles.Principal {
	return roles.Principal{
		Subject:       id.Subject,
		Email:         id.Email,
		EmailVerified: id.EmailVerified,
		Groups:        id.Groups.Slice(),
		Issuer:        id.Issuer,
		Admin:         id.Admin,
	}
}

// mayEnter reports whether Require lets id through to the routes: without a
// roles file a superadmin only (IsAdmin, today's rule); with one, anyone
// holding a role, each route then deciding its own action.
func (a *Auth) mayEnter(id Identity) bool {
	if !a.cfg.Roles.HasFile() {
		return id.Admin
	}
	return id.Admin || len(a.cfg.Roles.Explain(id.Principal())) > 0
}

// refusal is Require's denial reason for an identity mayEnter refuses.
func (a *Auth) refusal() string {
	if a.cfg.Roles.HasFile() {
		return ReasonNoRole
	}
	return ReasonNotAdmin
}
