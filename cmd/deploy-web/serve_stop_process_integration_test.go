package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/devidp"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/internal/buildtags"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/internal/proc"
	"github.com/hanzoai/deploy-web/internal/serveproc"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/web/paths"
)

// stuckDeployment is a Deployment no node can run (its nodeSelector
// matches none): an apply writes it, then waits for its health until the
// apply's timeout, so a SIGTERM reaches the apply mid-run.
const stuckDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      nodeSelector: {no-such-node: "true"}
      containers: [{name: api, image: "registry.example/acme/api:` + stuckCommit + `"}]
`

// stuckCommit is the catalog's commit, and the tag of its one image.
const stuckCommit = "0123456789abcdef0123456789abcdef01234567"

// TestServeProcessSIGTERMMidApply: the built binary, `deploy-web serve` as
// its own process on the real control plane, signed in through the real
// IdP (Hydra). Environment person gets a console apply (plan, then apply
// of that plan, by the admin); environment engine is auto-synced by the
// process on its own. Both applies write, then wait for a Deployment that
// never becomes healthy; SIGTERM then. The process exits 0 within its
// grace and the stop's reserve; each environment has exactly one audit
// record, interrupted, naming the person (person) or auto-sync (engine);
// no deploy-web-apply Lease is held afterwards.
func TestServeProcessSIGTERMMidApply(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"person", "engine", "deploy-web"}})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	srv := gitservertest.New(t, map[string]string{
		"m/kustomization.yaml": "resources: [config.yaml, api.yaml]\n",
		"m/config.yaml":        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api-config}\ndata: {v: \"1\"}\n",
		"m/api.yaml":           stuckDeployment,
		"catalog.json": `{"commit": "` + stuckCommit + `", "services": [{"id": "api", "image": "registry.example/acme/api:` + stuckCommit +
			`", "digest": "sha256:` + strings.Repeat("ab", 32) + `", "published": true}]}`,
	}, gitservertest.Options{})

	dir := t.TempDir()
	bin := filepath.Join(dir, "deploy-web")
	if out, err := exec.Command("go", "build", "-tags", buildtags.Tags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addr, metricsAddr := freeAddr(t), freeAddr(t)
	base := "http://" + addr
	binDir, err := devcluster.ResolveBinDir("")
	if err != nil {
		t.Fatal(err)
	}
	idp, err := devidp.Start(ctx, devidp.Options{HydraBin: filepath.Join(binDir, "hydra-"+devidp.HydraVersion, "hydra"),
		RedirectURLs: []string{base + auth.CallbackPath}})
	if err != nil {
		t.Fatalf("devidp.Start: %v", err)
	}
	t.Cleanup(idp.Stop)
	keys, err := auth.GenerateSessionKeys()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"client-secret": []byte(idp.ClientSecret),
		"session-keys":  keys.Marshal(),
		"environments.yaml": []byte(`environments:
  - {name: person, cluster: {context: devcluster}, namespace: person, source: {repo: "` + srv.URL + `", ref: main, path: m}, catalog: catalog.json, registry: {skip: true}}
  - name: engine
    cluster: {context: devcluster}
    namespace: engine
    source: {repo: "` + srv.URL + `", ref: main, path: m}
    catalog: catalog.json
    registry: {skip: true}
    autoSync: {enabled: true, interval: 10s, grace: 1s}
`),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const grace = 5 * time.Second
	dash, err := serveproc.Start(serveproc.Spec{Name: "serve", Bin: bin, Dir: dir, Addr: addr,
		Kubeconfig: p.Cluster.Kubeconfig, Namespaces: "person,engine", Issuer: idp.IssuerURL, ClientID: idp.ClientID,
		SecretFile: filepath.Join(dir, "client-secret"), KeyFile: filepath.Join(dir, "session-keys"),
		MetricsAddr: metricsAddr, HistoryNamespace: "deploy-web",
		Extra: []string{"--environments", filepath.Join(dir, "environments.yaml"), "--shutdown-grace", grace.String(),
			"--reports-dir", filepath.Join(dir, "reports")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dash.Stop(5 * time.Second) })
	if err := proc.WaitHTTP(ctx, nil, base+"/readyz", dash, nil); err != nil {
		t.Fatalf("serve not ready: %v\n%s", err, dash.Tail(4000))
	}

	// The console apply: the admin plans person, then applies that plan.
	client, err := serveproc.SignIn(ctx, base, "admin", "admin")
	if err != nil {
		t.Fatal(err)
	}
	csrf, err := serveproc.CSRF(ctx, client, base+paths.Env("person"))
	if err != nil {
		t.Fatalf("%v\n%s", err, dash.Tail(4000))
	}
	do := func(method, path string, form url.Values) (int, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			form.Set("csrf_token", csrf)
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequestWithContext(ctx, method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b)
	}
	post := func(path string, form url.Values) string {
		t.Helper()
		code, body := do(http.MethodPost, path, form)
		if code != http.StatusOK {
			t.Fatalf("POST %s = %d, want 200\n%s", path, code, dash.Tail(4000))
		}
		return body
	}
	history := planstore.New(p.Kube.CoreV1(), "deploy-web", 20)
	// The plan's run ends (its panel says done: the environment is free
	// for the apply), then its entry is read from the history.
	m := regexp.MustCompile(`data-run="([^"]+)"`).FindStringSubmatch(post(paths.EnvPlan("person"), url.Values{}))
	if m == nil {
		t.Fatal("the plan's answer names no run")
	}
	waitFor(t, "person's plan run done", func() bool {
		code, body := do(http.MethodGet, paths.EnvRun("person", m[1]), nil)
		return code == http.StatusOK && strings.Contains(body, `data-testid="run-done"`)
	})
	var planID string
	waitFor(t, "person's plan in the history", func() bool {
		entries, err := history.List(ctx, "person")
		if err == nil && len(entries) > 0 && entries[0].Action == envrun.ActionPlan && entries[0].Conclusion != "" {
			planID = entries[0].ID
			return true
		}
		return false
	})
	post(paths.EnvApply("person"), url.Values{"plan": {planID}, "confirm": {"person"}})

	// Both applies wrote the Deployment and hold their environment's lock
	// while they wait for its health.
	for _, ns := range []string{"person", "engine"} {
		waitFor(t, ns+"'s apply waiting for health", func() bool {
			_, err := p.Kube.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{})
			return err == nil && applyLockHeld(ctx, t, p, ns)
		})
	}

	begin := time.Now()
	if err := syscall.Kill(dash.Pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	limit := grace + drainRecordReserve + 10*time.Second
	select {
	case <-dash.Done():
	case <-time.After(limit):
		t.Fatalf("serve had not exited %s after SIGTERM\n%s", limit, dash.Tail(4000))
	}
	took := time.Since(begin)
	if _, err := dash.Exited(); err != nil {
		t.Fatalf("serve exited with %v after SIGTERM, want 0\n%s", err, dash.Tail(4000))
	}
	t.Logf("serve exited 0, %s after SIGTERM", took.Round(time.Millisecond))

	meta, err := metadata.NewForConfig(platformtest.AdminConfig(p.Cluster.Config))
	if err != nil {
		t.Fatal(err)
	}
	store, err := audit.New(p.Kube.CoreV1(), meta, audit.Options{Namespace: "deploy-web"})
	if err != nil {
		t.Fatal(err)
	}
	admin := idp.Users[0]
	for _, tt := range []struct {
		env   string
		verb  audit.Verb
		actor audit.Actor
	}{
		// The person's apply.
		{"person", audit.VerbApply, audit.Actor{Email: admin.Email}},
		// Auto-sync's apply, and the loop's own record of that run.
		{"engine", audit.VerbApply, audit.EngineActor()},
		{"engine", audit.VerbAutoSync, audit.EngineActor()},
	} {
		pg, err := store.List(ctx, audit.Filter{Environment: tt.env, Verb: tt.verb})
		if err != nil {
			t.Fatal(err)
		}
		if len(pg.Records) != 1 {
			t.Errorf("%s: %d %s records, want exactly one: %+v", tt.env, len(pg.Records), tt.verb, pg.Records)
			continue
		}
		r := pg.Records[0]
		if r.Outcome != audit.OutcomeInterrupted && r.Outcome != audit.OutcomeSucceeded {
			t.Errorf("%s: %s record's outcome %s (%s), want interrupted or succeeded", tt.env, tt.verb, r.Outcome, r.Message)
		}
		if (tt.actor.Email != "" && r.Actor.Email != tt.actor.Email) || (tt.actor.Subject != "" && r.Actor.Subject != tt.actor.Subject) {
			t.Errorf("%s: %s record's actor %+v, want %+v", tt.env, tt.verb, r.Actor, tt.actor)
		}
	}
	for _, ns := range []string{"person", "engine"} {
		if applyLockHeld(ctx, t, p, ns) {
			t.Errorf("%s: the %s Lease is still held after the process exited", ns, deployplan.LockName)
		}
	}
	// Every record of the two environments is one of the above: nothing else.
	for _, env := range []string{"person", "engine"} {
		pg, err := store.List(ctx, audit.Filter{Environment: env})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"person": 1, "engine": 2}[env]; len(pg.Records) != want {
			t.Errorf("%s: %d audit records in all, want %d: %+v", env, len(pg.Records), want, pg.Records)
		}
	}
}

// applyLockHeld reports whether ns's apply lock (Lease deploy-web-apply)
// names a holder.
func applyLockHeld(ctx context.Context, t *testing.T, p *platformtest.Env, ns string) bool {
	t.Helper()
	l, err := p.Kube.CoordinationV1().Leases(ns).Get(ctx, deployplan.LockName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatalf("read %s/%s: %v", ns, deployplan.LockName, err)
	}
	return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != ""
}
