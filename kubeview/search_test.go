package kubeview_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/search"
)

// searchApps collects what SearchApps yields for a query of no terms
// (every App), by "namespace/name".
func searchApps(c *kubeview.Cache) (order []string, objs map[string][]search.Object) {
	objs = map[string][]search.Object{}
	c.SearchApps(&search.Query{}, func(a search.App) bool {
		k := a.Namespace + "/" + a.Name
		order = append(order, k)
		objs[k] = a.Objects
		return true
	})
	return order, objs
}

func findObject(objs []search.Object, kind, name string) (search.Object, bool) {
	i := slices.IndexFunc(objs, func(o search.Object) bool { return o.Kind == kind && o.Name == name })
	if i < 0 {
		return search.Object{}, false
	}
	return objs[i], true
}

// waitTouched waits (up to 30s) until the cache reports key recomputed:
// its row and its search objects are then current.
func waitTouched(t *testing.T, c *kubeview.Cache, key string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if slices.Contains(c.TakeTouched(), key) {
			return
		}
		select {
		case <-c.Touched():
		case <-deadline:
			t.Fatalf("%s not recomputed within 30s", key)
		}
	}
}

// TestSearchApps: the search index yields every App in the list's order
// with its tree's objects (the App first, its workloads, pods with their
// images), and follows the watch: a ConfigMap created with labels the
// cache itself strips is found with them, and leaves the index when it is
// deleted.
func TestSearchApps(t *testing.T) {
	env := newTestEnv(t, []string{"prod", "shop"}, fixApp{ns: "shop", name: "web"}, fixApp{ns: "prod", name: "api"})
	c := env.cache
	order, objs := searchApps(c)
	if want := []string{"prod/api", "shop/web"}; !slices.Equal(order, want) {
		t.Fatalf("SearchApps order = %q, want %q", order, want)
	}
	web := objs["shop/web"]
	if len(web) == 0 || web[0].Kind != appcr.Kind.Kind || web[0].Name != "web" || !slices.Equal(web[0].Images, []string{"registry.test/web:1.2.0"}) {
		t.Errorf("shop/web's first object = %+v, want the App with its image", web)
	}
	// The refs the search's results are shown with (built from the
	// object and the App's namespace, see handlers/fleet_search.go) are
	// the tree's, in its order.
	tree, err := c.Tree("shop", "web")
	if err != nil {
		t.Fatal(err)
	}
	var treeRefs, searchRefs []string
	for _, n := range tree.Nodes {
		treeRefs = append(treeRefs, n.Ref)
	}
	for _, o := range web {
		searchRefs = append(searchRefs, kubeview.Ref{Group: o.Group, Kind: o.Kind, Namespace: "shop", Name: o.Name}.String())
	}
	if d := cmp.Diff(treeRefs, searchRefs); d != "" || !slices.Contains(searchRefs, "apps:Deployment:shop:web") {
		t.Errorf("shop/web's search objects' refs (-tree +search):\n%s", d)
	}
	pods := 0
	for _, o := range web {
		if o.Kind == "Pod" {
			pods++
			if !slices.Equal(o.Images, []string{"registry.test/web:1.2.0"}) {
				t.Errorf("pod %s images = %q, want the running image", o.Name, o.Images)
			}
			if o.Labels[appcr.InstanceLabel] != "web" || o.Labels[appcr.NameLabel] != "web" {
				t.Errorf("pod %s labels = %v, want the instance and name labels (kept for the search)", o.Name, o.Labels)
			}
		}
	}
	if pods != 3 {
		t.Errorf("shop/web has %d pods in the index, want 3", pods)
	}
	c.TakeTouched()

	app, err := c.LookupApp("shop", "web")
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-settings",
		Labels:          map[string]string{"tier": "frontend", appcr.InstanceLabel: "web"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: appcr.GroupVersion.String(), Kind: appcr.Kind.Kind, Name: "web", UID: app.GetUID()}}},
		Data: map[string]string{"k": "v"}}
	if _, err := env.cs.CoreV1().ConfigMaps("shop").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTouched(t, c, "shop/web")
	_, objs = searchApps(c)
	got, ok := findObject(objs["shop/web"], "ConfigMap", "web-settings")
	if !ok || got.Labels["tier"] != "frontend" || got.Group != "" {
		t.Fatalf("after creating a ConfigMap: %+v, %v; want it with label tier=frontend", got, ok)
	}
	if _, ok := findObject(objs["prod/api"], "ConfigMap", "web-settings"); ok {
		t.Errorf("prod/api holds shop's ConfigMap")
	}

	if err := env.cs.CoreV1().ConfigMaps("shop").Delete(t.Context(), "web-settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTouched(t, c, "shop/web")
	if _, objs = searchApps(c); len(objs["shop/web"]) == 0 {
		t.Fatal("shop/web left the index when its ConfigMap was deleted")
	} else if o, ok := findObject(objs["shop/web"], "ConfigMap", "web-settings"); ok {
		t.Errorf("deleted ConfigMap still indexed: %+v", o)
	}
}

// TestSearchAppsStops: SearchApps stops when yield says so.
func TestSearchAppsStops(t *testing.T) {
	env := newTestEnv(t, []string{"prod"}, fixApp{ns: "prod", name: "a"}, fixApp{ns: "prod", name: "b"}, fixApp{ns: "prod", name: "c"})
	n := 0
	env.cache.SearchApps(&search.Query{}, func(search.App) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("SearchApps yielded %d Apps after yield returned false at the 2nd, want 2", n)
	}
}
