package kubeview

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/objrules"
)

var trimT0 = metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))

// fullPodSpec is a pod spec as a real cluster serves it: what the operator
// renders and what admission adds.
func fullPodSpec(name, image string) corev1.PodSpec {
	return corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "migrate", Image: "r/migrate:1", Command: []string{"/migrate"}, Args: []string{"--up"}},
			{Name: "proxy", Image: "r/proxy:2", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
		},
		Containers: []corev1.Container{{
			Name: name, Image: image, Command: []string{"/app"}, Args: []string{"--port=8080"},
			Env:            []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "SECRETISH", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}}},
			Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			Resources:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}},
			LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}},
			VolumeMounts:   []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
		}},
		Volumes:       []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}},
		Tolerations:   []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}},
		Affinity:      &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
		RestartPolicy: corev1.RestartPolicyAlways, NodeName: "node-0", DNSPolicy: corev1.DNSClusterFirst,
		ServiceAccountName: "default", SchedulerName: "default-scheduler", TerminationGracePeriodSeconds: ptr.To[int64](30),
	}
}

func leanSpecWant(name, image string) corev1.PodSpec {
	return corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "migrate", Image: "r/migrate:1"}, {Name: "proxy", Image: "r/proxy:2", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
		Containers:     []corev1.Container{{Name: name, Image: image}},
		RestartPolicy:  corev1.RestartPolicyAlways, NodeName: "node-0",
	}
}

func fullMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: "shop", UID: k8stypes.UID("uid-" + name), ResourceVersion: "7", Generation: 2, CreationTimestamp: trimT0,
		Labels: map[string]string{appcr.InstanceLabel: "web", "app.kubernetes.io/managed-by": "hanzo-operator", "pod-template-hash": "5d8f"},
		Annotations: map[string]string{appcr.LastAppliedAnnotation: `{"big":"copy"}`, "deployment.kubernetes.io/revision": "3",
			"hanzo.ai/applied-hash": "0123456789abcdef", "kubectl.kubernetes.io/default-container": "web"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "hanzo.ai/v1", Kind: "App", Name: "web", UID: "app-web", Controller: ptr.To(true)}},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "hanzo-operator", Operation: metav1.ManagedFieldsOperationApply}},
	}
}

func leanMeta(name string) metav1.ObjectMeta {
	m := fullMeta(name)
	m.ManagedFields = nil
	m.Labels = map[string]string{appcr.InstanceLabel: "web"}
	m.Annotations = map[string]string{"deployment.kubernetes.io/revision": "3", "kubectl.kubernetes.io/default-container": "web"}
	return m
}

