package objrules

// Health of live objects, matching ArgoCD's gitops-engine rules as written
// down in HEALTH.md. Every rule is a pure function of one object: no client,
// no clock, no lookups of related objects.

import (
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hanzoai/deploy-web/appcr"
)

// HealthStatus is an ArgoCD health code.
type HealthStatus string

// The ArgoCD health codes, from best to worst.
const (
	// HealthHealthy is an object in the state its spec asks for.
	HealthHealthy HealthStatus = "Healthy"
	// HealthSuspended is an object paused or suspended on purpose.
	HealthSuspended HealthStatus = "Suspended"
	// HealthProgressing is an object not yet healthy that may still become so.
	HealthProgressing HealthStatus = "Progressing"
	// HealthMissing is an object that does not exist in the cluster.
	HealthMissing HealthStatus = "Missing"
	// HealthDegraded is an object that failed or cannot become healthy in time.
	HealthDegraded HealthStatus = "Degraded"
	// HealthUnknown is an object whose health could not be assessed.
	HealthUnknown HealthStatus = "Unknown"
)

// Rank places a code in the order Healthy < Suspended < Progressing <
// Missing < Degraded < Unknown. The empty code (no health) ranks below
// Healthy; a code outside the list ranks as Unknown.
func (a HealthStatus) Rank() int {
	switch a {
	case "":
		return -1
	case HealthHealthy:
		return 0
	case HealthSuspended:
		return 1
	case HealthProgressing:
		return 2
	case HealthMissing:
		return 3
	case HealthDegraded:
		return 4
	}
	return 5 // HealthUnknown and anything unrecognised.
}

// Worse reports whether a is worse than b in the order
// Healthy < Suspended < Progressing < Missing < Degraded < Unknown.
// The empty code (an object with no health) is better than every code;
// an unrecognised code counts as Unknown.
func (a HealthStatus) Worse(b HealthStatus) bool {
	return a.Rank() > b.Rank()
}

// Health is the health of one object or of an application: a code and a
// message for the operator.
type Health struct {
	Status  HealthStatus `json:"status"`
	Message string       `json:"message,omitempty"`
}

// HealthOf returns the health of one object, or ok=false for a kind with no
// rule (no health, skipped in aggregation).
//
// It accepts the typed objects *appsv1.Deployment, *appsv1.ReplicaSet,
// *appsv1.StatefulSet, *appsv1.DaemonSet, *corev1.Pod, *batchv1.Job,
// *batchv1.CronJob, *corev1.Service, *networkingv1.Ingress,
// *corev1.PersistentVolumeClaim, *autoscalingv2.HorizontalPodAutoscaler and
// *autoscalingv1.HorizontalPodAutoscaler, and an *unstructured.Unstructured
// of any of those kinds, of an apiregistration.k8s.io APIService, or of the
// default App CR (hanzo.ai/v1 App; an App of another resource, chosen with
// Options.AppResource, has no rule here: the Cache applies AppCRHealth with
// its version). Unstructured objects are dispatched on group and
// kind as ArgoCD does; an object of a known kind that cannot be read (an
// unsupported version, a field of the wrong type) is Unknown with the error.
//
// As in ArgoCD, an object with metadata.deletionTimestamp set is Progressing
// ("Pending deletion") whatever its kind, even a kind that has no rule.
// A nil object has no health.
func HealthOf(obj runtime.Object) (Health, bool) {
	if healthIsNil(obj) {
		return Health{}, false
	}
	if m, err := meta.Accessor(obj); err == nil {
		if h, deleting := healthPendingDeletion(m); deleting {
			return h, true
		}
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return DeploymentHealth(o), true
	case *appsv1.ReplicaSet:
		return ReplicaSetHealth(o), true
	case *appsv1.StatefulSet:
		return StatefulSetHealth(o), true
	case *appsv1.DaemonSet:
		return DaemonSetHealth(o), true
	case *corev1.Pod:
		return PodHealth(o), true
	case *batchv1.Job:
		return JobHealth(o), true
	case *batchv1.CronJob:
		return CronJobHealth(o), true
	case *corev1.Service:
		return ServiceHealth(o), true
	case *networkingv1.Ingress:
		return IngressHealth(o), true
	case *corev1.PersistentVolumeClaim:
		return PersistentVolumeClaimHealth(o), true
	case *autoscalingv2.HorizontalPodAutoscaler:
		return HorizontalPodAutoscalerHealth(o), true
	case *autoscalingv1.HorizontalPodAutoscaler:
		return HorizontalPodAutoscalerV1Health(o), true
	case *unstructured.Unstructured:
		rule, ok := healthUnstructuredRules[o.GroupVersionKind().GroupKind()]
		if !ok {
			return Health{}, false
		}
		return rule(o), true
	}
	return Health{}, false
}

