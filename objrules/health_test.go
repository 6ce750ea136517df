package objrules

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hanzoai/deploy-web/appcr"
)

// healthCheck asserts that HealthOf(obj) has a rule, returns status want, and
// a message containing wantMsg.
func healthCheck(t *testing.T, obj runtime.Object, want HealthStatus, wantMsg string) {
	t.Helper()
	got, ok := HealthOf(obj)
	if !ok {
		t.Fatalf("HealthOf(%T) ok = false, want true", obj)
	}
	if got.Status != want {
		t.Errorf("HealthOf(%T) = %+v, want status %s", obj, got, want)
	}
	if !strings.Contains(got.Message, wantMsg) {
		t.Errorf("HealthOf(%T).Message = %q, want it to contain %q", obj, got.Message, wantMsg)
	}
}

var (
	healthT0 = metav1.NewTime(time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC))
	healthT1 = metav1.NewTime(healthT0.Add(time.Hour))
)

func healthMeta(gen int64) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "ns", Name: "web", Generation: gen}
}

// healthDeployment returns a healthy Deployment of 3 replicas changed by mutate.
func healthDeployment(mutate func(*appsv1.Deployment)) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: healthMeta(2),
		Spec:       appsv1.DeploymentSpec{Replicas: new(int32(3))},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"}},
		},
	}
	mutate(d)
	return d
}

func TestHealthDeployment(t *testing.T) {
	tests := []struct {
		name    string
		obj     *appsv1.Deployment
		want    HealthStatus
		wantMsg string
	}{
		{"paused", healthDeployment(func(d *appsv1.Deployment) { d.Spec.Paused = true }), HealthSuspended, "paused"},
		{"paused wins over an unobserved generation", healthDeployment(func(d *appsv1.Deployment) {
			d.Spec.Paused = true
			d.Generation = 3
		}), HealthSuspended, "paused"},
		{"generation not observed", healthDeployment(func(d *appsv1.Deployment) { d.Generation = 3 }), HealthProgressing, "observed deployment generation"},
		{"unobserved generation wins over a deadline", healthDeployment(func(d *appsv1.Deployment) {
			d.Generation = 3
			d.Status.Conditions[0].Reason = "ProgressDeadlineExceeded"
		}), HealthProgressing, "observed deployment generation"},
		{"progress deadline exceeded", healthDeployment(func(d *appsv1.Deployment) {
			d.Status.Conditions[0] = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}
			d.Status.UpdatedReplicas = 1
		}), HealthDegraded, `"web" exceeded its progress deadline`},
		{"ProgressDeadlineExceeded on another condition type", healthDeployment(func(d *appsv1.Deployment) {
			d.Status.Conditions[0].Type = appsv1.DeploymentAvailable
			d.Status.Conditions[0].Reason = "ProgressDeadlineExceeded"
		}), HealthHealthy, ""},
		{"replicas not all updated", healthDeployment(func(d *appsv1.Deployment) {
			d.Status.UpdatedReplicas = 1
			d.Status.AvailableReplicas = 1
		}), HealthProgressing, "1 out of 3 new replicas have been updated"},
		{"old replicas pending termination", healthDeployment(func(d *appsv1.Deployment) { d.Status.Replicas = 4 }), HealthProgressing, "1 old replicas are pending termination"},
		{"old replicas pending termination without spec.replicas", healthDeployment(func(d *appsv1.Deployment) {
			d.Spec.Replicas = nil
			d.Status.Replicas = 4
		}), HealthProgressing, "pending termination"},
		{"updated replicas not available", healthDeployment(func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 1 }), HealthProgressing, "1 of 3 updated replicas are available"},
		{"healthy", healthDeployment(func(*appsv1.Deployment) {}), HealthHealthy, ""},
		{"scaled to zero", healthDeployment(func(d *appsv1.Deployment) {
			d.Spec.Replicas = new(int32(0))
			d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2}
		}), HealthHealthy, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthCheck(t, tt.obj, tt.want, tt.wantMsg)
		})
	}
}

func healthReplicaSet(mutate func(*appsv1.ReplicaSet)) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: healthMeta(1),
		Spec:       appsv1.ReplicaSetSpec{Replicas: new(int32(2))},
		Status:     appsv1.ReplicaSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2},
	}
	mutate(rs)
	return rs
}

func TestHealthReplicaSet(t *testing.T) {
	failure := appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: `pods "web-" is forbidden: exceeded quota`}
	tests := []struct {
		name    string
		obj     *appsv1.ReplicaSet
		want    HealthStatus
		wantMsg string
	}{
		{"generation not observed", healthReplicaSet(func(rs *appsv1.ReplicaSet) { rs.Generation = 2 }), HealthProgressing, "observed replica set generation"},
		{"replica failure", healthReplicaSet(func(rs *appsv1.ReplicaSet) {
			rs.Status.Conditions = []appsv1.ReplicaSetCondition{failure}
			rs.Status.AvailableReplicas = 0
		}), HealthDegraded, "exceeded quota"},
		{"replica failure False", healthReplicaSet(func(rs *appsv1.ReplicaSet) {
			failure := failure
			failure.Status = corev1.ConditionFalse
			rs.Status.Conditions = []appsv1.ReplicaSetCondition{failure}
		}), HealthHealthy, ""},
		{"replicas not available", healthReplicaSet(func(rs *appsv1.ReplicaSet) { rs.Status.AvailableReplicas = 1 }), HealthProgressing, "1 out of 2 new replicas are available"},
		{"healthy", healthReplicaSet(func(*appsv1.ReplicaSet) {}), HealthHealthy, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthCheck(t, tt.obj, tt.want, tt.wantMsg)
		})
	}
}

func healthStatefulSet(mutate func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{
		ObjectMeta: healthMeta(1),
		Spec: appsv1.StatefulSetSpec{
			Replicas:       new(int32(3)),
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
		},
		Status: appsv1.StatefulSetStatus{
			ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, CurrentReplicas: 3, UpdatedReplicas: 3,
			CurrentRevision: "web-1", UpdateRevision: "web-1",
		},
	}
	mutate(sts)
	return sts
}

