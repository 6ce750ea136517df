package handlers

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/kubeview"
)

// twinView knows apps/web, and "twin" in both apps and shop.
type twinView struct{ *fakeView }

func (v twinView) LookupApp(ns, name string) (*unstructured.Unstructured, error) {
	var in []string
	switch name {
	case "web":
		in = []string{"apps"}
	case "twin":
		in = []string{"apps", "shop"}
	}
	var found []string
	for _, n := range in {
		if ns == "" || ns == n {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 0:
		return nil, kubeview.ErrAppNotFound
	case 1:
		u := &unstructured.Unstructured{}
		u.SetNamespace(found[0])
		u.SetName(name)
		return u, nil
	}
	return nil, &kubeview.AmbiguousAppError{Name: name, Namespaces: found}
}

// resolveCase is one request of TestResolveApp.
type resolveCase struct {
	name           string
	target         string // the URL
	pathC          string // the {cluster} path value
	pathNS, pathN  string // the path values
	hint           string
	wantC          string
	wantNS, wantN  string
	status         int // of the error, 0 for none
	wantPublicText string
}

func runResolveCases(t *testing.T, srv *Server, tests []resolveCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, tt.target, nil)
			if tt.pathNS != "" {
				r.SetPathValue("cluster", tt.pathC)
				r.SetPathValue("namespace", tt.pathNS)
			}
			r.SetPathValue("name", tt.pathN)
			a, err := srv.resolveApp(r, tt.hint)
			if tt.status == 0 {
				if err != nil || a.Cluster() != tt.wantC || a.Namespace != tt.wantNS || a.Name != tt.wantN {
					t.Errorf("resolveApp(%s) = %+v, %v, want %q, %q, %q", tt.target, a, err, tt.wantC, tt.wantNS, tt.wantN)
				}
				return
			}
			var he *httpError
			if !errors.As(err, &he) || he.Status != tt.status || he.Public != tt.wantPublicText {
				t.Errorf("resolveApp(%s) = %v, want %d %q", tt.target, err, tt.status, tt.wantPublicText)
			}
		})
	}
}

func TestResolveApp(t *testing.T) {
	ts := newTestServer(t, newFakeView(nil))
	ts.view.namespaces = []string{"apps", "shop"}
	ts.srv.clusters[0].View = twinView{ts.view}
	const c = "in-cluster"
	runResolveCases(t, ts.srv, []resolveCase{
		{"page", "/clusters/in-cluster/apps/apps/web", c, "apps", "web", "", c, "apps", "web", 0, ""},
		{"page: unknown cluster", "/clusters/eu/apps/apps/web", "eu", "apps", "web", "", "", "", "", http.StatusNotFound, "cluster eu not found"},
		{"page: not a platform namespace", "/clusters/in-cluster/apps/kube-system/web", c, "kube-system", "web", "", "", "", "", http.StatusNotFound, "app kube-system/web not found"},
		{"page: no such app", "/clusters/in-cluster/apps/apps/nope", c, "apps", "nope", "", "", "", "", http.StatusNotFound, "app apps/nope not found"},
		{"page: the app is in another namespace", "/clusters/in-cluster/apps/shop/web", c, "shop", "web", "", "", "", "", http.StatusNotFound, "app shop/web not found"},
		{"api", "/v1/deploy/web/tree", "", "", "web", "", c, "apps", "web", 0, ""},
		{"api: ?cluster= names it", "/v1/deploy/web/tree?cluster=in-cluster", "", "", "web", "", c, "apps", "web", 0, ""},
		{"api: unknown cluster", "/v1/deploy/web/tree?cluster=eu", "", "", "web", "", "", "", "", http.StatusNotFound, "cluster eu not found"},
		{"api: no such app", "/v1/deploy/nope/tree", "", "", "nope", "", "", "", "", http.StatusNotFound, "app nope not found"},
		{"api: ambiguous", "/v1/deploy/twin/tree", "", "", "twin", "", "", "", "", http.StatusConflict, "app twin exists in namespaces apps, shop: add ?namespace= to choose one"},
		{"api: ?namespace= chooses", "/v1/deploy/twin/tree?namespace=shop", "", "", "twin", "", c, "shop", "twin", 0, ""},
		{"api: the ref's namespace chooses", "/v1/deploy/twin/resource/x", "", "", "twin", "shop", c, "shop", "twin", 0, ""},
		{"api: a hint that is not one of them", "/v1/deploy/twin/resource/x", "", "", "twin", "other", "", "", "", http.StatusConflict, "app twin exists in namespaces apps, shop: add ?namespace= to choose one"},
		{"api: not a platform namespace", "/v1/deploy/web/tree?namespace=kube-system", "", "", "web", "", "", "", "", http.StatusBadRequest, `namespace: "kube-system" is not a platform namespace`},
	})
}

