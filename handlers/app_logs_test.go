package handlers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/kubeview"
)

var logT0 = time.Date(2026, 7, 1, 11, 59, 0, 0, time.UTC)

// hostileLines are log lines that try to break out of their framing.
var hostileLines = []string{
	"\n\ndata: x",
	"event: y",
	"id: 999\r\nretry: 1",
	"<script>alert(1)</script>",
	`"><img src=x onerror=alert(1)>`,
	"bad \xff\xfe utf8",
	"cr\ronly",
	"line\u2028separator",
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	Event, ID, Data string
}

// parseSSE parses a stream as a browser does (lines end at CR, LF or
// CRLF; comments and retry ignored).
func parseSSE(t testing.TB, r io.Reader, stop func([]sseEvent) bool) []sseEvent {
	t.Helper()
	var evs []sseEvent
	var cur sseEvent
	var data []string
	br := bufio.NewReader(r)
	var line []byte
	dispatch := func() {
		if data != nil {
			cur.Data = strings.Join(data, "\n")
			if cur.Event == "" {
				cur.Event = "message"
			}
			evs = append(evs, cur)
		}
		cur, data = sseEvent{}, nil
	}
	for {
		b, err := br.ReadByte()
		if err != nil {
			return evs
		}
		if b != '\r' && b != '\n' {
			line = append(line, b)
			continue
		}
		if b == '\r' {
			if nb, err := br.Peek(1); err == nil && nb[0] == '\n' {
				_, _ = br.ReadByte()
			}
		}
		l := string(line)
		line = line[:0]
		switch {
		case l == "":
			dispatch()
			if stop != nil && stop(evs) {
				return evs
			}
		case strings.HasPrefix(l, ":"):
		default:
			field, value, _ := strings.Cut(l, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				cur.Event = value
			case "data":
				data = append(data, value)
			case "id":
				cur.ID = value
			}
		}
	}
}

func lineEvents(lines ...string) []queued {
	var out []queued
	for i, l := range lines {
		out = append(out, queued{ev: kubeview.LogEvent{Line: kubeview.LogLine{TS: logT0.Add(time.Duration(i) * time.Second), Line: l}}})
	}
	return out
}

// TestJSONFraming: each hostile line is exactly one event whose data is
// one JSON object holding the line (invalid UTF-8 as U+FFFD).
func TestJSONFraming(t *testing.T) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	items := lineEvents(hostileLines...)
	items = append(items, queued{skipped: 7}, queued{ev: kubeview.LogEvent{Status: &kubeview.LogStatus{Status: "ended", Pod: "web-1", Message: "pod <b>web-1</b> ended\n\nevent: z"}}})
	var ids lineID
	if err := (jsonEvents{}).batch(w, items, &ids); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	evs := parseSSE(t, &buf, nil)
	if len(evs) != len(hostileLines)+2 {
		t.Fatalf("events = %d, want %d (one per line, skipped, status):\n%s", len(evs), len(hostileLines)+2, buf.String())
	}
	for i, want := range hostileLines {
		ev := evs[i]
		var got kubeview.LogLine
		if err := json.Unmarshal([]byte(ev.Data), &got); err != nil || ev.Event != "message" {
			t.Errorf("event %d = %q %q, want a message with a JSON line: %v", i, ev.Event, ev.Data, err)
			continue
		}
		if got.Line != strings.ToValidUTF8(want, "\uFFFD") || !got.TS.Equal(logT0.Add(time.Duration(i)*time.Second)) {
			t.Errorf("event %d line = %q at %v, want %q", i, got.Line, got.TS, want)
		}
		if strings.ContainsAny(ev.Data, "<>") {
			t.Errorf("event %d data %q carries raw < or >", i, ev.Data)
		}
	}
	if last := evs[len(hostileLines)-1]; last.ID == "" {
		t.Errorf("last line event has no id")
	}
	if ev := evs[len(hostileLines)]; ev.Event != "skipped" || !strings.Contains(ev.Data, `"skipped":7`) {
		t.Errorf("skipped event = %+v, want skipped 7", ev)
	}
	var st kubeview.LogStatus
	if ev := evs[len(hostileLines)+1]; ev.Event != "status" || json.Unmarshal([]byte(ev.Data), &st) != nil || st.Message != "pod <b>web-1</b> ended\n\nevent: z" {
		t.Errorf("status event = %+v, want the status as JSON", ev)
	}
}

