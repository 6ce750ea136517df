package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// LogSource reads pod logs (implemented by kubeview.Logs).
type LogSource interface {
	Pods(namespace, app string) []kubeview.LogPod
	Read(ctx context.Context, q kubeview.LogQuery) (kubeview.LogResult, error)
	Follow(ctx context.Context, q kubeview.LogQuery, emit func(kubeview.LogEvent) error) error
}

// logParams are a log request's choices, parsed from the URL.
type logParams struct {
	Pod, Container string
	Tail           int
	// Since is the raw ?since= (a duration like 5m, or an RFC 3339 time).
	Since     string
	sinceDur  time.Duration
	sinceTime time.Time
	Previous  bool
	// Timestamps prefixes text lines with their time (JSON always has ts).
	Timestamps bool
	Follow     bool
	Filter     string
	// Case makes the filter case-sensitive.
	Case     bool
	Text     bool // plain text instead of JSON
	Download bool
}

// maxFilterLen bounds ?filter=.
const maxFilterLen = 500

// parseLogParams parses and checks a log request's parameters. follow is
// the default of ?follow= (the viewer follows by default, the API does
// not). A form submission (set=1) sends unchecked boxes as absent.
func parseLogParams(v url.Values, follow bool) (logParams, error) {
	p := logParams{Pod: v.Get("pod"), Container: v.Get("container"), Tail: kubeview.DefaultTail, Since: v.Get("since"), Filter: v.Get("filter")}
	form := v.Get("set") == "1"
	for _, name := range []string{p.Pod, p.Container} {
		if len(name) > 253 || strings.ContainsAny(name, "/\x00") {
			return p, badRequest("pod and container: not a Kubernetes name")
		}
	}
	if s := v.Get("tail"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return p, badRequest("tail: %q is not a positive number of lines", trimForMessage(s))
		}
		p.Tail = min(n, kubeview.MaxTail)
	}
	if p.Since != "" {
		if d, err := time.ParseDuration(p.Since); err == nil && d > 0 {
			p.sinceDur = d
		} else if t, err := time.Parse(time.RFC3339, p.Since); err == nil {
			p.sinceTime = t
		} else {
			return p, badRequest("since: %q is neither a duration (5m, 1h) nor an RFC 3339 time", trimForMessage(p.Since))
		}
	}
	var err error
	bools := []struct {
		name string
		dst  *bool
		def  bool
	}{{"previous", &p.Previous, false}, {"timestamps", &p.Timestamps, false}, {"follow", &p.Follow, follow}, {"case", &p.Case, false}, {"download", &p.Download, false}}
	for _, b := range bools {
		s := v.Get(b.name)
		switch {
		case s == "" && form:
			*b.dst = false
		case s == "":
			*b.dst = b.def
		case s == "on":
			*b.dst = true
		default:
			if *b.dst, err = strconv.ParseBool(s); err != nil {
				return p, badRequest("%s: %q is not true or false", b.name, trimForMessage(s))
			}
		}
	}
	if len(p.Filter) > maxFilterLen || !utf8.ValidString(p.Filter) {
		return p, badRequest("filter: at most %d characters of text", maxFilterLen)
	}
	switch f := v.Get("format"); f {
	case "", "json":
	case "text":
		p.Text = true
	default:
		return p, badRequest("format: %q is not json or text", trimForMessage(f))
	}
	return p, nil
}

func trimForMessage(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// query is the kubeview query of the parameters.
func (p logParams) query(ns, app string) kubeview.LogQuery {
	return kubeview.LogQuery{Namespace: ns, App: app, Pod: p.Pod, Container: p.Container, Tail: p.Tail,
		Since: p.sinceDur, SinceTime: p.sinceTime, Previous: p.Previous}
}

// values encodes the parameters for a URL, omitting defaults.
func (p logParams) values() url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("pod", p.Pod)
	set("container", p.Container)
	if p.Tail != kubeview.DefaultTail {
		v.Set("tail", strconv.Itoa(p.Tail))
	}
	set("since", p.Since)
	set("filter", p.Filter)
	for _, b := range []struct {
		k string
		v bool
	}{{"previous", p.Previous}, {"timestamps", p.Timestamps}, {"case", p.Case}} {
		if b.v {
			v.Set(b.k, "1")
		}
	}
	return v
}

