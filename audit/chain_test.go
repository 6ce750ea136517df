package audit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestRecordHash(t *testing.T) {
	raw := []byte(`{"v":1,"stream":"0123456789abcdef","seq":1,"prev":""}`)
	// A golden value (printf 'deploy-web audit record v1\n<raw>' |
	// sha256sum): the rule must not change, or every stored chain breaks.
	const want = "sha256:63f681c6e22d5e653f9a7872a99b4e0cc36867587e67a42dcacd54dcf8ca267d"
	got := recordHash(raw)
	if !strings.HasPrefix(got, "sha256:") || len(got) != len("sha256:")+64 {
		t.Fatalf("recordHash = %q, want sha256:<64 hex>", got)
	}
	if got != want {
		t.Errorf("recordHash(%s) = %s, want %s", raw, got, want)
	}
	if got == sha256Hex(raw) {
		t.Errorf("recordHash = the plain SHA-256 of the bytes, want it domain-separated")
	}
	// Every byte counts: a changed, added or removed byte changes the hash.
	for i := range raw {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		if recordHash(b) == got {
			t.Errorf("recordHash unchanged with byte %d flipped", i)
		}
	}
	if recordHash(append(append([]byte(nil), raw...), ' ')) == got {
		t.Errorf("recordHash unchanged with a trailing space")
	}
}

func TestRecordHashCoversParts(t *testing.T) {
	s := testStore(t)
	r := testRecord("prod-eu", "staging", testTime())
	gz := make([]byte, SplitBytes+10) // over the split threshold: parts
	for i := range gz {
		gz[i] = byte(i * 7)
	}
	head, parts, hash, err := s.build(testSigner(), streamOf(&r).id(), 1, "", &r, gz, manifestRef{})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || head.BinaryData != nil {
		t.Fatalf("build of %d bytes = %d parts, inline %d bytes; want 2 parts, nothing inline", len(gz), len(parts), len(head.BinaryData[keyManifests]))
	}
	var env envelope
	if err := json.Unmarshal([]byte(head.Annotations[AnnotationRecord]), &env); err != nil {
		t.Fatal(err)
	}
	for i, p := range parts {
		if env.Manifests.Parts[i].SHA256 != sha256Hex(p.BinaryData[keyManifests]) || env.Manifests.Parts[i].Name != p.Name {
			t.Errorf("part %d: record names %+v, part is %s with hash %s", i, env.Manifests.Parts[i], p.Name, sha256Hex(p.BinaryData[keyManifests]))
		}
	}
	// A different part changes the record's hash.
	gz[len(gz)-1] ^= 1
	_, _, hash2, err := s.build(testSigner(), streamOf(&r).id(), 1, "", &r, gz, manifestRef{})
	if err != nil {
		t.Fatal(err)
	}
	if hash2 == hash {
		t.Errorf("record hash unchanged when its last part changed")
	}
}

