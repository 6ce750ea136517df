package audit

import (
	"fmt"
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
	ix := newIndex()
	for i := range 50 {
		c := buildChain(b, s, testRecord("eu", fmt.Sprintf("env-%02d", i), testTime().Add(time.Duration(i)*time.Second)), 200, nil)
		ix.put(c.headCM())
		for _, h := range c.heads {
			ix.put(h)
		}
	}
	if n := len(ix.records); n != 10000 {
		b.Fatalf("index holds %d records, want 10000", n)
	}
	for _, bc := range []struct {
		name string
		f    Filter
	}{
		{"all", Filter{}},
		{"one-environment", Filter{Environment: "env-07"}},
		{"rare-verb", Filter{Verb: VerbRollback}},
		{"after-a-change", Filter{}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if bc.name == "after-a-change" {
					ix.mu.Lock()
					ix.sorted = nil // as after any informer event
					ix.mu.Unlock()
				}
				if _, err := ix.list(bc.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
