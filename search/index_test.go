package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// genFleet returns n Apps in random order with hostile and ordinary
// objects: names with digits, unicode and runs of dashes, kinds in any
// case (the Kelvin sign and the long s among them), labels whose values
// hold '=' and unicode, images in upper case, unicode and invalid UTF-8.
func genFleet(r *rand.Rand, n int) []App {
	namespaces := []string{"team-a", "team-b", "tëam-ç", "z"}
	kinds := []string{"Pod", "pod", "ConfigMap", "Service", "ſervice", "\u212Aind", "App", "Deployment", "ReplicaSet", "日本"}
	words := []string{"web", "api", "billing", "ünï", "a", "x-y", "--", "cfg", "日本語", "*"}
	images := []string{"registry.test/Web:1.2.0", "nginx:1.25", "ÉCR.example/app:v1", "bad\xffimage", "sidecar:3", "REGISTRY.TEST/api:1.1.0"}
	apps := make([]App, n)
	for i := range n {
		ns := namespaces[r.IntN(len(namespaces))]
		name := fmt.Sprintf("%s-%05d", words[r.IntN(len(words))], i)
		a := App{Namespace: ns, Name: name, Objects: []Object{{Group: "hanzo.ai", Kind: "App", Name: name, Images: []string{images[r.IntN(len(images))]}}}}
		for j := range r.IntN(6) {
			o := Object{Kind: kinds[r.IntN(len(kinds))], Name: fmt.Sprintf("%s-%s-%d", name, words[r.IntN(len(words))], j)}
			if r.IntN(2) == 0 {
				o.Labels = map[string]string{"tier": words[r.IntN(len(words))], "app.kubernetes.io/instance": name}
				if r.IntN(4) == 0 {
					o.Labels["k"] = "a=b"
				}
			}
			if r.IntN(2) == 0 {
				o.Images = []string{images[r.IntN(len(images))], images[r.IntN(len(images))]}
			}
			a.Objects = append(a.Objects, o)
		}
		apps[i] = a
	}
	r.Shuffle(len(apps), func(i, j int) { apps[i], apps[j] = apps[j], apps[i] })
	return apps
}

// sortedApps is apps in key order: what a walk over every App yields.
func sortedApps(apps []App) []App {
	out := slices.Clone(apps)
	slices.SortFunc(out, func(a, b App) int { return compareKeys(a.key(), b.key()) })
	return out
}

// indexQueries are the queries checked against the brute-force walk:
// every field, ordinary and hostile (a glob of the longest query, four
// stars, unicode, the fold cases of kinds, '=' in a label value).
var indexQueries = []string{
	"web", "00042", "-0004", "web-0", "cfg", "ünï", "日本語", "x-y", "--", "a",
	"kind:Pod", "kind:POD", "kind:service", "kind:Service", "kind:kind", "kind:KIND", "kind:日本", "kind:Job",
	"name:web-", "name:billing-0001", "name:*-00042", "name:*cfg*", "name:b*i*l*-0*", "name:****", "name:*",
	"name:ünï-*", "name:*日本語*", "name:*-*-*-*", "name:web-* name:api-*", "name:a-*a*",
	"name:" + strings.Repeat("a*", 4) + strings.Repeat("b", 200),
	"name:" + strings.Repeat("x", 250),
	"ns:team-a", "ns:tëam-ç web", "ns:team-b ns:z kind:Pod", "ns:nowhere",
	"label:tier=web", "label:tier", "label:k=a=b", "label:k=a", "label:app.kubernetes.io/instance=web-00003",
	"label:tier=ünï label:tier=cfg", "label:nope",
	"image:registry.test", "image:ÉCR", "image:écr", "image:ecr", "image:image", "image:d\uFFFDi", "image:1.1.0 kind:ReplicaSet",
	"image:nginx image:sidecar", "image:api:1.1",
	"kind:Pod web label:tier=api", "kind:Service name:*-0000* ns:team-a", "cluster:c web",
	"kind:Deployment kind:ConfigMap name:*-1* cfg",
}

