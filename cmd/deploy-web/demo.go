package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/dynamic"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/demo"
	"github.com/hanzoai/deploy-web/demo/demoapply"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/fleetset"
)

// maxDemoApps bounds --apps: the demo cluster's ranges are sized for 10,000
// Apps with headroom (devcluster.ServiceCIDR).
const maxDemoApps = 20000

// demoState is written to --state-file once the demo is up, for scripts and
// the browser tests.
type demoState struct {
	URL        string      `json:"url"`
	Kubeconfig string      `json:"kubeconfig"`
	Kubectl    string      `json:"kubectl"`
	Issuer     string      `json:"issuer"`
	Namespaces []string    `json:"namespaces"`
	Users      []demoLogin `json:"users"`
	Pid        int         `json:"pid"`
	// Environments is the plan/apply config the dashboard was started with.
	Environments string `json:"environments"`
	// ClustersFile is the clusters file (--clusters) the dashboard was
	// started with; Clusters are its clusters, the first one's kubeconfig
	// is Kubeconfig.
	ClustersFile string             `json:"clustersFile"`
	Clusters     []demoClusterState `json:"clusters"`
	// NotifyInbox is the demo's webhook receiver (subscriptions post to
	// its /hook; GET lists what came).
	NotifyInbox string `json:"notifyInbox"`
	// Prometheus is the demo's Prometheus (the environments' metrics).
	Prometheus string `json:"prometheus"`
}

// demoClusterState is one cluster of the demo.
type demoClusterState struct {
	Name       string   `json:"name"`
	Kubeconfig string   `json:"kubeconfig"`
	Namespaces []string `json:"namespaces"`
	// Dir is its control plane's folder (data, process logs).
	Dir string `json:"dir"`
	// Processes are the pids of its control plane's processes, by name
	// (etcd, kube-apiserver, ...).
	Processes map[string]int `json:"processes"`
}

type demoLogin struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Groups   []string `json:"groups"`
}

func demoCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "dashboard listen address (loopback)")
	binDir := fs.String("bin-dir", "", "folder of the built cluster and IdP binaries (default: the repository's bin/)")
	dir := fs.String("dir", "", "working folder (default: a temporary folder, removed on exit)")
	stateFile := fs.String("state-file", "", "write the demo's URL, kubeconfig and logins as JSON here once it is up")
	logFormat := fs.String("log-format", "text", "log format: json or text")
	clusters := fs.Int("clusters", 2, "how many local clusters to start: 2 (the first, "+demo.HomeCluster+", and "+demo.SecondCluster+", a second control plane with Apps of its own) or 1 for a faster start")
	apps := fs.Int("apps", 0, "seed this many extra Apps (a mix of healthy, progressing and degraded, 1-3 pods each) in batches once the demo is up, and print when the fleet has converged")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log := newDemoLogger(stderr, *logFormat)

	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	if *apps < 0 || *apps > maxDemoApps {
		return fmt.Errorf("--apps: %d is not between 0 and %d", *apps, maxDemoApps)
	}
	if *clusters != 1 && *clusters != 2 {
		return fmt.Errorf("--clusters: %d: the demo starts 1 or 2 clusters", *clusters)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--addr: the demo serves plain HTTP and listens on loopback only (got %q)", host)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("%w (is another demo running? pick another port with --addr 127.0.0.1:PORT)", err)
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "deploy-web demo: starting (binaries in %s)\n", binDirOrDefault(*binDir))

	env, err := demo.Start(ctx, demo.Options{
		BinDir: *binDir, Dir: *dir, CallbackURL: base + auth.CallbackPath, Progress: stdout, Log: log,
		Clusters: *clusters,
		// dev's first release is applied through the engine, so staging/api
		// has two releases to roll back between.
		ApplyEnvironment: demoapply.Apply,
		// Prometheus runs beside it: staging's promotion checks need it
		// (without the binary the demo stops here, naming the package).
		Prometheus: demo.PrometheusBin,
	})
	if err != nil {
		ln.Close()
		return err
	}
	defer env.Stop()

	if *apps > 0 {
		dyn, err := dynamic.NewForConfig(env.Cluster.Config)
		if err != nil {
			return err
		}
		go func() {
			// The dashboard is up meanwhile: the fleet fills it as it is created.
			if _, err := demo.SeedFleet(ctx, dyn, demo.FleetOptions{Apps: *apps, Progress: stdout}); err != nil && ctx.Err() == nil {
				log.Error("seed fleet", "err", err)
			}
		}()
	}

	keys, err := auth.GenerateSessionKeys()
	if err != nil {
		return err
	}
	// The dashboard reads every demo cluster through the clusters file the
	// demo wrote (the first cluster, HomeCluster, is named after its
	// kubeconfig context, as the demo's environments name it).
	cfg := serveConfig{
		Clusters: env.ClustersFile, AppResource: fleetset.DefaultAppResource,
		IssuerURL: env.IdP.IssuerURL, ClientID: env.IdP.ClientID, RedirectURL: base + auth.CallbackPath,
		AdminClaim: auth.DefaultAdminClaim, AdminValue: auth.DefaultAdminValue, SessionTTL: auth.DefaultSessionTTL,
		InsecureCookies: true, PerPage: 100,
		// The demo's deploy environments (dev, prod) and their plan history.
		Environments: env.EnvironmentsFile, HistoryNamespace: env.HistoryNamespace,
		ReportsDir: filepath.Join(env.Dir, "reports"),
		// The demo logins' roles (viewer, deployer, approver; admin is a
		// superadmin through the admin claim).
		Roles: env.RolesFile, GroupsClaim: auth.DefaultGroupsClaim,
	}
	return serve(ctx, cfg, env.Cluster.Config, env.IdP.ClientSecret, keys, ln, log, func() {
		st := demoState{URL: base + "/", Kubeconfig: env.Cluster.Kubeconfig, Kubectl: env.Cluster.Kubectl, Issuer: env.IdP.IssuerURL, Namespaces: env.Namespaces, Pid: os.Getpid(), Environments: env.EnvironmentsFile,
			ClustersFile: env.ClustersFile, NotifyInbox: env.Inbox.URL(), Prometheus: env.Prometheus.URL}
		for _, m := range env.Members {
			st.Clusters = append(st.Clusters, demoClusterState{Name: m.Name, Kubeconfig: m.Cluster.Kubeconfig, Namespaces: m.Namespaces, Dir: m.Cluster.Dir, Processes: m.Cluster.Processes()})
		}
		for _, u := range env.Users {
			st.Users = append(st.Users, demoLogin{u.Username, u.Password, u.Groups})
		}
		printBanner(stdout, st)
		if *stateFile != "" {
			if err := writeState(*stateFile, st); err != nil {
				log.Error("write state file", "err", err)
			}
		}
	})
}

