package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/kubeview"
)

// freezeClock is a clock tests move.
type freezeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *freezeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *freezeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// freezeServer is the role walk's server (App web in namespaces apps and
// infra, the walk's roles) with a recording release seam, an audit trail
// and a freeze gate over a fake ConfigMap store on clock.
func freezeServer(t *testing.T) (*testServer, *recordingReleaser, *audit.Store, *freeze.Gate, *freezeClock) {
	t.Helper()
	clock := &freezeClock{now: testNow}
	gate := freeze.NewGate(freeze.NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys()).WithClock(clock.Now))
	rel := &recordingReleaser{}
	store, _ := newTestAudit(t)
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters[0].Release = rel
		o.Roles = walkPolicy(t)
		o.Freezes = gate
		o.Audit = store
	})
	ts.srv.clusters[0].View = walkView{ts.view}
	ts.handler = ts.srv.Handler()
	return ts, rel, store, gate, clock
}

// persona returns the walk's persona by name.
func persona(t *testing.T, name string) auth.Identity {
	t.Helper()
	for _, p := range walkPersonas() {
		if p.name == name {
			return p.id
		}
	}
	t.Fatalf("no persona %q", name)
	return auth.Identity{}
}

// TestFreezeRefusesReleaseWrites: a rollback or sync of a frozen App is
// refused (409, reason frozen, the freeze's reason and opening time) for
// everyone, before the release seam, and recorded as refused; a
// superadmin's break-glass goes through and is recorded with the action;
// a deployer's break-glass is the refusal; an App outside the freeze and
// the same App after the freeze's end are not refused.
func TestFreezeRefusesReleaseWrites(t *testing.T) {
	ts, rel, store, gate, clock := freezeServer(t)
	f, err := gate.Store().Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Namespaces: []string{"apps"}},
		Start: testNow.Add(-time.Hour), End: testNow.Add(time.Hour), Reason: "release week", Ticket: "https://tickets.example.com/CHG-9",
		Author: freeze.Author{Email: "root@example.com", Subject: "root"}})
	if err != nil {
		t.Fatal(err)
	}
	dee, ada := persona(t, "deployer (scoped)"), persona(t, "superadmin (admin claim)")
	rollback := func(ns string) string { return "/v1/deploy/web/rollback?cluster=in-cluster&namespace=" + ns }
	sync := func(ns string) string { return "/v1/deploy/web/sync?cluster=in-cluster&namespace=" + ns }
	const opens = "frozen until 2026-07-01 13:00 UTC by root@example.com (sub root): release week (https://tickets.example.com/CHG-9)"

	for _, tc := range []struct {
		name         string
		id           auth.Identity
		target, body string
		status       int
		want         string // in the JSON error, or the record's message
		call         string // the release call made, "" none
		record       audit.Outcome
	}{
		{"deployer's rollback", dee, rollback("apps"), `{"version": "1.1.0"}`, http.StatusConflict, opens, "", audit.OutcomeRefused},
		{"deployer's sync", dee, sync("apps"), ``, http.StatusConflict, opens, "", audit.OutcomeRefused},
		{"superadmin's rollback without break-glass", ada, rollback("apps"), `{"version": "1.1.0"}`, http.StatusConflict, opens, "", audit.OutcomeRefused},
		{"deployer's break-glass", dee, rollback("apps"), `{"version": "1.1.0", "breakGlass": {"reason": "hotfix"}}`, http.StatusConflict, "only a superadmin may break the glass: " + opens, "", audit.OutcomeRefused},
		{"superadmin's break-glass with a blank reason", ada, sync("apps"), `{"breakGlass": {"reason": "  "}}`, http.StatusConflict, opens, "", audit.OutcomeRefused},
		{"superadmin's break-glass rollback", ada, rollback("apps"), `{"version": "1.1.0", "breakGlass": {"reason": "CVE-2026-1 hotfix"}}`, http.StatusOK,
			"break-glass by ada@example.com (sub ada): CVE-2026-1 hotfix (overrode freeze " + f.ID + ", " + opens + "); rolled back", "rollback apps/web 1.1.0", audit.OutcomeSucceeded},
		{"superadmin's break-glass sync", ada, sync("apps"), `{"breakGlass": {"reason": "CVE-2026-1 hotfix"}}`, http.StatusOK,
			"break-glass by ada@example.com (sub ada): CVE-2026-1 hotfix", "sync apps/web", audit.OutcomeSucceeded},
		{"deployer's rollback outside the freeze", dee, rollback("infra"), `{"version": "1.1.0"}`, http.StatusForbidden, "", "", ""},
		{"superadmin's rollback outside the freeze", ada, rollback("infra"), `{"version": "1.1.0"}`, http.StatusOK, "rolled back", "rollback infra/web 1.1.0", audit.OutcomeSucceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rel.got())
			recsBefore := len(records(t, store))
			ts.auth.id = &tc.id
			w := ts.do(t, request{method: http.MethodPost, target: tc.target, admin: true, body: tc.body,
				header: map[string]string{"Content-Type": "application/json"}})
			if w.Code != tc.status {
				t.Fatalf("POST %s = %d %s, want %d", tc.target, w.Code, w.Body, tc.status)
			}
			if tc.status == http.StatusConflict {
				var e struct{ Error, Reason string }
				if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Reason != "frozen" || !strings.HasPrefix(e.Error, tc.want) {
					t.Errorf("POST %s = %s, want reason frozen and error %q...", tc.target, w.Body, tc.want)
				}
			}
			calls := rel.got()[before:]
			if got := strings.Join(calls, ","); got != tc.call {
				t.Errorf("release calls = %q, want %q", got, tc.call)
			}
			recs := records(t, store)
			if tc.record == "" {
				return
			}
			if len(recs) != recsBefore+1 {
				t.Fatalf("%d records after, %d before, want one more", len(recs), recsBefore)
			}
			if r := recs[0]; r.Outcome != tc.record || !strings.Contains(r.Message, tc.want) || r.App != "web" {
				t.Errorf("record = %s %q (app %s), want %s containing %q", r.Outcome, r.Message, r.App, tc.record, tc.want)
			}
			wantBG := ""
			if strings.HasPrefix(tc.want, "break-glass by ") {
				wantBG = "CVE-2026-1 hotfix"
			}
			if r := recs[0]; r.BreakGlass != wantBG {
				t.Errorf("record's breakGlass = %q, want %q", r.BreakGlass, wantBG)
			}
		})
	}

	clock.set(f.End) // the freeze lapses by itself: nothing is written
	ts.auth.id = &dee
	if w := ts.do(t, request{method: http.MethodPost, target: rollback("apps"), admin: true, body: `{"version": "1.1.0"}`,
		header: map[string]string{"Content-Type": "application/json"}}); w.Code != http.StatusOK {
		t.Errorf("deployer's rollback at the freeze's end = %d %s, want 200", w.Code, w.Body)
	}
}

