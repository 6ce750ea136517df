package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/freeze/freezewatch"
	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/strictyaml"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// The /freezes page and the /v1/deploy/freezes API: list, create and end
// deploy freezes. Creating and ending are roles.Freeze (superadmins);
// each is an audit record in the freezes' own stream (freeze.RecordCluster
// and freeze.RecordEnvironment, shared with the scheduled windows' records).

// pastWindow is how long an ended freeze stays listed.
const pastWindow = 24 * time.Hour

// freezeTimeFormat is how pages show freeze times (UTC).
const freezeTimeFormat = "2006-01-02 15:04 UTC"

func freezeTime(t time.Time) string { return t.UTC().Format(freezeTimeFormat) }

// freezeState is where a stored freeze stands at an instant.
type freezeState string

const (
	stateActive   freezeState = "active"
	stateUpcoming freezeState = "upcoming"
	statePast     freezeState = "past"
	// stateGone is a freeze that ended more than pastWindow ago (kept
	// until pruned; not shown).
	stateGone freezeState = "gone"
)

// classify says where f stands at now and the window that says so: the
// current one (active), the next (upcoming), or the last (past, gone).
func classify(f *freeze.Freeze, now time.Time) (freezeState, freeze.Window) {
	if w, ok := f.WindowAt(now); ok {
		return stateActive, w
	}
	if w, ok := f.NextWindow(now); ok {
		return stateUpcoming, w
	}
	var last freeze.Window
	for w := range f.Windows() {
		if w.Start.After(now) {
			break
		}
		last = w
	}
	if !last.End.IsZero() && now.Sub(last.End) <= pastWindow {
		return statePast, last
	}
	return stateGone, last
}

// freezeRow is f as pages show it, with window w (whose end is when the
// target opens, or whose start when it freezes: until).
func freezeRow(f *freeze.Freeze, w freeze.Window, until time.Time) templates.FreezeRow {
	row := templates.FreezeRow{ID: f.ID, Scope: f.Scope.String(), Reason: f.Reason, Ticket: f.Ticket, Author: f.Author.String(),
		Start: freezeTime(f.Start), End: freezeTime(f.End)}
	if f.RRule != "" {
		row.Recurring = f.RRule + " for " + time.Duration(f.Duration).String()
		if f.Zone != "" {
			row.Recurring += " (" + f.Zone + ")"
		}
	}
	if !w.Start.IsZero() {
		row.Window = freezeTime(w.Start) + " → " + freezeTime(w.End)
	}
	if !until.IsZero() {
		row.Until = freezeTime(until)
	}
	return row
}

// freezeJSON is one freeze in the API: the stored freeze, where it stands
// and its window (see classify).
type freezeJSON struct {
	freeze.Freeze
	State  freezeState   `json:"state"`
	Window freeze.Window `json:"window"`
}

// freezesJSON is GET /v1/deploy/freezes.
type freezesJSON struct {
	Now      time.Time    `json:"now"`
	Active   []freezeJSON `json:"active"`
	Upcoming []freezeJSON `json:"upcoming"`
	Past     []freezeJSON `json:"past"`
}

// listFreezes sorts l at now into the page's and the API's three lists.
func listFreezes(l freeze.List, now time.Time) freezesJSON {
	out := freezesJSON{Now: now.UTC(), Active: []freezeJSON{}, Upcoming: []freezeJSON{}, Past: []freezeJSON{}}
	for i := range l {
		st, w := classify(&l[i], now)
		j := freezeJSON{Freeze: l[i], State: st, Window: w}
		switch st {
		case stateActive:
			out.Active = append(out.Active, j)
		case stateUpcoming:
			out.Upcoming = append(out.Upcoming, j)
		case statePast:
			out.Past = append(out.Past, j)
		}
	}
	return out
}

// freezeGate returns the configured freezes, or the answer without them.
func (s *Server) freezeGate() (Freezes, error) {
	if s.opts.Freezes == nil {
		return nil, &httpError{Status: http.StatusServiceUnavailable, Reason: "NoFreezes", Public: "this deploy-web keeps no freezes (it runs without its own namespace: see docs/freezes.md)"}
	}
	return s.opts.Freezes, nil
}

// mayFreeze is the decision of the freeze routes (roles.Freeze, not about
// one target), for the form and the end-now buttons.
func (s *Server) mayFreeze(ctx context.Context) bool {
	return s.grantsOf(ctx).AllowSomewhere(roles.Freeze).Allowed
}

