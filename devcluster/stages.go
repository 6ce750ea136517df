package devcluster

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kwok/kustomize/stage/node/fast"
	"sigs.k8s.io/kwok/kustomize/stage/node/heartbeat"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	"sigs.k8s.io/yaml"
)

// BehaviorLabel selects a simulated pod behaviour. A pod without it becomes
// Ready at once (KWOK's fast stages). Values:
//
//   - "slow": Running at once, Ready only after the duration in the pod
//     annotation ReadyDelayAnnotation (default 90s): a slow rollout.
//   - "crashloop": Running, its containers waiting in CrashLoopBackOff with
//     a restart count that grows every 30s, like a real kubelet.
//   - "imagepull": Pending, its containers waiting in ImagePullBackOff.
const BehaviorLabel = "sim.hanzo.ai/behavior"

// ReadyDelayAnnotation sets the readiness delay of a "slow" pod (KWOK's
// duration expression, for example "90s").
const ReadyDelayAnnotation = "sim.hanzo.ai/ready-delay"

// Behavior values for BehaviorLabel.
const (
	BehaviorSlow      = "slow"
	BehaviorCrashLoop = "crashloop"
	BehaviorImagePull = "imagepull"
)

// stages returns the KWOK Stage documents of the cluster: KWOK's own node
// stages, its fast pod stages restricted to pods without BehaviorLabel, and
// the behaviour stages.
func stages() ([]string, error) {
	ready, err := withoutBehavior(podfast.DefaultPodReady)
	if err != nil {
		return nil, err
	}
	return []string{
		fast.DefaultNodeInit,
		heartbeat.DefaultNodeHeartbeat,
		ready,
		podfast.DefaultPodComplete,
		podfast.DefaultPodDelete,
		slowStarted, slowReady,
		crashLoopStart, crashLoopRestart,
		imagePullBackOff,
	}, nil
}

// withoutBehavior adds "BehaviorLabel does not exist" to a Stage's selector.
func withoutBehavior(doc string) (string, error) {
	var st map[string]any
	if err := yaml.Unmarshal([]byte(doc), &st); err != nil {
		return "", fmt.Errorf("devcluster: parse stage: %w", err)
	}
	spec, _ := st["spec"].(map[string]any)
	sel, _ := spec["selector"].(map[string]any)
	if sel == nil {
		return "", fmt.Errorf("devcluster: stage has no selector")
	}
	exprs, _ := sel["matchExpressions"].([]any)
	sel["matchExpressions"] = append(exprs, map[string]any{
		"key":      fmt.Sprintf(".metadata.labels[%q]", BehaviorLabel),
		"operator": "DoesNotExist",
	})
	out, err := yaml.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("devcluster: encode stage: %w", err)
	}
	return string(out), nil
}

// behaviorSelector returns the selector lines shared by the behaviour stages.
func behaviorSelector(behavior string, extra string) string {
	return strings.TrimPrefix(fmt.Sprintf(`
  selector:
    matchExpressions:
    - key: '.metadata.labels["%s"]'
      operator: 'In'
      values: ['%s']
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
%s`, BehaviorLabel, behavior, extra), "\n")
}

// newPod matches a pod that KWOK has not yet given container statuses.
const newPod = `    - key: '.status.phase'
      operator: 'In'
      values: ['Pending']
    - key: '.status.containerStatuses'
      operator: 'DoesNotExist'`

const podIPs = `
      {{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      {{ with $podIPs }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}`

var slowStarted = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: sim-slow-started
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
` + behaviorSelector(BehaviorSlow, newPod) + `
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: ContainersNotReady
        message: "containers with unready status"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: ContainersNotReady
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        started: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}` + podIPs + `
      phase: Running
      startTime: {{ $now | Quote }}
`

var slowReady = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: sim-slow-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
` + behaviorSelector(BehaviorSlow, `    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'In'
      values: ['False']`) + `
  delay:
    durationMilliseconds: 90000
    durationFrom:
      expressionFrom: '.metadata.annotations["` + ReadyDelayAnnotation + `"]'
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        started: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
`

var crashLoopStart = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: sim-crashloop-start
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
` + behaviorSelector(BehaviorCrashLoop, newPod) + `
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: ContainersNotReady
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: ContainersNotReady
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        started: false
        restartCount: 1
        lastState:
          terminated:
            exitCode: 1
            reason: Error
            startedAt: {{ $now | Quote }}
            finishedAt: {{ $now | Quote }}
        state:
          waiting:
            reason: CrashLoopBackOff
            message: {{ printf "back-off 10s restarting failed container=%s" .name | Quote }}
      {{ end }}` + podIPs + `
      phase: Running
      startTime: {{ $now | Quote }}
`

var crashLoopRestart = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: sim-crashloop-restart
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
` + behaviorSelector(BehaviorCrashLoop, `    - key: '.status.phase'
      operator: 'In'
      values: ['Running']`) + `
  delay:
    durationMilliseconds: 30000
    jitterDurationMilliseconds: 40000
  next:
    statusTemplate: |
      {{ $now := Now }}
      containerStatuses:
      {{ range .status.containerStatuses }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        started: false
        restartCount: {{ add .restartCount 1 }}
        lastState:
          terminated:
            exitCode: 1
            reason: Error
            startedAt: {{ $now | Quote }}
            finishedAt: {{ $now | Quote }}
        state:
          waiting:
            reason: CrashLoopBackOff
            message: {{ printf "back-off %ds restarting failed container=%s" (min 300 (mul 10 (add .restartCount 1))) .name | Quote }}
      {{ end }}
`

var imagePullBackOff = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: sim-imagepull
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
` + behaviorSelector(BehaviorImagePull, newPod) + `
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: ContainersNotReady
        type: Ready
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        started: false
        restartCount: 0
        state:
          waiting:
            reason: ImagePullBackOff
            message: {{ printf "Back-off pulling image %q" .image | Quote }}
      {{ end }}` + podIPs + `
      phase: Pending
`
