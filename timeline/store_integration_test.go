package timeline

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// writeLog records when a client sent a request that changes a
// ConfigMap (every verb but GET, HEAD and OPTIONS on a configmaps path).
type writeLog struct {
	mu    sync.Mutex
	times []time.Time
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (w *writeLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if strings.Contains(r.URL.Path, "/configmaps") {
				w.mu.Lock()
				w.times = append(w.times, time.Now())
				w.mu.Unlock()
			}
		}
		return rt.RoundTrip(r)
	})
}

func (w *writeLog) snapshot() []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.times...)
}

// replica is one console's store with its own counted client.
type replica struct {
	store  *Store
	writes *writeLog
	stop   func()
}

func startReplica(t *testing.T, cfg *rest.Config, opts Options) *replica {
	t.Helper()
	w := &writeLog{}
	c := rest.CopyConfig(cfg)
	c.Wrap(w.wrap)
	s, err := New(kubernetes.NewForConfigOrDie(c).CoreV1(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	select {
	case <-s.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("Run: %v", err)
	case <-time.After(time.Minute):
		cancel()
		t.Fatal("store not loaded after a minute")
	}
	var once sync.Once
	r := &replica{store: s, writes: w, stop: func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}}
	t.Cleanup(r.stop)
	return r
}

func waitUntil(t *testing.T, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// maxPerWindow is the most writes inside any window of length d.
func maxPerWindow(times []time.Time, d time.Duration) int {
	best := 0
	for i := range times {
		n := 0
		for j := i; j < len(times) && times[j].Sub(times[i]) < d; j++ {
			n++
		}
		best = max(best, n)
	}
	return best
}

// churn flaps the health of apps Apps until ctx ends: App i turns
// Degraded and back every 1+i%4 seconds; every replica observes it.
func churn(ctx context.Context, apps int, replicas ...*replica) {
	start := time.Now()
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			sec := int(now.Sub(start) / time.Second)
			for i := range apps {
				st := State{Health: "Healthy", Sync: "Synced", Revision: "1.0.0"}
				if (sec/(1+i%4))%2 == 1 {
					st.Health, st.HealthMessage = "Degraded", "Deployment has minimum availability: false"
				}
				for _, r := range replicas {
					r.store.Observe(App{Namespace: fmt.Sprintf("team-%d", i%20), Name: fmt.Sprintf("svc-%04d", i)}, st)
				}
			}
		}
	}
}

// waitIdle waits until the writer of s has had idleTicks to write
// nothing, after the after-th such tick: the writer at rest, as it
// reports it. It returns the count reached.
func waitIdle(t *testing.T, s *Store, after uint64) uint64 {
	t.Helper()
	const idleTicks = 3
	var n uint64
	waitUntil(t, "the writer at rest", time.Minute, func() bool {
		st := s.Stats()
		n = st.IdleTicks
		return st.Pending == 0 && st.Folded == 0 && n >= after+idleTicks
	})
	return n
}