// freezesPage serves GET /freezes.
func (s *Server) freezesPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderFreezes(w, r, http.StatusOK, templates.FreezeFormProps{})
}

// renderFreezes draws /freezes with form (what was typed, a refusal).
func (s *Server) renderFreezes(w http.ResponseWriter, r *http.Request, status int, form templates.FreezeFormProps) error {
	p := templates.FreezesProps{Layout: s.layout(r, "freezes", "Deploy freezes"), Configured: s.opts.Freezes != nil,
		CanFreeze: s.mayFreeze(r.Context()), Form: form}
	now := s.opts.Now()
	if s.opts.Freezes != nil {
		l, at, err := s.opts.Freezes.Snapshot(r.Context())
		now = at
		if err != nil {
			s.log.Warn("freezes not read", "err", err, "request_id", requestID(r.Context()))
			p.Unreadable = "The freezes could not be read (see the server log): writes are refused until they can."
			if te, ok := cmstore.IsTampered(err); ok {
				p.Unreadable = "Writes are refused as if frozen: " + te.Public() + "."
			}
		}
		lists := listFreezes(l, now)
		for _, f := range lists.Active {
			_, opens, _ := freeze.List{f.Freeze}.Active(now, freeze.Target{})
			p.Active = append(p.Active, freezeRow(&f.Freeze, f.Window, opens))
		}
		for _, f := range lists.Upcoming {
			p.Upcoming = append(p.Upcoming, freezeRow(&f.Freeze, f.Window, f.Window.Start))
		}
		for _, f := range lists.Past {
			p.Past = append(p.Past, freezeRow(&f.Freeze, f.Window, time.Time{}))
		}
	}
	p.Now = freezeTime(now)
	return s.render(w, r, status, templates.FreezesView(p))
}

// freezeRequest is the body of POST /v1/deploy/freezes: a freeze without
// what the server sets (id, author, created).
type freezeRequest struct {
	Scope    scope.Scope     `json:"scope"`
	Start    time.Time       `json:"start"`
	End      time.Time       `json:"end"`
	Zone     string          `json:"zone,omitempty"`
	RRule    string          `json:"rrule,omitempty"`
	Duration freeze.Duration `json:"duration,omitempty"`
	Reason   string          `json:"reason"`
	Ticket   string          `json:"ticket,omitempty"`
}

// freeze is the request as a Freeze by the signed-in person.
func (q freezeRequest) freeze(ctx context.Context) freeze.Freeze {
	f := freeze.Freeze{Scope: q.Scope, Start: q.Start, End: q.End, Zone: q.Zone, RRule: q.RRule, Duration: q.Duration, Reason: q.Reason, Ticket: q.Ticket}
	if id, ok := auth.FromContext(ctx); ok {
		f.Author = freeze.Author{Email: id.Email, Subject: id.Subject}
	}
	return f
}

// maxFreezeBody bounds a freeze's JSON or form (a scope of many selectors).
const maxFreezeBody = 32 << 10

// readFreezeForm reads the /freezes form: comma-separated scope lists,
// datetime-local times (in the zone when one is given, else UTC).
func readFreezeForm(r *http.Request) (freezeRequest, templates.FreezeFormProps, error) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxFreezeBody)
	if err := r.ParseForm(); err != nil {
		return freezeRequest{}, templates.FreezeFormProps{}, badRequest("body: unreadable form")
	}
	v := r.PostForm
	form := templates.FreezeFormProps{Environments: v.Get("environments"), Clusters: v.Get("clusters"), Namespaces: v.Get("namespaces"), Apps: v.Get("apps"),
		Start: v.Get("start"), End: v.Get("end"), Zone: strings.TrimSpace(v.Get("zone")), RRule: strings.TrimSpace(v.Get("rrule")), Duration: strings.TrimSpace(v.Get("duration")),
		Reason: v.Get("reason"), Ticket: strings.TrimSpace(v.Get("ticket"))}
	q := freezeRequest{Scope: scope.Scope{Environments: splitSelectors(form.Environments), Clusters: splitSelectors(form.Clusters),
		Namespaces: splitSelectors(form.Namespaces), Apps: splitSelectors(form.Apps)}, Zone: form.Zone, RRule: form.RRule, Reason: strings.TrimSpace(form.Reason), Ticket: form.Ticket}
	loc := time.UTC
	if form.Zone != "" {
		l, err := time.LoadLocation(form.Zone)
		if err != nil || form.Zone == "Local" {
			return q, form, badRequest("zone: %q is not a time zone name (IANA, like Europe/Berlin)", form.Zone)
		}
		loc = l
	}
	var err error
	if q.Start, err = parseLocalTime("start", form.Start, loc); err != nil {
		return q, form, err
	}
	if q.End, err = parseLocalTime("end", form.End, loc); err != nil {
		return q, form, err
	}
	if form.Duration != "" {
		if err := q.Duration.UnmarshalText([]byte(form.Duration)); err != nil {
			return q, form, badRequest("duration: %q is not a duration (like 14h or 90m)", form.Duration)
		}
	}
	return q, form, nil
}

