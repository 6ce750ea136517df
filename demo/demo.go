// Package demo brings up deploy-web's embedded default: a real local control
// plane (devcluster), the App CRD and the reference operator, a seeded fleet
// with a believable spread of states and growing pod logs, a git repository
// of manifests with three deploy environments for it, a promotion chain
// (dev, unprotected, into the platform namespace staging; staging into
// preprod, one version behind; prod, protected), and a real OIDC
// provider (devidp) with demo logins. `deploy-web demo` and the browser tests
// start the dashboard on top of it.
package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/devidp"
	"github.com/hanzoai/deploy-web/operator"
)

// Options configures Start.
type Options struct {
	// BinDir holds the built cluster and IdP binaries (see devcluster).
	BinDir string
	// Dir is the demo's working folder; empty: a new temporary folder,
	// removed by Stop.
	Dir string
	// CallbackURL is the dashboard's OIDC callback, registered with the IdP.
	CallbackURL string
	// Progress receives one line per step (nil: quiet).
	Progress io.Writer
	// Log receives the operator's logs.
	Log *slog.Logger
	// OperatorResync is the reference operator's resync period (its
	// default when zero); the scale benchmark shortens it to measure a
	// resync at rest.
	OperatorResync time.Duration
	// Clusters is how many clusters to start: 1 (0 too) the first alone,
	// 2 also SecondCluster, its own control plane with its own fleet,
	// started beside the first and stopped with it.
	Clusters int
	// ApplyEnvironment, when set, applies environment env of the
	// environments file envFile through the engine (demoapply.Apply, what
	// cmd/deploy-web passes). Start applies dev's first release with it
	// before committing the next, so staging/api has run two releases and
	// rolls back from its page, and prod's first commit beside it (a seed
	// file of prod unprotected: releaseDev). Nil: staging and production
	// start empty (the release commit is made all the same).
	ApplyEnvironment func(ctx context.Context, envFile, env string) error
	// Prometheus, when set, is the Prometheus binary to run
	// (PrometheusBin, what cmd/deploy-web passes): Start refuses to run
	// without it (MissingPrometheusError), starts it on loopback scraping
	// the demo's traffic source (Traffic), names it as every
	// environment's metrics and gives staging's promotion the error-rate
	// check. Empty: no Prometheus, no metrics and no checks.
	Prometheus string
}

// Env is a running demo environment.
type Env struct {
	// Cluster is the first cluster (HomeCluster), with Namespaces.
	Cluster    *devcluster.Cluster
	IdP        *devidp.IdP
	Namespaces []string
	Users      []devidp.User
	Dir        string

	// Members are every cluster, HomeCluster first.
	Members []Member
	// ClustersFile is the clusters file (--clusters) naming Members.
	ClustersFile string

	// EnvironmentsFile is the deploy config (envconfig.LoadConfig) of the
	// demo's three environments, DevEnvironment, StagingEnvironment and
	// ProdEnvironment.
	EnvironmentsFile string
	// ManifestRepo is the working clone of their git repository: a
	// person commits there and pushes to its origin, the bare repository
	// the environments read (file://) and the console pushes to.
	ManifestRepo string
	// HistoryNamespace exists for the console's plan history.
	HistoryNamespace string
	// RolesFile is the roles file (deploy-web serve --roles) that gives
	// the demo logins their roles (see rolesYAML).
	RolesFile string
	// Inbox receives the demo's notifications (notify.go).
	Inbox *Inbox
	// Prometheus is the demo's Prometheus (nil without
	// Options.Prometheus).
	Prometheus *Prometheus

	removeDir bool
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	once      sync.Once
}