func TestHealthStatefulSet(t *testing.T) {
	partition := func(p int32) func(*appsv1.StatefulSet) {
		return func(sts *appsv1.StatefulSet) {
			sts.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: new(p)}
			sts.Status.UpdateRevision = "web-2"
			sts.Status.UpdatedReplicas = 1
		}
	}
	tests := []struct {
		name    string
		obj     *appsv1.StatefulSet
		want    HealthStatus
		wantMsg string
	}{
		{"observedGeneration 0", healthStatefulSet(func(sts *appsv1.StatefulSet) { sts.Status.ObservedGeneration = 0 }), HealthProgressing, "spec update to be observed"},
		{"generation not observed", healthStatefulSet(func(sts *appsv1.StatefulSet) { sts.Generation = 2 }), HealthProgressing, "spec update to be observed"},
		{"pods not ready", healthStatefulSet(func(sts *appsv1.StatefulSet) { sts.Status.ReadyReplicas = 1 }), HealthProgressing, "Waiting for 2 pods to be ready"},
		{"partitioned rollout in progress", healthStatefulSet(partition(1)), HealthProgressing, "1 out of 2 new pods have been updated"},
		{"partitioned rollout complete", healthStatefulSet(partition(2)), HealthHealthy, "partitioned roll out complete"},
		{"OnDelete with revisions apart", healthStatefulSet(func(sts *appsv1.StatefulSet) {
			sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
			sts.Status.UpdateRevision = "web-2"
		}), HealthHealthy, "3 ready pods"},
		{"rolling update in progress", healthStatefulSet(func(sts *appsv1.StatefulSet) { sts.Status.UpdateRevision = "web-2" }), HealthProgressing, "revision web-2"},
		{"healthy", healthStatefulSet(func(*appsv1.StatefulSet) {}), HealthHealthy, "rolling update complete 3 pods at revision web-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthCheck(t, tt.obj, tt.want, tt.wantMsg)
		})
	}
}

func healthDaemonSet(mutate func(*appsv1.DaemonSet)) *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{
		ObjectMeta: healthMeta(1),
		Spec:       appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType}},
		Status: appsv1.DaemonSetStatus{
			ObservedGeneration: 1, DesiredNumberScheduled: 3, CurrentNumberScheduled: 3,
			UpdatedNumberScheduled: 3, NumberReady: 3, NumberAvailable: 3,
		},
	}
	mutate(ds)
	return ds
}

func TestHealthDaemonSet(t *testing.T) {
	tests := []struct {
		name    string
		obj     *appsv1.DaemonSet
		want    HealthStatus
		wantMsg string
	}{
		{"generation not observed", healthDaemonSet(func(ds *appsv1.DaemonSet) { ds.Generation = 2 }), HealthProgressing, "observed daemon set generation"},
		{"OnDelete with pods not updated", healthDaemonSet(func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy.Type = appsv1.OnDeleteDaemonSetStrategyType
			ds.Status.UpdatedNumberScheduled = 1
		}), HealthHealthy, "1 out of 3 new pods have been updated"},
		{"pods not updated", healthDaemonSet(func(ds *appsv1.DaemonSet) { ds.Status.UpdatedNumberScheduled = 1 }), HealthProgressing, "1 out of 3 new pods have been updated..."},
		{"pods not available", healthDaemonSet(func(ds *appsv1.DaemonSet) { ds.Status.NumberAvailable = 2 }), HealthProgressing, "2 of 3 updated pods are available"},
		{"healthy", healthDaemonSet(func(*appsv1.DaemonSet) {}), HealthHealthy, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthCheck(t, tt.obj, tt.want, tt.wantMsg)
		})
	}
}

func healthPod(policy corev1.RestartPolicy, phase corev1.PodPhase, mutate func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: healthMeta(0),
		Spec:       corev1.PodSpec{RestartPolicy: policy},
		Status:     corev1.PodStatus{Phase: phase},
	}
	if mutate != nil {
		mutate(pod)
	}
	return pod
}

func healthWaiting(name, reason, message string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
}

func healthTerminated(name string, term corev1.ContainerStateTerminated) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &term}}
}

func TestHealthPod(t *testing.T) {
	waiting := func(statuses ...corev1.ContainerStatus) func(*corev1.Pod) {
		return func(pod *corev1.Pod) { pod.Status.ContainerStatuses = statuses }
	}
	ready := func(pod *corev1.Pod) {
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	restarted := func(pod *corev1.Pod) {
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "web", RestartCount: 4,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}},
		}}
	}
	const (
		always    = corev1.RestartPolicyAlways
		onFailure = corev1.RestartPolicyOnFailure
		never     = corev1.RestartPolicyNever
	)
	tests := []struct {
		name    string
		obj     *corev1.Pod
		want    HealthStatus
		wantMsg string
	}{
		// 1. restartPolicy Always and a waiting error.
		{"CrashLoopBackOff", healthPod(always, corev1.PodRunning, waiting(healthWaiting("web", "CrashLoopBackOff", "back-off 5m0s restarting failed container"))), HealthDegraded, "web: CrashLoopBackOff: back-off 5m0s"},
		{"ImagePullBackOff", healthPod(always, corev1.PodPending, waiting(healthWaiting("web", "ImagePullBackOff", `Back-off pulling image "nope"`))), HealthDegraded, `Back-off pulling image "nope"`},
		{"ErrImagePull", healthPod(always, corev1.PodPending, waiting(healthWaiting("web", "ErrImagePull", ""))), HealthDegraded, "web: ErrImagePull"},
		{"CreateContainerConfigError", healthPod(always, corev1.PodPending, waiting(healthWaiting("web", "CreateContainerConfigError", `secret "db" not found`))), HealthDegraded, `secret "db" not found`},
		{"waiting messages joined", healthPod(always, corev1.PodRunning, waiting(
			healthWaiting("web", "CrashLoopBackOff", "back-off web"),
			healthWaiting("ok", "ContainerCreating", ""),
			healthWaiting("sidecar", "ImagePullBackOff", "back-off sidecar"),
		)), HealthDegraded, "web: CrashLoopBackOff: back-off web, sidecar: ImagePullBackOff: back-off sidecar"},
		{"waiting error with OnFailure is not Degraded", healthPod(onFailure, corev1.PodPending, waiting(healthWaiting("job", "ImagePullBackOff", ""))), HealthProgressing, ""},
		{"waiting error with Never is not Degraded", healthPod(never, corev1.PodRunning, waiting(healthWaiting("job", "CrashLoopBackOff", ""))), HealthProgressing, ""},
		{"waiting ContainerCreating", healthPod(always, corev1.PodPending, waiting(healthWaiting("web", "ContainerCreating", ""))), HealthProgressing, ""},
		// 2. phase.
		{"Pending", healthPod(always, corev1.PodPending, func(pod *corev1.Pod) { pod.Status.Message = "0/3 nodes are available" }), HealthProgressing, "0/3 nodes are available"},
		{"Succeeded", healthPod(never, corev1.PodSucceeded, nil), HealthHealthy, ""},
		{"Failed with a status message", healthPod(never, corev1.PodFailed, func(pod *corev1.Pod) {
			pod.Status.Message = "The node was low on resource: memory."
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{healthTerminated("job", corev1.ContainerStateTerminated{ExitCode: 1})}
		}), HealthDegraded, "The node was low on resource: memory."},
		{"Failed with a terminated message", healthPod(never, corev1.PodFailed, waiting(
			healthTerminated("ok", corev1.ContainerStateTerminated{}),
			healthTerminated("job", corev1.ContainerStateTerminated{ExitCode: 2, Message: "migration failed"}),
		)), HealthDegraded, "migration failed"},
		{"Failed OOMKilled", healthPod(never, corev1.PodFailed, waiting(healthTerminated("job", corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}))), HealthDegraded, "OOMKilled"},
		{"Failed with an exit code", healthPod(never, corev1.PodFailed, waiting(healthTerminated("job", corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error"}))), HealthDegraded, `container "job" failed with exit code 3`},
		{"Failed in an init container", healthPod(never, corev1.PodFailed, func(pod *corev1.Pod) {
			pod.Status.InitContainerStatuses = []corev1.ContainerStatus{healthTerminated("init", corev1.ContainerStateTerminated{ExitCode: 1})}
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{healthTerminated("job", corev1.ContainerStateTerminated{ExitCode: 2})}
		}), HealthDegraded, `container "init" failed with exit code 1`},
		{"Failed with no message", healthPod(never, corev1.PodFailed, nil), HealthDegraded, ""},
		// 3. Running.
		{"Running Always Ready", healthPod(always, corev1.PodRunning, ready), HealthHealthy, ""},
		{"Running Always not ready after a restart", healthPod(always, corev1.PodRunning, restarted), HealthDegraded, "restarting 4 times"},
		{"Running Always not ready yet", healthPod(always, corev1.PodRunning, func(pod *corev1.Pod) {
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web"}}
		}), HealthProgressing, ""},
		{"Running OnFailure", healthPod(onFailure, corev1.PodRunning, ready), HealthProgressing, ""},
		{"Running Never", healthPod(never, corev1.PodRunning, restarted), HealthProgressing, ""},
		// 4. anything else.
		{"phase Unknown", healthPod(always, corev1.PodUnknown, func(pod *corev1.Pod) { pod.Status.Message = "node lost" }), HealthUnknown, "node lost"},
		{"no phase", healthPod(always, "", nil), HealthUnknown, ""},
		{"Running with no restartPolicy", healthPod("", corev1.PodRunning, ready), HealthUnknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthCheck(t, tt.obj, tt.want, tt.wantMsg)
		})
	}
}

func healthJob(conds ...batchv1.JobCondition) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: healthMeta(1),
		Status:     batchv1.JobStatus{Conditions: conds, Active: 1},
	}
}

