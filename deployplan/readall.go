package deployplan

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Reading many objects of one kind: at least listThreshold of them are
// listed (pages of listPage, at most maxListPages) instead of read one by
// one, so an apply's reads under its lock cost a request per kind, not
// per object, of the engine's request budget (ClientQPS, ClientBurst).
const (
	listThreshold = 4
	listPage      = 500
	maxListPages  = 10
)

// readAll returns every object's live state (nil when it does not exist,
// as get) and the error of its read; results[i] is objs[i]'s. Objects of
// one kind and namespace, at least listThreshold of them, are read by one
// list; a list that fails or runs past maxListPages falls back to reading
// each object (get). Secrets are always read one by one, as metadata.
func (c *clients) readAll(ctx context.Context, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, []error) {
	live := make([]*unstructured.Unstructured, len(objs))
	errs := make([]error, len(objs))
	type group struct {
		gvr schema.GroupVersionResource
		ns  string
		idx []int
	}
	var groups []*group
	byGVR := map[string]*group{}
	var single []int
	for i, o := range objs {
		if isSecret(o) {
			single = append(single, i)
			continue
		}
		_, gvr, err := c.resource(o)
		if err != nil {
			single = append(single, i) // get reports the error
			continue
		}
		k := gvr.String() + "/" + o.GetNamespace()
		g, ok := byGVR[k]
		if !ok {
			g = &group{gvr: gvr, ns: o.GetNamespace()}
			byGVR[k] = g
			groups = append(groups, g)
		}
		g.idx = append(g.idx, i)
	}
	var listed []*group
	for _, g := range groups {
		if len(g.idx) < listThreshold {
			single = append(single, g.idx...)
		} else {
			listed = append(listed, g)
		}
	}
	// One task per list, then one per single read; a list that falls back
	// reads its objects in its own task.
	forEachBounded(len(listed)+len(single), dryRunParallelism, func(t int) {
		if t >= len(listed) {
			i := single[t-len(listed)]
			live[i], errs[i] = c.get(ctx, objs[i])
			return
		}
		g := listed[t]
		want := map[string]int{}
		for _, i := range g.idx {
			want[objs[i].GetName()] = i
		}
		if c.list(ctx, g.gvr, g.ns, want, live) {
			return
		}
		for _, i := range g.idx {
			live[i], errs[i] = c.get(ctx, objs[i])
		}
	})
	return live, errs
}

// list reads the objects of gvr in ns whose names want holds into
// live[want[name]], and says whether it could (no error, within
// maxListPages); the objects not listed do not exist.
func (c *clients) list(ctx context.Context, gvr schema.GroupVersionResource, ns string, want map[string]int, live []*unstructured.Unstructured) bool {
	found := map[int]*unstructured.Unstructured{}
	cont := ""
	for range maxListPages {
		l, err := c.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{Limit: listPage, Continue: cont})
		if err != nil {
			return false
		}
		for i := range l.Items {
			if j, ok := want[l.Items[i].GetName()]; ok {
				found[j] = &l.Items[i]
			}
		}
		if cont = l.GetContinue(); cont == "" {
			for j, u := range found {
				live[j] = u
			}
			return true
		}
	}
	return false
}