// parseLocalTime reads a datetime-local value ("2026-12-03T18:00", seconds
// optional) in loc.
func parseLocalTime(field, v string, loc *time.Location) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, strings.TrimSpace(v), loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, badRequest("%s: %q is not a date and time (2026-12-03T18:00)", field, v)
}

// splitSelectors splits a comma-separated list, dropping blanks.
func splitSelectors(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// readFreezeJSON reads POST /v1/deploy/freezes' body strictly.
func readFreezeJSON(r *http.Request) (freezeRequest, error) {
	var q freezeRequest
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxFreezeBody))
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		err = dec.Decode(&q)
		if err == nil && dec.Decode(&struct{}{}) != io.EOF {
			return q, badRequest("body: want one JSON object")
		}
	}
	if err != nil {
		return q, badRequest("body: want {\"scope\": {\"environments\": [...]}, \"start\": RFC 3339, \"end\": RFC 3339, \"reason\": \"...\"} and optionally zone, rrule, duration, ticket: %s", jsonProblem(err, body, &q))
	}
	return q, nil
}

// jsonProblem names what is wrong with body, a JSON document that did not
// decode into v, without echoing it (a key no field of v takes is named,
// quoted and cut), from the decoder's typed errors and v's type, never
// from the text of err.
func jsonProblem(err error, body []byte, v any) string {
	var ute *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &ute):
		return "field " + ute.Field + " has the wrong type"
	case errors.As(err, &se):
		return "not JSON"
	}
	if k, ok := strictyaml.UnknownJSONKey(body, reflect.TypeOf(v)); ok {
		return "unknown field " + strconv.Quote(trimForMessage(k)) + " (id, author and created are set by the server)"
	}
	return "unreadable"
}

// addFreeze stores q as the person's freeze and records it; a freeze the
// store refuses is a 400 naming the field (freeze's own words).
func (s *Server) addFreeze(ctx context.Context, g Freezes, q freezeRequest) (freeze.Freeze, error) {
	f := q.freeze(ctx)
	if err := f.Validate(); err != nil {
		var ie *freeze.InvalidError
		if !errors.As(err, &ie) {
			return f, err
		}
		return f, badRequest("%s", ie.Public())
	}
	if !f.End.After(g.Now()) {
		return f, badRequest("freeze: end: %s is in the past", freezeTime(f.End))
	}
	stored, err := g.Store().Add(ctx, f)
	var full *freeze.FullError
	if errors.As(err, &full) {
		// Make room: drop the freezes that ended more than a day ago (no
		// page lists them any more), then try once more. Safe on any
		// replica: Prune is a compare-and-swap like Add.
		if pruned, perr := g.Store().Prune(ctx, g.Now().Add(-pastWindow)); perr == nil && len(pruned) > 0 {
			stored, err = g.Store().Add(ctx, f)
		}
	}
	f = stored
	switch {
	case errors.As(err, &full):
		return f, &httpError{Status: http.StatusConflict, Reason: "FreezesFull", Public: full.Error()}
	case err != nil:
		return f, err // the cluster: a 500, logged
	}
	g.Forget()
	s.recordFreeze(ctx, audit.VerbFreeze, f, "froze "+f.Scope.String()+" from "+freezeTime(f.Start)+" to "+freezeTime(f.End)+freezeRuleNote(f)+": "+f.Reason)
	s.log.Info("freeze", "user", auditActor(ctx).Subject, "freeze", f.ID, "scope", f.Scope.String(), "start", f.Start, "end", f.End, "rrule", f.RRule, "request_id", requestID(ctx))
	return f, nil
}

