package envconfig

import (
	"slices"
	"strings"
	"testing"
)

// inboxKeyYAML declares one key, as the demo does.
const inboxKeyYAML = `{secretRef: {name: deploy-web-notify, key: demo-inbox}, provider: webhook, urlPrefix: "http://127.0.0.1:9000/hook", scope: {namespaces: [storefront]}}`

// TestParseConfigNotifications: notifications.hosts is read strictly;
// each bad or repeated host is refused with its path, the good ones
// around it are not reported; no key means no hosts.
func TestParseConfigNotifications(t *testing.T) {
	const env = "environments: [{name: a, cluster: {context: c}, namespace: a, source: {path: x}, catalog: c.json}]\n"
	tests := []struct {
		name      string
		yaml      string
		wantHosts []string
		wantErr   []string // each in the error; nil: no error
	}{
		{"absent", env, nil, nil},
		{"listed", env + "notifications: {hosts: [hooks.slack.com, \"127.0.0.1:9000\", \"[::1]:8443\", localhost]}\n",
			[]string{"hooks.slack.com", "127.0.0.1:9000", "[::1]:8443", "localhost"}, nil},
		{"empty list", env + "notifications: {hosts: []}\n", []string{}, nil},
		{"scheme", env + "notifications: {hosts: [hooks.slack.com, \"https://hooks.example\"]}\n", nil,
			[]string{`notifications.hosts[1]: "https://hooks.example" has a scheme`}},
		{"path", env + "notifications: {hosts: [\"hooks.example/services\"]}\n", nil,
			[]string{`notifications.hosts[0]: "hooks.example/services" has a path`}},
		{"duplicate in another case", env + "notifications: {hosts: [hooks.example, HOOKS.example]}\n", nil,
			[]string{`notifications.hosts[1]: "HOOKS.example" is the same host as notifications.hosts[0]`}},
		{"unknown key", env + "notifications: {hosts: [a.example], host: [b.example]}\n", nil,
			[]string{"notifications.host: unknown key"}},
		{"other spelling", env + "notifications: {Hosts: [a.example]}\n", nil,
			[]string{`notifications.Hosts: unknown key: keys are case-sensitive, did you mean "hosts"?`}},
		{"key declared", env + "notifications: {hosts: [\"127.0.0.1:9000\"], keys: [" + inboxKeyYAML + "]}\n", []string{"127.0.0.1:9000"}, nil},
		{"key: unknown field", env + "notifications: {hosts: [\"127.0.0.1:9000\"], keys: [{secretRef: {name: n, key: k}, provider: webhook, urlPrefix: \"http://127.0.0.1:9000/hook\", url: x}]}\n", nil,
			[]string{"notifications.keys[0].url: unknown key"}},
		{"key: unknown scope field", env + "notifications: {hosts: [\"127.0.0.1:9000\"], keys: [{secretRef: {name: n, key: k}, provider: webhook, urlPrefix: \"http://127.0.0.1:9000/hook\", scope: {app: [web]}}]}\n", nil,
			[]string{"notifications.keys[0].scope.app: unknown key"}},
		{"key: bad fields", env + "notifications: {hosts: [\"127.0.0.1:9000\"], keys: [{secretRef: {name: N!, key: k}, provider: pager, urlPrefix: \"https://other.example/hook\", scope: {apps: [\"w?b\"]}}]}\n", nil,
			[]string{`notifications.keys[0].secretRef.name: "N!" is not a Secret name`, `notifications.keys[0].provider: "pager" is not a provider`,
				`notifications.keys[0].urlPrefix: host "other.example" is not in notifications.hosts`, `notifications.keys[0].scope.apps[0]: selector "w?b"`}},
		{"key: missing fields", env + "notifications: {hosts: [\"127.0.0.1:9000\"], keys: [{secretRef: {name: n, key: k}}]}\n", nil,
			[]string{`notifications.keys[0].provider: "" is not a provider`, `notifications.keys[0].urlPrefix: empty`}},
		{"key: declared twice", env + "notifications: {hosts: [\"127.0.0.1:9000\"], keys: [" + inboxKeyYAML + ", " + inboxKeyYAML + "]}\n", nil,
			[]string{"notifications.keys[1].secretRef: Secret deploy-web-notify key demo-inbox is also declared by notifications.keys[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tt.yaml), "/etc/deploy")
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("ParseConfig = %v, want nil", err)
				}
				if got := cfg.NotificationHosts(); !slices.Equal(got, tt.wantHosts) {
					t.Errorf("NotificationHosts() = %q, want %q", got, tt.wantHosts)
				}
				if keys := cfg.NotificationKeys(); strings.Contains(tt.yaml, "keys:") != (len(keys) == 1) ||
					len(keys) == 1 && (keys[0].SecretRef.Key != "demo-inbox" || keys[0].Provider != "webhook" || keys[0].URLPrefix != "http://127.0.0.1:9000/hook" ||
						!slices.Equal(keys[0].Scope.Namespaces, []string{"storefront"})) {
					t.Errorf("NotificationKeys() = %+v, want the declared key alone", keys)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseConfig = nil, want an error containing %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseConfig = %v\nwant an error containing %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != len(tt.wantErr) {
				t.Errorf("ParseConfig = %v: %d errors, want %d (the good hosts are not reported)", err, n, len(tt.wantErr))
			}
		})
	}
}

// TestParseConfigConsoleNamespace: an environment's consoleNamespace is
// deploy-web unless set, "" when the config says none runs there, and a
// namespace name apart from the environment's own.
func TestParseConfigConsoleNamespace(t *testing.T) {
	const head = "environments: [{name: a, cluster: {context: c}, namespace: a, source: {path: x}, catalog: c.json"
	tests := []struct {
		name, yaml string
		want       string
		wantErr    string
	}{
		{"unset", head + "}]\n", DefaultConsoleNamespace, ""},
		{"set", head + ", consoleNamespace: ops-console}]\n", "ops-console", ""},
		{"none", head + ", consoleNamespace: \"\"}]\n", "", ""},
		{"not a name", head + ", consoleNamespace: Ops_Console}]\n", "", `environments[0] (a).consoleNamespace: "Ops_Console" is not a valid namespace`},
		{"the environment's own", head + ", consoleNamespace: a}]\n", "", `environments[0] (a).consoleNamespace: "a" is the environment's own namespace`},
		{"other spelling", head + ", consolenamespace: x}]\n", "", "unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tt.yaml), "/etc/deploy")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseConfig = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Environments[0].ConsoleNS(); got != tt.want {
				t.Errorf("ConsoleNS() = %q, want %q", got, tt.want)
			}
		})
	}
}
