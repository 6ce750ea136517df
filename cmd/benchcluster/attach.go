package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/proc"
)

// attachConfig points benchcluster at an environment that is already
// running (a demo, or another benchcluster run's cluster while it seeds):
// no cluster is started and nothing is seeded; the dashboard is started
// against it and measured as it is.
type attachConfig struct {
	kubeconfig          string
	namespaces          string
	issuer, clientID    string
	secretFile, keyFile string
	base, metricsAddr   string
	user, password      string
}

func (a attachConfig) check() error {
	for name, v := range map[string]string{
		"--attach-kubeconfig": a.kubeconfig, "--attach-namespaces": a.namespaces,
		"--attach-issuer": a.issuer, "--attach-secret-file": a.secretFile, "--attach-session-keys": a.keyFile,
		"--attach-base": a.base, "--attach-metrics-addr": a.metricsAddr,
	} {
		if v == "" {
			return fmt.Errorf("%s: required with --attach-kubeconfig", name)
		}
	}
	if !strings.HasPrefix(a.base, "http://127.0.0.1:") {
		return errors.New("--attach-base: want http://127.0.0.1:PORT, the callback the IdP knows")
	}
	return nil
}

// benchAttached measures the dashboard against a running environment.
func benchAttached(ctx context.Context, cfg config, a attachConfig, stdout io.Writer) (result, error) {
	r := result{loadBefore: loadavg(), attached: true}
	rc, err := clientcmd.BuildConfigFromFlags("", a.kubeconfig)
	if err != nil {
		return r, err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return r, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return r, err
	}
	namespaces := strings.Split(a.namespaces, ",")
	if r.fleetNote, r.total, err = fleetState(ctx, cs, dyn, namespaces); err != nil {
		return r, err
	}
	r.apps = r.total - demoApps
	fmt.Fprintf(stdout, "benchcluster: attached: %s\n", r.fleetNote)
	dir, err := os.MkdirTemp("", "deploy-web-bench-attach-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	dash, err := startDashboard(cfg, dir, a.base, a.metricsAddr, dashboardEnv{
		kubeconfig: a.kubeconfig, namespaces: namespaces, issuer: a.issuer, clientID: a.clientID,
	}, a.secretFile, a.keyFile)
	if err != nil {
		return r, err
	}
	begin := time.Now()
	if err := proc.WaitHTTP(ctx, &http.Client{Timeout: 2 * time.Second}, a.base+"/readyz", dash, nil); err != nil {
		dash.Stop(5 * time.Second)
		return r, fmt.Errorf("dashboard not ready: %w", err)
	}
	r.ready = time.Since(begin)
	fmt.Fprintf(stdout, "benchcluster: dashboard ready in %s with %d apps\n", r.ready.Round(time.Millisecond), r.total)
	err = measure(ctx, cfg, &r, a.base, a.metricsAddr, dash.Pid(), a.user, a.password, dyn)
	dash.Stop(10 * time.Second)
	r.loadAfter = loadavg()
	return r, err
}

// fleetState counts the Apps and what the cluster has made of them.
func fleetState(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, namespaces []string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var apps, deps, depsReady, pods, podsRunning, rss int
	for _, ns := range namespaces {
		ul, err := dyn.Resource(appcr.Resource).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", 0, err
		}
		apps += len(ul.Items)
		dl, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", 0, err
		}
		deps += len(dl.Items)
		for _, d := range dl.Items {
			if d.Spec.Replicas != nil && d.Status.ReadyReplicas == *d.Spec.Replicas {
				depsReady++
			}
		}
		rl, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", 0, err
		}
		rss += len(rl.Items)
		pl, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", 0, err
		}
		pods += len(pl.Items)
		for _, p := range pl.Items {
			if p.Status.Phase == "Running" {
				podsRunning++
			}
		}
	}
	return fmt.Sprintf("%d Apps, %d Deployments (%d with every replica ready), %d ReplicaSets, %d pods (%d running)",
		apps, deps, depsReady, rss, pods, podsRunning), apps, nil
}
