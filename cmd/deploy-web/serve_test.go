package main

import (
	"bytes"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/internal/buildtags"
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

// TestWarnGoPlugin: serve warns at start when the running binary was
// built without the tag that leaves Go's plugin loader out, and says
// nothing when it was.
func TestWarnGoPlugin(t *testing.T) {
	info := func(tags string, ok bool) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			if !ok {
				return nil, false
			}
			bi := &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "0"}}}
			if tags != "" {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "-tags", Value: tags})
			}
			return bi, true
		}
	}
	tests := []struct {
		name string
		read func() (*debug.BuildInfo, bool)
		warn bool
	}{
		{"make build", info(buildtags.Tags, true), false},
		{"with another tag too", info("netgo,"+buildtags.NoGoPlugin, true), false},
		{"plain go build", info("", true), true},
		{"another tag only", info("netgo", true), true},
		{"a tag that merely contains it", info(buildtags.NoGoPlugin+"_not", true), true},
		{"no build information", info("", false), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			warnGoPlugin(slog.New(slog.NewTextHandler(&buf, nil)), tt.read)
			got := buf.String()
			if tt.warn && (!strings.Contains(got, "level=WARN") || !strings.Contains(got, buildtags.NoGoPlugin)) {
				t.Errorf("warnGoPlugin logged %q, want a warning naming %s", got, buildtags.NoGoPlugin)
			}
			if !tt.warn && got != "" {
				t.Errorf("warnGoPlugin logged %q, want nothing", got)
			}
		})
	}
}
