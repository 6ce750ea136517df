package freeze

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// at parses "2026-12-01T18:00" in zone (UTC when "").
func at(t *testing.T, zone, s string) time.Time {
	t.Helper()
	loc := time.UTC
	if zone != "" {
		var err error
		if loc, err = time.LoadLocation(zone); err != nil {
			t.Fatal(err)
		}
	}
	v, err := time.ParseInLocation("2006-01-02T15:04", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// occurrencesOf lists f's window starts as UTC "2006-01-02T15:04".
func occurrencesOf(f *Freeze) []string {
	var out []string
	for w := range f.Windows() {
		out = append(out, w.Start.UTC().Format("2006-01-02T15:04"))
	}
	return out
}

func TestRRuleOccurrences(t *testing.T) {
	tests := []struct {
		name       string
		zone       string
		start, end string // in zone
		rrule      string
		want       []string // UTC
	}{
		{"daily", "", "2026-12-01T18:00", "2026-12-05T00:00", "FREQ=DAILY",
			[]string{"2026-12-01T18:00", "2026-12-02T18:00", "2026-12-03T18:00", "2026-12-04T18:00"}},
		{"daily, RRULE: prefix", "", "2026-12-01T18:00", "2026-12-03T00:00", "RRULE:FREQ=DAILY",
			[]string{"2026-12-01T18:00", "2026-12-02T18:00"}},
		{"daily interval 2", "", "2026-12-01T18:00", "2026-12-06T00:00", "FREQ=DAILY;INTERVAL=2",
			[]string{"2026-12-01T18:00", "2026-12-03T18:00", "2026-12-05T18:00"}},
		{"daily on Mondays and Fridays", "", "2026-12-01T09:00", "2026-12-12T00:00", "FREQ=DAILY;BYDAY=MO,FR",
			[]string{"2026-12-04T09:00", "2026-12-07T09:00", "2026-12-11T09:00"}},
		{"daily by hour and minute", "", "2026-12-01T00:00", "2026-12-02T12:00", "FREQ=DAILY;BYHOUR=17,9;BYMINUTE=30,0",
			[]string{"2026-12-01T09:00", "2026-12-01T09:30", "2026-12-01T17:00", "2026-12-01T17:30", "2026-12-02T09:00", "2026-12-02T09:30"}},
		{"by hour before start the first day", "", "2026-12-01T12:00", "2026-12-03T00:00", "FREQ=DAILY;BYHOUR=9,17",
			[]string{"2026-12-01T17:00", "2026-12-02T09:00", "2026-12-02T17:00"}},
		{"count", "", "2026-12-01T18:00", "2026-12-30T00:00", "FREQ=DAILY;COUNT=3",
			[]string{"2026-12-01T18:00", "2026-12-02T18:00", "2026-12-03T18:00"}},
		{"count counts from start", "", "2026-12-01T12:00", "2026-12-30T00:00", "FREQ=DAILY;BYHOUR=9;COUNT=2",
			[]string{"2026-12-02T09:00", "2026-12-03T09:00"}},
		{"until is inclusive", "", "2026-12-01T18:00", "2026-12-30T00:00", "FREQ=DAILY;UNTIL=20261203T180000Z",
			[]string{"2026-12-01T18:00", "2026-12-02T18:00", "2026-12-03T18:00"}},
		{"until a date, local", "Europe/Berlin", "2026-12-01T18:00", "2026-12-30T00:00", "FREQ=DAILY;UNTIL=20261202",
			[]string{"2026-12-01T17:00", "2026-12-02T17:00"}},
		{"until local time", "Europe/Berlin", "2026-12-01T18:00", "2026-12-30T00:00", "FREQ=DAILY;UNTIL=20261202T175959",
			[]string{"2026-12-01T17:00"}},
		{"end is exclusive", "", "2026-12-01T18:00", "2026-12-03T18:00", "FREQ=DAILY",
			[]string{"2026-12-01T18:00", "2026-12-02T18:00"}},
		{"weekly keeps the weekday", "", "2026-12-01T10:00", "2026-12-22T00:00", "FREQ=WEEKLY",
			[]string{"2026-12-01T10:00", "2026-12-08T10:00", "2026-12-15T10:00"}},
		{"weekly Friday afternoons", "", "2026-12-01T10:00", "2026-12-19T00:00", "FREQ=WEEKLY;BYDAY=FR;BYHOUR=16;BYMINUTE=0",
			[]string{"2026-12-04T16:00", "2026-12-11T16:00", "2026-12-18T16:00"}},
		{"weekly start not an occurrence", "", "2026-12-02T10:00", "2026-12-15T00:00", "FREQ=WEEKLY;BYDAY=MO",
			[]string{"2026-12-07T10:00", "2026-12-14T10:00"}},
		{"every other week, Monday and Friday", "", "2026-12-01T08:00", "2027-01-01T00:00", "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR",
			[]string{"2026-12-04T08:00", "2026-12-14T08:00", "2026-12-18T08:00", "2026-12-28T08:00"}},
		{"weekly on Sunday, week starts Monday", "", "2026-12-06T08:00", "2026-12-21T00:00", "FREQ=WEEKLY;INTERVAL=2;BYDAY=SU",
			[]string{"2026-12-06T08:00", "2026-12-20T08:00"}},
		{"monthly skips months without the day", "", "2026-01-31T12:00", "2026-07-01T00:00", "FREQ=MONTHLY",
			[]string{"2026-01-31T12:00", "2026-03-31T12:00", "2026-05-31T12:00"}},
		{"monthly last Friday", "", "2026-12-01T15:00", "2027-03-01T00:00", "FREQ=MONTHLY;BYDAY=-1FR",
			[]string{"2026-12-25T15:00", "2027-01-29T15:00", "2027-02-26T15:00"}},
		{"monthly first and third Monday", "", "2026-12-01T06:00", "2027-02-01T00:00", "FREQ=MONTHLY;BYDAY=1MO,3MO",
			[]string{"2026-12-07T06:00", "2026-12-21T06:00", "2027-01-04T06:00", "2027-01-18T06:00"}},
		{"monthly every Tuesday", "", "2026-12-01T06:00", "2027-01-01T00:00", "FREQ=MONTHLY;BYDAY=TU",
			[]string{"2026-12-01T06:00", "2026-12-08T06:00", "2026-12-15T06:00", "2026-12-22T06:00", "2026-12-29T06:00"}},
		{"monthly interval 2 with count", "", "2026-12-01T06:00", "2027-12-01T00:00", "FREQ=MONTHLY;INTERVAL=2;COUNT=3",
			[]string{"2026-12-01T06:00", "2027-02-01T06:00", "2027-04-01T06:00"}},
		// Wall-clock times stay put in a named zone across DST: 18:00 Berlin is
		// 16:00 UTC in summer time and 17:00 UTC after 2026-10-25.
		{"Berlin across the end of summer time", "Europe/Berlin", "2026-10-23T18:00", "2026-10-27T00:00", "FREQ=DAILY",
			[]string{"2026-10-23T16:00", "2026-10-24T16:00", "2026-10-25T17:00", "2026-10-26T17:00"}},
		{"Berlin across the start of summer time", "Europe/Berlin", "2026-03-27T09:00", "2026-03-30T00:00", "FREQ=DAILY;BYHOUR=9",
			[]string{"2026-03-27T08:00", "2026-03-28T08:00", "2026-03-29T07:00"}},
		{"New York weekly", "America/New_York", "2026-10-30T17:00", "2026-11-14T00:00", "FREQ=WEEKLY;BYDAY=FR",
			[]string{"2026-10-30T21:00", "2026-11-06T22:00", "2026-11-13T22:00"}},
		{"UTC ignores DST", "", "2026-10-23T18:00", "2026-10-27T00:00", "FREQ=DAILY",
			[]string{"2026-10-23T18:00", "2026-10-24T18:00", "2026-10-25T18:00", "2026-10-26T18:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := validRecurring(t)
			f.Zone, f.RRule = tt.zone, tt.rrule
			f.Start, f.End = at(t, tt.zone, tt.start), at(t, tt.zone, tt.end)
			if err := f.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if diff := cmp.Diff(tt.want, occurrencesOf(&f)); diff != "" {
				t.Errorf("occurrences of %s from %s (-want +got):\n%s", tt.rrule, tt.start, diff)
			}
		})
	}
}

func TestRRuleErrors(t *testing.T) {
	tests := []struct{ rrule, want string }{
		{"", "is not NAME=VALUE"},
		{"FREQ=YEARLY", "FREQ=YEARLY: only DAILY, WEEKLY or MONTHLY"},
		{"FREQ=HOURLY", "only DAILY, WEEKLY or MONTHLY"},
		{"INTERVAL=2", "FREQ is required"},
		{"FREQ=DAILY;FREQ=WEEKLY", "FREQ given twice"},
		{"FREQ=DAILY;BYSETPOS=1", "BYSETPOS is not supported"},
		{"FREQ=DAILY;WKST=SU", "WKST is not supported"},
		{"FREQ=DAILY;BYMONTHDAY=1", "BYMONTHDAY is not supported"},
		{"FREQ=DAILY;INTERVAL=0", "INTERVAL=0: want a number from 1 to 1000"},
		{"FREQ=DAILY;INTERVAL=1001", "INTERVAL=1001"},
		{"FREQ=DAILY;INTERVAL=-1", "INTERVAL=-1"},
		{"FREQ=DAILY;INTERVAL=+2", "INTERVAL=+2"},
		{"FREQ=DAILY;COUNT=0", "COUNT=0"},
		{"FREQ=DAILY;COUNT=99999999999999999999", "COUNT=99999999999999999999"},
		{"FREQ=DAILY;COUNT=2;UNTIL=20261203T180000Z", "COUNT and UNTIL together"},
		{"FREQ=DAILY;UNTIL=2026-12-03", "UNTIL=2026-12-03: want"},
		{"FREQ=DAILY;UNTIL=20261303T180000Z", "UNTIL=20261303T180000Z"},
		{"FREQ=DAILY;BYDAY=XX", `BYDAY: "XX" is not a weekday`},
		{"FREQ=DAILY;BYDAY=", "is not NAME=VALUE"},
		{"FREQ=DAILY;BYDAY=M", `BYDAY: "M" is not a weekday`},
		{"FREQ=WEEKLY;BYDAY=1FR", "BYDAY with an ordinal (1FR) only with FREQ=MONTHLY"},
		{"FREQ=MONTHLY;BYDAY=6FR", `BYDAY: "6FR": the ordinal is 1 to 5 or -1 to -5`},
		{"FREQ=MONTHLY;BYDAY=0FR", "the ordinal"},
		{"FREQ=DAILY;BYHOUR=24", "BYHOUR=24: want a number from 0 to 23"},
		{"FREQ=DAILY;BYHOUR=9,", "BYHOUR=: want"},
		{"FREQ=DAILY;BYMINUTE=60", "BYMINUTE=60"},
		{"freq=daily", "freq is not supported"},
		{"FREQ=DAILY;" + strings.Repeat("BYHOUR=1;", 60), "bytes, at most 512"},
	}
	for _, tt := range tests {
		f := validRecurring(t)
		f.RRule = tt.rrule
		err := f.Validate()
		if tt.rrule == "" {
			// An empty rule is a one-off freeze whose duration is misplaced.
			if err == nil || !strings.Contains(err.Error(), "duration: only for a recurring freeze") {
				t.Errorf("Validate(rrule %q) = %v, want the duration error", tt.rrule, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "freeze: rrule: ") {
			t.Errorf("Validate(rrule %q) = %v, want freeze: rrule: ...%s...", tt.rrule, err, tt.want)
		}
	}
}

// TestRRuleHostileIsBounded: a rule asking for an occurrence every minute
// of a year is refused, promptly, and evaluation stops at the bound.
func TestRRuleHostileIsBounded(t *testing.T) {
	f := validRecurring(t)
	f.Start = at(t, "", "2026-12-01T00:00")
	f.End = f.Start.Add(MaxSeries)
	var hours, minutes []string
	for h := range 24 {
		hours = append(hours, strconv.Itoa(h))
	}
	for m := range 60 {
		minutes = append(minutes, strconv.Itoa(m))
	}
	f.RRule = "FREQ=DAILY;BYHOUR=" + strings.Join(hours, ",") + ";BYMINUTE=" + strings.Join(minutes, ",")
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), "rrule: more than 1000 occurrences") {
		t.Errorf("Validate(every minute for a year) = %v, want more than 1000 occurrences", err)
	}
	r, err := f.rule()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range r.occurrences(f.dtstart(), f.End) {
		n++
	}
	if n != MaxOccurrences+1 {
		t.Errorf("occurrences of a hostile rule = %d, want the bound %d", n, MaxOccurrences+1)
	}
	// A far-away INTERVAL walks few periods and finds nothing.
	f.RRule = "FREQ=DAILY;INTERVAL=1000"
	f.Start = at(t, "", "2026-12-01T00:00")
	if got := occurrencesOf(&f); len(got) != 1 {
		t.Errorf("occurrences of INTERVAL=1000 = %v, want only the start", got)
	}
}