// TestHTMLFraming: hostile lines come out as escaped text, one row each,
// in events whose data is one line of HTML.
func TestHTMLFraming(t *testing.T) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	items := lineEvents(hostileLines...)
	items = append(items, queued{skipped: 3})
	var ids lineID
	if err := (htmlEvents{timestamps: true}).batch(w, items, &ids); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	raw := buf.String()
	evs := parseSSE(t, strings.NewReader(raw), nil)
	if len(evs) != 1 || evs[0].Event != "lines" {
		t.Fatalf("events = %+v, want one lines event:\n%s", evs, raw)
	}
	if n := strings.Count(raw, "\ndata:"); n != 1 {
		t.Errorf("the lines event has %d data fields, want 1 (one line of HTML)", n)
	}
	doc, err := html.Parse(strings.NewReader("<div id=x>" + evs[0].Data + "</div>"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(byTag(doc, "script")) + len(byTag(doc, "img")); n != 0 {
		t.Errorf("%d script/img elements in the rows: %s", n, evs[0].Data)
	}
	var got []string
	for _, n := range byTestID(doc, "log-line") {
		for _, c := range findAll(n, func(n *html.Node) bool { return hasClass(n, "lt") }) {
			got = append(got, rawText(c))
		}
	}
	var want []string
	for _, l := range hostileLines {
		want = append(want, strings.ToValidUTF8(l, "\uFFFD"))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("row texts (-want +got):\n%s", diff)
	}
	marks := byTestID(doc, "log-mark")
	if len(marks) != 1 || text(marks[0]) != "3 lines skipped: the client did not keep up" {
		t.Errorf("skipped marker = %d marks, want one saying 3 lines skipped", len(marks))
	}
	if ts := findAll(doc, func(n *html.Node) bool { return hasClass(n, "ts") }); len(ts) != len(hostileLines) || text(ts[0]) != "2026-07-01T11:59:00.000Z" {
		t.Errorf("timestamps = %d, want %d starting 2026-07-01T11:59:00.000Z", len(ts), len(hostileLines))
	}
}

func TestWriteEventNeverBreaksFraming(t *testing.T) {
	for _, data := range []string{"a\nb", "a\r\nevent: x", "a\rid: 3", "\n\n"} {
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		writeEvent(w, "lines", "", []byte(data))
		w.Flush()
		evs := parseSSE(t, &buf, nil)
		if len(evs) != 1 || evs[0].Event != "lines" || evs[0].ID != "" {
			t.Errorf("writeEvent(%q) parsed as %+v, want one lines event without id", data, evs)
		}
	}
}

func TestParseLogParams(t *testing.T) {
	tests := []struct {
		query   string
		follow  bool
		want    logParams
		wantErr string
	}{
		{"", false, logParams{Tail: 500}, ""},
		{"", true, logParams{Tail: 500, Follow: true}, ""},
		{"set=1", true, logParams{Tail: 500}, ""}, // the form: an unchecked box is off
		{"set=1&follow=1&timestamps=1&case=1", true, logParams{Tail: 500, Follow: true, Timestamps: true, Case: true}, ""},
		{"tail=20000", false, logParams{Tail: 10000}, ""},
		{"tail=50&pod=web-1&container=web&previous=true&format=text&filter=%21GET", false,
			logParams{Tail: 50, Pod: "web-1", Container: "web", Previous: true, Text: true, Filter: "!GET"}, ""},
		{"since=5m", false, logParams{Tail: 500, Since: "5m", sinceDur: 5 * time.Minute}, ""},
		{"since=2026-07-01T10:00:00Z", false, logParams{Tail: 500, Since: "2026-07-01T10:00:00Z", sinceTime: time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)}, ""},
		{"tail=0", false, logParams{}, `tail: "0" is not a positive number of lines`},
		{"tail=lots", false, logParams{}, `tail: "lots" is not a positive number of lines`},
		{"since=-5m", false, logParams{}, `since: "-5m" is neither a duration (5m, 1h) nor an RFC 3339 time`},
		{"follow=maybe", false, logParams{}, `follow: "maybe" is not true or false`},
		{"format=xml", false, logParams{}, `format: "xml" is not json or text`},
		{"pod=../../etc", false, logParams{}, "pod and container: not a Kubernetes name"},
		{"filter=" + strings.Repeat("x", 501), false, logParams{}, "filter: at most 500 characters of text"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			v, _ := url.ParseQuery(tt.query)
			got, err := parseLogParams(v, tt.follow)
			if tt.wantErr != "" {
				var he *httpError
				if !errors.As(err, &he) || he.Status != http.StatusBadRequest || he.Public != tt.wantErr {
					t.Errorf("parseLogParams(%q) error = %v, want 400 %q", tt.query, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseLogParams(%q) error = %v", tt.query, err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(logParams{})); diff != "" {
				t.Errorf("parseLogParams(%q) (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestLineFilter(t *testing.T) {
	tests := []struct {
		expr  string
		exact bool
		line  string
		want  bool
	}{
		{"", false, "anything", true},
		{"error", false, "level=ERROR msg=boom", true},
		{"error", true, "level=ERROR msg=boom", false},
		{"ERROR", true, "level=ERROR msg=boom", true},
		{"!healthz", false, "GET /healthz 200", false},
		{"!healthz", false, "GET /api 200", true},
		{"!HEALTHZ", true, "GET /healthz 200", true},
		{`\!important`, false, "this is !important", true},
		{`\!important`, false, "this is important", false},
		{"über", false, "ÜBER alles", true},
		{"straße", false, "STRASSE", false},
	}
	for _, tt := range tests {
		if got := newLineFilter(tt.expr, tt.exact).match(tt.line); got != tt.want {
			t.Errorf("filter(%q, case %v).match(%q) = %v, want %v", tt.expr, tt.exact, tt.line, got, tt.want)
		}
	}
}

func TestEventQueueDropsAndCounts(t *testing.T) {
	q := newEventQueue(LogStreamLimits{BufferLines: 3, BufferBytes: 1 << 20, SlowWait: 5 * time.Millisecond})
	ctx := context.Background()
	for i := range 10 {
		q.push(ctx, kubeview.LogEvent{Line: kubeview.LogLine{Line: string(rune('a' + i))}})
	}
	q.push(ctx, kubeview.LogEvent{Status: &kubeview.LogStatus{Status: "ended"}}) // statuses always fit
	items, done, _ := q.take(nil)
	var got []string
	for _, it := range items {
		switch {
		case it.skipped > 0:
			got = append(got, "skipped "+string(rune('0'+it.skipped)))
		case it.ev.Status != nil:
			got = append(got, it.ev.Status.Status)
		default:
			got = append(got, it.ev.Line.Line)
		}
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "skipped 7", "ended"}, got); diff != "" || done {
		t.Errorf("queue after 10 lines into 3 slots (-want +got):\n%s", diff)
	}
	// Once the writer took the batch, lines flow again.
	q.push(ctx, kubeview.LogEvent{Line: kubeview.LogLine{Line: "k"}})
	q.close(nil)
	items, done, _ = q.take(nil)
	if len(items) != 1 || items[0].ev.Line.Line != "k" || !done {
		t.Errorf("after take: %d items, done %v, want k and done", len(items), done)
	}
}

func TestParseLineID(t *testing.T) {
	id := lineID{last: logT0.Add(123), seen: 2}
	got, ok := parseLineID(id.String())
	if !ok || !got.last.Equal(id.last) || got.seen != 2 {
		t.Errorf("parseLineID(%q) = %+v, %v, want %+v", id.String(), got, ok, id)
	}
	for _, bad := range []string{"", "x-1", "5", "-5-1", "5-x", "5--1"} {
		if _, ok := parseLineID(bad); ok {
			t.Errorf("parseLineID(%q) ok, want rejected", bad)
		}
	}
}

// fakeLogs is a LogSource with canned pods and scripted streams.
type fakeLogs struct {
	pods   []kubeview.LogPod
	result kubeview.LogResult
	err    error
	// follow runs a stream; nil: emit streaming, then block until ctx ends.
	follow func(ctx context.Context, q kubeview.LogQuery, emit func(kubeview.LogEvent) error) error

	mu      sync.Mutex
	queries []kubeview.LogQuery
}

func (f *fakeLogs) Pods(ns, app string) []kubeview.LogPod { return f.pods }

func (f *fakeLogs) Read(ctx context.Context, q kubeview.LogQuery) (kubeview.LogResult, error) {
	f.record(q)
	res := f.result
	res.Lines = append([]kubeview.LogLine{}, res.Lines...)
	return res, f.err
}

func (f *fakeLogs) Follow(ctx context.Context, q kubeview.LogQuery, emit func(kubeview.LogEvent) error) error {
	f.record(q)
	if f.follow != nil {
		return f.follow(ctx, q, emit)
	}
	if err := emit(kubeview.LogEvent{Status: &kubeview.LogStatus{Status: kubeview.StatusStreaming, Pod: "web-1", Container: "web", Message: "following pod web-1, container web"}}); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func (f *fakeLogs) record(q kubeview.LogQuery) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
}

func (f *fakeLogs) last() kubeview.LogQuery {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queries) == 0 {
		return kubeview.LogQuery{}
	}
	return f.queries[len(f.queries)-1]
}

// appView is a fakeView that knows the App apps/web.
type appView struct{ *fakeView }

func (v appView) LookupApp(ns, name string) (*unstructured.Unstructured, error) {
	if name == "web" && (ns == "" || ns == "apps") {
		u := &unstructured.Unstructured{}
		u.SetNamespace("apps")
		u.SetName("web")
		return u, nil
	}
	return nil, kubeview.ErrAppNotFound
}

var webPods = []kubeview.LogPod{
	{Name: "web-2", Phase: "Running", Ready: true, Containers: []string{"web", "proxy"}, Default: "web", Created: logT0},
	{Name: "web-1", Phase: "Failed", Containers: []string{"web", "proxy"}, Default: "web", Created: logT0.Add(-time.Hour)},
}

// newLogsServer is a test server whose view knows apps/web and whose log
// source is logs (nil: none configured).
func newLogsServer(t testing.TB, logs *fakeLogs, opts ...func(*Options)) *testServer {
	t.Helper()
	ts := newTestServer(t, newFakeView(nil), append([]func(*Options){func(o *Options) {
		if logs != nil {
			o.Clusters[0].Logs = logs
		}
	}}, opts...)...)
	ts.srv.clusters[0].View = appView{ts.view}
	ts.handler = ts.srv.Handler()
	return ts
}

func TestAPILogs(t *testing.T) {
	logs := &fakeLogs{pods: webPods, result: kubeview.LogResult{Pods: webPods, Pod: "web-2", Container: "web", Lines: []kubeview.LogLine{
		{TS: logT0, Line: "GET /healthz 200"}, {TS: logT0.Add(time.Second), Line: "GET /api 500 <script>"},
	}}}
	ts := newLogsServer(t, logs)

	w := ts.get(t, "/v1/deploy/web/logs?tail=20000&since=10m&container=web", nil)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET logs = %d %s, want 200 JSON: %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	var got logsResponse
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.App != "web" || got.Namespace != "apps" || got.Pod != "web-2" || len(got.Lines) != 2 || len(got.Pods) != 2 {
		t.Errorf("GET logs = %+v, want web-2's two lines", got)
	}
	if q := logs.last(); q.Tail != 10000 || q.Since != 10*time.Minute || q.Container != "web" || q.Namespace != "apps" {
		t.Errorf("query = %+v, want tail capped at 10000, since 10m, container web", q)
	}

	// Filtered, as text (Accept or ?format=), with timestamps.
	for _, tt := range []struct {
		target string
		header map[string]string
		want   string
	}{
		{"/v1/deploy/web/logs?filter=!healthz", map[string]string{"Accept": "text/plain"}, "GET /api 500 <script>\n"},
		{"/v1/deploy/web/logs?format=text&filter=API&timestamps=1", nil, "2026-07-01T11:59:01Z GET /api 500 <script>\n"},
		{"/v1/deploy/web/logs?format=text&filter=API&case=1", nil, ""},
	} {
		w := ts.get(t, tt.target, tt.header)
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/plain; charset=utf-8" || w.Body.String() != tt.want {
			t.Errorf("GET %s = %d %s %q, want 200 text %q", tt.target, w.Code, w.Header().Get("Content-Type"), w.Body, tt.want)
		}
		if tt.want == "" && w.Header().Get("X-Logs-Reason") != "no line matches the filter" {
			t.Errorf("GET %s: X-Logs-Reason = %q, want the reason", tt.target, w.Header().Get("X-Logs-Reason"))
		}
	}
	w = ts.get(t, "/v1/deploy/web/logs?format=text&download=1", nil)
	if cd := w.Header().Get("Content-Disposition"); cd != `attachment; filename="web-2_web.log"` {
		t.Errorf("download Content-Disposition = %q", cd)
	}

	// Wrong input.
	logs.err = kubeview.ErrPodNotInApp
	if w := ts.get(t, "/v1/deploy/web/logs?pod=etcd-0", nil); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), `"reason":"NotFound"`) {
		t.Errorf("GET logs of a pod not the app's = %d %s, want 404", w.Code, w.Body)
	}
	logs.err = kubeview.ErrContainerNotInPod
	if w := ts.get(t, "/v1/deploy/web/logs?container=db", nil); w.Code != http.StatusBadRequest {
		t.Errorf("GET logs of a container not in the pod = %d, want 400", w.Code)
	}
	if w := ts.get(t, "/v1/deploy/nope/logs", nil); w.Code != http.StatusNotFound {
		t.Errorf("GET logs of an unknown app = %d, want 404", w.Code)
	}
	if w := ts.get(t, "/v1/deploy/web/logs?tail=-1", nil); w.Code != http.StatusBadRequest {
		t.Errorf("GET logs?tail=-1 = %d, want 400", w.Code)
	}
	if w := ts.do(t, request{target: "/v1/deploy/web/logs"}); w.Code != http.StatusUnauthorized {
		t.Errorf("GET logs without a session = %d, want 401", w.Code)
	}
}

// TestAPILogsHonestEmpty: no pod, or no log source, is 200 with an empty
// list and a reason.
func TestAPILogsHonestEmpty(t *testing.T) {
	for _, tt := range []struct {
		name   string
		logs   *fakeLogs
		reason string
	}{
		{"no pods", &fakeLogs{result: kubeview.LogResult{Lines: []kubeview.LogLine{}, Reason: "the app has no pods"}}, "the app has no pods"},
		{"unreachable", &fakeLogs{result: kubeview.LogResult{Lines: []kubeview.LogLine{}, Reason: "the cluster is not reachable"}}, "the cluster is not reachable"},
		{"no log source", nil, noLogSourceReason},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newLogsServer(t, tt.logs)
			w := ts.get(t, "/v1/deploy/web/logs", nil)
			if w.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200", w.Code)
			}
			var got map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if lines, ok := got["lines"].([]any); !ok || len(lines) != 0 || got["reason"] != tt.reason {
				t.Errorf("body = %s, want lines [] and reason %q", w.Body, tt.reason)
			}
		})
	}
}