// TestFreezeAPI: only a superadmin creates and ends freezes (a deployer
// gets 403); a hostile ticket is refused naming the field; a freeze's
// create and end are audit records; everyone reads the list.
func TestFreezeAPI(t *testing.T) {
	ts, _, store, gate, _ := freezeServer(t)
	dee, ada, vera := persona(t, "deployer (scoped)"), persona(t, "superadmin (admin claim)"), persona(t, "viewer")
	body := func(ticket string) string {
		return `{"scope": {"environments": ["prod"]}, "start": "2026-07-01T11:00:00Z", "end": "2026-07-01T18:00:00Z", "reason": "release <script>alert(1)</script>", "ticket": "` + ticket + `"}`
	}
	post := func(id auth.Identity, b string) *httptest.ResponseRecorder {
		ts.auth.id = &id
		return ts.do(t, request{method: http.MethodPost, target: "/v1/deploy/freezes", admin: true, body: b, header: map[string]string{"Content-Type": "application/json"}})
	}
	if w := post(dee, body("https://t.example.com/1")); w.Code != http.StatusForbidden {
		t.Errorf("deployer POST /v1/deploy/freezes = %d, want 403", w.Code)
	}
	for _, tc := range []struct{ ticket, want string }{
		{"javascript:alert(1)", "only http(s) links"},
		{`https://t.example.com/\"><script>`, "has characters a link does not"},
	} {
		if w := post(ada, body(tc.ticket)); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("POST a freeze with ticket %q = %d %s, want 400 %q", tc.ticket, w.Code, w.Body, tc.want)
		}
	}
	if w := post(ada, `{"scope": {"environments": ["prod"]}, "start": "2026-07-01T11:00:00Z", "end": "2026-07-20T18:00:00Z", "reason": "long"}`); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "more than 14 days") {
		t.Errorf("POST a 19-day freeze = %d %s, want 400 more than 14 days", w.Code, w.Body)
	}
	if w := post(ada, `{"scope": {"environments": ["prod"]}, "start": "2026-07-01T11:00:00Z", "end": "2026-07-01T18:00:00Z", "reason": "x", "id": "fz-mine"}`); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "set by the server") {
		t.Errorf("POST a freeze with its own id = %d %s, want 400", w.Code, w.Body)
	}
	w := post(ada, body("https://t.example.com/CHG-1"))
	if w.Code != http.StatusCreated {
		t.Fatalf("POST a freeze = %d %s, want 201", w.Code, w.Body)
	}
	var created freezeJSON
	if err := json.Unmarshal(w.Body.Bytes(), &created); err != nil || created.ID == "" || created.State != stateActive || created.Author.Email != "ada@example.com" {
		t.Fatalf("POST a freeze = %s, want an active freeze by ada", w.Body)
	}
	recs := records(t, store)
	if len(recs) != 1 || recs[0].Verb != audit.VerbFreeze || recs[0].Actor.Email != "ada@example.com" || !strings.Contains(recs[0].Message, created.ID) {
		t.Fatalf("records = %+v, want one freeze record by ada naming %s", recs, created.ID)
	}

	// Everyone reads them; the page escapes the reason and draws no
	// create form or end button for a viewer.
	ts.auth.id = &vera
	w = ts.do(t, request{target: "/v1/deploy/freezes", admin: true})
	var list freezesJSON
	if err := json.Unmarshal(w.Body.Bytes(), &list); w.Code != http.StatusOK || err != nil || len(list.Active) != 1 || list.Active[0].ID != created.ID {
		t.Errorf("viewer GET /v1/deploy/freezes = %d %s, want the active freeze", w.Code, w.Body)
	}
	w = ts.do(t, request{target: "/freezes", admin: true})
	doc := parseHTML(t, w.Body.String())
	if w.Code != http.StatusOK || len(byTestID(doc, "freeze-row")) != 1 || drawsAction(doc, "freeze") || strings.Contains(w.Body.String(), "<script>alert") {
		t.Errorf("viewer GET /freezes = %d: %d rows, freeze buttons %v, raw script %v; want 1 row, no buttons, escaped",
			w.Code, len(byTestID(doc, "freeze-row")), drawsAction(doc, "freeze"), strings.Contains(w.Body.String(), "<script>alert"))
	}
	if links := byTestID(doc, "freeze-ticket"); len(links) != 1 || attr(links[0], "href") != "https://t.example.com/CHG-1" {
		t.Errorf("viewer GET /freezes: ticket links %d, want one to the ticket", len(links))
	}
	ts.auth.id = &ada
	if doc := parseHTML(t, ts.do(t, request{target: "/freezes", admin: true}).Body.String()); len(byTestID(doc, "freeze-create")) != 1 || len(byTestID(doc, "freeze-end")) != 1 {
		t.Errorf("superadmin GET /freezes: want the create form and one end-now button")
	}

	ts.auth.id = &dee
	if w := ts.do(t, request{method: http.MethodDelete, target: "/v1/deploy/freezes/" + created.ID, admin: true}); w.Code != http.StatusForbidden {
		t.Errorf("deployer DELETE = %d, want 403", w.Code)
	}
	ts.auth.id = &ada
	if w := ts.do(t, request{method: http.MethodDelete, target: "/v1/deploy/freezes/" + created.ID, admin: true}); w.Code != http.StatusOK {
		t.Fatalf("superadmin DELETE = %d %s, want 200", w.Code, w.Body)
	}
	if w := ts.do(t, request{method: http.MethodDelete, target: "/v1/deploy/freezes/" + created.ID, admin: true}); w.Code != http.StatusNotFound {
		t.Errorf("DELETE of an ended freeze = %d, want 404", w.Code)
	}
	if recs := records(t, store); len(recs) != 2 || recs[0].Verb != audit.VerbUnfreeze || !strings.Contains(recs[0].Message, created.ID) ||
		!strings.HasPrefix(recs[0].Message, "["+created.ID+"@"+created.Start.UTC().Format(time.RFC3339)+"] ") {
		t.Errorf("records = %+v, want an unfreeze record naming %s, starting with the key of the window it ended", recs, created.ID)
	}
	// What it froze stays: the freeze is past, ended now.
	w = ts.do(t, request{target: "/v1/deploy/freezes", admin: true})
	list = freezesJSON{}
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || len(list.Active) != 0 || len(list.Past) != 1 || list.Past[0].ID != created.ID || !list.Past[0].End.Equal(gate.Now()) {
		t.Errorf("GET /v1/deploy/freezes after End now = %s, want it past, ended at %s", w.Body, gate.Now())
	}
}

