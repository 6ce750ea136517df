package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hanzoai/deploy-web/internal/buildtags"
)

var chromiumPath = flag.String("chromium", "/usr/bin/chromium", "path of the Chromium binary")

// demoState mirrors what `deploy-web demo --state-file` writes.
type demoState struct {
	URL        string   `json:"url"`
	Kubeconfig string   `json:"kubeconfig"`
	Kubectl    string   `json:"kubectl"`
	Issuer     string   `json:"issuer"`
	Namespaces []string `json:"namespaces"`
	Users      []struct {
		Username string   `json:"username"`
		Password string   `json:"password"`
		Groups   []string `json:"groups"`
	} `json:"users"`
	Pid int `json:"pid"`
	// Clusters are the demo's clusters, the first (devcluster) first.
	Clusters []demoCluster `json:"clusters"`
	// NotifyInbox is the demo's webhook receiver.
	NotifyInbox string `json:"notifyInbox"`
	// Prometheus is the demo's Prometheus.
	Prometheus string `json:"prometheus"`
}

// demoCluster is one cluster of the demo.
type demoCluster struct {
	Name       string         `json:"name"`
	Kubeconfig string         `json:"kubeconfig"`
	Namespaces []string       `json:"namespaces"`
	Dir        string         `json:"dir"`
	Processes  map[string]int `json:"processes"`
}

// env is the running demo shared by the package's tests.
type env struct {
	state     demoState
	artifacts string
	cmd       *exec.Cmd
	out       string
	tmp       string
	exited    chan error
}

// The demo is started once for the package by TestMain; tests reach it here.
// It is set before any test runs and never changed after.
var demoEnv *env

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped in -short mode (starts the demo and Chromium)")
		os.Exit(0)
	}
	e, err := startDemo()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	demoEnv = e
	code := m.Run()
	if err := e.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		code = 1
	}
	os.Exit(code)
}

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.Dir(wd), nil
}

// startDemo builds the binary and runs `deploy-web demo` in its own process
// group, waiting for its state file.
func startDemo() (*env, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "deploy-web-e2e-")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(tmp, "deploy-web")
	build := exec.Command("go", "build", "-tags", buildtags.Tags, "-o", bin, "./cmd/deploy-web")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	stateFile := filepath.Join(tmp, "state.json")
	outPath := filepath.Join(tmp, "demo.out")
	out, err := os.Create(outPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "demo", "--addr", addr, "--state-file", stateFile, "--dir", filepath.Join(tmp, "demo"), "--bin-dir", filepath.Join(root, "bin"))
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	e := &env{cmd: cmd, out: outPath, tmp: tmp, exited: exited, artifacts: filepath.Join(root, "artifacts", "e2e")}
	if err := os.MkdirAll(e.artifacts, 0o755); err != nil {
		return nil, err
	}
	deadline := time.After(4 * time.Minute)
	for {
		if b, err := os.ReadFile(stateFile); err == nil {
			if err := json.Unmarshal(b, &e.state); err != nil {
				return nil, fmt.Errorf("state file: %w", err)
			}
			break
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(outPath)
			return nil, fmt.Errorf("demo exited (%v) before it was up:\n%s", err, b)
		case <-deadline:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			b, _ := os.ReadFile(outPath)
			return nil, fmt.Errorf("demo not up after 4 minutes:\n%s", b)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return e, nil
}

// stop interrupts the demo as Ctrl-C would, waits for it to exit cleanly,
// and checks that none of the processes it started is left.
func (e *env) stop() error {
	defer os.RemoveAll(e.tmp)
	_ = e.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-e.exited:
		if err != nil {
			b, _ := os.ReadFile(e.out)
			return fmt.Errorf("demo exited with %v after Ctrl-C:\n%s", err, tail(b, 3000))
		}
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
		return fmt.Errorf("demo did not exit within 60s of Ctrl-C")
	}
	if left := processesUnder(e.tmp); len(left) > 0 {
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return fmt.Errorf("processes left after the demo stopped: %v", left)
	}
	return nil
}

// processesUnder returns the pids whose working directory or command line
// lies under dir: what the demo started.
func processesUnder(dir string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join("/proc", ent.Name(), "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		if strings.HasPrefix(cwd, dir) || strings.Contains(string(cmdline), dir) {
			out = append(out, pid)
		}
	}
	return out
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// restConfig reaches the demo cluster as its admin.
func (e *env) restConfig(t *testing.T) *rest.Config {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", e.state.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// cluster returns a demo cluster by name.
func (e *env) cluster(t *testing.T, name string) demoCluster {
	t.Helper()
	for _, c := range e.state.Clusters {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("demo has no cluster %q (clusters %v)", name, e.state.Clusters)
	return demoCluster{}
}

// clusterConfig reaches a demo cluster by name as its admin.
func (e *env) clusterConfig(t *testing.T, name string) *rest.Config {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", e.cluster(t, name).Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// user returns a demo login by name.
func (e *env) user(t *testing.T, name string) (string, string) {
	t.Helper()
	for _, u := range e.state.Users {
		if u.Username == name {
			return u.Username, u.Password
		}
	}
	t.Fatalf("demo has no user %q", name)
	return "", ""
}

// browser starts a headless Chromium with a fresh profile for one test.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(*chromiumPath); err != nil {
		t.Fatalf("chromium not found at %s: install Debian's chromium package (apt-get install chromium)", *chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(*chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(func() {
		cancelT()
		cancelC()
		cancelA()
	})
	return ctx
}

// login signs in through the IdP's form and returns where the browser lands.
func login(t *testing.T, ctx context.Context, user, pass string) string {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(demoEnv.state.URL),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), user),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), pass),
		chromedp.Click(chromedp.ID(`login-submit`)),
		// The dashboard's own frame: the IdP's pages have no top bar.
		chromedp.WaitVisible(chromedp.CSS(`header.topbar`)),
	); err != nil {
		screenshot(t, ctx, "login-failed")
		t.Fatalf("login as %s: %v", user, err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// screenSize is a viewport the layout tests check a page at.
type screenSize struct {
	name          string
	width, height int64
	phone         bool
}

// screenSizes are the desktop (1440x900) and the phone (390x844) every
// layout test checks.
func screenSizes() []screenSize {
	return []screenSize{{"desktop", 1440, 900, false}, {"phone", 390, 844, true}}
}

// emulateScreen sets the browser's viewport to size, with mobile emulation
// for the phone.
func emulateScreen(t *testing.T, ctx context.Context, size screenSize) {
	t.Helper()
	emulate := chromedp.EmulateViewport(size.width, size.height)
	if size.phone {
		emulate = chromedp.EmulateViewport(size.width, size.height, chromedp.EmulateMobile)
	}
	if err := chromedp.Do(ctx, emulate); err != nil {
		t.Fatal(err)
	}
}

// screenshot saves a full-page PNG under artifacts/e2e/<test>-<name>.png.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	file := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + name + ".png"
	path := filepath.Join(demoEnv.artifacts, file)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// noRedirect is an HTTP client that shows redirects instead of following them.
func noRedirect() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
