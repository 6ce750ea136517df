package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/release"
)

// auditEntry is what a test reads back from one log line.
type auditEntry struct{ Msg, User, Outcome string }

// TestDemoLogPrintsAuditLines drives the release seam's real audit trail
// (a sync, a refused rollback) through the demo's logger and checks that
// both lines reach the terminal with the user, in both formats, while an
// Info line without a user (a request line) stays out and a warning
// still shows.
func TestDemoLogPrintsAuditLines(t *testing.T) {
	const user = "admin@demo.local (sub admin)"
	want := []auditEntry{
		{Msg: "sync", User: user, Outcome: "accepted"},
		{Msg: "rollback", User: user, Outcome: "refused"},
		{Msg: "cache not synced"},
	}
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			log := newDemoLogger(&out, format)
			app := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "hanzo.ai/v1", "kind": "App",
				"metadata": map[string]any{"name": "web", "namespace": "storefront"},
				"spec":     map[string]any{"image": "registry.demo.local/storefront/web:1.1.0"},
			}}
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{appcr.Resource: "AppList"}, app)
			history := func(namespace, name string) ([]string, error) {
				return []string{"registry.demo.local/storefront/web:1.1.0"}, nil
			}
			rel := release.New(dyn, fake.NewClientset().CoreV1(), appcr.Resource, history, log).InCluster("devcluster")
			ctx := context.Background()

			if _, err := rel.Sync(ctx, "storefront", "web", user); err != nil {
				t.Fatalf("Sync = %v, want nil", err)
			}
			if _, err := rel.Rollback(ctx, "storefront", "web", "latest", user); err == nil {
				t.Fatal("Rollback to latest = nil, want a refusal")
			}
			log.Info("http", "method", "GET", "path", "/", "status", 200)
			log.Warn("cache not synced", "kind", "Pod")

			got := readEntries(t, format, out.String())
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("demo log lines (-want +got):\n%s\nlog:\n%s", diff, out.String())
			}
		})
	}
}

// TestAuditOrLevelWithAttrs: a logger made With the user is an audit
// logger; a logger With other attributes is not.
func TestAuditOrLevelWithAttrs(t *testing.T) {
	var out bytes.Buffer
	log := newDemoLogger(&out, "text")
	log.With("component", "release").Info("quiet")
	log.With(auditKey, "sub alice").WithGroup("g").Info("apply", "environment", "dev")
	if got := out.String(); strings.Contains(got, "quiet") || !strings.Contains(got, `msg=apply user="sub alice"`) {
		t.Errorf("log = %q, want the apply line with its user and not the quiet one", got)
	}
}

var textFieldRE = regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S*)`)

func readEntries(t *testing.T, format, log string) []auditEntry {
	t.Helper()
	var entries []auditEntry
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		fields := map[string]string{}
		if format == "json" {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("json line %q: %v", line, err)
			}
			for k, v := range m {
				if s, ok := v.(string); ok {
					fields[k] = s
				}
			}
		} else {
			for _, m := range textFieldRE.FindAllStringSubmatch(line, -1) {
				v := m[2]
				if u, err := strconv.Unquote(v); err == nil {
					v = u
				}
				fields[m[1]] = v
			}
		}
		entries = append(entries, auditEntry{Msg: fields["msg"], User: fields["user"], Outcome: fields["outcome"]})
	}
	return entries
}