// TestIndexMatchesWalk: a search answered from an Index gives the same
// pages, results in the same order, as one walking every App (the
// reference: each object tested), for every query of indexQueries, at
// several offsets and page sizes, over a fleet built by updates in random
// order with replacements and drops.
func TestIndexMatchesWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 1))
	apps := genFleet(r, 1500)
	var x Index
	live := map[AppKey]App{}
	// Batches of every size, replacements (new objects for a key) and
	// drops, so chunks are split, rebuilt and emptied.
	for rest := apps; len(rest) > 0; {
		n := min(1+r.IntN(300), len(rest))
		batch := slices.Clone(rest[:n])
		rest = rest[n:]
		var drop []AppKey
		for k := range live {
			if r.IntN(20) == 0 {
				drop = append(drop, k)
			}
		}
		for _, k := range drop {
			delete(live, k)
		}
		for i := range batch {
			live[batch[i].key()] = batch[i]
		}
		x.Update(batch, drop)
		checkChunks(t, &x)
	}
	var want []App
	for _, a := range live {
		want = append(want, a)
	}
	want = sortedApps(want)
	ref := []Member{{"c", &fakeSource{apps: want}}}
	idx := []Member{{"c", &x}}

	hit := 0
	for _, s := range indexQueries {
		q := mustParse(t, s)
		if Run(ref, q, all, 0, 1).Count > 0 {
			hit++
		}
		for _, page := range []struct{ offset, limit int }{{0, DefaultLimit}, {0, 1}, {50, DefaultLimit}, {7, 13}, {0, MaxLimit}, {MaxResults - MaxLimit, MaxLimit}} {
			got := Run(idx, q, all, page.offset, page.limit)
			wantPage := Run(ref, q, all, page.offset, page.limit)
			if d := cmp.Diff(wantPage, got); d != "" {
				t.Errorf("Run(%q, offset %d, limit %d) from the index (-walk +index):\n%s", s, page.offset, page.limit, d)
			}
		}
	}
	// The fleet is made so that most queries find something: a table of
	// empty pages would prove little.
	if hit < len(indexQueries)*2/3 {
		t.Errorf("%d of %d queries find something on the generated fleet, want at least 2/3", hit, len(indexQueries))
	}
}

// TestIndexNeverMissesAnApp: for each query and each App with an object
// that matches, the Index yields the App (a digest or a scan may let more
// through, never fewer).
func TestIndexNeverMissesAnApp(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 2))
	apps := genFleet(r, 700)
	var x Index
	x.Update(apps, nil)
	for _, s := range indexQueries {
		q := mustParse(t, s)
		yielded := map[AppKey]bool{}
		x.SearchApps(&q, func(a App) bool { yielded[a.key()] = true; return true })
		for _, a := range apps {
			if !q.MatchApp("c", a.Namespace) || !slices.ContainsFunc(a.Objects, func(o Object) bool { return q.Match(&o) }) {
				continue
			}
			if !yielded[a.key()] {
				t.Errorf("query %q: the index does not yield %s/%s, which has a match", s, a.Namespace, a.Name)
			}
		}
	}
}

// TestIndexSkipsApps: a query that only the last App matches yields that
// App alone (the scan skips the others), and an update that changes one
// App rebuilds its chunk alone: the other chunks are the same.
func TestIndexSkipsApps(t *testing.T) {
	var apps []App
	for i := range 2000 {
		name := fmt.Sprintf("web-%05d", i)
		apps = append(apps, App{Namespace: "shop", Name: name, Objects: []Object{
			{Kind: "App", Name: name, Images: []string{"registry.test/" + name + ":1.2.0"}},
			{Kind: "Pod", Name: name + "-5d8f-abcde", Labels: map[string]string{"app": name}},
		}})
	}
	var x Index
	x.Update(apps, nil)
	checkChunks(t, &x)
	for _, s := range []string{"name:*-01999", "01999", "image:web-01999:", "label:app=web-01999", "name:web-01999", "kind:pod name:*01999-*"} {
		q := mustParse(t, s)
		var got []string
		x.SearchApps(&q, func(a App) bool { got = append(got, a.Name); return true })
		if d := cmp.Diff([]string{"web-01999"}, got); d != "" {
			t.Errorf("SearchApps(%q) yields (-want +got):\n%s", s, d)
		}
	}

	before := slices.Clone(x.chunks)
	changed := apps[1000]
	changed.Objects = []Object{{Kind: "App", Name: changed.Name}, {Kind: "ConfigMap", Name: "moved"}}
	x.Update([]App{changed}, nil)
	if len(x.chunks) != len(before) {
		t.Fatalf("%d chunks after replacing one App, want %d", len(x.chunks), len(before))
	}
	rebuilt := 0
	for i := range before {
		if x.chunks[i] != before[i] {
			rebuilt++
		}
	}
	if rebuilt != 1 {
		t.Errorf("replacing one App rebuilt %d chunks, want 1", rebuilt)
	}
	q := mustParse(t, "name:moved")
	var got []string
	x.SearchApps(&q, func(a App) bool { got = append(got, a.Name); return true })
	if d := cmp.Diff([]string{changed.Name}, got); d != "" {
		t.Errorf("after the update, name:moved yields (-want +got):\n%s", d)
	}
	var keys []AppKey
	for _, a := range apps {
		keys = append(keys, a.key())
	}
	x.Update(nil, keys)
	if len(x.chunks) != 0 {
		t.Errorf("%d chunks after dropping every App, want none", len(x.chunks))
	}
}

