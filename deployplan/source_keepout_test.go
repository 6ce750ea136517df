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

	"github.com/hanzoai/deploy-web/envconfig"
)

// TestFetchNeverSendsTokenOverHTTP: an environment built without
// envconfig.ParseConfig still never sends a token over plain http, nor one of
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
		src := envconfig.Source{Repo: srv.URL + "/m.git", Ref: "main", Path: "k", TokenEnv: tokenEnv}
		_, cleanup, err := fetchRemote(context.Background(), src, envconfig.Limits{})
		cleanup()
		if err == nil || !strings.Contains(err.Error(), "source.tokenEnv") {
			t.Errorf("fetchRemote(http, tokenEnv %s) = %v, want it refused naming source.tokenEnv", tokenEnv, err)
		}
	}
	if asked.Load() != 0 || withAuth.Load() != 0 {
		t.Errorf("the http server was asked %d times, %d with credentials; want never", asked.Load(), withAuth.Load())
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
			env := &envconfig.Environment{Name: "dev", Namespace: "dev", Cluster: envconfig.ClusterRef{Context: "c", Kubeconfig: tt.l.kubeconfig},
				Source: envconfig.Source{Path: tt.l.path}, Catalog: filepath.Join(dir, "catalog.json"), ConfigDir: cfgDir}
			if tt.l.keepOut != "" {
				cfg := &envconfig.Config{Environments: []envconfig.Environment{*env}}
				cfg.KeepOut(filepath.Join(dir, tt.l.keepOut))
				env = &cfg.Environments[0]
			}
			r, err := Render(context.Background(), env)
			var ce *envconfig.ConfigError
			if !errors.As(err, &ce) || ce.Field != "source.path" || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Render = %v, %v; want a source.path *envconfig.ConfigError containing %q", r, err, tt.want)
			}
		})
	}

	// Without the secret under its root, the same layout renders.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"m/kustomization.yaml": "configMapGenerator: [{name: ok, literals: [a=b]}]\n",
		"catalog.json":         `{"commit": "` + commitA + `", "services": []}`,
	})
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Cluster: envconfig.ClusterRef{Context: "c", Kubeconfig: "/elsewhere/kubeconfig"},
		Source: envconfig.Source{Path: "m"}, Catalog: "catalog.json", ConfigDir: dir}
	if r, err := Render(context.Background(), env); err != nil || len(r.Objects) != 1 {
		t.Errorf("Render(no secret under the root) = %v, %v; want 1 object", r, err)
	}

	// The lexical check at load: a source folder holding the config folder.
	for _, p := range []string{".", "..", "/", "../.."} {
		_, err := envconfig.ParseConfig([]byte(`environments: [{name: a, cluster: {context: c}, namespace: a, source: {path: "`+p+`"}, catalog: c.json}]`), "/etc/deploy-web")
		if err == nil || !strings.Contains(err.Error(), "environments[0] (a).source.path: ") || !strings.Contains(err.Error(), "holds the config file's folder /etc/deploy-web") {
			t.Errorf("envconfig.ParseConfig(source.path %q) = %v, want source.path refused", p, err)
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
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Cluster: envconfig.ClusterRef{Context: "c", Kubeconfig: "~/.kube/dev.yaml"},
		Source: envconfig.Source{Path: "m"}, Catalog: "catalog.json", ConfigDir: dir}
	if r, err := Render(context.Background(), env); err != nil || len(r.Objects) != 1 {
		t.Errorf("Render = %v, %v; want 1 object", r, err)
	}
}
