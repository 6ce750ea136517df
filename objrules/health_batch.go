package objrules

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// healthCronJobFromUnstructured adds the one CronJob row a typed object cannot
// express: an object with no status at all is Progressing.
func healthCronJobFromUnstructured(u *unstructured.Unstructured) Health {
	if u.GroupVersionKind().GroupVersion() == batchv1.SchemeGroupVersion && u.Object["status"] == nil {
		return Health{Status: HealthProgressing, Message: "Waiting for the CronJob to report status"}
	}
	return healthFromUnstructured(u, batchv1.SchemeGroupVersion, CronJobHealth)
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
