// Package demo brings up deploy-web's embedded default: a real local control
// plane (devcluster), the App CRD and the reference operator, a seeded fleet
// with a believable spread of states and growing pod logs, a git repository
// of manifests with two deploy environments for it (dev, unprotected, into
// the platform namespace staging; prod, protected), and a real OIDC
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
}

// Env is a running demo environment.
type Env struct {
	Cluster    *devcluster.Cluster
	IdP        *devidp.IdP
	Namespaces []string
	Users      []devidp.User
	Dir        string

	// EnvironmentsFile is the deploy config (deployplan.LoadConfig) of the
	// demo's two environments, DevEnvironment and ProdEnvironment.
	EnvironmentsFile string
	// ManifestRepo is the folder of their git repository (file://).
	ManifestRepo string
	// HistoryNamespace exists for the console's plan history.
	HistoryNamespace string

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
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
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
	e.Cluster, err = devcluster.Start(ctx, devcluster.Options{
		BinDir: opts.BinDir, Dir: filepath.Join(e.Dir, "cluster"), Logs: logs, Progress: opts.Progress,
	})
	if ierr := <-idpErr; err == nil && ierr != nil {
		err = ierr
	}
	if err != nil {
		return nil, err
	}
	progress("identity provider at %s", e.IdP.IssuerURL)

	cs, err := kubernetes.NewForConfig(e.Cluster.Config)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	dyn, err := dynamic.NewForConfig(e.Cluster.Config)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	ext, err := apiextensionsclient.NewForConfig(e.Cluster.Config)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if err := operator.InstallCRD(ctx, ext); err != nil {
		return nil, err
	}
	// The platform namespaces, and those of the deploy environments that
	// are not platform namespaces.
	for _, ns := range append(append([]string{}, e.Namespaces...), ProductionNamespace, HistoryNamespace) {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("demo: create namespace %s: %w", ns, err)
		}
	}
	// The operator has clients of its own, with its documented rate limits.
	opCfg := operator.ClientConfig(e.Cluster.Config)
	opCS, err := kubernetes.NewForConfig(opCfg)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	opDyn, err := dynamic.NewForConfig(opCfg)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	op, err := operator.New(opCS, opDyn, opts.Log, operator.Options{Namespaces: e.Namespaces, Resync: opts.OperatorResync, Workers: operatorWorkers})
	if err != nil {
		return nil, err
	}
	e.wg.Go(func() {
		if err := op.Run(runCtx); err != nil {
			opts.Log.Error("operator stopped", "err", err)
		}
	})
	e.wg.Go(func() { appendLogs(runCtx, logDir, logApps) })

	if e.EnvironmentsFile, e.ManifestRepo, err = seedManifests(e.Dir, e.Cluster.Kubeconfig); err != nil {
		return nil, err
	}
	e.HistoryNamespace = HistoryNamespace
	progress("environments %s and %s (manifests in %s) in %s", DevEnvironment, ProdEnvironment, e.ManifestRepo, e.EnvironmentsFile)

	progress("seeding %d apps with their release histories", len(apps))
	if err := seed(ctx, cs, dyn, apps, progress); err != nil {
		return nil, err
	}
	e.Users = e.IdP.Users
	return e, nil
}

// operatorWorkers is the demo operator's concurrency: a reconcile mostly
// waits on the apiserver, so more workers than cores keep a large fleet
// moving (the client's rate limit still bounds the requests).
const operatorWorkers = 8

// Stop ends the operator, the log writer, the IdP and the cluster, and
// removes a temporary working folder. It is safe to call more than once.
func (e *Env) Stop() {
	e.once.Do(func() {
		if e.cancel != nil {
			e.cancel()
		}
		e.wg.Wait()
		if e.IdP != nil {
			e.IdP.Stop()
		}
		if e.Cluster != nil {
			e.Cluster.Stop()
		}
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
