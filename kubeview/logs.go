package kubeview

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// maxReadBytes bounds the log text one non-following read holds.
const maxReadBytes = 16 << 20

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

// appPods returns the cached pods of the App's tree: pods whose owner chain
// (ReplicaSet, Job, workload) leads to the App, not merely pods carrying its
// instance label, so user input (?pod=) never reaches another pod.
func (c *Cache) appPods(namespace, app string) []*corev1.Pod {
	a, err := c.LookupApp(app, namespace)
	if err != nil {
		return nil
	}
	var out []*corev1.Pod
	for _, n := range buildTree(a, c, c.opts.AppResource.GroupVersion()).Nodes {
		if n.Kind != "Pod" || n.Group != "" {
			continue
		}
		if p, ok := c.get(namespace, "Pod", n.Name).(*corev1.Pod); ok && string(p.UID) == n.UID {
			out = append(out, p)
		}
	}
	return out
}

// Pods lists an App's pods, newest first.
func (l *Logs) Pods(namespace, app string) []LogPod {
	pods := sortedPods(l.src.appPods(namespace, app))
	out := make([]LogPod, 0, len(pods))
	for _, p := range pods {
		out = append(out, logPod(p, app))
	}
	return out
}

func logPod(p *corev1.Pod, app string) LogPod {
	lp := LogPod{
		Name: p.Name, Phase: string(p.Status.Phase), Terminating: p.DeletionTimestamp != nil,
		Created: p.CreationTimestamp.Time, Default: defaultContainer(p, app),
	}
	for _, c := range p.Spec.Containers {
		lp.Containers = append(lp.Containers, c.Name)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			lp.Ready = c.Status == corev1.ConditionTrue
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		lp.Restarts += cs.RestartCount
	}
	if lp.Phase == "" {
		lp.Phase = string(corev1.PodPending)
	}
	return lp
}

// sortedPods orders pods newest first (then by name), without changing the
// cached slice's objects.
func sortedPods(pods []*corev1.Pod) []*corev1.Pod {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return pods
}

func running(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
}

// choosePod picks the pod to read: the named one (which must be among the
// App's pods), else the newest running pod. With no pod to read it returns
// nil and a reason fit for users.
func choosePod(pods []*corev1.Pod, want string) (*corev1.Pod, string, error) {
	pods = sortedPods(pods)
	if want != "" {
		for _, p := range pods {
			if p.Name == want {
				return p, "", nil
			}
		}
		return nil, "", ErrPodNotInApp
	}
	for _, p := range pods {
		if running(p) {
			return p, "", nil
		}
	}
	if len(pods) == 0 {
		return nil, "the app has no pods", nil
	}
	phases := map[string]int{}
	for _, p := range pods {
		ph := string(p.Status.Phase)
		if p.DeletionTimestamp != nil {
			ph = "Terminating"
		}
		if ph == "" {
			ph = string(corev1.PodPending)
		}
		phases[ph]++
	}
	var parts []string
	for _, ph := range slices.Sorted(mapKeys(phases)) {
		parts = append(parts, strconv.Itoa(phases[ph])+" "+ph)
	}
	return nil, "the app has no running pod (" + strings.Join(parts, ", ") + "): choose a pod to read its logs", nil
}