func TestLink(t *testing.T) {
	s := testStore(t)
	c := buildChain(t, s, testRecord("prod-eu", "staging", testTime()), 5, nil)
	ix := indexOf(c)
	e := func(seq int64) *entry { return ix.streams[c.stream][seq] }
	head := &c.state
	edited := *e(3)
	edited.hash = recordHash([]byte("edited"))
	tests := []struct {
		name             string
		e, pred, succ    *entry
		head             *streamState
		ok               bool
		reasonContaining string
		seen             int64
	}{
		{"first", e(1), nil, e(2), head, true, "", 0},
		{"middle", e(3), e(2), e(4), head, true, "", 0},
		{"newest", e(5), e(4), nil, head, true, "", 0},
		{"predecessor edited", e(4), &edited, e(5), head, false, "record " + recordID(c.stream, 3) + " was changed", 0},
		{"this one edited", &edited, e(2), e(4), head, false, "record " + recordID(c.stream, 3) + " was changed", 0},
		{"predecessor deleted", e(4), nil, e(5), head, false, recordID(c.stream, 3) + " is missing", 0},
		{"successor deleted", e(2), e(1), nil, head, false, recordID(c.stream, 3) + " is missing", 0},
		{"newest deleted", e(4), e(3), nil, head, false, recordID(c.stream, 5) + " is missing", 0},
		{"head gone", e(3), nil, e(4), nil, false, "stream head is gone", 0},
		{"trimmed boundary", e(3), nil, e(4), &streamState{Seq: 5, Hash: c.hashes[4], TrimmedThrough: 2, TrimmedHash: c.hashes[1]}, true, "", 0},
		{"wrong boundary", e(3), nil, e(4), &streamState{Seq: 5, Hash: c.hashes[4], TrimmedThrough: 2, TrimmedHash: c.hashes[0]}, false, "retention boundary", 0},
		{"awaiting trim", e(2), nil, e(3), &streamState{Seq: 5, Hash: c.hashes[4], TrimmedThrough: 3, TrimmedHash: c.hashes[2]}, true, "", 0},
		{"deleted past boundary", e(4), nil, e(5), &streamState{Seq: 5, Hash: c.hashes[4], TrimmedThrough: 2, TrimmedHash: c.hashes[1]}, false, "deleted outside retention", 0},
		{"head lags", e(5), e(4), nil, &streamState{Seq: 4, Hash: c.hashes[3]}, true, "", 0},
		{"newest edited", &entry{stream: c.stream, seq: 5, env: e(5).env, hash: "sha256:x"}, e(4), nil, head, false, "stream head's", 0},
		{"newest, its stream head gone or unsigned", e(5), e(4), nil, nil, false, "stream head is missing or its signature does not match", 0},
		{"newest deleted, the head set back to an older signed copy", e(4), e(3), nil, &streamState{Seq: 4, Hash: c.hashes[3]}, false,
			recordID(c.stream, 5) + " was seen and is gone", 5},
		{"newest as seen", e(5), e(4), nil, head, true, "", 5},
		{"every record trimmed but the newest seen", e(4), nil, nil, &streamState{Seq: 4, Hash: c.hashes[3], TrimmedThrough: 3, TrimmedHash: c.hashes[2]}, true, "", 4},
		{"after a rebuilt head", e(5), e(4), nil, &streamState{Seq: 5, Hash: c.hashes[4], RebuiltAfter: 4}, false, "rebuilt after record " + recordID(c.stream, 4), 0},
		{"before a rebuilt head", e(4), e(3), e(5), &streamState{Seq: 5, Hash: c.hashes[4], RebuiltAfter: 4}, true, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := link(tt.e, tt.pred, tt.succ, tt.head, tt.seen)
			if got.OK != tt.ok || !strings.Contains(got.Reason, tt.reasonContaining) || (tt.ok && got.Reason != "") {
				t.Errorf("link = %+v, want ok %v with a reason containing %q", got, tt.ok, tt.reasonContaining)
			}
			if got.Prev != tt.e.env.Prev {
				t.Errorf("link.Prev = %q, want the record's own %q", got.Prev, tt.e.env.Prev)
			}
		})
	}
}

func TestEntryOfEdited(t *testing.T) {
	s := testStore(t)
	c := buildChain(t, s, testRecord("prod-eu", "staging", testTime()), 1, nil)
	tests := []struct {
		name   string
		edit   func(ann, labels map[string]string)
		reason string
		// resign signs the edited record again, as a writer holding
		// the key would: the checks behind the signature still hold.
		resign bool
	}{
		{"intact", func(map[string]string, map[string]string) {}, "", false},
		{"edited without the key", func(a, _ map[string]string) {
			a[AnnotationRecord] = strings.Replace(a[AnnotationRecord], `"outcome":"succeeded"`, `"outcome":"failed"`, 1)
		}, "signature does not match", false},
		{"prev rewritten without the key", func(a, _ map[string]string) {
			a[AnnotationRecord] = strings.Replace(a[AnnotationRecord], `"prev":""`, `"prev":"sha256:00"`, 1)
		}, "signature does not match", false},
		{"signature removed", func(a, _ map[string]string) { delete(a, AnnotationMAC) }, "not signed", false},
		{"signed with another key", func(a, _ map[string]string) {
			a[AnnotationMAC] = mustKey("another key, also 32 bytes or more").MAC(macDomainRecord, []byte(a[AnnotationRecord]))
		}, "signature does not match", false},
		{"a stream head's signature", func(a, _ map[string]string) {
			a[AnnotationMAC] = testSigner().MAC(macDomainStream, []byte(a[AnnotationRecord]))
		}, "signature does not match", false},
		{"outcome label", func(_, l map[string]string) { l[LabelOutcome] = "failed" }, "labels", false},
		{"verb label removed", func(_, l map[string]string) { delete(l, LabelVerb) }, "labels", false},
		{"annotation gone", func(a, _ map[string]string) { delete(a, AnnotationRecord) }, "annotation is gone", false},
		{"annotation garbage", func(a, _ map[string]string) { a[AnnotationRecord] = "{" }, "not a record", true},
		{"moved in the chain", func(a, _ map[string]string) {
			a[AnnotationRecord] = strings.Replace(a[AnnotationRecord], `"seq":1`, `"seq":2`, 1)
		}, "another place", true},
		{"other environment", func(a, _ map[string]string) {
			a[AnnotationRecord] = strings.Replace(a[AnnotationRecord], `"environment":"staging"`, `"environment":"prod"`, 1)
		}, "stream", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := c.heads[0].DeepCopy()
			tt.edit(cm.Annotations, cm.Labels)
			if tt.resign {
				cm.Annotations[AnnotationMAC] = testSigner().MAC(macDomainRecord, []byte(cm.Annotations[AnnotationRecord]))
			}
			e := entryOf(cm, testSigner())
			if !strings.Contains(e.bad, tt.reason) || (tt.reason == "") != (e.bad == "") {
				t.Errorf("entryOf(edited %s, testSigner()).bad = %q, want it to say %q", tt.name, e.bad, tt.reason)
			}
			if e.stream != c.stream || e.seq != 1 {
				t.Errorf("entryOf(edited %s, testSigner()) is at %s/%d, want %s/1 (from its name)", tt.name, e.stream, e.seq, c.stream)
			}
		})
	}
}