// checkChunks checks the index's invariants: no empty chunk, none over
// chunkMax, Apps in strict key order across chunks, each column's
// segments one per App (the App's digest), each held by the column's
// trigram filter.
func checkChunks(t *testing.T, x *Index) {
	t.Helper()
	var prev *AppKey
	for ci, c := range x.chunks {
		if len(c.apps) == 0 || len(c.apps) > chunkMax {
			t.Fatalf("chunk %d holds %d Apps, want 1..%d", ci, len(c.apps), chunkMax)
		}
		for i := range c.apps {
			k := c.apps[i].key()
			if prev != nil && compareKeys(*prev, k) >= 0 {
				t.Fatalf("chunk %d: %v after %v, want strict key order", ci, k, *prev)
			}
			prev = &k
			for f := range c.cols {
				if len(c.cols[f].ends) != len(c.apps) {
					t.Fatalf("chunk %d field %d: %d segments for %d Apps", ci, f, len(c.cols[f].ends), len(c.apps))
				}
				seg := c.cols[f].segment(i)
				if d := digestOf(c.apps[i].Objects)[f]; seg != d {
					t.Fatalf("chunk %d App %v field %d: segment %q, want %q", ci, k, f, seg, d)
				}
				if !c.cols[f].grams.mayHold(seg) {
					t.Fatalf("chunk %d App %v field %d: the trigram filter rules out the App's own segment", ci, k, f)
				}
			}
		}
	}
}

// TestFoldKind: foldKind equal exactly when strings.EqualFold is.
func TestFoldKind(t *testing.T) {
	kinds := []string{"Service", "service", "ſervice", "SERVICE", "Kind", "\u212Aind", "kind", "Pod", "pod", "日本", "\xff", "\xfe", "\uFFFD", ""}
	for _, a := range kinds {
		for _, b := range kinds {
			if got, want := foldKind(a) == foldKind(b), strings.EqualFold(a, b); got != want {
				t.Errorf("foldKind(%q) == foldKind(%q) is %v, strings.EqualFold is %v", a, b, got, want)
			}
		}
	}
}

// TestTrigrams: a chunk's trigram filter holds every substring of its
// text (no false negative, whatever the bytes) and rules out most
// strings it does not hold.
func TestTrigrams(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 3))
	for _, size := range []int{0, 2, 3, 100, 5000, 40000} {
		const alphabet = "abcdefghij-0123456789\n\xff"
		b := make([]byte, size)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		text := string(b)
		g := newTrigrams(text)
		for range 200 {
			if size == 0 {
				break
			}
			i := r.IntN(size)
			j := min(size, i+r.IntN(40))
			if !g.mayHold(text[i:j]) {
				t.Fatalf("size %d: filter rules out %q, a substring of the text", size, text[i:j])
			}
		}
	}
	g := newTrigrams("\nbilling-00001\nbilling-00001-5d8f\n")
	for _, s := range []string{"zzz", "billing-00002", "ünï"} {
		if g.mayHold(s) {
			t.Errorf("filter of two names may hold %q, want ruled out", s)
		}
	}
	if !g.mayHold("") || !g.mayHold("zz") {
		t.Error("a needle under 3 bytes is ruled out, want kept (no trigram to test)")
	}
}
