// Package actor is the one type for who acted (a person signed in to the
// console, a bearer token's subject, the command line's user, or
// deploy-web itself: auto-sync, the freeze schedule), and the one way to
// print it. The audit records keep it (audit.Actor is this type), commit
// authors are rendered from it (writeback), the workflows carry it
// (gitops), and auth.Identity produces it (Identity.Actor).
//
// Every field is hostile: it comes from an identity provider's claims or
// a command line. String cleans what it prints.
package actor

import (
	"strings"

	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Actor is who acted.
type Actor struct {
	// Email is the verified or unverified email claim ("" for none).
	Email string `json:"email"`
	// Subject is the identity provider's "sub" (or deploy-web's own name
	// for what it does by itself).
	Subject string `json:"subject"`
	// Groups are the groups the roles file names, as the session carries
	// them.
	Groups []string `json:"groups"`
	// Name is the display name the identity provider gives (a commit
	// author's name). It is not part of the record: a record names who
	// acted by email and subject.
	Name string `json:"-"`
}

// MaxPartBytes bounds each part String prints (the email, the subject):
// longer is cut, with "…".
const MaxPartBytes = 253

// String is who acted as logs, Kubernetes Events, commit messages, runs
// and pages print it: "alice@example.com (sub alice)", or "sub alice"
// without an email, or the email alone without a subject ("unknown"
// with neither). Each part is one line: format characters (bidi
// controls, zero-width) removed, control characters and line breaks a
// space, runs of spaces one, cut at MaxPartBytes.
func (a Actor) String() string {
	email, sub := part(a.Email), part(a.Subject)
	switch {
	case email != "" && sub != "":
		return email + " (sub " + sub + ")"
	case email != "":
		return email
	case sub != "":
		return "sub " + sub
	}
	return "unknown"
}

// Key is what tells people apart: the email in lower case (ASCII), or
// the subject when there is no email. The audit records filter on it
// and label it, and the refusal limit counts per Key.
func (a Actor) Key() string {
	if a.Email != "" {
		return lowerASCII(a.Email)
	}
	return a.Subject
}

// part is s as String prints it.
func part(s string) string {
	s = strings.Join(strings.Fields(textfmt.Clean(s, false)), " ")
	return textfmt.Cut(s, MaxPartBytes)
}

// lowerASCII lowers A-Z only: an email's key must not depend on Unicode
// case tables.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
