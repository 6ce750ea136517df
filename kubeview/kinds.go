package kubeview

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Kind is one entry of the closed kind registry: the only kinds deploy-web
// caches, shows and lets a user address. Secret is deliberately absent.
type Kind struct {
	Group, Version, Kind, Resource string
	// Health says whether HealthOf has a rule for the kind.
	Health   bool
	informer func(informers.SharedInformerFactory) cache.SharedIndexInformer
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
		}},
		{"apps", "v1", "StatefulSet", "statefulsets", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().StatefulSets().Informer()
		}},
		{"apps", "v1", "DaemonSet", "daemonsets", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().DaemonSets().Informer()
		}},
		{"apps", "v1", "ReplicaSet", "replicasets", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().ReplicaSets().Informer()
		}},
		{"", "v1", "Pod", "pods", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Pods().Informer()
		}},
		{"", "v1", "Service", "services", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Services().Informer()
		}},
		{"networking.k8s.io", "v1", "Ingress", "ingresses", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Networking().V1().Ingresses().Informer()
		}},
		{"autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Autoscaling().V2().HorizontalPodAutoscalers().Informer()
		}},
		{"policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", false, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Policy().V1().PodDisruptionBudgets().Informer()
		}},
		{"", "v1", "ConfigMap", "configmaps", false, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		}},
		{"batch", "v1", "Job", "jobs", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Batch().V1().Jobs().Informer()
		}},
		{"batch", "v1", "CronJob", "cronjobs", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Batch().V1().CronJobs().Informer()
		}},
		{"", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().PersistentVolumeClaims().Informer()
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
