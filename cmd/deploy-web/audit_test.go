package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/freeze"
)

func TestApplyRecordsOfAPrune(t *testing.T) {
	env := &envconfig.Environment{Name: "dev", Namespace: "dev"}
	rep := func(results ...string) *deployplan.Report {
		r := &deployplan.Report{}
		r.DeployApply.Conclusion.Status = deployplan.StatusApplied
		r.DeployApply.Source.Commit = "0123abc"
		for i, res := range results {
			r.DeployApply.Orphans = append(r.DeployApply.Orphans, deployplan.Orphan{APIVersion: "v1", Kind: "ConfigMap", Name: "old-" + string(rune('a'+i)), Result: res})
		}
		return r
	}
	tests := []struct {
		name  string
		rep   *deployplan.Report
		err   error
		prune bool
		bg    string   // the reason of a break-glass that let the run through a freeze
		want  []string // verb/outcome per record
	}{
		{"an apply", rep(), nil, false, "", []string{"apply/succeeded"}},
		{"an apply with --prune that pruned", rep("deleted", "gone"), nil, true, "", []string{"apply/succeeded", "prune/succeeded"}},
		{"a prune that failed for one orphan", rep("deleted", "failed"), errors.New("prune: 1 failed"), true, "", []string{"apply/failed", "prune/failed"}},
		{"--prune when the apply stopped before pruning", rep("", ""), errors.New("health"), true, "", []string{"apply/failed"}},
		{"--prune without a report", nil, errors.New("render"), true, "", []string{"apply/failed"}},
		{"--prune through a freeze, with --break-glass", rep("deleted"), nil, true, "CVE-2026-1 hotfix", []string{"apply/succeeded", "prune/succeeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o *freeze.Override
			if tt.bg != "" {
				o = &freeze.Override{Reason: tt.bg, Freeze: freeze.Freeze{ID: "fz-0000abcd", Reason: "release week"}, By: freeze.Author{Subject: "ops"}}
			}
			var got []string
			for _, r := range applyRecords(t.Context(), env, time.Now(), tt.rep, tt.err, tt.prune, o) {
				got = append(got, string(r.Verb)+"/"+string(r.Outcome))
				if r.Verb == audit.VerbPrune && len(r.Objects) == 0 {
					t.Errorf("prune record names no object")
				}
				if r.BreakGlass != tt.bg || (tt.bg != "" && !strings.Contains(r.Message, "overrode freeze fz-0000abcd")) {
					t.Errorf("%s record: breakGlass %q, message %q; want breakGlass %q and, with one, the freeze it overrode named", r.Verb, r.BreakGlass, r.Message, tt.bg)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("applyRecords() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplicaIdentity(t *testing.T) {
	host := func() (string, error) { return "node-1", nil }
	noHost := func() (string, error) { return "", errors.New("no") }
	for _, tt := range []struct {
		pod  string
		host func() (string, error)
		want string
	}{
		{"deploy-web-7c9-abcde", host, "deploy-web-7c9-abcde"},
		{"", host, "node-1-42"},
		{"", noHost, "deploy-web-42"},
	} {
		getenv := func(k string) string {
			if k == "POD_NAME" {
				return tt.pod
			}
			return ""
		}
		if got := replicaIdentity(getenv, tt.host, 42); got != tt.want {
			t.Errorf("replicaIdentity(POD_NAME=%q) = %q, want %q", tt.pod, got, tt.want)
		}
	}
}

func TestEnvCluster(t *testing.T) {
	mapped := map[string]string{"staging": "eu-1"}
	for _, tt := range []struct {
		env  envconfig.Environment
		want string
	}{
		{envconfig.Environment{Name: "staging", Cluster: envconfig.ClusterRef{Context: "ctx"}}, "eu-1"},
		{envconfig.Environment{Name: "dev", Cluster: envconfig.ClusterRef{Context: "kind-dev"}}, "kind-dev"},
		{envconfig.Environment{Name: "dev", Cluster: envconfig.ClusterRef{InCluster: true}}, "in-cluster"},
		{envconfig.Environment{Name: "dev"}, "kubeconfig"},
	} {
		if got := envCluster(&tt.env, mapped); got != tt.want {
			t.Errorf("envCluster(%s, %+v) = %q, want %q", tt.env.Name, tt.env.Cluster, got, tt.want)
		}
	}
}

func TestReadAuditKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := "c2VjcmV0IGtleSBvZiAzMiBieXRlcyBvciBtb3JlLi4u"
	tests := []struct {
		name, path, want, err string
	}{
		{"unset", "", "", ""},
		{"a key with a newline", write("key", key+"\n"), key, ""},
		{"too short", write("short", "abc\n"), "", "want at least 32"},
		{"too large", write("large", strings.Repeat("k", maxAuditKeyFile+1)), "", "larger than"},
		{"missing", filepath.Join(dir, "nope"), "", "--audit-key-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAuditKey(tt.path)
			if string(got) != tt.want || (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Errorf("readAuditKey(%s) = %q, %v; want %q, an error containing %q", tt.name, got, err, tt.want, tt.err)
			}
		})
	}
}
