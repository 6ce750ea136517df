package writeback

import (
	"strings"
	"unicode"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/actor"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Identity is a commit author (or committer) after rendering: one line
// each, no angle brackets.
type Identity struct {
	Name  string
	Email string
}

// What a template that renders empty becomes.
const (
	fallbackName  = "deploy-web"
	fallbackEmail = "deploy-web@localhost"
)

// maxIdentityRunes caps a rendered author name or email.
const maxIdentityRunes = 200

// RenderAuthor is the commit author for actor, rendered with a: each template with the actor's
// sanitised fields substituted (the defaults for empty templates), then
// sanitised as a whole. A name or an email that renders empty becomes
// "deploy-web" or "deploy-web@localhost". Templates are assumed valid
// (Validate); an invalid placeholder is left as text.
func RenderAuthor(a envconfig.AuthorTemplate, who actor.Actor) Identity {
	name, email := a.Name, a.Email
	if name == "" {
		name = envconfig.DefaultAuthorName
	}
	if email == "" {
		email = envconfig.DefaultAuthorEmail
	}
	r := strings.NewReplacer(
		"{{.Name}}", identityPart(who.Name),
		"{{.Email}}", identityPart(who.Email),
		"{{.Subject}}", identityPart(who.Subject))
	id := Identity{Name: identityPart(r.Replace(name)), Email: identityPart(r.Replace(email))}
	// A name made of the template's text alone ("via deploy-web") is as
	// good as empty.
	if id.Name == "" || id.Name == identityPart(strings.NewReplacer("{{.Name}}", "", "{{.Email}}", "", "{{.Subject}}", "").Replace(name)) {
		id.Name = fallbackName
	}
	if id.Email == "" || strings.ContainsAny(id.Email, " ") {
		id.Email = fallbackEmail
	}
	return id
}

// identityPart is s fit for a git author line: format characters (bidi
// controls, zero-width: textfmt.Clean), control characters (line breaks
// included) and angle brackets removed, spaces collapsed, at most
// maxIdentityRunes runes.
func identityPart(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '<' || r == '>':
			return -1
		case unicode.IsControl(r) || unicode.IsSpace(r) || r == unicode.ReplacementChar:
			return ' '
		}
		return r
	}, textfmt.Clean(s, false))
	return capRunes(strings.Join(strings.Fields(s), " "), maxIdentityRunes)
}

// capRunes cuts s to at most n runes.
func capRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
