package deployplan

import (
	"encoding/json"
	"fmt"
	"github.com/hanzoai/deploy-web/envconfig"
	"strings"
	"testing"
	"time"
)

// sampleReport is a valid ready plan with one planned Job replacement.
func sampleReport() *Report {
	env := &envconfig.Environment{Name: "sample-dev", Namespace: "sample-dev", Cluster: envconfig.ClusterRef{Context: "dev"}, TemplateJobs: envconfig.TemplateJobs{Allowlist: []string{"migrate"}}}
	r := &Report{}
	d := &r.DeployApply
	d.SchemaVersion, d.Environment, d.Mode, d.GeneratedAt = SchemaVersion, env.Name, "dry-run", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	d.Target = Target{Cluster: "https://127.0.0.1:6443", Namespace: env.Namespace}
	d.ApplyBoundary = boundary(env)
	d.TemplateJobReplacementPolicy = JobPolicy{Allowlist: env.TemplateJobs.Allowlist, Namespace: env.Namespace, Rules: jobRules}
	d.ArtifactPlan = ArtifactPlan{ExpectedArtifactCommit: commitA, SourceCommit: commitB, DeployCommit: commitA, CatalogCommit: commitA, PublishStatus: "published", RegistryStatus: "verified"}
	d.Objects = []ObjectPlan{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: env.Namespace, Name: "api", Action: ActionUpdate}, {APIVersion: "batch/v1", Kind: "Job", Namespace: env.Namespace, Name: "migrate", Action: ActionReplace}}
	d.WorkloadPlan = []WorkloadPlan{{Kind: "Deployment", Name: "api", Containers: []Container{{Name: "api", Image: "x:" + commitA}}, Action: ActionUpdate}}
	d.ServicePlan = []ServicePlan{{Name: "api", ServiceID: "api", Ports: []ServicePort{{Port: 80, TargetPort: TargetPort{Number: 8080}, Protocol: "TCP"}}}}
	d.TemplateJobReplacements = []JobReplacement{{Namespace: env.Namespace, Job: "migrate", OldImage: "x:old", NewImage: "x:new", Result: JobPlanned, Reason: "r", Allowlisted: true, Suspended: true}}
	d.Source = SourceInfo{Origin: "file:///repo@main:deploy/dev", Commit: commitB, Objects: 2, RenderedDigest: "sha256:" + strings.Repeat("ab", 32)}
	Conclude(d)
	d.ManualCommands = manualCommands(env, Options{ConfigPath: "deploy.yaml"}, true)
	d.RollbackHint = rollbackHint(env, d, "", Options{})
	return r
}

func mutate(t *testing.T, r *Report, f func(m map[string]any)) []byte {
	t.Helper()
	b, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	f(m["deployApply"].(map[string]any))
	out, _ := json.Marshal(m)
	return out
}

func TestValidateReportValid(t *testing.T) {
	b, _ := sampleReport().JSON()
	if vs := ValidateReport(b); len(vs) != 0 {
		t.Fatalf("ValidateReport(sample) = %v, want none", vs)
	}
	r := sampleReport()
	r.DeployApply.RemainingBlockers = []Blocker{{ID: "unpublished:api", Message: "m", UnblockHint: "h"}}
	Conclude(&r.DeployApply)
	r.DeployApply.ManualCommands = manualCommands(&envconfig.Environment{Name: "sample-dev"}, Options{}, false)
	b, _ = r.JSON()
	if vs := ValidateReport(b); len(vs) != 0 {
		t.Fatalf("ValidateReport(blocked sample) = %v, want none", vs)
	}
}

