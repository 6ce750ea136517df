package envrun

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/diffrender"
	"github.com/hanzoai/deploy-web/envconfig"
)

// DirectionLiveDesired is the Direction of an [ObjectDiff] read as
// diffrender reads every diff: the live object on the left ("before"), the
// rendered one on the right ("after"), so Added counts the lines the apply
// adds.
const DirectionLiveDesired = "live-desired"

// ObjectDiff is the diff of one rendered object against the live one, kept
// with a run's report.
type ObjectDiff struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Action     string `json:"action"`
	// NoLive: the object does not exist yet (the whole manifest is new).
	NoLive bool `json:"noLive"`
	// Hidden: a Secret, whose contents are never shown.
	Hidden  bool              `json:"hidden"`
	Equal   bool              `json:"equal"`
	Added   int               `json:"added"`
	Removed int               `json:"removed"`
	Hunks   []diffrender.Hunk `json:"hunks"`
	// Error says why no diff could be made.
	Error string `json:"error,omitempty"`
	// Direction is DirectionLiveDesired. Diffs stored before it existed
	// have none and the rendered object on the left; DecodeDiffs turns
	// them around.
	Direction string `json:"direction,omitempty"`
}

// objectDiffs renders env again and diffs each object against the live
// cluster (restricted to the fields the manifest sets), with 3 lines of
// context, and returns the rendered objects inside the apply boundary
// (what an apply of the report writes: its audit record's manifests). A
// render at another commit than the report's gives no diffs.
func (r *Runner) objectDiffs(ctx context.Context, rc *rest.Config, env *envconfig.Environment, rep *deployplan.Report) ([]ObjectDiff, []*unstructured.Unstructured, error) {
	rendered, err := deployplan.Render(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	if rendered.Commit != rep.DeployApply.Source.Commit {
		return nil, nil, fmt.Errorf("envrun: the source moved from %s to %s since the plan", rep.DeployApply.Source.Commit, rendered.Commit)
	}
	// The engine's request budget: with client-go's default (5/s, burst
	// 10) the reads below throttled a console plan of 34 objects by
	// seconds.
	rc = deployplan.ClientConfig(rc)
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	actions := map[string]string{}
	for _, o := range rep.DeployApply.Objects {
		actions[o.Kind+"/"+o.Namespace+"/"+o.Name] = o.Action
	}
	var out []ObjectDiff
	var inScope []*unstructured.Unstructured
	// The namespace rule, as the plan applied it: the objects are
	// compared, and recorded, in the namespace the apply used.
	for _, obj := range deployplan.WithNamespace(rendered.Objects, env.Namespace, deployplan.OfflineScope) {
		ns := obj.GetNamespace()
		d := ObjectDiff{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: ns, Name: obj.GetName(), Action: actions[obj.GetKind()+"/"+ns+"/"+obj.GetName()],
			Direction: DirectionLiveDesired}
		// Outside the apply boundary (another namespace, or blocked by the
		// plan): nothing is read, so nothing of it can show.
		if !inBoundary(env, ns, d.Action) {
			d.Error = "outside the environment's apply boundary: not read"
			out = append(out, d)
			continue
		}
		inScope = append(inScope, obj)
		if obj.GetKind() == "Secret" && obj.GroupVersionKind().Group == "" {
			d.Hidden = true
			out = append(out, d)
			continue
		}
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			d.Error = "unknown kind in this cluster"
			out = append(out, d)
			continue
		}
		live, err := dyn.Resource(m.Resource).Namespace(ns).Get(ctx, obj.GetName(), metav1.GetOptions{})
		var liveObj map[string]any
		switch {
		case apierrors.IsNotFound(err):
			d.NoLive = true
		case err != nil:
			d.Error = "could not read the live object"
			out = append(out, d)
			continue
		default:
			liveObj = live.Object
		}
		md, err := diffrender.Manifests(obj.Object, liveObj)
		if err != nil {
			d.Error = "could not diff"
			out = append(out, d)
			continue
		}
		d.Equal, d.Added, d.Removed, d.Hunks = md.Diff.Equal, md.Diff.Added, md.Diff.Removed, md.Diff.Hunks(3)
		out = append(out, d)
	}
	return out, inScope, nil
}

// inBoundary says whether a rendered object (its namespace, its planned
// action) is inside the apply boundary: what an apply writes.
func inBoundary(env *envconfig.Environment, ns, action string) bool {
	return ns == env.Namespace && action != "blocked"
}

// AppliedManifests renders env again and returns the objects an apply of
// rep wrote (inside the apply boundary, in the namespace the apply used:
// deployplan.WithNamespace), for the apply's audit record; a
// render at another commit than rep's is an error (the source moved).
func AppliedManifests(ctx context.Context, env *envconfig.Environment, rep *deployplan.Report) ([]*unstructured.Unstructured, error) {
	rendered, err := deployplan.Render(ctx, env)
	if err != nil {
		return nil, err
	}
	if rendered.Commit != rep.DeployApply.Source.Commit {
		return nil, fmt.Errorf("envrun: the source moved from %s to %s since the apply", rep.DeployApply.Source.Commit, rendered.Commit)
	}
	actions := map[string]string{}
	for _, o := range rep.DeployApply.Objects {
		actions[o.Kind+"/"+o.Namespace+"/"+o.Name] = o.Action
	}
	var out []*unstructured.Unstructured
	for _, obj := range deployplan.WithNamespace(rendered.Objects, env.Namespace, deployplan.OfflineScope) {
		ns := obj.GetNamespace()
		if inBoundary(env, ns, actions[obj.GetKind()+"/"+ns+"/"+obj.GetName()]) {
			out = append(out, obj)
		}
	}
	return out, nil
}

// DecodeDiffs reads the diffs stored with a run, each in
// DirectionLiveDesired: a diff stored before the direction was fixed (the
// rendered object on the left) is read the other way round. A direction it
// does not know is an error, never a guess.
func DecodeDiffs(b []byte) ([]ObjectDiff, error) {
	var out []ObjectDiff
	if len(b) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("envrun: decode diffs: %w", err)
	}
	for i := range out {
		d := &out[i]
		switch d.Direction {
		case DirectionLiveDesired:
		case "":
			for j, h := range d.Hunks {
				d.Hunks[j] = h.Reversed()
			}
			d.Added, d.Removed, d.Direction = d.Removed, d.Added, DirectionLiveDesired
		default:
			return nil, fmt.Errorf("envrun: decode diffs: unknown direction %.40q", d.Direction)
		}
	}
	return out, nil
}
