package promcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/boundedhttp"
)

// Bounds of one evaluation.
const (
	// Timeout bounds one query, connection and answer included.
	Timeout = 10 * time.Second
	// MaxBytes caps one answer.
	MaxBytes = 4 << 20
	// MaxSeries caps the series of one answer (the query is refused past it).
	MaxSeries = 50
	// MaxSamples caps the samples of one answer, all series together.
	MaxSamples = 20_000
	// Points is about how many steps a window is cut into (the step is
	// never under MinStep).
	Points  = 240
	MinStep = 15 * time.Second
	// MaxCached caps the cache's entries.
	MaxCached = 512
)

// Result is one check's outcome: Held, or why not. Every field is public
// text (the gate shows it).
type Result struct {
	Name string
	// Query is the query as run (placeholders filled in).
	Query     string
	Threshold string
	// Held: every sample of the window held the threshold.
	Held bool
	// Value is the worst sample (the highest against a max, the lowest
	// against a min), At its time; HasValue false when there was none.
	Value    float64
	HasValue bool
	At       time.Time
	// Problem says why the check could not be evaluated ("" when it
	// was): a check that was not evaluated has not held.
	Problem string
	// From, To is the window evaluated.
	From, To time.Time
}

// Options configure an Evaluator.
type Options struct {
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Getenv reads metrics.tokenEnv's variable (no token when nil).
	Getenv func(string) string
	// Transport replaces the bounded transport (tests); nil: one of
	// boundedhttp with Timeout.
	Transport http.RoundTripper
}

// Evaluator runs checks and caches their results per minute.
type Evaluator struct {
	now    func() time.Time
	getenv func(string) string
	client *http.Client

	results minuteCache[Result]
	trends  minuteCache[Trend]
}

// errTooLarge is a Prometheus answer over MaxBytes.
var errTooLarge = errors.New("the answer is larger than the byte cap")

// New is an Evaluator over o.
func New(o Options) *Evaluator {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	rt := o.Transport
	if rt == nil {
		rt = boundedhttp.Transport(Timeout)
	}
	return &Evaluator{
		now:    o.Now,
		getenv: o.Getenv,
		client: &http.Client{
			Transport: boundedhttp.CapBodies(rt, MaxBytes, func() error { return errTooLarge }),
			// Requests go to metrics.url's host only.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       Timeout,
		},
	}
}

// Evaluate runs check c against m for v's App, over [max(wentLive,
// now-for), now]: it holds when the range query answered samples and
// every one holds the threshold. A result that was evaluated is cached
// for the rest of the minute (per metrics URL, query as run, threshold
// and window start); a problem is not cached. fresh skips the cache
// (an approval's evaluation: what it decides on is asked now).
func (e *Evaluator) Evaluate(ctx context.Context, m envconfig.Metrics, c envconfig.Check, v Vars, wentLive time.Time, fresh bool) Result {
	now := e.now()
	r := Result{Name: c.Name, Threshold: c.Threshold.String(), To: now, From: now.Add(-c.ForOrDefault())}
	if wentLive.After(r.From) && wentLive.Before(now) {
		r.From = wentLive
	}
	q, err := Render(c.Query, v)
	if err != nil {
		r.Query = c.Query
		r.Problem = err.Error()
		return r
	}
	r.Query = q
	key := cacheKey{url: m.URL, query: q, threshold: r.Threshold, from: minuteOf(r.From), minute: minuteOf(now)}
	if hit, ok := e.results.get(key); ok && !fresh {
		return hit
	}

	series, err := e.queryRange(ctx, m, q, r.From, r.To)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	judge(&r, c.Threshold, series)
	if r.Problem != "" {
		// No samples yet (a version just live): asked again next time,
		// not held for the rest of the minute.
		return r
	}
	e.results.put(key, r)
	return r
}

// judge sets r's Held, Value and At from the samples: the worst sample
// decides; no sample at all does not hold (nothing was proven).
func judge(r *Result, t envconfig.Threshold, series [][]sample) {
	r.Held = true
	for _, s := range series {
		for _, p := range s {
			worse := !r.HasValue || math.IsNaN(p.v) ||
				t.Max != nil && p.v > r.Value || t.Min != nil && p.v < r.Value
			if worse && !(r.HasValue && math.IsNaN(r.Value)) {
				r.Value, r.At, r.HasValue = p.v, p.t, true
			}
			if !t.Holds(p.v) {
				r.Held = false
			}
		}
	}
	if !r.HasValue {
		r.Held = false
		r.Problem = "the query returned no samples over the window: nothing shows the threshold held"
	}
}

type sample struct {
	t time.Time
	v float64
}

// QueryError is a query that failed; its text is public (it names no
// token).
type QueryError struct{ Message string }

func (e *QueryError) Error() string { return e.Message }

func queryErr(format string, a ...any) error { return &QueryError{fmt.Sprintf(format, a...)} }