// onlyView knows one App, ns/name.
type onlyView struct {
	*fakeView
	ns, name string
}

func (v onlyView) LookupApp(ns, name string) (*unstructured.Unstructured, error) {
	if name != v.name || ns != "" && ns != v.ns {
		return nil, kubeview.ErrAppNotFound
	}
	u := &unstructured.Unstructured{}
	u.SetNamespace(v.ns)
	u.SetName(name)
	return u, nil
}

func TestResolveAppManyClusters(t *testing.T) {
	us := newFakeView(nil)
	us.namespaces = []string{"apps", "shop"}
	eu := newFakeView(nil)
	eu.namespaces = []string{"apps", "eu-only"}
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{{Name: "us", View: twinView{us}}, {Name: "eu", View: onlyView{eu, "apps", "twin"}}}
	})
	runResolveCases(t, ts.srv, []resolveCase{
		{"page in eu", "/clusters/eu/apps/apps/twin", "eu", "apps", "twin", "", "eu", "apps", "twin", 0, ""},
		{"page: not in eu", "/clusters/eu/apps/apps/web", "eu", "apps", "web", "", "", "", "", http.StatusNotFound, "app apps/web not found"},
		{"page: a namespace of another cluster", "/clusters/eu/apps/shop/twin", "eu", "shop", "twin", "", "", "", "", http.StatusNotFound, "app shop/twin not found"},
		{"page: a cluster name with a slash", "/clusters/a%2Fb/apps/apps/twin", "a/b", "apps", "twin", "", "", "", "", http.StatusNotFound, "cluster a/b not found"},
		{"api: in one cluster only", "/v1/deploy/web/tree", "", "", "web", "", "us", "apps", "web", 0, ""},
		{"api: in both clusters", "/v1/deploy/twin/tree", "", "", "twin", "", "", "", "", http.StatusConflict, "app twin exists in clusters/namespaces eu/apps, us/apps, us/shop: add ?cluster= and ?namespace= to choose one"},
		{"api: ?namespace= leaves two clusters", "/v1/deploy/twin/tree?namespace=apps", "", "", "twin", "", "", "", "", http.StatusConflict, "app twin exists in clusters/namespaces eu/apps, us/apps: add ?cluster= and ?namespace= to choose one"},
		{"api: ?cluster= and ?namespace= choose", "/v1/deploy/twin/tree?cluster=us&namespace=apps", "", "", "twin", "", "us", "apps", "twin", 0, ""},
		{"api: ?cluster= chooses", "/v1/deploy/twin/tree?cluster=eu", "", "", "twin", "", "eu", "apps", "twin", 0, ""},
		{"api: ?cluster= leaves namespaces", "/v1/deploy/twin/tree?cluster=us", "", "", "twin", "", "", "", "", http.StatusConflict, "app twin exists in namespaces apps, shop: add ?namespace= to choose one"},
		{"api: a namespace of the other cluster", "/v1/deploy/twin/tree?cluster=us&namespace=eu-only", "", "", "twin", "", "", "", "", http.StatusBadRequest, `namespace: "eu-only" is not a platform namespace`},
		{"api: a namespace of one cluster", "/v1/deploy/twin/tree?namespace=shop", "", "", "twin", "", "us", "shop", "twin", 0, ""},
		{"api: unknown cluster", "/v1/deploy/twin/tree?cluster=ap", "", "", "twin", "", "", "", "", http.StatusNotFound, "cluster ap not found"},
	})
}
