package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
)

// TestCLIHonoursFreezesOnRealCluster: on a real control plane, with the
// freezes in deploy-web's namespace of the environment's cluster: without
// the ConfigMap nothing is frozen; a freeze of the environment refuses
// apply, apply --prune and restore (exit 2, the freeze's id, reason and
// opening time on stderr, a refused record, nothing written in the
// namespace) while plans and a restore's dry-run still work;
// --break-glass applies and is recorded (breakGlass and the freeze it
// overrode); another --audit-namespace does not move where the freezes
// are read; garbled freezes refuse until fixed.
func TestCLIHonoursFreezesOnRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: needs the local control plane")
	}
	s, records := newAuditedSample(t)
	ctx := context.Background()
	// sample-dev alone: sample-prod shares its namespace, which refuses
	// --prune before the freezes are asked.
	cfg, err := os.ReadFile(s.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	only, _, found := strings.Cut(string(cfg), "  - name: sample-prod\n")
	if !found {
		t.Fatalf("config %s has no sample-prod to leave out", s.cfgPath)
	}
	if err := os.WriteFile(s.cfgPath, []byte(only), 0o644); err != nil {
		t.Fatal(err)
	}
	latest := func() audit.Record {
		t.Helper()
		p, err := records.List(ctx, audit.Filter{Environment: "sample-dev"})
		if err != nil || len(p.Records) == 0 {
			t.Fatalf("audit records of sample-dev: %d, %v; want at least one", len(p.Records), err)
		}
		return p.Records[0]
	}
	base := []string{"--config", s.cfgPath, "--env", "sample-dev"}
	confirmed := []string{"--confirm-env=sample-dev", "--confirmed-non-production", "--timeout", "2m"}
	step := 0
	cli := func(args ...string) (int, string) {
		t.Helper()
		step++
		args = append(append(args, base...), "--write-report", filepath.Join(s.reports, fmt.Sprintf("step-%d.json", step)))
		code, _, stderr := s.cli(args...)
		return code, stderr
	}

	// No ConfigMap: nothing is frozen, the apply goes ahead and leaves a
	// capture to restore.
	if _, err := s.kube.CoreV1().ConfigMaps("deploy-web").Get(ctx, freeze.ConfigMapName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ConfigMap %s before any freeze: %v, want none", freeze.ConfigMapName, err)
	}
	if code, _ := cli(append([]string{"apply", "--apply"}, confirmed...)...); code != 0 {
		t.Fatalf("apply without freezes = %d, want 0", code)
	}
	capture := s.readReport(filepath.Join(s.reports, fmt.Sprintf("step-%d.json", step))).DeployApply.RollbackHint.PreApplyCapture
	if capture == "" {
		t.Fatal("the apply left no capture to restore")
	}

	store := freeze.NewStore(s.kube.CoreV1(), "deploy-web", auditKeys(t, s.kube.CoreV1(), "deploy-web"))
	now := time.Now()
	fz, err := store.Add(ctx, freeze.Freeze{Scope: scope.Scope{Environments: []string{"sample-*"}}, Start: now.Add(-time.Minute), End: now.Add(2 * time.Hour),
		Reason: "release week", Ticket: "https://tickets.example.com/CHG-1001", Author: freeze.Author{Email: "alice@example.com", Subject: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	opens := fz.End.UTC().Format("2006-01-02 15:04 UTC")

	for _, tt := range []struct {
		name string
		args []string
		verb audit.Verb
	}{
		{"apply", append([]string{"apply", "--apply"}, confirmed...), audit.VerbApply},
		{"apply --prune", append([]string{"apply", "--apply", "--prune"}, confirmed...), audit.VerbApply},
		{"restore", append([]string{"restore", "--capture", capture}, confirmed...), audit.VerbRestore},
	} {
		before := s.snapshot()
		code, stderr := cli(tt.args...)
		if code != exitRefused {
			t.Errorf("%s in a freeze = %d, want %d", tt.name, code, exitRefused)
		}
		for _, want := range []string{"frozen by freeze " + fz.ID, "frozen until " + opens, "by alice@example.com (sub alice): release week (https://tickets.example.com/CHG-1001)", "nothing was touched", "--break-glass"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s in a freeze: stderr lacks %q", tt.name, want)
			}
		}
		if after := s.snapshot(); !maps.Equal(before, after) {
			t.Errorf("%s in a freeze wrote to namespace %s:\nbefore %v\nafter  %v", tt.name, ns, before, after)
		}
		if rec := latest(); rec.Verb != tt.verb || rec.Outcome != audit.OutcomeRefused || !strings.Contains(rec.Message, "release week") {
			t.Errorf("%s in a freeze: latest record %s %s %q, want %s refused with the freeze's reason", tt.name, rec.Verb, rec.Outcome, rec.Message, tt.verb)
		}
	}

	// The freezes are read from the environment's consoleNamespace,
	// whatever --audit-namespace says: naming another one (where no
	// freeze is) is refused, naming both, nothing written; with
	// --break-glass the records go there, but the freeze is still the one
	// of deploy-web's namespace, overridden and said so.
	before := s.snapshot()
	code, stderr := cli(append([]string{"apply", "--apply", "--audit-namespace=elsewhere"}, confirmed...)...)
	if code != exitRefused || !strings.Contains(stderr, `--audit-namespace "elsewhere" is not deploy-web's namespace in environment sample-dev's cluster, "deploy-web"`) {
		t.Errorf("apply --audit-namespace=elsewhere = %d (%s), want %d naming both namespaces", code, stderr, exitRefused)
	}
	if after := s.snapshot(); !maps.Equal(before, after) {
		t.Errorf("apply --audit-namespace=elsewhere wrote to namespace %s:\nbefore %v\nafter  %v", ns, before, after)
	}
	code, stderr = cli(append([]string{"apply", "--apply", "--audit-namespace=elsewhere", "--break-glass", "records elsewhere"}, confirmed...)...)
	if code != 0 || !strings.Contains(stderr, "overrode freeze "+fz.ID) || !strings.Contains(stderr, `the audit records go to namespace "elsewhere", not "deploy-web"`) {
		t.Errorf("apply --audit-namespace=elsewhere --break-glass = %d (%s), want 0, freeze %s of deploy-web overridden, the records' namespace said", code, stderr, fz.ID)
	}

	// Plans write nothing and are never refused.
	if code, stderr := cli("apply", "--dry-run"); code != 0 || strings.Contains(stderr, "frozen") {
		t.Errorf("plan in a freeze = %d (%s), want 0, not refused", code, stderr)
	}
	if code, stderr := cli("restore", "--dry-run", "--capture", capture); code != 0 || strings.Contains(stderr, "frozen") {
		t.Errorf("restore --dry-run in a freeze = %d (%s), want 0, not refused", code, stderr)
	}

	// Break-glass: the kubeconfig's user may update the freezes (the
	// control plane's admin), so the apply goes through, recorded.
	code, stderr = cli(append([]string{"apply", "--apply", "--break-glass", "CVE-2026-1234 hotfix"}, confirmed...)...)
	if code != 0 || !strings.Contains(stderr, "overrode freeze "+fz.ID) {
		t.Errorf("apply --break-glass in a freeze = %d, want 0 and the freeze it overrode on stderr", code)
	}
	if rec := latest(); rec.Verb != audit.VerbApply || rec.Outcome != audit.OutcomeSucceeded || rec.BreakGlass != "CVE-2026-1234 hotfix" ||
		!strings.Contains(rec.Message, "overrode freeze "+fz.ID) || !rec.Chain.OK {
		t.Errorf("apply --break-glass: latest record %s %s breakGlass %q %q, want a succeeded apply with breakGlass %q naming freeze %s",
			rec.Verb, rec.Outcome, rec.BreakGlass, rec.Message, "CVE-2026-1234 hotfix", fz.ID)
	}

	// Who may break the glass is the cluster's answer (SelfSubjectAccessReview):
	// alice may read the freezes (and the key that proves them signed)
	// but not update them, so hers is refused; bob may not even read
	// them, so his apply is refused, naming the right he lacks. Nothing is
	// written either way.
	if _, err := s.kube.RbacV1().Roles("deploy-web").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "freezes-reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{freeze.ConfigMapName}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{audit.KeySecretName}, Verbs: []string{"get"}},
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.kube.RbacV1().RoleBindings("deploy-web").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-reads-freezes"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "freezes-reader"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "alice"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ user, breakGlass, want string }{
		{"alice", "CVE-2026-1234 hotfix", "--break-glass refused: only a person the cluster lets update ConfigMap deploy-web/" + freeze.ConfigMapName},
		{"bob", "", "needs get on configmaps in namespace deploy-web"},
	} {
		args := append([]string{"apply", "--apply", "--config", impersonating(t, s.cfgPath, tt.user), "--env", "sample-dev"}, confirmed...)
		if tt.breakGlass != "" {
			args = append(args, "--break-glass", tt.breakGlass)
		}
		before := s.snapshot()
		code, _, stderr := s.cli(args...)
		if code != exitRefused || !strings.Contains(stderr, tt.want) {
			t.Errorf("apply as %s (break-glass %q) = %d, want %d saying %q", tt.user, tt.breakGlass, code, exitRefused, tt.want)
		}
		if after := s.snapshot(); !maps.Equal(before, after) {
			t.Errorf("apply as %s wrote to namespace %s:\nbefore %v\nafter  %v", tt.user, ns, before, after)
		}
	}

	// Freezes edited by hand (kubectl edit): refused as changed outside
	// deploy-web until an operator mends them, saying how.
	cm, err := s.kube.CoreV1().ConfigMaps("deploy-web").Get(ctx, freeze.ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[freeze.DataKey] = `{"freezes": [`
	if _, err := s.kube.CoreV1().ConfigMaps("deploy-web").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	before = s.snapshot()
	code, stderr = cli(append([]string{"apply", "--apply", "--break-glass", "CVE-2026-1234 hotfix"}, confirmed...)...)
	if code != exitRefused || !strings.Contains(stderr, "changed outside deploy-web") || !strings.Contains(stderr, "kubectl -n deploy-web delete configmap "+freeze.ConfigMapName) {
		t.Errorf("apply with freezes edited by hand = %d, want %d saying they were changed outside deploy-web and how to mend them", code, exitRefused)
	}
	if after := s.snapshot(); !maps.Equal(before, after) {
		t.Errorf("apply with garbled freezes wrote to namespace %s:\nbefore %v\nafter  %v", ns, before, after)
	}
}

// impersonating writes a copy of the environments config at cfgPath
// whose kubeconfig acts as user (the kubeconfig's "as"), and returns its
// path.
func impersonating(t *testing.T, cfgPath, user string) string {
	t.Helper()
	cfg, err := envconfig.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := cfg.Environments[0].Cluster.Kubeconfig
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range kc.AuthInfos {
		ai.Impersonate = user
	}
	dir := t.TempDir()
	as := filepath.Join(dir, "kubeconfig-"+user)
	if err := clientcmd.WriteToFile(*kc, as); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "deploy.yaml")
	if err := os.WriteFile(out, []byte(strings.ReplaceAll(string(data), strconv.Quote(kubeconfig), strconv.Quote(as))), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
