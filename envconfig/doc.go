// Package envconfig is the environments file given to --config: every
// environment's cluster, namespace, manifest source (a git repository or a
// local folder, kustomize or a Helm chart), artifact catalog, limits and
// registries, and every feature's settings beside it (write-back,
// auto-sync, promotion, notifications). The plan engine (deployplan),
// write-back, auto-sync, promotion, notifications, the workflow service
// (gitops), the handlers and the command line all read it here; no engine
// imports another to learn its own settings.
//
// Parsing is strict (internal/strictyaml): an unknown key, a key in
// another spelling or written twice, an anchor or an alias is a
// *ConfigError naming its line and path, and Validate reports every wrong
// value at once, each a *ConfigError joined with errors.Join.
//
//	cfg, err := envconfig.LoadConfig("deploy.yaml")
//	env, err := cfg.Env("sample-dev")
//
// The package reads the file and the token files it names, and nothing
// else: it opens no connection and imports none of the engines.
package envconfig
