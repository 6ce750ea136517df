package handlers

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/html"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// testNow is the pinned clock of every test server.
var testNow = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// testUserHeader marks a request as authenticated for fakeAuth.
const testUserHeader = "X-Test-User"

// testIdentity is the identity fakeAuth injects for an authenticated request.
var testIdentity = auth.Identity{
	Subject: "admin-sub",
	Email:   "ada@example.com",
	Name:    "Ada Admin",
	Admin:   true,
	Expires: testNow.Add(time.Hour),
}

// testCSRF is the CSRF token fakeAuth injects.
const testCSRF = "csrf-token"

// fakeView is a Fleet with canned answers that records the queries it
// got. It knows no single app: Row, LookupApp, Tree and Object answer "not
// found". The embedded (nil) Fleet only fills in methods added to the
// interface later; calling one of those panics, so give it a real method.
type fakeView struct {
	Fleet

	mu         sync.Mutex
	page       kubeview.Page
	err        error
	status     kubeview.Status
	synced     bool
	namespaces []string
	queries    []kubeview.Query
}

func (v *fakeView) Applications(q kubeview.Query) (kubeview.Page, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.queries = append(v.queries, q)
	p := v.page
	p.Rows = slices.Clone(p.Rows) // each call's page is its own, as kubeview's
	return p, v.err
}

func (v *fakeView) Status() kubeview.Status {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.status
}

func (v *fakeView) Synced() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.synced
}

func (v *fakeView) Namespaces() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.namespaces
}

func (v *fakeView) Row(namespace, name string) (kubeview.AppRow, bool) {
	return kubeview.AppRow{}, false
}

func (v *fakeView) LookupApp(namespace, name string) (*unstructured.Unstructured, error) {
	return nil, kubeview.ErrAppNotFound
}

func (v *fakeView) Tree(namespace, name string) (kubeview.Tree, error) {
	return kubeview.Tree{}, kubeview.ErrAppNotFound
}

func (v *fakeView) Object(ctx context.Context, namespace, app string, ref kubeview.Ref) (*unstructured.Unstructured, kubeview.TreeNode, error) {
	return nil, kubeview.TreeNode{}, kubeview.ErrAppNotFound
}

func (v *fakeView) Events(ctx context.Context, namespace, uid string) (kubeview.EventList, error) {
	return kubeview.EventList{}, nil
}

func (v *fakeView) setSynced(b bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.synced = b
}

// lastQuery returns the last Query Applications got, and whether there was
// one.
func (v *fakeView) lastQuery() (kubeview.Query, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.queries) == 0 {
		return kubeview.Query{}, false
	}
	return v.queries[len(v.queries)-1], true
}

// newFakeView returns a synced view of the platform namespaces "apps" and
// "infra" that serves rows.
func newFakeView(rows []kubeview.AppRow) *fakeView {
	return &fakeView{
		page: kubeview.Page{
			Rows:    rows,
			Matched: len(rows),
			Counts:  countsOf(rows),
			Version: 42,
		},
		status:     kubeview.Status{Synced: true, Reachable: true, LastContact: testNow},
		synced:     true,
		namespaces: []string{"apps", "infra"},
	}
}

func countsOf(rows []kubeview.AppRow) kubeview.Counts {
	c := kubeview.Counts{Health: map[objrules.HealthStatus]int{}, Sync: map[kubeview.SyncStatus]int{}}
	for _, r := range rows {
		c.Fleet++
		c.Total++
		c.Health[r.Health.Status]++
		c.Sync[r.Sync.Status]++
	}
	return c
}

// fakeAuth is the Authenticator of the tests. Require lets a request through
// only with the header "X-Test-User: admin", injecting testIdentity;
// otherwise it denies with 401 through the site's own Deny, as auth.Auth
// does. It records every path Require saw and every denial.
type fakeAuth struct {
	deny func(w http.ResponseWriter, r *http.Request, status int, reason string)
	// id, when set, replaces testIdentity.
	id *auth.Identity

	mu       sync.Mutex
	required []string // "METHOD path" of each request that reached Require
	denied   []string // "METHOD path" of each request Require denied
}

