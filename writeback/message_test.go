package writeback

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hanzoai/deploy-web/envconfig"

	"github.com/hanzoai/deploy-web/internal/actor"
)

func TestMessage(t *testing.T) {
	got := Message("rollback", "staging/api", "1.4.2", "1.2.0", actor.Actor{Email: "ada@example.com", Subject: "u-1"}, "errors went up\r\nafter the deploy")
	want := "deploy-web: rollback staging/api 1.4.2 -> 1.2.0\n\n" +
		"rollback of staging/api from 1.4.2 to 1.2.0, by ada@example.com (sub u-1).\n\n" +
		"Reason:\n> errors went up\n> after the deploy\n"
	if got != want {
		t.Errorf("Message =\n%s\nwant\n%s", got, want)
	}
}

// TestMessageSpoof: a reason, an App or an author with bidi controls or
// zero-width characters reaches the commit message without them (the
// override of "fix \u202egnp.exe\u202c" would show "fix exe.png").
func TestMessageSpoof(t *testing.T) {
	got := Message("rollback", "api\u200b", "1.4.2", "1.2.0", actor.Actor{Email: "ada@exam\u2066ple.com", Subject: "u-1\ufeff"}, "fix \u202egnp.exe\u202c\nsecond \u2067line\u2069")
	want := "deploy-web: rollback api 1.4.2 -> 1.2.0\n\n" +
		"rollback of api from 1.4.2 to 1.2.0, by ada@example.com (sub u-1).\n\n" +
		"Reason:\n> fix gnp.exe\n> second line\n"
	if got != want {
		t.Errorf("Message =\n%q\nwant\n%q", got, want)
	}
}

func TestMessageHostile(t *testing.T) {
	evilApp := "api\n\nSigned-off-by: mallory\x00\x1b[31m"
	evilEmail := "m@x\nCo-authored-by: mallory <m@x>"
	got := Message("rollback", evilApp, "1", strings.Repeat("9", 500), actor.Actor{Email: evilEmail}, strings.Repeat("line\n", 100)+strings.Repeat("é", 5000))
	subject, body, _ := strings.Cut(got, "\n")
	if strings.ContainsAny(subject, "\x00\x1b") || utf8.RuneCountInString(subject) > maxSubjectRunes {
		t.Errorf("subject %q: want one line without control characters, at most %d runes", subject, maxSubjectRunes)
	}
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "Signed-off-by") || strings.HasPrefix(l, "Co-authored-by") {
			t.Errorf("a hostile value made its own line %q in\n%s", l, got)
		}
	}
	if !strings.Contains(got, "by m@x Co-authored-by: mallory <m@x>.\n") {
		t.Errorf("an actor without a subject should read as its email alone, on one line:\n%s", got)
	}
	quoted := 0
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "> ") {
			quoted++
		}
	}
	if quoted != maxReasonLines+1 || !strings.Contains(got, "> […]") {
		t.Errorf("reason kept %d quoted lines, want %d and the cut mark", quoted, maxReasonLines+1)
	}
	if len(got) > 12<<10 {
		t.Errorf("message has %d bytes, want it capped", len(got))
	}
}

func TestAuthorRender(t *testing.T) {
	for _, tc := range []struct {
		name string
		tmpl envconfig.AuthorTemplate
		who  actor.Actor
		want Identity
	}{
		{"defaults", envconfig.AuthorTemplate{}, actor.Actor{Name: "Ada Lovelace", Email: "ada@example.com"}, Identity{"Ada Lovelace via deploy-web", "ada@example.com"}},
		{"fields", envconfig.AuthorTemplate{Name: "{{.Subject}} ({{.Name}})", Email: "bot+{{.Subject}}@example.com"}, actor.Actor{Name: "Ada", Subject: "u1"}, Identity{"u1 (Ada)", "bot+u1@example.com"}},
		{"hostile name and email", envconfig.AuthorTemplate{}, actor.Actor{Name: "Eve <eve@x>\nCommitter: root", Email: "eve@x>\n<root@x"}, Identity{"Eve eve@x Committer: root via deploy-web", "eve@x root@x"}},
		{"empty actor", envconfig.AuthorTemplate{}, actor.Actor{}, Identity{"deploy-web", "deploy-web@localhost"}},
		{"bidi and zero-width", envconfig.AuthorTemplate{}, actor.Actor{Name: "Ada \u202eecilA\u202c", Email: "a\u200bda@example.com"}, Identity{"Ada ecilA via deploy-web", "ada@example.com"}},
		{"placeholder text is not a field", envconfig.AuthorTemplate{Name: "{{.Name}}"}, actor.Actor{Name: "{{.Email}}", Email: "e@x"}, Identity{"{{.Email}}", "e@x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RenderAuthor(tc.tmpl, tc.who)
			// An email with a space is no email: the fallback.
			if strings.Contains(tc.want.Email, " ") {
				tc.want.Email = "deploy-web@localhost"
			}
			if got != tc.want {
				t.Errorf("Render(%+v) = %+v, want %+v", tc.who, got, tc.want)
			}
			if strings.ContainsAny(got.Name+got.Email, "<>\n\r") {
				t.Errorf("Render(%+v) = %+v holds an angle bracket or a line break", tc.who, got)
			}
		})
	}
}