func printBanner(w io.Writer, st demoState) {
	fmt.Fprintf(w, "\n  deploy-web demo is up\n\n")
	fmt.Fprintf(w, "  Dashboard:   %s\n", st.URL)
	for _, u := range st.Users {
		fmt.Fprintf(w, "  Login:       %s / %s   (groups: %s)\n", u.Username, u.Password, strings.Join(u.Groups, ", "))
	}
	fmt.Fprintf(w, "  Deploy:      %senvironments   (dev -> staging -> prod: staging one version behind, prod protected: applies refused, promotions reviewed; config %s)\n", st.URL, st.Environments)
	for _, c := range st.Clusters {
		fmt.Fprintf(w, "  Cluster:     %-11s %s (namespaces %s)\n", c.Name, c.Kubeconfig, strings.Join(c.Namespaces, ", "))
	}
	fmt.Fprintf(w, "  Clusters:    %s\n", st.ClustersFile)
	fmt.Fprintf(w, "  Notify:      %s/hook receives webhook notifications (Secret deploy-web-notify key demo-inbox); GET %s/ lists them\n", st.NotifyInbox, st.NotifyInbox)
	fmt.Fprintf(w, "  Prometheus:  %s scrapes the demo's per-App traffic; staging's promotion check %s (errors <= %g%%) refuses dev's %s %s (%g%% errors)\n",
		st.Prometheus, demo.ErrorRateCheck, demo.ErrorRateMax*100, demo.FailingApp, demo.DevVersion, demo.FailingErrorRatio*100)
	fmt.Fprintf(w, "  Try:         %s --kubeconfig %s get apps -A\n", st.Kubectl, st.Kubeconfig)
	fmt.Fprintf(w, "  Audit:       each rollback, sync, plan and apply is printed here (stderr) with its user\n")
	fmt.Fprintf(w, "\n  Press Ctrl-C to stop everything.\n\n")
}

func writeState(path string, st demoState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func binDirOrDefault(d string) string {
	r, err := devcluster.ResolveBinDir(d)
	if err != nil {
		return "?"
	}
	rel, err := filepath.Rel(".", r)
	if err != nil {
		return r
	}
	return rel
}
