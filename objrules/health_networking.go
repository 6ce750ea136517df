package objrules

import (
	networkingv1 "k8s.io/api/networking/v1"
)

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
