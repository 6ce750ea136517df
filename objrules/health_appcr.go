package objrules

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

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
