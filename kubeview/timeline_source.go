package kubeview

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hanzoai/deploy-web/appcr"
)

// This file is what a consumer of the App's changes (package timeline's
// feed, wired by the command) reads: which Apps an event touched since it
// last asked, an App's pods, and the App an object (an Event's involved
// object) belongs to.

// touchedApps collects the keys ("namespace/name") of the Apps whose rows
// were recomputed since the last Take, whether the row changed or not: a
// pod's restart leaves the row as it was but is a change to a timeline.
// Bounded by the Apps of the fleet (keys of objects that are not Apps are
// never added).
type touchedApps struct {
	c    chan struct{} // cap 1: a signal that keys are waiting
	keys map[string]struct{}
}

// Touched returns a channel that receives a value when Apps were touched
// since the last TakeTouched.
func (c *Cache) Touched() <-chan struct{} { return c.fleet.touched.c }

// TakeTouched returns the keys ("namespace/name") of the Apps touched
// since the last call (removed ones included), sorted, and forgets them.
func (c *Cache) TakeTouched() []string {
	f := c.fleet
	f.dmu.Lock()
	keys := f.touched.keys
	f.touched.keys = map[string]struct{}{}
	f.dmu.Unlock()
	return slices.Sorted(maps.Keys(keys))
}

// markTouched records the keys of recomputed Apps (present or removed).
func (f *fleet) markTouched(keys []string) {
	if len(keys) == 0 {
		return
	}
	f.dmu.Lock()
	for _, k := range keys {
		f.touched.keys[k] = struct{}{}
	}
	f.dmu.Unlock()
	select {
	case f.touched.c <- struct{}{}:
	default:
	}
}

// AppPods returns the cached pods of an App's tree (pods whose owner chain
// leads to the App), in no particular order; nil for an unknown App.
func (c *Cache) AppPods(namespace, app string) []*corev1.Pod { return c.appPods(namespace, app) }

// AppOf returns the name of the App in namespace that the cached object
// (group, kind, name) belongs to: the App itself, the App its owner chain
// leads to, or the App its instance label names (when that App exists).
// False for an object the caches do not hold (Secrets, Events) or that
// belongs to no App.
func (c *Cache) AppOf(namespace, group, kind, name string) (string, bool) {
	if _, ok := c.ns[namespace]; !ok {
		return "", false
	}
	isApp := func(name string) bool { _, ok := c.Row(namespace, name); return ok }
	appGroup := c.opts.AppResource.Group
	if group == appGroup && isApp(name) {
		return name, true
	}
	gk := kind
	if group != "" {
		gk = group + "/" + kind
	}
	obj := c.get(namespace, gk, name)
	for depth := 0; obj != nil && depth < maxTreeDepth; depth++ {
		m, err := meta.Accessor(obj)
		if err != nil {
			return "", false
		}
		var next any
		for _, r := range m.GetOwnerReferences() {
			gv, err := schema.ParseGroupVersion(r.APIVersion)
			if err != nil {
				continue
			}
			if gv.Group == appGroup {
				if isApp(r.Name) {
					return r.Name, true
				}
				continue
			}
			owner := r.Kind
			if gv.Group != "" {
				owner = gv.Group + "/" + r.Kind
			}
			if o := c.get(namespace, owner, r.Name); o != nil {
				next = o
				break
			}
		}
		if next == nil {
			if v := m.GetLabels()[appcr.InstanceLabel]; v != "" && isApp(v) {
				return v, true
			}
			return "", false
		}
		obj = next
	}
	return "", false
}
