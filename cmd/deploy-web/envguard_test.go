package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
)

// TestGuardEnvironmentsNamespaces: an environment in deploy-web's own
// namespace, or in its plan history's, stops serve's start-up, naming it.
func TestGuardEnvironmentsNamespaces(t *testing.T) {
	load := func(ns string) *envconfig.Config {
		cfg, err := envconfig.ParseConfig([]byte(`environments:
  - {name: dev, cluster: {context: c}, namespace: dev, source: {repo: "https://g.example/m.git", ref: main, path: k}, catalog: c.json}
  - {name: evil, cluster: {context: c}, namespace: `+ns+`, source: {repo: "https://g.example/m.git", ref: main, path: k}, catalog: c.json}
`), "/etc/deploy")
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	tests := []struct {
		name, envNS, history, own, ownFrom string
		want                               string // "" = accepted
	}{
		{"own namespace, the history's too", "deploy-web", "deploy-web", "deploy-web", "$POD_NAMESPACE",
			`environments[1] (evil).namespace: "deploy-web" is deploy-web's own namespace (the plan history's, --history-namespace)`},
		{"own namespace, history elsewhere", "deploy-web", "dw-history", "deploy-web", "$POD_NAMESPACE",
			`environments[1] (evil).namespace: "deploy-web" is deploy-web's own namespace (from $POD_NAMESPACE)`},
		{"the history's namespace", "dw-history", "dw-history", "deploy-web", "$POD_NAMESPACE",
			`"dw-history" is deploy-web's own namespace (the plan history's`},
		{"outside a cluster", "deploy-web", "dw-history", "", "", ""},
		{"another namespace", "staging", "deploy-web", "deploy-web", "$POD_NAMESPACE", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := guardEnvironments(load(tt.envNS), tt.history, tt.own, tt.ownFrom, nil)
			if tt.want == "" {
				if err != nil {
					t.Errorf("guardEnvironments = %v, want nil", err)
				}
				return
			}
			var ce *envconfig.ConfigError
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "--environments: ") || !errors.As(err, &ce) {
				t.Errorf("guardEnvironments = %v\nwant a *ConfigError containing %q", err, tt.want)
			}
		})
	}
}

// TestGuardEnvironmentsKeepsServeSecretsOut: a local source whose folder
// holds serve's OIDC client secret file is refused at render.
func TestGuardEnvironmentsKeepsServeSecretsOut(t *testing.T) {
	dir := t.TempDir()
	for p, c := range map[string]string{
		"keys/oidc-client-secret": "client-s3cret",
		"keys/kustomization.yaml": "secretGenerator: [{name: leak, files: [f=oidc-client-secret]}]\n",
		"m/kustomization.yaml":    "resources: [../keys]\n",
		"catalog.json":            `{"commit": "1111111", "services": []}`,
		"environments.yaml":       "environments: [{name: dev, cluster: {context: c}, namespace: dev, source: {path: m}, catalog: catalog.json}]\n",
		"elsewhere/session-keys":  "k",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := envconfig.LoadConfig(filepath.Join(dir, "environments.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{filepath.Join(dir, "keys/oidc-client-secret"), filepath.Join(dir, "elsewhere/session-keys"), ""}
	if err := guardEnvironments(cfg, "deploy-web", "", "", secrets); err != nil {
		t.Fatal(err)
	}
	r, err := deployplan.Render(context.Background(), &cfg.Environments[0])
	if err == nil || !strings.Contains(err.Error(), "oidc-client-secret, a file deploy-web keeps secret") {
		t.Errorf("Render = %v, %v; want the source refused for the client secret", r, err)
	}
}

func TestOwnNamespace(t *testing.T) {
	noFile := func(string) ([]byte, error) { return nil, fs.ErrNotExist }
	saFile := func(string) ([]byte, error) { return []byte("sa-ns\n"), nil }
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "POD_NAMESPACE" {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name           string
		getenv         func(string) string
		read           func(string) ([]byte, error)
		wantNS, wantAt string
	}{
		{"POD_NAMESPACE", env("pod-ns"), saFile, "pod-ns", "$POD_NAMESPACE"},
		{"service account file", env(""), saFile, "sa-ns", inClusterNamespaceFile},
		{"outside a cluster", env(""), noFile, "", ""},
		{"not a namespace", env("Bad_NS"), noFile, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, from := ownNamespace(tt.getenv, tt.read)
			if ns != tt.wantNS || from != tt.wantAt {
				t.Errorf("ownNamespace = %q, %q; want %q, %q", ns, from, tt.wantNS, tt.wantAt)
			}
		})
	}
}
