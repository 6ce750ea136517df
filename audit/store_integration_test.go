package audit

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// syncBuffer is a log sink the store's handler and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// countingKube counts the calls a store makes ("configmaps get", ...)
// and the times of its ConfigMap deletes.
type countingKube struct {
	Kube
	mu      *sync.Mutex
	deletes *[]time.Time
	calls   map[string]int
}

func newCountingKube(k Kube) countingKube {
	return countingKube{Kube: k, mu: &sync.Mutex{}, deletes: &[]time.Time{}, calls: map[string]int{}}
}

func (k countingKube) inc(call string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls[call]++
}

func (k countingKube) snapshot() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]int{}
	for c, n := range k.calls {
		out[c] = n
	}
	return out
}

func (k countingKube) ConfigMaps(ns string) typedcorev1.ConfigMapInterface {
	return countingConfigMaps{k.Kube.ConfigMaps(ns), k}
}

func (k countingKube) Events(ns string) typedcorev1.EventInterface {
	return countingEvents{k.Kube.Events(ns), k}
}

type countingEvents struct {
	typedcorev1.EventInterface
	k countingKube
}

func (c countingEvents) Create(ctx context.Context, ev *corev1.Event, opts metav1.CreateOptions) (*corev1.Event, error) {
	c.k.inc("events create")
	return c.EventInterface.Create(ctx, ev, opts)
}

type countingConfigMaps struct {
	typedcorev1.ConfigMapInterface
	k countingKube
}

func (c countingConfigMaps) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error) {
	c.k.inc("configmaps get")
	return c.ConfigMapInterface.Get(ctx, name, opts)
}

func (c countingConfigMaps) Create(ctx context.Context, cm *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error) {
	c.k.inc("configmaps create")
	return c.ConfigMapInterface.Create(ctx, cm, opts)
}

func (c countingConfigMaps) Update(ctx context.Context, cm *corev1.ConfigMap, opts metav1.UpdateOptions) (*corev1.ConfigMap, error) {
	c.k.inc("configmaps update")
	return c.ConfigMapInterface.Update(ctx, cm, opts)
}

func (c countingConfigMaps) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	c.k.inc("configmaps delete")
	err := c.ConfigMapInterface.Delete(ctx, name, opts)
	if err == nil {
		c.k.mu.Lock()
		*c.k.deletes = append(*c.k.deletes, time.Now())
		c.k.mu.Unlock()
	}
	return err
}

func (k countingKube) count() ([]time.Time, int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]time.Time(nil), *k.deletes...), len(*k.deletes)
}

type clusterEnv struct {
	*platformtest.Env
	meta metadata.Interface
}

