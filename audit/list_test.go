package audit

import (
	"math/rand/v2"

	"fmt"
	corev1 "k8s.io/api/core/v1"
	"runtime"
	"testing"
	"time"
)

func TestIndexList(t *testing.T) {
	s := testStore(t)
	// Two streams, interleaved in time: staging at :00, :02, ... and
	// prod at :01, :03, ...; in prod every third is a refused rollback by
	// Bob.
	staging := buildChain(t, s, testRecord("eu", "staging", testTime()), 10, func(i int, r *Record) {
		r.Time = testTime().Add(time.Duration(2*i) * time.Minute)
	})
	prod := buildChain(t, s, testRecord("eu", "prod", testTime()), 10, func(i int, r *Record) {
		r.Time = testTime().Add(time.Duration(2*i+1) * time.Minute)
		if i%3 == 0 {
			r.Verb, r.Outcome, r.Actor = VerbRollback, OutcomeRefused, Actor{Email: "Bob@Example.com", Subject: "u-bob"}
		}
	})
	ix := indexOf(staging, prod)
	ids := func(p Page) []string {
		var out []string
		for _, r := range p.Records {
			out = append(out, r.ID)
		}
		return out
	}
	sid := func(seq int64) string { return recordID(staging.stream, seq) }
	pid := func(seq int64) string { return recordID(prod.stream, seq) }
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"newest first", Filter{Limit: 4}, []string{pid(10), sid(10), pid(9), sid(9)}},
		{"environment", Filter{Environment: "staging", Limit: 3}, []string{sid(10), sid(9), sid(8)}},
		{"verb", Filter{Verb: VerbRollback}, []string{pid(10), pid(7), pid(4), pid(1)}},
		{"outcome and environment", Filter{Outcome: OutcomeRefused, Environment: "staging"}, nil},
		{"actor, any case", Filter{Actor: "bob@example.COM"}, []string{pid(10), pid(7), pid(4), pid(1)}},
		{"actor subject is not the email", Filter{Actor: "u-bob"}, nil},
		{"cluster", Filter{Cluster: "us"}, nil},
		{"app", Filter{App: "web"}, nil},
		{"namespace", Filter{Namespace: "shop"}, nil},
		{"since", Filter{Since: testTime().Add(16 * time.Minute)}, []string{pid(10), sid(10), pid(9), sid(9)}},
		{"until", Filter{Until: testTime().Add(2 * time.Minute), Limit: 10}, []string{sid(2), pid(1), sid(1)}},
		{"since and until", Filter{Since: testTime().Add(5 * time.Minute), Until: testTime().Add(7 * time.Minute)}, []string{pid(4), sid(4), pid(3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ix.list(tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p); !equalStrings(got, tt.want) {
				t.Errorf("list(%+v) = %v, want %v", tt.f, got, tt.want)
			}
			for _, r := range p.Records {
				if r.Chain == nil || !r.Chain.OK {
					t.Errorf("list(%+v): record %s chain = %+v, want ok", tt.f, r.ID, r.Chain)
				}
			}
		})
	}
}

func TestIndexListPages(t *testing.T) {
	s := testStore(t)
	a := buildChain(t, s, testRecord("eu", "staging", testTime()), 23, nil)
	b := buildChain(t, s, testRecord("eu", "prod", testTime()), 23, nil) // same times: ties broken by name
	ix := indexOf(a, b)
	for _, limit := range []int{1, 5, 7, 46, 100} {
		var got []string
		f := Filter{Limit: limit}
		pages := 0
		for {
			p, err := ix.list(f)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(p.Records) > limit {
				t.Fatalf("limit %d: page of %d", limit, len(p.Records))
			}
			for _, r := range p.Records {
				got = append(got, r.ID)
			}
			if p.Continue == "" {
				break
			}
			f.Continue = p.Continue
		}
		all, _ := ix.list(Filter{Limit: MaxLimit})
		want := ids(all)
		if !equalStrings(got, want) || len(got) != 46 {
			t.Errorf("limit %d: pages gave %d records %v, want the 46 of one page %v", limit, len(got), got, want)
		}
		if wantPages := (46 + limit - 1) / limit; pages != wantPages && pages != wantPages+1 {
			t.Errorf("limit %d: %d pages, want %d", limit, pages, wantPages)
		}
	}
	if _, err := ix.list(Filter{Continue: "garbage"}); err == nil {
		t.Errorf("list with a garbage continue token: nil error")
	}
}

func ids(p Page) []string {
	var out []string
	for _, r := range p.Records {
		out = append(out, r.ID)
	}
	return out
}

// BenchmarkIndexListFirstPage measures the audit page's read: the first
// page (50) of 10,000 records in 50 streams, newest first, each chain
// link verified, unfiltered and filtered to one environment. The index
// is filled directly with the heads Append would write (the informer that
// fills it in production is not timed).
func BenchmarkIndexListFirstPage(b *testing.B) {
	s := testStore(b)
	chains := make([]*testChain, 50)
	for i := range chains {
		chains[i] = buildChain(b, s, testRecord("eu", fmt.Sprintf("env-%02d", i), testTime().Add(time.Duration(i)*time.Second)), 200, nil)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := indexOf(chains...)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := len(ix.records); n != 10000 {
		b.Fatalf("index holds %d records, want 10000", n)
	}
	// What the index adds per record (its parsed entries; the informer's
	// own copy of each head's metadata comes on top).
	perRecord := float64(after.HeapAlloc-before.HeapAlloc) / 10000
	for _, bc := range []struct {
		name string
		f    Filter
	}{
		{"all", Filter{}},
		{"one-environment", Filter{Environment: "env-07"}},
		{"rare-verb", Filter{Verb: VerbRollback}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ix.list(bc.f); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(perRecord, "index-bytes/record")
		})
	}
	// An informer event: a record replaced (drop and insert in order).
	b.Run("update", func(b *testing.B) {
		h := chains[7].heads[100]
		for b.Loop() {
			ix.put(h)
		}
	})
}

func TestIndexStaysSorted(t *testing.T) {
	s := testStore(t)
	var heads []*entry
	var cms []*corev1.ConfigMap
	for i := range 4 {
		c := buildChain(t, s, testRecord("eu", fmt.Sprintf("env-%d", i), testTime().Add(time.Duration(i%2)*time.Minute)), 25, nil)
		cms = append(cms, c.heads...)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	ix := newIndex(testSigner())
	for _, i := range rng.Perm(len(cms)) {
		ix.put(cms[i])
	}
	for _, i := range rng.Perm(len(cms))[:40] {
		if i%2 == 0 {
			ix.drop(cms[i])
		} else {
			ix.put(cms[i].DeepCopy()) // replaced by an update
		}
	}
	heads = ix.sorted
	if len(heads) != len(ix.records) {
		t.Fatalf("sorted holds %d entries, records %d", len(heads), len(ix.records))
	}
	for i := 1; i < len(heads); i++ {
		if newestFirst(heads[i-1], heads[i]) >= 0 {
			t.Errorf("sorted[%d] = %s is not before sorted[%d] = %s", i-1, heads[i-1].name, i, heads[i].name)
		}
	}
	for _, e := range heads {
		if ix.records[e.name] != e {
			t.Errorf("sorted holds %s, which records does not", e.name)
		}
	}
}