// Start brings the environment up; Stop takes it down. On error everything
// started is stopped.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	if opts.CallbackURL == "" {
		return nil, fmt.Errorf("demo: no callback URL")
	}
	if opts.Clusters < 0 || opts.Clusters > 2 {
		return nil, fmt.Errorf("demo: %d clusters: the demo starts 1 or 2", opts.Clusters)
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Prometheus != "" {
		if err := checkPrometheusBin(opts.Prometheus); err != nil {
			return nil, err
		}
	}
	progress := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "demo: "+format+"\n", args...)
		}
	}
	e := &Env{Namespaces: Namespaces(), Dir: opts.Dir}
	if e.Dir == "" {
		if e.Dir, err = os.MkdirTemp("", "deploy-web-demo-"); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
		e.removeDir = true
	}
	runCtx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	defer func() {
		if err != nil {
			e.Stop()
		}
	}()

	apps := fleet()
	logApps := append(fleet(), envLogApps()...)
	logDir := filepath.Join(e.Dir, "pod-logs")
	logs, err := logFiles(logDir, logApps, time.Now())
	if err != nil {
		return nil, err
	}

	// The IdP and the cluster start side by side.
	if err := os.MkdirAll(filepath.Join(e.Dir, "idp"), 0o700); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	idpErr := make(chan error, 1)
	go func() {
		idp, err := devidp.Start(ctx, devidp.Options{
			Dir: filepath.Join(e.Dir, "idp"), RedirectURLs: []string{opts.CallbackURL}, HydraBin: hydraBin(opts.BinDir),
		})
		e.IdP = idp
		idpErr <- err
	}()
	// The second cluster starts beside them, with logs of its own.
	second := secondFleet()
	secondLogDir := filepath.Join(e.Dir, "pod-logs-"+SecondCluster)
	secondErr := make(chan error, 1)
	var secondCluster *devcluster.Cluster
	if opts.Clusters == 2 {
		go func() {
			logs, err := logFiles(secondLogDir, second, time.Now())
			if err == nil {
				secondCluster, err = devcluster.Start(ctx, devcluster.Options{
					BinDir: opts.BinDir, Dir: filepath.Join(e.Dir, "cluster-"+SecondCluster), Logs: logs,
					Progress: prefixWriter{opts.Progress, SecondCluster + ": "},
				})
			}
			secondErr <- err
		}()
	} else {
		secondErr <- nil
	}
	e.Cluster, err = devcluster.Start(ctx, devcluster.Options{
		BinDir: opts.BinDir, Dir: filepath.Join(e.Dir, "cluster"), Logs: logs, Progress: opts.Progress,
	})
	if ierr := <-idpErr; err == nil && ierr != nil {
		err = ierr
	}
	serr := <-secondErr
	e.Members = append(e.Members, Member{Name: HomeCluster, Cluster: e.Cluster, Namespaces: e.Namespaces})
	if secondCluster != nil {
		e.Members = append(e.Members, Member{Name: SecondCluster, Cluster: secondCluster, Namespaces: SecondNamespaces()})
	}
	if err == nil {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	progress("identity provider at %s", e.IdP.IssuerURL)

	cs, dyn, err := e.startMember(ctx, runCtx, e.Members[0], []string{HistoryNamespace}, opts, logDir, logApps)
	if err != nil {
		return nil, err
	}
	var secondCS kubernetes.Interface
	var secondDyn dynamic.Interface
	if len(e.Members) > 1 {
		if secondCS, secondDyn, err = e.startMember(ctx, runCtx, e.Members[1], nil, opts, secondLogDir, second); err != nil {
			return nil, err
		}
	}
	if e.ClustersFile, err = writeClustersFile(e.Dir, e.Members); err != nil {
		return nil, err
	}

	// Prometheus starts now, so the environments file can name it; it is
	// waited for once the fleet is seeded.
	var promURL string
	if opts.Prometheus != "" {
		if e.Prometheus, err = startPrometheus(opts.Prometheus, filepath.Join(e.Dir, prometheusDir), NewTraffic(clusterApps(dyn), nil)); err != nil {
			return nil, err
		}
		promURL = e.Prometheus.URL
	}
	var prodSeed string
	if e.EnvironmentsFile, e.ManifestRepo, prodSeed, err = seedManifests(e.Dir, e.Cluster.Kubeconfig, promURL); err != nil {
		return nil, err
	}
	if _, err := releaseDev(ctx, opts.ApplyEnvironment, e.EnvironmentsFile, prodSeed, e.ManifestRepo); err != nil {
		return nil, err
	}
	if opts.ApplyEnvironment != nil {
		progress("%s: release %s applied, release %s committed (auto-sync applies it; staging/api can then be rolled back to %s)", DevEnvironment, DevPreviousVersion, DevVersion, DevPreviousVersion)
		progress("%s: release %s installed in namespace %s (its first commit; the console never applies prod, which is protected)", ProdEnvironment, ProdVersion, ProductionNamespace)
	}
	e.HistoryNamespace = HistoryNamespace
	if e.Inbox, err = startInbox(runCtx, cs, HistoryNamespace); err != nil {
		return nil, err
	}
	if err := addNotifications(e.EnvironmentsFile, e.Inbox.Host()); err != nil {
		return nil, err
	}
	progress("notification inbox at %s (notifications.hosts lists it; Secret %s key %s holds its HMAC key)", e.Inbox.URL(), NotifySecret, NotifyKey)
	if e.RolesFile, err = writeRoles(e.Dir); err != nil {
		return nil, err
	}
	progress("roles of the demo logins in %s", e.RolesFile)
	if _, err := seedFreeze(ctx, cs, time.Now()); err != nil {
		return nil, err
	}
	progress("a nightly deploy freeze of %s from %02d:00 UTC for %s", ProdEnvironment, FreezeNightlyHour, FreezeNightlyLength)
	progress("environments %s -> %s -> %s (manifests in %s) in %s", DevEnvironment, StagingEnvironment, ProdEnvironment, e.ManifestRepo, e.EnvironmentsFile)
	progress("GitOps: %s auto-syncs its branch; commit in the working clone %s and push, e.g.: %s", DevEnvironment, e.ManifestRepo, CommitExample(e.ManifestRepo))

	progress("seeding %d apps with their release histories", len(apps))
	var wg sync.WaitGroup
	var secondSeedErr error
	if secondCS != nil {
		progress("seeding %d apps in cluster %s", len(second), SecondCluster)
		wg.Go(func() {
			secondSeedErr = seed(ctx, secondCS, secondDyn, second, func(format string, args ...any) {
				progress(SecondCluster+": "+format, args...)
			})
		})
	}
	err = seed(ctx, cs, dyn, apps, progress)
	wg.Wait()
	if err == nil {
		err = secondSeedErr
	}
	if err != nil {
		return nil, err
	}
	if e.Prometheus != nil {
		if err := e.Prometheus.WaitReady(ctx); err != nil {
			return nil, err
		}
		progress("Prometheus at %s scrapes the traffic source %s every %s; %s's promotion check %s runs against it (dev's %s %s answers %g%% errors)",
			e.Prometheus.URL, e.Prometheus.TrafficURL, ScrapeInterval, StagingEnvironment, ErrorRateCheck, FailingApp, DevVersion, FailingErrorRatio*100)
	}
	e.Users = e.IdP.Users
	return e, nil
}

