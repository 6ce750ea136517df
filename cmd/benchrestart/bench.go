package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/demo"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/internal/benchrun"
	"github.com/hanzoai/deploy-web/internal/proc"
	"github.com/hanzoai/deploy-web/internal/serveproc"
	"github.com/hanzoai/deploy-web/notify"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/web/paths"
)

// maxBody bounds a response read by the traffic.
const maxBody = 8 << 20

// waitBound bounds each wait on the cluster (a commit applied, the
// records of the applies).
const waitBound = 3 * time.Minute

// result is what a run measured.
type result struct {
	when                       time.Time
	requests, failed           int64
	failures                   []string // the first failures, for the report
	proxyErrors                int64
	applies, appliesRefused    int64 // answered 200; 409 or 422
	applyRecords               int
	pushed, pushedRecorded     int
	notifications, uniqueNotes int
	restarts                   []restart
}

// restart is one replica's restart: SIGTERM to exit, and start to ready.
type restart struct {
	replica     int
	stop, ready time.Duration
	exitErr     string
}

// replica is one serve process and how to start it again.
type replica struct {
	spec serveproc.Spec
	p    *proc.Process
}

func bench(ctx context.Context, cfg config, stdout io.Writer) (*result, error) {
	dir, cleanup, err := benchrun.WorkDir(cfg.dir, "benchrestart-")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	bin, err := filepath.Abs(cfg.deployWeb)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "benchrestart: starting the demo environment in %s\n", dir)
	env, err := demo.Start(ctx, demo.Options{BinDir: cfg.binDir, Dir: filepath.Join(dir, "demo"), CallbackURL: base + auth.CallbackPath, Progress: stdout})
	if err != nil {
		ln.Close()
		return nil, err
	}
	defer env.Stop()
	cs, err := kubernetes.NewForConfig(env.Cluster.Config)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(env.Cluster.Config)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(env.Cluster.Config)
	if err != nil {
		return nil, err
	}
	trail, err := audit.New(cs.CoreV1(), meta, audit.Options{Namespace: env.HistoryNamespace})
	if err != nil {
		return nil, err
	}
	history := planstore.New(cs.CoreV1(), env.HistoryNamespace, 20)

	keys, err := auth.GenerateSessionKeys()
	if err != nil {
		return nil, err
	}
	secretFile, keyFile := filepath.Join(dir, "client-secret"), filepath.Join(dir, "session-keys")
	if err := os.WriteFile(secretFile, []byte(env.IdP.ClientSecret), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyFile, keys.Marshal(), 0o600); err != nil {
		return nil, err
	}
	ports, err := proc.FreePorts(cfg.replicas)
	if err != nil {
		return nil, err
	}
	var reps []*replica
	var backends []string
	for i, port := range ports {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		backends = append(backends, "http://"+addr)
		reps = append(reps, &replica{spec: serveproc.Spec{Name: fmt.Sprintf("replica-%d", i), Bin: bin, Dir: dir, Addr: addr, Public: base,
			Issuer: env.IdP.IssuerURL, ClientID: env.IdP.ClientID, SecretFile: secretFile, KeyFile: keyFile, HistoryNamespace: env.HistoryNamespace,
			Extra: []string{"--clusters", env.ClustersFile, "--environments", env.EnvironmentsFile, "--roles", env.RolesFile,
				"--reports-dir", filepath.Join(dir, fmt.Sprintf("reports-%d", i)), "--shutdown-grace", cfg.grace.String()}}})
	}
	px, err := newProxy(backends)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: px, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	defer func() {
		for _, r := range reps {
			if r.p != nil {
				r.p.Stop(cfg.grace + 30*time.Second)
			}
		}
	}()
	for i, r := range reps {
		if r.p, err = serveproc.Start(r.spec); err != nil {
			return nil, err
		}
		if err := proc.WaitHTTP(ctx, nil, backends[i]+"/readyz", r.p, nil); err != nil {
			return nil, err
		}
		px.set(i, true)
	}
	fmt.Fprintf(stdout, "benchrestart: %d replicas ready behind %s\n", cfg.replicas, base)

	user, pass := "", ""
	for _, u := range env.Users {
		if slices.Contains(u.Groups, auth.DefaultAdminValue) {
			user, pass = u.Username, u.Password
			break
		}
	}
	client, err := serveproc.SignIn(ctx, base, user, pass)
	if err != nil {
		return nil, err
	}
	csrf, err := serveproc.CSRF(ctx, client, base+paths.Env(demo.DevEnvironment))
	if err != nil {
		return nil, err
	}
	if err := subscribe(ctx, client, base, csrf, env.Inbox.URL()); err != nil {
		return nil, err
	}

	res := &result{when: time.Now().UTC()}
	var rec recorder
	trafficCtx, stopTraffic := context.WithCancel(ctx)
	var wg sync.WaitGroup
	reads := []string{paths.Fleet(nil), paths.APIApplications(), paths.Env(demo.DevEnvironment), "/v1/deploy/environments"}
	for w := range cfg.workers {
		wg.Go(func() {
			for i := w; trafficCtx.Err() == nil; i++ {
				rec.do(trafficCtx, client, http.MethodGet, base+reads[i%len(reads)], nil, "")
				select {
				case <-trafficCtx.Done():
				case <-time.After(cfg.pause):
				}
			}
		})
	}
	// The console's applies of staging: plan, then apply that plan, again
	// and again (dev's plans are blocked while its App is changed by hand,
	// until self-heal puts it back).
	var applies, refused atomic.Int64
	begin := time.Now()
	wg.Go(func() {
		for trafficCtx.Err() == nil {
			switch status := planAndApply(trafficCtx, &rec, client, base, csrf, history); status {
			case http.StatusOK:
				applies.Add(1)
			case http.StatusConflict, http.StatusUnprocessableEntity:
				refused.Add(1) // recorded as refused
			}
			select {
			case <-trafficCtx.Done():
			case <-time.After(5 * time.Second):
			}
		}
	})

	var pushed []string
	for round := range cfg.rounds {
		for i, r := range reps {
			commit, err := pushCommit(ctx, env.ManifestRepo, len(pushed))
			if err != nil {
				stopTraffic()
				wg.Wait()
				return nil, err
			}
			pushed = append(pushed, commit)
			if err := driftByHand(ctx, dyn, len(pushed)); err != nil {
				fmt.Fprintf(stdout, "benchrestart: drift by hand: %v\n", err)
			}
			fmt.Fprintf(stdout, "benchrestart: round %d: restarting replica %d (pushed %s)\n", round+1, i, commit[:12])
			px.set(i, false)
			select {
			case <-ctx.Done():
			case <-time.After(cfg.preStop):
			}
			t0 := time.Now()
			r.p.Stop(cfg.grace + 30*time.Second)
			rs := restart{replica: i, stop: time.Since(t0)}
			if _, werr := r.p.Exited(); werr != nil {
				rs.exitErr = werr.Error()
			}
			t1 := time.Now()
			if r.p, err = serveproc.Start(r.spec); err != nil {
				stopTraffic()
				wg.Wait()
				return nil, err
			}
			if err := proc.WaitHTTP(ctx, nil, backends[i]+"/readyz", r.p, nil); err != nil {
				stopTraffic()
				wg.Wait()
				return nil, err
			}
			rs.ready = time.Since(t1)
			px.set(i, true)
			res.restarts = append(res.restarts, rs)
			fmt.Fprintf(stdout, "benchrestart: replica %d: exited in %s (%s), ready in %s\n", i, rs.stop.Round(time.Millisecond), orOK(rs.exitErr), rs.ready.Round(time.Millisecond))
			// The next restart once auto-sync recorded the commit pushed
			// before this one: the loop went on across the handover.
			if err := waitRecorded(ctx, trail, commit); err != nil {
				fmt.Fprintf(stdout, "benchrestart: %v\n", err)
			}
		}
	}
	stopTraffic()
	wg.Wait()

	// Every acknowledged apply has its record once its run ended: wait
	// for them (a run still going at a restart is finished or recorded
	// as interrupted by the replica that stopped).
	deadline := time.Now().Add(waitBound)
	for {
		n, err := countApplies(ctx, trail, begin)
		if err == nil {
			res.applyRecords = n
		}
		if err == nil && int64(n) >= applies.Load()+refused.Load() || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	for _, c := range pushed {
		if recorded(ctx, trail, c) {
			res.pushedRecorded++
		}
	}
	res.pushed = len(pushed)
	res.requests, res.failed, res.failures = rec.totals()
	res.proxyErrors = px.errors.Load()
	res.applies, res.appliesRefused = applies.Load(), refused.Load()
	ids := map[string]bool{}
	for _, m := range env.Inbox.Messages() {
		res.notifications++
		ids[m.Delivery] = true
	}
	res.uniqueNotes = len(ids)
	return res, nil
}