// lineFilter is the viewer's text filter: a substring, case-insensitive
// unless asked, negated by a leading "!" ("\!" matches a literal "!").
type lineFilter struct {
	needle        string
	negate, exact bool
}

func newLineFilter(expr string, caseSensitive bool) lineFilter {
	f := lineFilter{exact: caseSensitive}
	switch {
	case strings.HasPrefix(expr, `\!`):
		expr = expr[1:]
	case strings.HasPrefix(expr, "!"):
		f.negate, expr = true, expr[1:]
	}
	f.needle = expr
	if !caseSensitive {
		f.needle = strings.ToLower(expr)
	}
	return f
}

// match reports whether a line passes the filter.
func (f lineFilter) match(line string) bool {
	if f.needle == "" {
		return true
	}
	var hit bool
	if f.exact {
		hit = strings.Contains(line, f.needle)
	} else {
		hit = containsFold(line, f.needle)
	}
	return hit != f.negate
}

// containsFold reports whether s contains lowerNeedle, ignoring case,
// without allocating for ASCII text.
func containsFold(s, lowerNeedle string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Contains(strings.ToLower(s), lowerNeedle)
		}
	}
	n := len(lowerNeedle)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lowerNeedle[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// logsResponse is the JSON of GET /v1/deploy/{name}/logs.
type logsResponse struct {
	App       string             `json:"app"`
	Namespace string             `json:"namespace"`
	Pod       string             `json:"pod,omitempty"`
	Container string             `json:"container,omitempty"`
	Pods      []kubeview.LogPod  `json:"pods"`
	Lines     []kubeview.LogLine `json:"lines"`
	// Reason says why there are no lines (or fewer than asked).
	Reason string `json:"reason,omitempty"`
	Filter string `json:"filter,omitempty"`
}

// noLogSourceReason is the honest answer of a server without a log source.
const noLogSourceReason = "reading logs is not configured on this server"

// readLogs reads once and applies the filter; a pod or container that is
// not the app's is a 404 / 400.
func (s *Server) readLogs(ctx context.Context, a appRef, p logParams) (kubeview.LogResult, error) {
	ns, app := a.Namespace, a.Name
	if a.c.Logs == nil {
		return kubeview.LogResult{Pods: []kubeview.LogPod{}, Lines: []kubeview.LogLine{}, Reason: noLogSourceReason}, nil
	}
	release, refusal := s.logReads.acquire(subjectOf(ctx))
	if release == nil {
		return kubeview.LogResult{}, tooMany(refusal)
	}
	defer release()
	res, err := a.c.Logs.Read(ctx, p.query(ns, app))
	if err != nil {
		return res, logQueryError(err, app, p)
	}
	if p.Filter != "" {
		f := newLineFilter(p.Filter, p.Case)
		kept := res.Lines[:0]
		for _, l := range res.Lines {
			if f.match(l.Line) {
				kept = append(kept, l)
			}
		}
		res.Lines = kept
		if len(kept) == 0 && res.Reason == "" {
			res.Reason = "no line matches the filter"
		}
	}
	if res.Pods == nil {
		res.Pods = []kubeview.LogPod{}
	}
	return res, nil
}

// logQueryError maps kubeview's lookup errors to HTTP errors.
func logQueryError(err error, app string, p logParams) error {
	switch {
	case errors.Is(err, kubeview.ErrPodNotInApp):
		return notFound("pod " + p.Pod + " of app " + app)
	case errors.Is(err, kubeview.ErrContainerNotInPod):
		return badRequest("container: %q is not a container of the pod", trimForMessage(p.Container))
	}
	return err
}

// checkLogTarget checks a chosen pod and container against the app's pods
// before a stream starts (afterwards errors can only be stream events).
func (s *Server) checkLogTarget(a appRef, p logParams) error {
	app := a.Name
	if a.c.Logs == nil || p.Pod == "" && p.Container == "" {
		return nil
	}
	pods := a.c.Logs.Pods(a.Namespace, app)
	if p.Pod != "" {
		i := slices.IndexFunc(pods, func(x kubeview.LogPod) bool { return x.Name == p.Pod })
		if i < 0 {
			return logQueryError(kubeview.ErrPodNotInApp, app, p)
		}
		pods = pods[i : i+1]
	}
	if p.Container != "" && len(pods) > 0 && !slices.ContainsFunc(pods, func(x kubeview.LogPod) bool { return slices.Contains(x.Containers, p.Container) }) {
		return logQueryError(kubeview.ErrContainerNotInPod, app, p)
	}
	return nil
}

// apiLogs serves GET /v1/deploy/{name}/logs: JSON, plain text (Accept:
// text/plain or ?format=text), or with ?follow=true (or Accept:
// text/event-stream) a stream of server-sent events.
func (s *Server) apiLogs(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	ns, name := a.Namespace, a.Name
	p, err := parseLogParams(r.URL.Query(), false)
	if err != nil {
		return err
	}
	accept := r.Header.Get("Accept")
	if strings.Contains(accept, "text/event-stream") && r.URL.Query().Get("follow") == "" {
		p.Follow = true
	}
	if strings.Contains(accept, "text/plain") && !strings.Contains(accept, "application/json") && r.URL.Query().Get("format") == "" {
		p.Text = true
	}
	if p.Follow {
		if err := s.checkLogTarget(a, p); err != nil {
			return err
		}
		return s.serveLogStream(w, r, a.c.Logs, p.query(ns, name), p, jsonEvents{})
	}
	res, err := s.readLogs(r.Context(), a, p)
	if err != nil {
		return err
	}
	if p.Text {
		return writeLogText(w, name, res, p)
	}
	writeJSON(w, http.StatusOK, logsResponse{App: name, Namespace: ns, Pod: res.Pod, Container: res.Container,
		Pods: res.Pods, Lines: res.Lines, Reason: res.Reason, Filter: p.Filter})
	return nil
}

// writeLogText answers with the lines as plain text; the reason (there is
// no room for it among the lines) goes in X-Logs-Reason.
func writeLogText(w http.ResponseWriter, app string, res kubeview.LogResult, p logParams) error {
	var b strings.Builder
	for _, l := range res.Lines {
		if p.Timestamps && !l.TS.IsZero() {
			b.WriteString(l.TS.Format(time.RFC3339Nano))
			b.WriteByte(' ')
		}
		b.WriteString(l.Line)
		b.WriteByte('\n')
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if res.Reason != "" {
		h.Set("X-Logs-Reason", headerSafe(res.Reason))
	}
	if p.Download {
		file := app
		if res.Pod != "" {
			file = res.Pod
		}
		if res.Container != "" {
			file += "_" + res.Container
		}
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename=%q`, headerSafe(file)+".log"))
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(b.String()))
	return nil
}

// headerSafe keeps printable ASCII only.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '_'
		}
		return r
	}, s)
}

// logsPage serves GET /clusters/{cluster}/apps/{namespace}/{name}/logs: the viewer; an HTMX
// request from its own form gets the panel alone.
func (s *Server) logsPage(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	name := a.Name
	p, err := parseLogParams(r.URL.Query(), true)
	if err != nil {
		return err
	}
	v, err := s.logsView(r, a, p)
	if err != nil {
		return err
	}
	if isHTMX(r) {
		return s.render(w, r, http.StatusOK, templates.LogsPanel(v))
	}
	return s.render(w, r, http.StatusOK, templates.LogsPageView(templates.LogsPage{Layout: s.layout(r, "apps", name+" logs"), View: v}))
}

// logsView builds the viewer's panel: when following, the stream's URL;
// otherwise the lines, read now.
func (s *Server) logsView(r *http.Request, a appRef, p logParams) (templates.LogsView, error) {
	ns, name, cl := a.Namespace, a.Name, a.Cluster()
	v := templates.LogsView{
		Cluster: cl, Multi: s.multiCluster(),
		Namespace: ns, Name: name, PageURL: paths.AppLogs(cl, ns, name), AppURL: paths.App(cl, ns, name),
		PodParam: p.Pod, Tail: p.Tail, Since: p.Since, Timestamps: p.Timestamps, Follow: p.Follow,
		Previous: p.Previous, Filter: p.Filter, CaseSensitive: p.Case, Pods: []kubeview.LogPod{},
	}
	if a.c.Logs != nil {
		v.Pods = a.c.Logs.Pods(ns, name)
	}
	// The pod shown: the chosen one, else the newest running one.
	var shown *kubeview.LogPod
	for i, pod := range v.Pods {
		if p.Pod == pod.Name || p.Pod == "" && pod.Running() {
			shown = &v.Pods[i]
			break
		}
	}
	if shown != nil {
		v.Pod, v.Containers, v.Container = shown.Name, shown.Containers, shown.Default
		if p.Container != "" {
			v.Container = p.Container
		}
	}
	dl := p.values()
	dl.Set("namespace", ns)
	if s.multiCluster() {
		dl.Set("cluster", cl)
	}
	dl.Set("format", "text")
	dl.Set("download", "1")
	if v.Pod != "" {
		dl.Set("pod", v.Pod)
	}
	if v.Container != "" {
		dl.Set("container", v.Container)
	}
	v.DownloadURL = paths.WithQuery(paths.APILogs(name), dl)
	if p.Follow {
		v.StreamURL = paths.WithQuery(paths.AppLogsStream(cl, ns, name), p.values())
		return v, nil
	}
	res, err := s.readLogs(r.Context(), a, p)
	var he *httpError
	if errors.As(err, &he) && he.Status < 500 && he.Status != http.StatusTooManyRequests {
		// A pod gone since the URL was made: say so beside the selector.
		v.Reason = he.Public
		return v, nil
	}
	if err != nil {
		return v, err
	}
	v.Pod, v.Container, v.Reason = res.Pod, res.Container, res.Reason
	lines := res.Lines
	if len(lines) > templates.MaxDOMLines {
		v.Hidden = len(lines) - templates.MaxDOMLines
		lines = lines[v.Hidden:]
	}
	v.Lines = make([]templates.LogLineView, len(lines))
	for i, l := range lines {
		v.Lines[i] = lineView(l, p.Timestamps)
	}
	return v, nil
}

// lineView is a log line as the viewer shows it.
func lineView(l kubeview.LogLine, timestamps bool) templates.LogLineView {
	lv := templates.LogLineView{Text: validUTF8(l.Line)}
	if timestamps && !l.TS.IsZero() {
		lv.TS = l.TS.Format("2006-01-02T15:04:05.000Z07:00")
	}
	return lv
}

// logsStream serves GET /clusters/{cluster}/apps/{namespace}/{name}/logs/stream: the viewer's
// follow stream, HTML fragments for the htmx SSE extension.
func (s *Server) logsStream(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	ns, name := a.Namespace, a.Name
	p, err := parseLogParams(r.URL.Query(), true)
	if err != nil {
		return err
	}
	enc := htmlEvents{timestamps: p.Timestamps}
	if err := s.checkLogTarget(a, p); err != nil {
		var he *httpError
		if errors.As(err, &he) && he.Status < 500 {
			// EventSource cannot read an error's body: tell it in the stream.
			return s.endStream(w, r, enc, he.Public)
		}
		return err
	}
	return s.serveLogStream(w, r, a.c.Logs, p.query(ns, name), p, enc)
}