// TestFreezeForm: the /freezes form creates a freeze (303 back to the
// page), and a refusal redraws the form with what was typed and the
// reason.
func TestFreezeForm(t *testing.T) {
	ts, _, _, gate, _ := freezeServer(t)
	ada := persona(t, "superadmin (admin claim)")
	ts.auth.id = &ada
	form := "environments=prod&start=2026-07-01T18:00&end=2026-07-01T22:00&reason=nightly+batch&ticket=http%3A%2F%2Ft.example.com%2F2"
	w := ts.do(t, request{method: http.MethodPost, target: "/freezes", admin: true, body: form, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("POST /freezes = %d %s, want 303", w.Code, w.Body)
	}
	l, err := gate.Store().List(t.Context())
	if err != nil || len(l) != 1 || l[0].Reason != "nightly batch" || !l[0].Start.Equal(time.Date(2026, 7, 1, 18, 0, 0, 0, time.UTC)) || l[0].Ticket != "http://t.example.com/2" {
		t.Fatalf("stored = %+v, %v, want the nightly batch freeze from 18:00 UTC", l, err)
	}
	bad := "environments=prod&start=2026-07-01T18:00&end=2026-07-30T22:00&reason=too+long"
	w = ts.do(t, request{method: http.MethodPost, target: "/freezes", admin: true, body: bad, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	doc := parseHTML(t, w.Body.String())
	if errs := byTestID(doc, "freeze-form-error"); w.Code != http.StatusBadRequest || len(errs) != 1 || !strings.Contains(text(errs[0]), "more than 14 days") {
		t.Errorf("POST /freezes of 29 days = %d, want 400 with the form's error", w.Code)
	}
}

// TestFreezePages: a frozen App's page shows the banner with the reason,
// the ticket and the opening time; a deployer's write buttons are
// disabled with the freeze's words, a superadmin's sync asks for a
// break-glass reason; the fleet marks the frozen row and ?frozen=true
// lists only it, with the banner; a freeze a few hours ahead is a notice.
func TestFreezePages(t *testing.T) {
	ts, _, _, gate, _ := freezeServer(t)
	if _, err := gate.Store().Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Namespaces: []string{"apps"}},
		Start: testNow.Add(-time.Hour), End: testNow.Add(time.Hour), Reason: "release <b>week</b>", Ticket: "https://tickets.example.com/CHG-9",
		Author: freeze.Author{Email: "root@example.com", Subject: "root"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := gate.Store().Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Namespaces: []string{"infra"}},
		Start: testNow.Add(3 * time.Hour), End: testNow.Add(5 * time.Hour), Reason: "network maintenance",
		Author: freeze.Author{Subject: "root"}}); err != nil {
		t.Fatal(err)
	}
	rows := []kubeview.AppRow{{Name: "web", Namespace: "apps", Cluster: "in-cluster"}, {Name: "web", Namespace: "infra", Cluster: "in-cluster"}}
	ts.view.mu.Lock()
	ts.view.page = kubeview.Page{Rows: rows, Matched: len(rows), Counts: countsOf(rows), Version: 42}
	ts.view.mu.Unlock()
	dee, ada := persona(t, "deployer (scoped)"), persona(t, "superadmin (admin claim)")

	ts.auth.id = &dee
	w := ts.get(t, "/clusters/in-cluster/apps/apps/web", nil)
	doc := parseHTML(t, w.Body.String())
	banner := byTestID(doc, "freeze-banner")
	if w.Code != http.StatusOK || len(banner) != 1 || !strings.Contains(text(banner[0]), "Frozen until 2026-07-01 13:00 UTC") ||
		!strings.Contains(text(banner[0]), "release <b>week</b>") || strings.Contains(w.Body.String(), "<b>week") {
		t.Fatalf("deployer GET frozen app page = %d, banner %v, want the banner with the escaped reason and the opening time", w.Code, len(banner))
	}
	if links := byTestID(doc, "freeze-banner-ticket"); len(links) != 1 || attr(links[0], "href") != "https://tickets.example.com/CHG-9" {
		t.Errorf("banner ticket links = %d, want one to the ticket", len(links))
	}
	if b := byTestID(doc, "sync-frozen"); len(b) != 1 || !hasAttr(b[0], "disabled") || !strings.Contains(attr(b[0], "title"), "frozen until") {
		t.Errorf("deployer's sync button on a frozen app: %d disabled buttons, want one with the freeze's words", len(b))
	}
	if len(byTestID(doc, "sync-button")) != 0 || len(byTestID(doc, "rollback-button")) != 0 {
		t.Errorf("deployer's page on a frozen app draws an enabled sync or rollback button")
	}

	ts.auth.id = &ada
	doc = parseHTML(t, ts.get(t, "/clusters/in-cluster/apps/apps/web", nil).Body.String())
	if len(byTestID(doc, "sync-button")) != 1 || len(byTestID(doc, "sync-break-glass-reason")) != 1 {
		t.Errorf("superadmin's page on a frozen app: want the sync button with a break-glass reason field")
	}
	confirm := parseHTML(t, ts.get(t, "/clusters/in-cluster/apps/apps/web/rollback?version=1.1.0", htmxHeader).Body.String())
	if len(byTestID(confirm, "break-glass-reason")) != 1 {
		t.Errorf("superadmin's rollback confirmation on a frozen app: want the break-glass reason field")
	}
	doc = parseHTML(t, ts.get(t, "/clusters/in-cluster/apps/infra/web", nil).Body.String())
	if n := byTestID(doc, "freeze-notice"); len(n) != 1 || !strings.Contains(text(n[0]), "network maintenance") || len(byTestID(doc, "freeze-banner")) != 0 {
		t.Errorf("app page 3h before its freeze: %d notices, want one, and no banner", len(n))
	}

	doc = parseHTML(t, ts.get(t, "/", nil).Body.String())
	chips := byTestID(doc, "frozen-chip")
	if len(chips) != 1 || len(byTestID(doc, "freeze-banner")) != 0 {
		t.Errorf("fleet: %d frozen chips and %d banners, want one chip (apps/web) and no banner unfiltered", len(chips), len(byTestID(doc, "freeze-banner")))
	}
	w = ts.get(t, "/?frozen=true", nil)
	doc = parseHTML(t, w.Body.String())
	shown := byTestID(doc, "app-row")
	if w.Code != http.StatusOK || len(shown) != 1 || attr(shown[0], "data-namespace") != "apps" || len(byTestID(doc, "freeze-banner")) != 1 {
		t.Errorf("GET /?frozen=true = %d, %d rows, want apps/web alone with the banner", w.Code, len(shown))
	}
	if w := ts.get(t, "/?frozen=maybe", nil); w.Code != http.StatusBadRequest {
		t.Errorf("GET /?frozen=maybe = %d, want 400", w.Code)
	}
}

