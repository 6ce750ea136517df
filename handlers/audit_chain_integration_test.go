package handlers

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// TestAuditChainAttacksOnRealCluster: someone with every right on
// ConfigMaps in deploy-web's namespace, and none on its Secrets, edits
// and deletes records with the Kubernetes API, one attack per
// environment's stream. Each attack is flagged (chain.ok false) in the
// JSON and on /audit, while an untouched stream stays intact:
//
//   - middle: a record in the middle deleted (both neighbours flagged);
//   - newest: the newest record deleted and the stream head set back to
//     the copy read before that record was written (validly signed then);
//   - headgone: the newest record and the stream head deleted;
//   - prev: a record deleted and its successor's prev rewritten to the
//     record before, to close the gap;
//   - trim: the stream head's retention boundary moved past two records
//     deleted, with the hash of the second, to pass them off as trimmed.
func TestAuditChainAttacksOnRealCluster(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	kube := p.Kube
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testAuditNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The store serve builds: the key read from the Secret through the
	// API (created once), the index started.
	store, err := audit.New(kube.CoreV1(), metadata.NewForConfigOrDie(platformtest.AdminConfig(p.Cluster.Config)), audit.Options{Namespace: testAuditNS})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, newFakeView(nil), withAudit(store))
	cms := kube.CoreV1().ConfigMaps(testAuditNS)

	// Four records per stream; ids[env][i] is record i+1's.
	envs := []string{"intact", "middle", "newest", "headgone", "prev", "trim"}
	ids := map[string][]string{}
	// The newest stream's head as read before its fourth record.
	var oldHead *corev1.ConfigMap
	for _, env := range envs {
		for i := range 4 {
			if env == "newest" && i == 3 {
				oldHead = streamHeadOf(t, kube, ids[env][0])
			}
			rec := appendTest(t, store, audit.Record{Time: testNow.Add(time.Duration(i) * time.Minute), Actor: audit.Actor{Email: "alice@example.com"},
				Verb: audit.VerbApply, Cluster: "eu", Environment: env})
			ids[env] = append(ids[env], rec.ID)
		}
	}
	// Every record reads intact before the attacks, in the index.
	waitFlagged(t, ts, len(envs)*4, map[string]bool{})

	del := func(id string) {
		t.Helper()
		if err := cms.Delete(ctx, "deploy-web-audit-"+id, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("attacker: delete record %s: %v", id, err)
		}
	}
	// middle
	del(ids["middle"][1])
	// newest: delete record 4, put back the head's older signed state.
	del(ids["newest"][3])
	cur := streamHeadOf(t, kube, ids["newest"][0])
	cur.Annotations = oldHead.Annotations
	if _, err := cms.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("attacker: set the stream head back: %v", err)
	}
	// headgone
	del(ids["headgone"][3])
	if err := cms.Delete(ctx, streamHeadOf(t, kube, ids["headgone"][0]).Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("attacker: delete the stream head: %v", err)
	}
	// prev: delete record 2, chain record 3 to record 1.
	del(ids["prev"][1])
	rec1, rec3 := recordCM(t, kube, ids["prev"][0]), recordCM(t, kube, ids["prev"][2])
	rec3.Annotations[audit.AnnotationRecord] = rewritePrev(t, rec3.Annotations[audit.AnnotationRecord], storedHash(rec1))
	if _, err := cms.Update(ctx, rec3, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("attacker: rewrite record 3's prev: %v", err)
	}
	// trim: delete records 1 and 2, move the boundary past them.
	rec2 := recordCM(t, kube, ids["trim"][1])
	del(ids["trim"][0])
	del(ids["trim"][1])
	head := streamHeadOf(t, kube, ids["trim"][0])
	var st map[string]any
	if err := json.Unmarshal([]byte(head.Annotations[audit.AnnotationStream]), &st); err != nil {
		t.Fatal(err)
	}
	st["trimmedThrough"], st["trimmedHash"] = 2, storedHash(rec2)
	b, _ := json.Marshal(st)
	head.Annotations[audit.AnnotationStream] = string(b)
	if _, err := cms.Update(ctx, head, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("attacker: move the retention boundary: %v", err)
	}

	want := map[string]bool{
		ids["middle"][0]: true, ids["middle"][2]: true,
		ids["newest"][2]:   true,
		ids["headgone"][2]: true,
		// Record 3 fails its signature; record 4 no longer chains to it.
		ids["prev"][0]: true, ids["prev"][2]: true, ids["prev"][3]: true,
		// The head fails its signature: the boundary is not believed.
		ids["trim"][2]: true, ids["trim"][3]: true,
	}
	total := len(envs)*4 - 6 // six records deleted
	got := waitFlagged(t, ts, total, want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("records flagged in the JSON after the attacks mismatch (-want +got):\n%s", diff)
	}
	doc := parseHTML(t, ts.get(t, "/audit?limit=500", nil).Body.String())
	rows := byTestID(doc, "audit-row")
	if len(rows) != total {
		t.Fatalf("/audit: %d rows, want %d", len(rows), total)
	}
	for _, r := range rows {
		id := attr(r, "data-id")
		if flagged := len(byTestID(r, "chain-broken")) == 1; flagged != want[id] {
			t.Errorf("/audit row %s flagged = %v, want %v", id, flagged, want[id])
		}
	}

	// The next append to the stream whose head was deleted rebuilds the
	// head from the newest record left; the new record carries the flag
	// from then on (what went with the old head cannot be told).
	next := appendTest(t, store, audit.Record{Time: testNow.Add(time.Hour), Actor: audit.Actor{Email: "alice@example.com"},
		Verb: audit.VerbApply, Cluster: "eu", Environment: "headgone"})
	delete(want, ids["headgone"][2])
	want[next.ID] = true
	got = waitFlagged(t, ts, total+1, want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records flagged after the head was rebuilt mismatch (-want +got):\n%s", diff)
	}
}

