package demo

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/fleetset"
	"github.com/hanzoai/deploy-web/kubeview"
)

// TestSeededStates starts the demo environment with both clusters on the
// real control planes and checks, through kubeview's caches, that every
// seeded App of each cluster reaches the health and sync it is meant to
// show (the tables of the README and docs/demo.md), that the clusters file names both, and that
// Stop ends every process of both clusters.
func TestSeededStates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes and the IdP")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := Start(ctx, Options{CallbackURL: "http://127.0.0.1:1/auth/callback", Dir: t.TempDir(), Clusters: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)

	cs, err := fleetset.LoadFile(env.ClustersFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fleetset.Names(cs), []string{HomeCluster, SecondCluster}; !slices.Equal(got, want) {
		t.Errorf("clusters file names %v, want %v", got, want)
	}
	if len(env.Members) != 2 || env.Members[0].Cluster != env.Cluster {
		t.Fatalf("members = %+v, want the first cluster, then %s", env.Members, SecondCluster)
	}

	for _, m := range env.Members {
		seeded := fleet()
		if m.Name == SecondCluster {
			seeded = secondFleet()
		}
		t.Run(m.Name, func(t *testing.T) {
			view := startView(ctx, t, m)
			checkStates(ctx, t, view, seeded)
			if m.Name != HomeCluster {
				return
			}
			// The rollouts that are meant to be stuck show both versions.
			page, _ := view.Applications(kubeview.Query{Namespace: "storefront", Search: "checkout"})
			if len(page.Rows) != 1 {
				t.Fatalf("checkout rows = %d, want 1", len(page.Rows))
			}
			if got, want := page.Rows[0].RunningSummary(), "1.2.0 (3) -> 1.3.0 (0)"; got != want {
				t.Errorf("checkout running = %q, want %q", got, want)
			}
		})
	}

	// Stop ends both clusters: no process of either is left.
	var pids []int
	for _, m := range env.Members {
		for _, pid := range m.Cluster.Processes() {
			pids = append(pids, pid)
		}
	}
	env.Stop()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("process %d still runs after Stop", pid)
		}
	}
}

func startView(ctx context.Context, t *testing.T, m Member) *kubeview.Cache {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(m.Cluster.Config)
	dyn := dynamic.NewForConfigOrDie(m.Cluster.Config)
	view, err := kubeview.New(cs, dyn, slog.New(slog.DiscardHandler), kubeview.Options{Namespaces: m.Namespaces})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	if err := view.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	return view
}

// checkStates waits until every seeded App shows its expected health and
// sync, and no other App is there.
func checkStates(ctx context.Context, t *testing.T, view *kubeview.Cache, seeded []seedApp) {
	t.Helper()
	want := map[string]string{}
	for _, a := range seeded {
		want[a.namespace+"/"+a.name] = a.expectHealth + " " + a.expectSync
	}
	var diff []string
	for {
		page, err := view.Applications(kubeview.Query{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range page.Rows {
			got[r.Key()] = fmt.Sprintf("%s %s", r.Health.Status, r.Sync.Status)
		}
		diff = diff[:0]
		for k, w := range want {
			if got[k] != w {
				diff = append(diff, fmt.Sprintf("%s = %q, want %q", k, got[k], w))
			}
		}
		if len(got) != len(want) {
			diff = append(diff, fmt.Sprintf("%d rows, want %d", len(got), len(want)))
		}
		if len(diff) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			sort.Strings(diff)
			t.Fatalf("seeded states never settled:\n%s", strings.Join(diff, "\n"))
		case <-time.After(500 * time.Millisecond):
		}
	}
}