// TestFreezeOfAnEnvironmentSparesOtherApps: an App that no environment
// deploys is not held by a freeze of environment prod (an unknown
// environment is not "every environment" here), and is held by one of
// every environment ('*').
func TestFreezeOfAnEnvironmentSparesOtherApps(t *testing.T) {
	ts, rel, _, gate, _ := freezeServer(t)
	dee := persona(t, "deployer (scoped)")
	add := func(envs ...string) freeze.Freeze {
		t.Helper()
		f, err := gate.Store().Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Environments: envs}, Start: testNow.Add(-time.Hour), End: testNow.Add(time.Hour),
			Reason: "freeze of " + strings.Join(envs, ","), Author: freeze.Author{Subject: "root"}})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	sync := func() int {
		ts.auth.id = &dee
		return ts.do(t, request{method: http.MethodPost, target: "/v1/deploy/web/sync?cluster=in-cluster&namespace=apps", admin: true}).Code
	}
	prod := add("prod")
	if got := sync(); got != http.StatusOK || len(rel.got()) != 1 {
		t.Errorf("sync of an App in no environment under a freeze of prod = %d (%d calls), want 200", got, len(rel.got()))
	}
	if _, err := gate.Store().Remove(t.Context(), prod.ID); err != nil {
		t.Fatal(err)
	}
	add("*")
	if got := sync(); got != http.StatusConflict {
		t.Errorf("sync of an App in no environment under a freeze of every environment = %d, want 409", got)
	}
}

