package freeze

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"
)

// frequency is an RRULE's FREQ.
type frequency int

const (
	daily frequency = iota + 1
	weekly
	monthly
)

// weekdayNum is one BYDAY entry: a weekday, and in MONTHLY an optional
// ordinal n (1 first, -1 last; 0 every).
type weekdayNum struct {
	day time.Weekday
	n   int
}

// rule is a parsed RRULE; see the package doc for what is supported.
type rule struct {
	freq     frequency
	interval int
	byDay    []weekdayNum
	byHour   []int
	byMinute []int
	count    int       // 0: none
	until    time.Time // zero: none; inclusive
}

// Bounds of rule parts.
const (
	maxInterval = 1000
	maxCount    = MaxOccurrences
	// maxPeriods bounds the days, weeks or months one evaluation walks,
	// whatever the dates say (MaxSeries allows 367 days).
	maxPeriods = 400
)

// rule parses f.RRule in f's zone.
func (f *Freeze) rule() (rule, error) {
	loc, err := f.location()
	if err != nil {
		return rule{}, err
	}
	r, err := parseRRule(f.RRule, loc)
	if err != nil {
		return rule{}, fmt.Errorf("rrule: %w", err)
	}
	return r, nil
}

// dtstart is Start in the freeze's zone (UTC if the zone does not load,
// which Validate refuses).
func (f *Freeze) dtstart() time.Time {
	loc, err := f.location()
	if err != nil {
		loc = time.UTC
	}
	return f.Start.In(loc)
}

var weekdays = map[string]time.Weekday{
	"MO": time.Monday, "TU": time.Tuesday, "WE": time.Wednesday, "TH": time.Thursday,
	"FR": time.Friday, "SA": time.Saturday, "SU": time.Sunday,
}

// parseRRule parses an RRULE value ("FREQ=WEEKLY;BYDAY=FR;BYHOUR=16"), with
// or without the "RRULE:" prefix; a local UNTIL is read in loc.
func parseRRule(s string, loc *time.Location) (rule, error) {
	if len(s) > MaxRRuleBytes {
		return rule{}, fmt.Errorf("%d bytes, at most %d", len(s), MaxRRuleBytes)
	}
	s = strings.TrimPrefix(s, "RRULE:")
	r := rule{interval: 1}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ";") {
		key, val, ok := strings.Cut(part, "=")
		if !ok || val == "" {
			return rule{}, fmt.Errorf("%q is not NAME=VALUE", truncate(part, 40))
		}
		if seen[key] {
			return rule{}, fmt.Errorf("%s given twice", key)
		}
		seen[key] = true
		var err error
		switch key {
		case "FREQ":
			switch val {
			case "DAILY":
				r.freq = daily
			case "WEEKLY":
				r.freq = weekly
			case "MONTHLY":
				r.freq = monthly
			default:
				err = fmt.Errorf("FREQ=%s: only DAILY, WEEKLY or MONTHLY", truncate(val, 20))
			}
		case "INTERVAL":
			r.interval, err = ruleInt(key, val, 1, maxInterval)
		case "COUNT":
			r.count, err = ruleInt(key, val, 1, maxCount)
		case "UNTIL":
			r.until, err = parseUntil(val, loc)
		case "BYHOUR":
			r.byHour, err = ruleInts(key, val, 0, 23)
		case "BYMINUTE":
			r.byMinute, err = ruleInts(key, val, 0, 59)
		case "BYDAY":
			r.byDay, err = parseByDay(val)
		default:
			err = fmt.Errorf("%s is not supported (FREQ, INTERVAL, BYDAY, BYHOUR, BYMINUTE, COUNT, UNTIL)", truncate(key, 20))
		}
		if err != nil {
			return rule{}, err
		}
	}
	switch {
	case r.freq == 0:
		return rule{}, errors.New("FREQ is required")
	case r.count > 0 && !r.until.IsZero():
		return rule{}, errors.New("COUNT and UNTIL together: RFC 5545 allows one of them")
	}
	for _, d := range r.byDay {
		if d.n != 0 && r.freq != monthly {
			return rule{}, fmt.Errorf("BYDAY with an ordinal (%d%s) only with FREQ=MONTHLY", d.n, dayName(d.day))
		}
	}
	return r, nil
}

// ruleInt parses one integer rule value within [lo, hi].
func ruleInt(key, val string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(val)
	if err != nil || n < lo || n > hi || strings.HasPrefix(val, "+") {
		return 0, fmt.Errorf("%s=%s: want a number from %d to %d", key, truncate(val, 20), lo, hi)
	}
	return n, nil
}

// ruleInts parses a comma-separated list of integers within [lo, hi],
// sorted and without repeats.
func ruleInts(key, val string, lo, hi int) ([]int, error) {
	var out []int
	for v := range strings.SplitSeq(val, ",") {
		n, err := ruleInt(key, v, lo, hi)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// parseByDay parses BYDAY: MO..SU, each with an optional ordinal -5..5.
func parseByDay(val string) ([]weekdayNum, error) {
	var out []weekdayNum
	for v := range strings.SplitSeq(val, ",") {
		if len(v) < 2 {
			return nil, fmt.Errorf("BYDAY: %q is not a weekday (MO, TU, WE, TH, FR, SA, SU)", v)
		}
		day, ok := weekdays[v[len(v)-2:]]
		if !ok {
			return nil, fmt.Errorf("BYDAY: %q is not a weekday (MO, TU, WE, TH, FR, SA, SU)", truncate(v, 20))
		}
		wn := weekdayNum{day: day}
		if ord := v[:len(v)-2]; ord != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(ord, "+"))
			if err != nil || n == 0 || n < -5 || n > 5 {
				return nil, fmt.Errorf("BYDAY: %q: the ordinal is 1 to 5 or -1 to -5", truncate(v, 20))
			}
			wn.n = n
		}
		if !slices.Contains(out, wn) {
			out = append(out, wn)
		}
	}
	return out, nil
}

