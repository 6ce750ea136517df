package objrules

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

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
