package e2e

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/demo"
)

// TestAuditHistoryDiffAndCSV: two apply records of the demo's dev
// environment (written to its audit trail with the store the console
// reads, each with the manifests it applied); at 1440x900 and 390x844,
// the environment page's History picks them (from the older, to the
// newer) and the diff page shows the ConfigMap that changed; /audit
// filtered to them is a bookmarkable URL showing exactly them, and its
// CSV download holds their rows.
func TestAuditHistoryDiffAndCSV(t *testing.T) {
	rc := demoEnv.restConfig(t)
	store, err := audit.New(kubernetes.NewForConfigOrDie(rc).CoreV1(), metadata.NewForConfigOrDie(rc), audit.Options{Namespace: demo.HistoryNamespace})
	if err != nil {
		t.Fatal(err)
	}
	cm := func(v string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "e2e-audit-settings", "namespace": "staging"}, "data": map[string]any{"mode": v}}}
	}
	actor := audit.Actor{Email: "e2e-auditor@example.com", Subject: "e2e-auditor", Groups: []string{"platform"}}
	var ids []string
	for i, v := range []string{"before-e2e", "after-e2e"} {
		rec, err := store.Append(context.Background(), audit.Record{Time: time.Now().Add(time.Duration(i) * time.Second), Actor: actor,
			Verb: audit.VerbApply, Cluster: "devcluster", Environment: "dev", Namespace: "staging", Outcome: audit.OutcomeSucceeded,
			Blockers: []string{}, Manifests: []*unstructured.Unstructured{cm(v)}})
		if err != nil {
			t.Fatalf("append an audit record: %v", err)
		}
		ids = append(ids, rec.ID)
	}

	user, pass := demoEnv.user(t, "admin")
	for _, size := range screenSizes() {
		t.Run(size.name, func(t *testing.T) {
			ctx := browser(t)
			login(t, ctx, user, pass)
			emulateScreen(t, ctx, size)

			// Pick the two records on the environment page.
			navigate(t, ctx, "/environments/dev", `[data-testid=audit-history]`)
			waitVisible(t, ctx, `[data-testid=history-compare]`, 30*time.Second)
			openFold(t, ctx, "audit-fold") // folded at load on a phone
			if err := chromedp.Do(ctx,
				chromedp.Click(chromedp.CSS(`[data-testid=history-compare] summary`)),
				chromedp.Click(chromedp.CSS(`[data-testid=pick-row][data-id="`+ids[0]+`"] [data-testid=pick-from]`)),
				chromedp.Click(chromedp.CSS(`[data-testid=pick-row][data-id="`+ids[1]+`"] [data-testid=pick-to]`)),
			); err != nil {
				screenshot(t, ctx, "pick-failed")
				t.Fatal(err)
			}
			screenshot(t, ctx, "history-pick")
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=pick-compare]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=diff-counts]`))); err != nil {
				screenshot(t, ctx, "diff-failed")
				t.Fatal(err)
			}
			url, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
			if !strings.Contains(url, "from="+ids[0]) || !strings.Contains(url, "to="+ids[1]) {
				t.Errorf("diff URL = %s, want from=%s and to=%s", url, ids[0], ids[1])
			}
			res := texts(t, ctx, `[data-testid=diff-resource] summary`)
			if len(res) != 1 || !strings.Contains(res[0], "e2e-audit-settings") || !strings.Contains(res[0], "changed") {
				t.Errorf("diff resources = %q, want the ConfigMap e2e-audit-settings changed", res)
			}
			if body := strings.Join(texts(t, ctx, `[data-testid=diff-resource]`), "\n"); !strings.Contains(body, "before-e2e") || !strings.Contains(body, "after-e2e") {
				t.Errorf("diff = %q, want the old and the new value", body)
			}
			screenshot(t, ctx, "diff")
			if size.phone {
				checkNoSideScroll(t, ctx, "diff-phone")
			}

			// The audit page, filtered: a URL one can bookmark.
			filtered := "/audit?actor=e2e-auditor%40example.com&verb=apply&env=dev"
			navigate(t, ctx, filtered, `[data-testid=audit-results]`)
			rows, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid=audit-row]')).map(r => r.dataset.id)`))
			if strings.Join(rows, ",") != ids[1]+","+ids[0] {
				t.Errorf("/audit filtered rows = %v, want %s, %s", rows, ids[1], ids[0])
			}
			if v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=filter-actor]').value`)); v != "e2e-auditor@example.com" {
				t.Errorf("actor filter after opening the bookmark = %q, want e2e-auditor@example.com", v)
			}
			screenshot(t, ctx, "audit-filtered")
			if size.phone {
				checkNoSideScroll(t, ctx, "audit-phone")
			}

			// Download CSV: the file the link gives, read in the page.
			href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=audit-csv]').href`))
			if !strings.Contains(href, "format=csv") || !strings.Contains(href, "actor=e2e-auditor") {
				t.Errorf("CSV link = %s, want the filters and format=csv", href)
			}
			body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch(document.querySelector('[data-testid=audit-csv]').href).then(r => r.text())`,
				chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
			if err != nil || len(recs) != 3 {
				t.Fatalf("CSV = %d rows, %v; want a header and 2 records:\n%s", len(recs), err, body)
			}
			col := map[string]int{}
			for i, h := range recs[0] {
				col[h] = i
			}
			for i, want := range []string{ids[1], ids[0]} {
				r := recs[i+1]
				if r[col["id"]] != want || r[col["actor_email"]] != actor.Email || r[col["verb"]] != "apply" || r[col["environment"]] != "dev" || r[col["chain_ok"]] != "true" {
					t.Errorf("CSV row %d = %v, want record %s by %s, apply on dev, chain ok", i+1, r, want, actor.Email)
				}
			}
		})
	}
}