func TestHealthJob(t *testing.T) {
	failed := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}
	complete := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Message: "Reached expected number of succeeded pods"}
	suspended := batchv1.JobCondition{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended", Message: "Job suspended"}
	resumed := batchv1.JobCondition{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse, Reason: "JobResumed", Message: "Job resumed"}
	tests := []struct {
		name    string
		obj     *batchv1.Job
		want    HealthStatus
		wantMsg string
	}{
		{"no conditions: not complete", healthJob(), HealthProgressing, "1 active"},
		{"failed", healthJob(failed), HealthDegraded, "backoff limit"},
		{"failed wins over suspended", healthJob(suspended, failed), HealthDegraded, "backoff limit"},
		{"complete", healthJob(complete), HealthHealthy, "succeeded pods"},
		{"suspended template Job", healthJob(suspended), HealthSuspended, "Job suspended"},
		{"suspended condition False counts as complete", healthJob(resumed), HealthHealthy, "Job resumed"},
		{"other conditions only", healthJob(batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}), HealthProgressing, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthCheck(t, tt.obj, tt.want, tt.wantMsg)
		})
	}
}

func healthCronJob(mutate func(*batchv1.CronJob)) *batchv1.CronJob {
	cj := &batchv1.CronJob{ObjectMeta: healthMeta(1), Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *"}}
	mutate(cj)
	return cj
}

func TestHealthCronJob(t *testing.T) {
	tests := []struct {
		name    string
		obj     runtime.Object
		want    HealthStatus
		wantMsg string
	}{
		{"suspended", healthCronJob(func(cj *batchv1.CronJob) {
			cj.Spec.Suspend = new(true)
			cj.Status = batchv1.CronJobStatus{LastScheduleTime: &healthT1, LastSuccessfulTime: &healthT0}
		}), HealthHealthy, "CronJob is Suspended"},
		{"suspend false", healthCronJob(func(cj *batchv1.CronJob) {
			cj.Spec.Suspend = new(false)
			cj.Status = batchv1.CronJobStatus{LastScheduleTime: &healthT1, LastSuccessfulTime: &healthT0}
		}), HealthDegraded, "last run"},
		{"never succeeded", healthCronJob(func(cj *batchv1.CronJob) {
			cj.Status = batchv1.CronJobStatus{LastScheduleTime: &healthT1}
		}), HealthHealthy, "never completed successfully"},
		{"active jobs", healthCronJob(func(cj *batchv1.CronJob) {
			cj.Status = batchv1.CronJobStatus{LastScheduleTime: &healthT1, LastSuccessfulTime: &healthT0, Active: []corev1.ObjectReference{{Name: "web-123"}}}
		}), HealthHealthy, "A job is running"},
		{"last success before last schedule", healthCronJob(func(cj *batchv1.CronJob) {
			cj.Status = batchv1.CronJobStatus{LastScheduleTime: &healthT1, LastSuccessfulTime: &healthT0}
		}), HealthDegraded, "scheduled 2026-01-02T04:00:00Z"},
		{"last run succeeded", healthCronJob(func(cj *batchv1.CronJob) {
			cj.Status = batchv1.CronJobStatus{LastScheduleTime: &healthT0, LastSuccessfulTime: &healthT1}
		}), HealthHealthy, "completed its last run successfully"},
		{"not scheduled yet", healthCronJob(func(*batchv1.CronJob) {}), HealthHealthy, "not been scheduled yet"},
		{"no status", &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch/v1", "kind": "CronJob",
			"metadata": map[string]any{"namespace": "ns", "name": "web"},
			"spec":     map[string]any{"schedule": "*/5 * * * *"},
		}}, HealthProgressing, "Waiting"},
		{"null status", &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch/v1", "kind": "CronJob",
			"metadata": map[string]any{"namespace": "ns", "name": "web"},
			"status":   nil,
		}}, HealthProgressing, "Waiting"},
		{"empty status", &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch/v1", "kind": "CronJob",
			"metadata": map[string]any{"namespace": "ns", "name": "web"},
			"status":   map[string]any{},
		}}, HealthHealthy, "not been scheduled yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthCheck(t, tt.obj, tt.want, tt.wantMsg)
		})
	}
}

