package envconfig

import (
	"errors"
	"fmt"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := WriteBack{Mode: ModeBranch, Credentials: Credentials{TokenEnv: "GIT_TOKEN"}}
	for _, tc := range []struct {
		name      string
		w         WriteBack
		protected bool
		want      []string // fields at fault; none = valid
	}{
		{"branch on protected", ok, true, nil},
		{"push on unprotected", WriteBack{Mode: ModePush}, false, nil},
		{"push on protected", WriteBack{Mode: ModePush}, true, []string{"writeBack.mode"}},
		{"no mode", WriteBack{}, false, []string{"writeBack.mode"}},
		{"unknown mode", WriteBack{Mode: "force"}, false, []string{"writeBack.mode"}},
		{"bad branch", WriteBack{Mode: ModeBranch, Branch: "main..x"}, false, []string{"writeBack.branch"}},
		{"refs/heads branch", WriteBack{Mode: ModeBranch, Branch: "refs/heads/main"}, false, []string{"writeBack.branch"}},
		{"template function", WriteBack{Mode: ModeBranch, Author: AuthorTemplate{Name: `{{printf "%s" .Name}}`}}, false, []string{"writeBack.author.name"}},
		{"template angle bracket", WriteBack{Mode: ModeBranch, Author: AuthorTemplate{Email: "<{{.Email}}>"}}, false, []string{"writeBack.author.email"}},
		{"both credentials", WriteBack{Mode: ModeBranch, Credentials: Credentials{TokenEnv: "A", TokenFile: "/t"}}, false, []string{"writeBack.credentials"}},
		{"bad env name", WriteBack{Mode: ModeBranch, Credentials: Credentials{TokenEnv: "A-B"}}, false, []string{"writeBack.credentials.tokenEnv"}},
		{"all wrong", WriteBack{Mode: ModePush, Branch: "-", Credentials: Credentials{Username: "a:b"}}, true, []string{"writeBack.mode", "writeBack.branch", "writeBack.credentials.username"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.w.Validate(tc.protected)
			var got []string
			for _, e := range unjoin(err) {
				var fe *FieldError
				if !errors.As(e, &fe) {
					t.Fatalf("Validate: %v is not a *FieldError", e)
				}
				got = append(got, fe.Field)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Validate(%+v, protected %t) fields = %v, want %v (%v)", tc.w, tc.protected, got, tc.want, err)
			}
		})
	}
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestBranchFor(t *testing.T) {
	for _, tc := range []struct {
		w      WriteBack
		ref    string
		want   string
		wantOK bool
	}{
		{WriteBack{}, "main", "main", true},
		{WriteBack{Branch: "deploy"}, "v1.0.0", "deploy", true},
		{WriteBack{}, "7d1c4e9a2b3f60158c0ad1e2b4c6f8a9e0d3b5c7", "", false},
		{WriteBack{}, "HEAD", "", false},
	} {
		got, err := tc.w.BranchFor(tc.ref)
		if got != tc.want || (err == nil) != tc.wantOK {
			t.Errorf("BranchFor(%q) = %q, %v; want %q, ok %t", tc.ref, got, err, tc.want, tc.wantOK)
		}
	}
}
