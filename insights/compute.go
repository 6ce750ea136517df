package insights

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/timeline/recordentries"
)

// Bounds of one computation.
const (
	// FailureWindow is how long after a deployment a Degraded App, a
	// rollback or a failed promotion check counts against it.
	FailureWindow = time.Hour
	// CommitLookback is how far before the window the records are read
	// for a commit's first appearance (its lead time's start) and for the
	// commit each environment ran before the window.
	CommitLookback = 7 * day
	// MaxRecords bounds the audit records one computation reads (ten
	// pages of audit.MaxLimit); past it the report says Truncated.
	MaxRecords = 10 * audit.MaxLimit
	// MaxEntries bounds the timeline health entries it reads.
	MaxEntries = 20 * timeline.MaxLimit
)

// healthDegraded and healthHealthy are the health codes of a timeline
// health entry (objrules' codes, ArgoCD's).
const (
	healthDegraded = "Degraded"
	healthHealthy  = "Healthy"
)

// Input is what Compute reads: the records and health entries a handler
// read (bounded), and how to place them.
type Input struct {
	// Now ends the window.
	Now    time.Time
	Window Window
	// Environment and App select one environment and one App name (any
	// namespace); "" selects all.
	Environment, App string
	// Records are the audit records from ReadSince(Now, Window) to Now,
	// in any order (at most MaxRecords are read).
	Records []audit.Record
	// Health are the timeline's health entries of the window, in any
	// order (at most MaxEntries are read).
	Health []timeline.Entry
	// IsApp says whether group/kind is the App resource of a cluster (for
	// the Apps of an environment's apply record: recordentries.AppsOf).
	IsApp func(cluster, group, kind string) bool
	// EnvOf is the environment an App belongs to ("" for none).
	EnvOf func(timeline.App) string
	// SourceOf is the environment promoted into env ("" for none).
	SourceOf func(env string) string
	// Visible keeps the Apps the reader may see (nil: every App).
	Visible func(timeline.App) bool
	// Truncated says a read stopped at its bound.
	Truncated bool
}

// ReadSince is where the records Compute needs begin: CommitLookback
// before the window.
func ReadSince(now time.Time, w Window) time.Time {
	return now.Add(-w.Duration() - CommitLookback)
}

// Metrics are the four metrics of one selection.
type Metrics struct {
	DeploymentFrequency Frequency   `json:"deploymentFrequency"`
	LeadTime            Durations   `json:"leadTime"`
	ChangeFailureRate   FailureRate `json:"changeFailureRate"`
	TimeToRestore       Restore     `json:"timeToRestore"`
}

// Frequency is how many deployments went live, and their rate per day
// over the window (or the bucket).
type Frequency struct {
	Deployments int     `json:"deployments"`
	PerDay      float64 `json:"perDay"`
}

// Durations summarise a set of durations, in seconds: how many, the
// median and the 90th percentile (0 when Count is 0).
type Durations struct {
	Count         int     `json:"count"`
	MedianSeconds float64 `json:"medianSeconds"`
	P90Seconds    float64 `json:"p90Seconds"`
}

// FailureRate is the share of deployments that failed (Rate, 0 to 1; 0
// without deployments).
type FailureRate struct {
	Deployments int     `json:"deployments"`
	Failures    int     `json:"failures"`
	Rate        float64 `json:"rate"`
}

// Restore is the time from Degraded to Healthy of the episodes restored,
// and how many episodes are not restored yet.
type Restore struct {
	Durations
	Unrestored int `json:"unrestored"`
}

