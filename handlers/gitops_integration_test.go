package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/release"
)

// gitopsApp is an App of the manifests at image tag and replicas.
func gitopsApp(name, tag string, replicas int) string {
	return fmt.Sprintf("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: %s\nspec:\n  image: ghcr.io/acme/%s:%s\n  replicas: %d\n", name, name, tag, replicas)
}

// gitopsCatalog is a version-mode catalog publishing api and worker at
// the given tags.
func gitopsCatalog(apiTag, workerTag string) string {
	digest := func(s string) string { return "sha256:" + strings.Repeat(s, 64)[:64] }
	return fmt.Sprintf(`{"mode": "version", "commit": "0123456789abcdef0123456789abcdef01234567", "services": [
  {"id": "api", "image": "ghcr.io/acme/api", "tag": %q, "digest": %q, "published": true},
  {"id": "worker", "image": "ghcr.io/acme/worker", "tag": %q, "digest": %q, "published": true}]}`, apiTag, digest("a"), workerTag, digest("b"))
}

// releasesCatalog is a version-mode catalog (catalog.json of the
// repository) publishing each of api's releases and worker at workerTag.
func releasesCatalog(workerTag string, apiTags ...string) string {
	digest := func(s string) string { return "sha256:" + strings.Repeat(s, 64)[:64] }
	return fmt.Sprintf(`{"mode": "version", "services": [%s,
  {"id": "worker", "image": "ghcr.io/acme/worker", "tag": %q, "digest": %q, "published": true}]}
`, strings.Join(imageReleases("ghcr.io/acme/api", apiTags...), ",\n  "), workerTag, digest("b"))
}

// imageReleases are the version-mode catalog entries publishing image at
// each of tags, with ids NAME-TAG (NAME the image's last path element).
func imageReleases(image string, tags ...string) []string {
	digest := func(s string) string { return "sha256:" + strings.Repeat(s, 64)[:64] }
	var out []string
	for i, tag := range tags {
		out = append(out, fmt.Sprintf(`{"id": "%s-%s", "image": %q, "tag": %q, "digest": %q, "published": true}`, path.Base(image), tag, image, tag, digest(fmt.Sprint(i))))
	}
	return out
}

