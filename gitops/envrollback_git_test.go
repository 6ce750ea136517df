package gitops

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
)

// Through a real git server (git http-backend) and writeback.Commit:
// commit A, then B (dev's ConfigMap changed, a file added and one
// removed; staging changed too); a rollback of dev to the record that
// applied A pushes one commit whose overlays/dev tree is A's, leaves
// staging at B, and starts the run that applies it.
func TestEnvRollbackThroughGitServer(t *testing.T) {
	s := gitservertest.New(t, map[string]string{
		"overlays/dev/kustomization.yaml":     "resources: [cm.yaml, old.yaml]\n",
		"overlays/dev/cm.yaml":                configMap("cm", "1"),
		"overlays/dev/old.yaml":               configMap("old", "1"),
		"overlays/staging/kustomization.yaml": "resources: [cm.yaml]\n",
		"overlays/staging/cm.yaml":            configMap("s", "1"),
		"catalogs/dev.json":                   `{"mode": "version", "services": []}` + "\n",
		"catalogs/staging.json":               `{"mode": "version", "services": []}` + "\n",
	}, gitservertest.Options{})
	a := s.Head("main")
	gitservertest.WriteTree(t, s.Work, map[string]string{
		"overlays/dev/kustomization.yaml": "resources: [cm.yaml, new.yaml]\n",
		"overlays/dev/cm.yaml":            configMap("cm", "2"),
		"overlays/dev/new.yaml":           configMap("new", "1"),
		"overlays/staging/cm.yaml":        configMap("s", "2"),
	})
	gitservertest.Run(t, s.Work, "pull", "-q", "--ff-only", "origin", "main")
	gitservertest.Run(t, s.Work, "rm", "-q", "overlays/dev/old.yaml")
	gitservertest.Run(t, s.Work, "add", "-A")
	gitservertest.Run(t, s.Work, "commit", "-q", "-m", "B")
	gitservertest.Run(t, s.Work, "push", "-q", "origin", "HEAD:main")
	b := s.Head("main")

	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`
environments:
  - name: dev
    cluster: {context: test}
    namespace: apps
    source: {repo: %[1]q, ref: main, path: overlays/dev}
    catalog: catalogs/dev.json
    writeBack: {mode: push}
  - name: staging
    cluster: {context: test}
    namespace: staging
    source: {repo: %[1]q, ref: main, path: overlays/staging}
    catalog: catalogs/staging.json
`, s.URL)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env, _ := cfg.Env("dev")
	const id = "0123456789abcdef-0000000001"
	var last envrun.DeployRequest
	svc := New(Options{Runs: memRunner{cfg: cfg, last: &last}, Records: memRecords{id: applied("dev", a)}, Audit: &memAppend{}})
	res, err := svc.EnvRollback(t.Context(), EnvRollbackRequest{Env: env, To: id, Reason: "B broke it",
		Who: Person{Actor: audit.Actor{Email: "ada@example.com", Subject: "ada", Name: "Ada"}}})
	if err != nil {
		t.Fatalf("EnvRollback: %v", err)
	}
	head := s.Head("main")
	if res.NoChange || res.Commit.SHA != head || gitservertest.Run(t, s.Bare, "rev-parse", "main^") != b {
		t.Fatalf("result %+v, main %s: want one new commit on B %s", res.Commit, head, b)
	}
	tree := func(rev, p string) string { return gitservertest.Run(t, s.Bare, "rev-parse", rev+":"+p) }
	if tree(head, "overlays/dev") != tree(a, "overlays/dev") {
		t.Errorf("overlays/dev at the rollback = %s, want A's tree %s", tree(head, "overlays/dev"), tree(a, "overlays/dev"))
	}
	if tree(head, "overlays/staging") != tree(b, "overlays/staging") {
		t.Errorf("overlays/staging changed: %s, want B's %s", tree(head, "overlays/staging"), tree(b, "overlays/staging"))
	}
	msg := gitservertest.Run(t, s.Bare, "log", "-1", "--format=%B", "main")
	for _, w := range []string{"rollback dev", id, a, "ada@example.com", "B broke it"} {
		if !strings.Contains(msg, w) {
			t.Errorf("commit message lacks %q:\n%s", w, msg)
		}
	}
	if last.Trigger != envrun.TriggerRollback || last.Commit != head || last.Only != "" || res.Run == nil {
		t.Errorf("run = %+v, want the whole of dev applied at %s", last, head)
	}
	gitservertest.Run(t, s.Bare, "fsck", "--no-progress")

	// Again: already A's.
	last = envrun.DeployRequest{}
	again, err := svc.EnvRollback(t.Context(), EnvRollbackRequest{Env: env, To: id, Who: Person{Actor: audit.Actor{Subject: "ada"}}})
	if err != nil || !again.NoChange || s.Head("main") != head || last.Trigger != "" {
		t.Errorf("EnvRollback again = %+v, %v; want noChange, no push, no run", again, err)
	}
}
