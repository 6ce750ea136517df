package handlers

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/release"
)

// failingReleaser answers every write with err.
type failingReleaser struct{ err error }

func (f failingReleaser) Rollback(context.Context, string, string, string, string) (release.Result, error) {
	return release.Result{}, f.err
}

func (f failingReleaser) Sync(context.Context, string, string, string) (release.SyncResult, error) {
	return release.SyncResult{}, f.err
}

// TestRollbackAndSyncWriteOneRecordEach: every rollback and sync request
// after authentication writes exactly one record, whether it succeeded,
// was refused before the release seam (an App that does not resolve, an
// unreadable body), was refused by it, or failed; the record names the
// user, the cluster, the App and a message safe to show.
func TestRollbackAndSyncWriteOneRecordEach(t *testing.T) {
	store, _ := newTestAudit(t)
	view := newFakeView([]kubeview.AppRow{{Name: "web", Namespace: "apps"}})
	view.namespaces = []string{"apps", "shop"}
	ok := &recordingReleaser{}
	raw := errors.New("release: patch apps/web: connection reset by 10.0.0.7")
	ts := newTestServer(t, newFakeView(nil), withAudit(store), func(o *Options) {
		o.Clusters = []Cluster{
			{Name: "us", View: twinView{view}, Release: ok},
			{Name: "refusing", View: twinView{view}, Release: failingReleaser{&release.RefusalError{Err: release.ErrConflict, Public: "web changed while rolling back: retry"}}},
			{Name: "broken", View: twinView{view}, Release: failingReleaser{raw}},
		}
	})
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	jsonCT := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name                    string
		req                     request
		verb                    audit.Verb
		outcome                 audit.Outcome
		cluster, namespace, app string
		message                 string
	}{
		{"rollback", request{method: "POST", target: "/clusters/us/apps/apps/web/rollback", header: form, body: "version=1.2.0"},
			audit.VerbRollback, audit.OutcomeSucceeded, "us", "apps", "web", "rolled back from 1.1.0 to 1.2.0"},
		{"sync", request{method: "POST", target: "/clusters/us/apps/apps/web/sync"},
			audit.VerbSync, audit.OutcomeSucceeded, "us", "apps", "web", "sync requested at now"},
		{"API rollback", request{method: "POST", target: "/v1/deploy/web/rollback?cluster=us", header: jsonCT, body: `{"version":"1.0.0"}`},
			audit.VerbRollback, audit.OutcomeSucceeded, "us", "apps", "web", "rolled back from 1.1.0 to 1.0.0"},
		{"rollback of an App that does not exist", request{method: "POST", target: "/clusters/us/apps/apps/nope/rollback", header: form, body: "version=1.2.0"},
			audit.VerbRollback, audit.OutcomeRefused, "us", "apps", "nope", "not found"},
		{"API sync of an App that does not exist", request{method: "POST", target: "/v1/deploy/nope/sync?cluster=us"},
			audit.VerbSync, audit.OutcomeRefused, "us", "", "nope", "not found"},
		{"API rollback with an unreadable body", request{method: "POST", target: "/v1/deploy/web/rollback?cluster=us", header: jsonCT, body: `{"version":`},
			audit.VerbRollback, audit.OutcomeRefused, "us", "", "web", "body: want"},
		{"API write naming no cluster among several", request{method: "POST", target: "/v1/deploy/web/sync"},
			audit.VerbSync, audit.OutcomeRefused, unresolvedCluster, "", "web", "a write must name its cluster"},
		{"sync in a cluster that is not configured", request{method: "POST", target: "/clusters/nope/apps/apps/web/sync"},
			audit.VerbSync, audit.OutcomeRefused, unresolvedCluster, "apps", "web", "cluster nope not found"},
		{"rollback the release seam refuses", request{method: "POST", target: "/clusters/refusing/apps/apps/web/rollback", header: form, body: "version=1.2.0"},
			audit.VerbRollback, audit.OutcomeRefused, "refusing", "apps", "web", "web changed while rolling back: retry"},
		{"sync that fails", request{method: "POST", target: "/clusters/broken/apps/apps/web/sync"},
			audit.VerbSync, audit.OutcomeFailed, "broken", "apps", "web", "the sync failed: see the server log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(records(t, store))
			tt.req.admin = true
			w := ts.do(t, tt.req)
			recs := records(t, store)
			if len(recs) != before+1 {
				t.Fatalf("%s %s (status %d): %d records after, want %d (exactly one more)", tt.req.method, tt.req.target, w.Code, len(recs), before+1)
			}
			got := recs[0]
			if got.Verb != tt.verb || got.Outcome != tt.outcome || got.Cluster != tt.cluster || got.Namespace != tt.namespace || got.App != tt.app {
				t.Errorf("record = %s %s %s %s/%s, want %s %s %s %s/%s", got.Verb, got.Outcome, got.Cluster, got.Namespace, got.App,
					tt.verb, tt.outcome, tt.cluster, tt.namespace, tt.app)
			}
			if !strings.Contains(got.Message, tt.message) {
				t.Errorf("record message = %q, want it to contain %q", got.Message, tt.message)
			}
			if strings.Contains(got.Message, "10.0.0.7") {
				t.Errorf("record message = %q: holds the raw upstream error", got.Message)
			}
			if got.Actor.Email != testIdentity.Email || got.Actor.Subject != testIdentity.Subject {
				t.Errorf("record actor = %+v, want %s / %s", got.Actor, testIdentity.Email, testIdentity.Subject)
			}
		})
	}
	// Unauthenticated writes never reach a handler: no record.
	before := len(records(t, store))
	ts.do(t, request{method: "POST", target: "/clusters/us/apps/apps/web/sync"})
	if n := len(records(t, store)); n != before {
		t.Errorf("an unauthenticated sync: %d records, want %d (none written)", n, before)
	}
}

