// Package devcluster starts a real, local Kubernetes control plane for the
// demo and the tests: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and KWOK standing in for the kubelet of one fake node (pods
// are scheduled, become Running, and their logs stream through the
// apiserver). Every process runs in its own process group on free loopback
// ports inside one folder, and Stop ends them all.
//
// The binaries are built from Go modules by `make cluster-bin` into bin/
// (see tools/ and CONTROL-PLANE.md); nothing is downloaded at run time.
package devcluster

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/hanzoai/deploy-web/internal/proc"
)

// Versions of the pieces, as pinned in tools/*/go.mod. The binaries live in
// bin/<piece>-<version>/ so a version bump rebuilds them.
const (
	KubernetesVersion = "v1.37.2"
	EtcdVersion       = "v3.6.16"
	KwokVersion       = "v0.8.0"
)

// NodeName is the name of the cluster's one fake node.
const NodeName = "kwok-node-0"

// nodeIP is the fake node's InternalIP: KWOK serves the kubelet API (logs)
// there.
const nodeIP = "127.0.0.1"

// The cluster's address ranges, sized for a fleet of 10,000 Apps with a
// Service and up to three pods each (the scale benchmark's largest fleet),
// with room to spare: a /16 of Service IPs is 65,534 Services (the default
// /24 of the examples held 254, so the 240th App failed "range is full"),
// and KWOK hands out pod IPs from a /14 (262,142 pods). The node admits
// NodeMaxPods pods, and its CPU and memory hold that many of the reference
// operator's pods (50m and 64Mi each): at 1,000 CPUs it filled at 20,000
// pods, and the last Apps of a 10,000-App fleet stayed Pending
// ("Insufficient cpu"). The two ranges do not overlap.
const (
	ServiceCIDR = "10.96.0.0/16"
	PodCIDR     = "10.128.0.0/14"
	NodeMaxPods = 100000
	NodeCPU     = "10000"
	NodeMemory  = "16Ti"
)

// LogSource tells KWOK where the logs of some containers come from: a file in
// CRI log format ("2026-01-02T03:04:05.000000000Z stdout F text"). With no
// Containers it is the default for every container.
type LogSource struct {
	Containers []string
	File       string
	// Follow streams lines appended to File, like a live container.
	Follow bool
}

// Options configures Start.
type Options struct {
	// BinDir is the folder holding the k8s-*, etcd-* and kwok-* folders.
	// Empty: $DEPLOY_WEB_BIN_DIR, else bin/ in the nearest folder up from
	// the working directory that has a go.mod.
	BinDir string
	// Dir is the working folder (data, certificates, logs). Empty: a new
	// temporary folder, removed by Stop.
	Dir string
	// Logs configures pod logs. Empty: one default file with a few lines.
	Logs []LogSource
	// Progress, if set, receives one line per step.
	Progress io.Writer
}

// Binaries are the paths of the control-plane executables.
type Binaries struct {
	Etcd, APIServer, ControllerManager, Scheduler, Kubectl, Kwok string
}

// FindBinaries locates the binaries under binDir (see Options.BinDir) and
// says how to build them when one is missing.
func FindBinaries(binDir string) (Binaries, error) {
	dir, err := ResolveBinDir(binDir)
	if err != nil {
		return Binaries{}, err
	}
	k8s := filepath.Join(dir, "k8s-"+KubernetesVersion)
	b := Binaries{
		Etcd:              filepath.Join(dir, "etcd-"+EtcdVersion, "etcd"),
		APIServer:         filepath.Join(k8s, "kube-apiserver"),
		ControllerManager: filepath.Join(k8s, "kube-controller-manager"),
		Scheduler:         filepath.Join(k8s, "kube-scheduler"),
		Kubectl:           filepath.Join(k8s, "kubectl"),
		Kwok:              filepath.Join(dir, "kwok-"+KwokVersion, "kwok"),
	}
	for _, p := range []string{b.Etcd, b.APIServer, b.ControllerManager, b.Scheduler, b.Kubectl, b.Kwok} {
		if _, err := os.Stat(p); err != nil {
			return Binaries{}, fmt.Errorf("devcluster: %s is missing: run `make cluster-bin` first (it builds the control plane from Go modules into bin/)", p)
		}
	}
	return b, nil
}

