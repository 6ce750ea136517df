package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// TestSearchTwoRealClusters: a ConfigMap of App web, created in each of
// two real control planes with a label the cache itself does not keep, is
// found by name across both clusters (grouped by cluster and App, each
// hit linking to its resource panel, which opens it), by label, and in one
// cluster with cluster:. The search answers from the caches.
func TestSearchTwoRealClusters(t *testing.T) {
	us, usCluster := startRealCluster(t, "us-east", map[string][]string{"web": {"1.0.0"}, "cart": {"2.0.0"}})
	eu, euCluster := startRealCluster(t, "eu-west", map[string][]string{"web": {"1.0.0"}})
	ts := newTestServer(t, newFakeView(nil), func(o *Options) { o.Clusters = []Cluster{usCluster, euCluster} })

	for _, c := range []*realCluster{us, eu} {
		app := c.app(t, "web")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: realNS, Name: "web-settings",
			Labels:          map[string]string{"team": "storefront"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: appcr.GroupVersion.String(), Kind: appcr.Kind.Kind, Name: "web", UID: app.GetUID()}}},
			Data: map[string]string{"colour": "blue"}}
		if _, err := c.p.Kube.CoreV1().ConfigMaps(realNS).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	find := func(q string) templates.SearchResultsProps {
		t.Helper()
		w := ts.get(t, paths.APISearch(url.Values{"q": {q}}), nil)
		var res templates.SearchResultsProps
		if w.Code != http.StatusOK {
			t.Fatalf("GET search %q = %d %s", q, w.Code, w.Body)
		}
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	where := func(res templates.SearchResultsProps) []string {
		var out []string
		for _, g := range res.Groups {
			for _, o := range g.Objects {
				out = append(out, g.Cluster+"/"+g.Namespace+"/"+g.App+" "+o.Kind+" "+o.Name)
			}
		}
		return out
	}
	// Clusters in name order (the console sorts them), then namespace and
	// App.
	want := []string{"eu-west/shop/web ConfigMap web-settings", "us-east/shop/web ConfigMap web-settings"}
	// The caches see the ConfigMaps through their watches: wait for both
	// (generously; no timing is asserted).
	var got templates.SearchResultsProps
	for deadline := time.Now().Add(2 * time.Minute); ; {
		got = find("kind:ConfigMap name:web-settings")
		if slices.Equal(where(got), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("search kind:ConfigMap name:web-settings = %q, want %q", where(got), want)
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, g := range got.Groups {
		hit := g.Objects[0]
		if hit.URL != paths.AppResource(g.Cluster, realNS, "web", ":ConfigMap:shop:web-settings") {
			t.Errorf("%s: hit URL %q, want the ConfigMap's panel", g.Cluster, hit.URL)
		}
		if w := ts.get(t, hit.URL, nil); w.Code != http.StatusOK || len(byTestID(parseHTML(t, w.Body.String()), "resource-panel")) != 1 {
			t.Errorf("GET %s = %d, want the App page with the ConfigMap's panel", hit.URL, w.Code)
		}
	}
	if r := where(find("label:team=storefront")); !slices.Equal(r, want) {
		t.Errorf("search label:team=storefront = %q, want %q (labels the cache strips are kept for the search)", r, want)
	}
	if r := where(find("web-settings cluster:eu-west")); !slices.Equal(r, want[:1]) {
		t.Errorf("search web-settings cluster:eu-west = %q, want %q", r, want[:1])
	}
	if r := where(find("name:web-settings ns:other")); len(r) != 0 {
		t.Errorf("search in another namespace = %q, want nothing", r)
	}
	if r := where(find("kind:App image:acme/cart")); !slices.Equal(r, []string{"us-east/shop/cart App cart"}) {
		t.Errorf("search kind:App image:acme/cart = %q, want us-east's cart", r)
	}
}
