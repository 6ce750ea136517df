package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
)

// The demo's two clusters (demo.HomeCluster, demo.SecondCluster).
const (
	homeCluster   = "devcluster"
	secondCluster = "eu-west"
)

// fleetState is what the fleet page (GET /, rendered fresh) shows per
// cluster: how many rows, how many marked stale, and the stale banners.
type fleetState struct {
	rows, stale map[string]int
	banners     []string
	elapsed     time.Duration // how long the page took
}

var (
	rowTag       = regexp.MustCompile(`<tr data-testid="app-row"[^>]*>`)
	rowCluster   = regexp.MustCompile(`data-cluster="([^"]*)"`)
	rowClass     = regexp.MustCompile(`class="([^"]*)"`)
	staleBanners = regexp.MustCompile(`data-testid="stale-banner" data-cluster="([^"]*)"`)
)

// fleet renders the fleet page through a session and counts its rows.
func fleet(t *testing.T, s *sessionHTTP, query string) fleetState {
	t.Helper()
	start := time.Now()
	resp, err := s.Get(strings.TrimSuffix(demoEnv.state.URL, "/") + "/" + query)
	if err != nil {
		t.Fatalf("GET /%s: %v", query, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /%s = %d", query, resp.StatusCode)
	}
	st := fleetState{rows: map[string]int{}, stale: map[string]int{}, elapsed: time.Since(start)}
	for _, tag := range rowTag.FindAllString(string(b), -1) {
		c := rowCluster.FindStringSubmatch(tag)
		if c == nil {
			t.Fatalf("row without data-cluster: %s", tag)
		}
		st.rows[c[1]]++
		if cl := rowClass.FindStringSubmatch(tag); cl != nil && strings.Contains(" "+cl[1]+" ", " row-stale ") {
			st.stale[c[1]]++
		}
	}
	for _, m := range staleBanners.FindAllStringSubmatch(string(b), -1) {
		st.banners = append(st.banners, m[1])
	}
	return st
}

// onlyStale reports whether exactly cluster's rows are stale (all of
// them) and the only banner is its own; "" means nothing is stale.
func (st fleetState) onlyStale(cluster string) bool {
	if st.rows[homeCluster] == 0 || st.rows[secondCluster] == 0 {
		return false
	}
	for c, n := range st.rows {
		want := 0
		if c == cluster {
			want = n
		}
		if st.stale[c] != want {
			return false
		}
	}
	if cluster == "" {
		return len(st.banners) == 0
	}
	return len(st.banners) == 1 && st.banners[0] == cluster
}

// waitFleet polls the fleet page until ok, for at most limit, and returns
// how long that took.
func waitFleet(t *testing.T, s *sessionHTTP, what string, limit time.Duration, ok func(fleetState) bool) (time.Duration, fleetState) {
	t.Helper()
	start := time.Now()
	for {
		st := fleet(t, s, "")
		if ok(st) {
			return time.Since(start), st
		}
		if time.Since(start) > limit {
			t.Fatalf("%s: not after %s; last page: rows %v, stale %v, banners %v", what, limit, st.rows, st.stale, st.banners)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestSecondClusterUnreachable stops the eu-west apiserver (SIGSTOP: the
// process stays, accepts connections and answers nothing, as a hung or
// cut-off apiserver) and checks that only eu-west's rows turn stale, with
// eu-west's banner alone, while devcluster's pages stay live and fast;
// then continues it (SIGCONT) and checks every row recovers. The times
// from the stop to the stale page and from the return to the live page are
// logged and checked against a generous bound (the design bound is 8 s:
// a probe every 5 s, with a 3 s timeout).
func TestSecondClusterUnreachable(t *testing.T) {
	s := sessionClient(t, "admin")
	waitFleet(t, s, "both clusters live", 2*time.Minute, func(st fleetState) bool { return st.onlyStale("") })

	// The browser keeps the fleet page open through the outage.
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	waitVisible(t, ctx, `[data-testid=apps-table]`, 30*time.Second)

	pid := demoEnv.cluster(t, secondCluster).Processes["kube-apiserver"]
	if pid == 0 {
		t.Fatalf("no kube-apiserver pid for %s in the state file", secondCluster)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("stop %s's apiserver (pid %d): %v", secondCluster, pid, err)
	}
	stopped := true
	resume := func() {
		if stopped {
			stopped = false
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Errorf("continue %s's apiserver: %v", secondCluster, err)
			}
		}
	}
	t.Cleanup(resume)

	const bound = 30 * time.Second // generous: the design bound is 8 s
	took, st := waitFleet(t, s, "only eu-west stale", 2*time.Minute, func(st fleetState) bool { return st.onlyStale(secondCluster) })
	t.Logf("eu-west's rows stale %.1fs after its apiserver stopped (rows %v, stale %v)", took.Seconds(), st.rows, st.stale)
	if took > bound {
		t.Errorf("eu-west's rows turned stale after %s, want within %s (10s in the issue)", took, bound)
	}

	// devcluster is live meanwhile: its pages answer at once and its
	// App pages do not show a banner.
	home := fleet(t, s, "?cluster="+homeCluster)
	t.Logf("fleet page of %s during the outage: %s", homeCluster, home.elapsed)
	if home.elapsed > 5*time.Second || home.stale[homeCluster] != 0 || home.rows[homeCluster] == 0 {
		t.Errorf("fleet of %s during the outage: %s, rows %v, stale %v; want it fast and live", homeCluster, home.elapsed, home.rows, home.stale)
	}
	start := time.Now()
	resp, err := s.Get(strings.TrimSuffix(demoEnv.state.URL, "/") + "/clusters/" + homeCluster + "/apps/payments/billing")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("app page of %s/payments/billing during the outage: %s", homeCluster, time.Since(start))
	if resp.StatusCode != http.StatusOK || strings.Contains(string(b), `data-testid="stale-banner"`) {
		t.Errorf("app page of %s during the outage = %d (stale banner: %v), want 200 without one", homeCluster, resp.StatusCode, strings.Contains(string(b), `data-testid="stale-banner"`))
	}
	// /readyz stays ready (devcluster is synced) and, being public, names
	// no cluster: the server's log says eu-west is unreachable.
	rresp, err := noRedirect().Get(strings.TrimSuffix(demoEnv.state.URL, "/") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := io.ReadAll(rresp.Body)
	rresp.Body.Close()
	if rresp.StatusCode != http.StatusOK || strings.TrimSpace(string(rb)) != `{"status":"ready"}` {
		t.Errorf("/readyz during the outage = %d %s, want 200 and the status only", rresp.StatusCode, rb)
	}
	logged := false
	if out, err := os.ReadFile(demoEnv.out); err == nil {
		for line := range strings.Lines(string(out)) {
			if strings.Contains(line, "readiness") && strings.Contains(line, "unreachable") && strings.Contains(line, secondCluster) {
				logged = true
			}
		}
	}
	if !logged {
		t.Errorf("the demo's log has no readiness line naming %s unreachable", secondCluster)
	}

	// The page left open shows the banner by itself at its next poll (3 s):
	// the poll's version carries each cluster's reachability. The time is
	// logged and held to the same generous bound.
	openStart := time.Now()
	waitVisibleOrErr(t, ctx, `[data-testid=stale-banner][data-cluster=`+secondCluster+`]`, 90*time.Second)
	if took := time.Since(openStart); took > bound {
		t.Errorf("the open fleet page showed eu-west's banner %s after the server did, want within %s", took, bound)
	}
	t.Logf("the open fleet page showed eu-west's banner %.1fs after the server did", time.Since(openStart).Seconds())
	screenshot(t, ctx, "eu-west-stale")

	resume()
	took, _ = waitFleet(t, s, "every row live again", 2*time.Minute, func(st fleetState) bool { return st.onlyStale("") })
	t.Logf("eu-west's rows live %.1fs after its apiserver returned", took.Seconds())
	if took > bound {
		t.Errorf("eu-west's rows recovered after %s, want within %s (10s in the issue)", took, bound)
	}
	openStart = time.Now()
	waitGone(t, ctx, `[data-testid=stale-banner]`, 90*time.Second)
	if took := time.Since(openStart); took > bound {
		t.Errorf("the open fleet page dropped the banner %s after the server did, want within %s", took, bound)
	}
	t.Logf("the open fleet page dropped the banner %.1fs after the server did", time.Since(openStart).Seconds())
	screenshot(t, ctx, "eu-west-back")
}

// TestRollbackStaysInItsCluster rolls eu-west's storefront/cart back
// through the API and checks that devcluster's storefront/cart (same
// namespace and name) is untouched: same generation, same image, no
// audit Event; the write and its audit Event are eu-west's. Without a
// cluster the name is ambiguous (409) and nothing is written.
func TestRollbackStaysInItsCluster(t *testing.T) {
	ctx := context.Background()
	homeApps := dynamic.NewForConfigOrDie(demoEnv.clusterConfig(t, homeCluster)).Resource(appcr.Resource).Namespace("storefront")
	euDyn := dynamic.NewForConfigOrDie(demoEnv.clusterConfig(t, secondCluster))
	euApps := euDyn.Resource(appcr.Resource).Namespace("storefront")
	get := func(apps dynamic.ResourceInterface) *unstructured.Unstructured {
		t.Helper()
		u, err := apps.Get(ctx, "cart", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	image := func(u *unstructured.Unstructured) string {
		s, _, _ := unstructured.NestedString(u.Object, "spec", "image")
		return s
	}
	homeBefore, euBefore := get(homeApps), get(euApps)
	if !strings.HasSuffix(image(euBefore), ":3.3.0") {
		t.Fatalf("eu-west cart declares %s, want 3.3.0 (the demo's)", image(euBefore))
	}
	homeEvents := kubernetes.NewForConfigOrDie(demoEnv.clusterConfig(t, homeCluster)).CoreV1().Events("storefront")
	evSel := metav1.ListOptions{FieldSelector: "involvedObject.name=cart,reason=RollbackRequested"}
	homeEvBefore, err := homeEvents.List(ctx, evSel)
	if err != nil {
		t.Fatal(err)
	}

	s := sessionClient(t, "admin")
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	csrf := s.csrf(t, base+"/clusters/"+secondCluster+"/apps/storefront/cart")
	post := func(path string) (int, string) {
		t.Helper()
		form := url.Values{"version": {"3.1.0"}, "csrf_token": {csrf}}
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := s.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}

	// No cluster: with several clusters a write must name one (400 naming
	// both), never a guess from the caches.
	code, body := post("/v1/deploy/cart/rollback?namespace=storefront")
	if code != http.StatusBadRequest || !strings.Contains(body, "?cluster=") || !strings.Contains(body, homeCluster) || !strings.Contains(body, secondCluster) {
		t.Errorf("rollback of cart without a cluster = %d %s, want 400 asking for ?cluster= and naming both clusters", code, body)
	}
	// Generation, not resourceVersion: the operator writes status while a
	// rollout the demo seeded finishes; a write of the App bumps it.
	if g := get(euApps).GetGeneration(); g != euBefore.GetGeneration() {
		t.Fatalf("the refused rollback changed eu-west's cart: generation %d -> %d", euBefore.GetGeneration(), g)
	}

	code, body = post("/v1/deploy/cart/rollback?cluster=" + secondCluster + "&namespace=storefront")
	if code != http.StatusOK {
		t.Fatalf("rollback of eu-west's cart = %d %s, want 200", code, body)
	}
	t.Logf("rollback: %s", body)
	var res struct{ App, Namespace, From, To string }
	if err := json.Unmarshal([]byte(body), &res); err != nil || res.From != "3.3.0" || res.To != "3.1.0" {
		t.Errorf("rollback answer = %s (%v), want from 3.3.0 to 3.1.0", body, err)
	}
	if img := image(get(euApps)); !strings.HasSuffix(img, ":3.1.0") {
		t.Errorf("eu-west's cart declares %s after the rollback, want 3.1.0", img)
	}
	// Let eu-west's operator and controllers roll it out, so anything that
	// could leak to the other cluster has had its chance.
	euCS := kubernetes.NewForConfigOrDie(demoEnv.clusterConfig(t, secondCluster))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		d, err := euCS.AppsV1().Deployments("storefront").Get(ctx, "cart", metav1.GetOptions{})
		if err == nil && len(d.Spec.Template.Spec.Containers) > 0 && strings.HasSuffix(d.Spec.Template.Spec.Containers[0].Image, ":3.1.0") &&
			d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == d.Status.Replicas && d.Status.AvailableReplicas == d.Status.Replicas {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("eu-west's cart did not roll out 3.1.0 within 2 minutes")
		}
		time.Sleep(300 * time.Millisecond)
	}

	homeAfter := get(homeApps)
	if homeAfter.GetGeneration() != homeBefore.GetGeneration() || image(homeAfter) != image(homeBefore) {
		t.Errorf("devcluster's cart changed: generation %d -> %d, image %s -> %s; want it untouched",
			homeBefore.GetGeneration(), homeAfter.GetGeneration(), image(homeBefore), image(homeAfter))
	}
	homeEvAfter, err := homeEvents.List(ctx, evSel)
	if err != nil {
		t.Fatal(err)
	}
	if len(homeEvAfter.Items) != len(homeEvBefore.Items) {
		t.Errorf("devcluster got %d RollbackRequested events for cart, want none new", len(homeEvAfter.Items)-len(homeEvBefore.Items))
	}
	euEvents, err := euCS.CoreV1().Events("storefront").List(ctx, evSel)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range euEvents.Items {
		if strings.Contains(e.Message, "3.3.0 to 3.1.0") && strings.Contains(e.Message, secondCluster) && strings.Contains(e.Message, "admin@demo.local") {
			found = true
		}
	}
	if !found {
		t.Errorf("no RollbackRequested event on eu-west's cart naming admin@demo.local, 3.3.0 to 3.1.0 and the cluster in %v", euEvents.Items)
	}
}

// TestSecondClusterInBrowser filters the fleet by cluster with the filter,
// opens eu-west's degraded pricing from its row, its tree, the panel of its
// Deployment and its logs, at 1440x900 and then at 390x844.
func TestSecondClusterInBrowser(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	waitVisible(t, ctx, `[data-testid=filter-cluster]`, 30*time.Second)
	screenshot(t, ctx, "fleet-all")

	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`[data-testid=filter-cluster]`), secondCluster),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=filter-cluster]').dispatchEvent(new Event('change', {bubbles: true}))`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "only eu-west rows", func() bool {
		cs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid=app-row]')).map(r => r.dataset.cluster)`))
		if err != nil || len(cs) < 5 {
			return false
		}
		for _, c := range cs {
			if c != secondCluster {
				return false
			}
		}
		return true
	})
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.Contains(loc, "cluster="+secondCluster) {
		t.Errorf("URL after filtering = %q, want it to carry cluster=%s", loc, secondCluster)
	}
	// pricing's 2.2.0 crash-loops: Degraded once its 25 s deadline passed.
	row := `[data-testid=app-row][data-cluster="` + secondCluster + `"][data-app=pricing]`
	waitText(t, ctx, row+` [data-testid=health]`, func(s string) bool { return strings.TrimSpace(s) == "Degraded" }, 90*time.Second)
	screenshot(t, ctx, "fleet-eu-west")

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(row+` .c-name a`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=tree]`))); err != nil {
		screenshot(t, ctx, "no-tree")
		t.Fatal(err)
	}
	loc, _ = chromedp.Run(ctx, chromedp.Location())
	if !strings.Contains(loc, "/clusters/"+secondCluster+"/apps/storefront/pricing") {
		t.Errorf("the row opened %s, want eu-west's pricing", loc)
	}
	if crumb := texts(t, ctx, `[data-testid=crumb-cluster]`); len(crumb) != 1 || crumb[0] != secondCluster {
		t.Errorf("breadcrumb cluster = %q, want %s", crumb, secondCluster)
	}
	if rs := texts(t, ctx, `[data-testid=tree-node][data-kind=ReplicaSet] .name`); len(rs) < 2 {
		t.Errorf("pricing's ReplicaSets drawn = %q, want 2.1.0's and 2.2.0's", rs)
	}
	screenshot(t, ctx, "pricing-tree")

	clickNode(t, ctx, "apps:Deployment:storefront:pricing")
	loc, _ = chromedp.Run(ctx, chromedp.Location())
	if !strings.Contains(loc, "/clusters/"+secondCluster+"/apps/storefront/pricing/resource/") {
		t.Errorf("panel URL = %s, want eu-west's pricing resource", loc)
	}
	clickTab(t, ctx, "manifest")
	waitVisible(t, ctx, `[data-testid=manifest] pre`, 10*time.Second)
	if m := texts(t, ctx, `[data-testid=manifest] pre`); len(m) == 0 || !strings.Contains(m[0], "storefront/pricing:2.2.0") {
		t.Errorf("pricing's Deployment manifest does not show image 2.2.0")
	}
	screenshot(t, ctx, "pricing-deployment")

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=logs-link]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=log-box]`))); err != nil {
		screenshot(t, ctx, "no-logs")
		t.Fatal(err)
	}
	loc, _ = chromedp.Run(ctx, chromedp.Location())
	if !strings.HasSuffix(loc, "/clusters/"+secondCluster+"/apps/storefront/pricing/logs") {
		t.Errorf("Logs link went to %s", loc)
	}
	// The newest pod crash-loops (its container is often waiting, and the
	// cluster then refuses its logs, as a kubelet does): pick one of
	// 2.1.0's, which keep serving, in the pod menu.
	pod := readyPod(t, secondCluster, "storefront", "pricing", ":2.1.0")
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`[data-testid=log-pod]`), pod),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=log-pod]').dispatchEvent(new Event('change', {bubbles: true}))`)); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, `[data-testid=log-stream-pod]`, func(s string) bool { return s == pod }, 30*time.Second)
	rows := waitRowsGrow(t, ctx, "pricing's log lines", 0)
	t.Logf("%d log lines of %s, first %q", len(rows), pod, rows[0])
	screenshot(t, ctx, "pricing-logs")

	// The same on a phone.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	navigate(t, ctx, "/?cluster="+secondCluster, `[data-testid=app-row]`)
	checkNoSideScroll(t, ctx, "eu-west fleet")
	screenshot(t, ctx, "phone-fleet-eu-west")
	navigate(t, ctx, "/clusters/"+secondCluster+"/apps/storefront/pricing", `[data-testid=tree]`)
	checkNoSideScroll(t, ctx, "eu-west pricing")
	screenshot(t, ctx, "phone-pricing")
	navigate(t, ctx, "/clusters/"+secondCluster+"/apps/storefront/pricing/resource/apps:Deployment:storefront:pricing", `[data-testid=resource-panel]`)
	screenshot(t, ctx, "phone-pricing-deployment")
	navigate(t, ctx, "/clusters/"+secondCluster+"/apps/storefront/pricing/logs?pod="+pod, `[data-testid=log-box]`)
	waitRowsGrow(t, ctx, "pricing's log lines on a phone", 0)
	checkNoSideScroll(t, ctx, "eu-west pricing logs")
	screenshot(t, ctx, "phone-pricing-logs")
}

// readyPod returns a ready pod of an App in a demo cluster whose image
// ends with imageSuffix.
func readyPod(t *testing.T, cluster, namespace, app, imageSuffix string) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(demoEnv.clusterConfig(t, cluster))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + app})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if len(p.Spec.Containers) == 0 || !strings.HasSuffix(p.Spec.Containers[0].Image, imageSuffix) {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				return p.Name
			}
		}
	}
	t.Fatalf("no ready pod of %s/%s with image *%s in %s", namespace, app, imageSuffix, cluster)
	return ""
}

// waitVisibleOrErr is waitVisible that reports instead of stopping the
// test, so what follows (the recovery) still runs.
func waitVisibleOrErr(t *testing.T, ctx context.Context, sel string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+jsString(sel)+`).length`))
		if err == nil && n > 0 {
			return
		}
		if time.Now().After(deadline) {
			screenshot(t, ctx, "not-shown")
			t.Errorf("%s not shown within %s", sel, timeout)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitGone waits until no element matches sel.
func waitGone(t *testing.T, ctx context.Context, sel string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+jsString(sel)+`).length`))
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			screenshot(t, ctx, "still-shown")
			t.Errorf("%s still shown after %s", sel, timeout)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