// ResolveBinDir returns binDir, or $DEPLOY_WEB_BIN_DIR, or the bin/ folder
// of the nearest enclosing Go module.
func ResolveBinDir(binDir string) (string, error) {
	if binDir == "" {
		binDir = os.Getenv("DEPLOY_WEB_BIN_DIR")
	}
	if binDir != "" {
		return filepath.Abs(binDir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("devcluster: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "tools")); err == nil {
				return filepath.Join(d, "bin"), nil
			}
		}
		if filepath.Dir(d) == d {
			return "", errors.New("devcluster: cannot find the repository's bin/ folder: set DEPLOY_WEB_BIN_DIR or pass --bin-dir")
		}
	}
}

// Cluster is a running control plane.
type Cluster struct {
	// Config reaches the apiserver as a cluster admin.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for the same identity.
	Kubeconfig string
	// Dir is the working folder; process logs are Dir/<process>.log.
	Dir string
	// Kubectl is the path of the kubectl binary built with the cluster.
	Kubectl string

	removeDir bool
	// apiSpec, apiURL and token restart the apiserver (StartAPIServer).
	apiSpec proc.Spec
	apiURL  string
	token   string
	stopLB  context.CancelFunc
	lbDone  chan struct{}
	mu      sync.Mutex
	procs   []*proc.Process
	stopped bool
}

// Start starts the control plane and returns once it serves, the fake node is
// Ready and the default service account exists. On error everything started
// is stopped again.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	bins, err := FindBinaries(opts.BinDir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: opts.Dir, Kubectl: bins.Kubectl}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "deploy-web-cluster-"); err != nil {
			return nil, fmt.Errorf("devcluster: %w", err)
		}
		c.removeDir = true
	} else if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("devcluster: %w", err)
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	progress := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "cluster: "+format+"\n", args...)
		}
	}

	ports, err := proc.FreePorts(7)
	if err != nil {
		return nil, err
	}
	etcdPort, etcdPeer, apiPort, cmPort, schedPort, kwokPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]

	pki, err := writePKI(c.Dir)
	if err != nil {
		return nil, err
	}

	progress("starting etcd %s", EtcdVersion)
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	if err := c.start(proc.Spec{Name: "etcd", Path: bins.Etcd, Dir: c.Dir, Args: []string{
		"--data-dir", filepath.Join(c.Dir, "etcd-data"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", "http://127.0.0.1:" + strconv.Itoa(etcdPeer),
		"--initial-advertise-peer-urls", "http://127.0.0.1:" + strconv.Itoa(etcdPeer),
		"--initial-cluster", "default=http://127.0.0.1:" + strconv.Itoa(etcdPeer),
		"--unsafe-no-fsync", "--quota-backend-bytes", strconv.Itoa(4 << 30),
	}}); err != nil {
		return nil, err
	}
	if err := proc.WaitHTTP(ctx, nil, etcdURL+"/health", c.last(), nil); err != nil {
		return nil, err
	}

	progress("starting kube-apiserver %s", KubernetesVersion)
	apiServer := "https://127.0.0.1:" + strconv.Itoa(apiPort)
	certDir := filepath.Join(c.Dir, "apiserver-certs")
	c.apiURL, c.token = apiServer, pki.token
	c.apiSpec = proc.Spec{Name: "kube-apiserver", Path: bins.APIServer, Dir: c.Dir, Args: []string{
		"--etcd-servers=" + etcdURL,
		"--cert-dir=" + certDir,
		"--secure-port=" + strconv.Itoa(apiPort),
		"--bind-address=127.0.0.1",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + pki.saPub,
		"--service-account-signing-key-file=" + pki.saKey,
		"--token-auth-file=" + pki.tokens,
		"--authorization-mode=Node,RBAC",
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--allow-privileged",
		"--kubelet-preferred-address-types=InternalIP",
		"--disable-admission-plugins=ServiceAccount",
		"--enable-priority-and-fairness=false",
	}}
	if err := c.start(c.apiSpec); err != nil {
		return nil, err
	}
	if err := c.waitAPIServer(ctx); err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(filepath.Join(certDir, "apiserver.crt"))
	if err != nil {
		return nil, fmt.Errorf("devcluster: read apiserver certificate: %w", err)
	}
	c.Config = &rest.Config{
		Host:            apiServer,
		BearerToken:     pki.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		QPS:             200,
		Burst:           400,
	}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := writeKubeconfig(c.Kubeconfig, apiServer, ca, pki.token); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("devcluster: %w", err)
	}

	progress("starting kube-controller-manager and kube-scheduler")
	if err := c.start(proc.Spec{Name: "kube-controller-manager", Path: bins.ControllerManager, Dir: c.Dir, Args: []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--authentication-kubeconfig=" + c.Kubeconfig,
		"--authorization-kubeconfig=" + c.Kubeconfig,
		"--leader-elect=false",
		"--service-account-private-key-file=" + pki.saKey,
		"--root-ca-file=" + filepath.Join(certDir, "apiserver.crt"),
		"--use-service-account-credentials=false",
		"--controllers=*,-serviceaccount-token",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(cmPort),
		"--concurrent-deployment-syncs=10",
		"--concurrent-replicaset-syncs=10",
		"--kube-api-qps=200", "--kube-api-burst=400",
	}}); err != nil {
		return nil, err
	}
	if err := c.start(proc.Spec{Name: "kube-scheduler", Path: bins.Scheduler, Dir: c.Dir, Args: []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--authentication-kubeconfig=" + c.Kubeconfig,
		"--authorization-kubeconfig=" + c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(schedPort),
	}}); err != nil {
		return nil, err
	}

	progress("starting kwok %s (fake node %s)", KwokVersion, NodeName)
	kwokConf, err := writeKwokConfig(c.Dir, opts.Logs)
	if err != nil {
		return nil, err
	}
	kwok := proc.Spec{Name: "kwok", Path: bins.Kwok, Dir: c.Dir, Args: []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--config=" + kwokConf,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + managedAnnotation + "=" + managedValue,
		"--server-address=127.0.0.1:" + strconv.Itoa(kwokPort),
		"--node-ip=" + nodeIP,
		// The node-initialize stage writes a Hostname address from this;
		// without it, see createNode.
		"--node-name=" + NodeName,
		"--node-port=" + strconv.Itoa(kwokPort),
		"--cidr=" + PodCIDR,
		"--tls-cert-file=" + pki.kwokCert,
		"--tls-private-key-file=" + pki.kwokKey,
	}}
	// The node only once KWOK serves: see startKwok.
	if err := c.startKwok(ctx, cs, kwok, "https://127.0.0.1:"+strconv.Itoa(kwokPort)+"/healthz", pki.kwokCert); err != nil {
		return nil, err
	}
	if err := createNode(ctx, cs); err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx, cs); err != nil {
		return nil, err
	}
	lbCtx, stopLB := context.WithCancel(context.Background())
	c.stopLB, c.lbDone = stopLB, make(chan struct{})
	go func() {
		defer close(c.lbDone)
		runLoadBalancer(lbCtx, cs)
	}()
	progress("ready: kubeconfig %s", c.Kubeconfig)
	return c, nil
}

