package envconfig

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/hanzoai/deploy-web/internal/capread"
	"github.com/hanzoai/deploy-web/internal/hostlist"
	"github.com/hanzoai/deploy-web/internal/loopback"
	"github.com/hanzoai/deploy-web/internal/strictyaml"
	"github.com/hanzoai/deploy-web/ociregistry"
)

// Config is the environments file given to --config.
type Config struct {
	Environments []Environment `json:"environments"`
	// Notifications is the console's notification allowlist
	// (notifications.go).
	Notifications *Notifications `json:"notifications,omitempty"`

	// Path is the file the config was read from ("" when built in code).
	Path string `json:"-"`
}

// Environment is one deploy target: one cluster, one namespace, one source.
type Environment struct {
	// Name identifies the environment on the command line (--env) and in
	// report paths; a DNS label.
	Name string `json:"name"`
	// Cluster says how to reach the cluster.
	Cluster ClusterRef `json:"cluster"`
	// Namespace is the only namespace a plan or an apply may write.
	Namespace string `json:"namespace"`
	// Protected marks production: apply is always refused.
	Protected bool `json:"protected"`
	// Source is where the manifests come from.
	Source Source `json:"source"`
	// Catalog is the artifact catalog (JSON). With a git source it is a
	// path inside the repository at the same commit; otherwise (or when
	// absolute) a file, relative to the config file's folder.
	Catalog string `json:"catalog"`
	// TemplateJobs lists the suspended template Jobs that may be replaced.
	TemplateJobs TemplateJobs `json:"templateJobs"`
	// HealthChecks are HTTP checks run by the plan and after an apply.
	HealthChecks []HealthCheck `json:"healthChecks"`
	// EnvMirrors names the container environment variables that mirror the
	// image or the commit and must agree with them.
	EnvMirrors EnvMirrors `json:"envMirrors"`
	// Registry tunes the registry digest checks.
	Registry RegistryOptions `json:"registry"`
	// SkeletonPatterns are substrings that mark a placeholder image (in the
	// repository's last segment or the tag); default "skeleton", "placeholder".
	SkeletonPatterns []string `json:"skeletonPatterns"`
	// Limits bound the network steps and the repository read (timeouts,
	// bytes, files); zero fields take the defaults.
	Limits Limits `json:"limits"`
	// WriteBack, when set, lets the console commit a version change (a
	// rollback) to the source's branch, or to a review branch, instead of
	// patching the live App: see package writeback. It needs a git source
	// whose ref is a branch.
	WriteBack *WriteBack `json:"writeBack,omitempty"`
	// AutoSync, when set and enabled, plans the environment when its
	// branch moves and applies a ready plan; never on a protected
	// environment.
	AutoSync *AutoSync `json:"autoSync,omitempty"`
	// Promotion, when set, names the environment this one is promoted
	// from and the soak time (the matrix's column order, promotion.go).
	Promotion *Promotion `json:"promotion,omitempty"`
	// Metrics, when set, is the Prometheus API the promotion checks of
	// the environments promoted from this one run against (metrics.go).
	Metrics *Metrics `json:"metrics,omitempty"`
	// ConsoleNamespace is deploy-web's own namespace in the environment's
	// cluster, where its freezes and audit records live: the command
	// line reads the freezes there before a write (apply, prune,
	// restore) and writes its records there (ConsoleNS). Unset:
	// DefaultConsoleNamespace. "" says no deploy-web runs in that
	// cluster: no freezes are read and no records written (said on
	// stderr). A caller's --audit-namespace cannot change it.
	ConsoleNamespace *string `json:"consoleNamespace,omitempty"`

	// ConfigDir is the config file's folder: it resolves relative paths
	// (Resolve). ParseConfig sets it; never read from the file.
	ConfigDir string `json:"-"`
	// keepOut are files no local source may be read with (Config.KeepOut).
	keepOut []string
}