func (a *fakeAuth) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		a.mu.Lock()
		a.required = append(a.required, key)
		ok := r.Header.Get(testUserHeader) == "admin"
		if !ok {
			a.denied = append(a.denied, key)
		}
		a.mu.Unlock()
		if !ok {
			a.deny(w, r, http.StatusUnauthorized, auth.ReasonUnauthenticated)
			return
		}
		id := testIdentity
		if a.id != nil {
			id = *a.id
		}
		next.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), id, testCSRF)))
	})
}

func (a *fakeAuth) HandleLogin(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "fake-login")
}

func (a *fakeAuth) HandleCallback(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "fake-callback")
}

func (a *fakeAuth) HandleLogout(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "fake-logout")
}

// last returns the "METHOD path" of the last request Require saw.
func (a *fakeAuth) last() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.required) == 0 {
		return ""
	}
	return a.required[len(a.required)-1]
}

// counts returns how many requests Require saw and denied.
func (a *fakeAuth) counts() (required, denied int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.required), len(a.denied)
}

// lockedBuffer is a log sink safe for concurrent handlers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testServer is a Server wired like main wires it, with fakes at its
// interfaces.
type testServer struct {
	srv     *Server
	handler http.Handler
	view    *fakeView
	auth    *fakeAuth
	log     *lockedBuffer
}

// newTestServer builds the site, the fake authenticator (denying through the
// site, as auth.New is given the site) and the server with the clock pinned
// to testNow; opts adjust the Options.
func newTestServer(t testing.TB, view *fakeView, opts ...func(*Options)) *testServer {
	t.Helper()
	logs := &lockedBuffer{}
	var log *slog.Logger
	if _, bench := t.(*testing.B); bench {
		log = slog.New(slog.DiscardHandler)
	} else {
		log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	site, err := NewSite(log)
	if err != nil {
		t.Fatalf("NewSite() error = %v", err)
	}
	fa := &fakeAuth{deny: site.Deny}
	o := Options{PerPage: 100, Now: func() time.Time { return testNow }, Clusters: []Cluster{{Name: "in-cluster", View: view}}}
	for _, f := range opts {
		f(&o)
	}
	srv := New(site, fa, o)
	return &testServer{srv: srv, handler: srv.Handler(), view: view, auth: fa, log: logs}
}

// perPage sets Options.PerPage.
func perPage(n int) func(*Options) { return func(o *Options) { o.PerPage = n } }

// request is one request a test sends.
type request struct {
	method string // GET if empty
	target string
	admin  bool // authenticated (X-Test-User: admin)
	header map[string]string
	body   string
}

// do serves req and returns the recorded response.
func (ts *testServer) do(t testing.TB, req request) *httptest.ResponseRecorder {
	t.Helper()
	method := req.method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if req.body != "" {
		body = strings.NewReader(req.body)
	}
	r := httptest.NewRequest(method, req.target, body)
	if req.admin {
		r.Header.Set(testUserHeader, "admin")
	}
	for k, v := range req.header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	ts.handler.ServeHTTP(w, r)
	return w
}

// get serves an authenticated GET of target.
func (ts *testServer) get(t testing.TB, target string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	return ts.do(t, request{target: target, admin: true, header: header})
}

var htmxHeader = map[string]string{"HX-Request": "true"}

// parseHTML parses a full page.
func parseHTML(t testing.TB, body string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("html.Parse() error = %v", err)
	}
	return doc
}

// findAll returns the elements under n (n included) for which match is true,
// in document order.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && match(d) {
			out = append(out, d)
		}
	}
	if n.Type == html.ElementNode && match(n) {
		out = append([]*html.Node{n}, out...)
	}
	return out
}

// byTestID returns the elements under n with data-testid=id.
func byTestID(n *html.Node, id string) []*html.Node {
	return findAll(n, func(e *html.Node) bool { return attr(e, "data-testid") == id })
}

// oneByTestID returns the only element under n with data-testid=id.
func oneByTestID(t testing.TB, n *html.Node, id string) *html.Node {
	t.Helper()
	got := byTestID(n, id)
	if len(got) != 1 {
		t.Fatalf("elements with data-testid=%q: %d, want 1", id, len(got))
	}
	return got[0]
}

// byTag returns the elements under n named tag.
func byTag(n *html.Node, tag string) []*html.Node {
	return findAll(n, func(e *html.Node) bool { return e.Data == tag })
}

// attr returns n's attribute key, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// text returns n's text content with runs of white space collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