// waitAPIServer waits until the apiserver (the last process started)
// answers /readyz.
func (c *Cluster) waitAPIServer(ctx context.Context) error {
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // readiness probe of our own loopback apiserver before its CA is known
	readyz := func(r *http.Response) bool { return r.StatusCode == http.StatusOK }
	return waitAuthed(ctx, insecure, c.apiURL+"/readyz", c.token, c.last(), readyz)
}

// StopAPIServer stops the kube-apiserver alone (etcd, the controllers and
// KWOK keep running): the cluster stops answering, as when it is
// unreachable. StartAPIServer brings it back.
func (c *Cluster) StopAPIServer() error {
	c.mu.Lock()
	var api *proc.Process
	for i, p := range c.procs {
		if p.Name == "kube-apiserver" {
			api = p
			c.procs = append(c.procs[:i:i], c.procs[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
	if api == nil {
		return errors.New("devcluster: the apiserver is not running")
	}
	api.Stop(5 * time.Second)
	return nil
}

// StartAPIServer starts the kube-apiserver again, on the same port,
// certificates and etcd, and waits until it is ready.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	if err := c.start(c.apiSpec); err != nil {
		return err
	}
	return c.waitAPIServer(ctx)
}

func (c *Cluster) start(spec proc.Spec) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return errors.New("devcluster: stopped")
	}
	p, err := proc.Start(spec)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

func (c *Cluster) last() *proc.Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.procs[len(c.procs)-1]
}

// Processes returns the process ids of the running pieces, for tests that
// check nothing is left behind.
func (c *Cluster) Processes() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]int{}
	for _, p := range c.procs {
		m[p.Name] = p.Pid()
	}
	return m
}

// Check returns an error naming the first piece that has exited.
func (c *Cluster) Check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("devcluster: %s exited (%v); log tail:\n%s", p.Name, err, p.Tail(6000)) // a Go panic's message is above its stack
		}
	}
	return nil
}