// ClusterRef names a kubeconfig context, or the in-cluster configuration.
type ClusterRef struct {
	// Context is a context of the kubeconfig.
	Context string `json:"context"`
	// Kubeconfig is the kubeconfig file (relative to the config file); when
	// empty, --kubeconfig, then $KUBECONFIG, then ~/.kube/config.
	Kubeconfig string `json:"kubeconfig"`
	// InCluster uses the pod's service account instead of a context.
	InCluster bool `json:"inCluster"`
}

// Source is a kustomize folder, in a git repository or on disk.
type Source struct {
	// Repo is a git URL (file://, https://, ssh:// or user@host:path).
	// Empty means Path is a local folder.
	Repo string `json:"repo"`
	// Ref is a branch, a tag or a commit of Repo.
	Ref string `json:"ref"`
	// Path is the kustomize folder: inside Repo, or a local folder relative
	// to the config file.
	Path string `json:"path"`
	// TokenEnv names an environment variable holding an HTTPS token (never
	// stored or printed).
	TokenEnv string `json:"tokenEnv"`
	// Helm, when set, makes Path a Helm chart folder, rendered in-process
	// (deployplan/helmrender) instead of a kustomize folder.
	Helm *HelmSource `json:"helm"`
	// KubeVersion is the Kubernetes version Helm charts are rendered for
	// when the plan has no cluster to ask ("v1.31.0"); ""
	// is helmrender.DefaultKubeVersion.
	KubeVersion string `json:"kubeVersion"`
}

// HelmSource renders an environment from a chart folder (source.path), as
// `helm template RELEASE PATH -f FILE... ` with the environment's namespace.
type HelmSource struct {
	// ReleaseName is .Release.Name.
	ReleaseName string `json:"releaseName"`
	// ValueFiles are applied over the chart's values.yaml in order, each
	// a path relative to the chart folder that stays in the repository.
	ValueFiles []string `json:"valueFiles"`
	// Values are applied last.
	Values map[string]any `json:"values"`
}

// TemplateJobs is the replacement allowlist.
type TemplateJobs struct {
	// Allowlist holds Job names (in the environment's namespace).
	Allowlist []string `json:"allowlist"`
}

// HealthCheck is an HTTP GET of URL that passes only on a 2xx answer: a
// redirect fails and is not followed (healthCheckPasses). A failed
// Required check is a blocker of the plan and fails an apply.
type HealthCheck struct {
	Name     string `json:"name"`
	URL      string `json:"url"`
	Required bool   `json:"required"`
}

// EnvMirrors names environment variables checked against the workload.
type EnvMirrors struct {
	// Image variables must equal the container's image.
	Image []string `json:"image"`
	// Commit variables must equal the catalog commit.
	Commit []string `json:"commit"`
}

// RegistryOptions tunes the digest checks.
type RegistryOptions struct {
	// Hosts are the registries the digest checks may contact, each a host
	// or host:port matched exactly against the registry of an image
	// reference (Docker Hub's images are index.docker.io; "docker.io" is
	// the same host). An image of any other registry is a
	// registry-not-listed blocker and gets no connection; with no hosts,
	// no registry is contacted (a warning names the ones that would have
	// been). Every request goes only to a listed host, a registry's
	// redirects and token service included (listedTransport).
	// Operator-trusted: the catalog and the manifests never add one.
	Hosts []string `json:"hosts"`
	// Insecure allows plain HTTP to a registry that is not on loopback.
	Insecure bool `json:"insecure"`
	// Skip disables the HEAD requests (registryStatus "not-checked").
	Skip bool `json:"skip"`
}

// Lists reports whether host (an image reference's registry, as
// go-containerregistry names it, or a request's URL host) is one of Hosts:
// host and port exactly ("reg.example" does not list "reg.example:5000"),
// ASCII letter case aside; a host with any other character is never
// listed.
func (o RegistryOptions) Lists(host string) bool {
	host = ociregistry.CanonicalHost(host)
	if host == "" {
		return false
	}
	for _, h := range o.Hosts {
		if ociregistry.CanonicalHost(h) == host {
			return true
		}
	}
	return false
}

