package main

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	authnv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/freeze"
)

// startAudit builds the audit store in namespace ns of the cluster of rc
// and cs (serve: the home cluster, deploy-web's own namespace), starts its
// index in the background on ctx (until it syncs, List reads the records
// with paged List calls) and runs its retention under the Lease, with
// identity naming this replica. refusals counts each refused record
// against its person (the handlers answer 429 past it). The index and the retention log their
// errors: a replica without the rights still serves, and says why its
// audit pages are empty.
func startAudit(ctx, leaseCtx context.Context, held *leaseHolders, rc *rest.Config, cs kubernetes.Interface, ns, identity string, keep audit.Policy, key []byte, refusals *audit.Limiter, log *slog.Logger) (*audit.Store, error) {
	meta, err := metadata.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("audit store: %w", err)
	}
	store, err := audit.New(cs.CoreV1(), meta, audit.Options{Namespace: ns, Log: log.With("component", "audit"), Key: key, Refusals: refusals})
	if err != nil {
		return nil, err
	}
	ret, err := audit.NewRetainer(store, cs.CoordinationV1(), audit.RetainerOptions{Identity: identity,
		Retention: audit.Retention{Default: keep}})
	if err != nil {
		return nil, err
	}
	go func() {
		if err := store.Start(ctx); err != nil && ctx.Err() == nil {
			log.Warn("audit index not started: the audit pages read the records directly", "namespace", ns, "err", err)
		}
	}()
	held.Go(func() {
		if err := ret.Run(leaseCtx); err != nil {
			log.Error("audit retention stopped", "namespace", ns, "err", err)
		}
	})
	log.Info("audit trail", "namespace", ns, "identity", identity)
	return store, nil
}

// maxAuditKeyFile bounds the key file read at start-up.
const maxAuditKeyFile = 4 << 10

// readAuditKey reads --audit-key-file (nil when unset: the store reads
// the Secret through the API). A key shorter than 32 bytes, or a file
// that cannot be read, fails start-up.
func readAuditKey(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	key, err := readBounded(path, maxAuditKeyFile)
	if err != nil {
		return nil, fmt.Errorf("--audit-key-file: %w", err)
	}
	key = bytes.TrimSpace(key)
	if len(key) < 32 {
		return nil, fmt.Errorf("--audit-key-file %s: %d bytes, want at least 32 (create it with: head -c 32 /dev/urandom | base64)", path, len(key))
	}
	return key, nil
}

// replicaIdentity names this replica in the retention Lease: $POD_NAME
// (the deployment sets it from the pod's name), else the host name and
// the process id.
func replicaIdentity(getenv func(string) string, hostname func() (string, error), pid int) string {
	if p := getenv("POD_NAME"); p != "" {
		return p
	}
	h, err := hostname()
	if err != nil || h == "" {
		h = "deploy-web"
	}
	return h + "-" + strconv.Itoa(pid)
}

// envCluster is the cluster an environment's records name: the configured
// cluster it maps to (mapped, see envClusters), else its kubeconfig
// context, else "in-cluster" or "kubeconfig" (the default context of the
// kubeconfig it resolves to).
func envCluster(env *envconfig.Environment, mapped map[string]string) string {
	return env.ClusterName(mapped)
}

// cliAudit writes the audit records of the CLI's writes (apply, restore,
// prune) to deploy-web's namespace in the environment's own cluster, with
// the user's kubeconfig: the same store the console reads when it runs
// there. The actor is who the cluster says the kubeconfig's user is
// (SelfSubjectReview). A record that cannot be written is said on stderr;
// the command's exit code stays the one of its write.
type cliAudit struct {
	ns     string
	stderr io.Writer
	// flag is --audit-namespace as given; set says it was.
	flag string
	set  bool
}

func (a *cliAudit) register(fs *flag.FlagSet) {
	fs.Func("audit-namespace", "namespace of deploy-web's audit records in the environment's cluster: every apply, restore and prune, refused and failed ones included, writes one there; by default the environment's consoleNamespace (deploy-web), where the freezes are read too; another one only with --break-glass (\"\" writes none)",
		func(v string) error { a.flag, a.set = v, true; return nil })
}

// resolve sets the namespace the records of a write of env go to: the
// environment's (ConsoleNS), where its freezes are read whatever the
// flags say. A --audit-namespace naming another one is refused unless
// breakGlass is given (then the records go there, said on stderr).
func (a *cliAudit) resolve(env *envconfig.Environment, breakGlass string) error {
	a.ns = env.ConsoleNS()
	if !a.set || a.flag == a.ns {
		return nil
	}
	if breakGlass == "" {
		return exitWith(exitRefused, fmt.Errorf("--audit-namespace %q is not deploy-web's namespace in environment %s's cluster, %q (its consoleNamespace): the freezes are read and the records written there; drop --audit-namespace, or add --break-glass REASON to write the records to %q (the freezes are still read from %q)",
			a.flag, env.Name, a.ns, a.flag, a.ns))
	}
	fmt.Fprintf(a.stderr, "deploy-web: --break-glass: the audit records go to namespace %q, not %q (environment %s's consoleNamespace); the freezes are read from %q\n", a.flag, a.ns, env.Name, a.ns)
	a.ns = a.flag
	return nil
}

