// Package roles decides who may do what where: one decision function,
// [Policy.Allow], answers "may this person do this action here?" for every
// handler and every button alike.
//
// # Where roles come from
//
// Without a roles file ([Default]) deploy-web behaves as it always has:
// a person is a superadmin when auth's IsAdmin says so (the admin claim,
// --admin-claim/--admin-value, carried as [Principal.Admin]) and may do
// everything; anyone else may do nothing (fail closed).
//
// A roles file (--roles FILE, loaded once at start-up with [Load]) adds
// bindings from the identity provider's groups or from email addresses to
// roles, each optionally scoped:
//
//	bindings:
//	  - role: viewer
//	    groups: [engineering]
//	  - role: deployer
//	    groups: [team-shop]
//	    scope: {environments: [dev, staging], apps: ["shop-*"]}
//	    logs: true
//	    operate: true
//	  - role: approver
//	    emails: [lead@example.com]
//	    scope: {environments: [prod]}
//	  - role: superadmin
//	    groups: [platform-oncall]
//
// The admin claim stays a source of superadmin with a roles file too, so a
// file can never lock the platform team out; the file adds people.
//
// Decoding is strict: keys are exact and case-sensitive ("Role" is an
// error), unknown keys, duplicate keys and wrong types are errors naming
// the path ("roles.yaml: bindings[2].scope.envs: unknown key"), and every
// value is checked (see [Parse]). A bad file fails start-up.
//
// # Matching a person to a binding
//
//   - groups: exact, case-sensitive string equality with an entry of the
//     person's groups claim. A claim is never split: a group "a,b" matches
//     only a binding that names "a,b" (LDAP-style DNs with commas work).
//     At most [MaxGroups] groups of a person are read (the first ones);
//     groups longer than [MaxNameBytes] and empty groups are ignored.
//   - emails: the person's email, with surrounding white space trimmed,
//     must equal the binding's entry byte for byte, and the IdP must have
//     verified it (email_verified, as IsAdmin requires for the email claim).
//     No case folding: RFC 5321 leaves the local part's case to the mail
//     server, and folding the domain alone buys little; write addresses as
//     the IdP sends them (the /me page shows that form).
//   - issuer: when [Options.Issuer] is set, a binding matches only a
//     person whose token came from that issuer.
//
// Empty strings never match: an empty group or email in a file is an
// error, and an empty claim matches nothing.
//
// # What each role may do
//
// A scope ([scope.Scope]) limits a binding to clusters, environments,
// namespaces and Apps (exact names or '*' patterns); an action is inside
// it when the target is covered ([scope.Scope.Covers]: a scoped binding
// does not cover a target whose field is unknown). Superadmin bindings are
// unscoped.
//
//	action        viewer  deployer  approver  superadmin
//	view          scope   scope     scope     yes
//	logs          logs:   logs:     logs:     yes
//	plan          -       scope     -         yes
//	apply         -       scope     -         yes
//	sync          -       scope     -         yes
//	rollback      -       scope     -         yes
//	promote       -       scope     -         yes
//	approve       -       -         scope     yes
//	notify        -       scope     -         yes
//	freeze        -       -         -         yes
//	pause         -       -         -         yes
//	operate       operate: operate: operate:  yes
//	break-glass   -       -         -         yes
//	admin         -       -         -         yes
//	secret-values -       -         -         -
//
// "scope" is allowed inside the binding's scope; "logs:" is allowed inside
// the scope only when the binding says logs: true, and "operate:" only
// when it says operate: true (day-2 actions on an App's objects: restart,
// scale, suspend, resume, delete a pod). No role implies operate: a
// deployer without operate: true may roll back but not scale.
//
// Secrets: [SecretValues] is never allowed, for anyone, superadmins
// included (DESIGN invariant 2). Secret objects are not in kubeview's kind
// registry, so trees and manifests never hold one; should a Secret's name
// ever be shown (never its data), gate it with [View] like any node, and
// any data with SecretValues.
//
// [Policy.Explain] lists a person's roles and where each comes from (the
// binding and the group or email that matched, or the admin claim), for
// the /me page.
package roles