func TestIndexChainFlagsEditAndDeletion(t *testing.T) {
	s := testStore(t)
	c := buildChain(t, s, testRecord("prod-eu", "staging", testTime()), 6, nil)
	flagged := func(ix *index) []string {
		var out []string
		p, err := ix.list(Filter{Limit: MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Records {
			if !r.Chain.OK {
				out = append(out, r.ID)
			}
		}
		return out
	}
	id := func(seq int64) string { return recordID(c.stream, seq) }
	if got := flagged(indexOf(c)); len(got) != 0 {
		t.Errorf("intact chain: flagged %v, want none", got)
	}

	// Edited (the actor changed in the record): it and its successor.
	ix := indexOf(c)
	ed := c.heads[2].DeepCopy()
	ed.Annotations[AnnotationRecord] = strings.Replace(ed.Annotations[AnnotationRecord], "alice@example.com", "bob@example.com", 1)
	ix.put(ed)
	if got, want := flagged(ix), []string{id(4), id(3)}; !equalStrings(got, want) {
		t.Errorf("record 3 edited: flagged %v, want %v", got, want)
	}

	// Deleted in the middle: both neighbours.
	ix = indexOf(c)
	ix.drop(c.heads[2])
	if got, want := flagged(ix), []string{id(4), id(2)}; !equalStrings(got, want) {
		t.Errorf("record 3 deleted: flagged %v, want %v", got, want)
	}
	s.idx.Store(ix)
	broken, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(Page{Records: broken}), []string{id(4), id(2)}; !equalStrings(got, want) {
		t.Errorf("record 3 deleted: Verify = %v, want %v", got, want)
	}

	// The newest deleted: the one before it (the head says 6 existed).
	ix = indexOf(c)
	ix.drop(c.heads[5])
	if got, want := flagged(ix), []string{id(5)}; !equalStrings(got, want) {
		t.Errorf("record 6 deleted: flagged %v, want %v", got, want)
	}

	// Trimmed by retention (boundary recorded): nothing.
	trimmed := *c
	trimmed.heads = c.heads[3:]
	trimmed.state.TrimmedThrough, trimmed.state.TrimmedHash = 3, c.hashes[2]
	if got := flagged(indexOf(&trimmed)); len(got) != 0 {
		t.Errorf("records 1-3 trimmed with the boundary: flagged %v, want none", got)
	}
	// The same deletion without the boundary: the oldest kept record.
	trimmed.state.TrimmedThrough, trimmed.state.TrimmedHash = 0, ""
	if got, want := flagged(indexOf(&trimmed)), []string{id(4)}; !equalStrings(got, want) {
		t.Errorf("records 1-3 deleted without a boundary: flagged %v, want %v", got, want)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTrimThrough(t *testing.T) {
	s := testStore(t)
	now := testTime().Add(100 * 24 * time.Hour)
	// Records 1-4 are 100 days old, 5-10 one day old (one minute apart).
	c := buildChain(t, s, testRecord("prod-eu", "staging", testTime()), 10, func(i int, r *Record) {
		if i >= 4 {
			r.Time = now.Add(-24*time.Hour + time.Duration(i)*time.Minute)
		}
	})
	ix := indexOf(c)
	entries := ix.snapshot()[0].entries
	tests := []struct {
		p    Policy
		want int64
	}{
		{Policy{Keep: 200, MaxAge: DefaultMaxAge}, 4},
		{Policy{Keep: 3, MaxAge: DefaultMaxAge}, 7},
		{Policy{Keep: 8, MaxAge: -1}, 2},
		{Policy{Keep: -1, MaxAge: -1}, 0},
		{Policy{Keep: 10, MaxAge: 200 * 24 * time.Hour}, 0},
		{Policy{Keep: 0, MaxAge: time.Hour}, 10},
	}
	for _, tt := range tests {
		if got := trimThrough(entries, tt.p, now); got != tt.want {
			t.Errorf("trimThrough(10 records, %+v) = %d, want %d", tt.p, got, tt.want)
		}
	}
	// A record older than MaxAge after a newer one (a skewed clock) waits:
	// only a prefix is trimmed.
	skew := buildChain(t, s, testRecord("prod-eu", "staging", now.Add(-time.Hour)), 3, func(i int, r *Record) {
		if i == 1 {
			r.Time = testTime()
		}
	})
	if got := trimThrough(indexOf(skew).snapshot()[0].entries, Policy{Keep: -1, MaxAge: DefaultMaxAge}, now); got != 0 {
		t.Errorf("trimThrough(old record after a new one) = %d, want 0", got)
	}
}

func TestRetentionFor(t *testing.T) {
	r := Retention{Environments: map[string]Policy{"prod": {Keep: 1000}, "dev": {Keep: 10, MaxAge: time.Hour}}}
	tests := []struct {
		env  string
		want Policy
	}{
		{"prod", Policy{Keep: 1000, MaxAge: DefaultMaxAge}},
		{"dev", Policy{Keep: 10, MaxAge: time.Hour}},
		{"staging", Policy{Keep: DefaultKeep, MaxAge: DefaultMaxAge}},
		{"", Policy{Keep: DefaultKeep, MaxAge: DefaultMaxAge}},
	}
	for _, tt := range tests {
		if got := r.For(tt.env); got != tt.want {
			t.Errorf("For(%q) = %+v, want %+v", tt.env, got, tt.want)
		}
	}
}

func TestEntryOfForeignParts(t *testing.T) {
	s := testStore(t)
	r := testRecord("prod-eu", "staging", testTime())
	gz := make([]byte, SplitBytes+10)
	head, _, _, err := s.build(testSigner(), streamOf(&r).id(), 1, "", &r, gz, manifestRef{})
	if err != nil {
		t.Fatal(err)
	}
	if e := entryOf(head, testSigner()); e.bad != "" || len(e.env.Manifests.Parts) != 2 {
		t.Fatalf("entryOf(split record, testSigner()) = bad %q, %d parts; want sound, 2", e.bad, len(e.env.Manifests.Parts))
	}
	var env envelope
	if err := json.Unmarshal([]byte(head.Annotations[AnnotationRecord]), &env); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kube-root-ca.crt", "deploy-web-oidc", partName(recordID(env.Stream, 2), 0, env.Manifests.Parts[0].SHA256[7:15])} {
		edited := env
		edited.Manifests.Parts = append([]partRef(nil), env.Manifests.Parts...)
		edited.Manifests.Parts[0].Name = name
		raw, _ := json.Marshal(edited)
		cm := head.DeepCopy()
		cm.Annotations[AnnotationRecord] = string(raw)
		// Edited without the key: flagged by its signature, and its parts
		// are still never read or deleted.
		if e := entryOf(cm, testSigner()); e.bad == "" || len(e.env.Manifests.Parts) != 0 {
			t.Errorf("entryOf(unsigned record naming part %q) = bad %q, parts %v; want flagged, no parts to read or delete", name, e.bad, e.env.Manifests.Parts)
		}
		// Signed (by a writer holding the key): the names are checked too.
		cm.Annotations[AnnotationMAC] = testSigner().MAC(macDomainRecord, raw)
		if e := entryOf(cm, testSigner()); !strings.Contains(e.bad, "parts") || len(e.env.Manifests.Parts) != 0 {
			t.Errorf("entryOf(signed record naming part %q) = bad %q, parts %v; want flagged, no parts to read or delete", name, e.bad, e.env.Manifests.Parts)
		}
	}
}