// keepArgs is --audit-namespace as given on fs (nothing when left at its
// default), for the next commands a report prints.
func (a *cliAudit) keepArgs(fs *flag.FlagSet) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "audit-namespace" {
			out = append(out, "--audit-namespace="+a.flag)
		}
	})
	return out
}

// cliAuditTimeout bounds the write of the records, after the command's
// own work and whatever its context says.
const cliAuditTimeout = 20 * time.Second

// write stores recs (their actor and cluster filled in).
func (a *cliAudit) write(ctx context.Context, env *envconfig.Environment, kubeconfig string, recs ...audit.Record) {
	if len(recs) == 0 {
		return
	}
	if a.ns == "" {
		fmt.Fprintf(a.stderr, "deploy-web: no audit record written (--audit-namespace is empty)\n")
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cliAuditTimeout)
	defer cancel()
	fail := func(err error) {
		fmt.Fprintf(a.stderr, "deploy-web: warning: the audit record was not written to namespace %s of environment %s's cluster: %v "+
			"(the kubeconfig's user needs configmaps get, list, create and update, events create, and get on the Secret %s there; --audit-namespace names it)\n", a.ns, env.Name, err, audit.KeySecretName)
	}
	rc, cs, err := cliClient(env, kubeconfig)
	if err != nil {
		fail(err)
		return
	}
	meta, err := metadata.NewForConfig(rc)
	if err != nil {
		fail(err)
		return
	}
	store, err := audit.New(cs.CoreV1(), meta, audit.Options{Namespace: a.ns})
	if err != nil {
		fail(err)
		return
	}
	who := cliActor(ctx, cs.AuthenticationV1().SelfSubjectReviews(), os.Getenv)
	for _, rec := range recs {
		rec.Actor, rec.Cluster = who, envCluster(env, nil)
		stored, err := store.Append(ctx, rec)
		if err != nil {
			fail(err)
			return
		}
		fmt.Fprintf(a.stderr, "deploy-web: audit record %s written to namespace %s\n", stored.ID, a.ns)
	}
}

// cliActor is the kubeconfig's user as the cluster knows it (its
// username, as subject and, when it is an address, as email, and its
// groups), or, when the cluster cannot say, the local login name.
func cliActor(ctx context.Context, ssr authnv1client.SelfSubjectReviewInterface, getenv func(string) string) audit.Actor {
	r, err := ssr.Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || r.Status.UserInfo.Username == "" {
		return audit.Actor{Subject: "local:" + cmp.Or(getenv("USER"), "unknown")}
	}
	u := r.Status.UserInfo
	a := audit.Actor{Subject: u.Username, Groups: u.Groups}
	if strings.Contains(u.Username, "@") {
		a.Email = u.Username
	}
	return a
}

// applyRecords are the records of a CLI apply that ran (refusals are
// recorded where they are answered): the apply's, with the manifests it
// applied (rendered again at the report's commit; when that fails, the
// objects the report names), and, for --prune once the prune ran, the
// prune's, naming the orphans with their results. Each carries the
// break-glass o that let the run through a freeze, if one did.
func applyRecords(ctx context.Context, env *envconfig.Environment, start time.Time, rep *deployplan.Report, err error, prune bool, o *freeze.Override) []audit.Record {
	var applied []*unstructured.Unstructured
	if rep != nil && err == nil {
		applied, _ = envrun.AppliedManifests(ctx, env, rep)
	}
	recs := []audit.Record{envrun.WithBreakGlass(envrun.ApplyRecord(audit.VerbApply, env, start, rep, err, applied), o)}
	if !prune || rep == nil {
		return recs
	}
	pr := audit.Record{Time: start, Duration: audit.Duration(time.Since(start)), Verb: audit.VerbPrune, Environment: env.Name,
		Namespace: env.Namespace, Commit: rep.DeployApply.Source.Commit, RenderedDigest: rep.DeployApply.Source.RenderedDigest,
		Outcome: audit.OutcomeSucceeded, Blockers: []string{}}
	ran, failed := false, 0
	for _, o := range rep.DeployApply.Orphans {
		if o.Result == "" {
			continue
		}
		ran = true
		if o.Result == "failed" {
			failed++
		}
		gv, _ := schema.ParseGroupVersion(o.APIVersion)
		pr.Objects = append(pr.Objects, audit.Object{Group: gv.Group, Version: gv.Version, Kind: o.Kind, Namespace: env.Namespace, Name: o.Name})
	}
	if !ran {
		return recs
	}
	pr.Message = fmt.Sprintf("%d orphan(s) pruned or kept", len(pr.Objects)-failed)
	if failed > 0 {
		pr.Outcome, pr.Message = audit.OutcomeFailed, fmt.Sprintf("%d of %d orphan(s) could not be deleted: see the report", failed, len(pr.Objects))
	}
	return append(recs, envrun.WithBreakGlass(pr, o))
}

// cliClient is the command line's client of environment env's cluster,
// with the kubeconfig's user (its audit records, its freeze check).
func cliClient(env *envconfig.Environment, kubeconfig string) (*rest.Config, kubernetes.Interface, error) {
	rc, err := deployplan.RestConfig(env, kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "deploy-web-cli"
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	return rc, cs, nil
}
