package objrules

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

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
