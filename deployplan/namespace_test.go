package deployplan

import (
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/envconfig"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWithNamespace(t *testing.T) {
	mk := func(apiVersion, kind, ns string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "x"}}}
		if ns != "" {
			u.SetNamespace(ns)
		}
		return u
	}
	// A cluster that serves Widgets as cluster-scoped and knows no Gadget.
	cluster := func(gvk schema.GroupVersionKind) (bool, bool) {
		switch gvk.Kind {
		case "Widget", "ClusterRole", "Namespace":
			return false, true
		case "Gadget":
			return false, false
		}
		return true, true
	}
	tests := []struct {
		name  string
		obj   *unstructured.Unstructured
		scope Scope
		want  string
	}{
		{"a Deployment without namespace is the environment's", mk("apps/v1", "Deployment", ""), OfflineScope, "env"},
		{"a Service without namespace, cluster scope", mk("v1", "Service", ""), cluster, "env"},
		{"an HPA without namespace", mk("autoscaling/v2", "HorizontalPodAutoscaler", ""), OfflineScope, "env"},
		{"its own namespace stays", mk("v1", "ConfigMap", "other"), OfflineScope, "other"},
		{"a ClusterRole stays cluster-scoped offline", mk("rbac.authorization.k8s.io/v1", "ClusterRole", ""), OfflineScope, ""},
		{"a Namespace stays cluster-scoped", mk("v1", "Namespace", ""), cluster, ""},
		{"a cluster-scoped CRD kind the cluster knows", mk("example.com/v1", "Widget", ""), cluster, ""},
		{"a CRD kind offline reads as namespaced", mk("example.com/v1", "Widget", ""), OfflineScope, "env"},
		{"a kind the cluster does not serve reads as namespaced (the plan blocks it)", mk("example.com/v1", "Gadget", ""), cluster, "env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.obj.GetNamespace()
			if got := InNamespace(tt.obj, "env", tt.scope); got != tt.want {
				t.Errorf("InNamespace = %q, want %q", got, tt.want)
			}
			out := WithNamespace([]*unstructured.Unstructured{tt.obj}, "env", tt.scope)
			if got := out[0].GetNamespace(); got != tt.want {
				t.Errorf("WithNamespace: namespace %q, want %q", got, tt.want)
			}
			if tt.obj.GetNamespace() != before {
				t.Errorf("WithNamespace modified its argument: namespace %q, was %q", tt.obj.GetNamespace(), before)
			}
		})
	}
}

// TestManualCommandsKeepArgs: the printed next commands keep the flags
// the command line was given (--audit-namespace).
func TestManualCommandsKeepArgs(t *testing.T) {
	cmds := manualCommands(&envconfig.Environment{Name: "dev"}, Options{ConfigPath: "deploy.yaml", KeepArgs: []string{"--audit-namespace=ops"}}, true)
	for _, c := range cmds[:1] {
		if !strings.Contains(c, "--audit-namespace=ops") {
			t.Errorf("next command %q drops --audit-namespace=ops", c)
		}
	}
	if !strings.Contains(cmds[len(cmds)-1], "--apply") || !strings.Contains(cmds[len(cmds)-1], "--audit-namespace=ops") {
		t.Errorf("apply command %q drops --audit-namespace=ops", cmds[len(cmds)-1])
	}
}

// TestMarkdownNoEmptyCells: empty values (a version-mode catalog's
// commits, a blocker without a hint) read as the en dash, never as an
// empty table cell.
func TestMarkdownNoEmptyCells(t *testing.T) {
	r := &Report{}
	r.DeployApply.RemainingBlockers = []Blocker{{ID: "x", Message: "m"}}
	r.DeployApply.Orphans = []Orphan{{Kind: "ConfigMap", Name: "c"}}
	for _, line := range strings.Split(r.Markdown(), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		for _, bad := range []string{"| |", "|  |", "``"} {
			if strings.Contains(line, bad) {
				t.Errorf("Markdown table row has an empty cell (%q): %s", bad, line)
			}
		}
	}
}