func dayName(d time.Weekday) string {
	for k, v := range weekdays {
		if v == d {
			return k
		}
	}
	return "?"
}

// parseUntil reads UNTIL: 20261231T235959Z (UTC), 20261231T235959 (local to
// loc) or 20261231 (the end of that day, local to loc).
func parseUntil(val string, loc *time.Location) (time.Time, error) {
	var t time.Time
	var err error
	switch {
	case len(val) == 16 && strings.HasSuffix(val, "Z"):
		t, err = time.ParseInLocation("20060102T150405Z", val, time.UTC)
	case len(val) == 15:
		t, err = time.ParseInLocation("20060102T150405", val, loc)
	case len(val) == 8:
		t, err = time.ParseInLocation("20060102", val, loc)
		t = t.AddDate(0, 0, 1).Add(-time.Second)
	default:
		err = errors.New("bad length")
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("UNTIL=%s: want 20261231T235959Z, 20261231T235959 or 20261231", truncate(val, 20))
	}
	return t, nil
}

// occurrences yields the starts of r's occurrences from dtstart (in its
// location), in order, before end: at most MaxOccurrences+1 (so a caller
// can tell "too many"), walking at most maxPeriods periods.
func (r rule) occurrences(dtstart, end time.Time) iter.Seq[time.Time] {
	return func(yield func(time.Time) bool) {
		loc := dtstart.Location()
		hours := r.byHour
		if len(hours) == 0 {
			hours = []int{dtstart.Hour()}
		}
		minutes := r.byMinute
		if len(minutes) == 0 {
			minutes = []int{dtstart.Minute()}
		}
		// Calendar arithmetic on dates in UTC (no DST), times built in loc.
		first := time.Date(dtstart.Year(), dtstart.Month(), dtstart.Day(), 0, 0, 0, 0, time.UTC)
		n := 0
		for p := range maxPeriods {
			days, periodStart := r.periodDays(first, dtstart, p)
			// A period that begins after end (a day of slack for zones
			// ahead of UTC) holds nothing more.
			if periodStart.After(end.Add(24 * time.Hour)) {
				return
			}
			for _, d := range days {
				for _, h := range hours {
					for _, m := range minutes {
						t := time.Date(d.Year(), d.Month(), d.Day(), h, m, dtstart.Second(), 0, loc)
						if t.Before(dtstart) {
							continue
						}
						if !t.Before(end) || (!r.until.IsZero() && t.After(r.until)) {
							return
						}
						n++
						if !yield(t) || n > MaxOccurrences || (r.count > 0 && n >= r.count) {
							return
						}
					}
				}
			}
		}
	}
}

// periodDays returns the days (UTC midnights) of period p that the rule
// selects, in order, and the first day of the period.
func (r rule) periodDays(first, dtstart time.Time, p int) ([]time.Time, time.Time) {
	step := p * r.interval
	switch r.freq {
	case daily:
		d := first.AddDate(0, 0, step)
		if len(r.byDay) > 0 && !slices.ContainsFunc(r.byDay, func(w weekdayNum) bool { return w.day == d.Weekday() }) {
			return nil, d
		}
		return []time.Time{d}, d
	case weekly:
		// Weeks start on Monday (WKST=MO, the RFC's default).
		monday := first.AddDate(0, 0, -((int(first.Weekday())+6)%7)+7*step)
		want := []time.Weekday{dtstart.Weekday()}
		if len(r.byDay) > 0 {
			want = want[:0]
			for _, w := range r.byDay {
				want = append(want, w.day)
			}
		}
		var out []time.Time
		for i := range 7 {
			d := monday.AddDate(0, 0, i)
			if slices.Contains(want, d.Weekday()) {
				out = append(out, d)
			}
		}
		return out, monday
	default: // monthly
		m := time.Date(first.Year(), first.Month()+time.Month(step), 1, 0, 0, 0, 0, time.UTC)
		last := m.AddDate(0, 1, -1).Day()
		if len(r.byDay) == 0 {
			if dtstart.Day() > last {
				return nil, m // RFC 5545: a month without the day has no occurrence
			}
			return []time.Time{m.AddDate(0, 0, dtstart.Day()-1)}, m
		}
		var out []time.Time
		for day := 1; day <= last; day++ {
			d := m.AddDate(0, 0, day-1)
			nth, fromEnd := (day-1)/7+1, -((last-day)/7 + 1)
			if slices.ContainsFunc(r.byDay, func(w weekdayNum) bool {
				return w.day == d.Weekday() && (w.n == 0 || w.n == nth || w.n == fromEnd)
			}) {
				out = append(out, d)
			}
		}
		return out, m
	}
}
