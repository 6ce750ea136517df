package freeze

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/internal/scope"
)

func validOneOff(t *testing.T) Freeze {
	t.Helper()
	return Freeze{
		Scope:  scope.Scope{Environments: []string{"prod"}},
		Start:  at(t, "", "2026-12-03T08:00"),
		End:    at(t, "", "2026-12-03T18:00"),
		Reason: "release week",
		Ticket: "https://tickets.example.com/CHG-1",
		Author: Author{Email: "alice@example.com", Subject: "alice"},
	}
}

func validRecurring(t *testing.T) Freeze {
	t.Helper()
	f := validOneOff(t)
	f.RRule = "FREQ=DAILY"
	f.Duration = Duration(2 * time.Hour)
	f.End = f.Start.Add(30 * 24 * time.Hour)
	return f
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Freeze)
		want   string // "" valid
	}{
		{"one-off", func(*Freeze) {}, ""},
		{"exactly 14 days", func(f *Freeze) { f.End = f.Start.Add(MaxWindow) }, ""},
		{"no ticket", func(f *Freeze) { f.Ticket = "" }, ""},
		{"http ticket", func(f *Freeze) { f.Ticket = "http://tickets.example.com/1" }, ""},
		{"stored id", func(f *Freeze) { f.ID = "fz-0a1b2c3d" }, ""},
		{"zone", func(f *Freeze) { f.Zone = "Europe/Berlin" }, ""},
		{"bad id", func(f *Freeze) { f.ID = "Fz/1" }, `freeze: Fz/1: id: "Fz/1" is not a freeze id`},
		{"no scope", func(f *Freeze) { f.Scope = scope.Scope{} }, "freeze: scope: name at least one"},
		{"bad selector", func(f *Freeze) { f.Scope.Apps = []string{"web", "a b"} }, "freeze: scope.apps[1]: selector \"a b\" has a space"},
		{"no start", func(f *Freeze) { f.Start = time.Time{} }, "freeze: start: required"},
		{"no end", func(f *Freeze) { f.End = time.Time{} }, "freeze: end: required"},
		{"end before start", func(f *Freeze) { f.End = f.Start.Add(-time.Minute) }, "freeze: end: 2026-12-03 07:59 UTC is not after start 2026-12-03 08:00 UTC"},
		{"end at start", func(f *Freeze) { f.End = f.Start }, "is not after start"},
		{"over 14 days", func(f *Freeze) { f.End = f.Start.Add(MaxWindow + time.Second) }, "freeze: end: 2026-12-17 08:00 UTC is more than 14 days after start"},
		{"duration without rrule", func(f *Freeze) { f.Duration = Duration(time.Hour) }, "freeze: duration: only for a recurring freeze"},
		{"unknown zone", func(f *Freeze) { f.Zone = "Mars/Olympus" }, `freeze: zone: "Mars/Olympus" is not a time zone name`},
		{"Local zone", func(f *Freeze) { f.Zone = "Local" }, `freeze: zone: "Local" is not a time zone name`},
		{"zone path", func(f *Freeze) { f.Zone = "../../etc/passwd" }, "freeze: zone:"},
		{"no reason", func(f *Freeze) { f.Reason = "  " }, "freeze: reason: required"},
		{"long reason", func(f *Freeze) { f.Reason = strings.Repeat("x", MaxReasonBytes+1) }, "freeze: reason: 501 bytes, at most 500"},
		{"reason with a line break", func(f *Freeze) { f.Reason = "a\nb" }, "freeze: reason: has a control character"},
		{"reason not UTF-8", func(f *Freeze) { f.Reason = "\xff" }, "freeze: reason: not UTF-8"},
		{"ftp ticket", func(f *Freeze) { f.Ticket = "ftp://tickets.example.com/1" }, "freeze: ticket: \"ftp://tickets.example.com/1\": only http(s) links"},
		{"javascript ticket", func(f *Freeze) { f.Ticket = "javascript:alert(1)" }, "only http(s) links"},
		{"ticket without host", func(f *Freeze) { f.Ticket = "https:///x" }, "has no host"},
		{"ticket with credentials", func(f *Freeze) { f.Ticket = "https://u:p@tickets.example.com/1" }, "credentials"},
		{"ticket with quote", func(f *Freeze) { f.Ticket = `https://tickets.example.com/"onmouseover=x` }, "has characters a link does not"},
		{"ticket with a format character", func(f *Freeze) { f.Ticket = "https://tickets.example.com/INC-1\u202Egpj.exe" }, "has characters a link does not"},
		{"long ticket", func(f *Freeze) { f.Ticket = "https://e.com/" + strings.Repeat("a", MaxTicketBytes) }, "freeze: ticket: 2062 bytes"},
		{"no author", func(f *Freeze) { f.Author = Author{Email: "a@example.com"} }, "freeze: author.subject: required"},
		{"recurring", func(f *Freeze) { *f = validRecurring(t) }, ""},
		{"recurring for a year", func(f *Freeze) { *f = validRecurring(t); f.End = f.Start.Add(MaxSeries) }, ""},
		{"recurring over a year", func(f *Freeze) { *f = validRecurring(t); f.End = f.Start.Add(MaxSeries + time.Second) }, "freeze: end: 2027-12-04 08:00 UTC is more than 366 days after start"},
		{"recurring without duration", func(f *Freeze) { *f = validRecurring(t); f.Duration = 0 }, "freeze: duration: required with rrule"},
		{"recurring, negative duration", func(f *Freeze) { *f = validRecurring(t); f.Duration = Duration(-time.Hour) }, "freeze: duration: required with rrule"},
		{"recurring, long occurrences", func(f *Freeze) { *f = validRecurring(t); f.Duration = Duration(MaxWindow + time.Second) }, "freeze: duration: 336h0m1s is more than 14 days"},
		{"recurring, no occurrence", func(f *Freeze) {
			*f = validRecurring(t)
			f.RRule = "FREQ=DAILY;UNTIL=20261201T000000Z"
		}, `freeze: rrule: "FREQ=DAILY;UNTIL=20261201T000000Z" has no occurrence`},
	}
	for _, tt := range tests {
		f := validOneOff(t)
		tt.change(&f)
		err := f.Validate()
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: Validate() = %v, want nil", tt.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate() = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestFreezeJSON(t *testing.T) {
	f := validRecurring(t)
	f.Zone = "Europe/Berlin"
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"duration":"2h0m0s"`) || !strings.Contains(string(b), `"zone":"Europe/Berlin"`) {
		t.Errorf("json.Marshal = %s, want the duration as text and the zone", b)
	}
	var back Freeze
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"duration":"forever"}`), &back); err == nil || !strings.Contains(err.Error(), "freeze: duration") {
		t.Errorf("json.Unmarshal(duration forever) = %v, want a freeze: duration error", err)
	}
}