// TestNoAuditTrailNoRecord: without a store the writes still work.
func TestNoAuditTrailNoRecord(t *testing.T) {
	view := newFakeView([]kubeview.AppRow{{Name: "web", Namespace: "apps"}})
	ok := &recordingReleaser{}
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{{Name: "us", View: twinView{view}, Release: ok}}
	})
	if w := ts.do(t, request{method: "POST", target: "/clusters/us/apps/apps/web/sync", admin: true}); w.Code != http.StatusOK {
		t.Errorf("sync without an audit trail: status = %d, want 200", w.Code)
	}
}

// TestRecordCarriesActorGroups: a console write's record names the
// session's groups, and a session with more groups than a record keeps
// (hostile: too many, too long) is bounded, not refused.
func TestRecordCarriesActorGroups(t *testing.T) {
	long := strings.Repeat("g", audit.MaxFieldBytes+40)
	many := make([]string, audit.MaxGroups+5)
	for i := range many {
		many[i] = "team-" + strconv.Itoa(i)
	}
	tests := []struct {
		name   string
		groups []string
		want   []string
	}{
		{"no groups", nil, nil},
		{"two groups", []string{"platform", "sre"}, []string{"platform", "sre"}},
		{"a group over the field limit is cut", []string{long}, []string{long[:audit.MaxFieldBytes]}},
		{"more groups than a record keeps", many, many[:audit.MaxGroups]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, _ := newTestAudit(t)
			view := newFakeView([]kubeview.AppRow{{Name: "web", Namespace: "apps"}})
			view.namespaces = []string{"apps"}
			ts := newTestServer(t, newFakeView(nil), withAudit(store), func(o *Options) {
				o.Clusters = []Cluster{{Name: "us", View: twinView{view}, Release: &recordingReleaser{}}}
			})
			id := testIdentity
			id.Groups = auth.NewGroupList(tt.groups)
			ts.auth.id = &id
			if w := ts.do(t, request{method: "POST", target: "/clusters/us/apps/apps/web/sync", admin: true}); w.Code != http.StatusOK {
				t.Fatalf("sync: status = %d, body %s", w.Code, w.Body)
			}
			recs := records(t, store)
			if len(recs) != 1 {
				t.Fatalf("sync wrote %d records, want 1", len(recs))
			}
			if diff := cmp.Diff(tt.want, recs[0].Actor.Groups, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("record actor groups mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
