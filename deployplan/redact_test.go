package deployplan

import (
	"context"
	"github.com/hanzoai/deploy-web/envconfig"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRedactURL: hostile repository addresses leave no credential byte in
// what is shown. Each secret is spelled with "S3" so the test can also
// look for any piece of it.
func TestRedactURL(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		// Passwords holding the characters that end a URL's parts.
		{"https://user:S3p@ss@github.com/a/b.git", "https://github.com/a/b.git"},
		{"https://user:S3pa/ss@host/r.git", "https://host/r.git"},
		{"https://user:12/S3ss@host/r.git", "https://host/r.git"},
		{"https://S3user:12#S3ss@host/r.git", "https://host/r.git"},
		{"https://S3user:12?S3ss@host/r.git", "https://host/r.git"},
		{"https://user:S3a:b:c@host:8443/r.git", "https://host:8443/r.git"},
		{"https://user:S3@@@host/r.git", "https://host/r.git"},
		{"https://S3tok%40en@host/r", "https://host/r"},
		{"https://us%zzer:S3pw@host/r.git", "https://host/r.git"},
		{"https://x-access-token:ghp_S3cret@github.com/acme/m.git", "https://github.com/acme/m.git"},
		{"HTTPS://u:S3p@host/r", "HTTPS://host/r"},
		{"ssh://git:S3pw@example.com:2222/acme/m.git", "ssh://example.com:2222/acme/m.git"},
		// Tokens in the query or fragment.
		{"https://user@github.com/acme/m.git?token=S3abc#frag", "https://github.com/acme/m.git"},
		{"https://github.com/a/b.git?access_token=S3cret", "https://github.com/a/b.git"},
		{"https://github.com/a/b.git#S3cret", "https://github.com/a/b.git"},
		// Without a scheme: the scp-like form, whatever its user holds.
		{"git@github.com:a/b.git", "github.com:a/b.git"},
		{"ghp_S3token@github.com:a/b.git", "github.com:a/b.git"},
		{"user:S3p@ss@github.com:a/b.git", "github.com:a/b.git"},
		// A "scheme" that is no scheme carries no credential out.
		{"us:er:S3p://w@host:r.git", "host:r.git"},
		{"S3 x://w@host/r", "host/r"},
		// Nothing to redact.
		{"https://github.com/a/b.git", "https://github.com/a/b.git"},
		{"https://host:8443/a", "https://host:8443/a"},
		{"file:///tmp/repo", "file:///tmp/repo"},
		{"/srv/repo", "/srv/repo"},
		{"", ""},
	}
	for _, tt := range tests {
		got := envconfig.RedactURL(tt.in)
		if got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(got, "S3") {
			t.Errorf("RedactURL(%q) = %q shows a piece of the secret", tt.in, got)
		}
	}
}

// TestConfigErrorsRedactTheRepository: a repository address the config
// refuses is named in the error without its credentials.
func TestConfigErrorsRedactTheRepository(t *testing.T) {
	for _, repo := range []string{"htps://deploy:S3cret@git.example.com/m.git", "deploy S3cret@git.example.com/m.git"} {
		_, err := envconfig.ParseConfig([]byte("environments:\n  - {name: e, cluster: {context: c}, namespace: e, source: {repo: \""+repo+"\", ref: main, path: k}, catalog: c.json}\n"), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "source.repo") || strings.Contains(err.Error(), "S3") {
			t.Errorf("ParseConfig(repo %q) error = %v, want one naming source.repo without the secret", repo, err)
		}
	}
}

// TestFetchErrorsRedactTheRepository: an address go-git cannot parse, or
// a server that fails, leaves no credential in the fetch's error (net/url
// quotes the whole address in its parse error; go-git names the user).
func TestFetchErrorsRedactTheRepository(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, repo := range []string{
		"http://user:S3 cret@" + host + "/r.git",
		"http://S3user:S3cr@t@" + host + "/r.git",
		"http://S3ghp_token@" + host + "/r.git",
	} {
		_, cleanup, err := fetchRemote(context.Background(), envconfig.Source{Repo: repo, Ref: "main", Path: "k"}, envconfig.Limits{})
		cleanup()
		if err == nil || !strings.Contains(err.Error(), "deployplan: fetch http://"+host+"/r.git") || strings.Contains(err.Error(), "S3") {
			t.Errorf("fetchRemote(%q) error = %v, want one naming http://%s/r.git and no credential", repo, err, host)
		}
	}
}
