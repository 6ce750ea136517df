package deployplan

import (
	"strings"
	"testing"
)

func TestValidateRef(t *testing.T) {
	tests := []struct {
		ref  string
		want string // "" for valid, else a part of the error
	}{
		{"main", ""},
		{"feature/new-api_2", ""},
		{"v1.2.3", ""},
		{"0123456789abcdef0123456789abcdef01234567", ""},
		{"pull/12", ""},
		{"", "empty"},
		{"-main", "starts with '-'"},
		{"--upload-pack=touch /tmp/x", "starts with '-'"},
		{"main..evil", "holds '..'"},
		{"a/../b", "holds '..'"},
		{"HEAD~1", `holds "~"`},
		{"main^", `holds "^"`},
		{"main@{1}", `holds "@"`},
		{"a:b", `holds ":"`},
		{"a b", `holds " "`},
		{"a\nb", `holds "\n"`},
		{"feat*", `holds "*"`},
		{"a//b", "empty path component"},
		{"/main", "empty path component"},
		{"main/", "empty path component"},
		{"main.", "ends with '.'"},
		{"a/.hidden", `starts with "."`},
		{"a/-x", `starts with "-"`},
		{"main.lock", "ends with .lock"},
		{"pull/abc", "pull/N, N digits only"},
		{"pull/1/head", "pull/N, N digits only"},
		{"pull/01", "pull/N, N digits only"},
		{"refs/heads/main", "not a full ref"},
		{"HEAD", "not a full ref"},
		{strings.Repeat("a", MaxRefBytes+1), "longer than"},
	}
	for _, tt := range tests {
		err := ValidateRef(tt.ref)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("ValidateRef(%q) = %v, want nil", tt.ref, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "deployplan: ref ")):
			t.Errorf("ValidateRef(%q) = %v, want an error with %q", tt.ref, err, tt.want)
		}
	}
}

func TestAtRef(t *testing.T) {
	env := &Environment{Name: "prod", Namespace: "web", Source: Source{Repo: "https://git.example/r.git", Ref: "main", Path: "k"}}
	got, err := AtRef(env, "pull/3")
	if err != nil {
		t.Fatal(err)
	}
	if got.Source.Ref != "pull/3" || env.Source.Ref != "main" || got == env {
		t.Errorf("AtRef = %q (env %q), want a copy at pull/3 and env unchanged at main", got.Source.Ref, env.Source.Ref)
	}
	if _, err := AtRef(env, "main..x"); err == nil {
		t.Error("AtRef(main..x) = nil error, want the ref refused")
	}
	local := &Environment{Name: "dev", Source: Source{Path: "k"}}
	if _, err := AtRef(local, "main"); err == nil || !strings.Contains(err.Error(), "set source.repo") {
		t.Errorf("AtRef(local source) = %v, want an error saying to set source.repo", err)
	}
}
