package audit

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// Start fills the index of record heads from a metadata-only informer
// (labels and annotations; the manifests never cross the watch) and keeps
// it current until ctx ends; from then on List, Get's chain and retention
// read the index. It returns once the index has synced, or with ctx's
// error. Call it once, at start-up.
func (s *Store) Start(ctx context.Context) error {
	g, err := s.signingKey(ctx)
	if err != nil {
		return err
	}
	ix := newIndex(g)
	inf := metadatainformer.NewFilteredMetadataInformer(s.meta, configMaps, s.ns, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = indexSelector }).Informer()
	if err := inf.SetTransform(func(o any) (any, error) {
		if m, ok := o.(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
		return o, nil
	}); err != nil {
		return fmt.Errorf("audit: index: %w", err)
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { putObject(ix, o) },
		UpdateFunc: func(_, o any) { putObject(ix, o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if m, ok := o.(metav1.Object); ok {
				ix.drop(m)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("audit: index: %w", err)
	}
	go inf.RunWithContext(ctx)
	// The registration's HasSynced, not the informer's: it also waits for
	// the initial list to reach the handler, which fills the index.
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return fmt.Errorf("audit: index of records in %s did not sync: %w", s.ns, context.Cause(ctx))
	}
	s.idx.Store(ix)
	return nil
}

func putObject(ix *index, o any) {
	if m, ok := o.(metav1.Object); ok {
		ix.put(m)
	}
}
