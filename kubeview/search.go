package kubeview

import (
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/hanzoai/deploy-web/search"
)

// The fleet-wide search (package search) reads the caches through a small
// index kept beside the application list: per App, the objects of its
// tree (search.Object: kind, name, ref, images, labels), rebuilt when the
// list recomputes the App's row (an event touched the App or one of its
// objects), so a search makes no API call and walks no owner index.
//
// The cache strips every label but the instance label (stripObject), so
// the labels a search matches are kept apart, by object UID, before the
// strip (labelStore): bounded per object, and one map per distinct label
// set (the pods of a ReplicaSet share one).

// Bounds of the labels kept for the search, per object. The apiserver
// already refuses longer keys and values; the bounds keep a hostile or
// unusual object from growing the store anyway.
const (
	maxSearchLabels     = 32
	maxSearchLabelKey   = 317 // prefix (253) + "/" + name (63)
	maxSearchLabelValue = 63
)

// labelStore holds the labels of each cached object by UID, each distinct
// label set once (counted, dropped with its last object).
type labelStore struct {
	mu    sync.RWMutex
	byUID map[types.UID]*labelSet
	sets  map[string]*labelSet
}

type labelSet struct {
	key  string
	m    map[string]string
	refs int
}

func newLabelStore() *labelStore {
	return &labelStore{byUID: map[types.UID]*labelSet{}, sets: map[string]*labelSet{}}
}

// set records obj's labels (before the cache strips them). A nil store
// (a Cache built by hand in a test) keeps nothing.
func (s *labelStore) set(obj any) {
	if s == nil {
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	labels := boundLabels(m.GetLabels())
	key := labelKey(labels)
	uid := m.GetUID()
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.byUID[uid]
	if old != nil && old.key == key {
		return
	}
	s.dropLocked(uid, old)
	if len(labels) == 0 {
		return
	}
	ls := s.sets[key]
	if ls == nil {
		ls = &labelSet{key: key, m: labels}
		s.sets[key] = ls
	}
	ls.refs++
	s.byUID[uid] = ls
}

// forget drops a deleted object's labels.
func (s *labelStore) forget(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(m.GetUID(), s.byUID[m.GetUID()])
}

func (s *labelStore) dropLocked(uid types.UID, ls *labelSet) {
	if ls == nil {
		return
	}
	delete(s.byUID, uid)
	if ls.refs--; ls.refs == 0 {
		delete(s.sets, ls.key)
	}
}

// get returns an object's labels (shared: never modified).
func (s *labelStore) get(uid types.UID) map[string]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if ls := s.byUID[uid]; ls != nil {
		return ls.m
	}
	return nil
}

// boundLabels is a copy of labels within the bounds: the first
// maxSearchLabels keys in order, oversized entries left out.
func boundLabels(labels map[string]string) map[string]string {
	if len(labels) == 0 {
		return nil
	}
	keys := make([]string, 0, len(labels))
	for k, v := range labels {
		if len(k) <= maxSearchLabelKey && len(v) <= maxSearchLabelValue {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = keys[:min(len(keys), maxSearchLabels)]
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[strings.Clone(k)] = strings.Clone(labels[k])
	}
	return out
}

// labelKey is a label set's identity: its sorted pairs, NUL-separated
// (a byte no key or value holds).
func labelKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}

// indexApps rebuilds the search objects of the Apps at keys from the
// caches (an App that is gone leaves the index) and puts them into the
// index in one step. Called by the list's recompute, so the index follows
// the same events as the rows.
func (c *Cache) indexApps(keys []string) {
	if c.search == nil { // a Cache built by hand in a test
		return
	}
	var set []search.App
	var drop []search.AppKey
	for _, key := range keys {
		ns, name, _ := strings.Cut(key, "/")
		if _, ok := c.ns[ns]; !ok {
			continue
		}
		app, err := c.LookupApp(ns, name)
		if err != nil {
			drop = append(drop, search.AppKey{Namespace: ns, Name: name})
			continue
		}
		t := buildTree(app, c, c.opts.AppResource.GroupVersion())
		objs := make([]search.Object, len(t.Nodes))
		for i, n := range t.Nodes {
			objs[i] = search.Object{Group: n.Group, Kind: n.Kind, Name: n.Name, Images: n.Info.Images, Labels: c.labels.get(types.UID(n.UID))}
		}
		set = append(set, search.App{Namespace: app.GetNamespace(), Name: app.GetName(), Objects: objs})
	}
	c.search.Update(set, drop)
}

// SearchApps yields the Apps that may match q with the objects of their
// trees, in the list's order (namespace, then name), from the index
// (search.Source).
func (c *Cache) SearchApps(q *search.Query, yield func(search.App) bool) {
	c.search.SearchApps(q, yield)
}
