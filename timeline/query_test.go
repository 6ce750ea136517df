package timeline

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFleetPagesNewestFirst(t *testing.T) {
	ctx := context.Background()
	kube, _ := newFakeKube()
	clock := &fakeClock{t: t0.Add(time.Hour)}
	s := newTestStore(t, kube, clock, true)
	var all []Entry
	for i := range 30 {
		app := appN(i % 7)
		e := Entry{Time: t0.Add(time.Duration(i/2) * time.Second), App: app, Kind: []Kind{KindDeploy, KindWarning, KindSync}[i%3], To: "x", Ref: fmt.Sprint("r", i)}
		all = append(all, e.normalize())
		s.Record(e)
	}
	tests := []struct {
		name string
		f    Filter
		keep func(e Entry) bool
	}{
		{"everything", Filter{Limit: 4}, func(Entry) bool { return true }},
		{"one namespace", Filter{Namespace: "team-1", Limit: 3}, func(e Entry) bool { return e.App.Namespace == "team-1" }},
		{"one App", Filter{Namespace: "team-2", App: "svc-5", Limit: 2}, func(e Entry) bool { return e.App == appN(5) }},
		{"kinds", Filter{Kinds: []Kind{KindDeploy, KindSync}, Limit: 5}, func(e Entry) bool { return e.Kind != KindWarning }},
		{"time range", Filter{Since: t0.Add(3 * time.Second), Until: t0.Add(9 * time.Second), Limit: 4},
			func(e Entry) bool {
				return !e.Time.Before(t0.Add(3*time.Second)) && e.Time.Before(t0.Add(9*time.Second))
			}},
		{"other cluster", Filter{Cluster: "eu"}, func(Entry) bool { return false }},
		{"visible Apps", Filter{Limit: 3, Visible: func(a App) bool { return a != appN(3) && a != appN(4) }},
			func(e Entry) bool { return e.App != appN(3) && e.App != appN(4) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []Entry
			for i := len(all) - 1; i >= 0; i-- {
				if tt.keep(all[i]) {
					want = append(want, all[i])
				}
			}
			var got []Entry
			f := tt.f
			for pages := 0; ; pages++ {
				if pages > len(all) {
					t.Fatal("Fleet() pages never end")
				}
				p, err := s.Fleet(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				if f.Limit > 0 && len(p.Entries) > f.Limit {
					t.Fatalf("page of %d entries, want at most %d", len(p.Entries), f.Limit)
				}
				got = append(got, p.Entries...)
				if p.Continue == "" {
					break
				}
				f.Continue = p.Continue
			}
			// Entries of one instant come in App order; compare as sets
			// within an instant, in order across instants.
			key := func(e Entry) string {
				return e.Time.Format(time.RFC3339Nano) + " " + e.App.String() + " " + string(e.Kind)
			}
			if len(got) != len(want) {
				t.Fatalf("Fleet() returned %d entries, want %d", len(got), len(want))
			}
			for i := 1; i < len(got); i++ {
				if got[i].Time.After(got[i-1].Time) {
					t.Errorf("entry %d (%s) newer than entry %d (%s): want newest first", i, key(got[i]), i-1, key(got[i-1]))
				}
			}
			seen := map[string]int{}
			for _, e := range want {
				seen[key(e)]++
			}
			for _, e := range got {
				seen[key(e)]--
			}
			for k, n := range seen {
				if n != 0 {
					t.Errorf("entry %s: returned %d times too few", k, n)
				}
			}
		})
	}
}

func TestFleetRefusesForeignContinue(t *testing.T) {
	kube, _ := newFakeKube()
	s := newTestStore(t, kube, &fakeClock{t: t0}, true)
	for _, tok := range []string{"%%%", "bm90IGpzb24", strings.Repeat("A", maxContinueBytes+1)} {
		if _, err := s.Fleet(context.Background(), Filter{Continue: tok}); err == nil || !strings.Contains(err.Error(), "continue token") {
			t.Errorf("Fleet(Continue %.10q) = %v, want a continue token error", tok, err)
		}
	}
}

func TestQueryRange(t *testing.T) {
	ctx := context.Background()
	kube, _ := newFakeKube()
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, true)
	m := time.Minute
	// A flap folded from 0 to 2m, a deploy at 10m.
	for _, e := range []Entry{ev(0, KindHealth, "Healthy", "Degraded", ""), ev(m, KindHealth, "Degraded", "Healthy", ""), ev(2*m, KindHealth, "Healthy", "Degraded", ""), ev(10*m, KindDeploy, "", "1.1.0", "r")} {
		clock.t = e.Time
		s.Record(e)
	}
	tests := []struct {
		since, until time.Duration
		want         []Kind
	}{
		{-m, 20 * m, []Kind{KindHealth, KindDeploy}},
		{90 * time.Second, 5 * m, []Kind{KindHealth}}, // the folded span overlaps
		{3 * m, 20 * m, []Kind{KindDeploy}},
		{3 * m, 10 * m, nil}, // until is exclusive
	}
	for _, tt := range tests {
		got, err := s.Query(ctx, testApp, t0.Add(tt.since), t0.Add(tt.until))
		if err != nil {
			t.Fatal(err)
		}
		var kinds []Kind
		for _, e := range got {
			kinds = append(kinds, e.Kind)
		}
		if diff := cmp.Diff(tt.want, kinds); diff != "" {
			t.Errorf("Query(%v, %v) kinds (-want +got):\n%s", tt.since, tt.until, diff)
		}
	}
	notReady, _ := New(kube.CoreV1(), Options{Namespace: "x"})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := notReady.Query(cctx, testApp, time.Time{}, time.Time{}); err == nil {
		t.Error("Query() before load = nil error, want not loaded")
	}
}