// Stop ends every process in reverse start order and removes a temporary
// working folder. It is safe to call more than once.
func (c *Cluster) Stop() {
	c.mu.Lock()
	procs := c.procs
	c.procs = nil
	already := c.stopped
	c.stopped = true
	stopLB, lbDone := c.stopLB, c.lbDone
	c.stopLB = nil
	c.mu.Unlock()
	if stopLB != nil {
		stopLB()
		<-lbDone
	}
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].Stop(5 * time.Second)
	}
	if !already && c.removeDir {
		os.RemoveAll(c.Dir)
	}
}

func waitAuthed(ctx context.Context, client *http.Client, url, token string, p *proc.Process, ok func(*http.Response) bool) error {
	rt := client.Transport
	client.Transport = roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		r.Header.Set("Authorization", "Bearer "+token)
		return rt.RoundTrip(r)
	})
	return proc.WaitHTTP(ctx, client, url, p, ok)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func writeKubeconfig(path, server string, ca []byte, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["devcluster"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["devcluster"] = &clientcmdapi.Context{Cluster: "devcluster", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "devcluster"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("devcluster: write kubeconfig: %w", err)
	}
	return nil
}

func createNode(ctx context.Context, cs kubernetes.Interface) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        NodeName,
			Annotations: map[string]string{managedAnnotation: managedValue, "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				"kubernetes.io/hostname": NodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"type": "kwok",
			},
		},
		Status: corev1.NodeStatus{
			// Both addresses from the start. KWOK's node-initialize stage
			// runs whenever the node is not Ready (after any stall of the
			// API server longer than the node monitor's grace period) and
			// writes `addresses:` when either is missing: with only the
			// InternalIP (no Hostname, as KWOK knew no node name), that key
			// rendered empty and the merge patch removed every address, so
			// each later stall toggled them and pod logs failed for good
			// ("no preferred addresses found"). With both, it leaves them
			// alone.
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: nodeIP},
				{Type: corev1.NodeHostName, Address: NodeName},
			},
			Allocatable: nodeResources(),
			Capacity:    nodeResources(),
		},
	}
	_, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// A cluster started again on its old data: a node created by an
		// older devcluster, or emptied by KWOK, gets its addresses and
		// today's size back.
		patch, perr := json.Marshal(map[string]any{"status": map[string]any{
			"addresses": node.Status.Addresses, "allocatable": node.Status.Allocatable, "capacity": node.Status.Capacity,
		}})
		if perr != nil {
			return fmt.Errorf("devcluster: node addresses: %w", perr)
		}
		_, err = cs.CoreV1().Nodes().Patch(ctx, NodeName, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		if err == nil {
			// Then KWOK manages it again (startKwok took the annotation
			// away), with its addresses already in place.
			managed := []byte(`{"metadata":{"annotations":{"` + managedAnnotation + `":"` + managedValue + `"}}}`)
			_, err = cs.CoreV1().Nodes().Patch(ctx, NodeName, types.MergePatchType, managed, metav1.PatchOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("devcluster: create node: %w", err)
	}
	return nil
}

// nodeResources is what the fake node offers (NodeCPU, NodeMemory,
// NodeMaxPods).
func nodeResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(NodeCPU),
		corev1.ResourceMemory: resource.MustParse(NodeMemory),
		corev1.ResourcePods:   *resource.NewQuantity(NodeMaxPods, resource.DecimalSI),
	}
}

// waitReady waits for the fake node to be Ready and the default service
// account to exist (pods are refused before it does).
func (c *Cluster) waitReady(ctx context.Context, cs kubernetes.Interface) error {
	return c.waitFor(ctx, func(ctx context.Context) error {
		if err := nodeReady(ctx, cs, NodeName); err != nil {
			return err
		}
		if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return fmt.Errorf("default service account: %w", err)
		}
		return nil
	})
}

// waitFor polls until ready returns nil, a piece exits, or 90s pass; then
// the error says what ready said last.
func (c *Cluster) waitFor(ctx context.Context, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for {
		if err := c.Check(); err != nil {
			return err
		}
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devcluster: %w (%w)", err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// nodeReady returns nil when the node is Ready.
func nodeReady(ctx context.Context, cs kubernetes.Interface, name string) error {
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("node %s: %w", name, err)
	}
	if !nodeIsReady(n) {
		return fmt.Errorf("node %s is not ready", name)
	}
	return nil
}

func nodeIsReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}
