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

func TestResolveApp(t *testing.T) {
	ts := newTestServer(t, newFakeView(nil))
	ts.view.namespaces = []string{"apps", "shop"}
	ts.srv.fleet = twinView{ts.view}
	tests := []struct {
		name           string
		target         string // the URL
		pathNS, pathN  string // the path values
		hint           string
		wantNS, wantN  string
		status         int // of the error, 0 for none
		wantPublicText string
	}{
		{"page", "/apps/apps/web", "apps", "web", "", "apps", "web", 0, ""},
		{"page: not a platform namespace", "/apps/kube-system/web", "kube-system", "web", "", "", "", http.StatusNotFound, "app kube-system/web not found"},
		{"page: no such app", "/apps/apps/nope", "apps", "nope", "", "", "", http.StatusNotFound, "app apps/nope not found"},
		{"page: the app is in another namespace", "/apps/shop/web", "shop", "web", "", "", "", http.StatusNotFound, "app shop/web not found"},
		{"api", "/v1/deploy/web/tree", "", "web", "", "apps", "web", 0, ""},
		{"api: no such app", "/v1/deploy/nope/tree", "", "nope", "", "", "", http.StatusNotFound, "app nope not found"},
		{"api: ambiguous", "/v1/deploy/twin/tree", "", "twin", "", "", "", http.StatusConflict, "app twin exists in namespaces apps, shop: add ?namespace= to choose one"},
		{"api: ?namespace= chooses", "/v1/deploy/twin/tree?namespace=shop", "", "twin", "", "shop", "twin", 0, ""},
		{"api: the ref's namespace chooses", "/v1/deploy/twin/resource/x", "", "twin", "shop", "shop", "twin", 0, ""},
		{"api: a hint that is not one of them", "/v1/deploy/twin/resource/x", "", "twin", "other", "", "", http.StatusConflict, "app twin exists in namespaces apps, shop: add ?namespace= to choose one"},
		{"api: not a platform namespace", "/v1/deploy/web/tree?namespace=kube-system", "", "web", "", "", "", http.StatusBadRequest, `namespace: "kube-system" is not a platform namespace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, tt.target, nil)
			if tt.pathNS != "" {
				r.SetPathValue("namespace", tt.pathNS)
			}
			r.SetPathValue("name", tt.pathN)
			ns, name, err := ts.srv.resolveApp(r, tt.hint)
			if tt.status == 0 {
				if err != nil || ns != tt.wantNS || name != tt.wantN {
					t.Errorf("resolveApp(%s) = %q, %q, %v, want %q, %q", tt.target, ns, name, err, tt.wantNS, tt.wantN)
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
