package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/cmstore"
)

// cliFreezes is the freeze check of the CLI's writes (apply, its prune,
// restore; never a plan or a dry-run): the freezes the console keeps, read
// from ConfigMap freeze.ConfigMapName in deploy-web's namespace of the
// environment's cluster (the environment's consoleNamespace, never a
// flag's), with the user's kubeconfig, and decided by freeze.Gate as
// every write of the console is. --break-glass lets one run through a
// freeze, recorded in its audit record.
type cliFreezes struct {
	breakGlass string
	stderr     io.Writer
}

func (f *cliFreezes) register(fs *flag.FlagSet) {
	fs.StringVar(&f.breakGlass, "break-glass", "", "write through an active deploy freeze for this one run, with the reason (recorded in the audit record); the kubeconfig's user must be allowed to update ConfigMap "+
		freeze.ConfigMapName+" in the environment's consoleNamespace (could end the freeze itself); also lets --audit-namespace name another namespace for the records")
}

// cliFreezeTimeout bounds the read of the freezes and the questions asked
// about the user (who they are, whether they may break the glass).
const cliFreezeTimeout = 20 * time.Second

// check is the freeze decision for a write of env: nil, nil when no
// freeze holds it (no ConfigMap is no freeze; an environment whose
// consoleNamespace is "" has none), the Override to record when
// --break-glass let it through, else the refusal (a *cliFreezeError),
// nothing having been written. The freezes are read from env.ConsoleNS().
func (f *cliFreezes) check(ctx context.Context, env *envconfig.Environment, kubeconfig string) (*freeze.Override, error) {
	ns := env.ConsoleNS()
	if ns == "" {
		fmt.Fprintf(f.stderr, "deploy-web: warning: no deploy freezes read (environment %s's consoleNamespace is empty: no deploy-web in its cluster), so none can refuse this write\n", env.Name)
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, cliFreezeTimeout)
	defer cancel()
	where := freezesWhere{env: env.Name, ns: ns}
	_, cs, err := cliClient(env, kubeconfig)
	if err != nil {
		return nil, &cliFreezeError{where: where, err: fmt.Errorf("%w: %w", freeze.ErrUnreadable, err)}
	}
	t := freeze.Target{Cluster: envCluster(env, nil), Environment: env.Name, Namespace: env.Namespace}
	return cliFreezeDecision(ctx, cs, where, t, f.breakGlass)
}

// report says on stderr what a break-glass did: the freeze it overrode,
// or that none held env (then nothing is overridden or recorded).
func (f *cliFreezes) report(env *envconfig.Environment, o *freeze.Override) {
	switch {
	case o != nil:
		fmt.Fprintf(f.stderr, "deploy-web: %s\n", o.Note())
	case f.breakGlass != "":
		fmt.Fprintf(f.stderr, "deploy-web: no deploy freeze holds environment %s: --break-glass is not used\n", env.Name)
	}
}

// cliFreezeDecision is check against the cluster of cs: freeze.Gate's
// Check of an apply at t, with the break-glass of reason ("" for none) by
// the kubeconfig's user, a superadmin for the freezes when the cluster
// lets them update the freezes ConfigMap (cliMayBreakGlass).
func cliFreezeDecision(ctx context.Context, cs kubernetes.Interface, where freezesWhere, t freeze.Target, reason string) (*freeze.Override, error) {
	// The freezes are signed with the audit records' key (the Secret in
	// the same namespace): one edited by hand refuses the apply.
	keys, err := audit.New(cs.CoreV1(), nil, audit.Options{Namespace: where.ns})
	if err != nil {
		return nil, &cliFreezeError{where: where, err: err}
	}
	gate := freeze.NewGate(freeze.NewStore(cs.CoreV1(), where.ns, keys))
	var bg *freeze.BreakGlass
	if reason != "" {
		// A blank reason is asked for all the same: the freeze refuses
		// it, saying a reason is required.
		reason = strings.TrimSpace(reason)
		who := cliActor(ctx, cs.AuthenticationV1().SelfSubjectReviews(), os.Getenv)
		allowed, err := cliMayBreakGlass(ctx, cs, where.ns)
		if err != nil {
			return nil, &cliFreezeError{where: where, err: err}
		}
		bg = &freeze.BreakGlass{Reason: reason, Superadmin: allowed, By: freeze.Author{Email: who.Email, Subject: who.Subject}}
	}
	o, err := gate.Check(ctx, freeze.Apply, t, bg)
	if err != nil {
		return nil, &cliFreezeError{where: where, err: err}
	}
	return o, nil
}

