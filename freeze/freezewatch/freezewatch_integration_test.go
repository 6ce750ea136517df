package freezewatch

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/lease"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
)

// TestWatcherOnRealCluster: two replicas, each with its own clients, audit
// index and Watcher, contend for a real Lease while an hourly freeze runs
// through six hours of a fast clock (a minute every 25 ms); the Lease is
// handed over three times, at arbitrary moments. Every window's start and
// end is on record exactly once, whichever replica led.
func TestWatcherOnRealCluster(t *testing.T) {
	const ns = "deploy-web"
	env := platformtest.Start(t, platformtest.Options{Namespaces: []string{ns}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	key := bytes.Repeat([]byte{7}, 32)
	newTrail := func(ctx context.Context) *audit.Store {
		cfg := platformtest.AdminConfig(env.Cluster.Config)
		s, err := audit.New(kubernetes.NewForConfigOrDie(cfg).CoreV1(), metadata.NewForConfigOrDie(cfg), audit.Options{Namespace: ns, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}

	// The fast clock: minutes since start, a minute every 25 ms.
	start := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	var minutes atomic.Int64
	now := func() time.Time { return start.Add(time.Duration(minutes.Load()) * time.Minute) }
	hourly := freeze.Freeze{Scope: scope.Scope{Environments: []string{"prod"}}, Start: start, End: start.Add(7 * time.Hour),
		RRule:    "FREQ=DAILY;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23;BYMINUTE=30",
		Duration: freeze.Duration(20 * time.Minute), Reason: "hourly batch", Author: freeze.Author{Subject: "root"}}
	f, err := freeze.NewStore(env.Kube.CoreV1(), ns, signtest.Keys()).Add(ctx, hourly)
	if err != nil {
		t.Fatal(err)
	}

	type replica struct {
		id      string
		leading atomic.Bool
		leases  kubernetes.Interface
		stop    context.CancelFunc
		done    chan struct{}
	}
	contend := func(r *replica) {
		lctx, stop := context.WithCancel(ctx)
		r.stop, r.done = stop, make(chan struct{})
		go func() {
			defer close(r.done)
			err := lease.Run(lctx, r.leases.CoordinationV1(), lease.Config{Namespace: ns, Name: "freezewatch-test", Identity: r.id,
				LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond},
				func(term context.Context) {
					r.leading.Store(true)
					defer r.leading.Store(false)
					<-term.Done()
				})
			if err != nil {
				t.Errorf("%s: lease: %v", r.id, err)
			}
		}()
	}
	wctx, stopWatchers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var replicas []*replica
	for _, id := range []string{"replica-a", "replica-b"} {
		cfg := platformtest.AdminConfig(env.Cluster.Config)
		r := &replica{id: id, leases: kubernetes.NewForConfigOrDie(cfg)}
		trail := newTrail(wctx)
		w := &Watcher{Freezes: freeze.NewStore(r.leases.CoreV1(), ns, signtest.Keys()), Records: trail,
			Feed: recordfeed.New(trail, recordfeed.Options{Now: now}), Active: r.leading.Load,
			Every: 20 * time.Millisecond, Settle: 300 * time.Millisecond, Lookback: 24 * time.Hour, Now: now}
		wg.Go(func() { w.Run(wctx) })
		contend(r)
		replicas = append(replicas, r)
	}
	leader := func() *replica {
		for _, r := range replicas {
			if r.leading.Load() {
				return r
			}
		}
		return nil
	}
	deadline := time.Now().Add(time.Minute)
	for leader() == nil {
		if time.Now().After(deadline) {
			t.Fatal("no replica took the Lease")
		}
		time.Sleep(20 * time.Millisecond)
	}

	handovers := 0
	for m := int64(1); m <= 6*60+20; m++ {
		time.Sleep(25 * time.Millisecond)
		minutes.Store(m)
		if m == 95 || m == 190 || m == 290 { // hand the Lease over: the leader stops cleanly and contends again
			if r := leader(); r != nil {
				r.stop()
				<-r.done
				contend(r)
				handovers++
			}
		}
	}
	if handovers != 3 {
		t.Errorf("handovers = %d, want 3 (a replica led at each)", handovers)
	}
	// Let the leader catch up with the last edges, then stop both.
	want := 12 // 6 windows (00:30 to 05:30 past start), a start and an end each
	trail := newTrail(ctx)
	count := func(s *audit.Store) []string {
		var keys []string
		for _, v := range []audit.Verb{audit.VerbFreezeStart, audit.VerbFreezeEnd} {
			page, err := s.List(ctx, audit.Filter{Verb: v, Limit: audit.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page.Records {
				k, _ := KeyOf(r)
				keys = append(keys, string(v)+" "+k)
			}
		}
		slices.Sort(keys)
		return keys
	}
	deadline = time.Now().Add(time.Minute)
	for len(count(trail)) < want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	stopWatchers()
	wg.Wait()
	for _, r := range replicas {
		r.stop()
		<-r.done
	}
	// A fresh index reads what is stored, after every writer stopped.
	got := count(newTrail(ctx))
	var expect []string
	for h := range 6 {
		k := f.ID + "@" + start.Add(time.Duration(h)*time.Hour+30*time.Minute).Format(time.RFC3339)
		expect = append(expect, "freeze-end "+k, "freeze-start "+k)
	}
	slices.Sort(expect)
	if !slices.Equal(got, expect) {
		t.Errorf("records on the apiserver after %d handovers = %d:\n%v\nwant each window's start and end once (%d):\n%v", handovers, len(got), got, len(expect), expect)
	}
	t.Logf("%d records, %d handovers", len(got), handovers)
}