func mapKeys(m map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// defaultContainer is the container read when none is chosen.
func defaultContainer(p *corev1.Pod, app string) string {
	if len(p.Spec.Containers) == 0 {
		return ""
	}
	names := make([]string, 0, len(p.Spec.Containers))
	for _, c := range p.Spec.Containers {
		names = append(names, c.Name)
	}
	if d := p.Annotations["kubectl.kubernetes.io/default-container"]; slices.Contains(names, d) {
		return d
	}
	if slices.Contains(names, app) {
		return app
	}
	return names[0]
}

// chooseContainer resolves the container of a query in pod p.
func chooseContainer(p *corev1.Pod, app, want string) (string, error) {
	if want == "" {
		return defaultContainer(p, app), nil
	}
	for _, c := range p.Spec.Containers {
		if c.Name == want {
			return want, nil
		}
	}
	return "", ErrContainerNotInPod
}

// Read returns the logs of one pod of an App (no follow). Upstream failures
// become an empty result with a Reason; only a pod or container the query
// names that is not the App's is an error.
func (l *Logs) Read(ctx context.Context, q LogQuery) (LogResult, error) {
	q = q.normalized()
	res := LogResult{Pods: l.Pods(q.Namespace, q.App), Lines: []LogLine{}}
	pod, reason, err := choosePod(l.src.appPods(q.Namespace, q.App), q.Pod)
	if err != nil {
		return res, err
	}
	if pod == nil {
		res.Reason = reason
		return res, nil
	}
	res.Pod = pod.Name
	if res.Container, err = chooseContainer(pod, q.App, q.Container); err != nil {
		return res, err
	}
	if res.Container == "" {
		res.Reason = "pod " + pod.Name + " has no containers"
		return res, nil
	}
	if st := l.src.Status(); !st.Reachable {
		res.Reason = "the cluster is not reachable: " + st.Error
		return res, nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.readTimeout)
	defer cancel()
	rc, err := l.open(ctx, q.Namespace, pod.Name, logOptions(q, res.Container, false))
	if err != nil {
		res.Reason = upstreamReason(err, pod.Name, res.Container)
		return res, nil
	}
	defer rc.Close()
	cur := cursor{since: q.SinceTime, skip: q.SkipAtSince}
	bytes, trimmed := 0, false
	err = consume(ctx, rc, &cur, func(ln LogLine) error {
		res.Lines = append(res.Lines, ln)
		bytes += len(ln.Line)
		// Never more than asked, whatever upstream sends, and never more
		// than maxReadBytes held for one request.
		for len(res.Lines) > q.Tail || bytes > maxReadBytes && len(res.Lines) > 1 {
			if len(res.Lines) <= q.Tail {
				trimmed = true
			}
			bytes -= len(res.Lines[0].Line)
			res.Lines = res.Lines[1:]
		}
		return nil
	})
	switch {
	case err == nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Reason = "reading the logs timed out: showing what arrived"
	case err != nil:
		res.Reason = "reading the logs was interrupted: " + upstreamReason(err, pod.Name, res.Container)
	case len(res.Lines) == 0:
		res.Reason = "no log lines"
		if q.Since > 0 || !q.SinceTime.IsZero() {
			res.Reason = "no log lines in the chosen time range"
		}
	case trimmed:
		res.Reason = fmt.Sprintf("showing the newest %d lines: the rest is over the %d MiB a single read returns (narrow ?since= or ?tail=)", len(res.Lines), maxReadBytes>>20)
	}
	return res, nil
}

// logOptions builds the GetLogs options of a query. Timestamps are always
// requested: they stamp each line and let a stream resume exactly.
func logOptions(q LogQuery, container string, follow bool) *corev1.PodLogOptions {
	tail := int64(q.Tail)
	o := &corev1.PodLogOptions{Container: container, Follow: follow, Previous: q.Previous, Timestamps: true, TailLines: &tail}
	switch {
	case !q.SinceTime.IsZero():
		t := metav1.NewTime(q.SinceTime)
		o.SinceTime = &t
	case q.Since > 0:
		s := int64(max(q.Since.Round(time.Second), time.Second) / time.Second)
		o.SinceSeconds = &s
	}
	return o
}

// upstreamReason says, safely for users, why GetLogs failed. It never
// passes on a raw transport error (which could name internal addresses).
func upstreamReason(err error, pod, container string) string {
	var se apierrors.APIStatus
	switch {
	case apierrors.IsNotFound(err):
		return "pod " + pod + " no longer exists"
	case apierrors.IsForbidden(err):
		return "not allowed to read the logs of pod " + pod + " (forbidden)"
	case apierrors.IsBadRequest(err) && errors.As(err, &se):
		// The apiserver's own words: "container "x" in pod "y" is waiting
		// to start: ContainerCreating", "previous terminated container ...
		// not found".
		return "the cluster says: " + sanitize(se.Status().Message)
	case errors.Is(err, context.DeadlineExceeded):
		return "the cluster did not answer in time"
	case isConnError(err):
		return "the cluster is not reachable"
	}
	return "the cluster refused the log request for container " + container
}

func isConnError(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || errors.Is(err, io.ErrUnexpectedEOF)
}

func sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// cursor tracks where a stream is, so that it can resume without repeating
// or losing lines: lines stamped before since are skipped, and so are the
// first skip lines stamped exactly since (already seen). last and seen are
// the newest timestamp emitted and how many lines carried it.
type cursor struct {
	since time.Time
	skip  int
	last  time.Time
	seen  int
	lines int
}

// resumeAt sets the cursor to resume after what was emitted.
func (c *cursor) resumeAt() {
	if !c.last.IsZero() {
		c.since, c.skip = c.last, c.seen
	}
}

// consume reads timestamped log lines from r (as GetLogs with Timestamps
// sends them) and emits each; it is the seam the tests feed directly. It
// returns nil at the end of r and when ctx ends (a canceled stream is a
// normal end); otherwise the read or emit error.
func consume(ctx context.Context, r io.Reader, c *cursor, emit func(LogLine) error) error {
	br := bufio.NewReaderSize(r, 32<<10)
	var long []byte // a line longer than the buffer, up to MaxLineBytes
	inLong, truncated := false, false
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !inLong {
				long, inLong = long[:0], true
			}
			truncated = truncated || len(long)+len(frag) > MaxLineBytes
			long = appendCapped(long, frag)
			continue
		}
		line := frag
		if inLong {
			body := bytes.TrimSuffix(frag, []byte("\n"))
			truncated = truncated || len(long)+len(body) > MaxLineBytes
			long = appendCapped(long, body)
			line = long
		}
		if len(line) > 0 {
			ln := parseLine(line)
			if truncated {
				ln.Line += TruncatedMark
			}
			if ln, ok := c.accept(ln); ok {
				if eerr := emit(ln); eerr != nil {
					return eerr
				}
			}
		}
		inLong, truncated = false, false
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// appendCapped appends b to dst, up to MaxLineBytes in all.
func appendCapped(dst, b []byte) []byte {
	room := MaxLineBytes - len(dst)
	if room <= 0 {
		return dst
	}
	return append(dst, b[:min(len(b), room)]...)
}

// accept applies the cursor to a line and records it.
func (c *cursor) accept(ln LogLine) (LogLine, bool) {
	if !ln.TS.IsZero() && !c.since.IsZero() {
		if ln.TS.Before(c.since) {
			return ln, false
		}
		if ln.TS.Equal(c.since) && c.skip > 0 {
			c.skip--
			return ln, false
		}
	}
	if !ln.TS.IsZero() {
		if ln.TS.Equal(c.last) {
			c.seen++
		} else {
			c.last, c.seen = ln.TS, 1
		}
	}
	c.lines++
	return ln, true
}

// parseLine splits "<RFC 3339 timestamp> <text>\n" into a LogLine. A line
// without a valid timestamp is kept whole. The text is made valid UTF-8
// (invalid bytes become U+FFFD) and loses its line ending.
func parseLine(b []byte) LogLine {
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	var ln LogLine
	if i := bytes.IndexByte(b, ' '); i > 0 && i < 40 {
		if ts, err := time.Parse(time.RFC3339Nano, string(b[:i])); err == nil {
			ln.TS, b = ts.UTC(), b[i+1:]
		}
	}
	if utf8.Valid(b) {
		ln.Line = string(b)
	} else {
		ln.Line = strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return ln
}

// Follow streams an App's logs until ctx ends, emitting lines and status
// changes in order from the calling goroutine. By default it follows the
// newest running pod and moves on to the next one when that pod ends (a
// rollout); with q.Pod it follows that pod until it ends. The tail is read
// first; a stream that drops (apiserver timeout, container restart) is
// reopened where it stopped, without repeating lines. It returns nil when
// ctx ends or the stream is over, or the emit error.
func (l *Logs) Follow(ctx context.Context, q LogQuery, emit func(LogEvent) error) error {
	q = q.normalized()
	f := &follower{l: l, q: q, emit: emit, cur: cursor{since: q.SinceTime, skip: q.SkipAtSince}}
	return f.run(ctx)
}

// follower is the state of one Follow.
type follower struct {
	l    *Logs
	q    LogQuery
	emit func(LogEvent) error
	cur  cursor
	// lastStatus suppresses repeated identical statuses.
	lastStatus LogStatus
}

func (f *follower) status(s LogStatus) error {
	if s == f.lastStatus {
		return nil
	}
	f.lastStatus = s
	return f.emit(LogEvent{Status: &s})
}

func (f *follower) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (f *follower) run(ctx context.Context) error {
	q := f.q
	pinned := q.Pod != ""
	var prev string        // the pod read last
	var prevRestarts int32 // its container's restart count when opened
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		pod, reason, err := choosePod(f.l.src.appPods(q.Namespace, q.App), q.Pod)
		if errors.Is(err, ErrPodNotInApp) {
			if prev == "" {
				return err
			}
			return f.status(LogStatus{Status: StatusDone, Pod: q.Pod, Message: "pod " + q.Pod + " no longer exists: the stream is over"})
		}
		if pod == nil {
			if err := f.status(LogStatus{Status: StatusWaiting, Message: reason + "; waiting for a running pod"}); err != nil {
				return err
			}
			if !f.sleep(ctx, f.l.poll) {
				return nil
			}
			continue
		}
		container, err := chooseContainer(pod, q.App, q.Container)
		if err != nil {
			if prev == "" {
				return err
			}
			return f.status(LogStatus{Status: StatusDone, Pod: pod.Name, Message: "pod " + pod.Name + " has no container " + q.Container + ": the stream is over"})
		}
		restarts := restartsOf(pod, container)
		opts := logOptions(q, container, !q.Previous)
		switch {
		case prev == "":
			err = f.status(LogStatus{Status: StatusStreaming, Pod: pod.Name, Container: container,
				Message: "following pod " + pod.Name + ", container " + container})
		case prev != pod.Name:
			err = f.status(LogStatus{Status: StatusResumed, Pod: pod.Name, Container: container,
				Message: "resumed on pod " + pod.Name + " (replaced " + prev + ")"})
		case restarts > prevRestarts:
			err = f.status(LogStatus{Status: StatusResumed, Pod: pod.Name, Container: container,
				Message: fmt.Sprintf("container %s restarted (restart %d): resumed", container, restarts)})
		}
		if err != nil {
			return err
		}
		if prev != "" && !f.cur.last.IsZero() {
			// Resume after the last line emitted: everything newer, bounded.
			f.cur.resumeAt()
			if prev != pod.Name {
				f.cur.skip = 0 // another pod: equal timestamps are other lines
			}
			tail := int64(MaxTail)
			t := metav1.NewTime(f.cur.since)
			opts.TailLines, opts.SinceSeconds, opts.SinceTime = &tail, nil, &t
		}
		prev, prevRestarts = pod.Name, restarts
		lines := f.cur.lines
		ended, err := f.stream(ctx, pod, opts)
		if ctx.Err() != nil {
			return nil
		}
		var emitErr emitError
		if errors.As(err, &emitErr) {
			return emitErr.err
		}
		if q.Previous {
			if err != nil {
				return f.status(LogStatus{Status: StatusDone, Pod: pod.Name, Container: container, Message: upstreamReason(err, pod.Name, container)})
			}
			return f.status(LogStatus{Status: StatusDone, Pod: pod.Name, Container: container, Message: "end of the previous container's logs"})
		}
		if ended == "" && err == nil {
			// The stream ended by itself: did the pod end?
			if p := f.l.findPod(q.Namespace, q.App, pod.Name); p == nil {
				ended = "deleted"
			} else if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				ended = string(p.Status.Phase)
			}
		}
		if ended != "" {
			if err := f.status(LogStatus{Status: StatusEnded, Pod: pod.Name, Container: container, Message: "pod " + pod.Name + " ended (" + ended + ")"}); err != nil {
				return err
			}
			if pinned {
				return f.status(LogStatus{Status: StatusDone, Pod: pod.Name, Container: container, Message: "pod " + pod.Name + " ended: the stream is over"})
			}
			backoff = 0
			continue
		}
		if err != nil {
			if apierrors.IsForbidden(err) {
				return f.status(LogStatus{Status: StatusDone, Pod: pod.Name, Container: container, Message: upstreamReason(err, pod.Name, container)})
			}
			st := StatusError
			msg := upstreamReason(err, pod.Name, container) + ": retrying"
			if apierrors.IsBadRequest(err) {
				st = StatusWaiting // "container ... is waiting to start"
			}
			if err := f.status(LogStatus{Status: st, Pod: pod.Name, Container: container, Message: msg}); err != nil {
				return err
			}
		}
		// Reopen the same pod; back off when nothing came through.
		if f.cur.lines > lines {
			backoff = 0
		} else {
			backoff = min(max(backoff*2, f.l.poll), 10*f.l.poll)
		}
		if !f.sleep(ctx, backoff) {
			return nil
		}
	}
	return nil
}

