package kubeview

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/cache"
)

// InformerState is one informer's freshness, for the metrics endpoint.
type InformerState struct {
	Namespace, Kind string
	// Synced is true once the informer's initial list is in the cache.
	Synced bool
	// Forbidden is true when the service account may not read the kind
	// (the cache shows a warning instead).
	Forbidden bool
	// LastEvent is when the informer last delivered an add, update or
	// delete, resyncs included (zero: none yet, e.g. an empty namespace).
	LastEvent time.Time
}

// InformerStates returns the state of every informer (the registry kinds
// and Apps of each platform namespace), sorted by namespace and kind.
// It only reads.
func (c *Cache) InformerStates() []InformerState {
	c.mu.Lock()
	forbidden := maps2keys(c.forbidden)
	c.mu.Unlock()
	var out []InformerState
	add := func(ns, kind string, inf cache.SharedIndexInformer) {
		st := InformerState{Namespace: ns, Kind: kind, Synced: inf.HasSynced(), Forbidden: slices.Contains(forbidden, ns+"/"+kind)}
		if t := c.lastEvent[ns+"/"+kind]; t != nil {
			if n := t.Load(); n != 0 {
				st.LastEvent = time.Unix(0, n)
			}
		}
		out = append(out, st)
	}
	for ns, nc := range c.ns {
		add(ns, "App", nc.apps)
		for gk, inf := range nc.kinds {
			add(ns, kindOf(gk), inf)
		}
	}
	slices.SortFunc(out, func(a, b InformerState) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind))
	})
	return out
}

// eventHandler is the one event handler of the informer of kind in ns:
// it records when the informer last delivered anything (for
// InformerStates), forgets a deleted object's drift summary and marks the
// Apps an event touches dirty (fleet.touch). One handler, not one per
// concern: client-go gives each handler of an informer a listener of its
// own, with two goroutines and a buffer of pending notifications that
// grows to the largest burst (the initial list) and stays.
// It is called from New only, so the map is read-only afterwards.
func (c *Cache) eventHandler(ns, kind string) cache.ResourceEventHandler {
	t := new(atomic.Int64)
	c.lastEvent[ns+"/"+kind] = t
	clock := func() { t.Store(time.Now().UnixNano()) }
	fleet := c.fleet.handler()
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			clock()
			fleet.OnAdd(obj, false)
		},
		UpdateFunc: func(old, obj any) {
			clock()
			fleet.OnUpdate(old, obj)
		},
		DeleteFunc: func(obj any) {
			clock()
			c.drift.forget(obj)
			c.labels.forget(obj)
			fleet.OnDelete(obj)
		},
	}
}