func TestStoreOnRealCluster(t *testing.T) {
	env := platformtest.Start(t, platformtest.Options{Namespaces: []string{"tl-restart", "tl-churn", "tl-leader"}})
	cfg := platformtest.AdminConfig(env.Cluster.Config)
	always := func() bool { return true }

	t.Run("restart keeps the timeline, hostile text is data, nothing written at rest", func(t *testing.T) {
		// 16 shards: the 51 Apps are written within about 16s.
		opts := Options{Namespace: "tl-restart", Shards: 16, IsLeader: always}
		a := startReplica(t, cfg, opts)
		hostileApp := App{Cluster: "eu-1", Namespace: "shop", Name: "checkout"}
		in := []Entry{
			{Time: time.Now().Add(-2 * time.Hour), App: hostileApp, Kind: KindDeploy, To: "1.3.0", Ref: "deploy-web-apply-20261201-1", Revision: "1.3.0"},
			{Time: time.Now().Add(-time.Hour), App: hostileApp, Kind: KindWarning, Ref: "apps:Deployment:shop:" + hostile, Message: hostile + "\xff"},
			{Time: time.Now().Add(-time.Minute), App: hostileApp, Kind: KindHealth, From: "Healthy", To: "Degraded", Message: hostile},
		}
		for i := range 50 {
			in = append(in, Entry{Time: time.Now().Add(-time.Duration(i) * time.Second), App: appN(i), Kind: KindSync, From: "Synced", To: "OutOfSync"})
		}
		a.store.Record(in...)
		// At rest is what the writer says: ticks that found nothing to
		// write, after which no write may follow.
		idle := waitIdle(t, a.store, 0)
		written := len(a.writes.snapshot())
		waitIdle(t, a.store, idle)
		if got := len(a.writes.snapshot()); got != written {
			t.Errorf("writes at rest (between idle ticks of the writer) = %d, want 0", got-written)
		}
		if st := a.store.Stats(); st.Writes != uint64(written) || st.WriteErrors != 0 || st.Conflicts != 0 {
			t.Errorf("Stats() = %+v, want %d writes, no errors or conflicts", st, written)
		}
		want, err := a.store.Query(context.Background(), hostileApp, time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != 3 || !strings.HasPrefix(want[1].Message, hostile) {
			t.Fatalf("Query() on the writer = %d entries, message %q; want 3 and the hostile text", len(want), want[1].Message)
		}
		a.stop()

		b := startReplica(t, cfg, opts)
		got, err := b.store.Query(context.Background(), hostileApp, time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("entries read by a new store (-before restart +after):\n%s", diff)
		}
		page, err := b.store.Fleet(context.Background(), Filter{Kinds: []Kind{KindSync}, Limit: MaxLimit})
		if err != nil || len(page.Entries) != 50 {
			t.Errorf("Fleet(sync) after restart = %d entries, %v; want 50", len(page.Entries), err)
		}
		waitIdle(t, b.store, 0)
		if n := len(b.writes.snapshot()); n != 0 {
			t.Errorf("writes of a restarted store with nothing new (once its writer is idle) = %d, want 0", n)
		}
	})

	t.Run("churn of 2000 Apps writes at most once a second", func(t *testing.T) {
		r := startReplica(t, cfg, Options{Namespace: "tl-churn", IsLeader: always})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		start := time.Now()
		churn(ctx, 2000, r)
		elapsed := time.Since(start)
		times := r.writes.snapshot()
		st := r.store.Stats()
		t.Logf("churn: %d Apps for %v: %d writes (%.2f/s), %d entries held, %d shards pending, %d conflicts, %d errors",
			2000, elapsed.Round(time.Second), len(times), float64(len(times))/elapsed.Seconds(), st.Entries, st.Pending, st.Conflicts, st.WriteErrors)
		if len(times) < 10 {
			t.Errorf("writes under churn = %d, want the writer busy (about one a second)", len(times))
		}
		if n := maxPerWindow(times, 900*time.Millisecond); n > 1 {
			t.Errorf("%d writes inside 900ms, want at most 1", n)
		}
		if limit := int(elapsed/time.Second) + 1; len(times) > limit {
			t.Errorf("writes in %v = %d, want at most %d", elapsed, len(times), limit)
		}
		if st.WriteErrors != 0 || st.Conflicts != 0 {
			t.Errorf("Stats() = %+v, want no errors or conflicts", st)
		}
	})

	t.Run("two replicas never both write", func(t *testing.T) {
		kube := kubernetes.NewForConfigOrDie(cfg)
		elect := func(ctx context.Context, id string) *leaderelection.LeaderElector {
			lock, err := resourcelock.New(resourcelock.LeasesResourceLock, "tl-leader", "deploy-web-timeline", kube.CoreV1(), kube.CoordinationV1(),
				resourcelock.ResourceLockConfig{Identity: id})
			if err != nil {
				t.Fatal(err)
			}
			le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{Lock: lock, Name: id,
				LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond, ReleaseOnCancel: true,
				Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}}})
			if err != nil {
				t.Fatal(err)
			}
			go le.Run(ctx)
			return le
		}
		ctxA, stopA := context.WithCancel(context.Background())
		defer stopA()
		leA := elect(ctxA, "replica-a")
		waitUntil(t, "replica-a leads", 30*time.Second, leA.IsLeader)
		ctxB, stopB := context.WithCancel(context.Background())
		defer stopB()
		leB := elect(ctxB, "replica-b")
		a := startReplica(t, cfg, Options{Namespace: "tl-leader", IsLeader: leA.IsLeader})
		b := startReplica(t, cfg, Options{Namespace: "tl-leader", IsLeader: leB.IsLeader})

		churnCtx, stopChurn := context.WithCancel(context.Background())
		defer stopChurn()
		go churn(churnCtx, 300, a, b)
		// Explicit signals, not windows: a writes twice while it leads,
		// then b twice once it took over. What follows checks the order
		// and pace of the writes seen, whatever comes after.
		waitUntil(t, "replica-a writes while it leads", time.Minute, func() bool { return len(a.writes.snapshot()) >= 2 })
		stopA() // releases the Lease
		handover := time.Now()
		waitUntil(t, "replica-b leads", 30*time.Second, leB.IsLeader)
		waitUntil(t, "replica-b writes while it leads", time.Minute, func() bool { return len(b.writes.snapshot()) >= 2 })
		stopChurn()

		wa, wb := a.writes.snapshot(), b.writes.snapshot()
		t.Logf("replica-a wrote %d times, replica-b %d times", len(wa), len(wb))
		if len(wa) == 0 || len(wb) == 0 {
			t.Fatalf("writes: replica-a %d, replica-b %d; want both > 0 (each wrote while it led)", len(wa), len(wb))
		}
		// a's last write may follow stopA by the time the Lease takes to
		// be released; b writes only once it holds it.
		if last, first := wa[len(wa)-1], wb[0]; !last.Before(first) {
			t.Errorf("replica-a last wrote %v after the handover, replica-b first wrote %v after it: want every write of a before b's first",
				last.Sub(handover), first.Sub(handover))
		}
		// Each replica keeps its own pace (FlushInterval since its own last
		// write); b's first write may follow a's last closely, which is
		// fine: what matters is that they never interleave (checked above).
		for name, w := range map[string][]time.Time{"replica-a": wa, "replica-b": wb} {
			if n := maxPerWindow(w, 900*time.Millisecond); n > 1 {
				t.Errorf("%s: %d writes inside 900ms, want at most 1", name, n)
			}
		}
	})
}