func orOK(s string) string {
	if s == "" {
		return "exit 0"
	}
	return s
}

// recorder counts the traffic's requests and the failed ones: a
// transport error or a 5xx.
type recorder struct {
	mu       sync.Mutex
	total    int64
	failed   int64
	failures []string
}

func (r *recorder) do(ctx context.Context, client *http.Client, method, u string, body io.Reader, csrf string) (int, []byte) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return 0, nil
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	resp, err := client.Do(req)
	var b []byte
	status := 0
	if err == nil {
		status = resp.StatusCode
		b, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
	}
	if ctx.Err() != nil { // the traffic stopped: not a failure
		return status, b
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total++
	if err != nil || status >= 500 {
		r.failed++
		if len(r.failures) < 10 {
			what := strconv.Itoa(status)
			if err != nil {
				what = err.Error()
			}
			r.failures = append(r.failures, fmt.Sprintf("%s %s %s: %s", time.Now().UTC().Format("15:04:05.000"), method, strings.TrimPrefix(u, "http://"), what))
		}
	}
	return status, b
}

func (r *recorder) totals() (int64, int64, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total, r.failed, slices.Clone(r.failures)
}

// subscribe subscribes the demo's inbox to every App trigger.
func subscribe(ctx context.Context, client *http.Client, base, csrf, inbox string) error {
	body, _ := json.Marshal(map[string]any{
		"id": "bench-restart",
		"triggers": []map[string]string{{"type": string(notify.TriggerDrift)}, {"type": string(notify.TriggerDegraded)},
			{"type": string(notify.TriggerRecovered)}, {"type": string(notify.TriggerApplyFailed)}, {"type": string(notify.TriggerAutoSyncFailed)}},
		"provider": string(envconfig.ProviderWebhook), "url": inbox + "/hook",
		"secretRef": map[string]string{"name": demo.NotifySecret, "key": demo.NotifyKey},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/deploy/notifications/subscriptions", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", csrf)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("subscribe the inbox: %d %s", resp.StatusCode, b)
	}
	return nil
}

