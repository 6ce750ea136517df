package handlers

import (
	stdhtml "html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// injectionPayloads are strings an attacker who can name a cluster object,
// write an annotation or print a log line might try.
var injectionPayloads = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
}

// assertInert checks that payload came back escaped: not raw, escaped
// present, and nothing in the parsed document that would run script.
func assertInert(t *testing.T, what, body, payload string) *html.Node {
	t.Helper()
	if esc := stdhtml.EscapeString(payload); !strings.Contains(body, esc) {
		t.Errorf("%s: body lacks the escaped payload %q", what, esc)
	}
	return assertNoScript(t, what, body, payload)
}

// assertNoScript checks that payload is not in body raw and that the parsed
// document has nothing injected that would run script.
func assertNoScript(t *testing.T, what, body, payload string) *html.Node {
	t.Helper()
	if strings.Contains(body, payload) {
		t.Errorf("%s: body contains the raw payload %q", what, payload)
	}
	doc := parseHTML(t, body)
	for _, n := range findAll(doc, func(*html.Node) bool { return true }) {
		switch n.DataAtom {
		case atom.Img, atom.Iframe, atom.Object, atom.Embed:
			t.Errorf("%s: injected <%s> element %v", what, n.Data, n.Attr)
		case atom.Script:
			if !strings.HasPrefix(attr(n, "src"), "/static/") || n.FirstChild != nil {
				t.Errorf("%s: injected <script> %v", what, n.Attr)
			}
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("%s: injected attribute <%s %s=%q>", what, n.Data, a.Key, a.Val)
			}
		}
	}
	return doc
}

// TestHTMLInjection: everything from the cluster is escaped in HTML
// (DESIGN.md, security invariant 5).
func TestHTMLInjection(t *testing.T) {
	for _, p := range injectionPayloads {
		t.Run(p, func(t *testing.T) {
			row := kubeview.AppRow{
				Name: p, Namespace: "apps", Image: "ghcr.io/x/y:" + p, Version: p,
				Running:  []kubeview.VersionCount{{Version: p, Image: "ghcr.io/x/y:" + p, Ready: 1}},
				Health:   objrules.Health{Status: objrules.HealthDegraded, Message: p},
				Sync:     kubeview.Sync{Status: kubeview.SyncOutOfSync, Message: p},
				Replicas: kubeview.Replicas{Desired: 1}, HasDeployment: true,
			}
			view := newFakeView([]kubeview.AppRow{row})
			view.status = kubeview.Status{Synced: true, Reachable: false, Error: p, Warnings: []string{p}}
			ts := newTestServer(t, view)

			for _, tt := range []struct {
				name   string
				header map[string]string
			}{
				{"page", nil},
				{"fragment", htmxHeader},
			} {
				t.Run(tt.name, func(t *testing.T) {
					w := ts.get(t, "/", tt.header)
					if w.Code != http.StatusOK {
						t.Fatalf("GET /: status = %d, want %d", w.Code, http.StatusOK)
					}
					doc := assertInert(t, "GET / ("+tt.name+")", w.Body.String(), p)
					// The payload is still there, as data: the parser reads it back whole.
					got := rowViews(doc)
					if len(got) != 1 {
						t.Fatalf("GET /: %d rows, want 1", len(got))
					}
					rv := got[0]
					for _, f := range []struct{ field, got, want string }{
						{"data-app", rv.App, p},
						{"href", rv.Href, "/clusters/in-cluster/apps/apps/" + url.PathEscape(p)},
						{"health title", rv.HealthTitle, p},
						{"sync title", rv.SyncTitle, p},
						{"declared", rv.Declared, p},
						{"image", rv.Image, "ghcr.io/x/y:" + p},
						{"running", strings.Join(rv.Running, ","), p + " (1)"},
					} {
						if f.got != f.want {
							t.Errorf("GET / row %s = %q, want %q", f.field, f.got, f.want)
						}
					}
					if got, want := text(oneByTestID(t, doc, "warning-banner")), p+": those objects are missing from this view."; got != want {
						t.Errorf("GET / warning banner = %q, want %q", got, want)
					}
				})
			}

			t.Run("search", func(t *testing.T) {
				target := "/?q=" + url.QueryEscape(p)
				w := ts.get(t, target, nil)
				doc := assertInert(t, "GET "+target, w.Body.String(), p)
				if got := attr(oneByTestID(t, doc, "search"), "value"); got != p {
					t.Errorf("GET %s: search value = %q, want %q", target, got, p)
				}
			})

			t.Run("bad filter", func(t *testing.T) {
				target := "/?namespace=" + url.QueryEscape(p)
				w := ts.get(t, target, nil)
				if w.Code != http.StatusBadRequest {
					t.Errorf("GET %s: status = %d, want %d", target, w.Code, http.StatusBadRequest)
				}
				assertInert(t, "GET "+target, w.Body.String(), p)
			})

			t.Run("not found", func(t *testing.T) {
				target := (&url.URL{Path: "/nowhere/" + p}).String()
				w := ts.get(t, target, nil)
				if w.Code != http.StatusNotFound {
					t.Errorf("GET %s: status = %d, want %d", target, w.Code, http.StatusNotFound)
				}
				doc := assertInert(t, "GET "+target, w.Body.String(), p)
				if got, want := text(oneByTestID(t, doc, "error-message")), "page /nowhere/"+p+" not found"; got != want {
					t.Errorf("GET %s: error message = %q, want %q", target, got, want)
				}
			})

			t.Run("app not found", func(t *testing.T) {
				target := "/clusters/in-cluster/apps/apps/" + url.PathEscape(p)
				w := ts.get(t, target, nil)
				if w.Code != http.StatusNotFound {
					t.Errorf("GET %s: status = %d, want %d", target, w.Code, http.StatusNotFound)
				}
				assertNoScript(t, "GET "+target, w.Body.String(), p)
			})

			t.Run("not found JSON", func(t *testing.T) {
				target := (&url.URL{Path: "/v1/deploy/" + p}).String()
				w := ts.get(t, target, nil)
				if w.Code != http.StatusNotFound {
					t.Errorf("GET %s: status = %d, want %d", target, w.Code, http.StatusNotFound)
				}
				if ct := w.Header().Get("Content-Type"); ct != "application/json" {
					t.Errorf("GET %s: Content-Type = %q, want application/json", target, ct)
				}
				if body := w.Body.String(); strings.Contains(body, "<") || strings.Contains(body, ">") {
					t.Errorf("GET %s: body = %q, want < and > escaped in JSON", target, body)
				}
			})
		})
	}
}
