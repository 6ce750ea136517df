package operator

import (
	"crypto/sha256"
	"encoding/hex"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"

	"github.com/hanzoai/deploy-web/appcr"
)

// Child kinds, as the operator's caches and errors name them.
const (
	kindDeployment = "deployment"
	kindService    = "service"
	kindConfigMap  = "configmap"
	kindIngress    = "ingress"
	kindHPA        = "horizontalpodautoscaler"
	kindPDB        = "poddisruptionbudget"
)

// appliedHashAnnotation exists only in the operator's caches: leanChild
// replaces a child's last-applied configuration (often a kilobyte or more)
// by its SHA-256 under this key. It is never written to the cluster.
const appliedHashAnnotation = "operator.hanzo.ai/applied-sha256"

// child is one rendered child and how to write it.
type child struct {
	kind string
	// present: the App asks for this child.
	present bool
	// lastApplied is the rendered last-applied configuration ("" when absent).
	lastApplied string
	apply       func() error
	// destroy removes a child the App no longer asks for; nil for the
	// children every App has.
	destroy func() error
}

type action int

const (
	actionNone action = iota
	actionApply
	actionDelete
)

func (a action) String() string {
	switch a {
	case actionApply:
		return "apply"
	case actionDelete:
		return "delete"
	}
	return "none"
}

// childAction decides what reconcile does with one child, from the lean
// cached copy (nil: none), the App's uid, whether the App asks for the child
// and the last-applied configuration it would apply. A child is applied when
// it is missing, not controlled by this App, carries another applied
// configuration, or force is set (a sync request); it is deleted only when it
// exists and is no longer asked for. Otherwise nothing is sent.
func childAction(live metav1.Object, appUID types.UID, present bool, lastApplied string, force bool) action {
	if !present {
		if live != nil {
			return actionDelete
		}
		return actionNone
	}
	if force || live == nil || !controlledBy(live, appUID) {
		return actionApply
	}
	if live.GetAnnotations()[appliedHashAnnotation] != hashOf(lastApplied) {
		return actionApply
	}
	return actionNone
}

func controlledBy(o metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(o)
	return ref != nil && ref.UID == uid
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// lastAppliedOf returns the last-applied configuration Render put on a
// rendered child ("" for a child that is not rendered).
func lastAppliedOf(obj any) string {
	var ann map[string]string
	switch o := obj.(type) {
	case *appsv1ac.DeploymentApplyConfiguration:
		if o != nil && o.ObjectMetaApplyConfiguration != nil {
			ann = o.Annotations
		}
	case *corev1ac.ServiceApplyConfiguration:
		if o != nil && o.ObjectMetaApplyConfiguration != nil {
			ann = o.Annotations
		}
	case *corev1ac.ConfigMapApplyConfiguration:
		if o != nil && o.ObjectMetaApplyConfiguration != nil {
			ann = o.Annotations
		}
	case *networkingv1ac.IngressApplyConfiguration:
		if o != nil && o.ObjectMetaApplyConfiguration != nil {
			ann = o.Annotations
		}
	case *autoscalingv2ac.HorizontalPodAutoscalerApplyConfiguration:
		if o != nil && o.ObjectMetaApplyConfiguration != nil {
			ann = o.Annotations
		}
	case *policyv1ac.PodDisruptionBudgetApplyConfiguration:
		if o != nil && o.ObjectMetaApplyConfiguration != nil {
			ann = o.Annotations
		}
	}
	return ann[appcr.LastAppliedAnnotation]
}

// leanChild is the informer transform of the operator's child caches: it
// keeps what reconcile reads (identity, labels, owner references, the hash
// of the last-applied configuration) and, for Deployments, the spec and
// status the App's status is derived from. Everything else (managed fields,
// the last-applied text, Service, ConfigMap, Ingress, HPA and PDB bodies) is
// dropped, so 10,000 Apps' children cost the operator little memory.
func leanChild(obj any) (any, error) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return &appsv1.Deployment{TypeMeta: o.TypeMeta, ObjectMeta: leanMeta(o.ObjectMeta), Spec: o.Spec, Status: o.Status}, nil
	case *corev1.Service:
		return &corev1.Service{TypeMeta: o.TypeMeta, ObjectMeta: leanMeta(o.ObjectMeta)}, nil
	case *corev1.ConfigMap:
		return &corev1.ConfigMap{TypeMeta: o.TypeMeta, ObjectMeta: leanMeta(o.ObjectMeta)}, nil
	case *networkingv1.Ingress:
		return &networkingv1.Ingress{TypeMeta: o.TypeMeta, ObjectMeta: leanMeta(o.ObjectMeta)}, nil
	case *autoscalingv2.HorizontalPodAutoscaler:
		return &autoscalingv2.HorizontalPodAutoscaler{TypeMeta: o.TypeMeta, ObjectMeta: leanMeta(o.ObjectMeta)}, nil
	case *policyv1.PodDisruptionBudget:
		return &policyv1.PodDisruptionBudget{TypeMeta: o.TypeMeta, ObjectMeta: leanMeta(o.ObjectMeta)}, nil
	}
	return obj, nil // tombstones and anything else pass through
}

func leanMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, Labels: m.Labels, OwnerReferences: m.OwnerReferences,
		DeletionTimestamp: m.DeletionTimestamp,
	}
	if la, ok := m.Annotations[appcr.LastAppliedAnnotation]; ok {
		out.Annotations = map[string]string{appliedHashAnnotation: hashOf(la)}
	}
	return out
}