// checkRegistryHost says what is wrong with an entry of registry.hosts:
// it must be a host (a DNS name, an IPv4 address or a bracketed IPv6
// address) with an optional port, and nothing else (hostlist.Check).
func checkRegistryHost(h string) error {
	if strings.Contains(h, "@") && !strings.Contains(h, "://") {
		return fmt.Errorf("%q has userinfo: list the host alone; credentials come from the docker config's auths", h)
	}
	return hostlist.Check(h)
}

// ConfigError is a configuration mistake; Field is a path such as
// "environments[1].source.ref" ("" for the file as a whole) and Line its
// line in the file (0 when the mistake is about a value, found after
// decoding).
type ConfigError struct {
	Field   string
	Line    int
	Message string
}

// Public is the mistake in words a user may read: the line, the field and
// the message, nothing of the server.
func (e *ConfigError) Public() string { return e.Error() }

func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// StrictErrors turns strictyaml's mistakes into *ConfigErrors (so the
// command line exits 2 on them and the console shows them).
func StrictErrors(err error) error {
	var es strictyaml.Errors
	if !errors.As(err, &es) {
		return &ConfigError{Message: err.Error()}
	}
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = &ConfigError{Field: e.Path, Line: e.Line, Message: e.Message}
	}
	return errors.Join(out...)
}

// maxConfigBytes caps the environments file: the size of a ConfigMap or
// Secret it is mounted from.
const maxConfigBytes = 1 << 20