// Row is the metrics of one environment (App "": the environment as a
// whole, each deployment counted once) or of one App in it.
type Row struct {
	Environment string `json:"environment"`
	Cluster     string `json:"cluster,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	App         string `json:"app,omitempty"`
	Metrics
}

// Bucket is the metrics of one bar of the charts: [Start, End).
type Bucket struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Metrics
}

// Report is the answer: the selection's metrics (deployments counted
// once per environment's deployment), per bucket, and per environment
// and App.
type Report struct {
	Window      Window    `json:"window"`
	Since       time.Time `json:"since"`
	Until       time.Time `json:"until"`
	Environment string    `json:"environment,omitempty"`
	App         string    `json:"app,omitempty"`
	Metrics
	Buckets   []Bucket `json:"buckets"`
	Rows      []Row    `json:"rows"`
	Truncated bool     `json:"truncated"`
}

// deployment is one deployment: of an environment's record (app zero) or
// of one App of it.
type deployment struct {
	env     string
	app     timeline.App
	whole   bool // the environment's deployment, not one App's
	live    time.Time
	lead    time.Duration
	hasLead bool
	failed  bool
}

// episode is one Degraded episode of an App.
type episode struct {
	env      string
	app      timeline.App
	start    time.Time
	restore  time.Duration
	restored bool
}

// Compute is the report of in: pure, deterministic, bounded by its input.
func Compute(in Input) Report {
	w := in.Window
	if !w.Valid() {
		w = DefaultWindow
	}
	until := in.Now.UTC()
	since := until.Add(-w.Duration())
	rep := Report{Window: w, Since: since, Until: until, Environment: in.Environment, App: in.App, Truncated: in.Truncated}
	recs := slices.Clone(in.Records)
	slices.SortStableFunc(recs, func(a, b audit.Record) int {
		return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.ID, b.ID))
	})
	health := slices.Clone(in.Health)
	slices.SortStableFunc(health, func(a, b timeline.Entry) int {
		return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.App.String(), b.App.String()))
	})
	deps := in.deployments(recs, health, since, until)
	eps := in.episodes(health, since, until)

	rep.Metrics = summarise(deps, eps, true, w.Duration())
	for start := since; start.Before(until); start = start.Add(w.Bucket()) {
		end := start.Add(w.Bucket())
		if end.After(until) {
			end = until
		}
		var bd []deployment
		var be []episode
		for _, d := range deps {
			if !d.live.Before(start) && d.live.Before(end) {
				bd = append(bd, d)
			}
		}
		for _, e := range eps {
			if !e.start.Before(start) && e.start.Before(end) {
				be = append(be, e)
			}
		}
		rep.Buckets = append(rep.Buckets, Bucket{Start: start, End: end, Metrics: summarise(bd, be, true, end.Sub(start))})
	}
	rep.Rows = rows(deps, eps, w.Duration())
	return rep
}

// selected reports whether an App of env is in the selection.
func (in *Input) selected(env string, app timeline.App) bool {
	return (in.Environment == "" || env == in.Environment) && (in.App == "" || app.Name == in.App) &&
		(in.Visible == nil || in.Visible(app))
}

// isDeploy reports whether r put a change live: a succeeded apply or
// restore, or a succeeded rollback of an App outside environments (a
// direct patch: no commit, no apply record after it).
func isDeploy(r *audit.Record) bool {
	if r.Outcome != audit.OutcomeSucceeded {
		return false
	}
	switch r.Verb {
	case audit.VerbApply, audit.VerbRestore:
		return true
	case audit.VerbRollback:
		return r.Commit == "" && r.Environment == "" && r.App != ""
	}
	return false
}

// liveAt is when a record's action ended: its time (the start) plus its
// duration.
func liveAt(r *audit.Record) time.Time { return r.Time.Add(time.Duration(r.Duration)) }

// marks are what counts against a deployment, indexed once: each App's
// times of turning Degraded, the rollbacks and the refusals of a
// promotion for its checks, oldest first.
type marks struct {
	degraded  map[timeline.App][]time.Time
	rollbacks []*audit.Record
	checks    []checkFailure
}

// checkFailure is a promotion out of env refused because App app's
// promotion checks failed.
type checkFailure struct {
	at   time.Time
	from string
	app  string
}

// marksOf indexes recs and health (both sorted by time).
func (in *Input) marksOf(recs []audit.Record, health []timeline.Entry) marks {
	m := marks{degraded: map[timeline.App][]time.Time{}}
	for i := range health {
		if e := &health[i]; e.To == healthDegraded {
			m.degraded[e.App] = append(m.degraded[e.App], e.Time)
		}
	}
	for i := range recs {
		x := &recs[i]
		switch {
		case x.Verb == audit.VerbRollback && x.Outcome != audit.OutcomeRefused:
			// A refused rollback changed nothing.
			m.rollbacks = append(m.rollbacks, x)
		case (x.Verb == audit.VerbPromote || x.Verb == audit.VerbPromoteApprove) && x.Outcome == audit.OutcomeRefused && in.SourceOf != nil:
			src := in.SourceOf(x.Environment)
			if src == "" {
				continue
			}
			for _, b := range x.Blockers {
				if id, app, ok := promotion.ParseGateBlocker(b); ok && id == promotion.GateChecks {
					m.checks = append(m.checks, checkFailure{at: x.Time, from: src, app: app})
				}
			}
		}
	}
	return m
}

// deployments are the deployments that went live in [since, until), each
// marked failed or not.
func (in *Input) deployments(recs []audit.Record, health []timeline.Entry, since, until time.Time) []deployment {
	first := map[string]time.Time{} // a commit's first appearance
	for i := range recs {
		if c := recs[i].Commit; c != "" {
			if t, ok := first[c]; !ok || recs[i].Time.Before(t) {
				first[c] = recs[i].Time
			}
		}
	}
	m := in.marksOf(recs, health)
	last := map[string]string{} // the commit each environment last deployed
	var out []deployment
	for i := range recs {
		r := &recs[i]
		if !isDeploy(r) {
			continue
		}
		stream := r.Cluster + "\x00" + r.Environment
		if r.Commit != "" {
			if last[stream] == r.Commit {
				continue // the same commit again: a re-apply, not a change
			}
			last[stream] = r.Commit
		}
		live := liveAt(r)
		if live.Before(since) || !live.Before(until) || in.Environment != "" && r.Environment != in.Environment {
			continue
		}
		d := deployment{env: r.Environment, live: live}
		if r.Commit != "" {
			d.lead, d.hasLead = max(live.Sub(first[r.Commit]), 0), true
		}
		var apps []timeline.App
		if in.IsApp != nil || r.App != "" {
			isApp := in.IsApp
			if isApp == nil {
				isApp = func(string, string, string) bool { return false }
			}
			for _, a := range recordentries.AppsOf(r, isApp) {
				if in.selected(r.Environment, a) {
					apps = append(apps, a)
				}
			}
		}
		if len(apps) == 0 && (in.App != "" || in.Visible != nil) {
			continue
		}
		whole := d
		whole.whole = true
		for _, a := range apps {
			ad := d
			ad.app = a
			ad.failed = m.failed(r, a)
			whole.failed = whole.failed || ad.failed
			out = append(out, ad)
		}
		if len(apps) == 0 {
			whole.failed = m.rolledBack(r, timeline.App{})
		}
		out = append(out, whole)
	}
	return out
}

// failed reports whether App a's deployment by r failed: between r's
// start and FailureWindow after its end, a turned Degraded, was rolled
// back, or a promotion out of r's environment was refused for a's checks.
func (m *marks) failed(r *audit.Record, a timeline.App) bool {
	from, to := r.Time, liveAt(r).Add(FailureWindow)
	ts := m.degraded[a]
	if i, _ := slices.BinarySearchFunc(ts, from, time.Time.Compare); i < len(ts) && !ts[i].After(to) {
		return true
	}
	if m.rolledBack(r, a) {
		return true
	}
	if r.Environment == "" {
		return false
	}
	i, _ := slices.BinarySearchFunc(m.checks, from, func(c checkFailure, t time.Time) int { return c.at.Compare(t) })
	for ; i < len(m.checks) && !m.checks[i].at.After(to); i++ {
		if c := m.checks[i]; c.from == r.Environment && c.app == a.Name {
			return true
		}
	}
	return false
}

// rolledBack reports whether a rollback of r's environment (or of App a,
// when a is not zero) began after r's end and within FailureWindow.
func (m *marks) rolledBack(r *audit.Record, a timeline.App) bool {
	from, to := liveAt(r), liveAt(r).Add(FailureWindow)
	i, _ := slices.BinarySearchFunc(m.rollbacks, from, func(x *audit.Record, t time.Time) int { return x.Time.Compare(t) })
	for ; i < len(m.rollbacks) && !m.rollbacks[i].Time.After(to); i++ {
		x := m.rollbacks[i]
		switch {
		case x == r:
		case r.Environment != "" && x.Environment == r.Environment && x.Cluster == r.Cluster:
			if x.App == "" || a == (timeline.App{}) || x.App == a.Name {
				return true
			}
		case r.Environment == "" && x.Environment == "" && a != (timeline.App{}) &&
			x.Cluster == a.Cluster && x.Namespace == a.Namespace && x.App == a.Name:
			return true
		}
	}
	return false
}

// episodes are the Degraded episodes that began in [since, until): from
// an entry turning the App Degraded to its next entry turning it Healthy.
func (in *Input) episodes(health []timeline.Entry, since, until time.Time) []episode {
	open := map[timeline.App]*episode{}
	var out []*episode
	for i := range health {
		e := &health[i]
		env := ""
		if in.EnvOf != nil {
			env = in.EnvOf(e.App)
		}
		if !in.selected(env, e.App) {
			continue
		}
		cur := open[e.App]
		switch {
		case e.To == healthDegraded && cur == nil:
			if e.Time.Before(since) || !e.Time.Before(until) {
				continue
			}
			ep := &episode{env: env, app: e.App, start: e.Time}
			open[e.App] = ep
			out = append(out, ep)
		case e.To == healthHealthy && cur != nil:
			cur.restore, cur.restored = e.Time.Sub(cur.start), true
			delete(open, e.App)
		}
	}
	res := make([]episode, len(out))
	for i, e := range out {
		res[i] = *e
	}
	return res
}

// summarise is the metrics of deps and eps over a span of length span;
// whole counts the environments' deployments (else the Apps').
func summarise(deps []deployment, eps []episode, whole bool, span time.Duration) Metrics {
	var m Metrics
	var leads, restores []time.Duration
	for _, d := range deps {
		if d.whole != whole {
			continue
		}
		m.DeploymentFrequency.Deployments++
		if d.failed {
			m.ChangeFailureRate.Failures++
		}
		if d.hasLead {
			leads = append(leads, d.lead)
		}
	}
	for _, e := range eps {
		if e.restored {
			restores = append(restores, e.restore)
		} else {
			m.TimeToRestore.Unrestored++
		}
	}
	if days := span.Hours() / 24; days > 0 {
		m.DeploymentFrequency.PerDay = round(float64(m.DeploymentFrequency.Deployments)/days, 100)
	}
	m.ChangeFailureRate.Deployments = m.DeploymentFrequency.Deployments
	if n := m.ChangeFailureRate.Deployments; n > 0 {
		m.ChangeFailureRate.Rate = round(float64(m.ChangeFailureRate.Failures)/float64(n), 10000)
	}
	m.LeadTime = summary(leads)
	m.TimeToRestore.Durations = summary(restores)
	return m
}

// summary is the count, median and 90th percentile of ds (nearest rank).
func summary(ds []time.Duration) Durations {
	if len(ds) == 0 {
		return Durations{}
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return Durations{Count: len(ds), MedianSeconds: median(ds).Seconds(), P90Seconds: rank(ds, 0.9).Seconds()}
}

// median of sorted ds: the middle one, or the mean of the two middle ones.
func median(ds []time.Duration) time.Duration {
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2]
	}
	return (ds[n/2-1] + ds[n/2]) / 2
}

// rank is the p-th percentile of sorted ds by nearest rank.
func rank(ds []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(ds)))) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

// round rounds v to 1/per.
func round(v float64, per float64) float64 { return math.Round(v*per) / per }

// rowKey orders the rows: by environment, the environment's own row
// first, then by App.
type rowKey struct {
	env string
	app timeline.App
}

// rows are the per-environment and per-App rows of deps and eps, sorted.
func rows(deps []deployment, eps []episode, span time.Duration) []Row {
	type group struct {
		deps []deployment
		eps  []episode
	}
	groups := map[rowKey]*group{}
	at := func(k rowKey) *group {
		g := groups[k]
		if g == nil {
			g = &group{}
			groups[k] = g
		}
		return g
	}
	for _, d := range deps {
		if d.whole {
			at(rowKey{env: d.env}).deps = append(at(rowKey{env: d.env}).deps, d)
			continue
		}
		g := at(rowKey{env: d.env, app: d.app})
		g.deps = append(g.deps, d)
	}
	for _, e := range eps {
		at(rowKey{env: e.env}).eps = append(at(rowKey{env: e.env}).eps, e)
		g := at(rowKey{env: e.env, app: e.app})
		g.eps = append(g.eps, e)
	}
	keys := make([]rowKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b rowKey) int {
		return cmp.Or(strings.Compare(a.env, b.env), strings.Compare(a.app.Name, b.app.Name),
			strings.Compare(a.app.Namespace, b.app.Namespace), strings.Compare(a.app.Cluster, b.app.Cluster))
	})
	out := make([]Row, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		whole := k.app == timeline.App{}
		out = append(out, Row{Environment: k.env, Cluster: k.app.Cluster, Namespace: k.app.Namespace, App: k.app.Name,
			Metrics: summarise(g.deps, g.eps, whole, span)})
	}
	return out
}
