package audit

import (
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	metafake "k8s.io/client-go/metadata/fake"
)

// TestRefusalsCannotFloodRetention: 210 refused records of an
// environment live in a stream apart from its writes, chained on their
// own (every record sound), so retention trims refusals down to
// DefaultRefusedKeep and leaves the write's record; without the split
// the 210 refusals would trim it (DefaultKeep 200). A refused record
// that an earlier deploy-web chained among the writes stays sound.
func TestRefusalsCannotFloodRetention(t *testing.T) {
	s := testStore(t)
	t0 := testTime()
	applied := buildChain(t, s, testRecord("prod-eu", "dev", t0), 2, func(i int, r *Record) {
		if i == 1 {
			r.Outcome, r.Message = OutcomeRefused, "refused before refused streams"
		}
	})
	ref := testRecord("prod-eu", "dev", t0.Add(time.Hour))
	ref.Outcome, ref.Message = OutcomeRefused, "rollback refused"
	refused := buildChain(t, s, ref, 210, nil)
	if applied.stream == refused.stream {
		t.Fatalf("refused records share stream %s with the writes", applied.stream)
	}
	ix := indexOf(applied, refused)
	for _, e := range ix.records {
		if e.bad != "" {
			t.Errorf("record %s: %s, want sound", e.name, e.bad)
		}
	}
	now := t0.Add(24 * time.Hour)
	got := map[string]int64{}
	for _, ss := range ix.snapshot() {
		got[ss.stream] = trimThrough(ss.entries, Retention{}.forStream(ss.head.Key), now)
	}
	if got[applied.stream] != 0 {
		t.Errorf("the writes' stream is trimmed through %d, want 0 (nothing)", got[applied.stream])
	}
	if want := int64(210 - DefaultRefusedKeep); got[refused.stream] != want {
		t.Errorf("the refusals' stream is trimmed through %d, want %d (the newest %d kept)", got[refused.stream], want, DefaultRefusedKeep)
	}
}

// TestLimiter: a person has Burst refusals, then one per Every; Wait says
// how long; others are not held; memory is bounded by MaxPeople.
func TestLimiter(t *testing.T) {
	now := testTime()
	l := NewLimiter(RefusalLimit{Burst: 3, Every: time.Minute, MaxPeople: 2}, func() time.Time { return now })
	alice, bob, carol := Actor{Email: "Alice@example.com"}, Actor{Subject: "bob"}, Actor{Subject: "carol"}
	for i := range 3 {
		if w := l.Wait(alice); w != 0 {
			t.Fatalf("Wait(alice) after %d refusals = %s, want 0", i, w)
		}
		l.Refused(alice)
	}
	if w := l.Wait(Actor{Email: "alice@example.com"}); w != time.Minute {
		t.Errorf("Wait(alice) after 3 refusals = %s, want 1m (the same person in any case)", w)
	}
	if w := l.Wait(bob); w != 0 {
		t.Errorf("Wait(bob) = %s, want 0: alice's refusals are hers", w)
	}
	now = now.Add(30 * time.Second)
	if w := l.Wait(alice); w != 30*time.Second {
		t.Errorf("Wait(alice) 30s later = %s, want 30s", w)
	}
	now = now.Add(30 * time.Second)
	if w := l.Wait(alice); w != 0 {
		t.Errorf("Wait(alice) a minute later = %s, want 0", w)
	}
	l.Refused(bob)
	l.Refused(carol)
	if n := len(l.people); n > 2 {
		t.Errorf("the limiter tracks %d people, want at most MaxPeople 2", n)
	}
}

// TestAppendCountsRefusals: the store counts each refused record it is
// given against its actor, and no other.
func TestAppendCountsRefusals(t *testing.T) {
	now := testTime()
	l := NewLimiter(RefusalLimit{Burst: 1, Every: time.Hour}, func() time.Time { return now })
	s, err := New(fake.NewClientset().CoreV1(), metafake.NewSimpleMetadataClient(metafake.NewTestScheme()), Options{Namespace: testNS, Key: []byte(testKey), Refusals: l, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ok := testRecord("prod-eu", "dev", now)
	_, _ = s.Append(t.Context(), ok)
	if w := l.Wait(ok.Actor); w != 0 {
		t.Errorf("Wait() after a succeeded record = %s, want 0", w)
	}
	refused := ok
	refused.Outcome, refused.Message = OutcomeRefused, "refused"
	_, _ = s.Append(t.Context(), refused)
	if w := l.Wait(ok.Actor); w <= 0 {
		t.Errorf("Wait() after a refused record with Burst 1 = %s, want a wait", w)
	}
}
