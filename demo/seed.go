package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
)

// seed creates the demo fleet and plays each App's release history, waiting
// for each settled release to roll out before the next, so that every App
// has real ReplicaSet history. Apps are seeded concurrently.
func seed(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, apps []seedApp, progress func(string, ...any)) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(apps))
	for _, a := range apps {
		wg.Go(func() {
			if err := seedOne(ctx, cs, dyn, a); err != nil {
				errs <- fmt.Errorf("demo: seed %s/%s: %w", a.namespace, a.name, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	progress("seeded %d apps", len(apps))
	return nil
}

func seedOne(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, a seedApp) error {
	client := dyn.Resource(appcr.Resource).Namespace(a.namespace)
	for i, rel := range a.releases {
		spec := maps.Clone(a.base)
		maps.Copy(spec, rel.spec)
		if i == 0 {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": appcr.GroupVersion.String(), "kind": appcr.Kind.Kind,
				"metadata": map[string]any{"name": a.name, "namespace": a.namespace, "labels": map[string]any{"team": a.namespace}},
				"spec":     spec,
			}}
			if _, err := client.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				return err
			}
		} else {
			// Replace the whole spec: fields a release drops go away.
			patch, err := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec", "value": spec}})
			if err != nil {
				return err
			}
			if _, err := client.Patch(ctx, a.name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
				return err
			}
		}
		if !rel.settle {
			continue
		}
		if err := waitRolledOut(ctx, cs, a.namespace, a.name, spec["image"].(string)); err != nil {
			return fmt.Errorf("release %d: %w", i+1, err)
		}
	}
	return nil
}

// waitRolledOut waits until the App's Deployment runs image and its rollout
// is complete (a paused Deployment: observed).
func waitRolledOut(ctx context.Context, cs kubernetes.Interface, ns, name, image string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && len(d.Spec.Template.Spec.Containers) > 0 && d.Spec.Template.Spec.Containers[0].Image == image && complete(d) {
			return nil
		}
		if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("rollout of %s: %w", image, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func complete(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	if s.ObservedGeneration < d.Generation {
		return false
	}
	if d.Spec.Paused {
		return true
	}
	return s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want
}