func TestActiveBoundaries(t *testing.T) {
	prod := Target{Environment: "prod", App: "web"}
	oneOff := validOneOff(t) // 08:00 to 18:00
	daily := validRecurring(t)
	daily.Start = at(t, "", "2026-12-01T16:00")
	daily.End = at(t, "", "2026-12-04T17:00") // the last occurrence is cut at 17:00
	berlin := validRecurring(t)
	berlin.Zone = "Europe/Berlin"
	berlin.Start = at(t, "Europe/Berlin", "2026-10-23T18:00")
	berlin.End = at(t, "Europe/Berlin", "2026-10-30T00:00")
	tests := []struct {
		name  string
		f     Freeze
		now   time.Time
		want  bool
		opens string
	}{
		{"before start", oneOff, at(t, "", "2026-12-03T07:59"), false, ""},
		{"at start (inclusive)", oneOff, at(t, "", "2026-12-03T08:00"), true, "2026-12-03T18:00"},
		{"inside", oneOff, at(t, "", "2026-12-03T12:00"), true, "2026-12-03T18:00"},
		{"just before end", oneOff, at(t, "", "2026-12-03T18:00").Add(-time.Nanosecond), true, "2026-12-03T18:00"},
		{"at end (exclusive)", oneOff, at(t, "", "2026-12-03T18:00"), false, ""},
		{"lapsed", oneOff, at(t, "", "2026-12-10T00:00"), false, ""},
		{"occurrence start", daily, at(t, "", "2026-12-02T16:00"), true, "2026-12-02T18:00"},
		{"occurrence end", daily, at(t, "", "2026-12-02T18:00"), false, ""},
		{"between occurrences", daily, at(t, "", "2026-12-02T20:00"), false, ""},
		{"last occurrence cut at end", daily, at(t, "", "2026-12-04T16:30"), true, "2026-12-04T17:00"},
		{"after the cut", daily, at(t, "", "2026-12-04T17:00"), false, ""},
		{"Berlin summer time", berlin, at(t, "", "2026-10-24T16:30"), true, "2026-10-24T18:00"},
		{"Berlin winter time: 16:30 UTC is 17:30 local", berlin, at(t, "", "2026-10-26T16:30"), false, ""},
		{"Berlin winter time", berlin, at(t, "", "2026-10-26T17:30"), true, "2026-10-26T19:00"},
	}
	for _, tt := range tests {
		f, opens, ok := List{tt.f}.Active(tt.now, prod)
		if ok != tt.want {
			t.Errorf("%s: Active(%s) = %v, want %v", tt.name, tt.now.UTC(), ok, tt.want)
			continue
		}
		if !ok {
			if f != nil || !opens.IsZero() {
				t.Errorf("%s: Active = %v, %v, want nil, zero time when not frozen", tt.name, f, opens)
			}
			continue
		}
		if got := opens.UTC().Format("2006-01-02T15:04"); got != tt.opens {
			t.Errorf("%s: Active(%s) opens at %s, want %s", tt.name, tt.now.UTC(), got, tt.opens)
		}
		if f.Reason != tt.f.Reason {
			t.Errorf("%s: Active returned freeze %+v, want the one given", tt.name, f)
		}
	}
}