func TestValidateReportViolations(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(d map[string]any)
		want   string // a substring of one violation
	}{
		{"missing field", func(d map[string]any) { delete(d, "rollbackHint") }, "deployApply.rollbackHint: missing"},
		{"no rendered digest", func(d map[string]any) { delete(d["source"].(map[string]any), "renderedDigest") }, "deployApply.source.renderedDigest: missing"},
		{"bad rendered digest", func(d map[string]any) { d["source"].(map[string]any)["renderedDigest"] = "md5:abc" }, "is not sha256:<64 hex digits>"},
		{"source commits disagree", func(d map[string]any) { d["source"].(map[string]any)["commit"] = "3333" }, "differs from artifactPlan.sourceCommit"},
		{"nested missing", func(d map[string]any) { delete(d["artifactPlan"].(map[string]any), "catalogCommit") }, "deployApply.artifactPlan.catalogCommit: missing"},
		{"wrong type", func(d map[string]any) { d["manualCommands"] = "deploy-web apply" }, "deployApply.manualCommands: is string, want array"},
		{"null list", func(d map[string]any) { d["remainingBlockers"] = nil }, "deployApply.remainingBlockers: is null"},
		{"wrong element type", func(d map[string]any) { d["applyBoundary"].(map[string]any)["noWriteScope"] = []any{1} }, "noWriteScope[0]: is number, want string"},
		{"replicas string", func(d map[string]any) { d["workloadPlan"].([]any)[0].(map[string]any)["replicas"] = "3" }, "replicas: is string, want number"},
		{"bad status", func(d map[string]any) { d["conclusion"].(map[string]any)["status"] = "ok" }, "\"ok\" is not one of"},
		{"bogus registry status", func(d map[string]any) { d["artifactPlan"].(map[string]any)["registryStatus"] = "bogus" }, "artifactPlan.registryStatus: \"bogus\" is not one of"},
		{"bogus publish status", func(d map[string]any) { d["artifactPlan"].(map[string]any)["publishStatus"] = "bogus" }, "artifactPlan.publishStatus: \"bogus\" is not one of"},
		{"bogus catalog mode", func(d map[string]any) { d["artifactPlan"].(map[string]any)["catalogMode"] = "semver" }, "artifactPlan.catalogMode: \"semver\" is not one of"},
		{"bogus object action", func(d map[string]any) { d["objects"] = []any{map[string]any{"kind": "ConfigMap", "action": "yolo"}} }, "objects[0].action: \"yolo\" is not one of"},
		{"drift not a list", func(d map[string]any) { d["objects"] = []any{map[string]any{"action": "update", "drift": "x"}} }, "objects[0].drift: is string, want array"},
		{"drift without manager", func(d map[string]any) {
			d["objects"] = []any{map[string]any{"action": "update", "drift": []any{map[string]any{"path": "spec.replicas", "operation": "Update", "live": "3"}}}}
		}, "objects[0].drift[0].manager: is"},
		{"affected not strings", func(d map[string]any) {
			d["conclusion"].(map[string]any)["status"] = "blocked"
			d["manualCommands"] = []any{}
			d["remainingBlockers"] = []any{map[string]any{"id": "x", "message": "m", "unblockHint": "h", "affected": []any{1}}}
		}, "remainingBlockers[0].affected[0]: is number, want string"},
		{"blocked without blockers", func(d map[string]any) { d["conclusion"].(map[string]any)["status"] = "blocked" }, "is blocked but remainingBlockers is empty"},
		{"ready with blockers", func(d map[string]any) {
			d["remainingBlockers"] = []any{map[string]any{"id": "x", "message": "m", "unblockHint": "h"}}
		}, "has 1 blocker(s) but the status is \"ready\""},
		{"empty hint", func(d map[string]any) {
			d["conclusion"].(map[string]any)["status"] = "blocked"
			d["manualCommands"] = []any{}
			d["remainingBlockers"] = []any{map[string]any{"id": "x", "message": "m", "unblockHint": " "}}
		}, "unblockHint: is empty"},
		{"apply command when blocked", func(d map[string]any) {
			d["conclusion"].(map[string]any)["status"] = "blocked"
			d["remainingBlockers"] = []any{map[string]any{"id": "x", "message": "m", "unblockHint": "h"}}
		}, "is an apply command but the status is \"blocked\""},
		{"apply command when protected", func(d map[string]any) { d["target"].(map[string]any)["protected"] = true }, "environment is protected"},
		{"planned job not allowlisted", func(d map[string]any) {
			d["templateJobReplacementPolicy"].(map[string]any)["allowlist"] = []any{"other"}
		}, "Job \"migrate\" is planned but not in the allowlist"},
		{"planned job not suspended", func(d map[string]any) {
			d["templateJobReplacements"].([]any)[0].(map[string]any)["suspended"] = false
		}, "not recorded as suspended"},
		{"planned job elsewhere", func(d map[string]any) {
			d["templateJobReplacements"].([]any)[0].(map[string]any)["namespace"] = "prod"
		}, "in namespace \"prod\""},
		{"replaced in a plan", func(d map[string]any) {
			d["templateJobReplacements"].([]any)[0].(map[string]any)["result"] = "replaced"
		}, "only an apply replaces"},
		{"bad job result", func(d map[string]any) {
			d["templateJobReplacements"].([]any)[0].(map[string]any)["result"] = "deleted"
		}, "\"deleted\" is not one of"},
		{"write scope elsewhere", func(d map[string]any) {
			d["applyBoundary"].(map[string]any)["writeScope"].(map[string]any)["namespace"] = "kube-system"
		}, "writeScope.namespace: is \"kube-system\""},
		{"default mode", func(d map[string]any) { d["applyBoundary"].(map[string]any)["defaultMode"] = "write" }, "want \"no-write\""},
		{"secret payload", func(d map[string]any) {
			d["objects"].([]any)[0].(map[string]any)["data"] = map[string]any{"password": "x"}
		}, "must not carry object data"},
		{"too many changes", func(d map[string]any) {
			var cs []any
			for i := 0; i <= MaxChanges; i++ {
				cs = append(cs, map[string]any{"path": fmt.Sprintf("data.k%d", i), "old": "a", "new": "b"})
			}
			d["objects"] = []any{map[string]any{"kind": "ConfigMap", "action": "update", "changes": cs}}
		}, "objects[0].changes: has 21 entries, more than 20"},
		{"a change value too long", func(d map[string]any) {
			d["objects"] = []any{map[string]any{"kind": "ConfigMap", "action": "update", "changes": []any{map[string]any{"path": "p", "old": strings.Repeat("x", MaxChangeValue+10), "new": ""}}}}
		}, "objects[0].changes[0].old: is 130 bytes, more than 120"},
		{"a change without new", func(d map[string]any) {
			d["objects"] = []any{map[string]any{"kind": "ConfigMap", "action": "update", "changes": []any{map[string]any{"path": "p", "old": "x"}}}}
		}, "objects[0].changes[0].new: is"},
		{"a Secret key in a change", func(d map[string]any) {
			d["objects"] = []any{map[string]any{"kind": "Secret", "action": "update", "changes": []any{map[string]any{"path": "data.token", "old": "a", "new": "b"}}}}
		}, "names a Secret key"},
		{"negative changesOmitted", func(d map[string]any) {
			d["objects"] = []any{map[string]any{"kind": "ConfigMap", "action": "update", "changesOmitted": -1}}
		}, "changesOmitted: is number, want a whole number"},
		{"applied with a failed object", func(d map[string]any) {
			d["conclusion"].(map[string]any)["status"] = "applied"
			d["manualCommands"] = []any{}
			d["templateJobReplacements"].([]any)[0].(map[string]any)["result"] = "replaced"
			d["objects"].([]any)[0].(map[string]any)["result"] = "failed"
		}, "is failed but the report says applied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := ValidateReport(mutate(t, sampleReport(), tt.mutate))
			var all []string
			for _, v := range vs {
				all = append(all, v.String())
			}
			if !strings.Contains(strings.Join(all, "\n"), tt.want) {
				t.Errorf("ValidateReport violations =\n%s\nwant one containing %q", strings.Join(all, "\n"), tt.want)
			}
		})
	}
	for _, in := range []string{"", "[]", `{"deployApply": 1}`} {
		if vs := ValidateReport([]byte(in)); len(vs) == 0 {
			t.Errorf("ValidateReport(%q) = none, want a violation", in)
		}
	}
}

func TestReportRendering(t *testing.T) {
	r := sampleReport()
	r.DeployApply.RemainingBlockers = []Blocker{{ID: "x", Message: "<script>alert(1)</script> | pipe", UnblockHint: "*fix*"}}
	md := r.Markdown()
	if strings.Contains(md, "<script>") {
		t.Errorf("Markdown carries raw HTML:\n%s", md)
	}
	for _, want := range []string{"# Deploy sample-dev", "## Blockers", "&lt;script&gt;", `\| pipe`, "## Template Jobs", "| migrate |", "## Rollback"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	s := r.Summary()
	for _, want := range []string{"READY", "job migrate: planned", "next: deploy-web apply"} {
		if !strings.Contains(s, want) {
			t.Errorf("Summary lacks %q:\n%s", want, s)
		}
	}
}
