package objrules

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// healthAPIServiceGroupVersion is the API version of an APIService.
var healthAPIServiceGroupVersion = schema.GroupVersion{Group: "apiregistration.k8s.io", Version: "v1"}

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