func TestActiveScopeAndChains(t *testing.T) {
	mk := func(id, env, app, start, end string) Freeze {
		f := validOneOff(t)
		f.ID, f.Reason = id, "reason "+id
		f.Scope = scope.Scope{Environments: []string{env}}
		if app != "" {
			f.Scope.Apps = []string{app}
		}
		f.Start, f.End = at(t, "", start), at(t, "", end)
		return f
	}
	l := List{
		mk("a", "prod", "", "2026-12-03T10:00", "2026-12-03T12:00"),
		mk("b", "prod", "", "2026-12-03T12:00", "2026-12-03T14:00"), // starts as a ends
		mk("c", "prod", "", "2026-12-03T13:00", "2026-12-03T15:00"), // overlaps b
		mk("d", "prod", "", "2026-12-03T15:01", "2026-12-03T16:00"), // a gap before it
		mk("e", "staging", "web-*", "2026-12-03T09:00", "2026-12-03T11:00"),
	}
	tests := []struct {
		name    string
		now     string
		target  Target
		wantID  string
		opensAt string
	}{
		{"chain a,b,c opens at 15:00", "2026-12-03T11:00", Target{Environment: "prod"}, "a", "2026-12-03T15:00"},
		{"in the overlap, c ends last", "2026-12-03T13:30", Target{Environment: "prod", App: "web"}, "c", "2026-12-03T15:00"},
		{"in the gap", "2026-12-03T15:00", Target{Environment: "prod"}, "", ""},
		{"another environment", "2026-12-03T11:00", Target{Environment: "dev"}, "", ""},
		{"app in scope", "2026-12-03T10:00", Target{Environment: "staging", App: "web-1"}, "e", "2026-12-03T11:00"},
		{"app out of scope", "2026-12-03T10:00", Target{Environment: "staging", App: "api"}, "", ""},
		{"whole environment touches an app freeze", "2026-12-03T10:00", Target{Environment: "staging"}, "e", "2026-12-03T11:00"},
		{"unknown environment touches every freeze: prod chains on", "2026-12-03T10:00", Target{App: "web-1"}, "a", "2026-12-03T15:00"},
		{"unknown environment: e, then a, b, c", "2026-12-03T09:30", Target{App: "web-1"}, "e", "2026-12-03T15:00"},
	}
	for _, tt := range tests {
		f, opens, ok := l.Active(at(t, "", tt.now), tt.target)
		if tt.wantID == "" {
			if ok {
				t.Errorf("%s: Active = %s until %s, want not frozen", tt.name, f.ID, opens)
			}
			continue
		}
		if !ok || f.ID != tt.wantID || opens.UTC().Format("2006-01-02T15:04") != tt.opensAt {
			t.Errorf("%s: Active = %v, %s, %v, want %s until %s", tt.name, f, opens, ok, tt.wantID, tt.opensAt)
		}
	}
}