// LoadConfig reads and validates an environments file. The error lists every
// wrong field, each as a *ConfigError joined with errors.Join.
func LoadConfig(path string) (*Config, error) {
	data, err := capread.File(path, maxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("envconfig: read config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("envconfig: %w", err)
	}
	cfg, err := ParseConfig(data, filepath.Dir(abs))
	if err != nil {
		return nil, fmt.Errorf("envconfig: config %s: %w", path, err)
	}
	cfg.Path = abs
	return cfg, nil
}

// ParseConfig parses and validates a config; dir resolves relative paths.
// Keys are exact (strictyaml): another spelling of a key, a key written
// twice, an unknown key, an anchor or an alias is a *ConfigError naming
// its line and path.
func ParseConfig(data []byte, dir string) (*Config, error) {
	var cfg Config
	if err := strictyaml.Unmarshal(data, &cfg, strictyaml.Options{}); err != nil {
		return nil, StrictErrors(err)
	}
	for i := range cfg.Environments {
		cfg.Environments[i].ConfigDir = dir
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// DefaultConsoleNamespace is deploy-web's namespace in an environment's
// cluster when the environment names none (Environment.ConsoleNamespace).
const DefaultConsoleNamespace = "deploy-web"

// ConsoleNS is deploy-web's namespace in e's cluster: ConsoleNamespace,
// DefaultConsoleNamespace when unset ("" when the config says none runs
// there).
func (e *Environment) ConsoleNS() string {
	if e.ConsoleNamespace == nil {
		return DefaultConsoleNamespace
	}
	return *e.ConsoleNamespace
}

var envNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// kubeVersionRE is a Kubernetes version as charts are rendered for it.
var kubeVersionRE = regexp.MustCompile(`^v?1\.[0-9]{1,3}(\.[0-9]{1,4})?$`)

// Validate checks every field and returns all mistakes at once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, &ConfigError{Field: field, Message: fmt.Sprintf(format, a...)})
	}
	if len(c.Environments) == 0 {
		bad("environments", "at least one environment is required")
	}
	c.Notifications.validate(bad)
	seen := map[string]int{}
	for i, e := range c.Environments {
		p := fmt.Sprintf("environments[%d]", i)
		if e.Name != "" {
			p = fmt.Sprintf("environments[%d] (%s)", i, e.Name)
		}
		switch {
		case e.Name == "":
			bad(p+".name", "required")
		case !envNameRE.MatchString(e.Name):
			bad(p+".name", "%q must be lower-case letters, digits and '-' (a DNS label)", e.Name)
		default:
			if j, dup := seen[e.Name]; dup {
				bad(p+".name", "%q is also the name of environments[%d]", e.Name, j)
			}
			seen[e.Name] = i
		}
		switch {
		case e.Cluster.InCluster && (e.Cluster.Context != "" || e.Cluster.Kubeconfig != ""):
			bad(p+".cluster", "inCluster: true excludes context and kubeconfig")
		case !e.Cluster.InCluster && e.Cluster.Context == "":
			bad(p+".cluster.context", "required (or cluster.inCluster: true)")
		}
		if e.Namespace == "" {
			bad(p+".namespace", "required")
		} else if msgs := validation.IsDNS1123Label(e.Namespace); len(msgs) > 0 {
			bad(p+".namespace", "%q is not a valid namespace: %s", e.Namespace, strings.Join(msgs, "; "))
		}
		if ns := e.ConsoleNS(); e.ConsoleNamespace != nil && ns != "" {
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				bad(p+".consoleNamespace", "%q is not a valid namespace: %s", ns, strings.Join(msgs, "; "))
			} else if ns == e.Namespace {
				bad(p+".consoleNamespace", "%q is the environment's own namespace: deploy-web's freezes and records live apart from what it deploys", ns)
			}
		}
		if e.Source.Path == "" {
			bad(p+".source.path", "required (the kustomize folder, or the chart folder with source.helm)")
		} else if e.Source.Repo != "" && (filepath.IsAbs(e.Source.Path) || escapes(e.Source.Path)) {
			bad(p+".source.path", "%q must be a relative path inside the repository", e.Source.Path)
		}
		if h := e.Source.Helm; h != nil {
			if msgs := validation.IsDNS1123Label(h.ReleaseName); len(msgs) > 0 {
				bad(p+".source.helm.releaseName", "%q is not a valid release name: %s", h.ReleaseName, strings.Join(msgs, "; "))
			}
			for j, f := range h.ValueFiles {
				if f == "" || filepath.IsAbs(f) || strings.HasPrefix(f, `\`) {
					bad(fmt.Sprintf("%s.source.helm.valueFiles[%d]", p, j), "%q must be a path relative to the chart folder", f)
				}
			}
		}
		if v := e.Source.KubeVersion; v != "" && !kubeVersionRE.MatchString(v) {
			bad(p+".source.kubeVersion", "%q is not a Kubernetes version (v1.31.0)", v)
		}
		if e.Source.Repo != "" {
			if e.Source.Ref == "" {
				bad(p+".source.ref", "required with source.repo (a branch, tag or commit)")
			}
			if err := checkRepoURL(e.Source.Repo); err != nil {
				bad(p+".source.repo", "%v", err)
			}
			if e.Source.TokenEnv != "" {
				if err := CheckTokenEnv(e.Source.TokenEnv, e.Source.Repo); err != nil {
					bad(p+".source.tokenEnv", "%v", err)
				}
			}
		} else {
			if e.Source.Path != "" && e.ConfigDir != "" {
				if dir := e.Resolve(e.Source.Path); Within(dir, e.ConfigDir) {
					bad(p+".source.path", "%s holds the config file's folder %s (which may hold the kubeconfig, the OIDC client secret and the session keys): keep the manifests in a folder of their own, beside or below the config file", dir, e.ConfigDir)
				}
			}
			if e.Source.Ref != "" {
				bad(p+".source.ref", "only meaningful with source.repo")
			}
			if e.Source.TokenEnv != "" {
				bad(p+".source.tokenEnv", "only meaningful with source.repo")
			}
		}
		if e.Catalog == "" {
			bad(p+".catalog", "required (the artifact catalog JSON file)")
		} else if e.Source.Repo != "" && !filepath.IsAbs(e.Catalog) && escapes(e.Catalog) {
			bad(p+".catalog", "%q leaves the repository", e.Catalog)
		}
		jobs := map[string]bool{}
		for k, name := range e.TemplateJobs.Allowlist {
			f := fmt.Sprintf("%s.templateJobs.allowlist[%d]", p, k)
			if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
				bad(f, "%q is not a valid Job name: %s", name, strings.Join(msgs, "; "))
			}
			if jobs[name] {
				bad(f, "%q is listed twice", name)
			}
			jobs[name] = true
		}
		checks := map[string]bool{}
		for k, hc := range e.HealthChecks {
			f := fmt.Sprintf("%s.healthChecks[%d]", p, k)
			if hc.Name == "" {
				bad(f+".name", "required")
			} else if checks[hc.Name] {
				bad(f+".name", "%q is used twice", hc.Name)
			}
			checks[hc.Name] = true
			u, err := url.Parse(hc.URL)
			if hc.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad(f+".url", "%q must be an absolute http or https URL", hc.URL)
			}
		}
		for k, v := range append(append([]string{}, e.EnvMirrors.Image...), e.EnvMirrors.Commit...) {
			if v == "" {
				bad(fmt.Sprintf("%s.envMirrors", p), "entry %d is empty", k)
			}
		}
		registryHosts := map[string]int{}
		for k, h := range e.Registry.Hosts {
			f := fmt.Sprintf("%s.registry.hosts[%d]", p, k)
			if err := checkRegistryHost(h); err != nil {
				bad(f, "%v", err)
				continue
			}
			if j, dup := registryHosts[ociregistry.CanonicalHost(h)]; dup {
				bad(f, "%q is the same host as registry.hosts[%d]", h, j)
				continue
			}
			registryHosts[ociregistry.CanonicalHost(h)] = k
		}
		if e.Registry.Skip && len(e.Registry.Hosts) > 0 {
			bad(p+".registry.hosts", "excludes registry.skip: true (skip contacts no registry; drop one of them)")
		}
		e.Limits.validate(p+".limits", bad)
		e.validateGitOps(p, bad)
		e.validateMetrics(p, bad)
		for k, s := range e.SkeletonPatterns {
			if strings.TrimSpace(s) == "" {
				bad(fmt.Sprintf("%s.skeletonPatterns[%d]", p, k), "empty pattern")
			}
		}
	}
	c.validatePromotion(bad)
	c.validateCheckSources(bad)
	return errors.Join(errs...)
}

// Within reports whether p is dir or inside it (both cleaned, absolute).
func Within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

func escapes(p string) bool {
	c := filepath.Clean(p)
	return c == ".." || strings.HasPrefix(c, "../")
}

func checkRepoURL(s string) error {
	if strings.HasPrefix(s, "/") {
		return nil // a local path
	}
	if i := strings.Index(s, "://"); i > 0 {
		switch s[:i] {
		case "file", "https", "ssh":
			return nil
		case "http", "git":
			// Neither encrypts nor authenticates the server: anyone on
			// the path could serve other manifests. Only a server on this
			// machine (a test's, a local mirror's) may be reached so.
			u, err := url.Parse(s)
			if err != nil || u.Host == "" {
				return fmt.Errorf("%q is not a valid URL", RedactURL(s))
			}
			if !loopback.Host(u.Hostname()) {
				return fmt.Errorf("%q: plain %s:// is only for a repository on this machine (localhost, 127.0.0.1, [::1]): use https:// or ssh://", RedactURL(s), s[:i])
			}
			return nil
		}
		return fmt.Errorf("%q: unsupported scheme %q (file, https, ssh)", RedactURL(s), RedactURL(s[:i]))
	}
	if strings.Contains(s, "@") && strings.Contains(s, ":") {
		return nil // scp-like ssh: git@host:org/repo.git
	}
	return fmt.Errorf("%q is not a git URL (file://, https://, ssh:// or user@host:path)", RedactURL(s))
}

// TokenEnvPrefix starts the name of every variable source.tokenEnv may
// name: DEPLOY_WEB_GIT_TOKEN, or DEPLOY_WEB_GIT_TOKEN_<SUFFIX>. A config
// file cannot then make deploy-web send another of its variables (the
// OIDC client secret's, $DEPLOY_WEB_OIDC_CLIENT_SECRET) to a git server.
const TokenEnvPrefix = "DEPLOY_WEB_GIT_TOKEN"

var tokenEnvRE = regexp.MustCompile(`^` + TokenEnvPrefix + `(_[A-Z0-9]+)*$`)

// checkTokenEnv says why a source may not send the token of variable name
// to repo: the name must be TokenEnvPrefix's, and the repository https
// (the token is a password: never over plain http, and meaningless to
// ssh, git:// and files).
func CheckTokenEnv(name, repo string) error {
	if !tokenEnvRE.MatchString(name) {
		return fmt.Errorf("%q: name a variable %s or %s_<NAME> (upper-case letters, digits, '_'), set to the token only", name, TokenEnvPrefix, TokenEnvPrefix)
	}
	if !strings.HasPrefix(repo, "https://") {
		return fmt.Errorf("only with an https:// source.repo: a token is never sent over plain http, and ssh, git:// and file sources take none")
	}
	return nil
}

// CheckNamespace refuses every environment whose namespace is ns,
// deploy-web's own (why says where ns came from): its service account,
// session keys and plan history live there, and an apply could replace
// them. The errors are *ConfigErrors naming the environments.
func (c *Config) CheckNamespace(ns, why string) error {
	var errs []error
	for i, e := range c.Environments {
		if ns != "" && e.Namespace == ns {
			errs = append(errs, &ConfigError{Field: fmt.Sprintf("environments[%d] (%s).namespace", i, e.Name),
				Message: fmt.Sprintf("%q is deploy-web's own namespace (%s), where its service account, session keys and history live: deploy the environment to a namespace of its own", ns, why)})
		}
	}
	return errors.Join(errs...)
}

// inClusterSecrets is where a pod's service account token is mounted.
const inClusterSecrets = "/var/run/secrets"

// KeepOut names more files that hold secrets (serve's OIDC client secret
// and session keys, the clusters file and its kubeconfigs): a local
// source whose folder, or the git work tree holding it, holds one of
// them is refused when it is rendered, as kustomize could read it into
// the rendered objects.
func (c *Config) KeepOut(paths ...string) {
	for i := range c.Environments {
		for _, p := range paths {
			if p != "" {
				c.Environments[i].keepOut = append(c.Environments[i].keepOut, p)
			}
		}
	}
}

// localSecrets are the files a local source may not be read with: the
// environment's kubeconfig, the pod's service account token and
// KeepOut's files.
func (e *Environment) LocalSecrets() []string {
	out := []string{inClusterSecrets}
	if e.Cluster.Kubeconfig != "" {
		out = append(out, e.Resolve(e.Cluster.Kubeconfig))
	}
	return append(out, e.keepOut...)
}

// Env returns the environment named name.
func (c *Config) Env(name string) (*Environment, error) {
	var names []string
	for i := range c.Environments {
		if c.Environments[i].Name == name {
			return &c.Environments[i], nil
		}
		names = append(names, c.Environments[i].Name)
	}
	return nil, fmt.Errorf("envconfig: no environment %q in the config (have: %s)", name, strings.Join(names, ", "))
}

// resolve makes a path relative to the config file's folder absolute.
func (e *Environment) Resolve(p string) string {
	if filepath.IsAbs(p) || e.ConfigDir == "" {
		return p
	}
	return filepath.Join(e.ConfigDir, p)
}

// Allowlisted reports whether a Job name is in the template Job allowlist.
func (e *Environment) Allowlisted(job string) bool {
	for _, n := range e.TemplateJobs.Allowlist {
		if n == job {
			return true
		}
	}
	return false
}

func (e *Environment) SkeletonPatternsOrDefault() []string {
	if len(e.SkeletonPatterns) > 0 {
		return e.SkeletonPatterns
	}
	return []string{"skeleton", "placeholder"}
}

// CatalogInRepo is the path of e's catalog inside its source repository
// (slash-separated, clean), and false when the catalog is not read from
// the repository: no git source, or an absolute path on disk.
func (e *Environment) CatalogInRepo() (string, bool) {
	if e.Source.Repo == "" || e.Catalog == "" || filepath.IsAbs(e.Catalog) {
		return "", false
	}
	return path.Clean(filepath.ToSlash(e.Catalog)), true
}
