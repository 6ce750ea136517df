package revdiff

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
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
// audit.StripSecrets; a live side reads, from the cluster popts reaches
// (or env's own), the resources the other side names inside the
// environment's boundary (deployplan.ReadLive: Secrets as metadata only),
// reduced with StripLive; the resources outside it are listed in the
// report's Outside, unread. Nothing is written.
func CompareEnvironment(ctx context.Context, env *deployplan.Environment, popts deployplan.Options, from, to Side, opts Options) (Report, error) {
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
	var outside []string
	for _, pair := range [][2]*Side{{&from, &to}, {&to, &from}} {
		s, other := pair[0], pair[1]
		if !s.Live {
			continue
		}
		live, out, err := deployplan.ReadLive(ctx, env, popts, other.Objects)
		if err != nil {
			return Report{}, err
		}
		s.Objects, outside = StripLive(live), out
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