// emitError wraps an error from the caller's emit, so that it is told
// apart from upstream errors.
type emitError struct{ err error }

func (e emitError) Error() string { return e.err.Error() }

// stream reads one pod's log stream until it ends, ctx ends, or the pod
// leaves the cache or finishes (a watcher checks every poll and cancels the
// read); ended then says how the pod ended.
func (f *follower) stream(ctx context.Context, pod *corev1.Pod, opts *corev1.PodLogOptions) (ended string, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch := make(chan string, 1)
	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	go func() {
		watch <- f.watchPod(sctx, pod.Name, terminal, cancel)
	}()
	defer func() {
		cancel()
		ended = <-watch
	}()
	rc, err := f.l.open(sctx, f.q.Namespace, pod.Name, opts)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	err = consume(sctx, rc, &f.cur, func(ln LogLine) error {
		if eerr := f.emit(LogEvent{Line: ln}); eerr != nil {
			return emitError{eerr}
		}
		return nil
	})
	return "", err
}

// watchPod returns how the pod ended ("deleted", "Failed", ...) after
// canceling the read, or "" when ctx ends first. A pod that had already
// finished when the read began ends it only by being deleted (its logs are
// read to their end).
func (f *follower) watchPod(ctx context.Context, name string, wasTerminal bool, cancel context.CancelFunc) string {
	t := time.NewTicker(f.l.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ""
		case <-t.C:
		}
		p := f.l.findPod(f.q.Namespace, f.q.App, name)
		var ended string
		switch {
		case p == nil:
			ended = "deleted"
		case !wasTerminal && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed):
			ended = string(p.Status.Phase)
		}
		if ended != "" && !f.q.Previous {
			cancel()
			return ended
		}
	}
}

func (l *Logs) findPod(ns, app, name string) *corev1.Pod {
	for _, p := range l.src.appPods(ns, app) {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func restartsOf(p *corev1.Pod, container string) int32 {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container {
			return cs.RestartCount
		}
	}
	return 0
}