// stream opens target on srv and returns the response (the caller closes
// it) and a cancel function.
func stream(t testing.TB, srv *httptest.Server, target string, header map[string]string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(testUserHeader, "admin")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return resp, cancel
}

// scriptedFollow emits statuses and lines, then a done status.
func scriptedFollow(lines []string) func(context.Context, kubeview.LogQuery, func(kubeview.LogEvent) error) error {
	return func(ctx context.Context, q kubeview.LogQuery, emit func(kubeview.LogEvent) error) error {
		_ = emit(kubeview.LogEvent{Status: &kubeview.LogStatus{Status: kubeview.StatusStreaming, Pod: "web-2", Container: "web", Message: "following pod web-2, container web"}})
		for i, l := range lines {
			if err := emit(kubeview.LogEvent{Line: kubeview.LogLine{TS: logT0.Add(time.Duration(i) * time.Millisecond), Line: l}}); err != nil {
				return err
			}
		}
		_ = emit(kubeview.LogEvent{Status: &kubeview.LogStatus{Status: kubeview.StatusEnded, Pod: "web-2", Message: "pod web-2 ended (deleted)"}})
		return emit(kubeview.LogEvent{Status: &kubeview.LogStatus{Status: kubeview.StatusDone, Pod: "web-2", Message: "pod web-2 ended: the stream is over"}})
	}
}