func TestSubscribeDropsOldest(t *testing.T) {
	kube, _ := newFakeKube()
	s := newTestStore(t, kube, &fakeClock{t: t0}, true)
	sub, err := s.Subscribe(3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		s.Record(Entry{Time: t0.Add(time.Duration(i) * time.Second), App: testApp, Kind: KindDeploy, To: string(rune('a' + i))})
	}
	var got []string
	for range 3 {
		got = append(got, (<-sub.C()).To)
	}
	if diff := cmp.Diff([]string{"c", "d", "e"}, got); diff != "" || sub.Dropped() != 2 {
		t.Errorf("received (-want +got):\n%s dropped %d, want 2", diff, sub.Dropped())
	}
	sub.Close()
	sub.Close()
	if _, ok := <-sub.C(); ok {
		t.Error("C() open after Close, want closed")
	}
	s.Record(Entry{Time: t0, App: testApp, Kind: KindDeploy}) // no send on the closed channel
}

// TestSubscribeConcurrent records from several goroutines while a reader
// reads and another subscriber closes: under -race, no data race, no send
// on a closed channel, and every entry is received or counted dropped.
func TestSubscribeConcurrent(t *testing.T) {
	kube, _ := newFakeKube()
	s := newTestStore(t, kube, &fakeClock{t: t0}, true)
	sub, err := s.Subscribe(8)
	if err != nil {
		t.Fatal(err)
	}
	closing, err := s.Subscribe(1)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 200
	received := make(chan int)
	go func() {
		n := 0
		for range sub.C() {
			n++
		}
		received <- n
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				s.Record(Entry{Time: t0.Add(time.Duration(i) * time.Millisecond), App: appN(w), Kind: KindWarning, Ref: fmt.Sprint(i)})
				if w == 0 && i == each/2 {
					closing.Close()
				}
			}
		}()
	}
	wg.Wait()
	sub.Close()
	if n, dropped := <-received, sub.Dropped(); n+int(dropped) != writers*each {
		t.Errorf("received %d + dropped %d, want %d", n, dropped, writers*each)
	}
}