// TestStripObject: each kind keeps what the pages read (see stripObject)
// and loses the rest: managedFields, the last-applied annotation, and of
// pods and pod templates everything but the containers' names and images.
func TestStripObject(t *testing.T) {
	podStatus := corev1.PodStatus{
		Phase: corev1.PodRunning, Message: "m", Reason: "r", StartTime: &trimT0,
		HostIP: "10.0.0.1", PodIP: "10.244.0.9", PodIPs: []corev1.PodIP{{IP: "10.244.0.9"}}, QOSClass: corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "web", Image: "r/web:1", ImageID: "r/web@sha256:abc", ContainerID: "containerd://1", Ready: true, Started: ptr.To(true), RestartCount: 4,
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: trimT0}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
			VolumeMounts:         []corev1.VolumeMountStatus{{Name: "kube-api-access"}},
			AllocatedResources:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
		}},
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", ImageID: "x", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: "done"}}}},
	}
	leanStatus := corev1.PodStatus{
		Phase: corev1.PodRunning, Message: "m", Reason: "r", StartTime: &trimT0,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "web", Image: "r/web:1", Ready: true, Started: ptr.To(true), RestartCount: 4,
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: trimT0}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
		}},
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: "done"}}}},
	}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{appcr.InstanceLabel: "web"}}
	full := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"pod-template-hash": "5d8f"}, Annotations: map[string]string{"a": "b"}}, Spec: fullPodSpec("web", "r/web:1")}
	lean := corev1.PodTemplateSpec{Spec: leanSpecWant("web", "r/web:1")}
	depStatus := appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}}
	tests := []struct {
		name     string
		in, want runtime.Object
	}{
		{"Pod",
			&corev1.Pod{ObjectMeta: fullMeta("web-1"), Spec: full.Spec, Status: podStatus},
			&corev1.Pod{ObjectMeta: leanMeta("web-1"), Spec: lean.Spec, Status: leanStatus}},
		{"ReplicaSet",
			&appsv1.ReplicaSet{ObjectMeta: fullMeta("web-5d8f"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Selector: sel, Template: full}, Status: appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 2}},
			&appsv1.ReplicaSet{ObjectMeta: leanMeta("web-5d8f"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Template: lean}, Status: appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 2}}},
		{"Deployment",
			&appsv1.Deployment{ObjectMeta: fullMeta("web"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Paused: true, Selector: sel, Template: full}, Status: depStatus},
			&appsv1.Deployment{ObjectMeta: leanMeta("web"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Paused: true, Template: lean}, Status: depStatus}},
		{"StatefulSet",
			&appsv1.StatefulSet{ObjectMeta: fullMeta("db"), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: sel, Template: full,
				UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}}},
			&appsv1.StatefulSet{ObjectMeta: leanMeta("db"), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Template: lean,
				UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}}}}},
		{"DaemonSet",
			&appsv1.DaemonSet{ObjectMeta: fullMeta("agent"), Spec: appsv1.DaemonSetSpec{Selector: sel, Template: full, UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}},
			&appsv1.DaemonSet{ObjectMeta: leanMeta("agent"), Spec: appsv1.DaemonSetSpec{Template: lean, UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}}},
		{"Job",
			&batchv1.Job{ObjectMeta: fullMeta("seed"), Spec: batchv1.JobSpec{Suspend: ptr.To(true), Selector: sel, Template: full}},
			&batchv1.Job{ObjectMeta: leanMeta("seed"), Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: lean}}},
		{"CronJob",
			&batchv1.CronJob{ObjectMeta: fullMeta("nightly"), Spec: batchv1.CronJobSpec{Schedule: "@daily", JobTemplate: batchv1.JobTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](6), Template: full}}}},
			&batchv1.CronJob{ObjectMeta: leanMeta("nightly"), Spec: batchv1.CronJobSpec{Schedule: "@daily", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: lean}}}}},
		{"ConfigMap: no data",
			&corev1.ConfigMap{ObjectMeta: fullMeta("cfg"), Data: map[string]string{"big": "x"}, BinaryData: map[string][]byte{"b": {1}}},
			&corev1.ConfigMap{ObjectMeta: leanMeta("cfg")}},
		{"Service: type and status",
			&corev1.Service{ObjectMeta: fullMeta("web"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.9", Selector: map[string]string{"a": "b"},
				Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}, Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}}}},
			&corev1.Service{ObjectMeta: leanMeta("web"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
				Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}}}}},
		{"only a last-applied annotation: none left",
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: map[string]string{appcr.LastAppliedAnnotation: "{}"}}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := stripObject(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stripObject(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestStripApp: the App keeps what the row, the tree and its health read
// (identity, owners, generation, deletion, the instance label, spec.image,
// status.observedGeneration and conditions) and nothing else of a custom
// resource that may carry anything.
func TestStripApp(t *testing.T) {
	conds := []any{map[string]any{"type": "Ready", "status": "True", "reason": "RolloutComplete", "message": "ok"}}
	owners := []any{map[string]any{"apiVersion": "x/v1", "kind": "Team", "name": "t", "uid": "t1"}}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "9", "generation": int64(3),
			"creationTimestamp": "2026-11-30T12:00:00Z", "deletionTimestamp": "2026-11-30T13:00:00Z", "ownerReferences": owners,
			"finalizers": []any{"hanzo.ai/finalizer"},
			"labels":     map[string]any{appcr.InstanceLabel: "web", "team": "shop"},
			"annotations": map[string]any{
				appcr.LastAppliedAnnotation: "{}", appcr.SyncRequestedAnnotation: "2026-11-30T12:00:00Z"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec":   map[string]any{"image": "r/web:1.2.0", "env": []any{map[string]any{"name": "A", "value": "b"}}, "replicas": int64(3)},
		"status": map[string]any{"observedGeneration": int64(3), "conditions": conds, "history": []any{"big"}},
		"extra":  "x",
	}}
	got, err := stripObject(u)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "9", "generation": int64(3),
			"creationTimestamp": "2026-11-30T12:00:00Z", "deletionTimestamp": "2026-11-30T13:00:00Z", "ownerReferences": owners,
			"labels": map[string]any{appcr.InstanceLabel: "web"}},
		"spec":   map[string]any{"image": "r/web:1.2.0"},
		"status": map[string]any{"observedGeneration": int64(3), "conditions": conds},
	}
	if diff := cmp.Diff(want, got.(*unstructured.Unstructured).Object); diff != "" {
		t.Errorf("stripObject(App) (-want +got):\n%s", diff)
	}
	gv := schema.GroupVersion{Group: "hanzo.ai", Version: "v1"}
	u.SetDeletionTimestamp(nil)
	lean := leanApp(u)
	if got, want := objrules.AppCRHealth(lean, gv), objrules.AppCRHealth(u, gv); got != want {
		t.Errorf("AppCRHealth(stripped) = %+v, want %+v", got, want)
	}
}

