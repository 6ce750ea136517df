package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/fleetset"
	"github.com/hanzoai/deploy-web/handlers"
	"github.com/hanzoai/deploy-web/internal/buildtags"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/metrics"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/timeline"
)

// serveConfig is the dashboard's configuration.
type serveConfig struct {
	Addr string
	// Clusters is the clusters file ("": the one cluster of the flags
	// below, named ClusterName).
	Clusters    string
	ClusterName string
	Kubeconfig  string
	Context     string
	Namespaces  string
	AppResource string
	// OperatorManagers are the App operator's field managers (drift).
	OperatorManagers string

	IssuerURL        string
	ClientID         string
	ClientSecretFile string
	RedirectURL      string
	AdminClaim       string
	AdminValue       string
	// Roles is the roles file ("" = superadmins only); GroupsClaim the
	// ID-token claim of the person's groups.
	Roles           string
	GroupsClaim     string
	SessionKeyFile  string
	SessionTTL      time.Duration
	SessionRecheck  time.Duration
	LocalLogout     bool
	InsecureCookies bool
	// Scopes are the OAuth 2.0 scopes requested at login, comma-separated
	// ("" = auth's default: openid,profile,email,groups).
	Scopes string
	// TokenAuthMethod is the client authentication at the token endpoint
	// ("": from discovery).
	TokenAuthMethod string

	LogFormat string
	PerPage   int

	// MetricsAddr serves /metrics on its own listener ("" turns it off).
	MetricsAddr string
	// ShutdownGrace bounds a graceful shutdown (0: defaultShutdownGrace).
	ShutdownGrace time.Duration

	// Environments is the plan/apply config file ("" turns the
	// environment pages off).
	Environments string
	// HistoryNamespace holds the plan history ConfigMaps.
	HistoryNamespace string
	// HistoryKeep bounds the history per environment.
	HistoryKeep int
	// ReportsDir receives the console's reports and pre-apply captures.
	ReportsDir string
	// AuditKeep and AuditMaxAge are the audit retention per environment.
	AuditKeep   int
	AuditMaxAge time.Duration
	// AuditKeyFile holds the audit records' signing key (mounted from the
	// Secret audit.KeySecretName); empty reads that Secret through the API.
	AuditKeyFile string
}

// defaultShutdownGrace is how long a stop lets requests, plans and
// applies under way finish (the base Deployment's
// terminationGracePeriodSeconds covers the preStop sleep, this and
// drainRecordReserve).
const defaultShutdownGrace = 60 * time.Second