func TestHealthServiceIngress(t *testing.T) {
	lb := []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
	service := func(typ corev1.ServiceType, ingress []corev1.LoadBalancerIngress) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: healthMeta(1),
			Spec:       corev1.ServiceSpec{Type: typ},
			Status:     corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}},
		}
	}
	ingress := func(ingress ...networkingv1.IngressLoadBalancerIngress) *networkingv1.Ingress {
		return &networkingv1.Ingress{
			ObjectMeta: healthMeta(1),
			Status:     networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: ingress}},
		}
	}
	tests := []struct {
		name    string
		obj     runtime.Object
		want    HealthStatus
		wantMsg string
	}{
		{"LoadBalancer with an address", service(corev1.ServiceTypeLoadBalancer, lb), HealthHealthy, ""},
		{"LoadBalancer without an address", service(corev1.ServiceTypeLoadBalancer, nil), HealthProgressing, "load balancer"},
		{"ClusterIP", service(corev1.ServiceTypeClusterIP, nil), HealthHealthy, ""},
		{"ExternalName", service(corev1.ServiceTypeExternalName, nil), HealthHealthy, ""},
		{"Ingress with an address", ingress(networkingv1.IngressLoadBalancerIngress{Hostname: "lb.example.com"}), HealthHealthy, ""},
		{"Ingress without an address", ingress(), HealthProgressing, "load balancer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthCheck(t, tt.obj, tt.want, tt.wantMsg)
		})
	}
}

func TestHealthPersistentVolumeClaim(t *testing.T) {
	tests := []struct {
		name  string
		phase corev1.PersistentVolumeClaimPhase
		want  HealthStatus
	}{
		{"Bound", corev1.ClaimBound, HealthHealthy},
		{"Pending", corev1.ClaimPending, HealthProgressing},
		{"Lost", corev1.ClaimLost, HealthDegraded},
		{"no phase", "", HealthUnknown},
		{"other phase", "Resizing", HealthUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pvc := &corev1.PersistentVolumeClaim{ObjectMeta: healthMeta(1), Status: corev1.PersistentVolumeClaimStatus{Phase: tt.phase}}
			healthCheck(t, pvc, tt.want, "")
		})
	}
}

func TestHealthHorizontalPodAutoscaler(t *testing.T) {
	cond := func(typ autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason string) autoscalingv2.HorizontalPodAutoscalerCondition {
		return autoscalingv2.HorizontalPodAutoscalerCondition{Type: typ, Status: status, Reason: reason, Message: string(typ) + " " + reason}
	}
	const (
		able    = autoscalingv2.AbleToScale
		active  = autoscalingv2.ScalingActive
		limited = autoscalingv2.ScalingLimited
		yes     = corev1.ConditionTrue
		no      = corev1.ConditionFalse
	)
	tests := []struct {
		name    string
		conds   []autoscalingv2.HorizontalPodAutoscalerCondition
		want    HealthStatus
		wantMsg string
	}{
		{"no conditions yet", nil, HealthProgressing, "Waiting to Autoscale"},
		{"AbleToScale FailedGetScale", []autoscalingv2.HorizontalPodAutoscalerCondition{cond(able, no, "FailedGetScale")}, HealthDegraded, "AbleToScale FailedGetScale"},
		{"AbleToScale FailedUpdateScale", []autoscalingv2.HorizontalPodAutoscalerCondition{cond(able, no, "FailedUpdateScale")}, HealthDegraded, "FailedUpdateScale"},
		{"ScalingActive FailedGetResourceMetric", []autoscalingv2.HorizontalPodAutoscalerCondition{cond(active, no, "FailedGetResourceMetric")}, HealthDegraded, "FailedGetResourceMetric"},
		{"ScalingActive InvalidSelector", []autoscalingv2.HorizontalPodAutoscalerCondition{cond(active, no, "InvalidSelector")}, HealthDegraded, "InvalidSelector"},
		{"ScalingActive FailedGetObjectMetric", []autoscalingv2.HorizontalPodAutoscalerCondition{cond(active, no, "FailedGetObjectMetric")}, HealthDegraded, "FailedGetObjectMetric"},
		{"ScalingActive FailedGetPodsMetric", []autoscalingv2.HorizontalPodAutoscalerCondition{cond(active, no, "FailedGetPodsMetric")}, HealthDegraded, "FailedGetPodsMetric"},
		{"ScalingActive FailedGetExternalMetric", []autoscalingv2.HorizontalPodAutoscalerCondition{cond(active, no, "FailedGetExternalMetric")}, HealthDegraded, "FailedGetExternalMetric"},
		{"ScalingActive FailedComputeMetricsReplicas", []autoscalingv2.HorizontalPodAutoscalerCondition{cond(active, no, "FailedComputeMetricsReplicas")}, HealthDegraded, "FailedComputeMetricsReplicas"},
		{"Degraded checked before Healthy", []autoscalingv2.HorizontalPodAutoscalerCondition{
			cond(able, yes, "ReadyForNewScale"), cond(active, no, "FailedGetResourceMetric"),
		}, HealthDegraded, "FailedGetResourceMetric"},
		{"failure reason on another type", []autoscalingv2.HorizontalPodAutoscalerCondition{cond(limited, no, "FailedGetScale")}, HealthProgressing, "Waiting to Autoscale"},
		{"AbleToScale True", []autoscalingv2.HorizontalPodAutoscalerCondition{
			cond(active, no, "ScalingDisabled"), cond(able, yes, "SucceededRescale"),
		}, HealthHealthy, "AbleToScale SucceededRescale"},
		{"ScalingLimited True", []autoscalingv2.HorizontalPodAutoscalerCondition{
			cond(able, no, "BackoffBoth"), cond(limited, yes, "TooFewReplicas"),
		}, HealthHealthy, "ScalingLimited TooFewReplicas"},
		{"otherwise", []autoscalingv2.HorizontalPodAutoscalerCondition{
			cond(able, no, "BackoffBoth"), cond(active, no, "ScalingDisabled"), cond(limited, no, "DesiredWithinRange"),
		}, HealthProgressing, "Waiting to Autoscale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: healthMeta(1), Status: autoscalingv2.HorizontalPodAutoscalerStatus{Conditions: tt.conds}}
			healthCheck(t, hpa, tt.want, tt.wantMsg)
		})
	}
}

func TestHealthHorizontalPodAutoscalerV1(t *testing.T) {
	tests := []struct {
		name       string
		annotation *string
		want       HealthStatus
		wantMsg    string
	}{
		{"no annotation", nil, HealthProgressing, "Waiting to Autoscale"},
		{"no conditions", new("[]"), HealthProgressing, "Waiting to Autoscale"},
		{"Healthy", new(`[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-02T03:00:00Z","reason":"ReadyForNewScale","message":"recommended size matches current size"}]`), HealthHealthy, "recommended size"},
		{"Degraded", new(`[{"type":"AbleToScale","status":"True","reason":"SucceededGetScale"},{"type":"ScalingActive","status":"False","reason":"FailedGetResourceMetric","message":"missing request for cpu"}]`), HealthDegraded, "missing request for cpu"},
		{"Progressing", new(`[{"type":"AbleToScale","status":"False","reason":"BackoffBoth"}]`), HealthProgressing, "Waiting to Autoscale"},
		{"bad JSON", new(`[{"type":`), HealthUnknown, "kubeview: HorizontalPodAutoscaler ns/web: read conditions annotation: unexpected end of JSON input"},
		{"wrong JSON type", new(`{"type":"AbleToScale"}`), HealthUnknown, "cannot unmarshal object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hpa := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: healthMeta(1)}
			if tt.annotation != nil {
				hpa.Annotations = map[string]string{"autoscaling.alpha.kubernetes.io/conditions": *tt.annotation}
			}
			healthCheck(t, hpa, tt.want, tt.wantMsg)
		})
	}
}