func TestUpcomingAndLapsed(t *testing.T) {
	oneOff := validOneOff(t) // 2026-12-03 08:00 to 18:00
	oneOff.ID = "once"
	daily := validRecurring(t)
	daily.ID = "daily"
	daily.Start = at(t, "", "2026-12-01T20:00")
	daily.End = at(t, "", "2026-12-10T00:00")
	l := List{oneOff, daily}
	ids := func(s []Scheduled) []string {
		var out []string
		for _, x := range s {
			out = append(out, x.Freeze.ID+"@"+x.Window.Start.UTC().Format("01-02T15:04"))
		}
		return out
	}
	tests := []struct {
		now    string
		within time.Duration
		want   []string
	}{
		{"2026-12-02T09:00", 0, []string{"daily@12-02T20:00", "once@12-03T08:00"}},
		{"2026-12-02T09:00", time.Hour, nil},
		{"2026-12-02T21:00", 0, []string{"once@12-03T08:00", "daily@12-03T20:00"}}, // in daily's window: its next one
		{"2026-12-03T08:00", 0, []string{"daily@12-03T20:00"}},                     // once is active, not upcoming
		{"2026-12-09T21:00", 0, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ids(l.Upcoming(at(t, "", tt.now), tt.within))); diff != "" {
			t.Errorf("Upcoming(%s, %s) (-want +got):\n%s", tt.now, tt.within, diff)
		}
	}
	lapsed := []struct {
		f    Freeze
		now  string
		want bool
	}{
		{oneOff, "2026-12-03T17:59", false},
		{oneOff, "2026-12-03T18:00", true},
		{daily, "2026-12-09T21:59", false},
		{daily, "2026-12-09T22:00", true}, // the last window has ended before End
		{daily, "2026-12-10T00:00", true},
	}
	for _, tt := range lapsed {
		if got := tt.f.Lapsed(at(t, "", tt.now)); got != tt.want {
			t.Errorf("%s.Lapsed(%s) = %v, want %v", tt.f.ID, tt.now, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	f := validOneOff(t)
	f.ID = "fz-1"
	f.Zone = "Europe/Berlin"
	l := List{f}
	during, after := at(t, "", "2026-12-03T12:00"), at(t, "", "2026-12-03T18:00")
	target := Target{Environment: "prod", App: "web"}
	for _, a := range []Action{Plan, Apply, Sync, Rollback, Promote, AutoSync, Action("something-new")} {
		err := l.Check(during, a, target)
		if a == Plan {
			if err != nil {
				t.Errorf("Check(plan) = %v, want nil: a plan writes nothing", err)
			}
			continue
		}
		var fe *FrozenError
		if !errors.As(err, &fe) {
			t.Errorf("Check(%s) = %v, want a *FrozenError", a, err)
			continue
		}
		want := "frozen until 2026-12-03 18:00 UTC (19:00 Europe/Berlin) by alice@example.com (sub alice): release week (https://tickets.example.com/CHG-1)"
		if got := fe.Message(); got != want {
			t.Errorf("Check(%s).Message() = %q, want %q", a, got, want)
		}
		if got, want := fe.Error(), "freeze: "+string(a)+" at env=prod app=web refused: "+want; got != want {
			t.Errorf("Check(%s).Error() = %q, want %q", a, got, want)
		}
		if fe.Freeze.ID != "fz-1" || !fe.OpensAt.Equal(after) {
			t.Errorf("Check(%s) = freeze %s opening %s, want fz-1 opening %s", a, fe.Freeze.ID, fe.OpensAt, after)
		}
		if err := l.Check(after, a, target); err != nil {
			t.Errorf("Check(%s) after the end = %v, want nil: a freeze lapses by itself", a, err)
		}
	}
	f.Author.Email, f.Ticket, f.Zone = "", "", ""
	err := List{f}.Check(during, Apply, target)
	if got, want := err.(*FrozenError).Message(), "frozen until 2026-12-03 18:00 UTC by sub alice: release week"; got != want {
		t.Errorf("Message() without email, ticket or zone = %q, want %q", got, want)
	}
}

func TestBreakGlass(t *testing.T) {
	f := validOneOff(t)
	l := List{f}
	during := at(t, "", "2026-12-03T12:00")
	target := Target{Environment: "prod"}
	by := Author{Email: "root@example.com", Subject: "root"}

	o, err := l.BreakGlass(at(t, "", "2026-12-04T12:00"), Apply, target, BreakGlass{Reason: "hotfix", Superadmin: true, By: by})
	if o != nil || err != nil {
		t.Errorf("BreakGlass when not frozen = %v, %v, want nil, nil", o, err)
	}
	o, err = l.BreakGlass(during, Plan, target, BreakGlass{})
	if o != nil || err != nil {
		t.Errorf("BreakGlass(plan) = %v, %v, want nil, nil", o, err)
	}

	var fe *FrozenError
	_, err = l.BreakGlass(during, Apply, target, BreakGlass{Reason: "hotfix", Superadmin: false, By: by})
	if !errors.Is(err, ErrBreakGlassDenied) || !errors.As(err, &fe) {
		t.Errorf("BreakGlass(not superadmin) = %v, want ErrBreakGlassDenied wrapping a *FrozenError", err)
	}
	_, err = l.BreakGlass(during, Apply, target, BreakGlass{Reason: " ", Superadmin: true, By: by})
	var re *BreakGlassReasonError
	if err == nil || !strings.Contains(err.Error(), "break-glass reason: required") || !errors.As(err, &fe) || !errors.As(err, &re) {
		t.Errorf("BreakGlass(no reason) = %v, want a *BreakGlassReasonError (break-glass reason: required) wrapping a *FrozenError", err)
	}
	_, err = l.BreakGlass(during, Apply, target, BreakGlass{Reason: strings.Repeat("x", MaxReasonBytes+1), Superadmin: true, By: by})
	if err == nil || !strings.Contains(err.Error(), "at most 500") {
		t.Errorf("BreakGlass(long reason) = %v, want at most 500", err)
	}
	_, err = l.BreakGlass(during, Apply, target, BreakGlass{Reason: "hotfix", Superadmin: true})
	if err == nil || !strings.Contains(err.Error(), "subject is required") {
		t.Errorf("BreakGlass(no author) = %v, want the subject is required", err)
	}

	o, err = l.BreakGlass(during, Rollback, target, BreakGlass{Reason: "hotfix INC-7", Superadmin: true, By: by})
	if err != nil {
		t.Fatalf("BreakGlass(superadmin) = %v", err)
	}
	want := &Override{Action: Rollback, Target: target, Freeze: f, OpensAt: f.End, Reason: "hotfix INC-7", By: by, At: during}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("BreakGlass(superadmin) (-want +got):\n%s", diff)
	}
}

// TestValidateInvalidError: Validate's refusal is an *InvalidError whose
// public text names the field.
func TestValidateInvalidError(t *testing.T) {
	f := Freeze{Reason: "release week"}
	var ie *InvalidError
	if err := f.Validate(); !errors.As(err, &ie) || !strings.HasPrefix(ie.Public(), "freeze: scope: ") {
		t.Errorf("Validate(no scope) = %v, want an *InvalidError naming scope", err)
	}
}
