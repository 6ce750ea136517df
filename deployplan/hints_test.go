package deployplan

import (
	"github.com/hanzoai/deploy-web/envconfig"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCommandsAfterWrite: after an apply or a restore, the next commands
// plan into a report of their own, never over the report just written,
// and never repeat the restore.
func TestCommandsAfterWrite(t *testing.T) {
	env := &envconfig.Environment{Name: "dev", Namespace: "dev"}
	tests := []struct {
		written, planTo string
	}{
		{DefaultReportPath("dev"), "reports/dev/deploy-report.plan.json"},
		{"./" + DefaultReportPath("dev"), "./reports/dev/deploy-report.plan.json"},
		{"reports/dev/deploy-report.apply.json", DefaultReportPath("dev")},
		{"reports/dev/restore-report.json", DefaultReportPath("dev")},
	}
	for _, tt := range tests {
		cmds := commandsAfterWrite(env, Options{ConfigPath: "deploy.yaml"}, tt.written)
		all := strings.Join(cmds, "\n")
		if !strings.Contains(cmds[0], "--dry-run --write-report "+tt.planTo) {
			t.Errorf("commandsAfterWrite(%s)[0] = %q, want a plan written to %s", tt.written, cmds[0], tt.planTo)
		}
		for _, c := range cmds {
			if strings.HasSuffix(c, " "+tt.written) && !strings.HasPrefix(c, "deploy-web validate-report") {
				t.Errorf("commandsAfterWrite(%s) writes over it: %q", tt.written, c)
			}
		}
		if strings.Contains(all, "restore") || strings.Contains(all, "--apply") {
			t.Errorf("commandsAfterWrite(%s) = %q, want no restore and no apply", tt.written, all)
		}
	}
}

// TestCaptureHintsWithoutFiles: a first apply's capture holds no .json
// file; neither RESTORE.txt nor the rollback hint offers a kubectl apply -f
// of it (kubectl fails: "recognized file extensions are [.json .yaml
// .yml]") or a restore of nothing.
func TestCaptureHintsWithoutFiles(t *testing.T) {
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Cluster: envconfig.ClusterRef{Context: "dev"}}
	readme := captureReadme("reports/dev/pre-apply-x", captureInfo{Env: env, Time: time.Unix(0, 0)}, nil, []string{"token"}, []string{"Deployment/api"})
	if strings.Contains(readme, "apply --server-side") || strings.Contains(readme, "deploy-web restore") || !strings.Contains(readme, "Nothing to re-apply") {
		t.Errorf("captureReadme(no files) =\n%s\nwant no kubectl apply, no restore, and 'Nothing to re-apply'", readme)
	}
	withFile := captureReadme("reports/dev/pre-apply-x", captureInfo{Env: env, Time: time.Unix(0, 0)}, []string{"000-deployment-api.json"}, nil, nil)
	if !strings.Contains(withFile, "apply --server-side") || !strings.Contains(withFile, "deploy-web restore") {
		t.Errorf("captureReadme(a file) =\n%s\nwant the kubectl apply and the restore", withFile)
	}

	d := &DeployApply{Objects: []ObjectPlan{
		{Kind: "Deployment", Namespace: "dev", Name: "api", Action: ActionCreate},
		{Kind: "Secret", Namespace: "dev", Name: "token", Action: ActionUnchanged},
	}}
	for _, c := range rollbackHint(env, d, "reports/dev/pre-apply-x", Options{}).DeploymentRollbacks {
		if strings.Contains(c, "apply --server-side") || strings.Contains(c, "deploy-web restore") {
			t.Errorf("rollbackHint(created only) offers %q", c)
		}
	}
	d.Objects[0].Action = ActionUpdate
	if h := strings.Join(rollbackHint(env, d, "reports/dev/pre-apply-x", Options{}).DeploymentRollbacks, "\n"); !strings.Contains(h, "apply --server-side") {
		t.Errorf("rollbackHint(an update) = %q, want the kubectl apply of the capture", h)
	}
}

// TestNewCaptureDir: two applies within the same second get a capture
// folder each.
func TestNewCaptureDir(t *testing.T) {
	base := filepath.Join(t.TempDir(), "reports", "pre-apply-20261202T020041Z")
	var got []string
	for range 3 {
		dir, err := newCaptureDir(base)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, dir)
	}
	want := []string{base, base + "-2", base + "-3"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("newCaptureDir(%s) three times = %q, want %q", base, got, want)
	}
}