// TestGitOpsOnRealCluster: on the real control plane, with the
// environment's manifests served by the git binary's smart HTTP on
// loopback, a rollback through git commits one file to the repository and
// the live App follows after the apply; a push the server refuses (a
// pre-receive hook, a token without write access, a branch that moves
// twice) leaves the cluster untouched and says why; an environment without
// writeBack refuses; a sync applies one App only; in a commit-mode
// catalog, a rollback moves the catalog and every App back to the earlier
// commit, and the cluster follows.
func TestGitOpsOnRealCluster(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{realNS, "deploy-web"}, Operator: true})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	view, err := kubeview.New(p.Kube, p.Dyn, log, kubeview.Options{Namespaces: []string{realNS}, ProbeInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	rc := &realCluster{name: "in-cluster", p: p, view: view}

	srv := gitservertest.New(t, map[string]string{
		"base/kustomization.yaml":         "resources: [api.yaml, worker.yaml]\n",
		"base/api.yaml":                   gitopsApp("api", "1.0.0", 1),
		"base/worker.yaml":                gitopsApp("worker", "2.0.0", 1),
		"overlays/dev/kustomization.yaml": "resources: [../../base]\nnamespace: " + realNS + "\n",
		"catalog.json":                    releasesCatalog("2.0.0", "1.0.0"),
	}, gitservertest.Options{})
	dir := t.TempDir()
	// The catalog is in the repository: a release commit lists the new
	// release beside the earlier ones, so a rollback's commit need not
	// touch it.
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`environments:
  - name: dev
    cluster: {context: test}
    namespace: %s
    source: {repo: %q, ref: main, path: overlays/dev}
    catalog: catalog.json
    registry: {skip: true}
    writeBack: {mode: push}
`, realNS, srv.URL)), dir)
	if err != nil {
		t.Fatal(err)
	}
	env := &cfg.Environments[0]
	index := envsource.New(cfg, log, time.Hour)
	runner := envrun.New(cfg, log, envrun.Options{RestConfig: p.Cluster.Config, Events: p.Kube.CoreV1(), ReportsDir: t.TempDir(),
		Store: planstore.New(p.Kube.CoreV1(), "deploy-web", 50), Index: index, ApplyTimeout: 2 * time.Minute})
	rel := release.New(p.Dyn, p.Kube.CoreV1(), appcr.Resource, view.HistoryImages, log).InCluster("in-cluster")
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{{Name: "in-cluster", View: view, Release: rel}}
		o.Environments = runner
		o.Desired = index
	})

	waitRun := func(id string) envrun.Snapshot { t.Helper(); return waitEnvRun(t, runner, id) }
	deploy := func(trigger string) { t.Helper(); deployApplied(t, runner, "dev", trigger) }
	spec := func(name, field string) string {
		t.Helper()
		v, _, _ := unstructured.NestedFieldNoCopy(rc.app(t, name).Object, "spec", field)
		return fmt.Sprint(v)
	}

	// The environment deploys 1.0.0, then a commit moves api to 1.1.0:
	// api's history holds both, applied by deploy-web.
	deploy(envrun.TriggerSync)
	rc.waitSynced(t, "api", "1.0.0")
	srv.RemoteCommitFiles(map[string]string{"base/api.yaml": gitopsApp("api", "1.1.0", 1), "catalog.json": releasesCatalog("2.0.0", "1.0.0", "1.1.0")}, "api 1.1.0")
	deploy(envrun.TriggerAutoSync)
	rc.waitSynced(t, "api", "1.1.0")
	if err := index.Refresh(ctx, "dev"); err != nil {
		t.Fatal(err)
	}

	rollback := func(version string) *httptestResponse {
		t.Helper()
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader,
			body: `{"version": "` + version + `", "reason": "errors since 1.1.0"}`})
		return &httptestResponse{code: w.Code, body: w.Body.String()}
	}

	t.Run("refused pushes leave the cluster untouched", func(t *testing.T) {
		head := srv.Head("main")
		hook := filepath.Join(srv.Bare, "hooks", "pre-receive")
		if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'GL-HOOK-ERR: main is protected: open a merge request' >&2\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		w := rollback("1.0.0")
		if w.code != http.StatusConflict || !strings.Contains(w.body, "main is protected") {
			t.Errorf("rollback, pre-receive refusal: %d %s; want 409 with the hook's message", w.code, w.body)
		}
		if err := os.Remove(hook); err != nil {
			t.Fatal(err)
		}

		gitservertest.Run(t, srv.Bare, "config", "http.receivepack", "false")
		w = rollback("1.0.0")
		if w.code != http.StatusBadGateway || !strings.Contains(w.body, "refused deploy-web's credentials") {
			t.Errorf("rollback, push not allowed: %d %s; want 502 saying the credentials were refused", w.code, w.body)
		}
		gitservertest.Run(t, srv.Bare, "config", "http.receivepack", "true")

		// A catalog that no longer lists 1.0.0: the plan of the rollback
		// would be blocked, so nothing is committed.
		unlisted := srv.RemoteCommitFiles(map[string]string{"catalog.json": releasesCatalog("2.0.0", "1.1.0")}, "catalog: 1.0.0 withdrawn")
		w = rollback("1.0.0")
		if w.code != http.StatusUnprocessableEntity || !strings.Contains(w.body, "does not admit ghcr.io/acme/api:1.0.0") || srv.Head("main") != unlisted {
			t.Errorf("rollback to a release the catalog does not list: %d %s, head %s (was %s); want 422 saying why and no commit", w.code, w.body, srv.Head("main"), unlisted)
		}
		srv.RemoteCommitFiles(map[string]string{"catalog.json": releasesCatalog("2.0.0", "1.0.0", "1.1.0")}, "catalog: 1.0.0 listed again")

		n := 0
		srv.SetBeforeReceive(func() {
			n++
			srv.RemoteCommitFiles(map[string]string{"README.md": fmt.Sprintf("race %d\n", n)}, "a concurrent writer")
		})
		w = rollback("1.0.0")
		srv.SetBeforeReceive(nil)
		if w.code != http.StatusConflict || !strings.Contains(w.body, "moved during the push twice") {
			t.Errorf("rollback, branch moving twice: %d %s; want 409 saying so", w.code, w.body)
		}
		if got := gitservertest.Run(t, srv.Bare, "log", "--format=%s", head+"..main"); strings.Contains(got, "rollback") {
			t.Errorf("commits since the refusals: %q, want none of deploy-web's", got)
		}
		if got := spec("api", "image"); got != "ghcr.io/acme/api:1.1.0" {
			t.Errorf("api's image = %s after refused pushes, want 1.1.0 (untouched)", got)
		}
	})

	t.Run("rollback commits and applies", func(t *testing.T) {
		before := srv.Head("main")
		w := rollback("1.0.0")
		if w.code != http.StatusOK {
			t.Fatalf("rollback: %d %s", w.code, w.body)
		}
		var res rollbackResponse
		if err := json.Unmarshal([]byte(w.body), &res); err != nil {
			t.Fatal(err)
		}
		if res.Commit == nil || res.Commit.SHA != srv.Head("main") || res.Run == nil {
			t.Fatalf("rollback = %s, want the branch head %s and a run", w.body, srv.Head("main"))
		}
		if got := gitservertest.Run(t, srv.Bare, "rev-parse", res.Commit.SHA+"^"); got != before {
			t.Errorf("the commit's parent = %s, want the head before, %s", got, before)
		}
		if got := gitservertest.Run(t, srv.Bare, "show", "--name-only", "--format=", res.Commit.SHA); got != "overlays/dev/kustomization.yaml" {
			// A write stays in its environment: base/ is not dev's folder.
			t.Errorf("the commit changes %q, want overlays/dev/kustomization.yaml alone", got)
		}
		if got := gitservertest.Run(t, srv.Bare, "show", "main:overlays/dev/kustomization.yaml"); !strings.Contains(got, "value: ghcr.io/acme/api:1.0.0") {
			t.Errorf("overlays/dev/kustomization.yaml at main = %q, want its override of api at 1.0.0", got)
		}
		msg := gitservertest.Run(t, srv.Bare, "log", "-1", "--format=%B", res.Commit.SHA)
		for _, want := range []string{"rollback", "1.1.0", "1.0.0", testIdentity.Email, "errors since 1.1.0"} {
			if !strings.Contains(msg, want) {
				t.Errorf("commit message %q does not name %q", msg, want)
			}
		}
		s := waitRun(res.Run.ID)
		if s.Report == nil || s.Report.Status() != deployplan.StatusApplied || s.Report.DeployApply.Source.Commit != res.Commit.SHA {
			t.Fatalf("the rollback's run = %v, err %v, refusal %q; want %s applied", s.Report, s.Err, s.Refusal, res.Commit.SHA)
		}
		rc.waitSynced(t, "api", "1.0.0")
		entries, err := runner.Store().List(ctx, "dev")
		if err != nil || len(entries) == 0 || entries[0].Action != envrun.ActionApply || !strings.HasPrefix(entries[0].Summary, "rollback: ") {
			t.Errorf("newest history entry = %+v (%v), want the rollback's apply", entries[:min(1, len(entries))], err)
		}
	})

	t.Run("sync applies one App only", func(t *testing.T) {
		srv.RemoteCommitFiles(map[string]string{"base/api.yaml": gitopsApp("api", "1.0.0", 2), "base/worker.yaml": gitopsApp("worker", "2.0.0", 3)}, "scale both")
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/sync", admin: true})
		var res syncResponse
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || w.Code != http.StatusOK || res.Run == nil {
			t.Fatalf("sync = %d %s, want a run", w.Code, w.Body)
		}
		s := waitRun(res.Run.ID)
		if s.Report == nil || s.Report.Status() != deployplan.StatusApplied {
			t.Fatalf("the sync's run = %v, err %v, refusal %q", s.Report, s.Err, s.Refusal)
		}
		if got := spec("api", "replicas"); got != "2" {
			t.Errorf("api replicas = %s, want 2 (synced)", got)
		}
		if got := spec("worker", "replicas"); got != "1" {
			t.Errorf("worker replicas = %s, want 1: a sync of api applied worker's change", got)
		}
	})

	t.Run("no writeBack refuses", func(t *testing.T) {
		wb := env.WriteBack
		env.WriteBack = nil // no run is going: nothing reads it meanwhile
		defer func() { env.WriteBack = wb }()
		head := srv.Head("main")
		w := rollback("1.1.0")
		if w.code != http.StatusConflict || !strings.Contains(w.body, "environment dev renders "+realNS+"/api from git") {
			t.Errorf("rollback without writeBack: %d %s; want 409 saying why", w.code, w.body)
		}
		if srv.Head("main") != head || spec("api", "image") != "ghcr.io/acme/api:1.0.0" {
			t.Errorf("a refused rollback wrote: head %s (was %s), api %s", srv.Head("main"), head, spec("api", "image"))
		}
	})

	t.Run("a commit-mode catalog moves back with every App", func(t *testing.T) {
		// The repository's catalog goes to commit mode: release A, then C,
		// each applied; a rollback of api to A's tag is one commit moving
		// the catalog, api and worker back to A, and both follow.
		at := func(commit string) map[string]string {
			return map[string]string{
				"base/api.yaml":    gitopsApp("api", commit[:12], 1),
				"base/worker.yaml": gitopsApp("worker", commit[:12], 1),
				// The release drops the override the rollback above left.
				"overlays/dev/kustomization.yaml": "resources: [../../base]\nnamespace: " + realNS + "\n",
				"catalog.json":                    strings.ReplaceAll(commitModeCatalog(commit, "api", "worker"), "reg.example/acme/", "ghcr.io/acme/"),
			}
		}
		srv.RemoteCommitFiles(at(commitA), "release A")
		deploy(envrun.TriggerSync)
		rc.waitSynced(t, "api", commitA[:12]) // A is in api's history
		srv.RemoteCommitFiles(at(commitC), "release C")
		deploy(envrun.TriggerAutoSync)
		rc.waitSynced(t, "api", commitC[:12])
		rc.waitSynced(t, "worker", commitC[:12])
		if err := index.Refresh(ctx, "dev"); err != nil {
			t.Fatal(err)
		}
		before := srv.Head("main")
		w := rollback(commitA[:12])
		var res rollbackResponse
		if err := json.Unmarshal([]byte(w.body), &res); err != nil || w.code != http.StatusOK || res.Run == nil || len(res.Moved) != 2 {
			t.Fatalf("rollback to A = %d %s, want a commit moving api and worker, and its run", w.code, w.body)
		}
		if got := gitservertest.Run(t, srv.Bare, "show", "--name-only", "--format=", res.Commit.SHA); got != "catalog.json\noverlays/dev/kustomization.yaml" || gitservertest.Run(t, srv.Bare, "rev-parse", res.Commit.SHA+"^") != before {
			t.Errorf("the commit changes %q, want the catalog and dev's overlay (both Apps' overrides), on %s", got, before)
		}
		s := waitRun(res.Run.ID)
		if s.Report == nil || s.Report.Status() != deployplan.StatusApplied || s.Report.DeployApply.Source.Commit != res.Commit.SHA {
			t.Fatalf("the rollback's run = %v, err %v, refusal %q; want %s applied", s.Report, s.Err, s.Refusal, res.Commit.SHA)
		}
		rc.waitSynced(t, "api", commitA[:12])
		rc.waitSynced(t, "worker", commitA[:12])
	})
}

// httptestResponse is a recorded answer's status and body.
type httptestResponse struct {
	code int
	body string
}