// freezeRuleNote is a recurring freeze's rule for a record.
func freezeRuleNote(f freeze.Freeze) string {
	if f.RRule == "" {
		return ""
	}
	return " (" + f.RRule + " for " + time.Duration(f.Duration).String() + ")"
}

// endFreeze ends freeze id now (freeze.Store.End: one that started stays,
// ended now, so timelines keep what it froze) and records it.
func (s *Server) endFreeze(ctx context.Context, g Freezes, id string) (freeze.Freeze, error) {
	f, ended, err := g.Store().End(ctx, id, g.Now())
	if errors.Is(err, freeze.ErrNotFound) {
		return f, notFound("freeze")
	}
	if err != nil {
		return f, err
	}
	g.Forget()
	s.recordFreeze(ctx, audit.VerbUnfreeze, f, freezewatch.UnfreezeMessage(ended, "ended freeze of "+f.Scope.String()+" ("+f.Reason+") at "+freezeTime(g.Now())))
	s.log.Info("unfreeze", "user", auditActor(ctx).Subject, "freeze", f.ID, "request_id", requestID(ctx))
	return f, nil
}

// recordFreeze writes the audit record of a freeze created or ended.
func (s *Server) recordFreeze(ctx context.Context, verb audit.Verb, f freeze.Freeze, msg string) {
	appendRecord(ctx, s.opts.Audit, audit.Record{Time: time.Now(), Actor: auditActor(ctx), Verb: verb,
		Cluster: freeze.RecordCluster, Environment: freeze.RecordEnvironment, Outcome: audit.OutcomeSucceeded,
		Message: msg + " [" + f.ID + "]", Blockers: []string{}})
}

// freezeCreate serves POST /freezes (the form): back to /freezes, or the
// page with the refusal and what was typed.
func (s *Server) freezeCreate(w http.ResponseWriter, r *http.Request) error {
	g, err := s.freezeGate()
	if err != nil {
		return err
	}
	q, form, err := readFreezeForm(r)
	if err == nil {
		_, err = s.addFreeze(r.Context(), g, q)
	}
	var he *httpError
	if errors.As(err, &he) && he.Status < 500 {
		form.Error = he.Public
		return s.renderFreezes(w, r, he.Status, form)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, paths.Freezes(), http.StatusSeeOther)
	return nil
}

// freezeEnd serves POST /freezes/{id}/end.
func (s *Server) freezeEnd(w http.ResponseWriter, r *http.Request) error {
	g, err := s.freezeGate()
	if err != nil {
		return err
	}
	if _, err := s.endFreeze(r.Context(), g, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, paths.Freezes(), http.StatusSeeOther)
	return nil
}

// apiFreezes serves GET /v1/deploy/freezes.
func (s *Server) apiFreezes(w http.ResponseWriter, r *http.Request) error {
	g, err := s.freezeGate()
	if err != nil {
		return err
	}
	l, now, err := g.Snapshot(r.Context())
	if err != nil {
		return &httpError{Status: http.StatusServiceUnavailable, Reason: "FreezesUnreadable", Public: "the freezes could not be read: see the server log", Err: err}
	}
	writeJSON(w, http.StatusOK, listFreezes(l, now))
	return nil
}

// apiFreezeCreate serves POST /v1/deploy/freezes: 201 with the freeze.
func (s *Server) apiFreezeCreate(w http.ResponseWriter, r *http.Request) error {
	g, err := s.freezeGate()
	if err != nil {
		return err
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		return &httpError{Status: http.StatusUnsupportedMediaType, Reason: "UnsupportedMediaType", Public: "send the freeze as application/json"}
	}
	q, err := readFreezeJSON(r)
	if err != nil {
		return err
	}
	f, err := s.addFreeze(r.Context(), g, q)
	if err != nil {
		return err
	}
	st, win := classify(&f, g.Now())
	writeJSON(w, http.StatusCreated, freezeJSON{Freeze: f, State: st, Window: win})
	return nil
}

// apiFreezeDelete serves DELETE /v1/deploy/freezes/{id}: the freeze ends
// now; 200 with it.
func (s *Server) apiFreezeDelete(w http.ResponseWriter, r *http.Request) error {
	g, err := s.freezeGate()
	if err != nil {
		return err
	}
	f, err := s.endFreeze(r.Context(), g, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}
