package revdiff

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
)

// Side is one side of an environment's comparison: a record's manifests
// (Objects), a git ref rendered by the plan engine (Ref), or the live
// objects (Live).
type Side struct {
	// Name is how the side reads in the report: a record id, "live",
	// "ref:REF".
	Name string
	// Objects are a record's manifests (Secrets by hash, as audit keeps
	// them).
	Objects []*unstructured.Unstructured
	// Ref is a branch, a tag, a commit or pull/N to render.
	Ref string
	// Live reads the live objects of the other side's resources.
	Live bool
	// Commit is a record's source commit (its release notes start or
	// end there); "" for other sides.
	Commit string
}

// LiveSide is the live side.
func LiveSide() Side { return Side{Name: "live", Live: true} }

// RefSide is a ref rendered by the plan engine.
func RefSide(ref string) Side { return Side{Name: "ref:" + ref, Ref: ref} }

// ErrBothLive is a comparison of live with itself.
var ErrBothLive = errors.New("revdiff: from and to are both live: compare live with a record or a ref")

// CompareEnvironment compares two sides of env, from (before) to to
// (after). A ref is rendered at a copy of env (deployplan.AtRef: the
// environment's own target never changes) and its Secrets reduced with
// audit.StripSecrets. Every side that is not live (a ref, a record, an
// older record stored without namespaces) goes through the namespace rule
// (deployplan.WithNamespace): with the cluster's scope when a side is
// live, else deployplan.OfflineScope. A live side reads, from the cluster
// popts reaches (or env's own), the resources the other side names inside
// the environment's boundary (deployplan.LiveReader: Secrets as metadata
// only), reduced with StripLive; the resources outside it are listed in
// the report's Outside, unread, and a live resource deploy-web does not
// manage (neither in managed, the keys of the environment's last applied
// record as deployplan.LiveKey, nor owned by its field manager) is read
// without values and shown as "exists, not managed here". Nothing is
// written.
func CompareEnvironment(ctx context.Context, env *envconfig.Environment, popts deployplan.Options, from, to Side, managed map[string]bool, opts Options) (Report, error) {
	if from.Live && to.Live {
		return Report{}, ErrBothLive
	}
	var commit string
	for _, s := range []*Side{&from, &to} {
		if s.Ref == "" {
			continue
		}
		at, err := deployplan.AtRef(env, s.Ref)
		if err != nil {
			return Report{}, err
		}
		r, err := deployplan.Render(ctx, at)
		if err != nil {
			return Report{}, err
		}
		if s.Objects, err = audit.StripSecrets(r.Objects); err != nil {
			return Report{}, fmt.Errorf("revdiff: ref %s: %w", s.Ref, err)
		}
		commit = r.Commit
	}
	scope := deployplan.Scope(deployplan.OfflineScope)
	var lr *deployplan.LiveReader
	if from.Live || to.Live {
		var err error
		if lr, err = deployplan.OpenLive(env, popts); err != nil {
			return Report{}, err
		}
		scope = lr.Scope
	}
	for _, s := range []*Side{&from, &to} {
		if !s.Live {
			s.Objects = deployplan.WithNamespace(s.Objects, env.Namespace, scope)
		}
	}
	var outside []string
	for _, pair := range [][2]*Side{{&from, &to}, {&to, &from}} {
		s, other := pair[0], pair[1]
		if !s.Live {
			continue
		}
		read, err := lr.Read(ctx, other.Objects, managed)
		if err != nil {
			return Report{}, err
		}
		s.Objects, outside = StripLive(read.Objects), read.Outside
		if len(read.Unmanaged) > 0 {
			opts.Unmanaged = map[Key]bool{}
			for _, o := range read.Objects {
				if slices.Contains(read.Unmanaged, deployplan.LiveKey(o)) {
					opts.Unmanaged[KeyOf(o)] = true
				}
			}
		}
	}
	opts.FromLive, opts.ToLive = from.Live, to.Live
	res, err := Compare(from.Objects, to.Objects, opts)
	if err != nil {
		return Report{}, err
	}
	rep := NewReport(env.Name, from.Name, to.Name, commit, res)
	rep.Outside = outside
	return rep, nil
}