func healthAPIService(conditions any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec":       map[string]any{"group": "metrics.k8s.io", "version": "v1beta1"},
	}}
	if conditions != nil {
		u.Object["status"] = map[string]any{"conditions": conditions}
	}
	return u
}

func TestHealthAPIService(t *testing.T) {
	available := func(status string) []any {
		return []any{map[string]any{"type": "Available", "status": status, "reason": "Passed", "message": "all checks passed", "lastTransitionTime": "2026-01-02T03:00:00Z"}}
	}
	wrongVersion := healthAPIService(available("True"))
	wrongVersion.SetAPIVersion("apiregistration.k8s.io/v1beta1")
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		want    HealthStatus
		wantMsg string
	}{
		{"Available True", healthAPIService(available("True")), HealthHealthy, "Passed: all checks passed"},
		{"Available False", healthAPIService(available("False")), HealthProgressing, "Passed"},
		{"Available Unknown", healthAPIService(available("Unknown")), HealthProgressing, ""},
		{"no Available condition", healthAPIService([]any{map[string]any{"type": "Other", "status": "True"}}), HealthProgressing, "Waiting to be processed"},
		{"no status", healthAPIService(nil), HealthProgressing, "Waiting to be processed"},
		{"wrong version", wrongVersion, HealthUnknown, `unsupported apiVersion "apiregistration.k8s.io/v1beta1"`},
		{"unreadable conditions", healthAPIService("Available"), HealthUnknown, "kubeview: read APIService v1beta1.metrics.k8s.io"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthCheck(t, tt.obj, tt.want, tt.wantMsg)
			if got, want := APIServiceHealth(tt.obj).Status, tt.want; got != want {
				t.Errorf("APIServiceHealth(%s) = %s, want %s", tt.name, got, want)
			}
		})
	}
}

// healthApp returns an App CR of generation gen; status, when not nil, is its
// status.
func healthApp(gen int64, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1",
		"kind":       "App",
		"metadata":   map[string]any{"namespace": "ns", "name": "web", "generation": gen},
		"spec":       map[string]any{"image": "ghcr.io/hanzoai/web:1.2.3"},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func healthAppReady(observed int64, status, reason, message string) map[string]any {
	return map[string]any{
		"observedGeneration": observed,
		"conditions": []any{
			map[string]any{"type": "Progressing", "status": "True", "reason": "Failed"},
			map[string]any{"type": "Ready", "status": status, "reason": reason, "message": message, "lastTransitionTime": "2026-01-02T03:00:00Z"},
		},
	}
}

func TestHealthAppCR(t *testing.T) {
	wrongVersion := healthApp(1, healthAppReady(1, "True", "Ready", ""))
	wrongVersion.SetAPIVersion("hanzo.ai/v2")
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		want    HealthStatus
		wantMsg string
	}{
		{"generation not observed", healthApp(3, healthAppReady(2, "True", "Ready", "")), HealthProgressing, "operator has not observed generation 3"},
		{"no status yet", healthApp(1, nil), HealthProgressing, "operator has not observed generation 1"},
		{"no status, no generation", healthApp(0, nil), HealthProgressing, "Waiting for the operator"},
		{"no Ready condition", healthApp(1, map[string]any{"observedGeneration": int64(1)}), HealthProgressing, "Waiting for the operator"},
		{"Ready True", healthApp(2, healthAppReady(2, "True", "Ready", "3 of 3 replicas ready")), HealthHealthy, "3 of 3 replicas ready"},
		{"Ready True with a failure reason", healthApp(2, healthAppReady(2, "True", "RecoveredFromFailure", "")), HealthHealthy, ""},
		{"Ready False Fail", healthApp(2, healthAppReady(2, "False", "ReconcileFailed", "cannot create Deployment")), HealthDegraded, "ReconcileFailed: cannot create Deployment"},
		{"Ready False Error", healthApp(2, healthAppReady(2, "False", "ImagePullError", "")), HealthDegraded, "ImagePullError"},
		{"Ready False Degraded", healthApp(2, healthAppReady(2, "False", "WorkloadDegraded", "")), HealthDegraded, ""},
		{"Ready False Crash", healthApp(2, healthAppReady(2, "False", "PodCrashing", "")), HealthDegraded, ""},
		{"Ready False BackOff", healthApp(2, healthAppReady(2, "False", "ImagePullBackOff", "")), HealthDegraded, ""},
		{"Ready False DeadlineExceeded", healthApp(2, healthAppReady(2, "False", "ProgressDeadlineExceeded", "")), HealthDegraded, ""},
		{"Ready False Invalid", healthApp(2, healthAppReady(2, "False", "InvalidSpec", "spec.port: must be 1-65535")), HealthDegraded, "must be 1-65535"},
		{"Ready False reason in lower case", healthApp(2, healthAppReady(2, "False", "crashloopbackoff", "")), HealthDegraded, ""},
		{"Ready False otherwise", healthApp(2, healthAppReady(2, "False", "RolloutInProgress", "1 of 3 updated")), HealthProgressing, "RolloutInProgress: 1 of 3 updated"},
		{"Ready False with no reason", healthApp(2, healthAppReady(2, "False", "", "")), HealthProgressing, ""},
		{"Ready Unknown with a failure reason", healthApp(2, healthAppReady(2, "Unknown", "ReconcileFailed", "")), HealthProgressing, "ReconcileFailed"},
		{"wrong version", wrongVersion, HealthUnknown, `unsupported apiVersion "hanzo.ai/v2", want "hanzo.ai/v1"`},
		{"unreadable status", healthApp(1, map[string]any{"conditions": "Ready"}), HealthUnknown, "kubeview: read App ns/web"},
		{"unreadable observedGeneration", healthApp(1, map[string]any{"observedGeneration": "one"}), HealthUnknown, "kubeview: read App ns/web"},
		{"status not an object", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "hanzo.ai/v1", "kind": "App", "status": "Ready"}}, HealthUnknown, "kubeview: read App"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthCheck(t, tt.obj, tt.want, tt.wantMsg)
			if got, want := AppCRHealth(tt.obj, appcr.GroupVersion).Status, tt.want; got != want {
				t.Errorf("AppCRHealth(%s) = %s, want %s", tt.name, got, want)
			}
		})
	}
}

