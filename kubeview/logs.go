package kubeview

import (
	"context"
	"errors"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Log reading limits.
const (
	// DefaultTail is how many of the newest lines a read returns by default.
	DefaultTail = 500
	// MaxTail caps ?tail= (and the lines fetched when a stream resumes).
	MaxTail = 10000
	// MaxLineBytes caps one log line; the rest of a longer line is dropped
	// and the line is marked.
	MaxLineBytes = 64 << 10
	// TruncatedMark ends a line longer than MaxLineBytes.
	TruncatedMark = " [line truncated]"
)

// Log lookup errors (the handlers turn them into 400 / 404).
var (
	ErrPodNotInApp       = errors.New("kubeview: pod is not a pod of this app")
	ErrContainerNotInPod = errors.New("kubeview: container is not in the pod")
)

// LogQuery selects the logs of one App's pod.
type LogQuery struct {
	Namespace, App string
	// Pod names one of the App's pods; empty: the newest running pod.
	Pod string
	// Container names a container of the pod; empty: the pod's default
	// container (its kubectl.kubernetes.io/default-container annotation,
	// else the container named after the App, else the first).
	Container string
	// Tail is how many of the newest lines to read: 0 means DefaultTail,
	// anything above MaxTail is MaxTail.
	Tail int
	// Since reads only lines newer than this (0: no limit).
	Since time.Duration
	// SinceTime reads only lines at or after this time; with SkipAtSince,
	// it is where a follow stream resumes (the lines stamped exactly
	// SinceTime that were already seen are skipped).
	SinceTime   time.Time
	SkipAtSince int
	// Previous reads the previous (terminated) instance of the container.
	Previous bool
}

// normalized applies the defaults and caps.
func (q LogQuery) normalized() LogQuery {
	if q.Tail <= 0 {
		q.Tail = DefaultTail
	}
	q.Tail = min(q.Tail, MaxTail)
	if q.Since < 0 {
		q.Since = 0
	}
	return q
}

// LogLine is one log line. TS is the kubelet's timestamp of the line (zero
// when the line came without one).
type LogLine struct {
	TS   time.Time `json:"ts,omitzero"`
	Line string    `json:"line"`
}

// LogPod is one pod of an App, as the log viewer lists it.
type LogPod struct {
	Name        string    `json:"name"`
	Phase       string    `json:"phase"`
	Ready       bool      `json:"ready"`
	Terminating bool      `json:"terminating,omitempty"`
	Restarts    int32     `json:"restarts"`
	Containers  []string  `json:"containers"`
	Created     time.Time `json:"created"`
	// Default is the container read when none is chosen.
	Default string `json:"defaultContainer"`
}

// Running reports whether the pod is one the viewer follows by default.
func (p LogPod) Running() bool { return p.Phase == string(corev1.PodRunning) && !p.Terminating }

// LogResult is a read of one pod's logs. When there is nothing to show,
// Lines is empty and Reason says why; lines are never made up.
type LogResult struct {
	Pods      []LogPod  `json:"pods"`
	Pod       string    `json:"pod,omitempty"`
	Container string    `json:"container,omitempty"`
	Lines     []LogLine `json:"lines"`
	Reason    string    `json:"reason,omitempty"`
}

// LogStatus kinds.
const (
	// StatusStreaming: the stream is reading Pod/Container.
	StatusStreaming = "streaming"
	// StatusEnded: the followed pod ended (deleted, completed or failed).
	StatusEnded = "ended"
	// StatusResumed: the stream moved on to a new pod (after a rollout) or
	// reopened on the same pod (after a container restart).
	StatusResumed = "resumed"
	// StatusWaiting: there is no pod to read yet (or its container is not
	// running); the stream waits for one.
	StatusWaiting = "waiting"
	// StatusError: reading failed; Message says why and whether the stream
	// retries.
	StatusError = "error"
	// StatusDone: the stream is over (a chosen pod ended, previous logs were
	// read in full); nothing more will come.
	StatusDone = "done"
)

// LogStatus is a change in what a follow stream reads.
type LogStatus struct {
	Status    string `json:"status"`
	Pod       string `json:"pod,omitempty"`
	Container string `json:"container,omitempty"`
	Message   string `json:"message"`
}

// LogEvent is one thing a follow stream reports: a line, or (Status set) a
// status change.
type LogEvent struct {
	Line   LogLine
	Status *LogStatus
}

// podSource is what Logs reads from the caches.
type podSource interface {
	appPods(namespace, app string) []*corev1.Pod
	Status() Status
}

// openFunc opens a pod's log stream.
type openFunc func(ctx context.Context, namespace, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error)

// Logs reads pod logs through the typed CoreV1 GetLogs subresource; the pods
// of an App come from the informer caches.
type Logs struct {
	src  podSource
	open openFunc
	// poll is how often a follow stream checks its pod in the cache.
	poll time.Duration
	// readTimeout bounds a non-follow read.
	readTimeout time.Duration
}

// NewLogs reads logs of the pods cached by c through pods (the CoreV1
// client; only GetLogs is used).
func NewLogs(c *Cache, pods corev1client.PodsGetter) *Logs {
	return &Logs{
		src: c,
		open: func(ctx context.Context, ns, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
			return pods.Pods(ns).GetLogs(pod, opts).Stream(ctx)
		},
		poll:        time.Second,
		readTimeout: 20 * time.Second,
	}
}