// newNamespace creates a namespace for one subtest.
func (e *clusterEnv) newNamespace(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

func (e *clusterEnv) store(t *testing.T, ns string, kube Kube, log *slog.Logger, start bool) *Store {
	t.Helper()
	if kube == nil {
		kube = e.Kube.CoreV1()
	}
	s, err := New(kube, e.meta, Options{Namespace: ns, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if start {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// eventually polls cond until it holds or 30 s pass.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s; last: %s", what, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustList(t *testing.T, s *Store, f Filter) Page {
	t.Helper()
	p, err := s.List(context.Background(), f)
	if err != nil {
		t.Fatalf("List(%+v): %v", f, err)
	}
	return p
}

func chainState(p Page) string {
	var b strings.Builder
	for _, r := range p.Records {
		fmt.Fprintf(&b, "%s ok=%v %s; ", r.ID, r.Chain.OK, r.Chain.Reason)
	}
	return b.String()
}

func flaggedIDs(p Page) []string {
	var out []string
	for _, r := range p.Records {
		if !r.Chain.OK {
			out = append(out, r.ID)
		}
	}
	return out
}

func TestStoreOnRealCluster(t *testing.T) {
	pe := platformtest.Start(t, platformtest.Options{})
	e := &clusterEnv{Env: pe, meta: metadata.NewForConfigOrDie(platformtest.AdminConfig(pe.Cluster.Config))}
	t.Run("AppendGetList", func(t *testing.T) { testAppendGetList(t, e) })
	t.Run("EditedAndDeleted", func(t *testing.T) { testEditedAndDeleted(t, e) })
	t.Run("Split", func(t *testing.T) { testSplit(t, e) })
	t.Run("ConcurrentWriters", func(t *testing.T) { testConcurrentWriters(t, e) })
	t.Run("RetentionUnderLease", func(t *testing.T) { testRetentionUnderLease(t, e) })
	t.Run("RetentionByAge", func(t *testing.T) { testRetentionByAge(t, e) })
}

func testAppendGetList(t *testing.T, e *clusterEnv) {
	ctx := context.Background()
	ns := e.newNamespace(t, "audit-basic")
	var logs syncBuffer
	calls := newCountingKube(e.Kube.CoreV1())
	s := e.store(t, ns, calls, slog.New(slog.NewJSONHandler(&logs, nil)), false)
	hostileEnv := "staging\n<script>alert(1)</script>,outcome=succeeded"
	var appended []Record
	add := func(r Record) Record {
		t.Helper()
		got, err := s.Append(ctx, r)
		if err != nil {
			t.Fatalf("Append(%s %s): %v", r.Verb, r.Environment, err)
		}
		appended = append(appended, got)
		return got
	}
	manifests := []*unstructured.Unstructured{configMapManifest("staging", "settings", map[string]any{"mode": "blue"}), secretManifest("Secret")}
	r1 := testRecord("eu", "staging", testTime())
	r1.Manifests = manifests
	r1.Objects = nil
	first := add(r1)
	// The calls of an append to a stream that has a head, with 2
	// manifests (inline): the budget of every apply.
	before := calls.snapshot()
	r1b := testRecord("eu", "staging", testTime().Add(30*time.Second))
	r1b.Manifests, r1b.Objects = manifests, nil
	add(r1b)
	after := calls.snapshot()
	for c, want := range map[string]int{"configmaps get": 1, "configmaps create": 1, "configmaps update": 1, "events create": 1, "configmaps delete": 0} {
		if got := after[c] - before[c]; got != want {
			t.Errorf("one append: %d calls %s, want %d", got, c, want)
		}
	}
	t.Logf("one append to a stream with a head: %v (first append of a stream adds a create of its head)", map[string]int{
		"get": after["configmaps get"] - before["configmaps get"], "create": after["configmaps create"] - before["configmaps create"],
		"update": after["configmaps update"] - before["configmaps update"], "event": after["events create"] - before["events create"]})
	r2 := testRecord("eu", "staging", testTime().Add(time.Minute))
	r2.Verb, r2.Outcome, r2.Blockers, r2.Message = VerbPrune, OutcomeRefused, []string{"protected"}, "the environment is protected"
	add(r2)
	r3 := testRecord("eu", hostileEnv, testTime().Add(2*time.Minute))
	r3.Actor = Actor{Email: "Eve+x@Example.com", Subject: "u\neve", Groups: []string{"a,b=c"}}
	add(r3)
	r4 := testRecord("eu", "", testTime().Add(3*time.Minute))
	r4.Namespace, r4.App, r4.Verb, r4.Actor = "shop", "web", VerbAutoSync, EngineActor()
	add(r4)
	r5 := testRecord("eu", "staging", testTime().Add(4*time.Minute))
	r5.Verb = VerbRollback
	add(r5)

	if first.Chain == nil || first.Chain.Prev != "" || !strings.HasPrefix(first.ID, streamOf(&r1).id()+"-0000000001") {
		t.Errorf("first record = id %s chain %+v, want the stream's record 1 with no prev", first.ID, first.Chain)
	}
	if len(first.Objects) != 2 || first.Objects[1] != (Object{Version: "v1", Kind: "Secret", Namespace: "staging", Name: "db"}) {
		t.Errorf("first record objects = %+v, want the ConfigMap and the Secret from its manifests", first.Objects)
	}

	got, err := s.Get(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Chain.OK || len(got.Manifests) != 2 || got.Manifests[0].GetName() != "settings" ||
		got.Manifests[1].GetAnnotations()["deploy-web.hanzo.ai/secret-hash"] == "" || got.Manifests[1].Object["stringData"] != nil {
		t.Errorf("Get(%s) = chain %+v, manifests %v; want ok, the ConfigMap and the Secret by hash", first.ID, got.Chain, got.Manifests)
	}
	if _, err := s.Get(ctx, "../../kube-root-ca.crt"); err == nil {
		t.Errorf("Get(hostile id) = nil error")
	}
	if _, err := s.Get(ctx, recordID(streamOf(&r1).id(), 99)); err == nil || !strings.Contains(err.Error(), "no such record") {
		t.Errorf("Get(absent id) = %v, want ErrNotFound", err)
	}

	// The same answers without the index and with it.
	idx := e.store(t, ns, nil, nil, true)
	for _, st := range []*Store{s, idx} {
		tests := []struct {
			f    Filter
			want int
		}{
			{Filter{}, 6},
			{Filter{Environment: "staging"}, 4},
			{Filter{Environment: hostileEnv}, 1},
			{Filter{Actor: "eve+x@example.com"}, 1},
			{Filter{Actor: EngineSubject}, 1},
			{Filter{App: "web"}, 1},
			{Filter{Namespace: "shop", App: "web"}, 1},
			{Filter{Namespace: "other", App: "web"}, 0},
			{Filter{Outcome: OutcomeRefused}, 1},
			{Filter{Verb: VerbRollback, Environment: "staging"}, 1},
			{Filter{Cluster: "us"}, 0},
			{Filter{Since: testTime().Add(90 * time.Second)}, 3},
			{Filter{Until: testTime().Add(30 * time.Second)}, 2},
		}
		for _, tt := range tests {
			p := mustList(t, st, tt.f)
			if len(p.Records) != tt.want {
				t.Errorf("List(%+v) = %d records, want %d", tt.f, len(p.Records), tt.want)
			}
			for _, r := range p.Records {
				if !r.Chain.OK {
					t.Errorf("List(%+v): %s chain %+v, want ok", tt.f, r.ID, r.Chain)
				}
			}
		}
		var paged []string
		f := Filter{Limit: 2}
		for {
			p := mustList(t, st, f)
			paged = append(paged, ids(p)...)
			if p.Continue == "" {
				break
			}
			f.Continue = p.Continue
		}
		want := []string{appended[5].ID, appended[4].ID, appended[3].ID, appended[2].ID, appended[1].ID, appended[0].ID}
		if !equalStrings(paged, want) {
			t.Errorf("List pages of 2 = %v, want newest first %v", paged, want)
		}
	}

	// One Event per record on its head, reason the verb.
	evs, err := e.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byObject := map[string][]corev1.Event{}
	for _, ev := range evs.Items {
		byObject[ev.InvolvedObject.Name] = append(byObject[ev.InvolvedObject.Name], ev)
	}
	for _, r := range appended {
		got := byObject[recordName(r.ID)]
		if len(got) != 1 || got[0].Reason != string(r.Verb) || strings.ContainsAny(got[0].Message, "\n\r") || len(got[0].Message) > maxEventMessage {
			t.Errorf("Events of record %s = %+v, want one, reason %s, one bounded line", r.ID, got, r.Verb)
		}
	}
	// One log line per record.
	for _, r := range appended {
		if n := strings.Count(logs.String(), `"id":"`+r.ID+`"`); n != 1 {
			t.Errorf("log lines of record %s = %d, want 1", r.ID, n)
		}
	}

	// No Secret value anywhere: ConfigMaps (decompressed too), Events,
	// log lines.
	assertNoSecret(t, e, ns, logs.String())
}

// assertNoSecret greps everything the store wrote in ns for the Secret's
// values (plain and base64).
func assertNoSecret(t *testing.T, e *clusterEnv, ns, logs string) {
	t.Helper()
	ctx := context.Background()
	needles := []string{secretValue, base64.StdEncoding.EncodeToString([]byte(secretValue)), "admin"}
	var hay [][]byte
	cms, err := e.Kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		b, _ := json.Marshal(cm)
		hay = append(hay, b)
		if gz := cm.BinaryData[keyManifests]; gz != nil && cm.Labels[LabelComponent] == ComponentRecord {
			r, err := gzip.NewReader(bytes.NewReader(gz))
			if err != nil {
				t.Fatal(err)
			}
			js, _ := io.ReadAll(r)
			hay = append(hay, js)
		}
	}
	evs, err := e.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(evs)
	hay = append(hay, b, []byte(logs))
	for _, h := range hay {
		for _, n := range needles {
			if bytes.Contains(h, []byte(n)) {
				t.Errorf("stored bytes hold the Secret value %q: %.300s", n, h)
			}
		}
	}
}

func testEditedAndDeleted(t *testing.T, e *clusterEnv) {
	ctx := context.Background()
	ns := e.newNamespace(t, "audit-tamper")
	s := e.store(t, ns, nil, nil, true)
	var recs []Record
	for i := range 6 {
		r, err := s.Append(ctx, testRecord("eu", "staging", testTime().Add(time.Duration(i)*time.Minute)))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	eventually(t, "the index holds 6 intact records", func() (bool, string) {
		p := mustList(t, s, Filter{})
		return len(p.Records) == 6 && len(flaggedIDs(p)) == 0, chainState(p)
	})

	// Edited like kubectl edit: the actor in record 2's annotation.
	cms := e.Kube.CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(ctx, recordName(recs[1].ID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Annotations[AnnotationRecord] = strings.Replace(cm.Annotations[AnnotationRecord], "alice@example.com", "mallory@example.com", 1)
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "records 2 and 3 flagged after record 2 was edited", func() (bool, string) {
		p := mustList(t, s, Filter{})
		return equalStrings(flaggedIDs(p), []string{recs[2].ID, recs[1].ID}), chainState(p)
	})
	// Without the index too, and on Get.
	plain := e.store(t, ns, nil, nil, false)
	if p := mustList(t, plain, Filter{}); !equalStrings(flaggedIDs(p), []string{recs[2].ID, recs[1].ID}) {
		t.Errorf("List without index after an edit flagged %v, want %v and %v", flaggedIDs(p), recs[2].ID, recs[1].ID)
	}
	got, err := s.Get(ctx, recs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Chain.OK || got.Actor.Email != "mallory@example.com" {
		t.Errorf("Get(edited) = actor %s chain %+v, want the edited actor, flagged", got.Actor.Email, got.Chain)
	}

	// An edited label (filters would lie): flagged on its own.
	cm, err = cms.Get(ctx, recordName(recs[4].ID), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Labels[LabelOutcome] = string(OutcomeFailed)
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "record 5 flagged after its label was edited", func() (bool, string) {
		p := mustList(t, s, Filter{Outcome: OutcomeSucceeded, Environment: "staging"})
		for _, r := range p.Records {
			if r.ID == recs[4].ID {
				return !r.Chain.OK && strings.Contains(r.Chain.Reason, "labels"), chainState(p)
			}
		}
		return false, chainState(p)
	})

	// A deleted middle record: its neighbours.
	if err := cms.Delete(ctx, recordName(recs[3].ID), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "records 3 and 5 flagged after record 4 was deleted", func() (bool, string) {
		p := mustList(t, s, Filter{})
		want := []string{recs[4].ID, recs[2].ID, recs[1].ID}
		return len(p.Records) == 5 && equalStrings(flaggedIDs(p), want), chainState(p)
	})
	broken, err := s.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(Page{Records: broken}), []string{recs[4].ID, recs[2].ID, recs[1].ID}; !equalStrings(got, want) {
		t.Errorf("Verify = %v, want %v", got, want)
	}
}

func testSplit(t *testing.T, e *clusterEnv) {
	ctx := context.Background()
	ns := e.newNamespace(t, "audit-split")
	s := e.store(t, ns, nil, nil, false)
	// 60 ConfigMaps of 48 KiB of random hex: about 1.5 MiB compressed.
	rng := rand.New(rand.NewPCG(1, 2))
	var objs []*unstructured.Unstructured
	for i := range 60 {
		b := make([]byte, 24<<10)
		for j := range b {
			b[j] = byte(rng.UintN(256))
		}
		objs = append(objs, configMapManifest("staging", fmt.Sprintf("blob-%02d", i), map[string]any{"blob": fmt.Sprintf("%x", b)}))
	}
	objs = append(objs, secretManifest("Secret"))
	r := testRecord("eu", "staging", testTime())
	r.Manifests, r.Objects = objs, nil
	stored, err := s.Append(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := e.Kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: partSelector})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts.Items) < 2 {
		t.Fatalf("a record of ~1.5 MiB compressed has %d parts, want at least 2", len(parts.Items))
	}
	for _, p := range parts.Items {
		if n := len(p.BinaryData[keyManifests]); n > PartBytes {
			t.Errorf("part %s holds %d bytes, over %d", p.Name, n, PartBytes)
		}
	}
	got, err := s.Get(ctx, stored.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Chain.OK || len(got.Manifests) != len(objs) {
		t.Fatalf("Get(split record) = chain %+v, %d manifests; want ok, %d", got.Chain, len(got.Manifests), len(objs))
	}
	for i := range 60 {
		if got.Manifests[i].Object["data"].(map[string]any)["blob"] != objs[i].Object["data"].(map[string]any)["blob"] {
			t.Errorf("manifest %d differs after the round trip", i)
		}
	}
	// The next record chains after it; a part deleted is flagged on Get.
	if _, err := s.Append(ctx, testRecord("eu", "staging", testTime().Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if p := mustList(t, s, Filter{}); len(flaggedIDs(p)) != 0 {
		t.Errorf("after a split record: flagged %s", chainState(p))
	}
	if err := e.Kube.CoreV1().ConfigMaps(ns).Delete(ctx, parts.Items[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = s.Get(ctx, stored.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Chain.OK || !strings.Contains(got.Chain.Reason, "missing") || got.Manifests != nil {
		t.Errorf("Get(record with a part deleted) = chain %+v, %d manifests; want flagged, none", got.Chain, len(got.Manifests))
	}
	assertNoSecret(t, e, ns, "")
}

func testConcurrentWriters(t *testing.T, e *clusterEnv) {
	ctx := context.Background()
	ns := e.newNamespace(t, "audit-race")
	ka, kb := newCountingKube(e.Kube.CoreV1()), newCountingKube(e.Kube.CoreV1())
	a := e.store(t, ns, ka, nil, false)
	b := e.store(t, ns, kb, nil, false)
	const each = 15
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for w, s := range []*Store{a, b} {
		wg.Go(func() {
			for i := range each {
				r := testRecord("eu", "staging", time.Now())
				r.Actor.Email = fmt.Sprintf("writer%d@example.com", w)
				r.Commit = fmt.Sprint(i)
				if _, err := s.Append(ctx, r); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Append: %v", err)
	}
	p := mustList(t, a, Filter{Limit: MaxLimit})
	if len(p.Records) != 2*each || len(flaggedIDs(p)) != 0 {
		t.Fatalf("two writers appending %d each: %d records, chain %s", each, len(p.Records), chainState(p))
	}
	// One chain: sequence numbers 1..30, each record's prev the hash of
	// the one before (no fork: no two records share a prev).
	ix, err := a.load(ctx, indexSelector)
	if err != nil {
		t.Fatal(err)
	}
	stream := streamOf(&Record{Cluster: "eu", Environment: "staging"}).id()
	prevs := map[string]int64{}
	for seq := int64(1); seq <= 2*each; seq++ {
		en := ix.streams[stream][seq]
		if en == nil {
			t.Fatalf("record %d of the stream is missing", seq)
		}
		if o, dup := prevs[en.env.Prev]; dup {
			t.Errorf("records %d and %d share prev %s: a fork", o, seq, en.env.Prev)
		}
		prevs[en.env.Prev] = seq
		if seq > 1 && en.env.Prev != ix.streams[stream][seq-1].hash {
			t.Errorf("record %d's prev is not record %d's hash", seq, seq-1)
		}
	}
	if h := ix.heads[stream]; h == nil || h.Seq != 2*each {
		t.Errorf("stream head = %+v, want seq %d", h, 2*each)
	}
	// Creates beyond one per record and the head are lost races.
	creates := ka.snapshot()["configmaps create"] + kb.snapshot()["configmaps create"]
	t.Logf("%d records, %d creates: %d races lost and retried", 2*each, creates, creates-2*each-1)
}

func testRetentionUnderLease(t *testing.T, e *clusterEnv) {
	ns := e.newNamespace(t, "audit-retention")
	kubes := [2]countingKube{}
	stores := [2]*Store{}
	for i := range 2 {
		kubes[i] = newCountingKube(e.Kube.CoreV1())
		stores[i] = e.store(t, ns, kubes[i], nil, true)
	}
	ctxs := [2]context.Context{}
	cancels := [2]context.CancelFunc{}
	done := make(chan int, 2)
	for i := range 2 {
		rt, err := NewRetainer(stores[i], e.Kube.CoordinationV1(), RetainerOptions{
			Identity:  fmt.Sprintf("replica-%d", i),
			Retention: Retention{Environments: map[string]Policy{"staging": {Keep: 5}}},
			Interval:  100 * time.Millisecond, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctxs[i], cancels[i] = context.WithCancel(context.Background())
		go func() { _ = rt.Run(ctxs[i]); done <- i }()
	}
	defer func() {
		for i := range 2 {
			cancels[i]()
		}
	}()
	ctx := context.Background()
	appendN := func(n int) {
		for range n {
			if _, err := stores[0].Append(ctx, testRecord("eu", "staging", time.Now())); err != nil {
				t.Fatal(err)
			}
		}
	}
	kept := func(want int) {
		t.Helper()
		eventually(t, fmt.Sprintf("retention keeps %d, all verifiable", want), func() (bool, string) {
			p := mustList(t, stores[1], Filter{})
			return len(p.Records) == want && len(flaggedIDs(p)) == 0, chainState(p)
		})
	}
	// Rounds: each adds records past the limit; the leader trims them.
	for range 3 {
		appendN(4)
		time.Sleep(300 * time.Millisecond)
	}
	kept(5)
	_, n0 := kubes[0].count()
	_, n1 := kubes[1].count()
	if (n0 == 0) == (n1 == 0) || n0+n1 != 7 {
		t.Fatalf("deletes by replica: %d and %d; want all 7 by one replica", n0, n1)
	}
	leader, other := 0, 1
	if n1 > 0 {
		leader, other = 1, 0
	}
	// The leader stops (its Lease released); the other takes over.
	cancels[leader]()
	<-done
	stopped := time.Now()
	appendN(3)
	kept(5)
	leaderDels, _ := kubes[leader].count()
	otherDels, n := kubes[other].count()
	if n != 3 {
		t.Errorf("the new leader deleted %d, want 3", n)
	}
	if len(leaderDels) != 7 {
		t.Errorf("the old leader deleted %d in all, want 7 (none after it stopped)", len(leaderDels))
	}
	for _, d := range otherDels {
		if d.Before(stopped) {
			t.Errorf("replica %d deleted at %s, before replica %d stopped leading at %s", other, d, leader, stopped)
		}
	}

	// A deletion outside the policy is still flagged.
	p := mustList(t, stores[1], Filter{})
	if err := e.Kube.CoreV1().ConfigMaps(ns).Delete(ctx, recordName(p.Records[2].ID), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the neighbours of a record deleted outside retention flagged", func() (bool, string) {
		q := mustList(t, stores[1], Filter{})
		return equalStrings(flaggedIDs(q), []string{p.Records[1].ID, p.Records[3].ID}), chainState(q)
	})
}

func testRetentionByAge(t *testing.T, e *clusterEnv) {
	ns := e.newNamespace(t, "audit-age")
	ctx := context.Background()
	s := e.store(t, ns, nil, nil, true)
	old := time.Now().Add(-100 * 24 * time.Hour)
	for i := range 3 {
		if _, err := s.Append(ctx, testRecord("eu", "staging", old.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, err := s.Append(ctx, testRecord("eu", "staging", time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	// An App stream follows the default policy too.
	app := testRecord("eu", "", old)
	app.Namespace, app.App = "shop", "web"
	if _, err := s.Append(ctx, app); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rt, err := NewRetainer(s, e.Kube.CoordinationV1(), RetainerOptions{Identity: "only", Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = rt.Run(rctx) }()
	eventually(t, "records older than 90 days trimmed, the rest verifiable", func() (bool, string) {
		p := mustList(t, s, Filter{})
		return len(p.Records) == 2 && len(flaggedIDs(p)) == 0, chainState(p)
	})
	// The next record chains on.
	if _, err := s.Append(ctx, testRecord("eu", "staging", time.Now())); err != nil {
		t.Fatal(err)
	}
	eventually(t, "3 verifiable records", func() (bool, string) {
		p := mustList(t, s, Filter{})
		return len(p.Records) == 3 && len(flaggedIDs(p)) == 0, chainState(p)
	})
}