func TestAPILogsFollow(t *testing.T) {
	lines := append([]string{"GET /healthz", "GET /api"}, hostileLines...)
	logs := &fakeLogs{pods: webPods, follow: scriptedFollow(lines)}
	ts := newLogsServer(t, logs)
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	resp, cancel := stream(t, srv, "/v1/deploy/web/logs?follow=true&pod=web-2&filter=!healthz", nil)
	defer cancel()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("follow = %d %s, want 200 event stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := parseSSE(t, resp.Body, nil)
	var got []string
	for _, ev := range evs {
		switch ev.Event {
		case "message":
			var l kubeview.LogLine
			if err := json.Unmarshal([]byte(ev.Data), &l); err != nil {
				t.Fatalf("line event %q: %v", ev.Data, err)
			}
			got = append(got, l.Line)
		default:
			var st kubeview.LogStatus
			if err := json.Unmarshal([]byte(ev.Data), &st); err != nil {
				t.Fatalf("%s event %q: %v", ev.Event, ev.Data, err)
			}
			got = append(got, ev.Event+": "+st.Message)
		}
	}
	want := []string{"status: following pod web-2, container web", "GET /api"}
	for _, l := range hostileLines {
		want = append(want, strings.ToValidUTF8(l, "\uFFFD"))
	}
	want = append(want, "status: pod web-2 ended (deleted)", "end: pod web-2 ended: the stream is over")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if q := logs.last(); q.Pod != "web-2" {
		t.Errorf("query pod = %q, want web-2", q.Pod)
	}

	// A pod that is not the app's is refused before the stream starts.
	resp2, cancel2 := stream(t, srv, "/v1/deploy/web/logs?follow=true&pod=etcd-0", nil)
	defer cancel2()
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusNotFound {
		t.Errorf("follow of a pod not the app's = %d, want 404", resp2.StatusCode)
	}
}

// TestLogsStreamResume: a reconnect's Last-Event-ID resumes after the last
// line the client had.
func TestLogsStreamResume(t *testing.T) {
	logs := &fakeLogs{pods: webPods, follow: scriptedFollow([]string{"a"})}
	ts := newLogsServer(t, logs)
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	id := lineID{last: logT0, seen: 2}
	resp, cancel := stream(t, srv, "/clusters/in-cluster/apps/apps/web/logs/stream?tail=100", map[string]string{"Last-Event-ID": id.String()})
	defer cancel()
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	q := logs.last()
	if !q.SinceTime.Equal(logT0) || q.SkipAtSince != 2 || q.Tail != kubeview.MaxTail {
		t.Errorf("resumed query = since %v skip %d tail %d, want since %v skip 2 tail %d", q.SinceTime, q.SkipAtSince, q.Tail, logT0, kubeview.MaxTail)
	}
}

// TestLogsStreamHTML: the viewer's stream carries escaped rows and status
// lines, and ends with an end event.
func TestLogsStreamHTML(t *testing.T) {
	logs := &fakeLogs{pods: webPods, follow: scriptedFollow(append([]string{"GET /api"}, hostileLines...))}
	ts := newLogsServer(t, logs)
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	resp, cancel := stream(t, srv, "/clusters/in-cluster/apps/apps/web/logs/stream?filter=GET", nil)
	defer cancel()
	defer resp.Body.Close()
	evs := parseSSE(t, resp.Body, nil)
	var kinds []string
	var rows []string
	for _, ev := range evs {
		// Lines are sent in batches as they come: how a run of lines is cut
		// into events depends on timing (a busy machine may cut one run in
		// two), so consecutive lines events count as one.
		if ev.Event != "lines" || len(kinds) == 0 || kinds[len(kinds)-1] != "lines" {
			kinds = append(kinds, ev.Event)
		}
		if ev.Event == "lines" {
			doc := parseHTML(t, "<div>"+ev.Data+"</div>")
			if n := len(byTag(doc, "script")); n != 0 {
				t.Errorf("script element in %q", ev.Data)
			}
			for _, n := range append(byTestID(doc, "log-line"), byTestID(doc, "log-mark")...) {
				rows = append(rows, text(n))
			}
		}
	}
	want := []string{"lines", "status", "lines", "status", "lines", "end"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("event kinds (-want +got):\n%s", diff)
	}
	if !slicesContain(rows, "GET /api") || slicesContain(rows, "<script>alert(1)</script>") {
		t.Errorf("rows = %q, want the filtered line only", rows)
	}
	if evs[len(evs)-1].Event != "end" || !strings.Contains(evs[len(evs)-1].Data, "the stream is over") {
		t.Errorf("last event = %+v, want end with the reason", evs[len(evs)-1])
	}
}

func slicesContain(ss []string, s string) bool {
	for _, x := range ss {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// TestLogStreamLimits: the per-user and total caps refuse with a clear
// message (429 on the API, an end event for the viewer).
func TestLogStreamLimits(t *testing.T) {
	logs := &fakeLogs{pods: webPods}
	ts := newLogsServer(t, logs, func(o *Options) { o.LogStreams = LogStreamLimits{PerUser: 2, Total: 3} })
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	for range 2 {
		resp, cancel := stream(t, srv, "/v1/deploy/web/logs?follow=1", nil)
		defer cancel()
		open = append(open, resp)
		// Wait for the first event, so the stream holds its slot.
		parseSSE(t, resp.Body, func(evs []sseEvent) bool { return len(evs) > 0 })
	}
	resp, cancel := stream(t, srv, "/v1/deploy/web/logs?follow=1", nil)
	defer cancel()
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "you already have 2 log streams open") {
		t.Errorf("third stream of one user = %d %s, want 429 with the per-user limit", resp.StatusCode, body)
	}
	resp, cancel = stream(t, srv, "/clusters/in-cluster/apps/apps/web/logs/stream", nil)
	defer cancel()
	evs := parseSSE(t, resp.Body, nil)
	resp.Body.Close()
	if len(evs) == 0 || evs[len(evs)-1].Event != "end" || !strings.Contains(evs[len(evs)-1].Data, "the limit per user") {
		t.Errorf("viewer stream over the limit = %+v, want an end event with the limit", evs)
	}
	// The server-wide cap counts every user's streams.
	ts.srv.logStreams.perUser = 100
	resp3, cancel3 := stream(t, srv, "/v1/deploy/web/logs?follow=1", nil)
	defer cancel3()
	open = append(open, resp3)
	parseSSE(t, resp3.Body, func(evs []sseEvent) bool { return len(evs) > 0 })
	resp, cancel = stream(t, srv, "/v1/deploy/web/logs?follow=1", nil)
	defer cancel()
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "already streaming 3 logs") {
		t.Errorf("stream over the total = %d %s, want 429 with the total limit", resp.StatusCode, body)
	}
}

// TestLogStreamSlowClient: a client that reads nothing for a while loses
// lines, never memory: it is told how many were skipped, and every line is
// either delivered or counted.
func TestLogStreamSlowClient(t *testing.T) {
	const total = 200000
	logs := &fakeLogs{pods: webPods, follow: func(ctx context.Context, q kubeview.LogQuery, emit func(kubeview.LogEvent) error) error {
		line := strings.Repeat("x", 100)
		for i := range total {
			if err := emit(kubeview.LogEvent{Line: kubeview.LogLine{TS: logT0.Add(time.Duration(i)), Line: line}}); err != nil {
				return err
			}
		}
		return emit(kubeview.LogEvent{Status: &kubeview.LogStatus{Status: kubeview.StatusDone, Message: "over"}})
	}}
	ts := newLogsServer(t, logs, func(o *Options) {
		o.LogStreams = LogStreamLimits{BufferLines: 100, SlowWait: time.Millisecond}
	})
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	resp, cancel := stream(t, srv, "/v1/deploy/web/logs?follow=1", nil)
	defer cancel()
	defer resp.Body.Close()
	time.Sleep(300 * time.Millisecond) // the client stalls; socket buffers fill
	evs := parseSSE(t, resp.Body, nil)
	lines, skipped, markers := 0, 0, 0
	for _, ev := range evs {
		switch ev.Event {
		case "message":
			lines++
		case "skipped":
			var s skippedJSON
			if err := json.Unmarshal([]byte(ev.Data), &s); err != nil {
				t.Fatal(err)
			}
			skipped += s.Skipped
			markers++
		}
	}
	if skipped == 0 || lines+skipped != total {
		t.Errorf("lines %d + skipped %d (in %d markers) = %d, want some skipped and %d in all", lines, skipped, markers, lines+skipped, total)
	}
	if evs[len(evs)-1].Event != "end" {
		t.Errorf("last event = %q, want end", evs[len(evs)-1].Event)
	}
}

// TestLogStreamShutdown: the server's shutdown ends a stream with a
// reconnect notice (no end event: the client reconnects).
func TestLogStreamShutdown(t *testing.T) {
	shutdown, stop := context.WithCancel(context.Background())
	logs := &fakeLogs{pods: webPods}
	ts := newLogsServer(t, logs, func(o *Options) { o.ShutdownCtx = shutdown })
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	resp, cancel := stream(t, srv, "/v1/deploy/web/logs?follow=1", nil)
	defer cancel()
	defer resp.Body.Close()
	first := parseSSE(t, resp.Body, func(evs []sseEvent) bool { return len(evs) > 0 })
	stop()
	rest := parseSSE(t, resp.Body, nil)
	evs := append(first, rest...)
	if len(evs) != 2 || evs[1].Event != "status" || !strings.Contains(evs[1].Data, `"status":"reconnecting"`) {
		t.Errorf("events around shutdown = %+v, want streaming then reconnecting", evs)
	}
}

// TestLogStreamEndsAtRecheck: a stream ends, telling the client to
// reconnect, when the session is due for its re-check with the IdP.
func TestLogStreamEndsAtRecheck(t *testing.T) {
	logs := &fakeLogs{pods: webPods}
	ts := newLogsServer(t, logs)
	id := testIdentity
	id.Recheck = time.Now().Add(-time.Second) // already due
	ts.auth.id = &id
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	resp, cancel := stream(t, srv, "/v1/deploy/web/logs?follow=1", nil)
	defer cancel()
	defer resp.Body.Close()
	evs := parseSSE(t, resp.Body, nil) // until the server ends the stream
	if n := len(evs); n == 0 || evs[n-1].Event != "status" || !strings.Contains(evs[n-1].Data, `"status":"reconnecting"`) || !strings.Contains(evs[n-1].Data, "session") {
		t.Errorf("events of a stream whose session is due for its re-check = %+v, want it to end with reconnecting", evs)
	}
}

// TestLogStreamHeartbeat: an idle stream sends comments.
func TestLogStreamHeartbeat(t *testing.T) {
	ts := newLogsServer(t, &fakeLogs{pods: webPods}, func(o *Options) { o.LogStreams = LogStreamLimits{Heartbeat: 20 * time.Millisecond} })
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	resp, cancel := stream(t, srv, "/v1/deploy/web/logs?follow=1", nil)
	defer resp.Body.Close()
	defer cancel()
	br := bufio.NewReader(resp.Body)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if l == ": keep-alive\n" {
			return
		}
	}
	t.Error("no heartbeat")
}