// queryRange asks m's /api/v1/query_range for q over [from, to].
func (e *Evaluator) queryRange(ctx context.Context, m envconfig.Metrics, q string, from, to time.Time) ([][]sample, error) {
	step := Step(from, to)
	form := url.Values{}
	form.Set("query", q)
	form.Set("start", strconv.FormatFloat(float64(from.UnixMilli())/1000, 'f', 3, 64))
	form.Set("end", strconv.FormatFloat(float64(to.UnixMilli())/1000, 'f', 3, 64))
	form.Set("step", strconv.FormatFloat(step.Seconds(), 'f', -1, 64))
	form.Set("timeout", Timeout.String())
	form.Set("limit", strconv.Itoa(MaxSeries+1))
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(m.URL, "/")+"/api/v1/query_range", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, queryErr("metrics.url %s is not usable", m.URL)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if m.TokenEnv != "" {
		if tok := e.getenv(m.TokenEnv); tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	resp, err := e.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, queryErr("Prometheus at %s did not answer within %s", m.URL, Timeout)
		}
		return nil, queryErr("Prometheus at %s is unreachable", m.URL)
	}
	defer resp.Body.Close()
	var ans struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Values [][2]json.RawMessage `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1)) // the transport refuses past MaxBytes (errTooLarge); this bounds the read here too
	switch {
	case errors.Is(err, errTooLarge):
		return nil, queryErr("Prometheus at %s answered more than %d bytes: narrow the query", m.URL, MaxBytes)
	case err != nil:
		return nil, queryErr("Prometheus at %s broke off its answer", m.URL)
	case json.Unmarshal(body, &ans) != nil:
		return nil, queryErr("Prometheus at %s answered HTTP %d without a Prometheus API answer", m.URL, resp.StatusCode)
	case ans.Status != "success":
		return nil, queryErr("Prometheus at %s refused the query (HTTP %d, %s): %s", m.URL, resp.StatusCode, clip(ans.ErrorType, 40), clip(ans.Error, 300))
	case ans.Data.ResultType != "matrix":
		return nil, queryErr("the query answered a %s, not a range of samples", clip(ans.Data.ResultType, 20))
	case len(ans.Data.Result) > MaxSeries:
		return nil, queryErr("the query answered more than %d series: aggregate it (sum, max)", MaxSeries)
	}
	out := make([][]sample, 0, len(ans.Data.Result))
	n := 0
	for _, s := range ans.Data.Result {
		n += len(s.Values)
		if n > MaxSamples {
			return nil, queryErr("the query answered more than %d samples", MaxSamples)
		}
		ss := make([]sample, 0, len(s.Values))
		for _, p := range s.Values {
			var ts float64
			var vs string
			if json.Unmarshal(p[0], &ts) != nil || json.Unmarshal(p[1], &vs) != nil {
				return nil, queryErr("Prometheus at %s answered a malformed sample", m.URL)
			}
			v, err := strconv.ParseFloat(vs, 64)
			if err != nil {
				return nil, queryErr("Prometheus at %s answered a malformed sample value", m.URL)
			}
			ss = append(ss, sample{t: time.UnixMilli(int64(ts * 1000)).UTC(), v: v})
		}
		out = append(out, ss)
	}
	return out, nil
}

// Step is the resolution of a range query over [from, to]: the window
// cut into Points steps, never under MinStep (so a series has at most
// about Points+1 samples).
func Step(from, to time.Time) time.Duration {
	return max(to.Sub(from)/Points, MinStep)
}

// clip is s cut to n bytes at most, with its control characters dropped.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// State is a result's state as the gate, the matrix and the app page
// see it.
type State string

// The states: held lets a promotion through; failing (a sample broke the
// threshold) and unevaluated (Problem: unreachable, refused, no samples)
// do not.
const (
	StateHeld        State = "held"
	StateFailing     State = "failing"
	StateUnevaluated State = "unevaluated"
)

// State is r's state: the one rule of whether a check held.
func (r Result) State() State {
	switch {
	case r.Problem != "":
		return StateUnevaluated
	case r.Held:
		return StateHeld
	}
	return StateFailing
}

// FormatValue is a sample's value as the gate and the pages print it.
func FormatValue(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// Message is r as a gate says it: the check, the query as run, the value
// and the threshold.
func (r Result) Message() string {
	val := "no value"
	if r.HasValue {
		val = FormatValue(r.Value) + " at " + r.At.UTC().Format("15:04:05 UTC")
	}
	switch {
	case r.Problem != "" && !r.HasValue:
		return fmt.Sprintf("check %s could not be evaluated (query %s; threshold %s): %s", r.Name, r.Query, r.Threshold, r.Problem)
	case r.Held:
		return fmt.Sprintf("check %s held: worst %s (threshold %s; query %s)", r.Name, val, r.Threshold, r.Query)
	}
	return fmt.Sprintf("check %s failed: %s breaks the threshold %s (query %s)", r.Name, val, r.Threshold, r.Query)
}
