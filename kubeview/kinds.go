package kubeview

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Kind is one entry of the closed kind registry: the only kinds deploy-web
// caches, shows and lets a user address. Secret is deliberately absent.
type Kind struct {
	Group, Version, Kind, Resource string
	// Health says whether HealthOf has a rule for the kind.
	Health   bool
	informer func(informers.SharedInformerFactory) cache.SharedIndexInformer
	// get reads one object of the kind from the apiserver (the resource
	// panel's live manifest; the cache keeps only what the pages need).
	get func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error)
}

// GroupKind returns "apps/Deployment", or "Service" for the core group.
func (k Kind) GroupKind() string {
	if k.Group == "" {
		return k.Kind
	}
	return k.Group + "/" + k.Kind
}

// GVR returns the kind's resource.
func (k Kind) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource}
}

// Kinds returns the registry, in a fixed order (workloads first).
func Kinds() []Kind {
	return []Kind{
		{"apps", "v1", "Deployment", "deployments", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().Deployments().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"apps", "v1", "StatefulSet", "statefulsets", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().StatefulSets().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"apps", "v1", "DaemonSet", "daemonsets", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().DaemonSets().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"apps", "v1", "ReplicaSet", "replicasets", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().ReplicaSets().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"", "v1", "Pod", "pods", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Pods().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"", "v1", "Service", "services", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Services().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"networking.k8s.io", "v1", "Ingress", "ingresses", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Networking().V1().Ingresses().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.NetworkingV1().Ingresses(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Autoscaling().V2().HorizontalPodAutoscalers().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", false, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Policy().V1().PodDisruptionBudgets().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"", "v1", "ConfigMap", "configmaps", false, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"batch", "v1", "Job", "jobs", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Batch().V1().Jobs().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"batch", "v1", "CronJob", "cronjobs", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Batch().V1().CronJobs().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.BatchV1().CronJobs(ns).Get(ctx, name, metav1.GetOptions{})
		}},
		{"", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().PersistentVolumeClaims().Informer()
		}, func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
			return cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
		}},
	}
}

// LookupKind finds a registry kind by group and kind name.
func LookupKind(group, kind string) (Kind, bool) {
	for _, k := range Kinds() {
		if k.Group == group && k.Kind == kind {
			return k, true
		}
	}
	return Kind{}, false
}
