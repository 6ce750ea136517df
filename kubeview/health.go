package kubeview

// Health of live objects, matching ArgoCD's gitops-engine rules as written
// down in HEALTH.md. Every rule is a pure function of one object: no client,
// no clock, no lookups of related objects.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

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

// healthRank places a code in the order Healthy < Suspended < Progressing <
// Missing < Degraded < Unknown. The empty code (no health) ranks below
// Healthy; a code outside the list ranks as Unknown.
func (a HealthStatus) healthRank() int {
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
	return a.healthRank() > b.healthRank()
}

// Health is the health of one object or of an application: a code and a
// message for the operator.
type Health struct {
	Status  HealthStatus `json:"status"`
	Message string       `json:"message,omitempty"`
}

// healthAPIServiceGroupVersion is the API version of an APIService.
var healthAPIServiceGroupVersion = schema.GroupVersion{Group: "apiregistration.k8s.io", Version: "v1"}

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

// healthCronJobFromUnstructured adds the one CronJob row a typed object cannot
// express: an object with no status at all is Progressing.
func healthCronJobFromUnstructured(u *unstructured.Unstructured) Health {
	if u.GroupVersionKind().GroupVersion() == batchv1.SchemeGroupVersion && u.Object["status"] == nil {
		return Health{Status: HealthProgressing, Message: "Waiting for the CronJob to report status"}
	}
	return healthFromUnstructured(u, batchv1.SchemeGroupVersion, CronJobHealth)
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

// DeploymentHealth returns the health of an apps/v1 Deployment: Suspended when
// paused; Progressing until the controller has observed the latest
// generation; Degraded once the rollout exceeds its progress deadline;
// Progressing while replicas are being updated, old replicas are terminating
// or updated replicas are not yet available; Healthy otherwise.
func DeploymentHealth(d *appsv1.Deployment) Health {
	if h, deleting := healthPendingDeletion(d); deleting {
		return h
	}
	st := d.Status
	switch {
	case d.Spec.Paused:
		return Health{Status: HealthSuspended, Message: "Deployment is paused"}
	case d.Generation > st.ObservedGeneration:
		return Health{Status: HealthProgressing, Message: "Waiting for rollout to finish: observed deployment generation less than desired generation"}
	}
	for _, c := range st.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return Health{Status: HealthDegraded, Message: fmt.Sprintf("Deployment %q exceeded its progress deadline", d.Name)}
		}
	}
	switch {
	case d.Spec.Replicas != nil && st.UpdatedReplicas < *d.Spec.Replicas:
		return Health{Status: HealthProgressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d out of %d new replicas have been updated...", st.UpdatedReplicas, *d.Spec.Replicas)}
	case st.Replicas > st.UpdatedReplicas:
		return Health{Status: HealthProgressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d old replicas are pending termination...", st.Replicas-st.UpdatedReplicas)}
	case st.AvailableReplicas < st.UpdatedReplicas:
		return Health{Status: HealthProgressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d of %d updated replicas are available...", st.AvailableReplicas, st.UpdatedReplicas)}
	}
	return Health{Status: HealthHealthy}
}

// ReplicaSetHealth returns the health of an apps/v1 ReplicaSet: Progressing
// until the latest generation is observed; Degraded with the condition's
// message while ReplicaFailure is True; Progressing while fewer replicas are
// available than desired; Healthy otherwise.
func ReplicaSetHealth(rs *appsv1.ReplicaSet) Health {
	if h, deleting := healthPendingDeletion(rs); deleting {
		return h
	}
	if rs.Generation > rs.Status.ObservedGeneration {
		return Health{Status: HealthProgressing, Message: "Waiting for rollout to finish: observed replica set generation less than desired generation"}
	}
	for _, c := range rs.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
			return Health{Status: HealthDegraded, Message: c.Message}
		}
	}
	if rs.Spec.Replicas != nil && rs.Status.AvailableReplicas < *rs.Spec.Replicas {
		return Health{Status: HealthProgressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d out of %d new replicas are available...", rs.Status.AvailableReplicas, *rs.Spec.Replicas)}
	}
	return Health{Status: HealthHealthy}
}

// StatefulSetHealth returns the health of an apps/v1 StatefulSet: Progressing
// until the latest generation is observed or while pods are not ready; with a
// partitioned RollingUpdate, Progressing until the pods above the partition
// are updated and Healthy after; with OnDelete, Healthy; otherwise
// Progressing until the update revision is current, then Healthy.
func StatefulSetHealth(sts *appsv1.StatefulSet) Health {
	if h, deleting := healthPendingDeletion(sts); deleting {
		return h
	}
	st := sts.Status
	if st.ObservedGeneration == 0 || sts.Generation > st.ObservedGeneration {
		return Health{Status: HealthProgressing, Message: "Waiting for statefulset spec update to be observed..."}
	}
	if sts.Spec.Replicas != nil && st.ReadyReplicas < *sts.Spec.Replicas {
		return Health{Status: HealthProgressing, Message: fmt.Sprintf("Waiting for %d pods to be ready...", *sts.Spec.Replicas-st.ReadyReplicas)}
	}
	strategy := sts.Spec.UpdateStrategy
	if strategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && strategy.RollingUpdate != nil &&
		sts.Spec.Replicas != nil && strategy.RollingUpdate.Partition != nil {
		want := *sts.Spec.Replicas - *strategy.RollingUpdate.Partition
		if st.UpdatedReplicas < want {
			return Health{Status: HealthProgressing, Message: fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", st.UpdatedReplicas, want)}
		}
		return Health{Status: HealthHealthy, Message: fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...", st.UpdatedReplicas)}
	}
	if strategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return Health{Status: HealthHealthy, Message: fmt.Sprintf("statefulset has %d ready pods", st.ReadyReplicas)}
	}
	if st.UpdateRevision != st.CurrentRevision {
		return Health{Status: HealthProgressing, Message: fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...", st.UpdatedReplicas, st.UpdateRevision)}
	}
	return Health{Status: HealthHealthy, Message: fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...", st.CurrentReplicas, st.CurrentRevision)}
}

// DaemonSetHealth returns the health of an apps/v1 DaemonSet: Progressing
// until the latest generation is observed; Healthy with the OnDelete
// strategy; Progressing while pods are being updated or are not yet
// available; Healthy otherwise.
func DaemonSetHealth(ds *appsv1.DaemonSet) Health {
	if h, deleting := healthPendingDeletion(ds); deleting {
		return h
	}
	st := ds.Status
	switch {
	case ds.Generation > st.ObservedGeneration:
		return Health{Status: HealthProgressing, Message: "Waiting for rollout to finish: observed daemon set generation less than desired generation"}
	case ds.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType:
		return Health{Status: HealthHealthy, Message: fmt.Sprintf("daemon set %d out of %d new pods have been updated", st.UpdatedNumberScheduled, st.DesiredNumberScheduled)}
	case st.UpdatedNumberScheduled < st.DesiredNumberScheduled:
		return Health{Status: HealthProgressing, Message: fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", ds.Name, st.UpdatedNumberScheduled, st.DesiredNumberScheduled)}
	case st.NumberAvailable < st.DesiredNumberScheduled:
		return Health{Status: HealthProgressing, Message: fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", ds.Name, st.NumberAvailable, st.DesiredNumberScheduled)}
	}
	return Health{Status: HealthHealthy}
}

// PodHealth returns the health of a v1 Pod.
//
// With restartPolicy Always, a container waiting for a reason that starts
// with "Err" or ends with "Error" or "BackOff" (CrashLoopBackOff,
// ImagePullBackOff, ErrImagePull, CreateContainerConfigError) makes the pod
// Degraded. Otherwise the phase decides: Pending is Progressing, Succeeded
// Healthy, Failed Degraded; a Running pod with restartPolicy Always is
// Healthy when Ready, Degraded when a container has terminated before,
// Progressing otherwise; a Running pod with OnFailure or Never is
// Progressing; anything else is Unknown. As in ArgoCD only the literal
// policies count: an empty restartPolicy (never seen on a live pod, which the
// API server defaults to Always) takes no Always-only branch.
func PodHealth(pod *corev1.Pod) Health {
	if h, deleting := healthPendingDeletion(pod); deleting {
		return h
	}
	always := pod.Spec.RestartPolicy == corev1.RestartPolicyAlways
	if always {
		var waiting []string
		for _, cs := range pod.Status.ContainerStatuses {
			w := cs.State.Waiting
			if w == nil || !(strings.HasPrefix(w.Reason, "Err") || strings.HasSuffix(w.Reason, "Error") || strings.HasSuffix(w.Reason, "BackOff")) {
				continue
			}
			msg := cs.Name + ": " + w.Reason
			if w.Message != "" {
				msg += ": " + w.Message
			}
			waiting = append(waiting, msg)
		}
		if len(waiting) > 0 {
			return Health{Status: HealthDegraded, Message: strings.Join(waiting, ", ")}
		}
	}
	msg := pod.Status.Message
	switch pod.Status.Phase {
	case corev1.PodPending:
		return Health{Status: HealthProgressing, Message: msg}
	case corev1.PodSucceeded:
		return Health{Status: HealthHealthy, Message: msg}
	case corev1.PodFailed:
		if msg == "" {
			msg = healthPodFailMessage(pod)
		}
		return Health{Status: HealthDegraded, Message: msg}
	case corev1.PodRunning:
		switch pod.Spec.RestartPolicy {
		case corev1.RestartPolicyAlways:
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					return Health{Status: HealthHealthy, Message: msg}
				}
			}
			for _, cs := range pod.Status.ContainerStatuses {
				if cs.LastTerminationState.Terminated != nil {
					if msg == "" {
						msg = fmt.Sprintf("container %q is not ready after restarting %d times", cs.Name, cs.RestartCount)
					}
					return Health{Status: HealthDegraded, Message: msg}
				}
			}
			return Health{Status: HealthProgressing, Message: msg}
		case corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
			return Health{Status: HealthProgressing, Message: msg}
		}
	}
	return Health{Status: HealthUnknown, Message: msg}
}

// healthPodFailMessage explains a failed pod that carries no status message,
// from the first init or app container that terminated with one.
func healthPodFailMessage(pod *corev1.Pod) string {
	for _, cs := range append(append([]corev1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		t := cs.State.Terminated
		switch {
		case t == nil:
		case t.Message != "":
			return t.Message
		case t.Reason == "OOMKilled":
			return t.Reason
		case t.ExitCode != 0:
			return fmt.Sprintf("container %q failed with exit code %d", cs.Name, t.ExitCode)
		}
	}
	return ""
}

// JobHealth returns the health of a batch/v1 Job. Its conditions are scanned
// as ArgoCD does: Failed marks it failed, Complete complete, Suspended
// complete and, when True, suspended. A Job that is not complete is
// Progressing; a failed one Degraded with the failure message; a suspended
// one Suspended (so a suspended template Job shows Suspended); any other
// Healthy.
func JobHealth(job *batchv1.Job) Health {
	if h, deleting := healthPendingDeletion(job); deleting {
		return h
	}
	var failed, complete, suspended bool
	var failMsg, msg string
	for _, c := range job.Status.Conditions {
		switch c.Type {
		case batchv1.JobFailed:
			failed, complete = true, true
			failMsg = c.Message
		case batchv1.JobComplete:
			complete = true
			msg = c.Message
		case batchv1.JobSuspended:
			complete = true
			msg = c.Message
			if c.Status == corev1.ConditionTrue {
				suspended = true
			}
		}
	}
	switch {
	case !complete:
		return Health{Status: HealthProgressing, Message: fmt.Sprintf("Job is running: %d active, %d succeeded, %d failed", job.Status.Active, job.Status.Succeeded, job.Status.Failed)}
	case failed:
		return Health{Status: HealthDegraded, Message: failMsg}
	case suspended:
		return Health{Status: HealthSuspended, Message: msg}
	}
	return Health{Status: HealthHealthy, Message: msg}
}

// CronJobHealth returns the health of a batch/v1 CronJob, following HEALTH.md
// (ArgoCD's Lua rule, except that a suspended CronJob is Healthy, not
// Suspended). A scheduled CronJob whose last successful run is older than
// its last scheduled run, with no job active, is Degraded; every other
// CronJob is Healthy, including one that never succeeded or has not been
// scheduled yet. The remaining row, no status at all, is Progressing; only
// an unstructured object can lack a status, so HealthOf applies it.
func CronJobHealth(cj *batchv1.CronJob) Health {
	if h, deleting := healthPendingDeletion(cj); deleting {
		return h
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return Health{Status: HealthHealthy, Message: "CronJob is Suspended"}
	}
	st := cj.Status
	switch {
	case st.LastScheduleTime == nil:
		return Health{Status: HealthHealthy, Message: "CronJob has not been scheduled yet"}
	case st.LastSuccessfulTime == nil:
		return Health{Status: HealthHealthy, Message: "CronJob has never completed successfully; it may not be healthy"}
	case len(st.Active) > 0:
		return Health{Status: HealthHealthy, Message: "A job is running; the last run may not have been successful"}
	case st.LastSuccessfulTime.Before(st.LastScheduleTime):
		return Health{Status: HealthDegraded, Message: fmt.Sprintf("CronJob has not completed its last run (scheduled %s) successfully; last success %s",
			st.LastScheduleTime.UTC().Format(time.RFC3339), st.LastSuccessfulTime.UTC().Format(time.RFC3339))}
	}
	return Health{Status: HealthHealthy, Message: "CronJob has completed its last run successfully"}
}

// ServiceHealth returns the health of a v1 Service: a LoadBalancer Service is
// Healthy once its load balancer has an ingress address and Progressing
// before; any other Service is Healthy.
func ServiceHealth(svc *corev1.Service) Health {
	if h, deleting := healthPendingDeletion(svc); deleting {
		return h
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && len(svc.Status.LoadBalancer.Ingress) == 0 {
		return Health{Status: HealthProgressing, Message: "Waiting for the load balancer to get an address"}
	}
	return Health{Status: HealthHealthy}
}

// IngressHealth returns the health of a networking.k8s.io/v1 Ingress: Healthy
// once its load balancer has an ingress address, Progressing before.
func IngressHealth(ing *networkingv1.Ingress) Health {
	if h, deleting := healthPendingDeletion(ing); deleting {
		return h
	}
	if len(ing.Status.LoadBalancer.Ingress) == 0 {
		return Health{Status: HealthProgressing, Message: "Waiting for the load balancer to get an address"}
	}
	return Health{Status: HealthHealthy}
}

// PersistentVolumeClaimHealth returns the health of a v1 PersistentVolumeClaim
// by phase: Bound is Healthy, Pending Progressing, Lost Degraded, any other
// Unknown.
func PersistentVolumeClaimHealth(pvc *corev1.PersistentVolumeClaim) Health {
	if h, deleting := healthPendingDeletion(pvc); deleting {
		return h
	}
	switch pvc.Status.Phase {
	case corev1.ClaimBound:
		return Health{Status: HealthHealthy}
	case corev1.ClaimPending:
		return Health{Status: HealthProgressing, Message: "Waiting for the claim to be bound"}
	case corev1.ClaimLost:
		return Health{Status: HealthDegraded, Message: "The claim has lost its volume"}
	}
	return Health{Status: HealthUnknown, Message: fmt.Sprintf("Unknown claim phase %q", pvc.Status.Phase)}
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

// healthHPAWaiting is the health of an HPA that has not reported conditions
// that decide.
var healthHPAWaiting = Health{Status: HealthProgressing, Message: "Waiting to Autoscale"}

// healthHPADegraded lists, by condition type, the reasons that make an HPA
// Degraded.
var healthHPADegraded = map[string][]string{
	"AbleToScale": {"FailedGetScale", "FailedUpdateScale"},
	"ScalingActive": {"FailedGetResourceMetric", "InvalidSelector", "FailedGetObjectMetric",
		"FailedGetPodsMetric", "FailedGetExternalMetric", "FailedComputeMetricsReplicas"},
}

// HorizontalPodAutoscalerHealth returns the health of an autoscaling/v2
// HorizontalPodAutoscaler: Progressing ("Waiting to Autoscale") with no
// conditions yet; Degraded when any condition reports a failure to get or
// update the scale or to compute metrics; Healthy when AbleToScale or
// ScalingLimited is True; Progressing otherwise.
func HorizontalPodAutoscalerHealth(hpa *autoscalingv2.HorizontalPodAutoscaler) Health {
	if h, deleting := healthPendingDeletion(hpa); deleting {
		return h
	}
	conds := make([]healthCondition, 0, len(hpa.Status.Conditions))
	for _, c := range hpa.Status.Conditions {
		conds = append(conds, healthCondition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return healthHPAConditions(conds)
}

// HorizontalPodAutoscalerV1Health returns the health of an autoscaling/v1
// HorizontalPodAutoscaler by the rules of HorizontalPodAutoscalerHealth,
// reading its conditions from the autoscaling.alpha.kubernetes.io/conditions
// annotation. An annotation that is not valid JSON is Unknown with the error.
func HorizontalPodAutoscalerV1Health(hpa *autoscalingv1.HorizontalPodAutoscaler) Health {
	if h, deleting := healthPendingDeletion(hpa); deleting {
		return h
	}
	raw, ok := hpa.Annotations["autoscaling.alpha.kubernetes.io/conditions"]
	if !ok {
		return healthHPAWaiting
	}
	var conds []healthCondition
	if err := json.Unmarshal([]byte(raw), &conds); err != nil {
		return healthUnknown(fmt.Errorf("kubeview: HorizontalPodAutoscaler %s: read conditions annotation: %w", healthObjectName(hpa), err))
	}
	return healthHPAConditions(conds)
}

func healthHPAConditions(conds []healthCondition) Health {
	for _, c := range conds {
		for _, reason := range healthHPADegraded[c.Type] {
			if c.Reason == reason {
				return Health{Status: HealthDegraded, Message: c.Message}
			}
		}
	}
	for _, c := range conds {
		if (c.Type == "AbleToScale" || c.Type == "ScalingLimited") && c.Status == string(corev1.ConditionTrue) {
			return Health{Status: HealthHealthy, Message: c.Message}
		}
	}
	return healthHPAWaiting
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

// APIServiceHealth returns the health of an apiregistration.k8s.io/v1
// APIService, given as unstructured: Healthy when its Available condition is
// True, Progressing when it is anything else or absent. Another version, or a
// status that cannot be read, is Unknown with the error.
func APIServiceHealth(u *unstructured.Unstructured) Health {
	if h, deleting := healthPendingDeletion(u); deleting {
		return h
	}
	st, err := healthReadStatus(u, healthAPIServiceGroupVersion)
	if err != nil {
		return healthUnknown(err)
	}
	c, ok := st.condition("Available")
	switch {
	case !ok:
		return Health{Status: HealthProgressing, Message: "Waiting to be processed"}
	case c.Status == string(metav1.ConditionTrue):
		return Health{Status: HealthHealthy, Message: healthReasonMessage(c)}
	}
	return Health{Status: HealthProgressing, Message: healthReasonMessage(c)}
}

// healthAppCRFailureReasons are the words that, found in the reason of a
// False Ready condition of the App CR (case-insensitively), make it Degraded
// rather than Progressing: Fail, Error, Degraded, Crash, BackOff,
// DeadlineExceeded, Invalid. They cover the operator's failure reasons
// (ReconcileFailed, ImagePullError, CrashLoopBackOff,
// ProgressDeadlineExceeded, InvalidSpec, ...) while leaving waiting reasons
// (Reconciling, RolloutInProgress, WaitingForPods) Progressing.
var healthAppCRFailureReasons = []string{"fail", "error", "degraded", "crash", "backoff", "deadlineexceeded", "invalid"}

// AppCRHealth returns the health of an App custom resource of version gv
// (appcr.GroupVersion, or the version of the configured App resource), given
// as unstructured; its kind is not checked. It is Progressing ("operator has
// not observed generation N") while metadata.generation is greater than
// status.observedGeneration; Healthy when its Ready condition is True;
// Degraded when Ready is False with a reason that names a failure, that is
// one containing, case-insensitively, any of "Fail", "Error", "Degraded",
// "Crash", "BackOff", "DeadlineExceeded" or "Invalid"; Progressing when Ready
// is False for another reason, Unknown, or not reported yet. Another version,
// or a status that cannot be read, is Unknown with the error.
func AppCRHealth(u *unstructured.Unstructured, gv schema.GroupVersion) Health {
	if h, deleting := healthPendingDeletion(u); deleting {
		return h
	}
	st, err := healthReadStatus(u, gv)
	if err != nil {
		return healthUnknown(err)
	}
	if gen := u.GetGeneration(); gen > st.ObservedGeneration {
		return Health{Status: HealthProgressing, Message: fmt.Sprintf("operator has not observed generation %d", gen)}
	}
	c, ok := st.condition("Ready")
	switch {
	case !ok:
		return Health{Status: HealthProgressing, Message: "Waiting for the operator to report Ready"}
	case c.Status == string(metav1.ConditionTrue):
		return Health{Status: HealthHealthy, Message: c.Message}
	case c.Status == string(metav1.ConditionFalse) && healthIsFailureReason(c.Reason):
		return Health{Status: HealthDegraded, Message: healthReasonMessage(c)}
	}
	return Health{Status: HealthProgressing, Message: healthReasonMessage(c)}
}

func healthIsFailureReason(reason string) bool {
	reason = strings.ToLower(reason)
	for _, word := range healthAppCRFailureReasons {
		if strings.Contains(reason, word) {
			return true
		}
	}
	return false
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

// HealthItem is one resource of an application, with its health as returned
// by HealthOf; an empty Health.Status means the resource has no health.
type HealthItem struct {
	Group, Kind, Namespace, Name string
	Health                       Health
}

// healthMaxCulprits is how many culprits an aggregate message names.
const healthMaxCulprits = 3

// AggregateHealth returns the health of an application: the worst status
// among items, which are the App CR and its depth-1 children (callers pass
// only depth-1 children, never ReplicaSets or Pods: as in ArgoCD health is
// not inherited from grandchildren). Items with no health (empty status) are
// skipped; with none left the application is Healthy.
//
// If hasWorkload is false the workload does not exist and the application is
// Missing, with the message "<workloadRef> does not exist"; workloadRef names
// the workload as it should be shown, e.g. "Deployment ns/web".
//
// Unless the application is Healthy, the message names, in the order of
// items, the first 3 culprits (items whose status equals the worst) with
// their messages, e.g. "Caused by apps/Deployment:ns/web (1 of 3 updated),
// v1/Service:ns/web, v1/PersistentVolumeClaim:ns/data and 2 more".
func AggregateHealth(items []HealthItem, hasWorkload bool, workloadRef string) Health {
	if !hasWorkload {
		if workloadRef == "" {
			workloadRef = "The workload"
		}
		return Health{Status: HealthMissing, Message: workloadRef + " does not exist"}
	}
	var worst HealthStatus
	for _, it := range items {
		if s := it.Health.Status; s != "" && (worst == "" || s.Worse(worst)) {
			worst = s
		}
	}
	if worst == "" || worst == HealthHealthy {
		return Health{Status: HealthHealthy}
	}
	var named []string
	more := 0
	for _, it := range items {
		if it.Health.Status != worst {
			continue
		}
		if len(named) == healthMaxCulprits {
			more++
			continue
		}
		named = append(named, healthCulprit(it))
	}
	msg := "Caused by " + strings.Join(named, ", ")
	if more > 0 {
		msg += fmt.Sprintf(" and %d more", more)
	}
	return Health{Status: worst, Message: msg}
}

// healthCulprit names an item as group/Kind:namespace/name (v1/Kind for the
// core group) followed by its message in parentheses.
func healthCulprit(it HealthItem) string {
	group := it.Group
	if group == "" {
		group = "v1"
	}
	name := it.Name
	if it.Namespace != "" {
		name = it.Namespace + "/" + it.Name
	}
	s := group + "/" + it.Kind + ":" + name
	if it.Health.Message != "" {
		s += " (" + it.Health.Message + ")"
	}
	return s
}
