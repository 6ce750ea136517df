package timeline

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// writeCounter counts the ConfigMap writes a fake clientset sees.
type writeCounter struct {
	mu     sync.Mutex
	writes int
}

func (w *writeCounter) n() int { w.mu.Lock(); defer w.mu.Unlock(); return w.writes }

func newFakeKube() (*fake.Clientset, *writeCounter) {
	kube := fake.NewClientset()
	wc := &writeCounter{}
	for _, verb := range []string{"create", "update", "patch", "delete"} {
		kube.PrependReactor(verb, "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
			wc.mu.Lock()
			wc.writes++
			wc.mu.Unlock()
			return false, nil, nil
		})
	}
	return kube, wc
}

// newTestStore returns a loaded store over kube, driven by calling flush.
func newTestStore(t *testing.T, kube *fake.Clientset, clock *fakeClock, leader bool) *Store {
	t.Helper()
	s, err := New(kube.CoreV1(), Options{Namespace: "deploy-web", Shards: 16, Now: clock.Now, IsLeader: func() bool { return leader }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.load(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(s.ready)
	return s
}

func appN(i int) App {
	return App{Namespace: fmt.Sprintf("team-%d", i%3), Name: fmt.Sprintf("svc-%d", i)}
}

func TestStoreWritesOneShardPerFlushAndNothingAtRest(t *testing.T) {
	ctx := context.Background()
	kube, wc := newFakeKube()
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, true)

	s.flush(ctx)
	if got := wc.n(); got != 0 {
		t.Fatalf("writes after a flush with nothing recorded = %d, want 0", got)
	}
	shards := map[int]bool{}
	for i := range 40 {
		s.Record(Entry{Time: clock.Now(), App: appN(i), Kind: KindHealth, From: "Healthy", To: "Degraded"})
		shards[shardOf(appN(i), 16)] = true
	}
	for tick := 1; tick <= len(shards); tick++ {
		clock.Add(time.Second)
		s.flush(ctx)
		if got := wc.n(); got != tick {
			t.Fatalf("writes after %d flushes = %d, want %d (one shard per flush)", tick, got, tick)
		}
	}
	for range 5 {
		clock.Add(time.Second)
		s.flush(ctx)
	}
	if got := wc.n(); got != len(shards) {
		t.Errorf("writes once every shard was written = %d, want %d (nothing more at rest)", got, len(shards))
	}
	if st := s.Stats(); st.Pending != 0 || st.Writes != uint64(len(shards)) || st.WriteErrors != 0 {
		t.Errorf("Stats() = %+v, want 0 pending, %d writes, no errors", st, len(shards))
	}

	// A new store reads every entry back.
	s2 := newTestStore(t, kube, clock, false)
	page, err := s2.Fleet(ctx, Filter{Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 40 {
		t.Errorf("entries read back by a new store = %d, want 40", len(page.Entries))
	}
}

func TestStoreNonLeaderNeverWrites(t *testing.T) {
	ctx := context.Background()
	kube, wc := newFakeKube()
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, false)
	for i := range 10 {
		s.Record(Entry{Time: clock.Now(), App: appN(i), Kind: KindDeploy, To: "1.0.0"})
		clock.Add(time.Second)
		s.flush(ctx)
	}
	if got := wc.n(); got != 0 {
		t.Errorf("writes of a replica that does not lead = %d, want 0", got)
	}
}

// TestStoreAdoptsStandbyOnLeadership: entries a replica saw while another
// led are written when it leads, unless the old leader wrote them.
func TestStoreAdoptsStandbyOnLeadership(t *testing.T) {
	ctx := context.Background()
	kube, wc := newFakeKube()
	clock := &fakeClock{t: t0}
	var leads atomic.Bool
	s, err := New(kube.CoreV1(), Options{Namespace: "deploy-web", Shards: 16, Now: clock.Now, IsLeader: leads.Load})
	if err != nil {
		t.Fatal(err)
	}
	close(s.ready)
	// The old leader saw the first transition a second later than s did,
	// and wrote it; it never wrote the second.
	old := newTestStore(t, kube, clock, true)
	old.Record(Entry{Time: t0.Add(time.Second), App: testApp, Kind: KindHealth, From: "Healthy", To: "Degraded"})
	old.flush(ctx)
	s.Record(Entry{Time: t0, App: testApp, Kind: KindHealth, From: "Healthy", To: "Degraded"},
		Entry{Time: t0.Add(time.Minute), App: testApp, Kind: KindHealth, From: "Degraded", To: "Healthy"})
	cm, err := kube.CoreV1().ConfigMaps("deploy-web").Get(ctx, ShardName(shardOf(testApp, 16)), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.observeShard(cm) // what the watch delivers
	leads.Store(true)
	clock.Add(time.Minute)
	s.flush(ctx)
	want := []brief{{time.Second, KindHealth, "Healthy", "Degraded", 1, 0}, {time.Minute, KindHealth, "Degraded", "Healthy", 1, 0}}
	got, err := s.Query(ctx, testApp, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, briefs(got)); diff != "" {
		t.Errorf("entries after taking the lead (-want +got):\n%s", diff)
	}
	fresh := newTestStore(t, kube, clock, false)
	got, _ = fresh.Query(ctx, testApp, time.Time{}, time.Time{})
	if diff := cmp.Diff(want, briefs(got)); diff != "" || wc.n() != 2 {
		t.Errorf("after %d writes, entries stored (-want +got):\n%s", wc.n(), diff)
	}
}

// TestStoreConflictWritesTheUnion: a write that loses to another writer
// reads the shard, keeps both sides' entries and writes on a later flush.
func TestStoreConflictWritesTheUnion(t *testing.T) {
	ctx := context.Background()
	kube, wc := newFakeKube()
	clock := &fakeClock{t: t0}
	a := newTestStore(t, kube, clock, true)
	b := newTestStore(t, kube, clock, true)
	a.Record(Entry{Time: t0, App: testApp, Kind: KindDeploy, To: "1.0.0", Ref: "a"})
	b.Record(Entry{Time: t0, App: testApp, Kind: KindDeploy, To: "1.0.0", Ref: "b"})
	a.flush(ctx) // creates the shard
	b.flush(ctx) // AlreadyExists: reads a's entries
	if st := b.Stats(); st.Conflicts != 1 || st.Pending != 1 {
		t.Fatalf("b.Stats() = %+v, want 1 conflict, 1 pending", st)
	}
	clock.Add(time.Second)
	b.flush(ctx)
	if got := wc.n(); got != 3 {
		t.Errorf("writes = %d, want 3 (create, lost create, update)", got)
	}
	fresh := newTestStore(t, kube, clock, false)
	got, _ := fresh.Query(ctx, testApp, time.Time{}, time.Time{})
	refs := []string{}
	for _, e := range got {
		refs = append(refs, e.Ref)
	}
	if diff := cmp.Diff([]string{"a", "b"}, refs); diff != "" {
		t.Errorf("entries stored after the conflict (-want +got):\n%s", diff)
	}
}

func TestStoreWriteErrorKeepsShardPending(t *testing.T) {
	ctx := context.Background()
	kube, _ := newFakeKube()
	kube.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", fmt.Errorf("no"))
	})
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, true)
	s.Record(Entry{Time: t0, App: testApp, Kind: KindDeploy, To: "1.0.0"})
	s.flush(ctx)
	if st := s.Stats(); st.WriteErrors != 1 || st.Pending != 1 {
		t.Errorf("Stats() after a refused write = %+v, want 1 error, 1 pending", st)
	}
}

func TestStoreObserveBaseline(t *testing.T) {
	ctx := context.Background()
	kube, _ := newFakeKube()
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, true)
	healthy := State{Health: "Healthy", Sync: "Synced", Containers: []Container{{Pod: "p", Name: "app", Restarts: 5}}}
	s.Observe(testApp, healthy) // first sight: nothing to compare with
	s.Observe(testApp, healthy)
	clock.Add(time.Second)
	s.Observe(testApp, State{Health: "Degraded", Sync: "Synced", Containers: []Container{{Pod: "p", Name: "app", Restarts: 5}}})
	clock.Add(time.Second)
	s.flush(ctx)

	// A restarted console sees Degraded -> Healthy: the newest health
	// entry says Degraded, so it records the recovery and nothing else.
	s2 := newTestStore(t, kube, clock, true)
	clock.Add(time.Second)
	s2.Observe(testApp, healthy)
	got, _ := s2.Query(ctx, testApp, time.Time{}, time.Time{})
	want := []brief{{time.Second, KindHealth, "Healthy", "Degraded", 1, 0}, {3 * time.Second, KindHealth, "Degraded", "Healthy", 1, 0}}
	if diff := cmp.Diff(want, briefs(got)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

// TestStoreObserveBaselineRevision: a console restarted after a deploy it
// did not see records the deploy (the revision of its newest entry
// differs), and one restarted with nothing deployed records none.
func TestStoreObserveBaselineRevision(t *testing.T) {
	ctx := context.Background()
	kube, _ := newFakeKube()
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, true)
	v1 := State{Health: "Healthy", Sync: "Synced", Revision: "1.2.0"}
	s.Observe(testApp, v1)
	clock.Add(time.Second)
	s.Observe(testApp, State{Health: "Progressing", Sync: "Synced", Revision: "1.2.0"})
	clock.Add(time.Second)
	s.Record(Entry{Time: clock.Now(), App: testApp, Kind: KindWarning, Ref: "r", Message: "no revision"})
	clock.Add(time.Second)
	s.flush(ctx)

	same := newTestStore(t, kube, clock, true)
	same.Observe(testApp, State{Health: "Progressing", Sync: "Synced", Revision: "1.2.0"})
	if st := same.Stats(); st.Entries != 2 {
		t.Errorf("a restart with the same revision holds %d entries, want the 2 written (no deploy recorded)", st.Entries)
	}
	s2 := newTestStore(t, kube, clock, true)
	s2.Observe(testApp, State{Health: "Progressing", Sync: "Synced", Revision: "1.3.0"})
	got, _ := s2.Query(ctx, testApp, time.Time{}, time.Time{})
	want := []brief{{time.Second, KindHealth, "Healthy", "Progressing", 1, 0}, {2 * time.Second, KindWarning, "", "", 1, 0}, {3 * time.Second, KindDeploy, "1.2.0", "1.3.0", 1, 0}}
	if diff := cmp.Diff(want, briefs(got)); diff != "" {
		t.Errorf("entries after a restart past a deploy (-want +got):\n%s", diff)
	}
}

func TestStoreRefuses(t *testing.T) {
	kube, _ := newFakeKube()
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, true)
	s.Record(Entry{Time: t0, App: testApp, Kind: "reboot"}, Entry{Time: t0, App: App{Name: "x"}, Kind: KindDeploy},
		Entry{Time: t0.Add(-DefaultMaxAge - time.Second), App: testApp, Kind: KindDeploy})
	if st := s.Stats(); st.Refused != 3 || st.Entries != 0 || st.Pending != 0 {
		t.Errorf("Stats() = %+v, want 3 refused, 0 entries, nothing pending", st)
	}
	// A replay of entries held (history read again) writes nothing.
	deploy := Entry{Time: t0, App: testApp, Kind: KindDeploy, To: "1.0.0", Ref: "r1"}
	s.Record(deploy, Entry{Time: t0.Add(time.Second), App: testApp, Kind: KindHealth, From: "Healthy", To: "Degraded"})
	s.flush(context.Background())
	s.Record(deploy)
	if st := s.Stats(); st.Pending != 0 || st.Entries != 2 {
		t.Errorf("Stats() after a replay = %+v, want 2 entries, nothing pending", st)
	}
	if _, err := New(kube.CoreV1(), Options{}); err == nil {
		t.Error("New() without a namespace = nil error, want one")
	}
	if _, err := New(kube.CoreV1(), Options{Namespace: "x", Shards: MaxShards + 1}); err == nil {
		t.Error("New() with too many shards = nil error, want one")
	}
}