// planAndApply plans staging from the console, then applies that plan, and
// returns the apply's status: 200 when it was acknowledged (its run
// started), 409 or 422 when it was refused (a run of dev going, the plan
// blocked: recorded as refused); 0 when no apply was asked (the plan was
// not taken, or never reached the history).
func planAndApply(ctx context.Context, rec *recorder, client *http.Client, base, csrf string, history *planstore.Store) int {
	env := demo.StagingEnvironment
	since := time.Now().Add(-time.Second)
	form := url.Values{"csrf_token": {csrf}}
	status, _ := rec.do(ctx, client, http.MethodPost, base+paths.EnvPlan(env), strings.NewReader(form.Encode()), "")
	if status != http.StatusOK {
		return 0
	}
	var planID string
	deadline := time.Now().Add(waitBound)
	for planID == "" {
		entries, err := history.List(ctx, env)
		if err == nil {
			for _, e := range entries {
				if e.Action == envrun.ActionPlan && e.Time.After(since) && e.Conclusion != "" {
					planID = e.ID
					break
				}
			}
		}
		if planID != "" {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0
		}
		time.Sleep(500 * time.Millisecond)
	}
	form.Set("plan", planID)
	form.Set("confirm", env)
	status, _ = rec.do(ctx, client, http.MethodPost, base+paths.EnvApply(env), strings.NewReader(form.Encode()), "")
	return status
}

