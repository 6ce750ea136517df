package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// TestAuditOnRealCluster: with the store serve builds (its index started)
// on a real control plane with the operator, every rollback and sync
// request writes exactly one record, refused ones included; a record
// edited with the typed client (as kubectl edit would) reads chain.ok
// false in the JSON and is flagged on /audit.
func TestAuditOnRealCluster(t *testing.T) {
	rc, cl := startRealCluster(t, "eu", map[string][]string{"web": {"1.0.0", "1.1.0"}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	kube := rc.p.Kube
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testAuditNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	store, err := audit.New(kube.CoreV1(), metadata.NewForConfigOrDie(platformtest.AdminConfig(rc.p.Cluster.Config)), audit.Options{Namespace: testAuditNS})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, newFakeView(nil), withAudit(store), func(o *Options) { o.Clusters = []Cluster{cl} })
	// waitRecords waits for the index to show n records (the writes are
	// synchronous; the index follows them by watch).
	waitRecords := func(what string, n int) []audit.Record {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			recs := records(t, store)
			if len(recs) == n {
				return recs
			}
			if len(recs) > n || time.Now().After(deadline) {
				t.Fatalf("%s: %d records, want %d", what, len(recs), n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	steps := []struct {
		name    string
		req     request
		status  int
		verb    audit.Verb
		outcome audit.Outcome
	}{
		{"rollback", request{method: "POST", target: "/clusters/eu/apps/shop/web/rollback", header: form, body: "version=1.0.0"}, http.StatusOK, audit.VerbRollback, audit.OutcomeSucceeded},
		{"rollback to a version not in the history", request{method: "POST", target: "/v1/deploy/web/rollback", header: form, body: "version=9.9.9"}, http.StatusBadRequest, audit.VerbRollback, audit.OutcomeRefused},
		{"sync", request{method: "POST", target: "/v1/deploy/web/sync"}, http.StatusOK, audit.VerbSync, audit.OutcomeSucceeded},
		{"sync of an App that does not exist", request{method: "POST", target: "/clusters/eu/apps/shop/nope/sync"}, http.StatusNotFound, audit.VerbSync, audit.OutcomeRefused},
	}
	for i, st := range steps {
		st.req.admin = true
		if w := ts.do(t, st.req); w.Code != st.status {
			t.Fatalf("%s: status = %d, want %d (%s)", st.name, w.Code, st.status, w.Body)
		}
		got := waitRecords(st.name, i+1)[0]
		if got.Verb != st.verb || got.Outcome != st.outcome || got.Cluster != "eu" || got.Actor.Email != testIdentity.Email || got.Chain == nil || !got.Chain.OK {
			t.Errorf("%s: record = %s %s in %s by %+v (chain %+v), want %s %s in eu by %s, chain ok", st.name, got.Verb, got.Outcome, got.Cluster, got.Actor, got.Chain, st.verb, st.outcome, testIdentity.Email)
		}
	}

	// Edit the refused rollback's record (its outcome), as kubectl edit
	// would: the record reads chain.ok false. Refusals are chained in a
	// stream of their own (they never push writes out of retention), so
	// the writes' records after it are untouched.
	recs := records(t, store)
	edited := recs[2]
	cms, err := kube.CoreV1().ConfigMaps(testAuditNS).List(ctx, metav1.ListOptions{LabelSelector: audit.LabelComponent + "=" + audit.ComponentRecord})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cm := range cms.Items {
		raw := cm.Annotations[audit.AnnotationRecord]
		if !strings.Contains(raw, `"id":"`+edited.ID+`"`) {
			continue
		}
		found = true
		cm.Annotations[audit.AnnotationRecord] = strings.Replace(raw, `"outcome":"refused"`, `"outcome":"succeeded"`, 1)
		if _, err := kube.CoreV1().ConfigMaps(testAuditNS).Update(ctx, &cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if !found {
		t.Fatalf("no ConfigMap holds record %s", edited.ID)
	}
	want := map[string]bool{recs[0].ID: false, recs[1].ID: false, recs[2].ID: true, recs[3].ID: false}
	deadline := time.Now().Add(time.Minute)
	var broken map[string]bool
	for {
		w := ts.get(t, "/v1/deploy/audit", nil)
		var page struct {
			Records []struct {
				ID    string `json:"id"`
				Chain struct {
					OK bool `json:"ok"`
				} `json:"chain"`
			} `json:"records"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
			t.Fatal(err)
		}
		broken = map[string]bool{}
		for _, r := range page.Records {
			broken[r.ID] = !r.Chain.OK
		}
		if broken[edited.ID] || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for id, b := range want {
		if broken[id] != b {
			t.Errorf("record %s chain.ok = %v, want %v", id, !broken[id], !b)
		}
	}
	doc := parseHTML(t, ts.get(t, "/audit", nil).Body.String())
	for _, r := range byTestID(doc, "audit-row") {
		if flagged := len(byTestID(r, "chain-broken")) == 1; flagged != want[attr(r, "data-id")] {
			t.Errorf("/audit row %s flagged = %v, want %v", attr(r, "data-id"), flagged, want[attr(r, "data-id")])
		}
	}
}