// cliMayBreakGlass is the CLI's answer to "is this person a superadmin
// of the freezes?": whether the cluster lets the kubeconfig's user update
// the freezes ConfigMap in ns, so they could end the freeze themselves,
// as a superadmin can on /freezes. Breaking the glass instead leaves a
// record. The cluster's answer is read with a SelfSubjectAccessReview; a
// review that cannot be made is an error (the break-glass is refused).
func cliMayBreakGlass(ctx context.Context, cs kubernetes.Interface, ns string) (bool, error) {
	r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authzv1.SelfSubjectAccessReview{
		Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
			Namespace: ns, Verb: "update", Resource: "configmaps", Name: freeze.ConfigMapName}},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("--break-glass: ask the cluster whether you may update ConfigMap %s/%s: %w", ns, freeze.ConfigMapName, err)
	}
	return r.Status.Allowed, nil
}

// freezesWhere names the freezes a CLI write reads: environment env's
// cluster, namespace ns.
type freezesWhere struct{ env, ns string }

func (w freezesWhere) String() string {
	return fmt.Sprintf("ConfigMap %s/%s in environment %s's cluster", w.ns, freeze.ConfigMapName, w.env)
}

// cliFreezeError is a CLI write refused by the freezes: an active freeze
// (wrapping its *freeze.FrozenError), a break-glass that may not override
// it, or freezes that could not be read (wrapping freeze.ErrUnreadable).
// Its text says which freeze, why, when it opens and how to proceed; it
// unwraps to the freeze's error, so the audit record is the console's.
type cliFreezeError struct {
	where freezesWhere
	err   error
}

func (e *cliFreezeError) Unwrap() error { return e.err }

func (e *cliFreezeError) Error() string {
	var fe *freeze.FrozenError
	switch {
	case errors.Is(e.err, freeze.ErrBreakGlassDenied) && errors.As(e.err, &fe):
		return fmt.Sprintf("--break-glass refused: only a person the cluster lets update %s may override freeze %s (%s); nothing was touched; ask one of them, or wait until it opens",
			e.where, fe.Freeze.ID, fe.Message())
	case errors.As(e.err, &fe) && e.err != error(fe):
		// The break-glass itself was refused (its reason: empty, more
		// than one line, too long).
		return fmt.Sprintf("--break-glass: %v; nothing was touched", e.err)
	case errors.As(e.err, &fe):
		return fmt.Sprintf("environment %s is frozen by freeze %s: %s; nothing was touched. Plans still work; to write through the freeze for this one run, add --break-glass \"why it cannot wait\" (recorded in the audit record)",
			fe.Target.Environment, fe.Freeze.ID, fe.Message())
	case errors.Is(e.err, freeze.ErrUnreadable):
		return fmt.Sprintf("%v (reading %s); nothing was touched; %s", e.err, e.where, e.unreadableHint())
	}
	return fmt.Sprintf("%v (reading %s); nothing was touched", e.err, e.where)
}

// unreadableHint says how to proceed when the freezes cannot be read.
func (e *cliFreezeError) unreadableHint() string {
	switch {
	case apierrors.IsForbidden(e.err):
		return fmt.Sprintf("the kubeconfig's user needs get on configmaps in namespace %s there, and on the Secret %s that proves them signed (or, if no deploy-web runs in that cluster, set the environment's consoleNamespace: \"\" to read no freezes and write no audit record)", e.where.ns, audit.KeySecretName)
	case apierrors.IsTimeout(e.err) || apierrors.IsServerTimeout(e.err) || errors.Is(e.err, context.DeadlineExceeded):
		return "the API server did not answer in time: try again"
	case errors.As(e.err, new(*cmstore.TamperedError)):
		return fmt.Sprintf("they were changed outside deploy-web, or written before freezes were signed: review them, delete the ConfigMap (kubectl -n %s delete configmap %s) and set again on deploy-web's /freezes page the freezes that should stand (docs/security.md, Signed state)", e.where.ns, freeze.ConfigMapName)
	case errors.As(e.err, new(*freeze.GarbledError)):
		return fmt.Sprintf("fix or remove what is wrong (kubectl -n %s edit configmap %s), or end the freeze at fault on deploy-web's /freezes page", e.where.ns, freeze.ConfigMapName)
	}
	return "check the kubeconfig and that the cluster answers, then try again"
}