func (c *serveConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", ":8080", "listen address of the dashboard (HTTP; put TLS in front of it)")
	fs.StringVar(&c.Clusters, "clusters", "", "clusters file (YAML, see docs/many-clusters.md): every cluster the console spans, each with its kubeconfig or inCluster, namespaces and App resource; replaces --kubeconfig, --context, --namespaces and --app-resource")
	fs.StringVar(&c.ClusterName, "cluster-name", "", "name of the one cluster of --kubeconfig/--context (a DNS label; default: in-cluster, or the context's name)")
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster config, else $KUBECONFIG)")
	fs.StringVar(&c.Context, "context", "", "kubeconfig context (default: current)")
	fs.StringVar(&c.Namespaces, "namespaces", "", "comma-separated platform namespaces: the only ones read or written (required)")
	fs.StringVar(&c.AppResource, "app-resource", "apps.v1.hanzo.ai", "the App custom resource, as resource.version.group")
	fs.StringVar(&c.OperatorManagers, "operator-managers", objrules.DefaultOperatorManager, "comma-separated field managers of the App operator: fields any other manager set are shown as drift")
	fs.StringVar(&c.IssuerURL, "oidc-issuer", "", "OIDC issuer URL (required)")
	fs.StringVar(&c.ClientID, "oidc-client-id", "deploy-web", "OIDC client id registered at the identity provider")
	fs.StringVar(&c.ClientSecretFile, "oidc-client-secret-file", "", "file holding the OIDC client secret (or $DEPLOY_WEB_OIDC_CLIENT_SECRET)")
	fs.StringVar(&c.RedirectURL, "oidc-redirect-url", "", "this dashboard's OIDC callback URL, e.g. https://deploy.example.com/auth/callback (required)")
	fs.StringVar(&c.AdminClaim, "admin-claim", auth.DefaultAdminClaim, "ID-token claim that makes a superadmin")
	fs.StringVar(&c.AdminValue, "admin-value", auth.DefaultAdminValue, "value of --admin-claim that makes a superadmin (a list claim must contain it; \"true\" matches a boolean claim)")
	fs.StringVar(&c.Roles, "roles", "", "roles file mapping IdP groups or emails to viewer, deployer, approver and superadmin, each optionally scoped (see docs/roles.md); without it only superadmins (--admin-claim) may use deploy-web")
	fs.StringVar(&c.GroupsClaim, "groups-claim", auth.DefaultGroupsClaim, "ID-token claim holding the person's groups, which --roles matches")
	fs.StringVar(&c.SessionKeyFile, "session-key-file", "", "file with the session hash and encryption keys (or $DEPLOY_WEB_SESSION_KEYS); see docs/configuration.md")
	fs.DurationVar(&c.SessionTTL, "session-ttl", auth.DefaultSessionTTL, "session lifetime")
	fs.DurationVar(&c.SessionRecheck, "session-recheck", auth.DefaultSessionRecheck, "how often a session re-checks the user with the identity provider through the refresh token (a user removed from the admin group or disabled is signed out at the next check)")
	fs.BoolVar(&c.LocalLogout, "local-logout", false, "keep logout local: do not send the browser to the identity provider's end_session_endpoint")
	fs.BoolVar(&c.InsecureCookies, "insecure-cookies", false, "allow cookies over plain HTTP (only for a loopback redirect URL)")
	fs.StringVar(&c.Scopes, "oidc-scopes", "openid,profile,email,groups,offline_access", "comma-separated scopes requested at login (offline_access gets the refresh token sessions re-check with; drop groups for an IdP that refuses it, e.g. Google)")
	fs.StringVar(&c.TokenAuthMethod, "oidc-token-auth-method", "", "how deploy-web authenticates at the IdP's token endpoint: "+auth.TokenAuthBasic+" or "+auth.TokenAuthPost+" (default: from discovery's token_endpoint_auth_methods_supported, "+auth.TokenAuthBasic+" when listed or none is)")
	fs.StringVar(&c.LogFormat, "log-format", "json", "log format: json or text")
	fs.IntVar(&c.PerPage, "page-size", 100, "rows per page of the application list")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", ":9090", "listen address of the Prometheus /metrics endpoint, separate from --addr and unauthenticated (keep it off the public ingress); empty turns it off")
	fs.StringVar(&c.Environments, "environments", "", "plan/apply environments config (YAML, see docs/plan-and-apply.md); enables the Environments pages")
	fs.StringVar(&c.HistoryNamespace, "history-namespace", "", "namespace of the plan-history ConfigMaps (default: deploy-web's own, from $POD_NAMESPACE or the in-cluster service account; required outside a cluster)")
	fs.IntVar(&c.HistoryKeep, "history-keep", 20, "plans and applies kept per environment")
	fs.IntVar(&c.AuditKeep, "audit-keep", audit.DefaultKeep, "audit records kept per environment (and per App outside environments), newest first; -1 keeps all")
	fs.DurationVar(&c.AuditMaxAge, "audit-max-age", audit.DefaultMaxAge, "audit records older than this are trimmed; -1ns keeps them all")
	fs.StringVar(&c.AuditKeyFile, "audit-key-file", "", "file holding the key that signs the audit records (at least 32 bytes; the base Deployment mounts it from the Secret "+audit.KeySecretName+"); empty reads that Secret in deploy-web's namespace through the API, creating it once if it may")
	fs.StringVar(&c.ReportsDir, "reports-dir", deployplan.DefaultReportsDir(), "folder for the console's reports and pre-apply captures (created 0700; one owned by another user or writable by every user is refused)")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", defaultShutdownGrace, "on SIGTERM: stop accepting requests and runs, tell log streams to reconnect, and give in-flight requests and plans or applies under way this long to finish (an apply still going then stops before its next write, recorded as interrupted); then the Leases are released (keep terminationGracePeriodSeconds at least the preStop sleep + this + 25s)")
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			return err
		}
		return fmt.Errorf("%w (run with -h for the flags)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return nil
}

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.register(fs)
	if err := flagsFromEnv(fs, envPrefix, os.LookupEnv); err != nil {
		return err
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogFormat, slog.LevelInfo)
	var rc *rest.Config
	if cfg.Clusters == "" {
		var name string
		var err error
		rc, name, err = restConfigNamed(cfg.Kubeconfig, cfg.Context)
		if err != nil {
			return err
		}
		if cfg.ClusterName == "" {
			cfg.ClusterName = name
		}
	}
	secret, err := readSecret(cfg.ClientSecretFile, "DEPLOY_WEB_OIDC_CLIENT_SECRET", "--oidc-client-secret-file")
	if err != nil {
		return err
	}
	keys, err := sessionKeys(cfg.SessionKeyFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, rc, secret, keys, ln, log, func() {
		fmt.Fprintf(stdout, "deploy-web: listening on %s\n", ln.Addr())
	})
}

