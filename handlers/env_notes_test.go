package handlers

import (
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/web/paths"
)

// TestEnvDiffReleaseNotes: the diff of two records shows the commit
// messages between their commits as Markdown made safe: a hostile message
// (script tags, a javascript: link, an image, raw HTML) comes back with
// none of it live; a diff with live shows no notes.
func TestEnvDiffReleaseNotes(t *testing.T) {
	dir, hashes := gitservertest.LocalCommits(t, "Mallory & Eve",
		"first",
		"**Bold** fix <script>alert('x')</script>\n\n[docs](https://docs.example/x) [evil](javascript:alert(1)) ![t](https://t.example/p.gif)\n\n<img src=x onerror=alert(2)>",
		"third "+strings.Repeat("x", 200))
	cfg, err := envconfig.ParseConfig([]byte(`
environments:
  - name: dev
    cluster: {context: test}
    namespace: staging
    source: {repo: `+dir+`, ref: master, path: k}
    catalog: catalog.json
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10)})
	recs := diffRecords(t)
	a, b := recs["a"], recs["b"]
	a.Commit, b.Commit = hashes[0], hashes[2]
	recs["a"], recs["b"] = a, b
	ts := newTestServer(t, newFakeView(nil), func(o *Options) { o.Environments, o.RecordReader = runner, recs })

	page := ts.get(t, paths.EnvDiff("dev", url.Values{"from": {"a"}, "to": {"b"}}), nil)
	if page.Code != 200 {
		t.Fatalf("diff page a..b = %d\n%s", page.Code, page.Body)
	}
	doc := parseHTML(t, page.Body.String())
	notes := byTestID(doc, "release-note")
	if len(notes) != 2 {
		t.Fatalf("diff page a..b: %d release notes, want 2 (the commits after a's up to b's)", len(notes))
	}
	body := page.Body.String()
	for _, bad := range []string{"<script>alert", "javascript:", "<img", "onerror", "t.example"} {
		if strings.Contains(body, bad) {
			t.Errorf("diff page holds %q from a commit message or author", bad)
		}
	}
	for _, good := range []string{"<strong>Bold</strong>", `<a href="https://docs.example/x" rel="noopener nofollow">docs</a>`, "Mallory &amp; Eve"} {
		if !strings.Contains(body, good) {
			t.Errorf("diff page lacks %q", good)
		}
	}
	// A record and live: no notes.
	live := ts.get(t, paths.EnvDiff("dev", url.Values{"from": {"live"}, "to": {"b"}}), nil)
	if strings.Contains(live.Body.String(), `data-testid="release-notes"`) {
		t.Errorf("diff page live..b shows release notes, want none")
	}
	// A commit the source does not have: the page says so, the diff stays.
	a.Commit = strings.Repeat("b", 40)
	recs["a"] = a
	broken := parseHTML(t, ts.get(t, paths.EnvDiff("dev", url.Values{"from": {"a"}, "to": {"b"}}), nil).Body.String())
	if len(byTestID(broken, "diff-resource")) == 0 || len(byTestID(broken, "release-notes-incomplete")) != 1 {
		t.Errorf("diff page with an unknown from commit: want the diff and notes marked incomplete")
	}
}

// TestEnvHistoryPicksTwoRecords: an environment's History section offers
// a GET form to its diff page with a from and a to per record (newest as
// to, the one before as from); an App's page has none (diffs are per
// environment).
func TestEnvHistoryPicksTwoRecords(t *testing.T) {
	store, _ := newTestAudit(t)
	ts := envServer(t, fake.NewClientset())
	ts.srv.opts.Audit = store
	var ids []string
	for i := range 3 {
		ids = append(ids, appendTest(t, store, audit.Record{Time: testNow.Add(time.Duration(i) * time.Minute), Actor: audit.Actor{Email: "a@example.com"},
			Verb: audit.VerbApply, Cluster: "eu", Environment: "dev"}).ID)
	}
	doc := parseHTML(t, ts.get(t, paths.Env("dev"), nil).Body.String())
	pick := oneByTestID(t, doc, "history-compare")
	form := byTag(pick, "form")
	if len(form) != 1 || attr(form[0], "action") != paths.EnvDiff("dev", nil) || attr(form[0], "method") != "get" {
		t.Fatalf("history compare form = %v, want one GET form to %s", form, paths.EnvDiff("dev", nil))
	}
	var rows, checkedFrom, checkedTo []string
	for _, r := range byTestID(pick, "pick-row") {
		rows = append(rows, attr(r, "data-id"))
		if hasAttr(oneByTestID(t, r, "pick-from"), "checked") {
			checkedFrom = append(checkedFrom, attr(r, "data-id"))
		}
		if hasAttr(oneByTestID(t, r, "pick-to"), "checked") {
			checkedTo = append(checkedTo, attr(r, "data-id"))
		}
	}
	if strings.Join(rows, ",") != ids[2]+","+ids[1]+","+ids[0] || strings.Join(checkedFrom, ",") != ids[1] || strings.Join(checkedTo, ",") != ids[2] {
		t.Errorf("pick rows %v, from %v, to %v; want newest first, from the second, to the newest", rows, checkedFrom, checkedTo)
	}
}

// hasAttr reports whether n carries attribute key (a boolean one).
func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}