// TestStripKeepsWhatPagesRead: the health rules, the tree's node info, the
// log picker and the images of history and sync answer the same on a
// stripped object as on the whole one, for pods and workloads in every
// state the rules tell apart.
func TestStripKeepsWhatPagesRead(t *testing.T) {
	pod := func(status corev1.PodStatus, policy corev1.RestartPolicy) *corev1.Pod {
		spec := fullPodSpec("web", "r/web:1")
		spec.RestartPolicy = policy
		return &corev1.Pod{ObjectMeta: fullMeta("web-1"), Spec: spec, Status: status}
	}
	waiting := func(reason string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "web", RestartCount: 9, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "back-off 5m"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}
	}
	deleting := pod(corev1.PodStatus{Phase: corev1.PodRunning}, corev1.RestartPolicyAlways)
	deleting.DeletionTimestamp = &trimT0
	objs := []runtime.Object{
		pod(corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Ready: true, RestartCount: 1}}}, corev1.RestartPolicyAlways),
		pod(corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}, {Type: corev1.ContainersReady, Status: corev1.ConditionFalse}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "web"}}}, corev1.RestartPolicyAlways),
		pod(corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{waiting("CrashLoopBackOff")}}, corev1.RestartPolicyAlways),
		pod(corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{waiting("ImagePullBackOff")}}, corev1.RestartPolicyAlways),
		pod(corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "web",
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}}, corev1.RestartPolicyAlways),
		pod(corev1.PodStatus{Phase: corev1.PodFailed, InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Message: "migration 42 failed"}}}}}, corev1.RestartPolicyNever),
		pod(corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "web",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}}, corev1.RestartPolicyOnFailure),
		pod(corev1.PodStatus{Phase: corev1.PodSucceeded, Message: "done"}, corev1.RestartPolicyNever),
		deleting,
		&appsv1.Deployment{ObjectMeta: fullMeta("web"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Template: corev1.PodTemplateSpec{Spec: fullPodSpec("web", "r/web:2")}},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2}},
		&appsv1.ReplicaSet{ObjectMeta: fullMeta("web-5d8f"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Template: corev1.PodTemplateSpec{Spec: fullPodSpec("web", "r/web:2")}},
			Status: appsv1.ReplicaSetStatus{Replicas: 3, AvailableReplicas: 1, ReadyReplicas: 1}},
		&appsv1.StatefulSet{ObjectMeta: fullMeta("db"), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Template: corev1.PodTemplateSpec{Spec: fullPodSpec("db", "r/db:2")},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](2)}}},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 1}},
		&appsv1.DaemonSet{ObjectMeta: fullMeta("agent"), Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: fullPodSpec("agent", "r/agent:1")},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}, Status: appsv1.DaemonSetStatus{ObservedGeneration: 2}},
		&batchv1.Job{ObjectMeta: fullMeta("seed"), Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: fullPodSpec("seed", "r/seed:1")}},
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Message: "BackoffLimitExceeded"}}}},
		&corev1.Service{ObjectMeta: fullMeta("lb"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}}},
		&batchv1.CronJob{ObjectMeta: fullMeta("nightly"), Spec: batchv1.CronJobSpec{Suspend: ptr.To(true), JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: fullPodSpec("n", "r/n:1")}}}}},
		fullHPA("scaling", autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ReadyForNewScale", Message: "recommended size matches current size"}),
		fullHPA("no-metrics", autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "SucceededGetScale"},
			autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionFalse, Reason: "FailedGetResourceMetric", Message: "missing request for cpu"}),
		fullHPA("waiting"),
	}
	// What the cache keeps is stripped and then interned (Cache.strip).
	c := &Cache{intern: newInterner()}
	for _, full := range objs {
		kind := kindName(full)
		t.Run(kind+"/"+full.(metav1.Object).GetName(), func(t *testing.T) {
			stripped, err := c.strip(full.DeepCopyObject())
			if err != nil {
				t.Fatal(err)
			}
			lean := stripped.(runtime.Object)
			if hpa, ok := lean.(*autoscalingv2.HorizontalPodAutoscaler); ok && (hpa.Spec.Metrics != nil || hpa.Status.CurrentMetrics != nil) {
				t.Errorf("stripped HPA keeps metrics: spec %v, status %v", hpa.Spec.Metrics, hpa.Status.CurrentMetrics)
			}
			k, _ := LookupKind(kindGroup(kind), kind)
			wantH, wantOK := objrules.HealthOf(full)
			gotH, gotOK := objrules.HealthOf(lean)
			if gotH != wantH || gotOK != wantOK {
				t.Errorf("HealthOf(stripped) = %+v, %v, want %+v, %v", gotH, gotOK, wantH, wantOK)
			}
			if diff := cmp.Diff(nodeOf(k, full.(metav1.Object), "p", 1), nodeOf(k, lean.(metav1.Object), "p", 1)); diff != "" {
				t.Errorf("nodeOf(stripped) (-whole +stripped):\n%s", diff)
			}
			if p, ok := full.(*corev1.Pod); ok {
				if diff := cmp.Diff(logPod(p, "web"), logPod(lean.(*corev1.Pod), "web")); diff != "" {
					t.Errorf("logPod(stripped) (-whole +stripped):\n%s", diff)
				}
			}
			if rs, ok := full.(*appsv1.ReplicaSet); ok {
				if got, want := containerImage(lean.(*appsv1.ReplicaSet).Spec.Template.Spec, "web"), containerImage(rs.Spec.Template.Spec, "web"); got != want {
					t.Errorf("containerImage(stripped template) = %q, want %q", got, want)
				}
			}
		})
	}
}

// fullHPA is an autoscaling/v2 HPA with metrics, behaviour and conditions,
// as a real cluster serves it.
func fullHPA(name string, conds ...autoscalingv2.HorizontalPodAutoscalerCondition) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: fullMeta(name),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](2), MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}}}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](300)}},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 3, LastScaleTime: &trimT0,
			CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
				Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](41)}}}},
			Conditions: conds},
	}
}

// kindGroup is the registry group of a kind name used in this file.
func kindGroup(kind string) string {
	switch kind {
	case "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet":
		return "apps"
	case "Job", "CronJob":
		return "batch"
	case "HorizontalPodAutoscaler":
		return "autoscaling"
	}
	return ""
}
