package freeze

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	_ "time/tzdata" // a stored zone must load on every replica, with or without the image's zoneinfo
	"unicode"
	"unicode/utf8"

	"github.com/hanzoai/deploy-web/internal/textfmt"

	"github.com/hanzoai/deploy-web/internal/actor"
	"github.com/hanzoai/deploy-web/internal/scope"
)

// Limits of a freeze.
const (
	// MaxWindow bounds a one-off freeze (End-Start) and each occurrence of
	// a recurring one (Duration).
	MaxWindow = 14 * 24 * time.Hour
	// MaxSeries bounds a recurring freeze (End-Start).
	MaxSeries = 366 * 24 * time.Hour
	// MaxOccurrences bounds the occurrences of a recurring freeze.
	MaxOccurrences = 1000
	// MaxReasonBytes bounds Reason (and a break-glass reason).
	MaxReasonBytes = 500
	// MaxTicketBytes bounds Ticket.
	MaxTicketBytes = 2048
	// MaxRRuleBytes bounds RRule.
	MaxRRuleBytes = 512
)

// Target is what an action touches; see package scope. An empty field is
// "all of them".
type Target = scope.Target

// Author is who created a freeze, as auth knows them.
type Author struct {
	Email   string `json:"email,omitempty"`
	Subject string `json:"subject"`
}

// String is the author as every actor prints (actor.Actor.String).
func (a Author) String() string {
	return actor.Actor{Email: a.Email, Subject: a.Subject}.String()
}

// Duration is a time.Duration written as text ("2h30m") in JSON.
type Duration time.Duration

// MarshalText writes d as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a time.ParseDuration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("freeze: duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// Freeze is one deploy freeze. See the package doc.
type Freeze struct {
	// ID is set by Store.Add.
	ID    string      `json:"id"`
	Scope scope.Scope `json:"scope"`
	Start time.Time   `json:"start"`
	End   time.Time   `json:"end"`
	// Zone is the IANA zone of RRule's wall-clock times; "" is UTC.
	Zone string `json:"zone,omitempty"`
	// RRule makes the freeze recurring; Duration is each occurrence's length.
	RRule    string   `json:"rrule,omitempty"`
	Duration Duration `json:"duration,omitempty"`
	Reason   string   `json:"reason"`
	// Ticket is an optional http(s) link (a change ticket, an incident).
	Ticket string `json:"ticket,omitempty"`
	Author Author `json:"author"`
	// Created is set by Store.Add.
	Created time.Time `json:"created,omitzero"`
}

// idPattern is the form of a freeze ID (Store.Add makes "fz-" and hex).
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// Validate reports the first problem with f, naming its field ("freeze:
// end: ..."). It does not compare with the current time (Store.Add refuses
// a freeze that has already ended).
func (f *Freeze) Validate() error {
	if err := f.validate(); err != nil {
		if f.ID != "" {
			return &InvalidError{public: fmt.Sprintf("freeze: %s: %v", f.ID, err), err: err}
		}
		return &InvalidError{public: fmt.Sprintf("freeze: %v", err), err: err}
	}
	return nil
}

// InvalidError is a freeze Validate refuses; Public names the field and
// the mistake, in words a user may read.
type InvalidError struct {
	public string
	err    error
}

func (e *InvalidError) Error() string { return e.public }

// Public is the mistake in words a user may read.
func (e *InvalidError) Public() string { return e.public }

func (e *InvalidError) Unwrap() error { return e.err }