// startMember readies one started cluster: the App CRD, its platform
// namespaces and extra ones, the reference operator (until runCtx ends)
// and its growing pod logs. It returns the cluster's clients.
func (e *Env) startMember(ctx, runCtx context.Context, m Member, extraNamespaces []string, opts Options, logDir string, logApps []seedApp) (kubernetes.Interface, dynamic.Interface, error) {
	cfg := m.Cluster.Config
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	if err := operator.InstallCRD(ctx, ext); err != nil {
		return nil, nil, fmt.Errorf("demo: cluster %s: %w", m.Name, err)
	}
	for _, ns := range append(slices.Clone(m.Namespaces), extraNamespaces...) {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, nil, fmt.Errorf("demo: cluster %s: create namespace %s: %w", m.Name, ns, err)
		}
	}
	// The operator has clients of its own, with its documented rate limits.
	opCfg := operator.ClientConfig(cfg)
	opCS, err := kubernetes.NewForConfig(opCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	opDyn, err := dynamic.NewForConfig(opCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	log := opts.Log.With("cluster", m.Name)
	op, err := operator.New(opCS, opDyn, log, operator.Options{Namespaces: m.Namespaces, Resync: opts.OperatorResync, Workers: operatorWorkers})
	if err != nil {
		return nil, nil, err
	}
	e.wg.Go(func() {
		if err := op.Run(runCtx); err != nil {
			log.Error("operator stopped", "err", err)
		}
	})
	e.wg.Go(func() { appendLogs(runCtx, logDir, logApps) })
	return cs, dyn, nil
}

// prefixWriter prefixes what is written to it (whole progress lines) with
// a cluster's name; a nil W discards.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if p.w == nil {
		return len(b), nil
	}
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// operatorWorkers is the demo operator's concurrency: a reconcile mostly
// waits on the apiserver, so more workers than cores keep a large fleet
// moving (the client's rate limit still bounds the requests).
const operatorWorkers = 8

// Stop ends the operator, the log writer, Prometheus, the IdP and the cluster, and
// removes a temporary working folder. It is safe to call more than once.
func (e *Env) Stop() {
	e.once.Do(func() {
		if e.cancel != nil {
			e.cancel()
		}
		e.wg.Wait()
		if e.Prometheus != nil {
			e.Prometheus.Stop()
		}
		if e.IdP != nil {
			e.IdP.Stop()
		}
		// Every cluster stops, the second side by side with the first.
		var wg sync.WaitGroup
		for _, m := range e.Members[min(1, len(e.Members)):] {
			wg.Go(m.Cluster.Stop)
		}
		if e.Cluster != nil {
			e.Cluster.Stop()
		}
		wg.Wait()
		if e.removeDir {
			os.RemoveAll(e.Dir)
		}
	})
}

func hydraBin(binDir string) string {
	dir, err := devcluster.ResolveBinDir(binDir)
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "hydra-"+devidp.HydraVersion, "hydra")
}
