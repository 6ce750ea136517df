package search

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeSource yields its Apps in order and counts the Apps it yielded.
type fakeSource struct {
	apps    []App
	yielded int
}

func (f *fakeSource) SearchApps(_ *Query, yield func(App) bool) {
	for _, a := range f.apps {
		f.yielded++
		if !yield(a) {
			return
		}
	}
}

func app(ns, name string, objs ...string) App {
	a := App{Namespace: ns, Name: name}
	for _, o := range objs {
		a.Objects = append(a.Objects, Object{Kind: "ConfigMap", Name: o})
	}
	return a
}

func names(p Page) []string {
	var out []string
	for _, g := range p.Groups {
		for _, o := range g.Objects {
			out = append(out, g.Cluster+"/"+g.App+"/"+o.Name)
		}
	}
	return out
}

func all(string, string, string) bool { return true }

func mustParse(t *testing.T, s string) Query {
	t.Helper()
	q, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestRunGroupsAndPages: results come grouped by App, clusters in order;
// pages follow each other through Next; the last page has no Next.
func TestRunGroupsAndPages(t *testing.T) {
	a := &fakeSource{apps: []App{app("shop", "cart", "cart-cfg", "x"), app("shop", "web", "web-cfg", "web-env")}}
	b := &fakeSource{apps: []App{app("shop", "web", "web-cfg")}}
	members := []Member{{"eu-1", a}, {"us-1", b}}
	q := mustParse(t, "cfg")

	p := Run(members, q, all, 0, 2)
	if d := cmp.Diff([]string{"eu-1/cart/cart-cfg", "eu-1/web/web-cfg"}, names(p)); d != "" {
		t.Errorf("page 1 (-want +got):\n%s", d)
	}
	if len(p.Groups) != 2 || p.Next != 2 || p.Count != 2 || p.Offset != 0 {
		t.Errorf("page 1 = %d groups, next %d, count %d, offset %d; want 2, 2, 2, 0", len(p.Groups), p.Next, p.Count, p.Offset)
	}
	p = Run(members, q, all, p.Next, 2)
	if d := cmp.Diff([]string{"us-1/web/web-cfg"}, names(p)); d != "" {
		t.Errorf("page 2 (-want +got):\n%s", d)
	}
	if p.Next != 0 || p.Capped {
		t.Errorf("page 2: next %d, capped %v, want no next page", p.Next, p.Capped)
	}
}

// TestRunStopsAtThePage: a first page walks the Apps up to its last
// result and one more, not the fleet.
func TestRunStopsAtThePage(t *testing.T) {
	src := &fakeSource{}
	for i := range 1000 {
		src.apps = append(src.apps, app("shop", fmt.Sprintf("app-%04d", i), fmt.Sprintf("app-%04d", i)))
	}
	p := Run([]Member{{"c", src}}, mustParse(t, "app"), all, 0, 10)
	if p.Count != 10 || p.Next != 10 {
		t.Fatalf("Run = count %d, next %d, want 10, 10", p.Count, p.Next)
	}
	if src.yielded != 11 {
		t.Errorf("Run walked %d Apps, want 11 (the page and one more)", src.yielded)
	}
}

// TestRunVisibleAndScope: an App the person may not view gives nothing,
// not even a count; cluster and namespace terms skip whole Apps.
func TestRunVisibleAndScope(t *testing.T) {
	src := &fakeSource{apps: []App{app("pay", "ledger", "ledger-cfg"), app("shop", "web", "web-cfg")}}
	members := []Member{{"eu-1", src}, {"us-1", &fakeSource{apps: []App{app("shop", "web", "web-cfg")}}}}
	onlyShop := func(cluster, ns, app string) bool { return ns == "shop" }
	p := Run(members, mustParse(t, "cfg"), onlyShop, 0, 50)
	if d := cmp.Diff([]string{"eu-1/web/web-cfg", "us-1/web/web-cfg"}, names(p)); d != "" {
		t.Errorf("visible (-want +got):\n%s", d)
	}
	src.yielded = 0
	p = Run(members, mustParse(t, "cfg cluster:us-1"), all, 0, 50)
	if d := cmp.Diff([]string{"us-1/web/web-cfg"}, names(p)); d != "" {
		t.Errorf("cluster:us-1 (-want +got):\n%s", d)
	}
	if src.yielded != 0 {
		t.Errorf("cluster:us-1 walked %d Apps of eu-1, want none", src.yielded)
	}
	p = Run(members, mustParse(t, "cfg ns:pay"), all, 0, 50)
	if d := cmp.Diff([]string{"eu-1/ledger/ledger-cfg"}, names(p)); d != "" {
		t.Errorf("ns:pay (-want +got):\n%s", d)
	}
}

// TestRunCapped: results stop at MaxResults; the last page says so
// instead of offering a next page, and offset and limit are clamped.
func TestRunCapped(t *testing.T) {
	src := &fakeSource{}
	for i := range MaxResults + 20 {
		src.apps = append(src.apps, app("shop", fmt.Sprintf("a-%05d", i), "cfg"))
	}
	members := []Member{{"c", src}}
	q := mustParse(t, "cfg")
	p := Run(members, q, all, MaxResults-MaxLimit, MaxLimit)
	if !p.Capped || p.Next != 0 || p.Count != MaxLimit {
		t.Errorf("last page = capped %v, next %d, count %d; want capped, no next, %d", p.Capped, p.Next, p.Count, MaxLimit)
	}
	p = Run(members, q, all, 1<<30, 1<<30)
	if p.Offset != MaxResults-MaxLimit || p.Count != MaxLimit {
		t.Errorf("huge offset and limit = offset %d, count %d; want %d, %d", p.Offset, p.Count, MaxResults-MaxLimit, MaxLimit)
	}
	p = Run(members, q, all, -5, 0)
	if p.Offset != 0 || p.Count != 1 {
		t.Errorf("negative offset, zero limit = offset %d, count %d; want 0, 1", p.Offset, p.Count)
	}
}