func TestObserveShardIgnoresOtherConfigMaps(t *testing.T) {
	kube, _ := newFakeKube()
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, false)
	app := appN(0)
	for i := 1; shardOf(app, 16) != 0; i++ {
		app = appN(i)
	}
	data, _ := encodeShard([]*appLog{logOf(app, Entry{Time: t0, Kind: KindDeploy, Count: 1})})
	// Each name but the last is not a shard of this 16-shard store (or
	// not the App's): its content is ignored.
	for i, name := range []string{"deploy-web-timeline-7", "deploy-web-timeline-016", "other", ShardName(1), ShardName(0)} {
		s.observeShard(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: fmt.Sprint(i + 1)}, BinaryData: map[string][]byte{DataKey: data}})
		want := 0
		if name == ShardName(0) {
			want = 1
		}
		if st := s.Stats(); st.Entries != want {
			t.Errorf("entries after ConfigMap %s = %d, want %d", name, st.Entries, want)
		}
	}
}

// TestStoreNonLeaderShowsWhatItSaw: a replica that does not lead shows the
// transitions it observed at once, and the leader's record of the same
// transition once its shard arrives, not both.
func TestStoreNonLeaderShowsWhatItSaw(t *testing.T) {
	ctx := context.Background()
	kube, _ := newFakeKube()
	clock := &fakeClock{t: t0}
	follower := newTestStore(t, kube, clock, false)
	follower.Record(Entry{Time: t0, App: testApp, Kind: KindHealth, From: "Healthy", To: "Degraded"})
	got, _ := follower.Query(ctx, testApp, time.Time{}, time.Time{})
	if diff := cmp.Diff([]brief{{0, KindHealth, "Healthy", "Degraded", 1, 0}}, briefs(got)); diff != "" {
		t.Errorf("entries before the leader wrote (-want +got):\n%s", diff)
	}
	leader := newTestStore(t, kube, clock, true)
	leader.Record(Entry{Time: t0.Add(300 * time.Millisecond), App: testApp, Kind: KindHealth, From: "Healthy", To: "Degraded"},
		Entry{Time: t0.Add(time.Second), App: appN(1), Kind: KindDeploy, To: "2.0.0"})
	leader.flush(ctx)
	cm, err := kube.CoreV1().ConfigMaps("deploy-web").Get(ctx, ShardName(shardOf(testApp, 16)), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	follower.observeShard(cm)
	got, _ = follower.Query(ctx, testApp, time.Time{}, time.Time{})
	if diff := cmp.Diff([]brief{{300 * time.Millisecond, KindHealth, "Healthy", "Degraded", 1, 0}}, briefs(got)); diff != "" {
		t.Errorf("entries after the leader's shard arrived (-want +got):\n%s", diff)
	}
}

// TestStoreFullShardDropsOldest fills one shard past MaxShardBytes with
// entries that do not compress: the write fits, the oldest entries go
// from the shard and the index alike, the newest stay.
func TestStoreFullShardDropsOldest(t *testing.T) {
	ctx := context.Background()
	kube, _ := newFakeKube()
	clock := &fakeClock{t: t0}
	s, err := New(kube.CoreV1(), Options{Namespace: "deploy-web", Shards: 1, Now: clock.Now, IsLeader: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	close(s.ready)
	r := rand.New(rand.NewPCG(7, 7))
	const apps, per = 10, 400
	for i := range per {
		for a := range apps {
			msg := make([]byte, MaxMessageBytes/2)
			for j := range msg {
				msg[j] = byte(r.Uint32())
			}
			s.Record(Entry{Time: t0.Add(time.Duration(i) * time.Second), App: appN(a), Kind: KindWarning, Ref: fmt.Sprint(i), Message: hex.EncodeToString(msg)})
		}
	}
	clock.Add(time.Hour)
	s.flush(ctx)
	st := s.Stats()
	if st.Dropped == 0 || st.Entries+int(st.Dropped) != apps*per {
		t.Fatalf("Stats() = %+v, want entries dropped and entries + dropped = %d", st, apps*per)
	}
	cm, err := kube.CoreV1().ConfigMaps("deploy-web").Get(ctx, ShardName(0), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cm.BinaryData[DataKey]); n > MaxShardBytes {
		t.Errorf("shard of %d bytes, want at most %d", n, MaxShardBytes)
	}
	fresh, err := New(kube.CoreV1(), Options{Namespace: "deploy-web", Shards: 1, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.load(ctx); err != nil {
		t.Fatal(err)
	}
	close(fresh.ready)
	if got := fresh.Stats().Entries; got != st.Entries {
		t.Errorf("entries read back = %d, want %d (the index holds what the shard holds)", got, st.Entries)
	}
	for a := range apps {
		got, _ := fresh.Query(ctx, appN(a), time.Time{}, time.Time{})
		if len(got) == 0 || got[len(got)-1].Ref != fmt.Sprint(per-1) {
			t.Errorf("%s: newest entry not kept", appN(a))
		}
	}
}

func TestStoreAgedOutAppsLeave(t *testing.T) {
	ctx := context.Background()
	kube, _ := newFakeKube()
	clock := &fakeClock{t: t0}
	s, err := New(kube.CoreV1(), Options{Namespace: "deploy-web", Shards: 1, Now: clock.Now, IsLeader: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	close(s.ready)
	s.Record(Entry{Time: t0, App: testApp, Kind: KindDeploy, To: "1.0.0"})
	s.flush(ctx)
	clock.Add(DefaultMaxAge + time.Hour)
	s.Record(Entry{Time: clock.Now(), App: appN(1), Kind: KindDeploy, To: "2.0.0"})
	s.flush(ctx)
	if st := s.Stats(); st.Apps != 1 || st.Entries != 1 {
		t.Errorf("Stats() after %v = %d Apps, %d entries; want 1 and 1 (testApp aged out)", DefaultMaxAge+time.Hour, st.Apps, st.Entries)
	}
	if got, _ := s.Query(ctx, testApp, time.Time{}, time.Time{}); len(got) != 0 {
		t.Errorf("Query(aged-out App) = %d entries, want 0", len(got))
	}
}

// TestStoreCrashLoopWritesAtMostOncePerFoldWrite: an App that crash-loops
// for an hour (a restart every 4 minutes, its BackOff Warning updated
// every 30 seconds) costs its first write and then at most one per
// FoldWrite, not one per restart; the index shows the full counts at
// once, and the shards do once the episode ends.
func TestStoreCrashLoopWritesAtMostOncePerFoldWrite(t *testing.T) {
	ctx := context.Background()
	kube, wc := newFakeKube()
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, true)
	state := func(restarts int32) State {
		return State{Health: "Degraded", Sync: "Synced", Revision: "1.0.0",
			Containers: []Container{{Pod: "checkout-1", Name: "app", Restarts: restarts, LastTermination: "Error"}}}
	}
	s.Observe(testApp, state(0))
	const hour = time.Hour
	restarts := int32(0)
	warnings := 0
	for sec := 1; sec <= int(hour/time.Second); sec++ {
		clock.Add(time.Second)
		if sec%240 == 0 {
			restarts++
			s.Observe(testApp, state(restarts))
		}
		if sec%30 == 0 {
			warnings++
			s.Record(Entry{Time: clock.Now(), App: testApp, Kind: KindWarning, Ref: "Pod:shop:checkout-1",
				Message: "BackOff: Back-off restarting failed container app"})
		}
		s.flush(ctx)
	}
	maxWrites := 1 + int(hour/DefaultFoldWrite)
	if got := wc.n(); got > maxWrites {
		t.Errorf("shard writes in an hour of crash loop = %d, want at most %d (1 + hour/FoldWrite)", got, maxWrites)
	}
	counts := func(s *Store) map[Kind]int {
		got, err := s.Query(ctx, testApp, time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[Kind]int{}
		for _, e := range got {
			if out[e.Kind] != 0 {
				t.Errorf("a second %s entry at %v: the episode did not fold", e.Kind, e.Time.Sub(t0))
			}
			out[e.Kind] = e.Count
		}
		return out
	}
	want := map[Kind]int{KindRestart: int(restarts), KindWarning: warnings}
	if diff := cmp.Diff(want, counts(s)); diff != "" {
		t.Errorf("counts in the index after an hour (-want +got):\n%s", diff)
	}
	// The loop stops: Quiet later the episode's counts are written, and
	// then nothing more.
	before := wc.n()
	for range int((DefaultQuiet + time.Minute) / time.Second) {
		clock.Add(time.Second)
		s.flush(ctx)
	}
	if got := wc.n() - before; got != 1 {
		t.Errorf("writes once the loop stopped = %d, want 1 (the episode's end)", got)
	}
	if diff := cmp.Diff(want, counts(newTestStore(t, kube, clock, false))); diff != "" {
		t.Errorf("counts read back from the shards (-want +got):\n%s", diff)
	}
}

// TestStoreHandover: a clean stop of the leader writes, at once and all
// of them, the shards that wait: a folded crash-loop count (which a
// flush leaves for FoldWrite) and a change of another App, so the next
// replica reads what this one held; a replica that does not lead, or
// that never loaded its shards, writes nothing.
func TestStoreHandover(t *testing.T) {
	ctx := context.Background()
	kube, wc := newFakeKube()
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, true)
	restart := func(n int32) State {
		return State{Health: "Degraded", Sync: "Synced", Revision: "1.0.0",
			Containers: []Container{{Pod: "checkout-1", Name: "app", Restarts: n, LastTermination: "Error"}}}
	}
	s.Observe(testApp, restart(0))
	s.Observe(testApp, restart(1))
	for range 5 { // written: the episode's first entry
		clock.Add(time.Second)
		s.flush(ctx)
	}
	s.Observe(testApp, restart(2)) // folded: waits FoldWrite
	s.Observe(testApp, restart(3))
	other := appN(7)
	s.Record(Entry{Time: clock.Now(), App: other, Kind: KindDeploy, From: "1.0.0", To: "2.0.0"})
	if st := s.Stats(); st.Folded != 1 || st.Pending == 0 {
		t.Fatalf("before the handover: %+v, want one App's folds and a pending shard", st)
	}

	before := wc.n()
	if n := s.Handover(ctx); n != 0 {
		t.Errorf("Handover left %d shard(s) pending, want 0", n)
	}
	if st := s.Stats(); st.Folded != 0 || st.Pending != 0 {
		t.Errorf("after the handover: %+v, want nothing folded or pending", st)
	}
	if wc.n() == before {
		t.Fatal("Handover wrote nothing")
	}
	next := newTestStore(t, kube, clock, false)
	got, err := next.Query(ctx, testApp, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var restarts int
	for _, e := range got {
		if e.Kind == KindRestart {
			restarts = e.Count
		}
	}
	var held int
	mine, _ := s.Query(ctx, testApp, time.Time{}, time.Time{})
	for _, e := range mine {
		if e.Kind == KindRestart {
			held = e.Count
		}
	}
	if held < 2 || restarts != held {
		t.Errorf("the next replica reads a restart count of %d, this one holds %d; want the same, at least 2 (the folds written at the handover)", restarts, held)
	}
	if es, err := next.Query(ctx, other, time.Time{}, time.Time{}); err != nil || len(es) == 0 {
		t.Errorf("the next replica reads %d entries of %s (%v), want its change", len(es), other.Name, err)
	}

	// A replica that does not lead writes nothing at its stop.
	kube2, wc2 := newFakeKube()
	standby := newTestStore(t, kube2, clock, false)
	standby.Observe(testApp, restart(0))
	standby.Observe(testApp, restart(1))
	if standby.Handover(ctx); wc2.n() != 0 {
		t.Errorf("a standby's handover wrote %d time(s), want none", wc2.n())
	}
	// Nor one whose shards never loaded (it would replace them unread).
	kube3, wc3 := newFakeKube()
	unloaded, err := New(kube3.CoreV1(), Options{Namespace: "deploy-web", Shards: 16, Now: clock.Now, IsLeader: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	unloaded.Observe(testApp, restart(0))
	if unloaded.Handover(ctx); wc3.n() != 0 {
		t.Errorf("an unloaded store's handover wrote %d time(s), want none", wc3.n())
	}
}
