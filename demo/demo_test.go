package demo

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/kubeview"
)

// TestSeededStates starts the demo environment on the real control plane
// and checks, through kubeview's caches, that every seeded App reaches the
// health and sync it is meant to show (the README's table).
func TestSeededStates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the control plane and the IdP")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	env, err := Start(ctx, Options{CallbackURL: "http://127.0.0.1:1/auth/callback", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)

	cs := kubernetes.NewForConfigOrDie(env.Cluster.Config)
	dyn := dynamic.NewForConfigOrDie(env.Cluster.Config)
	view, err := kubeview.New(cs, dyn, slog.New(slog.DiscardHandler), kubeview.Options{Namespaces: env.Namespaces})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	if err := view.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{}
	for _, a := range fleet() {
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
			break
		}
		select {
		case <-ctx.Done():
			sort.Strings(diff)
			t.Fatalf("seeded states never settled:\n%s", strings.Join(diff, "\n"))
		case <-time.After(500 * time.Millisecond):
		}
	}

	// The rollouts that are meant to be stuck show both versions.
	page, _ := view.Applications(kubeview.Query{Namespace: "storefront", Search: "checkout"})
	if len(page.Rows) != 1 {
		t.Fatalf("checkout rows = %d, want 1", len(page.Rows))
	}
	if got, want := page.Rows[0].RunningSummary(), "1.2.0 (3) -> 1.3.0 (0)"; got != want {
		t.Errorf("checkout running = %q, want %q", got, want)
	}
}
