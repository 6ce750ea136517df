package release

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestScaleRetriesAConflict: the Deployment controller writes status
// between the scale's read and its guarded patch (a restart just rolled
// the pods), so the first patch is a conflict; the scale reads again and
// succeeds, its "before" the replicas it replaced. Conflicts that never
// end are still ErrConflict.
func TestScaleRetriesAConflict(t *testing.T) {
	for _, tt := range []struct {
		name      string
		conflicts int32
		wantErr   bool
	}{
		{"one conflict", 1, false},
		{"conflicts for ever", 1000, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
			dep := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "worker", "namespace": "shop", "resourceVersion": "7"}, "spec": map[string]any{"replicas": int64(3)}}}
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "DeploymentList"}, dep)
			var reads, patches atomic.Int32
			dyn.PrependReactor("get", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.GetSubresource() != "scale" {
					return false, nil, nil
				}
				n := reads.Add(1)
				return true, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
					"metadata": map[string]any{"name": "worker", "namespace": "shop", "resourceVersion": string(rune('0' + n))},
					"spec":     map[string]any{"replicas": int64(3)}}}, nil
			})
			dyn.PrependReactor("patch", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.GetSubresource() != "scale" {
					return false, nil, nil
				}
				if patches.Add(1) <= tt.conflicts {
					return true, nil, apierrors.NewConflict(gvr.GroupResource(), "worker", nil)
				}
				return true, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
					"metadata": map[string]any{"name": "worker", "namespace": "shop"}, "spec": map[string]any{"replicas": int64(5)}}}, nil
			})
			r := New(dyn, kubefake.NewClientset().CoreV1(), schema.GroupVersionResource{Group: "hanzo.ai", Version: "v1", Resource: "apps"}, nil, slog.New(slog.DiscardHandler))
			res, err := r.Operate(context.Background(), Operation{Op: OpScale, App: "worker", Replicas: 5,
				Target: Target{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "shop", Name: "worker"}}, "ada")
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Operate with endless conflicts = %+v, want an error", res)
				}
				if patches.Load() < 2 {
					t.Errorf("patches = %d, want the conflict retried", patches.Load())
				}
				return
			}
			if err != nil {
				t.Fatalf("Operate: %v", err)
			}
			if reads.Load() != 2 || patches.Load() != 2 {
				t.Errorf("scale reads %d, patches %d; want each twice (read again after the conflict)", reads.Load(), patches.Load())
			}
			if !res.Changed || res.Before != "3 replicas" || res.After != "5 replicas" {
				t.Errorf("result = %+v, want changed, 3 replicas -> 5 replicas", res)
			}
		})
	}
}
