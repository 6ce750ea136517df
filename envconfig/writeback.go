package envconfig

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Mode says where a write-back commit goes.
type Mode string

// The modes of WriteBack.Mode.
const (
	// ModePush commits to the environment's branch.
	ModePush Mode = "push"
	// ModeBranch pushes a review branch deploy-web/<action>-<app>-<version>
	// made from the environment's branch and leaves that branch alone.
	ModeBranch Mode = "branch"
)

// WriteBack is an environment's write-back configuration (its `writeBack:`
// field): where and as whom deploy-web commits a version change.
type WriteBack struct {
	// Branch is the branch commits are made on (mode push) or from (mode
	// branch); empty means the source's ref (BranchFor).
	Branch string `json:"branch,omitempty"`
	// Author is the commit author, rendered from the signed-in person.
	Author AuthorTemplate `json:"author"`
	// Credentials give the HTTPS token; never shown, never logged.
	Credentials Credentials `json:"credentials"`
	// Mode is ModePush or ModeBranch; protected environments accept only
	// ModeBranch.
	Mode Mode `json:"mode"`
}

// AuthorTemplate renders the commit author from the actor. Each template
// may hold the fields {{.Name}}, {{.Email}} and {{.Subject}} (nothing
// else: no functions, no pipelines), substituted with the actor's values
// after newlines, control characters and angle brackets are stripped.
type AuthorTemplate struct {
	// Name defaults to DefaultAuthorName.
	Name string `json:"name,omitempty"`
	// Email defaults to DefaultAuthorEmail.
	Email string `json:"email,omitempty"`
}

// Defaults of AuthorTemplate.
const (
	DefaultAuthorName  = "{{.Name}} via deploy-web"
	DefaultAuthorEmail = "{{.Email}}"
)

// Credentials say where the push token is read from: one of TokenEnv (an
// environment variable) or TokenFile (a file; the lead resolves a relative
// path against the config file's folder). Neither the value nor its length
// ever appears in an error.
type Credentials struct {
	TokenEnv  string `json:"tokenEnv,omitempty"`
	TokenFile string `json:"tokenFile,omitempty"`
	// Username is the HTTP basic-auth user sent with the token (default
	// "x-access-token", which GitHub, Gitea and GitLab accept).
	Username string `json:"username,omitempty"`
}

// FieldError is a mistake in the writeBack configuration; Field is the path
// below the environment ("writeBack.mode").
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Public() }

// Public is the mistake in words a user may read (Field is beside it).
func (e *FieldError) Public() string { return e.Message }

// Validate checks the configuration; protected is the environment's
// protected flag (which refuses ModePush). It returns every mistake, each a
// *FieldError, joined.
func (w WriteBack) Validate(protected bool) error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, &FieldError{Field: "writeBack." + field, Message: fmt.Sprintf(format, a...)})
	}
	switch w.Mode {
	case ModePush:
		if protected {
			bad("mode", "push is refused on a protected environment: use mode: branch (a review branch and a compare link)")
		}
	case ModeBranch:
	case "":
		bad("mode", "required: push (commit to the branch) or branch (push a review branch)")
	default:
		bad("mode", "%q: want push or branch", w.Mode)
	}
	if w.Branch != "" {
		if err := CheckBranchName(w.Branch); err != nil {
			bad("branch", "%v", err)
		}
	}
	for _, f := range []struct{ field, tmpl string }{{"author.name", w.Author.Name}, {"author.email", w.Author.Email}} {
		if err := checkTemplate(f.tmpl); err != nil {
			bad(f.field, "%v", err)
		}
	}
	c := w.Credentials
	switch {
	case c.TokenEnv != "" && c.TokenFile != "":
		bad("credentials", "tokenEnv and tokenFile exclude each other: keep one")
	case c.TokenEnv != "" && !envNameOK(c.TokenEnv):
		bad("credentials.tokenEnv", "%q is not an environment variable name (letters, digits, '_')", c.TokenEnv)
	}
	if strings.ContainsAny(c.Username, ":\r\n") {
		bad("credentials.username", "must not hold ':' or a line break")
	}
	return errors.Join(errs...)
}

// BranchFor is the branch write-back commits on for an environment whose
// source follows sourceRef: Branch when set, else sourceRef. A commit hash
// has no branch to write to, and HEAD none that is named.
func (w WriteBack) BranchFor(sourceRef string) (string, error) {
	if w.Branch != "" {
		return w.Branch, nil
	}
	if sourceRef == "HEAD" || fullHashOK(sourceRef) {
		return "", &FieldError{Field: "writeBack.branch", Message: fmt.Sprintf("required: source.ref %q is not a branch", sourceRef)}
	}
	if err := CheckBranchName(sourceRef); err != nil {
		return "", &FieldError{Field: "writeBack.branch", Message: fmt.Sprintf("required: source.ref %q is not a branch name (%v)", sourceRef, err)}
	}
	return sourceRef, nil
}

func CheckBranchName(b string) error {
	if strings.HasPrefix(b, "refs/") {
		return fmt.Errorf("%q: name the branch without refs/heads/", b)
	}
	if err := plumbing.NewBranchReferenceName(b).Validate(); err != nil || strings.ContainsAny(b, " \t~^:") {
		return fmt.Errorf("%q is not a valid branch name", b)
	}
	return nil
}

func fullHashOK(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

func envNameOK(s string) bool {
	for i, c := range s {
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}

// templateFields are the only placeholders an AuthorTemplate may hold.
var templateFields = []string{"{{.Name}}", "{{.Email}}", "{{.Subject}}"}

// checkTemplate refuses any "{{" that does not start one of
// templateFields.
func checkTemplate(t string) error {
	rest := t
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			break
		}
		rest = rest[i:]
		ok := false
		for _, f := range templateFields {
			if strings.HasPrefix(rest, f) {
				rest, ok = rest[len(f):], true
				break
			}
		}
		if !ok {
			return fmt.Errorf("%q: only {{.Name}}, {{.Email}} and {{.Subject}} may appear between braces", t)
		}
	}
	if strings.ContainsAny(t, "<>\r\n") {
		return fmt.Errorf("%q: angle brackets and line breaks are not allowed", t)
	}
	return nil
}
