package deployplan

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// TestFetchNeverSendsTokenOverHTTP: an environment built without
// ParseConfig still never sends a token over plain http, nor one of
// another variable.
func TestFetchNeverSendsTokenOverHTTP(t *testing.T) {
	var asked, withAuth atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.Header.Get("Authorization") != "" {
			withAuth.Add(1)
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	t.Setenv("DEPLOY_WEB_GIT_TOKEN", "tok-s3cret")
	t.Setenv("DEPLOY_WEB_OIDC_CLIENT_SECRET", "client-s3cret")
	for _, tokenEnv := range []string{"DEPLOY_WEB_GIT_TOKEN", "DEPLOY_WEB_OIDC_CLIENT_SECRET"} {
		src := Source{Repo: srv.URL + "/m.git", Ref: "main", Path: "k", TokenEnv: tokenEnv}
		_, cleanup, err := fetchRemote(context.Background(), src, Limits{})
		cleanup()
		if err == nil || !strings.Contains(err.Error(), "source.tokenEnv") {
			t.Errorf("fetchRemote(http, tokenEnv %s) = %v, want it refused naming source.tokenEnv", tokenEnv, err)
		}
	}
	if asked.Load() != 0 || withAuth.Load() != 0 {
		t.Errorf("the http server was asked %d times, %d with credentials; want never", asked.Load(), withAuth.Load())
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

// TestLocalSourceKeepsSecretsOut is the hostile input: a kustomization
// of a local source that generates a Secret from a file beside the
// config (its kubeconfig, the OIDC client secret). Rendered, it would be
// in the plan's diff and applied to the namespace; it must be refused.
func TestLocalSourceKeepsSecretsOut(t *testing.T) {
	const secret = "token-s3cret-value"
	// kustomize loads a generator's files only from its kustomization's
	// folder and below, and refuses a base holding the folder it came
	// from; so the leak is a kustomization beside the secret, reached as a
	// base from the environment's folder.
	leak := func(file string) string {
		return "secretGenerator: [{name: leak, files: [f=" + file + "]}]\n"
	}
	type layout struct {
		files      map[string]string
		git        bool   // commit dir as a git work tree
		cfgDir     string // relative to dir
		kubeconfig string // cluster.kubeconfig, relative to cfgDir
		path       string // source.path
		keepOut    string // a file given to KeepOut, relative to dir
	}
	tests := []struct {
		name string
		l    layout
		want string
	}{
		{"the kubeconfig in a folder below the config", layout{
			files:  map[string]string{"creds/kubeconfig": secret, "creds/kustomization.yaml": leak("kubeconfig"), "m/kustomization.yaml": "resources: [../creds]\n"},
			cfgDir: ".", kubeconfig: "creds/kubeconfig", path: "m",
		}, "a file deploy-web keeps secret"},
		{"the client secret given to KeepOut", layout{
			files:  map[string]string{"keys/oidc-client-secret": secret, "keys/kustomization.yaml": leak("oidc-client-secret"), "m/kustomization.yaml": "resources: [../keys]\n"},
			cfgDir: ".", path: "m", keepOut: "keys/oidc-client-secret",
		}, "a file deploy-web keeps secret"},
		{"a git work tree holding the config folder", layout{
			files: map[string]string{"config/kubeconfig": secret, "config/kustomization.yaml": leak("kubeconfig"), "m/kustomization.yaml": "resources: [../config]\n"},
			git:   true, cfgDir: "config", kubeconfig: "kubeconfig", path: "../m",
		}, "a file deploy-web keeps secret"},
		{"the config folder's parent", layout{
			files:  map[string]string{"config/kubeconfig": secret, "kustomization.yaml": leak("config/kubeconfig")},
			cfgDir: "config", kubeconfig: "kubeconfig", path: "..",
		}, "holds the config file's folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.l.files["catalog.json"] = `{"commit": "` + commitA + `", "services": []}`
			writeFiles(t, dir, tt.l.files)
			if tt.l.git {
				commitAll(t, dir)
			}
			cfgDir := filepath.Join(dir, tt.l.cfgDir)
			env := &Environment{Name: "dev", Namespace: "dev", Cluster: ClusterRef{Context: "c", Kubeconfig: tt.l.kubeconfig},
				Source: Source{Path: tt.l.path}, Catalog: filepath.Join(dir, "catalog.json"), configDir: cfgDir}
			if tt.l.keepOut != "" {
				cfg := &Config{Environments: []Environment{*env}}
				cfg.KeepOut(filepath.Join(dir, tt.l.keepOut))
				env = &cfg.Environments[0]
			}
			r, err := Render(context.Background(), env)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != "source.path" || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Render = %v, %v; want a source.path *ConfigError containing %q", r, err, tt.want)
			}
		})
	}

	// Without the secret under its root, the same layout renders.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"m/kustomization.yaml": "configMapGenerator: [{name: ok, literals: [a=b]}]\n",
		"catalog.json":         `{"commit": "` + commitA + `", "services": []}`,
	})
	env := &Environment{Name: "dev", Namespace: "dev", Cluster: ClusterRef{Context: "c", Kubeconfig: "/elsewhere/kubeconfig"},
		Source: Source{Path: "m"}, Catalog: "catalog.json", configDir: dir}
	if r, err := Render(context.Background(), env); err != nil || len(r.Objects) != 1 {
		t.Errorf("Render(no secret under the root) = %v, %v; want 1 object", r, err)
	}

	// The lexical check at load: a source folder holding the config folder.
	for _, p := range []string{".", "..", "/", "../.."} {
		_, err := ParseConfig([]byte(`environments: [{name: a, cluster: {context: c}, namespace: a, source: {path: "`+p+`"}, catalog: c.json}]`), "/etc/deploy-web")
		if err == nil || !strings.Contains(err.Error(), "environments[0] (a).source.path: ") || !strings.Contains(err.Error(), "holds the config file's folder /etc/deploy-web") {
			t.Errorf("ParseConfig(source.path %q) = %v, want source.path refused", p, err)
		}
	}
}

// TestLocalSourceMissingKubeconfig: a kubeconfig that does not exist under
// the root (README's "~/.kube/dev.yaml", which is not expanded) holds
// nothing to leak, and does not stop the render.
func TestLocalSourceMissingKubeconfig(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"m/kustomization.yaml": "configMapGenerator: [{name: ok, literals: [a=b]}]\n",
		"catalog.json":         `{"commit": "` + commitA + `", "services": []}`,
	})
	env := &Environment{Name: "dev", Namespace: "dev", Cluster: ClusterRef{Context: "c", Kubeconfig: "~/.kube/dev.yaml"},
		Source: Source{Path: "m"}, Catalog: "catalog.json", configDir: dir}
	if r, err := Render(context.Background(), env); err != nil || len(r.Objects) != 1 {
		t.Errorf("Render = %v, %v; want 1 object", r, err)
	}
}
