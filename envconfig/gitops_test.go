package envconfig

import (
	"strings"
	"testing"
)

// gitopsEnv is one environment of a config, its source and the lines given
// (writeBack:, autoSync:, protected:) appended.
func gitopsEnv(source, extra string) string {
	return `
environments:
  - name: dev
    cluster: {context: c}
    namespace: dev
    source: ` + source + `
    catalog: catalog.json
` + extra
}

func TestParseConfigGitOps(t *testing.T) {
	const gitSrc = `{repo: "https://git.example/org/manifests.git", ref: main, path: overlays/dev}`
	tests := []struct {
		name, yaml string
		// want are substrings of the error, each naming its field; none
		// means the config is valid.
		want []string
	}{
		{"push and auto-sync", gitopsEnv(gitSrc, `    writeBack: {mode: push, credentials: {tokenEnv: DEPLOY_WEB_GIT_TOKEN_DEV}}
    autoSync: {enabled: true, selfHeal: true, interval: 30s}
`), nil},
		{"branch mode on protected", gitopsEnv(gitSrc, `    protected: true
    writeBack: {mode: branch}
`), nil},
		{"loopback http", gitopsEnv(`{repo: "http://127.0.0.1:9418/repo.git", ref: main, path: dev}`, "    writeBack: {mode: push}\n"), nil},
		{"local source", gitopsEnv(`{path: ./dev}`, "    writeBack: {mode: push}\n"),
			[]string{"environments[0] (dev).writeBack: needs a git source"}},
		{"ssh source", gitopsEnv(`{repo: "ssh://git@git.example/org/m.git", ref: main, path: dev}`, "    writeBack: {mode: push}\n"),
			[]string{"environments[0] (dev).writeBack: source.repo", "https"}},
		{"credentials in the URL", gitopsEnv(`{repo: "https://bob:s3cr3tvalue@git.example/m.git", ref: main, path: dev}`, "    writeBack: {mode: push}\n"),
			[]string{"environments[0] (dev).writeBack: source.repo"}},
		{"commit ref", gitopsEnv(`{repo: "https://git.example/m.git", ref: 0123456789abcdef0123456789abcdef01234567, path: dev}`, "    writeBack: {mode: push}\n"),
			[]string{"environments[0] (dev).writeBack.branch: required: source.ref"}},
		{"commit ref with a branch", gitopsEnv(`{repo: "https://git.example/m.git", ref: 0123456789abcdef0123456789abcdef01234567, path: dev}`, "    writeBack: {mode: push, branch: main}\n"), nil},
		{"push on protected", gitopsEnv(gitSrc, `    protected: true
    writeBack: {mode: push}
`), []string{"environments[0] (dev).writeBack.mode: push is refused on a protected environment"}},
		{"no mode", gitopsEnv(gitSrc, "    writeBack: {}\n"), []string{"environments[0] (dev).writeBack.mode: required"}},
		{"template", gitopsEnv(gitSrc, "    writeBack: {mode: push, author: {name: \"{{.Token}}\"}}\n"), []string{"environments[0] (dev).writeBack.author.name"}},
		{"foreign token variable", gitopsEnv(gitSrc, "    writeBack: {mode: push, credentials: {tokenEnv: DEPLOY_WEB_OIDC_CLIENT_SECRET}}\n"),
			[]string{"environments[0] (dev).writeBack.credentials.tokenEnv: \"DEPLOY_WEB_OIDC_CLIENT_SECRET\""}},
		{"auto-sync on protected", gitopsEnv(gitSrc, `    protected: true
    autoSync: {enabled: true}
`), []string{"environments[0] (dev).autoSync.enabled: refused on a protected environment"}},
		{"interval too short", gitopsEnv(gitSrc, "    autoSync: {enabled: true, interval: 2s}\n"), []string{"environments[0] (dev).autoSync.interval: 2s is below the minimum 10s"}},
		{"negative grace", gitopsEnv(gitSrc, "    autoSync: {enabled: true, selfHeal: true, grace: -1s}\n"), []string{"environments[0] (dev).autoSync.grace"}},
		{"self-heal without auto-sync", gitopsEnv(gitSrc, "    autoSync: {selfHeal: true}\n"), []string{"environments[0] (dev).autoSync.selfHeal: needs autoSync.enabled: true"}},
		{"unknown key", gitopsEnv(gitSrc, "    autoSync: {enabled: true, selfheal: true}\n"), []string{"selfheal"}},
		{"self-heal prune fields", gitopsEnv(gitSrc, "    autoSync: {enabled: true, selfHeal: {prune: fields}}\n"), nil},
		{"self-heal prune none", gitopsEnv(gitSrc, "    autoSync: {enabled: true, selfHeal: {prune: none}}\n"), nil},
		{"self-heal prune unknown", gitopsEnv(gitSrc, "    autoSync: {enabled: true, selfHeal: {prune: all}}\n"), []string{"selfHeal.prune", "want fields or none"}},
		{"self-heal unknown key", gitopsEnv(gitSrc, "    autoSync: {enabled: true, selfHeal: {pruned: fields}}\n"), []string{"selfHeal: unknown key"}},
		{"self-heal object without auto-sync", gitopsEnv(gitSrc, "    autoSync: {selfHeal: {prune: fields}}\n"), []string{"environments[0] (dev).autoSync.selfHeal: needs autoSync.enabled: true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.yaml), "/etc/deploy")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("ParseConfig = %v, want no error", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseConfig = nil, want an error naming %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseConfig = %v, want it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "s3cr3tvalue") {
				t.Errorf("ParseConfig = %v: the error shows the URL's password", err)
			}
		})
	}
}

func TestAutoSyncDefaults(t *testing.T) {
	cfg, err := ParseConfig([]byte(gitopsEnv(`{repo: "https://git.example/m.git", ref: release/1, path: dev}`, "    writeBack: {mode: push}\n    autoSync: {enabled: true}\n")), "/etc/deploy")
	if err != nil {
		t.Fatal(err)
	}
	e := &cfg.Environments[0]
	if got := e.AutoSync.IntervalOrDefault(); got != DefaultAutoSyncInterval {
		t.Errorf("IntervalOrDefault() = %s, want %s", got, DefaultAutoSyncInterval)
	}
	if got := e.AutoSync.GraceOrDefault(); got != DefaultSelfHealGrace {
		t.Errorf("GraceOrDefault() = %s, want %s", got, DefaultSelfHealGrace)
	}
	if got, err := e.WriteBackBranch(); got != "release/1" || err != nil {
		t.Errorf("WriteBackBranch() = %q, %v, want release/1", got, err)
	}
}

func TestSelfHealForms(t *testing.T) {
	for _, tt := range []struct {
		in         string
		on, prunes bool
	}{
		{"true", true, true}, {"false", false, false}, {`{"prune": "fields"}`, true, true}, {`{"prune": "none"}`, true, false},
	} {
		var h SelfHeal
		if err := h.UnmarshalJSON([]byte(tt.in)); err != nil || h.On != tt.on || h.PrunesFields() != tt.prunes {
			t.Errorf("SelfHeal(%s) = %+v (prunes %v), %v; want on %v, prunes %v", tt.in, h, h.PrunesFields(), err, tt.on, tt.prunes)
		}
	}
}
