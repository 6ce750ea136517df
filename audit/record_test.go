package audit

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestPrepare(t *testing.T) {
	s := testStore(t)
	ok := testRecord("eu", "staging", testTime())
	tests := []struct {
		name string
		edit func(r *Record)
		err  string
	}{
		{"valid", func(*Record) {}, ""},
		{"unknown verb", func(r *Record) { r.Verb = "delete-everything" }, "verb"},
		{"no outcome", func(r *Record) { r.Outcome = "" }, "outcome"},
		{"no cluster", func(r *Record) { r.Cluster = "" }, "cluster"},
		{"neither environment nor App", func(r *Record) { r.Environment = "" }, "environment or App"},
		{"long environment", func(r *Record) { r.Environment = strings.Repeat("e", MaxFieldBytes+1) }, "environment is 254 bytes"},
		{"long actor", func(r *Record) { r.Actor.Email = strings.Repeat("a", 300) + "@example.com" }, "actor.email"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.edit(&r)
			err := s.prepare(&r)
			if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("prepare = %v, want an error containing %q", err, tt.err)
			}
		})
	}
}

func TestPrepareBounds(t *testing.T) {
	s := testStore(t)
	groups := make([]string, MaxGroups+10)
	for i := range groups {
		groups[i] = strings.Repeat("g", MaxFieldBytes+5)
	}
	r := testRecord("eu", "staging", time.Time{})
	r.Actor.Groups = groups
	r.Message = strings.Repeat("é", MaxMessageBytes) // 2 bytes each
	r.ID, r.Chain = "forged", &Chain{OK: true}
	if err := s.prepare(&r); err != nil {
		t.Fatal(err)
	}
	if len(r.Actor.Groups) != MaxGroups || len(r.Actor.Groups[0]) != MaxFieldBytes {
		t.Errorf("prepare kept %d groups of %d bytes, want %d of %d", len(r.Actor.Groups), len(r.Actor.Groups[0]), MaxGroups, MaxFieldBytes)
	}
	if len(groups[0]) != MaxFieldBytes+5 {
		t.Errorf("prepare changed the caller's groups")
	}
	if len(r.Message) > MaxMessageBytes || !utf8.ValidString(r.Message) {
		t.Errorf("prepare message = %d bytes, valid UTF-8 %v; want at most %d, valid", len(r.Message), utf8.ValidString(r.Message), MaxMessageBytes)
	}
	if r.ID != "" || r.Chain != nil || r.Time.IsZero() || r.Time.Location() != time.UTC {
		t.Errorf("prepare = id %q chain %v time %v; want no id or chain (Append sets them), the time now in UTC", r.ID, r.Chain, r.Time)
	}
}

func TestRecordJSON(t *testing.T) {
	r := testRecord("eu", "staging", testTime())
	r.ID = "0123456789abcdef-0000000001"
	r.Chain = &Chain{Prev: "sha256:ab", OK: false, Reason: "record 0 is missing"}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"id":"0123456789abcdef-0000000001"`, `"duration":"1.5s"`, `"actor":{"email":"alice@example.com","subject":"u-alice","groups":["platform"]}`,
		`"verb":"apply"`, `"renderedDigest":`, `"blockers":[]`, `"objects":[{`, `"chain":{"prev":"sha256:ab","ok":false,"reason":"record 0 is missing"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON of a record = %s, want it to hold %s", b, want)
		}
	}
	var back Record
	if err := json.Unmarshal(b, &back); err != nil || back.Duration != r.Duration || !back.Time.Equal(r.Time) {
		t.Errorf("JSON round trip = %+v, %v", back, err)
	}
}

// TestVerbLabels: every verb has a label of its own (the audit page's
// verb filter shows it), and the verbs helpers wire in parallel exist.
func TestVerbLabels(t *testing.T) {
	seen := map[string]Verb{}
	for _, v := range Verbs() {
		l := v.Label()
		if l == "" || l == string(v) {
			t.Errorf("Verb(%q).Label() = %q, want words of its own", v, l)
		}
		if o, dup := seen[l]; dup {
			t.Errorf("Verb(%q).Label() = %q, the label of %q too", v, l, o)
		}
		seen[l] = v
		if !v.Valid() {
			t.Errorf("Verb(%q).Valid() = false, want true", v)
		}
	}
	for _, v := range []Verb{VerbPromote, VerbPromoteReject, VerbSubscription, VerbPromoteRequest, VerbPromoteApprove, VerbFreeze, VerbPause} {
		if _, ok := verbLabels[v]; !ok {
			t.Errorf("verb %q has no label", v)
		}
	}
	if got := Verb("unknown").Label(); got != "unknown" {
		t.Errorf(`Verb("unknown").Label() = %q, want "unknown"`, got)
	}
}

// TestPrepareBreakGlass: a break-glass reason is kept, cut to
// MaxBreakGlassBytes on a rune boundary, and reaches the Event.
func TestPrepareBreakGlass(t *testing.T) {
	s := testStore(t)
	r := testRecord("eu", "staging", testTime())
	r.Verb, r.BreakGlass = VerbPromote, strings.Repeat("é", MaxBreakGlassBytes)
	if err := s.prepare(&r); err != nil {
		t.Fatal(err)
	}
	if len(r.BreakGlass) > MaxBreakGlassBytes || !utf8.ValidString(r.BreakGlass) || r.BreakGlass == "" {
		t.Errorf("prepare breakGlass = %d bytes, valid %v; want 1 to %d, valid UTF-8", len(r.BreakGlass), utf8.ValidString(r.BreakGlass), MaxBreakGlassBytes)
	}
	r.BreakGlass = "hotfix INC-42"
	if msg := eventMessage(&r); !strings.Contains(msg, "break-glass: hotfix INC-42") {
		t.Errorf("eventMessage = %q, want it to name the break-glass reason", msg)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"breakGlass":"hotfix INC-42"`) {
		t.Errorf("JSON of a record = %s, want breakGlass", b)
	}
}

// TestPrepareCleansText: what Append stores of a record's text (message,
// break-glass reason, actor, groups, blockers) has no format character: a
// reason "fix \u202egnp.exe\u202c" is kept without its override.
func TestPrepareCleansText(t *testing.T) {
	s := testStore(t)
	r := testRecord("eu", "staging", testTime())
	r.Message = "rollback: fix \u202egnp.exe\u202c\nsecond line"
	r.BreakGlass = "hot\u2066fix\u2069"
	r.Actor = Actor{Email: "al\u200bice@example.com", Subject: "u-\ufeffalice", Groups: []string{"plat\u202eform"}}
	r.Blockers = []string{"freeze:\u200df1"}
	if err := s.prepare(&r); err != nil {
		t.Fatal(err)
	}
	want := Actor{Email: "alice@example.com", Subject: "u-alice", Groups: []string{"platform"}}
	if r.Message != "rollback: fix gnp.exe\nsecond line" || r.BreakGlass != "hotfix" || !reflect.DeepEqual(r.Actor, want) || r.Blockers[0] != "freeze:f1" {
		t.Errorf("prepare = message %q, breakGlass %q, actor %+v, blockers %q; want the format characters removed, the line break kept",
			r.Message, r.BreakGlass, r.Actor, r.Blockers)
	}
}
