package roles

import (
	"slices"

	"github.com/hanzoai/deploy-web/internal/scope"
)

// Role is what a binding grants.
type Role string

// The roles, from least to most.
const (
	Viewer     Role = "viewer"
	Deployer   Role = "deployer"
	Approver   Role = "approver"
	Superadmin Role = "superadmin"
)

// Roles returns every role, in the order of the constants.
func Roles() []Role { return []Role{Viewer, Deployer, Approver, Superadmin} }

// Action is what a person asks to do. Handlers and templates name actions
// only through these constants.
type Action string

// The actions. See the package doc for who may do each.
const (
	// View reads the fleet, trees, manifests, diffs, history and reports.
	View Action = "view"
	// Logs reads pod logs.
	Logs Action = "logs"
	// SecretValues reads a Secret's data: never allowed.
	SecretValues Action = "secret-values"
	// Plan starts a plan (a server-side dry run) of an environment.
	Plan Action = "plan"
	// Apply applies a reviewed plan.
	Apply Action = "apply"
	// Sync requests a reconcile or applies an App's desired state.
	Sync Action = "sync"
	// Rollback pins an App to an earlier version.
	Rollback Action = "rollback"
	// Promote copies versions from one environment to another (the request).
	Promote Action = "promote"
	// Approve approves another person's promotion request.
	Approve Action = "approve"
	// Notify creates, changes, deletes and tests the notification
	// subscriptions of an App or an environment.
	Notify Action = "notify"
	// Freeze creates or removes a deploy freeze.
	Freeze Action = "freeze"
	// Pause pauses or resumes auto-sync.
	Pause Action = "pause"
	// Operate is a day-2 action on an object of an App's tree: restart,
	// scale, suspend or resume a CronJob, delete a Pod. Only a binding
	// with operate: true grants it (no role implies it) besides superadmin.
	Operate Action = "operate"
	// BreakGlass overrides a freeze for one action, with a recorded reason.
	BreakGlass Action = "break-glass"
	// Admin is everything else reserved to superadmins (settings, the
	// audit trail of others).
	Admin Action = "admin"
)

// Actions returns every action, for tests that walk each one.
func Actions() []Action {
	return []Action{View, Logs, SecretValues, Plan, Apply, Sync, Rollback, Promote, Approve, Notify, Freeze, Pause, Operate, BreakGlass, Admin}
}

// Known reports whether a is one of Actions.
func (a Action) Known() bool { return slices.Contains(Actions(), a) }

// roleActions is what each role may do inside its scope (Logs needs the
// binding's logs: true besides; Operate is the binding's operate: true
// alone). Superadmin is handled apart: everything
// but SecretValues, everywhere.
func roleActions(r Role) []Action {
	switch r {
	case Viewer:
		return []Action{View, Logs}
	case Deployer:
		return []Action{View, Logs, Plan, Apply, Sync, Rollback, Promote, Notify}
	case Approver:
		return []Action{View, Logs, Approve}
	}
	return nil
}

// grants reports whether a binding with role r and the logs and operate
// flags grants a (scope aside).
func grants(r Role, logs, operate bool, a Action) bool {
	switch {
	case a == SecretValues || !a.Known():
		return false
	case r == Superadmin:
		return true
	case a == Logs && !logs:
		return false
	case a == Operate:
		return operate
	}
	return slices.Contains(roleActions(r), a)
}

// rolesFor lists the roles that may do a at all, for denial messages.
func rolesFor(a Action) []Role {
	var out []Role
	for _, r := range Roles() {
		if grants(r, true, a == Operate, a) {
			out = append(out, r)
		}
	}
	return out
}

// Principal is the person asking, as auth knows them.
type Principal struct {
	// Subject is the IdP's "sub".
	Subject string
	// Email is the "email" claim; EmailVerified is "email_verified".
	// Email bindings match only a verified email.
	Email         string
	EmailVerified bool
	// Groups is the groups claim. Only the first MaxGroups are read.
	Groups []string
	// Issuer is the token's "iss".
	Issuer string
	// Admin is auth.IsAdmin's verdict for this request (the admin claim):
	// a superadmin with or without a roles file.
	Admin bool
}

// Target is where an action happens; see package scope. An empty field is
// "not one particular value", which a scoped binding does not cover.
type Target = scope.Target

// Decision is the answer of Allow.
type Decision struct {
	Allowed bool
	// Role is the role that allowed the action ("" when denied).
	Role Role
	// Because says why, in words fit for a page or an audit record:
	// which binding (or the admin claim) allowed it, or what is missing.
	Because string
}