// healthUnstructuredRules maps each group and kind that has a rule to the
// rule for its unstructured form; HealthOf applies the deletion rule before
// looking it up. As in ArgoCD the lookup ignores the
// version, so a known kind in a version the rule cannot read is Unknown
// rather than skipped. The extensions group is listed for the same reason:
// its Deployments, ReplicaSets, DaemonSets and Ingresses are no longer
// served and read as Unknown.
var healthUnstructuredRules = map[schema.GroupKind]func(*unstructured.Unstructured) Health{
	{Group: "apps", Kind: "Deployment"}: healthDeploymentFromUnstructured,
	{Group: "apps", Kind: "ReplicaSet"}: healthReplicaSetFromUnstructured,
	{Group: "apps", Kind: "StatefulSet"}: func(u *unstructured.Unstructured) Health {
		return healthFromUnstructured(u, appsv1.SchemeGroupVersion, StatefulSetHealth)
	},
	{Group: "apps", Kind: "DaemonSet"}:            healthDaemonSetFromUnstructured,
	{Group: "extensions", Kind: "Deployment"}:     healthDeploymentFromUnstructured,
	{Group: "extensions", Kind: "ReplicaSet"}:     healthReplicaSetFromUnstructured,
	{Group: "extensions", Kind: "DaemonSet"}:      healthDaemonSetFromUnstructured,
	{Group: "extensions", Kind: "Ingress"}:        healthIngressFromUnstructured,
	{Group: "networking.k8s.io", Kind: "Ingress"}: healthIngressFromUnstructured,
	{Group: "", Kind: "Pod"}: func(u *unstructured.Unstructured) Health {
		return healthFromUnstructured(u, corev1.SchemeGroupVersion, PodHealth)
	},
	{Group: "", Kind: "Service"}: func(u *unstructured.Unstructured) Health {
		return healthFromUnstructured(u, corev1.SchemeGroupVersion, ServiceHealth)
	},
	{Group: "", Kind: "PersistentVolumeClaim"}: func(u *unstructured.Unstructured) Health {
		return healthFromUnstructured(u, corev1.SchemeGroupVersion, PersistentVolumeClaimHealth)
	},
	{Group: "batch", Kind: "Job"}: func(u *unstructured.Unstructured) Health {
		return healthFromUnstructured(u, batchv1.SchemeGroupVersion, JobHealth)
	},
	{Group: "batch", Kind: "CronJob"}: healthCronJobFromUnstructured,
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: func(u *unstructured.Unstructured) Health {
		if u.GroupVersionKind().Version == autoscalingv1.SchemeGroupVersion.Version {
			return healthFromUnstructured(u, autoscalingv1.SchemeGroupVersion, HorizontalPodAutoscalerV1Health)
		}
		return healthFromUnstructured(u, autoscalingv2.SchemeGroupVersion, HorizontalPodAutoscalerHealth)
	},
	{Group: healthAPIServiceGroupVersion.Group, Kind: "APIService"}: APIServiceHealth,
	appcr.Kind.GroupKind(): func(u *unstructured.Unstructured) Health {
		return AppCRHealth(u, appcr.GroupVersion)
	},
}