// pushCommit commits a change of the worker's replicas (2 and 3 in turn)
// to the manifest repository and pushes it; auto-sync applies it to dev
// and staging. It returns the commit.
func pushCommit(ctx context.Context, clone string, n int) (string, error) {
	from, to := "replicas: 2", "replicas: 3"
	if n%2 == 1 {
		from, to = to, from
	}
	f := filepath.Join(clone, "base", "worker.yaml")
	b, err := os.ReadFile(f)
	if err != nil {
		return "", err
	}
	if !bytes.Contains(b, []byte(from)) {
		return "", fmt.Errorf("%s has no %q", f, from)
	}
	if err := os.WriteFile(f, bytes.Replace(b, []byte(from), []byte(to), 1), 0o644); err != nil {
		return "", err
	}
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", clone, "-c", "user.name=benchrestart", "-c", "user.email=bench@demo.local"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := git("commit", "-qam", "worker: "+to); err != nil {
		return "", err
	}
	if _, err := git("push", "-q"); err != nil {
		return "", err
	}
	return git("rev-parse", "HEAD")
}

// appsGVR is the demo's App resource.
var appsGVR = schema.GroupVersionResource{Group: "hanzo.ai", Version: "v1", Resource: "apps"}

// driftByHand changes dev's api App by hand (another field manager),
// as `kubectl scale` would: drift, announced, then put back by self-heal.
func driftByHand(ctx context.Context, dyn dynamic.Interface, n int) error {
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, 5+n%2)
	_, err := dyn.Resource(appsGVR).Namespace(demo.StagingNamespace).Patch(ctx, "api", types.MergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: "kubectl-scale"})
	return err
}

// waitRecorded waits until auto-sync recorded an apply of commit.
func waitRecorded(ctx context.Context, trail *audit.Store, commit string) error {
	deadline := time.Now().Add(waitBound)
	for !recorded(ctx, trail, commit) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("auto-sync recorded no run of %s within %s", commit[:12], waitBound)
		}
		time.Sleep(time.Second)
	}
	return nil
}

// recorded reports whether dev has a successful apply of commit by
// auto-sync (its own run or a self-heal's, which applies the head too).
func recorded(ctx context.Context, trail *audit.Store, commit string) bool {
	pg, err := trail.List(ctx, audit.Filter{Environment: demo.DevEnvironment, Verb: audit.VerbApply, Outcome: audit.OutcomeSucceeded, Limit: audit.MaxLimit})
	if err != nil {
		return false
	}
	return slices.ContainsFunc(pg.Records, func(r audit.Record) bool { return r.Commit == commit && r.Actor.Subject == audit.EngineSubject })
}

// countApplies counts staging's apply records by a person since begin, of
// any outcome (an apply refused at its start is recorded too).
func countApplies(ctx context.Context, trail *audit.Store, begin time.Time) (int, error) {
	pg, err := trail.List(ctx, audit.Filter{Environment: demo.StagingEnvironment, Verb: audit.VerbApply, Since: begin, Limit: audit.MaxLimit})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range pg.Records {
		if r.Actor.Subject != audit.EngineSubject {
			n++
		}
	}
	return n, nil
}
