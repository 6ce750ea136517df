package main

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
)

// TestAppResourceKind: --app-resource names a resource; the handlers need
// its kind, read from discovery, and a resource the cluster does not serve
// fails start-up.
func TestAppResourceKind(t *testing.T) {
	disc := fake.NewClientset().Discovery().(*fakediscovery.FakeDiscovery)
	disc.Resources = []*metav1.APIResourceList{
		{GroupVersion: "hanzo.ai/v1", APIResources: []metav1.APIResource{{Name: "apps", Kind: "App", Namespaced: true}, {Name: "apps/status", Kind: "App"}}},
		{GroupVersion: "example.com/v1alpha1", APIResources: []metav1.APIResource{{Name: "widgets", Kind: "Widget", Namespaced: true}}},
	}
	tests := []struct {
		gvr      schema.GroupVersionResource
		want     string
		wantFail bool
	}{
		{gvr: schema.GroupVersionResource{Group: "hanzo.ai", Version: "v1", Resource: "apps"}, want: "App"},
		{gvr: schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "widgets"}, want: "Widget"},
		{gvr: schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "gadgets"}, wantFail: true},
		{gvr: schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"}, wantFail: true},
		{gvr: schema.GroupVersionResource{Group: "hanzo.ai", Version: "v1", Resource: "apps/status"}, wantFail: true}, // a subresource
	}
	for _, tt := range tests {
		got, err := appResourceKind(disc, tt.gvr)
		if tt.wantFail {
			if err == nil {
				t.Errorf("appResourceKind(%s) = %q, want an error", tt.gvr, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("appResourceKind(%s) = %q, %v; want %q", tt.gvr, got, err, tt.want)
		}
	}
}