// TestHealthAppCROfAnotherResource reads Apps of a resource chosen with
// --app-resource (another group, version and kind): AppCRHealth checks the
// version it is given, not the default hanzo.ai/v1.
func TestHealthAppCROfAnotherResource(t *testing.T) {
	widgets := schema.GroupVersion{Group: "example.com", Version: "v1alpha1"}
	widget := func(apiVersion string, status map[string]any) *unstructured.Unstructured {
		u := healthApp(2, status)
		u.SetAPIVersion(apiVersion)
		u.SetKind("Widget")
		return u
	}
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		gv      schema.GroupVersion
		want    HealthStatus
		wantMsg string
	}{
		{"Ready True", widget("example.com/v1alpha1", healthAppReady(2, "True", "Ready", "3 of 3 replicas ready")), widgets, HealthHealthy, "3 of 3 replicas ready"},
		{"Ready False Fail", widget("example.com/v1alpha1", healthAppReady(2, "False", "ReconcileFailed", "no quota")), widgets, HealthDegraded, "ReconcileFailed: no quota"},
		{"generation not observed", widget("example.com/v1alpha1", healthAppReady(1, "True", "Ready", "")), widgets, HealthProgressing, "operator has not observed generation 2"},
		{"another version of the group", widget("example.com/v2", healthAppReady(2, "True", "Ready", "")), widgets, HealthUnknown, `unsupported apiVersion "example.com/v2", want "example.com/v1alpha1"`},
		{"the default App read as a Widget", healthApp(2, healthAppReady(2, "True", "Ready", "")), widgets, HealthUnknown, `unsupported apiVersion "hanzo.ai/v1", want "example.com/v1alpha1"`},
		{"a Widget read as the default App", widget("example.com/v1alpha1", healthAppReady(2, "True", "Ready", "")), appcr.GroupVersion, HealthUnknown, `want "hanzo.ai/v1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppCRHealth(tt.obj, tt.gv)
			if got.Status != tt.want || !strings.Contains(got.Message, tt.wantMsg) {
				t.Errorf("AppCRHealth(%s, %s) = %+v, want status %s with message containing %q", tt.name, tt.gv, got, tt.want, tt.wantMsg)
			}
		})
	}
}

func TestHealthPendingDeletion(t *testing.T) {
	deleting := metav1.ObjectMeta{Namespace: "ns", Name: "web", DeletionTimestamp: &healthT0}
	deletingUnstructured := func(apiVersion, kind string, extra map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
		for k, v := range extra {
			u.Object[k] = v
		}
		u.SetNamespace("ns")
		u.SetName("web")
		u.SetDeletionTimestamp(&healthT0)
		return u
	}
	// Each rule is called directly, so that its own check is exercised, and
	// through HealthOf. The objects are otherwise Suspended, Healthy or
	// Degraded, or cannot be read.
	tests := []struct {
		name string
		obj  runtime.Object
		rule func(runtime.Object) Health // nil when only HealthOf applies
	}{
		{"Deployment", &appsv1.Deployment{ObjectMeta: deleting, Spec: appsv1.DeploymentSpec{Paused: true}},
			func(o runtime.Object) Health { return DeploymentHealth(o.(*appsv1.Deployment)) }},
		{"ReplicaSet", &appsv1.ReplicaSet{ObjectMeta: deleting},
			func(o runtime.Object) Health { return ReplicaSetHealth(o.(*appsv1.ReplicaSet)) }},
		{"StatefulSet", &appsv1.StatefulSet{ObjectMeta: deleting},
			func(o runtime.Object) Health { return StatefulSetHealth(o.(*appsv1.StatefulSet)) }},
		{"DaemonSet", &appsv1.DaemonSet{ObjectMeta: deleting},
			func(o runtime.Object) Health { return DaemonSetHealth(o.(*appsv1.DaemonSet)) }},
		{"Pod", &corev1.Pod{ObjectMeta: deleting, Status: corev1.PodStatus{Phase: corev1.PodFailed}},
			func(o runtime.Object) Health { return PodHealth(o.(*corev1.Pod)) }},
		{"Job", &batchv1.Job{ObjectMeta: deleting},
			func(o runtime.Object) Health { return JobHealth(o.(*batchv1.Job)) }},
		{"CronJob", &batchv1.CronJob{ObjectMeta: deleting},
			func(o runtime.Object) Health { return CronJobHealth(o.(*batchv1.CronJob)) }},
		{"Service", &corev1.Service{ObjectMeta: deleting},
			func(o runtime.Object) Health { return ServiceHealth(o.(*corev1.Service)) }},
		{"Ingress", &networkingv1.Ingress{ObjectMeta: deleting},
			func(o runtime.Object) Health { return IngressHealth(o.(*networkingv1.Ingress)) }},
		{"PersistentVolumeClaim", &corev1.PersistentVolumeClaim{ObjectMeta: deleting, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimLost}},
			func(o runtime.Object) Health { return PersistentVolumeClaimHealth(o.(*corev1.PersistentVolumeClaim)) }},
		{"HorizontalPodAutoscaler v2", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: deleting},
			func(o runtime.Object) Health {
				return HorizontalPodAutoscalerHealth(o.(*autoscalingv2.HorizontalPodAutoscaler))
			}},
		{"HorizontalPodAutoscaler v1 with bad JSON", &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{
			Name: "web", DeletionTimestamp: &healthT0, Annotations: map[string]string{"autoscaling.alpha.kubernetes.io/conditions": "{"},
		}}, func(o runtime.Object) Health {
			return HorizontalPodAutoscalerV1Health(o.(*autoscalingv1.HorizontalPodAutoscaler))
		}},
		{"unstructured APIService", deletingUnstructured("apiregistration.k8s.io/v1", "APIService", nil),
			func(o runtime.Object) Health { return APIServiceHealth(o.(*unstructured.Unstructured)) }},
		{"unstructured App with a bad version", deletingUnstructured("hanzo.ai/v9", "App", map[string]any{"status": "bad"}),
			func(o runtime.Object) Health { return AppCRHealth(o.(*unstructured.Unstructured), appcr.GroupVersion) }},
		{"unstructured Deployment that cannot be read", deletingUnstructured("apps/v1", "Deployment", map[string]any{"spec": "bad"}), nil},
		{"unstructured Deployment of another version", deletingUnstructured("apps/v1beta2", "Deployment", nil), nil},
		{"unstructured CronJob with no status", deletingUnstructured("batch/v1", "CronJob", nil), nil},
		// As in ArgoCD, the deletion rule comes before the kind lookup.
		{"ConfigMap (a kind with no rule)", &corev1.ConfigMap{ObjectMeta: deleting}, nil},
		{"unstructured ConfigMap", deletingUnstructured("v1", "ConfigMap", nil), nil},
	}
	want := Health{Status: HealthProgressing, Message: "Pending deletion"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := HealthOf(tt.obj)
			if !ok {
				t.Fatalf("HealthOf(%s) ok = false, want true", tt.name)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("HealthOf(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
			if tt.rule != nil {
				if diff := cmp.Diff(want, tt.rule(tt.obj)); diff != "" {
					t.Errorf("the %s rule mismatch (-want +got):\n%s", tt.name, diff)
				}
			}
		})
	}
}

func TestHealthOfNoRule(t *testing.T) {
	var nilDeployment *appsv1.Deployment
	tests := []struct {
		name string
		obj  runtime.Object
	}{
		{"nil", nil},
		{"nil Deployment", nilDeployment},
		{"ConfigMap", &corev1.ConfigMap{ObjectMeta: healthMeta(1)}},
		{"Secret", &corev1.Secret{ObjectMeta: healthMeta(1)}},
		{"unstructured ConfigMap", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "web"}}}},
		{"unstructured Deployment in the core group", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Deployment"}}},
		{"unstructured custom resource", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "App"}}},
		{"unstructured list", &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := HealthOf(tt.obj); ok {
				t.Errorf("HealthOf(%s) = %+v, true, want no health (ok false)", tt.name, got)
			}
		})
	}
}

// healthToUnstructured converts a typed object to its unstructured form.
func healthToUnstructured(t *testing.T, obj runtime.Object, apiVersion, kind string) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatalf("ToUnstructured(%T) error: %v", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

func TestHealthOfUnstructured(t *testing.T) {
	hpaV1 := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{
		"autoscaling.alpha.kubernetes.io/conditions": `[{"type":"ScalingActive","status":"False","reason":"InvalidSelector","message":"bad selector"}]`,
	}}}
	tests := []struct {
		name       string
		obj        runtime.Object
		apiVersion string
		kind       string
	}{
		{"Deployment Healthy", healthDeployment(func(*appsv1.Deployment) {}), "apps/v1", "Deployment"},
		{"Deployment Progressing", healthDeployment(func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 2 }), "apps/v1", "Deployment"},
		{"ReplicaSet Degraded", healthReplicaSet(func(rs *appsv1.ReplicaSet) {
			rs.Status.Conditions = []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Message: "quota"}}
		}), "apps/v1", "ReplicaSet"},
		{"StatefulSet Progressing", healthStatefulSet(func(sts *appsv1.StatefulSet) { sts.Status.UpdateRevision = "web-2" }), "apps/v1", "StatefulSet"},
		{"DaemonSet Healthy", healthDaemonSet(func(*appsv1.DaemonSet) {}), "apps/v1", "DaemonSet"},
		{"Pod Degraded", healthPod(corev1.RestartPolicyAlways, corev1.PodRunning, func(pod *corev1.Pod) {
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{healthWaiting("web", "CrashLoopBackOff", "back-off")}
		}), "v1", "Pod"},
		{"Job Suspended", healthJob(batchv1.JobCondition{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Message: "suspended"}), "batch/v1", "Job"},
		{"CronJob Degraded", healthCronJob(func(cj *batchv1.CronJob) {
			cj.Status = batchv1.CronJobStatus{LastScheduleTime: &healthT1, LastSuccessfulTime: &healthT0}
		}), "batch/v1", "CronJob"},
		{"Service Progressing", &corev1.Service{ObjectMeta: healthMeta(1), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}, "v1", "Service"},
		{"Ingress Healthy", &networkingv1.Ingress{ObjectMeta: healthMeta(1), Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
			Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.7"}},
		}}}, "networking.k8s.io/v1", "Ingress"},
		{"PersistentVolumeClaim Degraded", &corev1.PersistentVolumeClaim{ObjectMeta: healthMeta(1), Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimLost}}, "v1", "PersistentVolumeClaim"},
		{"HorizontalPodAutoscaler v2 Healthy", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: healthMeta(1), Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Message: "ok"}},
		}}, "autoscaling/v2", "HorizontalPodAutoscaler"},
		{"HorizontalPodAutoscaler v1 Degraded", hpaV1, "autoscaling/v1", "HorizontalPodAutoscaler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, wantOK := HealthOf(tt.obj)
			u := healthToUnstructured(t, tt.obj, tt.apiVersion, tt.kind)
			got, ok := HealthOf(u)
			if ok != wantOK {
				t.Fatalf("HealthOf(unstructured %s) ok = %t, want %t", tt.name, ok, wantOK)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("HealthOf(unstructured %s) mismatch with the typed object (-want +got):\n%s", tt.name, diff)
			}
			if wantStatus := HealthStatus(strings.Fields(tt.name)[len(strings.Fields(tt.name))-1]); got.Status != wantStatus {
				t.Errorf("HealthOf(unstructured %s) = %+v, want status %s", tt.name, got, wantStatus)
			}
		})
	}
}

func TestHealthOfUnreadable(t *testing.T) {
	object := func(apiVersion, kind string, fields map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"namespace": "ns", "name": "web"},
		}}
		for k, v := range fields {
			u.Object[k] = v
		}
		return u
	}
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		wantMsg string
	}{
		{"Deployment apps/v1beta1", object("apps/v1beta1", "Deployment", nil), `kubeview: Deployment ns/web: unsupported apiVersion "apps/v1beta1", want "apps/v1"`},
		{"Deployment extensions/v1beta1", object("extensions/v1beta1", "Deployment", nil), "unsupported apiVersion"},
		{"ReplicaSet extensions/v1beta1", object("extensions/v1beta1", "ReplicaSet", nil), "unsupported apiVersion"},
		{"DaemonSet extensions/v1beta1", object("extensions/v1beta1", "DaemonSet", nil), "unsupported apiVersion"},
		{"Ingress extensions/v1beta1", object("extensions/v1beta1", "Ingress", nil), "unsupported apiVersion"},
		{"Ingress networking.k8s.io/v1beta1", object("networking.k8s.io/v1beta1", "Ingress", nil), "unsupported apiVersion"},
		{"HorizontalPodAutoscaler autoscaling/v2beta2", object("autoscaling/v2beta2", "HorizontalPodAutoscaler", nil), `want "autoscaling/v2"`},
		{"CronJob batch/v1beta1 without status", object("batch/v1beta1", "CronJob", nil), "unsupported apiVersion"},
		{"Deployment with a bad field", object("apps/v1", "Deployment", map[string]any{"spec": map[string]any{"replicas": "three"}}), "kubeview: read Deployment ns/web"},
		{"Pod with a bad status", object("v1", "Pod", map[string]any{"status": []any{"Running"}}), "kubeview: read Pod ns/web"},
		{"HorizontalPodAutoscaler v1 with bad JSON", object("autoscaling/v1", "HorizontalPodAutoscaler", map[string]any{
			"metadata": map[string]any{"namespace": "ns", "name": "web", "annotations": map[string]any{"autoscaling.alpha.kubernetes.io/conditions": "not json"}},
		}), "read conditions annotation"},
		{"App CR hanzo.ai/v1beta1", object("hanzo.ai/v1beta1", "App", nil), "unsupported apiVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			healthCheck(t, tt.obj, HealthUnknown, tt.wantMsg)
		})
	}
}

func TestHealthStatusWorse(t *testing.T) {
	order := []HealthStatus{HealthHealthy, HealthSuspended, HealthProgressing, HealthMissing, HealthDegraded, HealthUnknown}
	for i, a := range order {
		for j, b := range order {
			if got, want := a.Worse(b), i > j; got != want {
				t.Errorf("%s.Worse(%s) = %t, want %t", a, b, got, want)
			}
		}
	}
	tests := []struct {
		name string
		a, b HealthStatus
		want bool
	}{
		{"Degraded worse than Missing", HealthDegraded, HealthMissing, true},
		{"Missing worse than Progressing", HealthMissing, HealthProgressing, true},
		{"Suspended not worse than Progressing", HealthSuspended, HealthProgressing, false},
		{"Healthy worse than no health", HealthHealthy, "", true},
		{"no health not worse than Healthy", "", HealthHealthy, false},
		{"unrecognised code ranks as Unknown", "Bogus", HealthDegraded, true},
		{"Unknown not worse than an unrecognised code", HealthUnknown, "Bogus", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Worse(tt.b); got != tt.want {
				t.Errorf("HealthStatus(%q).Worse(%q) = %t, want %t", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestAggregateHealth(t *testing.T) {
	item := func(group, kind, name string, status HealthStatus, msg string) HealthItem {
		return HealthItem{Group: group, Kind: kind, Namespace: "ns", Name: name, Health: Health{Status: status, Message: msg}}
	}
	app := item("hanzo.ai", "App", "web", HealthHealthy, "ready")
	deploy := item("apps", "Deployment", "web", HealthProgressing, "1 of 3 updated")
	svc := item("", "Service", "web", HealthHealthy, "")
	cm := item("", "ConfigMap", "web", "", "")
	degraded := func(n int) []HealthItem {
		var items []HealthItem
		for i := range n {
			items = append(items, item("", "PersistentVolumeClaim", fmt.Sprintf("data-%d", i), HealthDegraded, ""))
		}
		return items
	}
	tests := []struct {
		name        string
		items       []HealthItem
		hasWorkload bool
		workloadRef string
		want        Health
	}{
		{"all Healthy", []HealthItem{app, svc}, true, "", Health{Status: HealthHealthy}},
		{"worst wins", []HealthItem{app, deploy, svc}, true, "", Health{Status: HealthProgressing, Message: "Caused by apps/Deployment:ns/web (1 of 3 updated)"}},
		{"Unknown wins over Degraded", []HealthItem{
			app, item("apps", "Deployment", "web", HealthDegraded, "deadline"),
			item("autoscaling", "HorizontalPodAutoscaler", "web", HealthUnknown, "bad annotation"),
		}, true, "", Health{Status: HealthUnknown, Message: "Caused by autoscaling/HorizontalPodAutoscaler:ns/web (bad annotation)"}},
		{"Suspended CR", []HealthItem{item("hanzo.ai", "App", "web", HealthSuspended, ""), svc}, true, "", Health{Status: HealthSuspended, Message: "Caused by hanzo.ai/App:ns/web"}},
		{"no-health items skipped", []HealthItem{cm, app, cm}, true, "", Health{Status: HealthHealthy}},
		{"only no-health items", []HealthItem{cm}, true, "", Health{Status: HealthHealthy}},
		{"no items", nil, true, "", Health{Status: HealthHealthy}},
		{"cluster-scoped culprit", []HealthItem{app, {Group: "apiregistration.k8s.io", Kind: "APIService", Name: "v1.example.com", Health: Health{Status: HealthProgressing}}},
			true, "", Health{Status: HealthProgressing, Message: "Caused by apiregistration.k8s.io/APIService:v1.example.com"}},
		{"Missing when no workload", []HealthItem{app, item("hanzo.ai", "App", "web", HealthDegraded, "failed")}, false, "Deployment ns/web",
			Health{Status: HealthMissing, Message: "Deployment ns/web does not exist"}},
		{"Missing with no workload name", nil, false, "", Health{Status: HealthMissing, Message: "The workload does not exist"}},
		{"three culprits", append([]HealthItem{app}, degraded(3)...), true, "", Health{Status: HealthDegraded,
			Message: "Caused by v1/PersistentVolumeClaim:ns/data-0, v1/PersistentVolumeClaim:ns/data-1, v1/PersistentVolumeClaim:ns/data-2"}},
		{"five culprits", append(append([]HealthItem{deploy}, degraded(5)...), svc), true, "", Health{Status: HealthDegraded,
			Message: "Caused by v1/PersistentVolumeClaim:ns/data-0, v1/PersistentVolumeClaim:ns/data-1, v1/PersistentVolumeClaim:ns/data-2 and 2 more"}},
		{"culprits in item order", []HealthItem{
			item("apps", "Deployment", "web", HealthDegraded, "2 of 3 updated"), svc,
			item("", "Service", "api", HealthDegraded, "no endpoints"), app,
			item("hanzo.ai", "App", "web", HealthDegraded, ""),
			item("networking.k8s.io", "Ingress", "web", HealthDegraded, ""),
		}, true, "", Health{Status: HealthDegraded,
			Message: "Caused by apps/Deployment:ns/web (2 of 3 updated), v1/Service:ns/api (no endpoints), hanzo.ai/App:ns/web and 1 more"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AggregateHealth(tt.items, tt.hasWorkload, tt.workloadRef)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AggregateHealth(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestHealthCulprits(t *testing.T) {
	items := []HealthStatus{HealthHealthy, HealthDegraded, "", HealthProgressing, HealthDegraded, HealthDegraded}
	id := func(s HealthStatus) HealthStatus { return s }
	tests := []struct {
		st       HealthStatus
		max      int
		want     []HealthStatus
		wantMore int
	}{
		{HealthDegraded, 3, []HealthStatus{HealthDegraded, HealthDegraded, HealthDegraded}, 0},
		{HealthDegraded, 2, []HealthStatus{HealthDegraded, HealthDegraded}, 1},
		{HealthProgressing, 3, []HealthStatus{HealthProgressing}, 0},
		{HealthHealthy, 3, nil, 0},
		{"", 3, nil, 0},
		{HealthMissing, 3, nil, 0},
	}
	for _, tt := range tests {
		got, more := HealthCulprits(tt.st, items, id, tt.max)
		if !slices.Equal(got, tt.want) || more != tt.wantMore {
			t.Errorf("HealthCulprits(%q, max %d) = %v, %d, want %v, %d", tt.st, tt.max, got, more, tt.want, tt.wantMore)
		}
	}
}
