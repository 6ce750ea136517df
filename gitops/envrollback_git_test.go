package gitops

import (
	"errors"
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

// A chart environment (source.helm) keeps its versions in its own values
// file outside the chart folder: a rollback sets that file back with the
// chart folder, so a record whose apply differed only by dev's values
// file is reached by a commit of that file alone; staging, which renders
// the same chart, is untouched. When the shared chart changed since the
// record, setting it back would change staging: refused, naming it.
func TestEnvRollbackChartEnvironment(t *testing.T) {
	chart := map[string]string{
		"charts/api/Chart.yaml":        "apiVersion: v2\nname: api\nversion: 0.1.0\n",
		"charts/api/values.yaml":       "image: {repository: ghcr.io/acme/api, tag: 0.9.0}\n",
		"charts/api/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\ndata: {image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"}\n",
		"envs/dev/values.yaml":         "image: {tag: 1.0.0}\n",
		"envs/staging/values.yaml":     "image: {tag: 1.0.0}\n",
		"catalog.json":                 `{"mode": "version", "services": []}` + "\n",
	}
	s := gitservertest.New(t, chart, gitservertest.Options{})
	a := s.Head("main")
	s.RemoteCommitFiles(map[string]string{"envs/dev/values.yaml": "image: {tag: 1.1.0}\n"}, "dev: api 1.1.0")

	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`
environments:
  - name: dev
    cluster: {context: test}
    namespace: apps
    source: {repo: %[1]q, ref: main, path: charts/api, helm: {releaseName: api, valueFiles: [../../envs/dev/values.yaml]}, kubeVersion: v1.37.0}
    catalog: catalog.json
    writeBack: {mode: push}
  - name: staging
    cluster: {context: test}
    namespace: staging
    source: {repo: %[1]q, ref: main, path: charts/api, helm: {releaseName: api, valueFiles: [../../envs/staging/values.yaml]}, kubeVersion: v1.37.0}
    catalog: catalog.json
`, s.URL)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env, _ := cfg.Env("dev")
	const id = "0123456789abcdef-0000000001"
	var last envrun.DeployRequest
	svc := New(Options{Runs: memRunner{cfg: cfg, last: &last}, Records: memRecords{id: applied("dev", a)}, Audit: &memAppend{}})
	who := Person{Actor: audit.Actor{Email: "ada@example.com", Subject: "ada"}}
	before := s.Head("main")
	res, err := svc.EnvRollback(t.Context(), EnvRollbackRequest{Env: env, To: id, Reason: "1.1.0 broke it", Who: who})
	if err != nil {
		t.Fatalf("EnvRollback: %v", err)
	}
	if want := []string{"charts/api", "envs/dev/values.yaml", "catalog.json"}; fmt.Sprint(res.Paths) != fmt.Sprint(want) {
		t.Errorf("paths = %v, want %v", res.Paths, want)
	}
	head := s.Head("main")
	if res.NoChange || res.Commit == nil || res.Commit.SHA != head || gitservertest.Run(t, s.Bare, "rev-parse", "main^") != before {
		t.Fatalf("result %+v: want one new commit on %s", res, before)
	}
	if got := gitservertest.Run(t, s.Bare, "show", "--name-only", "--format=", head); got != "envs/dev/values.yaml" {
		t.Errorf("the rollback commit changes %q, want envs/dev/values.yaml alone", got)
	}
	if got := gitservertest.Run(t, s.Bare, "show", head+":envs/dev/values.yaml"); got != "image: {tag: 1.0.0}" {
		t.Errorf("dev's values file = %q, want record A's", got)
	}
	if last.Trigger != envrun.TriggerRollback || last.Commit != head {
		t.Errorf("run = %+v, want dev applied at %s", last, head)
	}

	// The shared chart changed since the record: refused, nothing pushed.
	s.RemoteCommitFiles(map[string]string{"charts/api/templates/cm.yaml": strings.Replace(chart["charts/api/templates/cm.yaml"], "data:", "data: {v: \"2\"}\n#", 1)}, "chart: v2")
	head = s.Head("main")
	_, err = svc.EnvRollback(t.Context(), EnvRollbackRequest{Env: env, To: id, Reason: "again", Who: who})
	var e *Error
	if !errors.As(err, &e) || e.Reason != "ReachesOtherEnvironments" || !strings.Contains(e.Public, "staging") {
		t.Errorf("EnvRollback across a chart change = %v, want ReachesOtherEnvironments naming staging", err)
	}
	if s.Head("main") != head {
		t.Errorf("refused, yet main moved to %s", s.Head("main"))
	}

	// The chart as it was, but the catalog both read changed since the
	// record: setting it back would change what staging may run.
	s.RemoteCommitFiles(map[string]string{"charts/api/templates/cm.yaml": chart["charts/api/templates/cm.yaml"],
		"catalog.json": `{"mode": "version", "services": [{"name": "api", "image": "ghcr.io/acme/api", "versions": ["1.0.0"]}]}` + "\n"}, "chart back; catalog: api 1.0.0")
	head = s.Head("main")
	_, err = svc.EnvRollback(t.Context(), EnvRollbackRequest{Env: env, To: id, Reason: "again", Who: who})
	if !errors.As(err, &e) || e.Reason != "ReachesOtherEnvironments" || !strings.Contains(e.Public, "staging (catalog catalog.json)") {
		t.Errorf("EnvRollback across a change of the shared catalog = %v, want ReachesOtherEnvironments naming staging's catalog", err)
	}
	if s.Head("main") != head {
		t.Errorf("refused, yet main moved to %s", s.Head("main"))
	}
}