func TestLogsPage(t *testing.T) {
	logs := &fakeLogs{pods: webPods, result: kubeview.LogResult{Pods: webPods, Pod: "web-2", Container: "web", Lines: []kubeview.LogLine{
		{TS: logT0, Line: "<script>alert('x')</script>"}, {TS: logT0, Line: "GET /api"},
	}}}
	ts := newLogsServer(t, logs)

	// Following (the default): the stream's URL carries the choices.
	w := ts.get(t, "/clusters/in-cluster/apps/apps/web/logs?filter=%21healthz&tail=100", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET logs page = %d: %s", w.Code, w.Body)
	}
	doc := parseHTML(t, w.Body.String())
	box := findAll(doc, func(n *html.Node) bool { return attr(n, "sse-connect") != "" })
	if len(box) != 1 || attr(box[0], "sse-connect") != "/clusters/in-cluster/apps/apps/web/logs/stream?filter=%21healthz&tail=100" || attr(box[0], "sse-close") != "end" {
		t.Fatalf("sse-connect elements = %d, want one to the stream with the filter", len(box))
	}
	if opts := byTag(oneByTestID(t, doc, "log-pod"), "option"); len(opts) != 3 {
		t.Errorf("pod options = %d, want newest running + 2 pods", len(opts))
	}
	if c := byTestID(doc, "log-container"); len(c) != 1 || len(byTag(c[0], "option")) != 2 {
		t.Errorf("container selector missing for a pod with 2 containers")
	}
	dl := attr(oneByTestID(t, doc, "log-download"), "href")
	if !strings.HasPrefix(dl, "/v1/deploy/web/logs?") || !strings.Contains(dl, "pod=web-2") || !strings.Contains(dl, "format=text") || !strings.Contains(dl, "filter=%21healthz") {
		t.Errorf("download link = %q, want the current selection as text", dl)
	}
	if len(findAll(doc, func(n *html.Node) bool { return n.Data == "script" && strings.Contains(attr(n, "src"), "logs.js") })) != 1 {
		t.Errorf("logs.js not linked")
	}

	// Not following: the lines, read now, escaped.
	w = ts.get(t, "/clusters/in-cluster/apps/apps/web/logs?set=1&timestamps=1", nil)
	assertInert(t, "log line", w.Body.String(), "<script>alert('x')</script>")
	doc = parseHTML(t, w.Body.String())
	if rows := byTestID(doc, "log-line"); len(rows) != 2 || text(rows[0]) != "2026-07-01T11:59:00.000Z <script>alert('x')</script>" {
		t.Errorf("rows = %d, want 2 with timestamp and escaped text", len(rows))
	}
	if len(findAll(doc, func(n *html.Node) bool { return attr(n, "sse-connect") != "" })) != 0 {
		t.Errorf("a stream on a page that does not follow")
	}

	// The form's HTMX request gets the panel alone.
	w = ts.get(t, "/clusters/in-cluster/apps/apps/web/logs?set=1", htmxHeader)
	if body := w.Body.String(); strings.Contains(body, "<html") || !strings.Contains(body, `id="logs"`) {
		t.Errorf("HTMX answer is not the panel alone: %.200s", body)
	}

	// A pod gone since the URL was made: the page says so.
	logs.err = kubeview.ErrPodNotInApp
	w = ts.get(t, "/clusters/in-cluster/apps/apps/web/logs?set=1&pod=web-0", nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "pod web-0 of app web not found") {
		t.Errorf("page for a gone pod = %d, want 200 with the reason", w.Code)
	}
	for _, target := range []string{"/clusters/in-cluster/apps/apps/nope/logs", "/clusters/in-cluster/apps/secret-ns/web/logs", "/clusters/in-cluster/apps/apps/nope/logs/stream"} {
		if w := ts.get(t, target, nil); w.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", target, w.Code)
		}
	}
}

// TestLogsPageLargeTail keeps at most MaxDOMLines rows on the page.
func TestLogsPageLargeTail(t *testing.T) {
	lines := make([]kubeview.LogLine, 10000)
	for i := range lines {
		lines[i] = kubeview.LogLine{Line: "line"}
	}
	ts := newLogsServer(t, &fakeLogs{pods: webPods, result: kubeview.LogResult{Pod: "web-2", Lines: lines}})
	doc := parseHTML(t, ts.get(t, "/clusters/in-cluster/apps/apps/web/logs?set=1&tail=10000", nil).Body.String())
	if n := len(byTestID(doc, "log-line")); n != 5000 {
		t.Errorf("rows = %d, want 5000", n)
	}
	if m := byTestID(doc, "log-mark"); len(m) != 1 || !strings.HasPrefix(text(m[0]), "5000 older lines not shown") {
		t.Errorf("hidden-lines marker missing")
	}
}

// rawText is the text of n as is (text() folds white space).
func rawText(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}
