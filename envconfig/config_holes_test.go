package envconfig

import (
	"errors"
	"strings"
	"testing"
)

// TestSourceRepoSchemes: http:// and git:// neither encrypt nor
// authenticate the server, so they reach only this machine.
func TestSourceRepoSchemes(t *testing.T) {
	tests := []struct {
		repo string
		want string // "" = accepted
	}{
		{"https://git.example/m.git", ""},
		{"ssh://git@git.example/m.git", ""},
		{"git@git.example:acme/m.git", ""},
		{"file:///srv/m", ""},
		{"/srv/m", ""},
		{"http://127.0.0.1:8080/m.git", ""},
		{"http://localhost/m.git", ""},
		{"http://[::1]:9418/m.git", ""},
		{"git://127.0.0.1/m.git", ""},
		{"http://git.example/m.git", `plain http:// is only for a repository on this machine (localhost, 127.0.0.1, [::1]): use https:// or ssh://`},
		{"git://git.example/m.git", `plain git:// is only for a repository on this machine`},
		{"http://127.0.0.1.nip.io/m.git", `plain http:// is only for a repository on this machine`},
		{"http://10.0.0.1/m.git", `plain http://`},
		{"http://user:pw@git.example/m.git", `"http://git.example/m.git": plain http://`},
		{"ftp://git.example/m.git", `unsupported scheme "ftp"`},
	}
	for _, tt := range tests {
		t.Run(tt.repo, func(t *testing.T) {
			doc := `environments: [{name: a, cluster: {context: c}, namespace: a, source: {repo: "` + tt.repo + `", ref: main, path: k}, catalog: c.json}]`
			_, err := ParseConfig([]byte(doc), "/etc/deploy")
			if tt.want == "" {
				if err != nil {
					t.Errorf("ParseConfig(repo %s) = %v, want nil", tt.repo, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "environments[0] (a).source.repo: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseConfig(repo %s) = %v\nwant source.repo refused with %q", tt.repo, err, tt.want)
			}
			if strings.Contains(tt.repo, "pw@") && strings.Contains(err.Error(), "pw@") {
				t.Errorf("ParseConfig error %q shows the password", err)
			}
		})
	}
}

// TestSourceTokenEnv: tokenEnv names only a DEPLOY_WEB_GIT_TOKEN variable
// (never the OIDC client secret's), and only for an https:// repository.
func TestSourceTokenEnv(t *testing.T) {
	tests := []struct {
		tokenEnv, repo string
		want           string // "" = accepted
	}{
		{"DEPLOY_WEB_GIT_TOKEN", "https://git.example/m.git", ""},
		{"DEPLOY_WEB_GIT_TOKEN_ACME", "https://git.example/m.git", ""},
		{"DEPLOY_WEB_GIT_TOKEN_ACME_2", "https://git.example/m.git", ""},
		{"DEPLOY_WEB_OIDC_CLIENT_SECRET", "https://git.example/m.git", `"DEPLOY_WEB_OIDC_CLIENT_SECRET": name a variable DEPLOY_WEB_GIT_TOKEN or DEPLOY_WEB_GIT_TOKEN_<NAME>`},
		{"DEPLOY_WEB_SESSION_KEYS", "https://git.example/m.git", "name a variable DEPLOY_WEB_GIT_TOKEN"},
		{"GIT_TOKEN", "https://git.example/m.git", "name a variable DEPLOY_WEB_GIT_TOKEN"},
		{"DEPLOY_WEB_GIT_TOKENS", "https://git.example/m.git", "name a variable DEPLOY_WEB_GIT_TOKEN"},
		{"DEPLOY_WEB_GIT_TOKEN_", "https://git.example/m.git", "name a variable DEPLOY_WEB_GIT_TOKEN"},
		{"deploy_web_git_token", "https://git.example/m.git", "name a variable DEPLOY_WEB_GIT_TOKEN"},
		{"DEPLOY_WEB_GIT_TOKEN", "http://127.0.0.1:8080/m.git", "only with an https:// source.repo: a token is never sent over plain http"},
		{"DEPLOY_WEB_GIT_TOKEN", "ssh://git@git.example/m.git", "only with an https:// source.repo"},
		{"DEPLOY_WEB_GIT_TOKEN", "file:///srv/m", "only with an https:// source.repo"},
	}
	for _, tt := range tests {
		t.Run(tt.tokenEnv+" "+tt.repo, func(t *testing.T) {
			doc := `environments: [{name: a, cluster: {context: c}, namespace: a, source: {repo: "` + tt.repo + `", ref: main, path: k, tokenEnv: "` + tt.tokenEnv + `"}, catalog: c.json}]`
			_, err := ParseConfig([]byte(doc), "/etc/deploy")
			if tt.want == "" {
				if err != nil {
					t.Errorf("ParseConfig(tokenEnv %s) = %v, want nil", tt.tokenEnv, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "environments[0] (a).source.tokenEnv: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseConfig(tokenEnv %s, repo %s) = %v\nwant source.tokenEnv refused with %q", tt.tokenEnv, tt.repo, err, tt.want)
			}
		})
	}
}

// TestEnvironmentNamespaceNotOwn: no environment may deploy to
// deploy-web's own namespace.
func TestEnvironmentNamespaceNotOwn(t *testing.T) {
	cfg, err := ParseConfig([]byte(`environments:
  - {name: dev, cluster: {context: c}, namespace: dev, source: {repo: "https://g.example/m.git", ref: main, path: k}, catalog: c.json}
  - {name: sneaky, cluster: {context: c}, namespace: deploy-web, source: {repo: "https://g.example/m.git", ref: main, path: k}, catalog: c.json}
`), "/etc/deploy")
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.CheckNamespace("deploy-web", "$POD_NAMESPACE")
	want := `environments[1] (sneaky).namespace: "deploy-web" is deploy-web's own namespace ($POD_NAMESPACE)`
	var ce *ConfigError
	if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &ce) || strings.Contains(err.Error(), "(dev)") {
		t.Errorf("CheckNamespace(deploy-web) = %v, want a *ConfigError containing %q and nothing of dev", err, want)
	}
	for _, ns := range []string{"", "other"} {
		if err := cfg.CheckNamespace(ns, "test"); err != nil {
			t.Errorf("CheckNamespace(%q) = %v, want nil", ns, err)
		}
	}
}