// TestFreezeStoreFullPrunesOldFreezes: when the store is full, freezes
// that ended more than a day ago (no page lists them) make room for a new
// one; a store full of live freezes refuses it with 409.
func TestFreezeStoreFullPrunesOldFreezes(t *testing.T) {
	ts, _, _, gate, clock := freezeServer(t)
	ada := persona(t, "superadmin (admin claim)")
	old := testNow.Add(-72 * time.Hour)
	clock.set(old)
	for i := range freeze.MaxFreezes {
		if _, err := gate.Store().Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Environments: []string{"prod"}}, Start: old, End: old.Add(time.Duration(i+1) * time.Minute),
			Reason: "old", Author: freeze.Author{Subject: "root"}}); err != nil {
			t.Fatal(err)
		}
	}
	clock.set(testNow)
	ts.auth.id = &ada
	body := `{"scope": {"environments": ["prod"]}, "start": "2026-07-01T11:00:00Z", "end": "2026-07-01T18:00:00Z", "reason": "new"}`
	w := ts.do(t, request{method: http.MethodPost, target: "/v1/deploy/freezes", admin: true, body: body, header: map[string]string{"Content-Type": "application/json"}})
	if w.Code != http.StatusCreated {
		t.Fatalf("POST a freeze into a store full of old freezes = %d %s, want 201", w.Code, w.Body)
	}
	if l, err := gate.Store().List(t.Context()); err != nil || len(l) != 1 || l[0].Reason != "new" {
		t.Errorf("stored after the prune = %d freezes (%v), want the new one alone", len(l), err)
	}
	for range freeze.MaxFreezes - 1 {
		if _, err := gate.Store().Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Environments: []string{"prod"}}, Start: testNow, End: testNow.Add(time.Hour),
			Reason: "live", Author: freeze.Author{Subject: "root"}}); err != nil {
			t.Fatal(err)
		}
	}
	if w := ts.do(t, request{method: http.MethodPost, target: "/v1/deploy/freezes", admin: true, body: body, header: map[string]string{"Content-Type": "application/json"}}); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "the store is full") {
		t.Errorf("POST into a store full of live freezes = %d %s, want 409 full", w.Code, w.Body)
	}
}