// waitFlagged polls GET /v1/deploy/audit until it lists n records whose
// flagged set (chain.ok false) is want, or a minute passed (the index
// follows the API by watch), and returns the last flagged set.
func waitFlagged(t *testing.T, ts *testServer, n int, want map[string]bool) map[string]bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		w := ts.get(t, "/v1/deploy/audit?limit=500", nil)
		var page struct {
			Records []struct {
				ID    string `json:"id"`
				Chain struct {
					OK     bool   `json:"ok"`
					Reason string `json:"reason"`
				} `json:"chain"`
			} `json:"records"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
			t.Fatalf("GET /v1/deploy/audit: %v (%s)", err, w.Body)
		}
		got := map[string]bool{}
		var reasons []string
		for _, r := range page.Records {
			if !r.Chain.OK {
				got[r.ID] = true
				reasons = append(reasons, r.ID+": "+r.Chain.Reason)
			}
		}
		if len(page.Records) == n && maps.Equal(got, want) {
			return got
		}
		if time.Now().After(deadline) {
			slices.Sort(reasons)
			t.Logf("%d records; flagged:\n%s", len(page.Records), strings.Join(reasons, "\n"))
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// recordCM reads record id's head ConfigMap.
func recordCM(t *testing.T, kube kubernetes.Interface, id string) *corev1.ConfigMap {
	t.Helper()
	cm, err := kube.CoreV1().ConfigMaps(testAuditNS).Get(t.Context(), "deploy-web-audit-"+id, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// streamHeadOf reads the stream head of record id's stream.
func streamHeadOf(t *testing.T, kube kubernetes.Interface, id string) *corev1.ConfigMap {
	t.Helper()
	stream, _, _ := strings.Cut(id, "-")
	cm, err := kube.CoreV1().ConfigMaps(testAuditNS).Get(t.Context(), "deploy-web-audit-"+stream, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// storedHash is the chain hash of a stored record, as anyone who reads
// the ConfigMap can compute it (the rule is public, no key).
func storedHash(cm *corev1.ConfigMap) string {
	return audit.RecordHash([]byte(cm.Annotations[audit.AnnotationRecord]))
}

// rewritePrev sets the prev of a stored record's annotation.
func rewritePrev(t *testing.T, raw, prev string) string {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		t.Fatal(err)
	}
	env["prev"] = prev
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