// restConfigNamed is restConfig and the default name of that cluster:
// in-cluster, or the context's name (fleetset.DefaultName).
func restConfigNamed(kubeconfig, context string) (*rest.Config, string, error) {
	if kubeconfig == "" && context == "" {
		if rc, err := rest.InClusterConfig(); err == nil {
			return rc, fleetset.DefaultName(true, ""), nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	if context == "" {
		if raw, err := cc.RawConfig(); err == nil {
			context = raw.CurrentContext
		}
	}
	return rc, fleetset.DefaultName(false, context), nil
}

// The dashboard's request budget, set on purpose rather than left to
// client-go's default (5/s, burst 10): at start every informer (13 kinds,
// Events and Apps per platform namespace) sends a list or watch, which at
// 5/s held /readyz back by seconds. The dashboard only reads, apart from
// rollbacks and sync requests; the same budget as the reference operator's
// (operator.ClientQPS, ClientBurst).
const (
	dashboardQPS   = 50
	dashboardBurst = 100
)

// dashboardClientConfig returns a copy of rc with the dashboard's user
// agent and request budget.
func dashboardClientConfig(rc *rest.Config) *rest.Config {
	c := rest.CopyConfig(rc)
	c.UserAgent = "deploy-web"
	c.QPS, c.Burst, c.RateLimiter = dashboardQPS, dashboardBurst, nil
	return c
}

func readSecret(path, env, flagName string) (string, error) {
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("%s: %w", flagName, err)
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("%s: %s is empty", flagName, path)
	}
	if s := os.Getenv(env); s != "" {
		return s, nil
	}
	return "", fmt.Errorf("no OIDC client secret: set %s or $%s", flagName, env)
}

func sessionKeys(path string) (auth.SessionKeys, error) {
	if path == "" {
		v := os.Getenv("DEPLOY_WEB_SESSION_KEYS")
		if v == "" {
			return auth.SessionKeys{}, errors.New("no session keys: set --session-key-file or $DEPLOY_WEB_SESSION_KEYS (two lines: hash key and encryption key, hex or base64)")
		}
		f, err := os.CreateTemp("", "deploy-web-keys-")
		if err != nil {
			return auth.SessionKeys{}, err
		}
		defer os.Remove(f.Name())
		if _, err := f.WriteString(v); err != nil {
			f.Close()
			return auth.SessionKeys{}, err
		}
		f.Close()
		path = f.Name()
	}
	return auth.LoadSessionKeys(path)
}

// serve runs the dashboard on ln until ctx ends, then shuts down gracefully.
// Without cfg.Clusters it reads the one cluster of rc (named
// cfg.ClusterName); with it, every cluster of the file (rc is unused).
func serve(ctx context.Context, cfg serveConfig, rc *rest.Config, clientSecret string, keys auth.SessionKeys, ln net.Listener, log *slog.Logger, ready func()) error {
	defer ln.Close()
	warnGoPlugin(log, debug.ReadBuildInfo)
	policy, err := loadRoles(cfg)
	if err != nil {
		return err
	}
	targets, err := clusterTargets(cfg, rc)
	if err != nil {
		return err
	}
	// The caches outlive the HTTP server, so in-flight requests finish on
	// them during a graceful shutdown.
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRun()
	// The Lease holders run until the runs drained (stopServing), then
	// release their Leases before serve returns.
	leaseCtx, stopLeases := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLeases()
	var held leaseHolders
	var runs drainer
	members, err := startClusters(ctx, runCtx, targets, splitList(cfg.OperatorManagers), log)
	if err != nil {
		return err
	}
	home := members[homeCluster(targets)]
	cs := home.cs
	var informers []metrics.ClusterInformers
	for _, m := range members {
		informers = append(informers, metrics.ClusterInformers{Cluster: m.cfg.Name, Source: m.view,
			Reachable: func() bool { return m.view.Status().Reachable }})
	}
	met := metrics.New(informers...)

	site, err := handlers.NewSite(log)
	if err != nil {
		return err
	}
	a, err := auth.New(ctx, auth.Config{
		IssuerURL: cfg.IssuerURL, ClientID: cfg.ClientID, ClientSecret: clientSecret, RedirectURL: cfg.RedirectURL,
		AdminClaim: cfg.AdminClaim, AdminValue: cfg.AdminValue, SessionKeys: keys, SessionTTL: cfg.SessionTTL,
		SessionRecheck: cfg.SessionRecheck, LocalLogout: cfg.LocalLogout,
		InsecureCookies: cfg.InsecureCookies, Scopes: splitList(cfg.Scopes), TokenAuthMethod: cfg.TokenAuthMethod,
		GroupsClaim: cfg.GroupsClaim, Roles: policy,
	}, log, site)
	if err != nil {
		return err
	}
	hopts := handlers.Options{PerPage: cfg.PerPage, ShutdownCtx: ctx, Metrics: met, Roles: policy}
	// The audit trail lives next to the plan history, in deploy-web's own
	// namespace of the home cluster. Without one (outside a cluster, no
	// --history-namespace, no environments) nothing is recorded, said
	// once here; with environments the namespace is required below.
	var store *audit.Store
	if auditNS, err := historyNamespace(cfg.HistoryNamespace, os.Getenv, os.ReadFile); err != nil {
		log.Warn("no audit trail: rollbacks, syncs and applies are not recorded", "err", err)
	} else {
		key, err := readAuditKey(cfg.AuditKeyFile)
		if err != nil {
			return err
		}
		refusals := audit.NewLimiter(audit.RefusalLimit{}, nil)
		store, err = startAudit(runCtx, leaseCtx, &held, home.rc, cs, auditNS, replicaIdentity(os.Getenv, os.Hostname, os.Getpid()),
			audit.Policy{Keep: cfg.AuditKeep, MaxAge: cfg.AuditMaxAge}, key, refusals, log)
		if err != nil {
			return err
		}
		hopts.Audit, hopts.RecordReader, hopts.Refusals = store, store, refusals
	}
	// The one feed of the audit records (audit/recordfeed): the timeline,
	// the notifications and the freeze watcher subscribe below; it runs
	// once they have.
	var records *recordfeed.Feed
	if store != nil {
		records = recordfeed.New(store, recordfeed.Options{Log: log.With("component", "recordfeed")})
	}
	// The timeline (docs/timeline.md) lives in the same namespace: every
	// replica feeds it, the holder of its Lease writes it. tl is nil
	// without that namespace; its live entries are tl.Subscribe.
	var tl *timeline.Store
	if tlNS, err := historyNamespace(cfg.HistoryNamespace, os.Getenv, os.ReadFile); err != nil {
		log.Warn("no timeline: App timelines and the activity feed are off, and promotions fail their soak gate (no recorded history)", "err", err)
	} else if tl, err = startTimeline(runCtx, leaseCtx, &held, home.cs, tlNS, replicaIdentity(os.Getenv, os.Hostname, os.Getpid()), members, records, log); err != nil {
		return err
	}
	if tl != nil {
		hopts.Timeline = tl
	}
	freezes := freezeGate(cfg, cs.CoreV1(), stateKeys(store), log)
	hopts.Freezes = handlerFreezes(freezes)
	for _, m := range members {
		rel := release.New(m.dyn, m.cs.CoreV1(), m.cfg.GVR(), m.view.HistoryImages, log).InCluster(m.cfg.Name)
		c := handlers.Cluster{Name: m.cfg.Name, View: m.view,
			Release: met.Releaser(rel), Operations: rel, Logs: kubeview.NewLogs(m.view, m.cs.CoreV1())}
		if m.appKind != "" {
			c.AppGroup, c.AppKind = m.cfg.GVR().Group, m.appKind
		}
		hopts.Clusters = append(hopts.Clusters, c)
	}
	// The notification allowlist is a key of the environments file.
	var notifyHosts []string
	var notifyKeys []envconfig.NotificationKey
	if cfg.Environments != "" {
		envCfg, err := envconfig.LoadConfig(cfg.Environments)
		if err != nil {
			return fmt.Errorf("--environments: %w", err)
		}
		notifyHosts, notifyKeys = envCfg.NotificationHosts(), envCfg.NotificationKeys()
		historyNS, err := historyNamespace(cfg.HistoryNamespace, os.Getenv, os.ReadFile)
		if err != nil {
			return err
		}
		own, ownFrom := ownNamespace(os.Getenv, os.ReadFile)
		secrets := []string{cfg.ClientSecretFile, cfg.SessionKeyFile, cfg.Clusters, cfg.Kubeconfig, cfg.AuditKeyFile}
		for _, t := range targets {
			secrets = append(secrets, t.cfg.Kubeconfig)
		}
		if err := guardEnvironments(envCfg, historyNS, own, ownFrom, secrets); err != nil {
			return err
		}
		if err := deployplan.PrepareReportsDir(cfg.ReportsDir); err != nil {
			return fmt.Errorf("--reports-dir: %w", err)
		}
		hopts.EnvClusters = envClusters(envCfg, targets)
		envConfig := envRestConfigs(envCfg, targets, cfg.Kubeconfig)
		for i := range envCfg.Environments {
			e := &envCfg.Environments[i]
			if erc, err := envConfig(e); err != nil {
				log.Warn("environment's cluster not resolved: its plans and applies will fail", "environment", e.Name, "err", err)
			} else {
				log.Info("environment", "environment", e.Name, "cluster", hopts.EnvClusters[e.Name], "host", erc.Host)
			}
		}
		index := envsource.New(envCfg, log, time.Minute)
		go index.Run(ctx)
		hopts.Desired = index
		hopts.EnvClusterConfig = envConfig
		// The two-person rule's promotion requests, beside the history.
		if keys := stateKeys(store); keys != nil {
			hopts.Promotions = promotion.NewStore(cs.CoreV1(), historyNS, keys)
		}
		runner := envrun.New(envCfg, log, envrun.Options{
			// Each environment's own cluster; the history stays in home's.
			ClusterConfig: envConfig, ReportsDir: cfg.ReportsDir, Store: planstore.New(cs.CoreV1(), historyNS, cfg.HistoryKeep),
			Index:   index,
			Freezes: envrunFreezes(freezes), Cluster: func(env string) string { return hopts.EnvClusters[env] },
			Record: func(ctx context.Context, rec audit.Record) {
				if store == nil {
					return
				}
				if e, err := envCfg.Env(rec.Environment); err == nil {
					rec.Cluster = envCluster(e, hopts.EnvClusters)
				}
				appendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				_, _ = store.Append(appendCtx, rec)
			},
			Count: func(action, outcome string) {
				if action == envrun.ActionApply {
					met.Operation(metrics.OpApply, outcome)
				}
			},
		})
		hopts.Environments = runner
		runs = runner
		if err := startAutoSync(leaseCtx, &held, &hopts, autoSyncDeps{cfg: envCfg, index: index, runner: runner, store: runner.Store(),
			envConfig: envConfig, kube: cs, namespace: historyNS, keys: stateKeys(store), identity: replicaIdentity(os.Getenv, os.Hostname, os.Getpid()),
			appendRecord: auditAppender(store), records: recordLister(store), clusters: hopts.EnvClusters, log: log}); err != nil {
			return err
		}
	}
	ntf, err := serveNotifications(cfg, cs, notifyHosts, notifyKeys, log)
	if err != nil {
		return err
	}
	if ntf != nil {
		hopts.Notify = ntf
	}
	srv := handlers.New(site, a, hopts)
	if ntf != nil {
		feeds := notifyFeeds{environmentOf: srv.EnvironmentOf, target: srv.SubscriptionTarget, cluster: home.cfg.Name, base: consoleBase(cfg.RedirectURL)}
		feeds.records = records
		// degraded, recovered and drift come from the timeline's entries
		// (serve_timeline.go); without a timeline they are not sent, said
		// at start.
		feeds.timeline = tl
		ntf.start(leaseCtx, &held, feeds, log)
	}
	// Scheduled freeze windows on record, under the sender's Lease.
	if ntf != nil {
		startFreezeWatch(leaseCtx, freezes, store, records, ntf.Sender.Leading, log)
	}
	if records != nil {
		go records.Run(leaseCtx)
	}
	hs := &http.Server{
		Handler: srv.Handler(),
		// Headers in 10s, a whole request (bodies are at most 64 KiB) in
		// 30s; no WriteTimeout, as event streams set a deadline per write.
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 2)
	if cfg.MetricsAddr != "" {
		ms, err := serveMetrics(cfg.MetricsAddr, met.Handler(log), log, errc)
		if err != nil {
			return err
		}
		defer ms.Close()
	}
	go func() { errc <- hs.Serve(ln) }()
	go releaseSyncPeak(ctx, func() bool {
		for _, m := range members {
			if !m.view.Synced() {
				return false
			}
		}
		return true
	}, log)
	for _, t := range targets {
		log.Info("cluster", "cluster", t.cfg.Name, "namespaces", t.cfg.Namespaces, "app_resource", t.cfg.AppResource)
	}
	log.Info("serving", "addr", ln.Addr().String(), "clusters", len(targets))
	if ready != nil {
		ready()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return stopServing(hs, cfg.ShutdownGrace, runs, stopLeases, &held, log)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// warnGoPlugin logs, at start, that the running binary was built without
// buildtags.NoGoPlugin (a plain `go build`: it links Go's plugin loader,
// which the Makefile's and the Dockerfile's builds leave out). read is
// runtime/debug.ReadBuildInfo.
func warnGoPlugin(log *slog.Logger, read func() (*debug.BuildInfo, bool)) {
	if w := buildtags.GoPluginWarning(read); w != "" {
		log.Warn(w)
	}
}