func (f *Freeze) validate() error {
	if f.ID != "" && !idPattern.MatchString(f.ID) {
		return fmt.Errorf("id: %q is not a freeze id (lower-case letters, digits and '-', at most 40)", f.ID)
	}
	if f.Scope.IsZero() {
		return errors.New(`scope: name at least one environment, cluster, namespace or App (clusters: ["*"] freezes every cluster)`)
	}
	if err := f.Scope.Validate("scope"); err != nil {
		return err
	}
	switch {
	case f.Start.IsZero():
		return errors.New("start: required")
	case f.End.IsZero():
		return errors.New("end: required: every freeze ends")
	case !f.End.After(f.Start):
		return fmt.Errorf("end: %s is not after start %s", Stamp(f.End), Stamp(f.Start))
	}
	if _, err := f.location(); err != nil {
		return err
	}
	if f.RRule == "" {
		if f.Duration != 0 {
			return errors.New("duration: only for a recurring freeze (with rrule); a one-off freeze lasts from start to end")
		}
		if f.End.Sub(f.Start) > MaxWindow {
			return fmt.Errorf("end: %s is more than 14 days after start %s: split the freeze, or make it recurring", Stamp(f.End), Stamp(f.Start))
		}
	} else {
		switch d := time.Duration(f.Duration); {
		case d <= 0:
			return errors.New("duration: required with rrule, the length of each occurrence (for example 2h)")
		case d > MaxWindow:
			return fmt.Errorf("duration: %s is more than 14 days", d)
		}
		if f.End.Sub(f.Start) > MaxSeries {
			return fmt.Errorf("end: %s is more than 366 days after start %s: a recurring freeze is renewed, not endless", Stamp(f.End), Stamp(f.Start))
		}
		r, err := f.rule()
		if err != nil {
			return err
		}
		n := 0
		for range r.occurrences(f.dtstart(), f.End) {
			n++
		}
		switch {
		case n > MaxOccurrences:
			return fmt.Errorf("rrule: more than %d occurrences before end: make them fewer (a larger INTERVAL, fewer BYHOUR/BYMINUTE values, an earlier end)", MaxOccurrences)
		case n == 0:
			return fmt.Errorf("rrule: %q has no occurrence between start and end", f.RRule)
		}
	}
	if err := checkText("reason", f.Reason, true); err != nil {
		return err
	}
	if err := checkTicket(f.Ticket); err != nil {
		return err
	}
	if f.Author.Subject == "" {
		return errors.New("author.subject: required (who created the freeze)")
	}
	if err := checkText("author.email", f.Author.Email, false); err != nil {
		return err
	}
	return checkText("author.subject", f.Author.Subject, false)
}

// location loads f.Zone.
func (f *Freeze) location() (*time.Location, error) {
	if f.Zone == "" {
		return time.UTC, nil
	}
	if len(f.Zone) > 64 || f.Zone == "Local" {
		// "Local" is each replica's own zone: not one time for everyone.
		return nil, fmt.Errorf("zone: %q is not a time zone name (IANA, like Europe/Berlin)", truncate(f.Zone, 64))
	}
	loc, err := time.LoadLocation(f.Zone)
	if err != nil {
		return nil, fmt.Errorf("zone: %q is not a time zone name (IANA, like Europe/Berlin): %w", f.Zone, err)
	}
	return loc, nil
}

// checkText checks a one-line text field: at most MaxReasonBytes, UTF-8, no
// control characters, and not blank when required.
func checkText(field, s string, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return fmt.Errorf("%s: required", field)
	case len(s) > MaxReasonBytes:
		return fmt.Errorf("%s: %d bytes, at most %d", field, len(s), MaxReasonBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s: not UTF-8", field)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("%s: has a control character (a line break?): write one line", field)
	}
	return nil
}

// checkTicket checks an optional ticket link: an absolute http(s) URL
// with a host and no credentials (pages render it as a plain link, so no
// other scheme, javascript: above all, ever reaches an href).
func checkTicket(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > MaxTicketBytes {
		return fmt.Errorf("ticket: %d bytes, at most %d", len(s), MaxTicketBytes)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("ticket: not a URL: %w", err)
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("ticket: %q: only http(s) links", truncate(s, 80))
	case u.Host == "":
		return fmt.Errorf("ticket: %q has no host", truncate(s, 80))
	case u.User != nil:
		return errors.New("ticket: a link with credentials (user@) is refused")
	case strings.IndexFunc(s, textfmt.Hidden) >= 0 || strings.ContainsAny(s, " \"<>"):
		return fmt.Errorf("ticket: %q has characters a link does not", truncate(s, 80))
	}
	return nil
}

// truncate cuts s to n bytes for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Stamp formats an instant for messages: "2026-12-03 18:00 UTC" (one
// format for the freezes' texts, records and windows).
func Stamp(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04 UTC")
}