func healthDeploymentFromUnstructured(u *unstructured.Unstructured) Health {
	return healthFromUnstructured(u, appsv1.SchemeGroupVersion, DeploymentHealth)
}

func healthReplicaSetFromUnstructured(u *unstructured.Unstructured) Health {
	return healthFromUnstructured(u, appsv1.SchemeGroupVersion, ReplicaSetHealth)
}

func healthDaemonSetFromUnstructured(u *unstructured.Unstructured) Health {
	return healthFromUnstructured(u, appsv1.SchemeGroupVersion, DaemonSetHealth)
}

func healthIngressFromUnstructured(u *unstructured.Unstructured) Health {
	return healthFromUnstructured(u, networkingv1.SchemeGroupVersion, IngressHealth)
}

// healthFromUnstructured converts u to the typed object T of version gv and
// applies rule. HealthOf has already applied the deletion rule, so an object
// pending deletion is Progressing even when it cannot be read.
func healthFromUnstructured[T any](u *unstructured.Unstructured, gv schema.GroupVersion, rule func(*T) Health) Health {
	if err := healthCheckVersion(u, gv); err != nil {
		return healthUnknown(err)
	}
	obj := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return healthUnknown(fmt.Errorf("kubeview: read %s %s: %w", u.GetKind(), healthObjectName(u), err))
	}
	return rule(obj)
}

// healthCheckVersion returns an error unless u is of version gv.
func healthCheckVersion(u *unstructured.Unstructured, gv schema.GroupVersion) error {
	if got := u.GroupVersionKind().GroupVersion(); got != gv {
		return fmt.Errorf("kubeview: %s %s: unsupported apiVersion %q, want %q", u.GetKind(), healthObjectName(u), got, gv)
	}
	return nil
}

func healthObjectName(m metav1.Object) string {
	if m.GetNamespace() == "" {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}

func healthUnknown(err error) Health {
	return Health{Status: HealthUnknown, Message: err.Error()}
}

// healthIsNil reports whether obj is nil or a nil pointer.
func healthIsNil(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// healthPendingDeletion applies the rule that comes before every kind rule:
// an object with a deletion timestamp is Progressing.
func healthPendingDeletion(m metav1.Object) (Health, bool) {
	if m.GetDeletionTimestamp() == nil {
		return Health{}, false
	}
	return Health{Status: HealthProgressing, Message: "Pending deletion"}, true
}

// healthCondition is the part of a status condition the rules read. It
// decodes the conditions of an HPA v1 annotation, an APIService and the
// App CR.
type healthCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// healthStatusOf reads status.observedGeneration and status.conditions of an
// unstructured object.
type healthStatusOf struct {
	ObservedGeneration int64             `json:"observedGeneration,omitempty"`
	Conditions         []healthCondition `json:"conditions,omitempty"`
}

// healthReadStatus reads the status of u, after checking its version.
// A missing status reads as empty.
func healthReadStatus(u *unstructured.Unstructured, gv schema.GroupVersion) (healthStatusOf, error) {
	var st healthStatusOf
	if err := healthCheckVersion(u, gv); err != nil {
		return st, err
	}
	m, _, err := unstructured.NestedMap(u.Object, "status")
	if err == nil {
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(m, &st)
	}
	if err != nil {
		return st, fmt.Errorf("kubeview: read %s %s: %w", u.GetKind(), healthObjectName(u), err)
	}
	return st, nil
}

func (st healthStatusOf) condition(typ string) (healthCondition, bool) {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return healthCondition{}, false
}

// healthReasonMessage joins a condition's reason and message for display.
func healthReasonMessage(c healthCondition) string {
	switch {
	case c.Reason == "":
		return c.Message
	case c.Message == "":
		return c.Reason
	}
	return c.Reason + ": " + c.Message
}
